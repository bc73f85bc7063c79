"""The JUnit format: a document's CI test cases (analysis.verdict decides them) as the JUnit XML that Jenkins,
GitLab and GitHub Actions read (validated against the Jenkins xUnit plugin's junit-10.xsd in the tests)."""
from __future__ import annotations

from typing import Sequence
from xml.sax.saxutils import escape, quoteattr

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
