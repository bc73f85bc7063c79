"""`sslbench publish`: a static site of a result store, no server needed (file:// or any static web server).

- index.html: every host at a glance (site_index: CPU, cores, AES/SHA instructions, best AES-GCM on one and on all
  cores, the measured VPN tunnel, flags beside each figure; firmware, last run, steps and drifts) with a sparkline
  per headline cell, sortable by any column;
- host-<host>.html: the host's trend (trend.py: medians per firmware, steps, drifts) and a plot per cell over
  time, coloured by firmware, firmware changes and named steps marked, drifting runs crossed;
- compare-<algorithm>.html: every host's figures under its latest firmware beside the known boards
  (orchestrator/reference), marked as reference, their sources as links, and a bar chart of the cell most hosts have.

Pages are self-contained HTML (inline CSS, sparklines as inline SVG, the index's one inline script); plots are PNGs
beside them in img/, drawn by site_plots to fit their text.
Hosts are rendered in forked worker processes on every CPU (each computes its trend and draws its plots).
"""
from __future__ import annotations

import html
import multiprocessing
import os
import urllib.parse
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from orchestrator import extras, kinds, reference, store, textsafe
from orchestrator.analysis import trend
from orchestrator.analysis.cells import Key, best_core, host_cells, label, medians, sort_key
from orchestrator.errors import UserError
from orchestrator.model import HostResult, Run
from orchestrator.render import site_index, site_plots, trend_table
from orchestrator.render import html as web
from orchestrator.render.site_index import Cell
from orchestrator.render.site_plots import Bar, Point
from orchestrator.units import count, fmt_rate

HEADLINE = (  # the cells the index shows a sparkline of, where a host has them
    Key("aes-256-gcm", "evp", None, 1, 1024), Key("chacha20-poly1305", "evp", None, 1, 1024),
    Key("sha256", "evp", None, 1, 16384), Key("rsa2048", None, "sign", 1, None),
)
COMPARE_BLOCKS = (16384, 8192, 1024)  # the bar chart of a comparison page: single-thread figures at this block
MAX_CELL_PLOTS = 60  # plots per host page; the trend table lists every cell
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
SPARK_WIDTH, SPARK_HEIGHT = 72, 28

@dataclass
class HostPage:
    """What a worker returns for one host: its page, its index row, its latest figures for the comparisons."""

    host: str
    file: str
    html: str
    row: list[Cell]  # index cells
    latest: dict[Key, float]  # medians under the latest firmware, best cluster per cell
    unit: dict[Key, str] = field(default_factory=dict)


# Written into every site: `publish` writes again only into an empty directory or one holding this file, so it
# never overwrites a user's own index.html or pages it did not write (unless told to, `force`).
MARKER = ".sslbench-site"


def _check_target(out: Path, force: bool) -> None:
    if force or not out.exists() or (out / MARKER).is_file():
        return
    if not out.is_dir():
        raise UserError(f"{out} exists and is not a directory: choose another -o SITE")
    try:
        ours = not any(out.iterdir())
    except OSError as exc:
        raise UserError(f"cannot read {out}: {exc.strerror or exc}") from None
    if not ours:
        raise UserError(f"{out} is not empty and was not written by `sslbench publish` (it has no {MARKER}): "
                        "publishing would overwrite its index.html and pages; choose a new or empty directory, "
                        "or give --force to write into it anyway")


def publish(runs: Sequence[Run], out: Path, known: Run | None = None, jobs: int | None = None,
            force: bool = False) -> list[Path]:
    """Write the site under `out`; returns the pages written. `out` must be new, empty or a site publish wrote
    (MARKER), unless `force`."""
    hosts = sorted({h.host for run in runs for h in run.hosts if h.measurements})
    if not hosts:
        raise UserError("no host of the store has any measurement: nothing to publish")
    _check_target(out, force)
    try:
        (out / "img").mkdir(parents=True, exist_ok=True)
        (out / MARKER).write_text("This directory is a site `sslbench publish` writes; it rewrites its pages.\n",
                                  encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot create {out}: {exc.strerror or exc}") from None
    global _RUNS, _OUT, _HEADLINE, _FILES
    _RUNS, _OUT = list(runs), out
    _FILES = textsafe.file_names(hosts)  # one page and image folder per host, whatever its name
    seen = {key for run in runs[-5:] for h in run.hosts for key in host_cells(h)}
    _HEADLINE = [key for key in HEADLINE if key in seen]
    jobs = min(jobs or _cpus(), len(hosts))
    if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            pages = list(pool.map(_host_page, hosts))
    else:
        pages = [_host_page(host) for host in hosts]
    written = [out / page.file for page in pages]
    algorithms = sorted({key.algorithm for page in pages for key in page.latest})
    references = _reference_values(known)
    entries = reference.entries_of(known) if known is not None else {}
    for algorithm in algorithms:
        written.append(_compare_page(out, algorithm, algorithms, pages, references, entries))
    written.append(_write(out / "index.html", _index(pages, algorithms, runs)))
    return written


_RUNS: list[Run] = []
_OUT = Path(".")
_HEADLINE: list[Key] = []
_FILES: dict[str, str] = {}  # host -> its file stem (textsafe.file_names over the site's hosts)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def page_name(kind: str, name: str) -> str:
    """A host's page from the site's unique stems (two hosts never share one); an algorithm's from its name."""
    return f"{kind}-{_FILES[name] if kind == 'host' else store.safe_name(name)}.html"


# ---- pages -------------------------------------------------------------------------------------------------

def _nav(algorithms: Sequence[str]) -> str:
    links = ['<a href="index.html">all hosts</a>']
    links += [f'<a href="{page_name("compare", a)}">{html.escape(a)}</a>' for a in algorithms]
    return " ".join(links)


def _without_empty_columns(headers: list[str], rows: list[list[Any]]) -> tuple[list[str], list[list[Any]]]:
    """The table without the columns that are empty in every row (no flags, no step): narrower on a page."""
    keep = [i for i in range(len(headers)) if any(str(row[i]).strip() for row in rows)]
    return [headers[i] for i in keep], [[row[i] for i in keep] for row in rows]


def _host_page(host: str) -> HostPage:
    result = trend.trend(_RUNS, host)
    file = page_name("host", host)
    latest_run = result.segments[-1].runs[-1]
    facts = next(h for run in reversed(_RUNS) for h in run.hosts if h.host == host and h.measurements)
    cpu = facts.cpu
    colors = {s.letter: COLORS[i % len(COLORS)] for i, s in enumerate(result.segments)}
    legend = "".join(f'<li><span class="swatch" style="background:{colors[s.letter]}"></span>'
                     f"{html.escape(line)}</li>" for s, line in zip(result.segments, trend.legend(result)))
    headers, rows = _without_empty_columns(*trend_table.table(result))
    body = [f'<p>{html.escape(cpu.model or "CPU unknown")}, {cpu.logical_cpus or "?"} CPUs'
            f'{", " + html.escape(cpu.arch) if cpu.arch else ""}; {count(result.runs, "run")}, the latest '
            f"{html.escape(latest_run.created)} ({html.escape(latest_run.run_id)}).</p>",
            "<h2>Firmware versions</h2>", f"<ul>{legend}</ul>", "<h2>Cells</h2>",
            web.table(headers, [[html.escape(str(v)) for v in row] for row in rows]),
            f'<p class="note">Medians per firmware; a step is named when Mann-Whitney U gives p &lt; 0.05 and the '
            f"medians differ by at least {trend.STEP_MIN_PCT:g}% (~ otherwise). Runs outside their firmware's "
            f"history (median robust z beyond ±{trend.Z_THRESHOLD:g}) and runs with validity flags are left out of "
            "the medians and steps.</p>"]
    body += _findings(result) + _cell_plots(result, host, colors)
    # the comparisons this host is in (publish writes one per algorithm of the hosts' latest figures)
    algorithms = sorted({c.key.algorithm for c in result.cells if c.groups[-1] and c.groups[-1].median is not None})
    page = web.page(f"{host}: trend", body, _nav(algorithms))
    (_OUT / file).write_text(textsafe.terminal(page), encoding="utf-8")
    latest = {c.key: g.median for c in result.cells for g in [c.groups[-1]] if g is not None and g.median is not None}
    units = {c.key: c.unit for c in result.cells}
    return HostPage(host, file, page, _index_row(result, facts, file, colors), best_core(latest), units)


def _index_row(result: trend.Trend, facts: HostResult, file: str, colors: dict[str, str]) -> list[Cell]:
    """A host's row of the index (site_index): what it is, its crypto at a glance, its history."""
    cpu = facts.cpu
    latest_run = result.segments[-1].runs[-1]
    measured = {c.key for c in result.cells}
    sparks = [_sparkline(result, key, colors) if key in measured else Cell(site_index.DASH, "")
              for key in _HEADLINE]
    one_core, all_cores = site_index.gcm_cells(latest_run)
    return [Cell(f'<a href="{file}">{html.escape(result.host)}</a>', result.host),
            Cell(html.escape(cpu.model or "CPU unknown") + (f"<br><small>{html.escape(cpu.arch)}</small>"
                                                            if cpu.arch else ""), cpu.model or ""),
            Cell(str(cpu.logical_cpus or "?"), str(cpu.logical_cpus or "")),
            site_index.crypto_cell(facts, best_core(latest_run.values)), one_core, all_cores,
            site_index.tunnel_cell(facts), Cell(html.escape(result.segments[-1].short)),
            Cell(html.escape(latest_run.created[:16].replace("T", " "))), Cell(str(result.runs)),
            Cell(str(sum(1 for c in result.cells if c.largest))), Cell(str(len(result.drifts))), *sparks]


def _findings(result: trend.Trend) -> list[str]:
    """A host page's steps, method changes and drifts, each a list of sentences."""
    named = sorted((c for c in result.cells if c.largest), key=lambda c: -abs(c.largest.delta_pct or 0))  # type: ignore[union-attr]
    body = ["<h2>Steps</h2>", web.items([trend.step_sentence(result, c, c.largest) for c in named if c.largest])
            if named else "<p>No step.</p>"]
    changed = trend_table.method_changes(result)  # another ruler between two firmware versions: never a step
    if changed:
        body.append("<h2>Measuring method changed</h2><p class=\"note\">Not a regression or an improvement: "
                    "<code>openssl speed</code> timed these cells differently on each side.</p>")
        body.append(web.items(changed))
    body.append("<h2>Runs outside their firmware's history</h2>")
    body.append(web.items([trend.drift_sentence(result, d) for d in result.drifts]) if result.drifts
                else "<p>None.</p>")
    return body


def _cell_plots(result: trend.Trend, host: str, colors: dict[str, str]) -> list[str]:
    """A host page's plots: one per cell over time (the first MAX_CELL_PLOTS), PNGs in img/<host>/."""
    body = ["<h2>Plots</h2>"]
    figures = []
    img_dir = _OUT / "img" / _FILES[host]
    img_dir.mkdir(parents=True, exist_ok=True)
    if not extras.have_plots():
        body.append(web.note(extras.PLOTS_HINT))
    measured = [cell for cell in result.cells if _series(result, cell.key)]  # a figure to draw
    plotted = measured[:MAX_CELL_PLOTS] if extras.have_plots() else []
    files = textsafe.file_names(label(cell.key) for cell in plotted)
    for cell in plotted:
        name = f"{files[label(cell.key)]}.png"
        made = site_plots.cell_figure(result.segments, cell, _series(result, cell.key), colors)
        width, height = site_plots.save(made, img_dir / name)
        figures.append(web.figure(f"img/{_FILES[host]}/{name}", f"{label(cell.key)} over time", width, height,
                                  caption=label(cell.key)))
    body.append(f'<div class="plots">{"".join(figures)}</div>')
    if len(measured) > MAX_CELL_PLOTS and extras.have_plots():
        body.append(web.note(f"Plots of the first {MAX_CELL_PLOTS} of {len(measured)} cells."))
    return body


def _series(result: trend.Trend, key: Key) -> list[Point]:
    """The runs that measured the cell, in order."""
    out = []
    index = 0
    for segment in result.segments:
        for point in segment.runs:
            value = point.values.get(key)
            if value is not None:
                flagged = bool(point.cells[key].flags) or trend.flagged(point)
                out.append(Point(index, value, segment.letter, point.drift, flagged))
            index += 1
    return out


def _sparkline(result: trend.Trend, key: Key, colors: dict[str, str]) -> Cell:
    """The cell's median per run as a line per firmware; a run that is its firmware's only one (a host's first
    run, the first night of an upgrade) is a dot, so a cell measured once is never an empty box."""
    points = _series(result, key)
    if not points:
        return Cell(site_index.DASH, "")
    low, high = min(p.value for p in points), max(p.value for p in points)
    span = (high - low) or 1.0
    last_x = points[-1].index or 1
    def xy(p: Point) -> tuple[float, float]:
        y = SPARK_HEIGHT / 2 if high == low else SPARK_HEIGHT - 3 - (p.value - low) / span * (SPARK_HEIGHT - 6)
        return (3 + p.index / last_x * (SPARK_WIDTH - 6) if len(points) > 1 else SPARK_WIDTH / 2), y
    marks = []
    for letter in dict.fromkeys(p.letter for p in points):
        mine = [xy(p) for p in points if p.letter == letter]
        if len(mine) == 1:
            marks.append(f'<circle cx="{mine[0][0]:.1f}" cy="{mine[0][1]:.1f}" r="2.5" fill="{colors[letter]}"/>')
            continue
        part = " ".join(f"{x:.1f},{y:.1f}" for x, y in mine)
        marks.append(f'<polyline fill="none" stroke="{colors[letter]}" stroke-width="1.2" points="{part}"/>')
    title = html.escape(f"{label(key)}: {fmt_rate(points[-1].value, kinds.get(key.kind).unit_of(key))}"
                        f" now, {count(len(points), 'run')}")
    return Cell(f'<svg width="{SPARK_WIDTH}" height="{SPARK_HEIGHT}" viewBox="0 0 {SPARK_WIDTH} {SPARK_HEIGHT}" '
                f'role="img" aria-label="{title}"><title>{title}</title>{"".join(marks)}</svg>',
                f"{points[-1].value:.6g}")


INDEX_COLUMNS = ("host", "board / CPU", "CPUs", "AES / SHA instructions", "AES-GCM, 1 core", "AES-GCM, all cores",
                 "VPN tunnel, measured", "firmware", "last run (UTC)", "runs", "steps", "drifts")


def _index(pages: Sequence[HostPage], algorithms: Sequence[str], runs: Sequence[Run]) -> str:
    headers = [*INDEX_COLUMNS, *[label(key) for key in _HEADLINE]]
    latest = max(runs, key=lambda r: (r.created, store.run_order(r.run_id)))
    body = [f"<p>{count(len(pages), 'host')}, {count(len(runs), 'run')}, the latest {html.escape(latest.created)}. "
            "Figures of each host's latest run, the best cell of one core and of all cores, with their validity "
            "flags beside them; the VPN column is a tunnel measured end to end (iperf3 through it), a dash where "
            "none was. Sparklines: the cell's median per run, coloured by firmware (a dot: one run). "
            "Click a column's name to sort by it.</p>",
            site_index.table(headers, [page.row for page in pages]),
            "<h2>Compare across hosts and known boards</h2>",
            "<ul>" + "".join(f'<li><a href="{page_name("compare", a)}">{html.escape(a)}</a></li>'
                             for a in algorithms) + "</ul>"]
    return web.page("sslbench: every host", body, _nav(algorithms), head=site_index.head())


# ---- comparisons -------------------------------------------------------------------------------------------

def _reference_values(known: Run | None) -> dict[str, dict[Key, float]]:
    if known is None:
        return {}
    return {h.host: best_core(medians(host_cells(h))) for h in known.hosts}


def _reference_name(name: str, entry: dict[str, Any]) -> str:
    """How a comparison page names a known board: a summary entry says it is no log."""
    return f"{name} (reference: summary figures)" if entry.get("kind") == reference.FIGURES else f"{name} (reference)"


def _compare_page(out: Path, algorithm: str, algorithms: Sequence[str], pages: Sequence[HostPage],
                  references: dict[str, dict[Key, float]], entries: dict[str, dict[str, Any]] | None = None) -> Path:
    entries = entries or {}
    rows_of: list[tuple[str, dict[Key, float], bool]] = [
        (p.host, {k: v for k, v in p.latest.items() if k.algorithm == algorithm}, False) for p in pages]
    rows_of += [(_reference_name(name, entries.get(name, {})),
                 {k: v for k, v in values.items() if k.algorithm == algorithm}, True)
                for name, values in references.items()]
    rows_of = [r for r in rows_of if r[1]]
    keys = sorted({k for _, values, _ in rows_of for k in values}, key=sort_key)
    unit = kinds.get(keys[0].kind).unit_of(keys[0]) if keys else "B/s"
    links = {p.host: p.file for p in pages}
    body = [f"<p>Each host's medians under its latest firmware (one core: the best cluster of a big.LITTLE board) "
            f"beside published results of known boards, marked as reference (their sources: below, and "
            f"orchestrator/reference/known/boards.toml).</p>"]
    for api, threads in dict.fromkeys((k.api or k.implementation, k.threads) for k in keys):  # a tunnel's: its
        group = [k for k in keys if (k.api or k.implementation, k.threads) == (api, threads)]  # implementation
        rows, classes = [], []
        for name, values, is_reference in rows_of:
            if not any(k in values for k in group):
                continue
            first = html.escape(name) if is_reference else f'<a href="{links[name]}">{html.escape(name)}</a>'
            rows.append([first] + [html.escape(fmt_rate(values[k], unit)) if k in values else "" for k in group])
            classes.append("reference" if is_reference else "")
        columns = [k.operation or f"{k.block_size} B" for k in group]
        body.append(f"<h2>{html.escape(' '.join(p for p in (algorithm, api or '', f't{threads}') if p))}</h2>")
        body.append(web.table(["host", *columns], rows, classes))
    chart = _chart_key(keys, [values for _, values, is_reference in rows_of if not is_reference],
                       [values for _, values, is_reference in rows_of if is_reference])
    if chart is not None and not extras.have_plots():
        body.append(f'<p class="note">{html.escape(extras.PLOTS_HINT)}</p>')
    elif chart is not None:
        body.append(_chart(out, algorithm, chart, unit, rows_of))
    body += _known_sources(algorithm, {name for name, values in references.items()
                                       if any(k.algorithm == algorithm for k in values)}, entries)
    return _write(out / page_name("compare", algorithm), web.page(f"{algorithm} across hosts", body, _nav(algorithms)))


def _known_sources(algorithm: str, shown: set[str], entries: dict[str, dict[str, Any]]) -> list[str]:
    """Below a comparison: the figures of this algorithm published without a block size or threads (no cell of the
    tables above), and every known board on the page with its source and what its figures cannot tell."""
    loose = []
    for name, entry in entries.items():
        unit = str(entry.get("unit", "k"))
        for f in entry.get("figures") or []:
            if f.get("algorithm") != algorithm or (isinstance(f.get("block"), int) and isinstance(f.get("threads"), int)):
                continue
            try:
                value = fmt_rate(reference.figure_value(str(f.get("value")), unit if unit in reference.UNITS else "k"))
            except UserError:
                continue
            loose.append((name, entry, f, value))
    named = sorted(shown | {name for name, _, _, _ in loose})
    if not named:
        return []
    body = []
    if loose:
        body.append("<h2>Published without block size or threads (reference: summary figures)</h2>")
        body.append("<p>Figures a source published without saying which block size or how many threads they are: "
                    "shown as published, in no column above.</p>")
        body.append(web.table(["known board", "published as", "value as published", "threads", "block", "read as"],
                           [[html.escape(_reference_name(name, entry)), html.escape(str(f.get("label", ""))),
                             html.escape(str(f.get("value", ""))), html.escape(str(f.get("threads", ""))),
                             html.escape(str(f.get("block", ""))), html.escape(value)]
                            for name, entry, f, value in loose], ["reference"] * len(loose)))
    rows = []
    for name in named:
        entry = entries.get(name, {})
        link = source_link(str(entry.get("source", "")))
        kind = "summary figures, not a log" if entry.get("kind") == reference.FIGURES else "log"
        rows.append([html.escape(_reference_name(name, entry)), html.escape(str(entry.get("cpu", ""))),
                     html.escape(kind), html.escape(reference.not_told(entry) if entry else ""),
                     html.escape(str(entry.get("accuracy", ""))), link])
    body.append("<h2>Known boards on this page: sources</h2>")
    body.append(web.table(["known board", "CPU", "entry", "cannot tell", "the source on accuracy", "source"], rows,
                       ["reference"] * len(rows), wrap=True))
    return body


def _chart_key(keys: Sequence[Key], hosts: Sequence[dict[Key, float]] = (),
               known: Sequence[dict[Key, float]] = ()) -> Key | None:
    """The cell a comparison charts: the one most of the user's hosts measured, then most known boards; among
    those, single-thread first, then the block sizes of COMPARE_BLOCKS and the EVP API. A cell only the known
    boards have is charted only when no host has a cell of the algorithm the chart could show."""
    def preference(k: Key) -> tuple[int, int, int, int, int]:
        block = COMPARE_BLOCKS.index(k.block_size) if k.block_size in COMPARE_BLOCKS else len(COMPARE_BLOCKS)
        api = ("evp", None, "legacy").index(k.api) if k.api in ("evp", None, "legacy") else 3
        return (-sum(k in v for v in hosts), -sum(k in v for v in known), k.threads != 1 or k.cpu is not None,
                block, api)
    return min(keys, key=lambda k: (preference(k), sort_key(k))) if keys else None


def _chart(out: Path, algorithm: str, chart: Key, unit: str,
           rows_of: Sequence[tuple[str, dict[Key, float], bool]]) -> str:
    """A comparison's bar chart (site_plots) and a caption that says what is in it."""
    name = f"compare-{store.safe_name(algorithm)}.png"
    bars = sorted((Bar(n, v[chart], r) for n, v, r in rows_of if chart in v), key=lambda b: -b.value)
    width, height = site_plots.plot_bars(bars, label(chart), unit, out / "img" / name)
    legend = textsafe.plot_legend(bar.name for bar in bars)
    hosts, known = sum(not b.reference for b in bars), sum(b.reference for b in bars)
    said = ("hosts in colour, known boards in grey (reference)" if hosts and known else
            "every host that measured it" if hosts else "known boards only (reference): no host measured this cell")
    return (f'<figure><img src="img/{name}" width="{width}" height="{height}" '
            f'alt="{html.escape(label(chart))} across hosts"><figcaption>{html.escape(label(chart))}: {said}'
            + (html.escape(f"; labelled in the chart: {'; '.join(legend)}") if legend else "")
            + "</figcaption></figure>")


def source_link(url: str) -> str:
    """A known board's source as a link when it is a plain http(s) address (a new page that cannot reach back into
    the site: rel="noopener noreferrer"), else as text; escaped either way."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return html.escape(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() or ord(c) < 32 for c in url):
        return html.escape(url)
    return f'<a href="{html.escape(url, quote=True)}" rel="noopener noreferrer">{html.escape(url)}</a>'


def _write(path: Path, text: str) -> Path:
    try:
        path.write_text(textsafe.terminal(text), encoding="utf-8")  # no control character in a file one may `cat`
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path

