"""What conditions.sh's cell wrapper records around one cell: quick snapshots before and after it, and the run of
the benchmark process between them (its samples, its CPU time, the CPUs it was allowed on). Read from the cell's
log by evidence/conditions.py's `read_cell`; judged by the CELL_CHECKS of evidence/checks.py. Never stored: the run
keeps each cell's verdict (validity.Verdict), not its evidence, which stays in the cell's raw log.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from orchestrator.evidence.records import Number, Snapshot, put


@dataclass(frozen=True)
class RunSample:
    """The wrapper's look at the benchmark process: uptime, the CPU it was on, its CPU ticks, its name."""

    uptime: Number
    cpu: Number
    ticks: Number
    comm: str


@dataclass
class CellRun:
    """What the cell wrapper recorded of the benchmark process."""

    command: str | None = None
    samples: list[RunSample] = field(default_factory=list)
    children_before: int | None = None  # the shell's children's user + system time, clock ticks
    children_after: int | None = None
    uptime_before: Number | None = None
    uptime_after: Number | None = None
    pid: Number | None = None
    exit: Number | None = None
    allowed_cpus: list[int] | None = None  # the kernel's Cpus_allowed_list of the process

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"samples": [{"uptime": s.uptime, "cpu": s.cpu, "ticks": s.ticks, "comm": s.comm}
                                              for s in self.samples]}
        for key in ("command", "children_before", "uptime_before", "allowed_cpus", "pid", "uptime_after",
                    "children_after", "exit"):
            put(out, key, getattr(self, key))
        return out

    @property
    def process_samples(self) -> list[RunSample]:
        """The samples of the benchmark itself: the first one can catch `taskset` before it set the mask and exec'd."""
        samples = self.samples
        if len(samples) > 1 and samples[0].comm != samples[-1].comm:
            samples = samples[1:]
        return samples

    @property
    def observed_cpus(self) -> list[int]:
        """The CPUs the benchmark process was seen on (the `processor` field of /proc/PID/stat per sample)."""
        return sorted({s.cpu for s in self.process_samples if isinstance(s.cpu, int)})


@dataclass
class CellEvidence:
    """conditions.sh's evidence around one cell: quick snapshots before and after, and the run between."""

    before: Snapshot | None = None
    run: CellRun | None = None
    after: Snapshot | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, part in (("before", self.before), ("run", self.run), ("after", self.after)):
            if part is not None:
                out[key] = part.to_dict()
        return out
