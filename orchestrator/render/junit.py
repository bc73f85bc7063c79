"""The JUnit format: a document's CI test cases (analysis.verdict decides them) as the JUnit XML that Jenkins,
GitLab and GitHub Actions read (validated against the Jenkins xUnit plugin's junit-10.xsd in the tests).

Host text by XML 1.0's rules: `&<>"` as entities; a character XML 1.0 cannot carry at all, even as a reference
(C0 controls but tab, LF and CR; U+FFFE, U+FFFF; a lone surrogate), as textsafe's visible escape (`\\x01`): the one
thing a reader of the XML sees in its place; every other character textsafe.terminal would escape (DEL, C1, the
bidi overrides such as U+202E, CR) as a character reference (`&#x202e;`), which a parser reads back as the character
itself while the file, shown in a terminal, reorders or moves nothing.
"""
from __future__ import annotations

import re
from typing import Sequence
from xml.sax.saxutils import escape as _escape, quoteattr as _quoteattr

from orchestrator import textsafe
from orchestrator.analysis.verdict import Case, failures
from orchestrator.errors import UserError
from orchestrator.render.model import Document


def write(doc: Document, width: int | None = None) -> str:
    """The XML, without its last line break (a caller prints it, or writes it to a file)."""
    if doc.suite is None:
        raise UserError("this output has no test cases: JUnit XML is for `diff` and `trend`")
    return xml(doc.suite.cases, doc.suite.name, doc.suite.pct).rstrip("\n")


def xml(cases: Sequence[Case], name: str = "sslbench", pct: float | None = None) -> str:
    """JUnit XML: a testsuite per host, a testcase per cell; `failure` for a regression beyond `pct`, `skipped`
    without verdict; a drop no threshold judged in system-out, and the threshold in each suite's properties."""
    hosts: dict[str, list[Case]] = {}
    for case in cases:
        hosts.setdefault(case.host, []).append(case)
    failed = len(failures(cases))
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name={quoteattr(name)} tests="{len(cases)}" failures="{failed}" errors="0">']
    for host, host_cases in hosts.items():
        skipped = sum(1 for c in host_cases if c.skipped and not c.failure)
        lines.append(f'  <testsuite name={quoteattr(f"{name}.{host}")} tests="{len(host_cases)}" '
                     f'failures="{len(failures(host_cases))}" errors="0" skipped="{skipped}">')
        drops = sum(1 for c in host_cases if c.drop)
        threshold = "none" if pct is None else f"{pct:g}"
        lines += ["    <properties>",
                  f'      <property name="sslbench.fail_on_regression" value="{threshold}"/>']
        if pct is None:  # with a threshold the drops beyond it are the failures
            lines.append(f'      <property name="sslbench.significant_drops" value="{drops}"/>')
        lines.append("    </properties>")
        for case in host_cases:
            lines.append(f'    <testcase classname={quoteattr(host)} name={quoteattr(case.name)} time="0">')
            if case.failure:
                lines.append(f'      <failure type="regression" message={quoteattr(case.failure)}>'
                             f'{escape(case.detail)}</failure>')
            elif case.skipped:
                lines.append(f'      <skipped message={quoteattr(case.skipped)}/>')
            said = "\n".join(filter(None, (case.drop, case.detail)))
            if said:
                lines.append(f"      <system-out>{escape(said)}</system-out>")
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def _references(text: str) -> str:
    return textsafe.CONTROL.sub(lambda m: f"&#x{ord(m[0]):x};", text)


def escape(text: str) -> str:
    """Element text (see the module)."""
    return _references(_escape(_xml_safe(text)))


def quoteattr(text: str) -> str:
    """An attribute value with its quotes (see the module; tab and LF as references too, as quoteattr does)."""
    return _references(_quoteattr(_xml_safe(text)))
