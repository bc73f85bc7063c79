"""What `sslbench parse` prints of one parsed log: its facts, its tables, and why a cell is not a plain figure."""
from __future__ import annotations

from typing import Any

from orchestrator.model import OK, OpenSSLBuild, ParsedLog
from orchestrator.render import tables
from orchestrator.units import UNIT_NOTE


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
    return lines + _openssl_lines(log.openssl)


def _openssl_lines(ssl: OpenSSLBuild) -> list[str]:
    """The build; where the `openssl` program and libcrypto are of different versions (OpenWrt's openssl-util over
    libopenssl3, Debian's openssl over libssl3), both, and which one the method follows: the program's, whose
    apps/speed.c decides what is timed (docs/methods.md); the speed itself is libcrypto's."""
    if not (ssl.version or ssl.version_line):
        return []
    extra = ", ".join(x for x in (f"options {ssl.options}" if ssl.options else None,
                                  f"built on {ssl.built_on}" if ssl.built_on else None) if x)
    if not ssl.versions_differ:
        return [f"OpenSSL: {ssl.version or ssl.version_line}" + (f" ({extra})" if extra else "")]
    said = f"OpenSSL: program {ssl.program_version}, libcrypto {ssl.library_version}"
    return [said + (f" ({extra})" if extra else ""),
            f"method:  the program's, {ssl.program_version}: its `openssl speed` decides what is timed; "
            f"the figures are libcrypto's, {ssl.library_version}"]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
