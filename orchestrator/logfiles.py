"""The user's log files: read one (a path, or "-" for standard input) as text, or say in one line what is wrong
with it; tell a log worth printing from one with nothing in it; and describe what a parsed log says (its facts,
tables, and why a cell is not a plain figure).  `parse`, `import` and `reference` read through here."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from orchestrator import tables
from orchestrator.errors import UserError
from orchestrator.model import OK, ParsedLog
from orchestrator.units import UNIT_NOTE


def read_text(name: str | Path) -> str:
    """The text of FILE (or stdin for "-"), or a UserError that says what is wrong with it."""
    name = str(name)
    if name == "-":
        data = sys.stdin.buffer.read()
        label = "standard input"
    else:
        path = Path(name)
        label = name
        if path.is_dir():
            raise UserError(f"{name} is a directory; give the log files in it, e.g. {name}/*.log")
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise UserError(f"{name}: no such file") from None
        except OSError as exc:
            raise UserError(f"cannot read {name}: {exc.strerror or exc}") from None
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # PowerShell `>` writes UTF-16 with a byte-order mark
        data = data.decode("utf-16", errors="replace").encode("utf-8")
    if not data.strip():
        raise UserError(f"{label} is empty; give the saved output of `openssl speed` (2>&1) or a console session")
    if data[:2] == b"\x1f\x8b":
        raise UserError(f"{label} is gzip-compressed; run `gunzip` on it first or pipe `zcat {label} |` into `sslbench parse -`")
    if b"\0" in data[:8192] or _mostly_binary(data[:8192]):
        raise UserError(f"{label} is not a text log (it contains binary data)")
    return data.decode("utf-8-sig", errors="replace")


def checked(name: str, log: ParsedLog) -> ParsedLog:
    """The parsed log of FILE, or a UserError when it holds no figure (a session of facts alone is fine)."""
    label = "standard input" if name == "-" else name
    if not log.measurements and not _has_facts(log):
        said = next((note for note in log.skipped if "openssl said: " in note), None)
        if said:  # openssl itself failed ("speed: Unknown algorithm ..."): say what it said
            raise UserError(f"{label}: no openssl speed results: {said}")
        notes = [note for note in log.skipped if not note.endswith("no openssl speed results found")]
        if notes:  # figures were there but could not be read: say why (never "it ends before any test")
            raise UserError(f"{label}: no figure could be read: " + "; ".join(notes[:3])
                            + (f" (and {len(notes) - 3} more)" if len(notes) > 3 else ""))
        if log.openssl.version:
            raise UserError(f"{label}: openssl speed output without a single figure (it ends before any test "
                            f"finished)")
        raise UserError(f"{label}: found no openssl speed results and no system facts; "
                        f"is it the output of `openssl speed`?")
    return log


def _has_facts(log: ParsedLog) -> bool:
    """CPU or OS facts: a session of `cat /proc/cpuinfo` and `uname -a` is worth printing without a figure."""
    return bool(log.cpu.model or log.cpu.logical_cpus or log.os.family not in (None, "unknown") or log.os.kernel)


def _mostly_binary(sample: bytes) -> bool:
    """More than 10 % control bytes (other than tab/CR/LF/ESC/FF): not something a terminal printed."""
    controls = len(sample.translate(None, _NOT_CONTROL))  # counted in C, not byte by byte in Python
    return controls * 10 > len(sample)


_NOT_CONTROL = bytes([9, 10, 12, 13, 27]) + bytes(range(32, 256))


def describe(name: str, log: ParsedLog, several: bool = False) -> str:
    """Facts lines, then the throughput tables (MB/s, Mbit/s) and the public-key table."""

    parts = [f"== {name}"] if several else []
    parts += _facts_lines(log)
    rows = tables.records_from_log(log)
    headers, body = tables.throughput_table(rows, by="algorithm", unit="MB/s", unit_in_header=False)
    if body:
        parts.append(f"\nThroughput in MB/s ({UNIT_NOTE}):")
        parts.append(tables.render(headers, tables.display_rows(body, "table"), "table"))
        headers, body = tables.throughput_table(rows, by="algorithm", unit="Mbit/s", unit_in_header=False)
        parts.append("\nThroughput in Mbit/s:")
        parts.append(tables.render(headers, tables.display_rows(body, "table"), "table"))
    headers, body = tables.pk_table(rows, by="algorithm")
    if body:
        parts.append("\nPublic-key operations per second:")
        parts.append(tables.render(headers, tables.display_rows(body, "table"), "table"))
    why = _why_not_ok(log)
    if why:
        parts.append("\nWhy a cell is not a plain figure:")
        parts += why
    if not log.measurements:
        parts.append("\nno openssl speed results in this log")
    return "\n".join(parts)


def _why_not_ok(log: ParsedLog) -> list[str]:
    """`  rsa2048 verify: error: verify failed (openssl printed '-0.1')`, one line per algorithm, threads and
    reason: what the tables' `error`, `unsupported` and flags stand for."""
    cells: dict[tuple[Any, ...], list[str]] = {}
    for m in log.measurements:
        if m.status == OK and not m.flags:
            continue
        what = m.status if m.status != OK else " ".join(m.flags)
        key = (m.algorithm, m.threads, what, m.reason or "")
        cells.setdefault(key, []).append(m.operation or f"{m.block_size} B")
    return [f"  {algorithm}{'' if threads == 1 else f' ({threads} processes)'} {', '.join(which)}: {what}"
            + (f": {reason}" if reason else "") for (algorithm, threads, what, reason), which in cells.items()]


def _facts_lines(log: ParsedLog) -> list[str]:
    cpu, os_, ssl = log.cpu, log.os, log.openssl
    lines = []
    if cpu.model or cpu.logical_cpus:
        details = ", ".join(x for x in (cpu.arch, _plural(cpu.logical_cpus, "logical CPU") if cpu.logical_cpus else None,
                                         cpu.system_type) if x)
        lines.append(f"CPU:     {cpu.model or 'unknown model'}" + (f" ({details})" if details else ""))
        if cpu.arch in ("x86", "arm"):
            lines.append(f"crypto:  {' '.join(cpu.crypto) if cpu.crypto else 'no AES/SHA instructions listed'}")
    else:
        lines.append("CPU:     not in this log (add `cat /proc/cpuinfo` to the session)")
    if os_.family or os_.kernel:
        name = os_.name or os_.family
        extra = ", ".join(x for x in (f"family {os_.family}" if os_.family else None,
                                      f"revision {os_.revision}" if os_.revision else None,
                                      f"kernel {os_.kernel}" if os_.kernel else None, os_.machine) if x)
        lines.append(f"OS:      {name}" + (f" ({extra})" if extra else ""))
    if ssl.version or ssl.version_line:
        extra = ", ".join(x for x in (f"options {ssl.options}" if ssl.options else None,
                                      f"built on {ssl.built_on}" if ssl.built_on else None) if x)
        lines.append(f"OpenSSL: {ssl.version or ssl.version_line}" + (f" ({extra})" if extra else ""))
    return lines


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
