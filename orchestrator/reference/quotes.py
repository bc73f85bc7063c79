"""Which figure of a known board to set beside a user's line rate (report --view line-rate, the site), and what
a table of a reference run cannot show by its labels."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from orchestrator.analysis.cells import Cell, Key, best_core, host_cells, medians
from orchestrator.errors import UserError
from orchestrator.model import LINE_BLOCKS, HostResult, Run
from orchestrator.reference.entries import FIGURES, SOURCE, UNITS, figure_value, stored_figures

# The figures a line-rate comparison quotes of a known board, in order of preference: the AEADs of
# insights.line_rates first, then aes-128-gcm (router-map's and many router threads' cipher), then any other.
QUOTE_ALGORITHMS = ("aes-256-gcm", "chacha20-poly1305", "aes-128-gcm")


@dataclass
class Quote:
    """The figure of a known board to set beside a user's line rate: one algorithm, one block (None: the source
    does not say which), one core and all cores (bytes/s), and whether it is a cell of the tables or a figure kept
    only as published."""

    algorithm: str
    block: int | None
    one_core: float | None
    all_cores: float | None
    cores: int | None
    placed: bool
    flags: list[str] = field(default_factory=list)  # of the quoted cells (partial: read from progress lines)

    @property
    def text(self) -> str:
        block = f"{self.block} B" if self.block else "block not stated"
        flags = f" [{', '.join(self.flags)}]" if self.flags else ""
        return f"{self.algorithm} {block}{flags}"


def entries_of(run: Run) -> dict[str, dict[str, object]]:
    """The entries (Entry.to_dict) of a reference run, by id; {} for any other run."""
    if run.source != SOURCE:
        return {}
    entries = run.matrix.get("reference") or {}
    return {str(k): v for k, v in entries.items() if isinstance(v, dict)}


def quote(entry: dict[str, object], result: HostResult, cells: Mapping[Key, Cell] | None = None) -> Quote | None:
    """The figure to quote for a known board (QUOTE_ALGORITHMS first; the smallest block of LINE_BLOCKS measured,
    else the largest; a cell before a figure the source gives without block size), or None without throughput.
    cells: the result's, grouped under its run's busy rule (default: host_cells without one)."""
    candidates: list[tuple[str, int | None, int, float, bool]] = []  # algorithm, block, threads, bytes/s, placed
    cells = host_cells(result) if cells is None else cells
    for key, value in best_core(medians(cells)).items():
        if key.operation is None and key.block_size is not None:
            candidates.append((key.algorithm, key.block_size, key.threads, value, True))
    unit = str(entry.get("unit", "k"))
    for f in stored_figures(entry):
        block, threads = f.get("block"), f.get("threads")
        if isinstance(block, int) and isinstance(threads, int):
            continue  # a cell already
        try:
            value = figure_value(str(f.get("value", "")), unit if unit in UNITS else "k")
        except UserError:
            continue
        candidates.append((str(f.get("algorithm", "")), block if isinstance(block, int) else None,
                           threads if isinstance(threads, int) else 0, value, False))
    if not candidates:
        return None
    algorithms = list(dict.fromkeys(c[0] for c in candidates))
    algorithm = min(algorithms, key=lambda a: (QUOTE_ALGORITHMS.index(a) if a in QUOTE_ALGORITHMS
                                               else len(QUOTE_ALGORITHMS), a))
    rows = [c for c in candidates if c[0] == algorithm]
    placed = any(c[4] for c in rows)
    rows = [c for c in rows if c[4] == placed]
    blocks = sorted({c[1] for c in rows if c[1] is not None})
    in_range = [b for b in blocks if LINE_BLOCKS[0] <= b <= LINE_BLOCKS[1]]
    block = in_range[0] if in_range else (blocks[-1] if blocks else None)
    rows = [c for c in rows if c[1] == block]
    one = max((c[3] for c in rows if c[2] == 1), default=None)
    multi = max(((c[2], c[3]) for c in rows if c[2] != 1), default=None)
    cores = multi[0] if multi and multi[0] > 1 else None
    flags = sorted({flag for key, cell in cells.items() if placed and key.algorithm == algorithm
                    and key.block_size == block and key.operation is None for flag in cell.flags})
    return Quote(algorithm, block, one, multi[1] if multi else None, cores, placed, flags)


def summary_note(run: Run) -> list[str]:
    """What a table of a reference run cannot show by its labels: which known boards are summary figures (a
    published row or ranking, not a log) and that their figures without block size or threads are in no table."""
    entries = entries_of(run)
    summaries = sorted(name for name, e in entries.items() if e.get("kind") == FIGURES)
    if not summaries:
        return []
    loose = sum(1 for name in summaries for f in stored_figures(entries[name])
                if not (isinstance(f.get("block"), int) and isinstance(f.get("threads"), int)))
    return [f"{len(summaries)} known boards are summary figures (a published table row or ranking, not a log): "
            f"{', '.join(summaries)}; {loose} of their figures state no block size or threads and are in no table "
            "(report --view line-rate and the site's comparison pages list them as published)"]
