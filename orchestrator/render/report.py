"""HTML and Markdown reports: the user's questions answered first, then comparison tables and plots.

One document (render/model.py: headings, notes, tables, figures) is built once from the runs and written by a
format of render/formats.py: one self-contained HTML page (PNGs as base64 data URIs), Markdown with the PNGs next
to it, or, for a view (some of its sections), terminal tables without the plots. Plots are drawn with
matplotlib's Agg backend (no display needed).
"""
from __future__ import annotations

import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

from orchestrator import extras, reference, stats, store, textsafe
from orchestrator.analysis import diff, identity, insights
from orchestrator.analysis.cells import (Cell, Key, best_core, host_cells, key_cells, medians, requested_seconds,
                                         sort_key)
from orchestrator.errors import UserError
from orchestrator.evidence.validity import busy_below
from orchestrator.model import LINE_BLOCKS, REFERENCE, HostResult, Run
from orchestrator.render import diff_table, formats, tables
from orchestrator.render.model import Block, Document, Figure, Heading, Note, Table
from orchestrator.units import fmt_mhz, fmt_per_mhz, fmt_throughput, fmt_value, mbits, mbytes

MAX_SERIES_PLOTS = 24  # throughput-vs-block plots: one per host; beyond this the page gets unreadable
MAX_DIFF_BARS = 40  # the largest changes only
MAX_BAR_HOSTS = 40  # per-algorithm bar charts: the fastest hosts only
MAX_HOST_COLUMNS = 8  # beyond this many hosts the measurement table lists one host per row
BAR_BLOCK_PREFERENCE = (16384, 8192)  # bar charts compare hosts at the largest usual block


@dataclass
class Series:
    """One host of one run, as shown in the report."""

    label: str
    run: Run
    result: HostResult
    cells: dict[Key, Cell] = field(default_factory=dict)  # a cell per cluster of a pinned big.LITTLE cell
    values: dict[Key, float] = field(default_factory=dict)  # medians, one per cell: the best cluster's


def series_of(runs: Sequence[Run]) -> list[Series]:
    labels = tables.host_labels(runs)  # "host @ run-id" only where a host is in several runs, as every table says
    out = []
    for run in runs:
        for r in run.hosts:
            if not r.measurements:
                continue
            # cells per cluster of a pinned big.LITTLE host (tables); values per cell, the best cluster's (answers, plots)
            cells = host_cells(r, busy_below(requested_seconds(run)))
            out.append(Series(labels[run.run_id, r.host], run, r, cells, best_core(medians(cells))))
    return out


# ---- content ---------------------------------------------------------------------------------------------

# The sections of a report, in page order. `sslbench report --view NAME` prints those of a view as terminal tables
# (render_text); the HTML and Markdown pages have them all.
SECTIONS = ("runs", "failed", "hosts", "line-rate", "crypto", "handshakes", "per-core", "all-core", "measurements",
            "plots", "diff")
ALWAYS = ("runs", "failed")  # every view says which runs (and so which run each host) it shows, and who failed
VIEWS: dict[str, tuple[tuple[str, ...], str]] = {  # name -> (sections, what --help says it shows)
    "answers": (("line-rate", "crypto", "handshakes", "per-core", "all-core"),
                "line rate, crypto instructions, handshakes, per core and all cores"),
    "hosts": (("hosts",), "each host's firmware, CPU, CPUs and crypto instructions"),
    "line-rate": (("line-rate",), "the VPN/TLS line rate each host carries, per --link"),
    "crypto": (("crypto",), "crypto instructions, and whether OpenSSL's EVP path uses them"),
    "handshakes": (("handshakes",), "RSA / ECDSA TLS handshakes per second"),
    "per-core": (("per-core",), "one core's throughput, the clock it ran at and per MHz"),
    "all-core": (("all-core",), "all cores' throughput, and per core (all / N)"),
    "measurements": (("measurements",), "every cell, median ± spread, a column per host"),
    "all": (tuple(s for s in SECTIONS if s != "plots"), "every section of the HTML report but its plots"),
}
_ANSWERS = frozenset(("line-rate", "crypto", "handshakes", "per-core", "all-core"))  # from insights.host_insights


def build(runs: Sequence[Run], links: Sequence[int] = insights.DEFAULT_LINKS,
          sections: Collection[str] | None = None) -> list[Block]:
    """The report's blocks, section by section (SECTIONS; every one by default)."""
    if not runs:
        raise UserError("the report needs at least one run")
    wanted = set(SECTIONS if sections is None else sections)
    series = series_of(runs)
    blocks: list[Block] = [Heading("sslbench report", 1)]
    if "runs" in wanted:
        blocks.append(Table(*tables.runs_table(runs), tables.RUNS_TABLE_DROP))
    failed = tables.failed_hosts(runs)
    if failed and "failed" in wanted:
        blocks.append(Heading("Hosts that failed"))
        blocks.append(Table(["host", "run", "status", "reason"],
                            [[f.host, f.run_id, f.status, f.reason] for f in failed]))
    if not series:
        blocks.append(Note("No host has any measurement."))
        return blocks
    found = [(s, insights.host_insights(s.result, links)) for s in series] if wanted & _ANSWERS else []
    sections_of: dict[str, Callable[[], list[Block]]] = {
        "hosts": lambda: _host_section(series),
        "line-rate": lambda: _line_rate(found, links) + _known_boards(runs),
        "crypto": lambda: _crypto(found),
        "handshakes": lambda: _handshakes(found),
        "per-core": lambda: _per_core(found),
        "all-core": lambda: _all_cores(found),
        "measurements": lambda: _comparison(series),
        "plots": lambda: _plots(series),
        "diff": lambda: _diff_section(runs[0], runs[1]) if len(runs) == 2 and _common_host(runs) else [],
    }
    for section, blocks_of in sections_of.items():
        if section in wanted:
            blocks += blocks_of()
    return blocks


def _common_host(runs: Sequence[Run]) -> bool:
    """Do the runs share a host (with measurements)? Else a diff of them has nothing to compare."""
    hosts = [{r.host for r in run.hosts if r.measurements} for run in runs]
    return bool(set.intersection(*hosts))


def _host_section(series: list[Series]) -> list[Block]:
    rows: list[list[Any]] = []
    for s in series:
        cpu = s.result.cpu
        rows.append([s.label, identity.firmware_label(s.result), cpu.model or "", cpu.logical_cpus or "",
                     " ".join(cpu.crypto) or "none reported"])
    return [Heading("Hosts"), Table(["host", "firmware", "CPU", "CPUs", "crypto instructions"], rows)]


Found = list[tuple[Series, insights.HostInsights]]


def _line_rate(found: Found, links: Sequence[int]) -> list[Block]:
    blocks: list[Block] = [
        Heading("VPN / TLS line rate"),
        Note("Crypto only, from the faster of aes-256-gcm and chacha20-poly1305 at the smallest block of "
             "1024-16384 bytes (VPN-sized packets); packet handling costs come on top. It predicts the data paths "
             f"that run OpenSSL in user space: {insights.OPENSSL_PATHS}."),
        Table(["host"] + [f"{link} Mbit/s" for link in links],
              [[s.label] + [lr.verdict for lr in ins.line_rates] for s, ins in found
               # a known board without a line-rate figure is listed with what it published (_known_boards)
               if s.run.source != REFERENCE or any(lr.carried is not None for lr in ins.line_rates)])]
    kernel = [(s, ins) for s, ins in found if ins.kernel_paths]
    if kernel:  # the paths openssl speed did not measure: what the kernel would use, from /proc/crypto
        paths = [p.path for p in kernel[0][1].kernel_paths]
        blocks += [
            Note("WireGuard and kernel IPsec do not use OpenSSL: they run the kernel's own crypto, which "
                 "`openssl speed` did not measure (the figures above do not predict them). The kernel's preferred "
                 "implementation (highest priority in /proc/crypto, before the run):"),
            Table(["host"] + paths, [[s.label] + [p.said for p in ins.kernel_paths] for s, ins in kernel])]
    return blocks


def _known_boards(runs: Sequence[Run]) -> list[Block]:
    """Beside the user's line rates, the figure each known board (orchestrator/reference) published that comes
    closest to them, with its source, and whether it is a log or a summary figure and what it cannot tell."""
    rows: list[tuple[float, list[Any]]] = []
    labels = tables.host_labels(runs)
    for run in runs:
        entries = reference.entries_of(run)
        for result in run.hosts:
            entry = entries.get(result.host) if entries else {}  # {}: the user's own host, measured
            found = reference.quote(entry, result) if entry is not None else None
            if entry is None or found is None:
                continue
            rank = found.one_core or found.all_cores or 0.0
            one = f"{mbits(found.one_core):,.0f}" if found.one_core else "-"
            every = "-"
            if found.all_cores:
                every = f"{mbits(found.all_cores):,.0f} ({found.cores} cores)" if found.cores else \
                    f"{mbits(found.all_cores):,.0f} (cores not stated)"
            if not entries:
                rows.append((rank, [labels[run.run_id, result.host], result.cpu.model or "", "your host",
                                    found.text, one, every, "", f"run {run.run_id}"]))
                continue
            kind = "summary figures, not a log" if entry.get("kind") == reference.FIGURES else "log"
            rows.append((rank, [labels[run.run_id, result.host], str(entry.get("cpu", "")), kind, found.text, one,
                                every, reference.not_told(entry), str(entry.get("source", ""))]))
    if not any(row[2] != "your host" for _, row in rows):
        return []
    rows.sort(key=lambda row: -row[0])  # fastest first: where the user's host sits among them
    return [Heading("Known boards beside them (reference)", 3),
            Note("Published figures of known boards and routers, fastest first, to find a neighbour of your host: "
                 "the figure closest to a line rate each one published (aes-256-gcm or chacha20-poly1305, else "
                 "aes-128-gcm, else another cipher; the smallest block of 1024-16384 bytes, else the largest), in "
                 "Mbit/s. Not a verdict: other ciphers, other OpenSSL versions and ways of measuring. \"Summary "
                 "figures\" are a published table row or ranking, not a log; a figure without its block size or "
                 "threads is shown as published and is no cell of the tables."),
            Table(["known board", "CPU", "entry", "figure", "1 core Mbit/s", "all cores Mbit/s", "cannot tell",
                   "source"], [row for _, row in rows], ["cannot tell", "CPU", "entry"])]


def _crypto(found: Found) -> list[Block]:
    return [Heading("Crypto instructions and the EVP path"),
            Table(["host", "crypto instructions", "EVP / legacy (aes-cbc)", "verdict"],
                  [[s.label, " ".join(ins.crypto_instructions) or "none reported",
                    f"{ins.evp_ratio:.1f}x" if ins.evp_ratio is not None else "-", ins.evp_verdict]
                   for s, ins in found])]


def _handshakes(found: Found) -> list[Block]:
    names = sorted({name for _, ins in found for name in ins.handshakes})
    blocks: list[Block] = [Heading("TLS handshakes per second")]
    if names:
        blocks.append(Table(["host"] + names, [[s.label] + [
            f"{ins.handshakes[n]:,.0f}" if n in ins.handshakes else "-" for n in names] for s, ins in found]))
        notes = sorted({note for _, ins in found for note in ins.handshake_notes})
        if notes:
            blocks.append(Note(" ".join(notes)))
    else:
        blocks.append(Note("No rsa2048 / ecdsap256 sign measurements."))
    return blocks


def _quoted(ins: insights.HostInsights) -> list[insights.Throughput]:
    """The throughput rows the per-core and all-core tables quote: 1024 bytes (VPN packets) and the largest block."""
    largest = {(t.algorithm, t.api): t.block_size for t in ins.throughput}  # blocks come ascending
    return [t for t in ins.throughput if t.block_size in (LINE_BLOCKS[0], largest[t.algorithm, t.api])]


def _per_core(found: Found) -> list[Block]:
    rows = [[s.label, t.algorithm, t.api or "", t.block_size, fmt_throughput(t.one_core),
             f"{fmt_mhz(ins.mhz)} ({ins.mhz_source})" if ins.mhz else "unknown",
             fmt_per_mhz(ins.per_mhz(t.one_core))]
            for s, ins in found for t in _quoted(ins) if t.one_core is not None]
    blocks: list[Block] = [Heading("Per core")]
    if not rows:
        return blocks + [Note("No single-thread throughput measurements.")]
    return blocks + [
        Table(["host", "algorithm", "api", "block", "1 core", "clock", "1 core per MHz"], rows, ["clock", "api"]),
        Note("1 core: on a big.LITTLE board, a core of its fastest cluster. Per MHz: one core's throughput divided by "
             "the clock it ran at, so boards at different clocks compare fairly (same core type: same figure).")]


def _all_cores(found: Found) -> list[Block]:
    rows = [[s.label, t.algorithm, t.api or "", t.block_size, fmt_throughput(t.all_cores), t.cores,
             fmt_throughput(t.per_core) if t.per_core is not None else "-"]
            for s, ins in found for t in _quoted(ins) if t.all_cores is not None]
    blocks: list[Block] = [Heading("All cores")]
    if not rows:
        return blocks + [Note("No all-core measurements (sslbench run --threads 1,all).")]
    return blocks + [
        Table(["host", "algorithm", "api", "block", "all cores", "cores", "per core (all / N)"], rows,
              ["per core (all / N)", "api"]),
        Note("All cores: openssl speed -multi N over every logical CPU; per core = all cores / N, against the 1-core "
             "figure it shows how well the board scales.")]


def _comparison(series: list[Series]) -> list[Block]:
    keys = sorted({k for s in series for k in s.cells}, key=sort_key)
    heading = Heading("All measurements (median ± spread)")
    if len(series) > MAX_HOST_COLUMNS:  # a column per host stops being readable: one row per host and cell
        rows = [[s.label, *_key_cells(key), _cell_text(s.cells[key])]
                for key in keys for s in series if key in s.cells]
        return [heading, Table(["host", "algorithm", "api", "threads", "block / op", "value"], rows)]
    rows = [[*_key_cells(key)] + [_cell_text(s.cells[key]) if key in s.cells else "" for s in series]
            for key in keys]
    return [heading, Table(["algorithm", "api", "threads", "block / op"] + [s.label for s in series], rows)]


def _key_cells(key: Key) -> list[Any]:
    return list(key_cells(key))  # as the cell's kind lays its key out


def _cell_text(cell: Cell) -> str:
    if not cell.samples:
        return " ".join(sorted(cell.flags)) or "-"
    summary = stats.summarize(cell.samples)
    return fmt_value(summary.median, cell.unit, summary.spread_pct if summary.n > 1 else None)


def _diff_section(old: Run, new: Run) -> list[Block]:
    rows = diff.diff_runs(old, new)
    both = [r for r in rows if r.delta_pct is not None]
    blocks: list[Block] = [Heading(f"Diff: {old.run_id} → {new.run_id}"),
                           Note("delta of the medians; ~ = not significant (Mann-Whitney U, p ≥ 0.05)")]
    if not both:
        blocks.append(Note("The two runs have no cell in common."))
        return blocks
    blocks.append(Table(diff_table.HEADERS, diff_table.table_rows(rows)))
    blocks.extend(Note(note) for note in diff_table.method_notes(rows))  # `method` rows: another ruler, named
    plotted = [r for r in both if r.method_change is None]  # a changed ruler's delta is no change of the host
    if plotted:
        if extras.have_plots():
            blocks.append(Figure("diff", f"Change {old.run_id} → {new.run_id}", _plot_diff(plotted)))
        else:
            blocks.append(Note(extras.PLOTS_HINT))
    return blocks


# ---- plots -----------------------------------------------------------------------------------------------

def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # headless: no display on the boxes or in CI
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # labels are textsafe.plot_label: a font's warning would name our source line
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    _pyplot().close(fig)
    return buffer.getvalue()


def _plots(series: list[Series]) -> list[Block]:
    blocks: list[Block] = [Heading("Plots")]
    if not extras.have_plots():
        return blocks + [Note(extras.PLOTS_HINT)]
    files = textsafe.file_names(s.label for s in series[:MAX_SERIES_PLOTS])  # 路由器-1 and 交换机-1: two files
    for s in series[:MAX_SERIES_PLOTS]:
        png = _plot_blocks(s)
        if png:
            blocks.append(Figure(f"blocks-{files[s.label]}", f"{s.label}: throughput vs block size", png))
    if len(series) > MAX_SERIES_PLOTS:
        blocks.append(Note(f"Block-size plots shown for the first {MAX_SERIES_PLOTS} of {len(series)} hosts."))
    algorithms = sorted({k.algorithm for s in series for k in s.values
                         if k.operation is None and k.block_size is not None})
    for algorithm in algorithms:
        png = _plot_algorithm(series, algorithm)
        if png:
            more = f" (the {MAX_BAR_HOSTS} fastest of {len(series)})" if len(series) > MAX_BAR_HOSTS else ""
            blocks.append(Figure(f"hosts-{store.safe_name(algorithm)}", f"{algorithm} across hosts{more}", png))
    legend = textsafe.plot_legend(s.label for s in series)
    if legend:
        blocks.append(Note("In the plots, hosts whose names the plots' font cannot draw are labelled: "
                           + "; ".join(legend) + "."))
    return blocks


def _plot_blocks(s: Series) -> bytes | None:
    lines: dict[tuple[Any, ...], list[tuple[int, float]]] = {}
    for key, value in s.values.items():
        if key.operation is None and key.block_size is not None:
            lines.setdefault((key.algorithm, key.api, key.threads), []).append((key.block_size, value))
    if not lines:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for (algorithm, api, threads), points in sorted(lines.items(), key=lambda i: (i[0][0], i[0][1] or "", i[0][2])):
        points.sort()
        label = algorithm + (f" ({api})" if api else "") + (f" ×{threads}" if threads > 1 else "")
        ax.plot([p[0] for p in points], [mbytes(p[1]) for p in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ticks = sorted({p[0] for points in lines.values() for p in points})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("block size (bytes)")
    ax.set_ylabel("MB/s")
    ax.set_title(f"{textsafe.plot_label(s.label)}: throughput vs block size")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return _png(fig)


def _plot_algorithm(series: list[Series], algorithm: str) -> bytes | None:
    """Bars per host at the largest usual block: one core and all cores."""
    labels, one, every = [], [], []
    for s in series:
        rows = insights.throughput(s.values, [algorithm])
        if not rows:
            continue
        rows = [t for t in rows if t.api == rows[0].api]  # the preferred API (evp first)
        blocks = {t.block_size: t for t in rows}
        chosen = next((blocks[b] for b in BAR_BLOCK_PREFERENCE if b in blocks), rows[-1])
        labels.append(f"{textsafe.plot_label(s.label)}\n{chosen.block_size} B")
        one.append(mbytes(chosen.one_core) if chosen.one_core is not None else 0.0)
        every.append(mbytes(chosen.all_cores) if chosen.all_cores is not None else 0.0)
    if not labels:
        return None
    if len(labels) > MAX_BAR_HOSTS:  # keep the fastest (by all cores, else one core)
        keep = sorted(range(len(labels)), key=lambda i: (every[i], one[i]), reverse=True)[:MAX_BAR_HOSTS]
        keep.sort()
        labels, one, every = [labels[i] for i in keep], [one[i] for i in keep], [every[i] for i in keep]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(labels) + 2), 4))
    positions = range(len(labels))
    width = 0.4 if any(every) else 0.6
    ax.bar([p - (width / 2 if any(every) else 0) for p in positions], one, width, label="1 core")
    if any(every):
        ax.bar([p + width / 2 for p in positions], every, width, label="all cores")
    ax.set_xticks(list(positions), labels, fontsize="small", rotation=20 if len(labels) > 3 else 0, ha="right"
                  if len(labels) > 3 else "center")
    ax.set_ylabel("MB/s")
    ax.set_title(f"{algorithm} across hosts")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    return _png(fig)


def _plot_diff(rows: list[diff.DiffRow]) -> bytes:
    rows = sorted(rows, key=lambda r: abs(r.delta_pct or 0), reverse=True)[:MAX_DIFF_BARS]
    rows.reverse()
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.28 * len(rows) + 1)))
    colors = ["tab:green" if r.significant and (r.delta_pct or 0) > 0 else "tab:red" if r.significant else "tab:gray"
              for r in rows]
    labels = [f"{textsafe.plot_label(r.host)} {k.algorithm}{' ' + (k.api or k.implementation or '')} ×{k.threads} "
              f"{k.operation or k.block_size}".replace("  ", " ") for r in rows for k in (r.key,)]
    ax.barh(range(len(rows)), [r.delta_pct for r in rows], color=colors)
    ax.set_yticks(range(len(rows)), labels, fontsize="x-small")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("change of the median (%) — green/red significant, gray ~ or no repeats")
    ax.grid(True, axis="x", alpha=0.3)
    return _png(fig)


# ---- writers ---------------------------------------------------------------------------------------------

def render_text(runs: Sequence[Run], view: str = "answers", links: Sequence[int] = insights.DEFAULT_LINKS,
                width: int | None = None) -> str:
    """A view (VIEWS) of the report for a terminal: the blocks of the page's sections, tables and notes as text,
    no plots. width: fit every table and note to it; None never cuts."""
    if view not in VIEWS:
        raise UserError(f"unknown view '{view}'; choose one of: {', '.join(VIEWS)}")
    return formats.write(Document(build(runs, links, (*ALWAYS, *VIEWS[view][0]))), formats.TEXT, width)


def render_page(runs: Sequence[Run], fmt: str, out_path: Path | str,
                links: Sequence[int] = insights.DEFAULT_LINKS) -> Path:
    """The whole report as a page of a format that writes one (formats.Format.page): an HTML page is
    self-contained (every plot a base64 PNG data URI), a Markdown page has its plots as <stem>-<name>.png beside it."""
    out_path = Path(out_path)
    text, files = formats.page(Document(build(runs, links)), fmt, out_path.stem)
    for name, data in files.items():
        _write_bytes(out_path.parent / name, data)
    # no control character reaches a file someone may `cat` (textsafe; the writers escaped what their format renders)
    _write_bytes(out_path, textsafe.terminal(text).encode("utf-8"))
    return out_path


def render_html(runs: Sequence[Run], out_path: Path | str, links: Sequence[int] = insights.DEFAULT_LINKS) -> Path:
    return render_page(runs, "html", out_path, links)


def render_markdown(runs: Sequence[Run], out_path: Path | str,
                    links: Sequence[int] = insights.DEFAULT_LINKS) -> Path:
    return render_page(runs, "markdown", out_path, links)


def _write_bytes(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
