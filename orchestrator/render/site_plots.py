"""The site's plots (`sslbench publish`): a host's cell over time and a comparison's bar chart, PNGs that fit their
text. Each figure is built with its plot area a fixed size in inches; then its text (titles, tick labels, axis
labels, annotations) is measured with matplotlib's renderer and the figure grown around it, so no name, however
long, and no bar count cuts a label at the image's edge. Bar labels longer than BAR_LABEL_CHARS wrap, and the bars'
slots grow with their lines.

matplotlib (the `plots` extra, orchestrator/extras.py) is imported only inside the functions that draw.
"""
from __future__ import annotations

import math
import re
import struct
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from orchestrator import textsafe
from orchestrator.analysis import trend
from orchestrator.analysis.cells import label
from orchestrator.units import BITS, MB, fmt_delta, mbytes

DPI = 80
PAD_INCHES = 0.12  # white space around the text at the figure's edge
BAR_LABEL_CHARS = 40  # a bar's label wraps beyond this
BAR_COLOR = "#1f77b4"
REFERENCE_COLOR = "#bbb"
DRIFT_COLOR = "#d62728"  # runs outside their firmware's history: crosses
FLAGGED_COLOR = "#aaaaaa"  # runs with validity flags (busy, throttled ...): grey dots
CELL_AXES = (7.1, 2.3)  # inches of a host plot's plot area
BARS_WIDTH = 6.6  # inches of a bar chart's plot area


@dataclass(frozen=True)
class Bar:
    name: str
    value: float
    reference: bool  # a known board (grey), else one of the user's hosts (colour)


@dataclass(frozen=True)
class Point:
    """A run that measured a cell: its index among the host's runs, its median, its firmware segment."""

    index: int
    value: float
    letter: str
    drift: bool  # outside its firmware's history
    flagged: bool  # validity flags


def figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    made = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(made)
    return made


def fit(made: Any, ax: Any) -> None:
    """Grow the figure around the axes' text: the plot area keeps its size in inches, the margins become what its
    tick labels, axis labels, title and annotations take (measured by the renderer), plus PAD_INCHES."""
    renderer = made.canvas.get_renderer()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        made.canvas.draw()  # places the axis labels below their tick labels, as saving will
        text = ax.get_tightbbox(renderer)
    area = ax.get_window_extent(renderer)
    dpi = made.dpi
    left = max(0.0, area.x0 - text.x0) / dpi + PAD_INCHES
    right = max(0.0, text.x1 - area.x1) / dpi + PAD_INCHES
    bottom = max(0.0, area.y0 - text.y0) / dpi + PAD_INCHES
    top = max(0.0, text.y1 - area.y1) / dpi + PAD_INCHES
    width, height = area.width / dpi, area.height / dpi
    # whole pixels: the PNG is as many pixels as the figure's size truncated, and the text must be inside those
    total_w, total_h = (math.ceil((left + width + right) * dpi) / dpi, math.ceil((bottom + height + top) * dpi) / dpi)
    made.set_size_inches(total_w, total_h)
    ax.set_position((left / total_w, bottom / total_h, width / total_w, height / total_h))


def save(made: Any, path: Path) -> tuple[int, int]:
    """Write the PNG; its (width, height) in pixels, read back from its header, for the page's <img>."""
    with warnings.catch_warnings():  # labels are textsafe.plot_label: a font's warning would name our source line
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        made.savefig(path, format="png")
    with path.open("rb") as png:
        width, height = struct.unpack(">II", png.read(24)[16:24])
    return int(width), int(height)


def wrap_label(text: str, width: int = BAR_LABEL_CHARS) -> str:
    """A plot label in lines of at most `width` characters, broken at a space where one is in the line's second
    half; an escaped `\\$` is never split (mathtext would read a lone `$`)."""
    tokens = re.findall(r"\\\$|.", text, flags=re.DOTALL)
    lines: list[str] = []
    while len(tokens) > width:
        cut = width
        spaces = [i for i in range(width // 2, width) if tokens[i] == " "]
        if spaces:
            cut = spaces[-1]
        lines.append("".join(tokens[:cut]).rstrip())
        tokens = tokens[cut:]
        while tokens and tokens[0] == " ":
            tokens = tokens[1:]
    lines.append("".join(tokens))
    return "\n".join(lines)


def _axis(unit: str) -> tuple[Callable[[float], float], str]:
    """How a kind's unit is drawn: bytes/s as MB/s, a tunnel's bits/s as Mbit/s, operations as they are."""
    if unit == "B/s":
        return mbytes, "MB/s"
    if unit == BITS:
        return (lambda v: v / MB), "Mbit/s"
    return (lambda v: v), "ops/s"


def bars_figure(bars: Sequence[Bar], title: str, unit: str) -> Any:
    """A horizontal bar chart, largest first, on a log scale; the figure fitted to its text."""
    scale, axis = _axis(unit)
    names = [wrap_label(textsafe.plot_label(bar.name)) for bar in bars]
    lines = max((name.count("\n") + 1 for name in names), default=1)
    slot = 0.14 * lines + 0.16  # inches per bar
    made = figure(10, 4)
    ax = made.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.set_position((0.1, 0.1, 0.8, 0.8))
    made.set_size_inches(BARS_WIDTH / 0.8, max(1.2, slot * len(bars)) / 0.8)
    positions = list(range(len(bars)))[::-1]
    ax.barh(positions, [scale(bar.value) for bar in bars],
            color=[REFERENCE_COLOR if bar.reference else BAR_COLOR for bar in bars])
    ax.set_yticks(positions, names, fontsize=8)
    ax.set_ylim(-0.6, len(bars) - 0.4)
    ax.set_xscale("log")  # a MIPS router and an x86 mini PC differ a thousandfold
    ax.set_xlabel(axis + " (log scale)", fontsize=9)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    fit(made, ax)
    return made


def plot_bars(bars: Sequence[Bar], title: str, unit: str, path: Path) -> tuple[int, int]:
    return save(bars_figure(bars, title, unit), path)


def cell_figure(segments: Sequence[trend.Segment], cell: trend.CellTrend, points: Sequence[Point],
                colors: dict[str, str]) -> Any:
    """A cell's medians per run over time, coloured by firmware (flagged grey, drifting crossed), a dashed line at
    each firmware change with its named step, and the firmware's letter under the middle of its runs."""
    scale, axis = _axis(cell.unit)
    made = figure(CELL_AXES[0] / 0.8, CELL_AXES[1] / 0.8)
    ax = made.add_axes((0.1, 0.1, 0.8, 0.8))
    for letter in dict.fromkeys(p.letter for p in points):
        mine = [p for p in points if p.letter == letter and not p.drift and not p.flagged]
        ax.plot([p.index for p in mine], [scale(p.value) for p in mine], ".", color=colors[letter], markersize=4)
    flagged = [p for p in points if p.flagged and not p.drift]
    if flagged:
        ax.plot([p.index for p in flagged], [scale(p.value) for p in flagged], ".", color=FLAGGED_COLOR, markersize=4)
    drifted = [p for p in points if p.drift]
    if drifted:
        ax.plot([p.index for p in drifted], [scale(p.value) for p in drifted], "x", color=DRIFT_COLOR, markersize=5)
    start = 0
    ticks, names = [], []
    for i, segment in enumerate(segments):
        if i:
            ax.axvline(start - 0.5, color="#888", linewidth=0.8, linestyle="--")
            step = cell.steps[i - 1]
            if step is not None and step.named:
                ax.annotate(fmt_delta(step.delta_pct), (start - 0.5, 1.0), xycoords=("data", "axes fraction"),
                            xytext=(3, -12), textcoords="offset points", color="#b00" if (step.delta_pct or 0) < 0
                            else "#070", fontsize=9, fontweight="bold")
        ticks.append(start + (len(segment.runs) - 1) / 2)  # runs sit at start .. start+n-1: their middle
        names.append(segment.letter)
        start += len(segment.runs)
    ax.set_xticks(ticks, names)
    ax.set_xlim(-1, max(start, 1))
    ax.set_ylabel(axis, fontsize=9)
    ax.set_title(label(cell.key), fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.tick_params(labelsize=8)
    fit(made, ax)
    return made


def texts(made: Any) -> list[Any]:
    """The texts a reader sees in the figure: titles, axis labels, annotations, and the labels of the ticks
    inside each axis's view (matplotlib keeps labels of ticks beyond it, never drawn)."""
    found = list(made.texts)
    for ax in made.axes:
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            span = (high - low) * 1e-9
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if low - span <= tick.get_loc() <= high + span:
                    found += [tick.label1, tick.label2]
    return [t for t in found if t.get_visible() and t.get_text().strip()]


def text_outside(made: Any) -> list[str]:
    """Every visible text of the figure (`texts`) whose box, as the renderer draws it, is not wholly inside the
    image: what a reader would find cut. Empty for a fitted figure."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        made.canvas.draw()
        renderer = made.canvas.get_renderer()
        width, height = (int(v) for v in made.get_size_inches() * made.dpi)  # the PNG's pixels (truncated)
        cut = []
        for text in texts(made):
            box = text.get_window_extent(renderer)
            if box.x0 < 0 or box.y0 < 0 or box.x1 > width or box.y1 > height:
                cut.append(f"{text.get_text()!r} at {box.x0:.0f},{box.y0:.0f}..{box.x1:.0f},{box.y1:.0f} "
                           f"of {width}x{height}")
    return cut
