"""Figures for the dashboards people already run: the OpenMetrics / Prometheus text exposition (as node_exporter's
textfile collector reads it) and InfluxDB line protocol (`report --format openmetrics|influx`).

One content model, two writers: `figures(runs)` gives every cell of every host as a `Figure` (the median of its
samples, as the tables show it, with the labels that say what was measured, on what, and what makes it less
comparable), and every measured tunnel in Mbit/s (a family of its own, labelled by tunnel, implementation,
direction and streams), `openmetrics` and `influx` write them. Pure: no I/O.

Timestamps. node_exporter's textfile collector rejects a whole file in which any sample carries a timestamp
("contains unsupported client-side timestamps, skipping entire file", collector/textfile.go), so by default samples
carry none and the run's time is a figure of its own, `sslbench_run_timestamp_seconds` (as node_exporter's
`node_textfile_mtime_seconds`); a host's cell in several runs is exposed once, from its newest run.
`timestamps=True` puts the run's time on every sample (OpenMetrics: seconds) and keeps every run, for `promtool
tsdb create-blocks-from openmetrics` (backfill). Line protocol always has the run's time (nanoseconds).

Every run is a point. Two runs can share a time to the second and beyond (two logs imported with one `--date`), and
a series keeps one value a time (InfluxDB overwrites a point of the same series and time; a Prometheus series'
timestamps must increase): so where every run is kept (line protocol, `--timestamps`) each figure carries its run's
id as the label `run` (RUN), which keeps such runs apart, and writing the same runs twice gives the same points.
"""
from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from typing import Iterable

from orchestrator import stats
from orchestrator.analysis import cells, identity, tunnel_answers
from orchestrator.evidence import validity
from orchestrator.model import SPEED, HostResult, Run

THROUGHPUT = "sslbench_throughput_bytes_per_second"
PUBLIC_KEY = "sslbench_public_key_operations_per_second"
RUN_TIME = "sslbench_run_timestamp_seconds"
TUNNEL_RATE = "sslbench_tunnel_megabits_per_second"
FAMILIES = {  # name -> HELP
    THROUGHPUT: "Median throughput of an openssl speed cell, bytes per second (block_size bytes per operation).",
    PUBLIC_KEY: "Median public-key operations per second of an openssl speed cell (sign, verify, ...).",
    TUNNEL_RATE: "Median throughput of a measured tunnel (iperf3 through it, the receiver's; both ends on the host "
                 "where sslbench measured it, not recorded for an imported iperf3 log), Mbit/s (10^6 bits per second).",
    RUN_TIME: "When the run that measured the host's figures was made, Unix time in seconds.",
}
INFLUX = {THROUGHPUT: ("sslbench_throughput", "bytes_per_second"),
          PUBLIC_KEY: ("sslbench_public_key", "ops_per_second"),
          TUNNEL_RATE: ("sslbench_tunnel", "mbits_per_second")}
# The labels of every figure, in this order (always all of them: a family whose series have different label names
# is refused by the Prometheus client node_exporter gathers with). A run-time series has the host's four.
HOST_LABELS = ("host", "board", "firmware", "openssl_version")
CELL_LABELS = ("algorithm", "api", "operation", "threads", "block_size", "cpu_cluster", "flags")
RUN = "run"  # the run's id: last label where every run is kept (see the module)
TUNNEL_LABELS = ("tunnel", "implementation", "direction", "streams", "flags")  # TUNNEL_RATE's, after the host's
_FACTS = {"board", "firmware", "openssl_version", "flags"}  # what a host's cell was measured on and how, not which


@dataclass(frozen=True)
class Figure:
    """One exposed value: a cell's median (or, RUN_TIME, a run's time) with its labels."""

    family: str  # THROUGHPUT, PUBLIC_KEY, TUNNEL_RATE or RUN_TIME
    labels: tuple[tuple[str, str], ...]  # (name, value) in HOST_LABELS (+ CELL_LABELS) order; "" where unknown
    value: float
    time: float  # the run's time, Unix seconds
    samples: int = 1  # how many measurements the median is of
    run: str = ""  # the id of the run it is of

    def with_run(self) -> tuple[tuple[str, str], ...]:
        """The labels and the run's id (RUN): a series of its own for every run."""
        return self.labels + ((RUN, self.run),)


def run_time(run: Run) -> float:
    """run.created as Unix seconds (a time without a zone is UTC, as the store writes it); 0 when it is none."""
    try:
        when = _dt.datetime.fromisoformat(run.created.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return 0.0
    return (when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)).timestamp()


def figures(runs: Iterable[Run]) -> list[Figure]:
    """Every cell with a figure of every host of `runs` (oldest run first), then each host's run time."""
    out: list[Figure] = []
    times: list[Figure] = []
    for run in sorted(runs, key=lambda run: (run_time(run), run.run_id)):  # the same order however given
        when = run_time(run)
        busy = validity.busy_below(cells.requested_seconds(run))
        for result in run.hosts:
            if not result.measurements:
                continue
            host = (("host", result.host), ("board", result.cpu.system_type or result.cpu.model or ""),
                    ("firmware", identity.firmware_label(result)), ("openssl_version", result.openssl.version or ""))
            host_cells = cells.host_cells(result, busy)
            for key in sorted(host_cells, key=cells.sort_key):
                cell = host_cells[key]
                if not cell.samples or key.kind != SPEED:
                    # unsupported or failed: no figure to plot (the tables say why); a measured tunnel is a figure of
                    # its own family (_tunnels), never exposed under openssl speed's
                    continue
                flags = ",".join(sorted(cell.flags))
                labels = host + (("algorithm", key.algorithm), ("api", key.api or ""),
                                 ("operation", key.operation or ""), ("threads", str(key.threads)),
                                 ("block_size", "" if key.block_size is None else str(key.block_size)),
                                 ("cpu_cluster", key.cpu or ""), ("flags", flags))
                family = THROUGHPUT if key.operation is None else PUBLIC_KEY
                out.append(Figure(family, labels, stats.median(cell.samples), when, len(cell.samples), run.run_id))
            out += _tunnels(result, host, when, run.run_id)
            times.append(Figure(RUN_TIME, host, when, when, run=run.run_id))
    return out + times


def _tunnels(result: HostResult, host: tuple[tuple[str, str], ...], when: float, run: str) -> list[Figure]:
    """The host's measured tunnels with a figure, in Mbit/s, labelled by tunnel, implementation, direction, streams."""
    out = []
    for figure in tunnel_answers.tunnel_figures(result):
        if figure.mbit is None:
            continue  # not measurable: the report says why
        labels = host + (("tunnel", figure.tunnel), ("implementation", figure.implementation or ""),
                         ("direction", figure.direction), ("streams", str(figure.streams)),
                         ("flags", ",".join(figure.flags)))
        out.append(Figure(TUNNEL_RATE, labels, figure.mbit, when, figure.samples, run))
    return out


# --- OpenMetrics / Prometheus text ------------------------------------------------------------------------------

def openmetrics(runs: Iterable[Run], *, timestamps: bool = False) -> str:
    """The OpenMetrics text exposition (which the Prometheus text parser reads too: `# EOF` is a comment to it)."""
    by_family: dict[str, dict[tuple[tuple[str, str], ...], list[Figure]]] = {name: {} for name in FAMILIES}
    for figure in figures(runs):
        # a series: its labels, or, for the textfile collector, the host's cell whatever its firmware then was
        ident = figure.with_run() if timestamps else tuple(pair for pair in figure.labels if pair[0] not in _FACTS)
        series = by_family[figure.family].setdefault(ident, [])
        series[:] = [figure]  # the newest run's (figures() gives runs oldest first); with the run's id, its own
    lines: list[str] = []
    for name, series_of in by_family.items():
        if not series_of:
            continue
        lines += [f"# HELP {name} {_escape_help(FAMILIES[name])}", f"# TYPE {name} gauge"]
        for points in series_of.values():
            labels = points[0].with_run() if timestamps else points[0].labels
            text = ",".join(f'{key}="{_escape_label(value)}"' for key, value in labels)
            for point in points:
                stamp = f" {_number(point.time)}" if timestamps else ""
                lines.append(f"{name}{{{text}}} {_number(point.value)}{stamp}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _escape_label(value: str) -> str:
    """A label value as both text formats escape it: backslash, double quote and line feed."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    """Python's shortest repr, which both formats read back to the same float; whole numbers without '.0'."""
    if math.isfinite(value) and value == int(value) and abs(value) < 2 ** 53:
        return str(int(value))
    return repr(float(value))


# --- InfluxDB line protocol -------------------------------------------------------------------------------------

def influx(runs: Iterable[Run]) -> str:
    """A line per figure: measurement, the labels and the run's id (RUN) as tags (sorted by key, as InfluxDB advises;
    empty ones left out: line protocol has no empty tag value), the figure and its sample count as fields, the
    run's time in ns."""
    lines: list[str] = []
    for figure in figures(runs):
        if figure.family not in INFLUX:
            continue  # the run's time is each point's timestamp
        measurement, field = INFLUX[figure.family]
        tags = "".join(f",{_escape_key(k)}={_escape_key(v)}" for k, v in sorted(figure.with_run()) if v)
        nanoseconds = int(round(figure.time * 1_000_000)) * 1000  # microseconds are what a float carries exactly
        lines.append(f"{_escape_measurement(measurement)}{tags} {field}={_number_field(figure.value)},"
                     f"samples={figure.samples}i {nanoseconds}")
    return "\n".join(lines) + ("\n" if lines else "")


def _escape_key(text: str) -> str:
    """A tag key or value as InfluxDB reads it (models/points.go: `\\,` `\\=` `\\ ` are its only escapes; any other
    backslash is itself). A backslash line protocol cannot carry, last in a value or before `,` `=` or a space
    (parsers differ on it, none can tell it from an escape), is written as the fullwidth reverse solidus U+FF3C,
    which looks the same and ends no tag. A line feed or carriage return cannot be in a line at all: written as
    the two characters `\\n`/`\\r`, read back as that text."""
    text = re.sub(r"\\(?=[,= ]|$)", "\uff3c", text)
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text.replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def _escape_measurement(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace(" ", "\\ ")


def _number_field(value: float) -> str:
    """A float field (never an integer: `1i` would make the field's type integer, and the next float clash)."""
    return repr(float(value))
