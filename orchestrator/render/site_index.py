"""The site's index at a glance (`sslbench publish`): a row per board with what one asks of it first, the way a
benchmark result page reads: its CPU and cores, whether it has AES / SHA instructions and whether OpenSSL uses
them, its best AES-GCM on one core and on all cores, its measured VPN tunnel (a dash until a tunnel is measured),
each figure with its validity flags beside it.

The table sorts by any column in the browser with a small inline script (no file, no server, allowed by the page's
Content-Security-Policy through its hash); without JavaScript it is the same table, unsorted. On a phone's width
each row becomes a card of label: value lines (CSS only), so the page never scrolls sideways.
"""
from __future__ import annotations

import base64
import hashlib
import html
import re
from dataclasses import dataclass
from typing import Sequence

from orchestrator import stats
from orchestrator.analysis import trend
from orchestrator.analysis.cells import CARRIED_FLAGS, Key
from orchestrator.analysis.insights import EVP_GAIN, evp_check, openssl_aes_capability
from orchestrator.model import OK, TUNNEL, HostResult, Measurement
from orchestrator.units import fmt_number, fmt_rate, mbits

GCM = ("aes-128-gcm", "aes-256-gcm")
DASH = "–"  # a column with nothing measured for this board
ARMCAP_SHA256 = 1 << 4  # OPENSSL_armcap: ARMV8_SHA256
IA32CAP_SHA_BIT = 29  # OPENSSL_ia32cap's second word: CPUID(7).EBX, bit 29 is SHA-NI
SHA_FLAGS = ("sha1", "sha2", "sha256", "sha512", "sha_ni", "sha-ni", "sha3")


@dataclass(frozen=True)
class Cell:
    """An index cell: its HTML and what the table sorts it by: a number as text, other text, "" (nothing measured:
    sorted last either way), or None (its own text)."""

    html: str
    sort: str | None = None


def _flags(flags: set[str] | list[str]) -> str:
    return "".join(f' <span class="flag">{html.escape(f)}</span>' for f in sorted(set(flags)))


def _tri(value: bool | None, yes: str, no: str) -> str:
    return yes if value is True else no if value is False else "unknown"


def aes_use(result: HostResult, values: dict[Key, float]) -> tuple[bool | None, bool | None, str]:
    """(the CPU has AES instructions, OpenSSL's EVP path uses them, why) from insights.evp_check's evidence."""
    crypto = [f.lower() for f in result.cpu.crypto]
    known = bool(result.cpu.crypto or result.cpu.model or result.cpu.arch)
    has = True if any(f in ("aes", "aes-ni", "aesni") for f in crypto) else (False if known else None)
    ratio, why = evp_check(values, result)
    capability = openssl_aes_capability(result.openssl.cpuinfo)
    used: bool | None = None
    if (ratio is not None and ratio >= EVP_GAIN) or capability is True:
        used = True
    elif capability is False or has is False:
        used = False
    return has, used, why


def sha_capability(cpuinfo: str | None) -> bool | None:
    """Does OpenSSL's `CPUINFO:` line (3.x) say it uses SHA-256 instructions? None when it does not tell."""
    arm = re.search(r"OPENSSL_armcap=0x([0-9a-fA-F]+)", cpuinfo or "")
    if arm:
        return bool(int(arm.group(1), 16) & ARMCAP_SHA256)
    x86 = re.search(r"OPENSSL_ia32cap=0x[0-9a-fA-F]+:0x([0-9a-fA-F]+)", cpuinfo or "")
    if x86:
        return bool((int(x86.group(1), 16) >> IA32CAP_SHA_BIT) & 1)
    return None


def crypto_cell(result: HostResult, values: dict[Key, float]) -> Cell:
    has_aes, used_aes, why = aes_use(result, values)
    known = bool(result.cpu.crypto or result.cpu.model or result.cpu.arch)
    has_sha = (True if any(f.lower() in SHA_FLAGS for f in result.cpu.crypto) else False) if known else None
    used_sha = sha_capability(result.openssl.cpuinfo)
    aes = "AES: " + _tri(has_aes, "yes", "no") + (", " + _tri(used_aes, "used", "not used").replace("unknown", "use unknown") if has_aes else "")
    sha = "SHA: " + _tri(has_sha, "yes", "no") + (", " + _tri(used_sha, "used", "not used")
                                                  if has_sha and used_sha is not None else "")
    title = why + ("; SHA: OpenSSL's CPUINFO bits " + ("have SHA-256 on" if used_sha else "have SHA-256 off")
                   if used_sha is not None else "")
    rank = {True: 2, None: 1, False: 0}
    return Cell(f'<span title="{html.escape(title)}">{html.escape(aes)}<br>{html.escape(sha)}</span>',
                str(rank[used_aes] * 10 + rank[has_aes] * 3 + rank[used_sha]))


def gcm_cells(point: trend.RunPoint) -> tuple[Cell, Cell]:
    """The best AES-GCM throughput of the host's latest run on one core and on all cores, with the cell it comes
    from and the flags of that cell (and the run's host-wide ones)."""
    best: dict[bool, tuple[float, Key, set[str]]] = {}
    for key, cell in point.cells.items():
        if key.algorithm not in GCM or key.operation is not None or not cell.samples:
            continue
        value = stats.median(cell.samples)
        many = key.threads > 1
        if many not in best or value > best[many][0]:
            best[many] = (value, key, set(cell.flags) | set(point.host_flags))
    out = []
    for many in (False, True):
        if many not in best:
            out.append(Cell(f'<span class="none">{DASH}</span>', ""))
            continue
        value, key, flags = best[many]
        where = f"{key.algorithm} {key.block_size} B" + (f" {key.api}" if key.api else "") + (
            f", {key.threads} threads" if many else (f", {key.cpu}" if key.cpu else ""))
        out.append(Cell(f'<span class="figure">{html.escape(fmt_rate(value))}</span>{_flags(flags)}'
                        f'<br><small>{html.escape(where)}</small>', f"{value:.6g}"))
    return out[0], out[1]


def tunnel_cell(result: HostResult) -> Cell:
    """The measured tunnels of the host's latest run: per tunnel, implementation, direction and streams, the median
    of the receiver's throughput in Mbit/s, best first; a dash when no tunnel was measured."""
    groups: dict[tuple[str, str, str, int], list[Measurement]] = {}
    for m in result.measurements:
        if m.kind == TUNNEL:
            groups.setdefault((m.algorithm, m.implementation or "", m.operation or "", m.threads), []).append(m)
    if not groups:
        return Cell(f'<span class="none" title="no tunnel measured">{DASH}</span>', "")
    host_flags = {f for f in result.flags if f in CARRIED_FLAGS}
    rows: list[tuple[float, str]] = []
    for (algorithm, implementation, direction, threads), group in groups.items():
        samples = [m.bytes_per_second for m in group if m.status == OK and m.bytes_per_second is not None]
        flags = host_flags | {f for m in group for f in m.flags if f in CARRIED_FLAGS}
        what = f"{algorithm} ({', '.join(p for p in (implementation, direction, f'{threads} stream' + ('s' if threads > 1 else '')) if p)})"
        if samples:
            value = stats.median([float(s) for s in samples])
            rows.append((value, f'<span class="figure">{fmt_number(mbits(value))} Mbit/s</span>{_flags(flags)} '
                                f"<small>{html.escape(what)}</small>"))
        else:
            reason = next((m.reason for m in group if m.reason), None) or "not measured"
            rows.append((-1.0, f"{DASH} <small>{html.escape(what)}: {html.escape(reason)}</small>"))
    rows.sort(key=lambda r: -r[0])
    best = rows[0][0]
    return Cell("<br>".join(text for _, text in rows), f"{best:.6g}" if best >= 0 else "")


# ---- the table, its script and its style ------------------------------------------------------------------

SCRIPT = """
(function () {
  function key(cell) {
    var text = cell.getAttribute('data-sort');
    if (text === null) text = cell.textContent.trim();
    var number = text === '' ? NaN : Number(text);
    return {empty: text === '', number: number, text: text};
  }
  function order(a, b) {
    if (a.empty !== b.empty) return a.empty ? 1 : -1;
    if (!isNaN(a.number) && !isNaN(b.number)) return a.number - b.number;
    return a.text.localeCompare(b.text);
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, column) {
      var button = document.createElement('button');
      button.type = 'button';
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener('click', function () {
        var down = th.getAttribute('aria-sort') === 'ascending';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', down ? 'descending' : 'ascending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r, s) {
          var a = key(r.cells[column]), b = key(s.cells[column]);
          if (a.empty || b.empty) return order(a, b);
          return down ? order(b, a) : order(a, b);
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
"""

STYLE = """
table.glance { font-size: 0.78em; } table.glance th { min-width: 0; }
table.glance td { white-space: normal; vertical-align: top; } table.glance small { color: #555; }
table.glance td:first-child { overflow-wrap: anywhere; min-width: 6em; }
table.glance td a { white-space: normal; overflow-wrap: anywhere; }
table.glance .figure { white-space: nowrap; font-weight: 600; } .none { color: #888; }
.flag { display: inline-block; background: #fde6b0; color: #6b4500; border-radius: 0.3em; padding: 0 0.3em;
  font-size: 0.85em; font-style: normal; }
table.sortable th button { font: inherit; font-weight: bold; background: none; border: 0; padding: 0; cursor: pointer;
  text-align: left; color: inherit; }
table.sortable th[aria-sort=ascending] button::after { content: " \\25B2"; }
table.sortable th[aria-sort=descending] button::after { content: " \\25BC"; }
@media (max-width: 44em) {
  table.glance, table.glance tbody, table.glance tr, table.glance td { display: block; }
  table.glance thead tr { display: flex; flex-wrap: wrap; gap: 0.2em; }
  table.glance thead th { border: 1px solid #ccc; min-width: 0; }
  table.glance tbody tr { border: 1px solid #aab; margin: 0.6em 0; }
  table.glance td { border: 0; border-top: 1px solid #eee; display: grid; grid-template-columns: 8em minmax(0, 1fr);
    gap: 0.5em; overflow-wrap: anywhere; }
  table.glance td::before { content: attr(data-label); font-weight: bold; color: #334; }
  table.glance td svg { max-width: 100%; }
}
"""


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def head() -> str:
    """What the index adds to its <head>: its style, and a policy that lets only its own script run."""
    policy = f"script-src '{_hash(SCRIPT)}'; object-src 'none'; base-uri 'none'"
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}"><style>{STYLE}</style>'


def table(headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    """The sortable table (each cell labelled with its header for the phone's cards) and its script."""
    head_row = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(f'<td data-label="{html.escape(h)}"'
                        + ("" if c.sort is None else f' data-sort="{html.escape(c.sort)}"') + f"><div>{c.html}</div></td>"
                        for h, c in zip(headers, row))
        body.append(f"<tr>{cells}</tr>")
    return (f'<table class="glance sortable"><thead><tr>{head_row}</tr></thead><tbody>{"".join(body)}</tbody>'
            f"</table><script>{SCRIPT}</script>")
