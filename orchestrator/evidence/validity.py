"""Validity flags: was a figure measured under conditions that make it comparable?

Inputs are the records of orchestrator/evidence/conditions.py (host snapshots before/after the matrix,
the idle gate, per-cell evidence) and `Measurement`s; outputs are flag names plus one human
reason per flag, so a table can show `busy` and a report can say why.  Each flag is raised by the
checks of orchestrator/evidence/checks.py (HOST_CHECKS, CELL_CHECKS: one entry per check), run here in
order.  Pure: no I/O.

Flags (the names tables and diffs show; model.EVIDENCE_FLAGS):
  throttled      the clock went below its top during the run (time_in_state), the thermal cap
                 lowered scaling_max_freq, or Raspberry Pi firmware reports throttling bits
  hot            a CPU thermal zone above THRESHOLDS.hot_celsius
  busy           the host never became idle, other processes used CPU while the cell ran, or
                 openssl's progress line shows it got much less CPU time than it asked for
  cores-offline  some present CPUs were offline (a -multi figure would be low)
  pin-failed     a pinned cell ran (also) on another core than the one it was pinned to
Flags the log parser sets (orchestrator/parse/speed/resolve.py; model.PARSER_FLAGS), with the figure's `reason`:
  partial           the log ends before openssl printed its table: the figure comes from a progress
                    line (count × block size / CPU seconds)
  partial-children  openssl's own -multi summary is missing: the figure is the sum of the children
                    whose lines could be read (the reason says how many of N)
Too few repeats for a verdict is not a flag of the measurements: `diff` shows each side's sample count
and says under the table which cells have too few (stats.MIN_SAMPLES_TO_DETECT), as benchstat does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from orchestrator.evidence.checks import (
    CELL_CHECKS,
    HOST_CHECKS,
    THRESHOLDS,
    CellContext,
    Check,
    E,
    Facts,
    HostEvidence,
    Thresholds,
    background_cores,
    below_top,
    busy_below,
    decode_throttled,
    mean_khz,
    offline_cpus,
    short_cpu_time,
)
from orchestrator.evidence.clusters import detect_clusters, pinned_cpu_of
from orchestrator.evidence.conditions import read_cell, read_idle, read_snapshot
from orchestrator.evidence.cell import CellEvidence
from orchestrator.evidence.records import CryptoDriver, IdleGate, Number, Snapshot, as_dict, as_int, as_number
from orchestrator.methods import FIXED_PUBKEY_SECONDS, FIXED_SECONDS
from orchestrator.model import ALL_FLAGS, OK, HostResult, Measurement
from orchestrator.stats import median

# what callers and tests reach through this module: the judge's vocabulary lives in checks.py
__all__ = ["THRESHOLDS", "CryptoEvidence", "StoredConditions", "Thresholds", "Verdict", "apply_flags",
           "background_cores", "below_top", "busy_below", "cell_verdict", "crypto_evidence", "decode_throttled",
           "flag_cell", "flag_host", "host_verdict", "mean_khz", "measured_mhz", "nominal_seconds", "offline_cpus",
           "short_cpu_time"]


@dataclass
class Verdict:
    flags: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # one line per flag raised, "flag: why"; notes "note: ..."
    facts: Facts = field(default_factory=Facts)  # measured evidence (clock, temperature, background CPU)

    def add(self, flag: str, reason: str) -> None:
        if flag not in self.flags:
            self.flags.append(flag)
        self.reasons.append(f"{flag}: {reason}")

    def to_dict(self) -> dict[str, object]:
        return {"flags": list(self.flags), "reasons": list(self.reasons), "facts": self.facts.to_dict()}


def judge(checks: Sequence[Check[E]], evidence: E, th: Thresholds = THRESHOLDS) -> Verdict:
    """Run each check of a list in order: its findings raise its flag, or go beside the verdict as notes."""
    verdict = Verdict()
    for check in checks:
        for finding in check.rule(evidence, th, verdict.facts):
            if finding.raises and check.flag is not None:
                verdict.add(check.flag, finding.reason)
            else:
                verdict.reasons.append(f"note: {finding.reason}")
    return verdict


def host_verdict(before: Snapshot, after: Snapshot, idle: IdleGate | None = None,
                 th: Thresholds = THRESHOLDS) -> Verdict:
    """Host-wide flags from the snapshots taken before and after the whole matrix."""
    return judge(HOST_CHECKS, HostEvidence(before, after, idle), th)


def cell_verdict(cell: CellEvidence, *, threads: int = 1, measurements: Iterable[Measurement] = (),
                 nominal_seconds: float | None = None, host_before: Snapshot | None = None,
                 pinned_cpu: int | None = None, th: Thresholds = THRESHOLDS) -> Verdict:
    """Flags for one cell from its evidence (read_cell) and the measurements its log gave (see CellContext)."""
    return judge(CELL_CHECKS, CellContext(cell, threads, tuple(measurements), nominal_seconds, host_before,
                                          pinned_cpu), th)


def apply_flags(measurements: Iterable[Measurement], flags: Iterable[str]) -> None:
    """Add flags to measurements, once each, in the order of ALL_FLAGS."""
    wanted = set(flags)
    for m in measurements:
        merged = set(m.flags) | wanted
        m.flags = [f for f in ALL_FLAGS if f in merged] + sorted(merged - set(ALL_FLAGS))


# Kernel driver names that mean plain C code; anything else (aes-ce, sha256-neon, aesni, safexcel,
# mtk-...) is CPU instructions or a crypto engine the kernel prefers.
_GENERIC_DRIVER = re.compile(r"generic|-lib$|fixed-time|^(cbc|ecb|ctr|gcm|hmac)\(")


@dataclass(frozen=True)
class CryptoEvidence:
    """What the host offers besides plain C, as HostResult.conditions["crypto"] stores it."""

    kernel_drivers: dict[str, str | None]  # the kernel's preferred driver per algorithm (highest priority)
    kernel_accelerated: list[str]  # the algorithms whose preferred driver is not generic C
    openssl_engines: list[str]  # available engines
    openssl_providers: list[str]  # active providers

    def to_dict(self) -> dict[str, object]:
        return {"kernel_drivers": dict(self.kernel_drivers), "kernel_accelerated": list(self.kernel_accelerated),
                "openssl_engines": list(self.openssl_engines), "openssl_providers": list(self.openssl_providers)}


def crypto_evidence(snapshot: Snapshot) -> CryptoEvidence:
    """The kernel's preferred driver per algorithm, whether any is not generic, and the OpenSSL engines/providers
    that are available."""
    best = kernel_preferred(snapshot)
    drivers = {name: e.driver for name, e in sorted(best.items())}
    accelerated = sorted(name for name, drv in drivers.items() if drv and not _GENERIC_DRIVER.search(drv))
    plugins = snapshot.openssl
    return CryptoEvidence(
        drivers, accelerated,
        [e.id for e in (plugins.engines if plugins else None) or [] if e.available],
        [p.id for p in (plugins.providers if plugins else None) or [] if (p.status or "active") == "active"])


def kernel_preferred(snapshot: Snapshot) -> dict[str, CryptoDriver]:
    """The /proc/crypto entry of the highest priority per algorithm name."""
    best: dict[str, CryptoDriver] = {}
    for entry in snapshot.crypto or []:
        prio = entry.priority or 0
        if entry.name not in best or prio > (best[entry.name].priority or 0):
            best[entry.name] = entry
    return best


# --- HostResult.conditions as the run stores it ---------------------------------------------------


@dataclass(frozen=True)
class StoredConditions:
    """What readers of a stored run use of `HostResult.conditions`: the snapshots and gate as records, and the
    clocks the judges measured (the verdicts' facts)."""

    before: Snapshot | None = None
    after: Snapshot | None = None
    idle: IdleGate | None = None
    cell_clocks_khz: list[Number] = field(default_factory=list)  # each cell's time_in_state clock per policy
    top_clocks_khz: list[int] = field(default_factory=list)  # the host's policies' top clocks

    @classmethod
    def from_dict(cls, data: object) -> StoredConditions:
        raw = as_dict(data)
        cells = as_dict(raw.get("cells"))
        clocks = [as_number(khz) for verdict in cells.values()
                  for khz in as_dict(as_dict(as_dict(verdict).get("facts")).get("clock_khz")).values()]
        host_clocks = as_dict(as_dict(as_dict(raw.get("verdict")).get("facts")).get("clocks"))
        tops = [as_int(as_dict(c).get("top_khz")) for c in host_clocks.values()]
        return cls(
            Snapshot.from_dict(raw["before"]) if isinstance(raw.get("before"), dict) else None,
            Snapshot.from_dict(raw["after"]) if isinstance(raw.get("after"), dict) else None,
            IdleGate.from_dict(raw["idle"]) if isinstance(raw.get("idle"), dict) else None,
            [c for c in clocks if c is not None], [t for t in tops if t])


# --- glue for the run: texts in, flags on the records ---------------------------------------------

def nominal_seconds(openssl_args: list[str], pubkey: bool = False) -> float:
    """The seconds each timed run of a planned cell (matrix.CellPlan.args) asked for: `-seconds N`, else openssl's
    defaults. What a whole stored run asked for is cells.requested_seconds."""
    if "-seconds" in openssl_args:
        at = openssl_args.index("-seconds")
        try:
            return float(openssl_args[at + 1])
        except (IndexError, ValueError):
            pass
    return float(FIXED_PUBKEY_SECONDS if pubkey else FIXED_SECONDS)


def flag_cell(measurements: list[Measurement], evidence_text: str, *, threads: int = 1,
              nominal: float | None = None, host_before: Snapshot | None = None,
              pinned_cpu: int | None = None, th: Thresholds = THRESHOLDS) -> Verdict:
    """Judge one cell from the evidence conditions.sh appended to its log; flag its measurements.
    A cell whose command was `taskset -c N ...` is checked for pinning to N unless `pinned_cpu` says."""
    cell = read_cell(evidence_text)
    if pinned_cpu is None:  # the run script pins single-thread cells on big.LITTLE hosts (pin-target)
        pinned_cpu = pinned_cpu_of((cell.run.command if cell.run else None) or "")
    verdict = cell_verdict(cell, threads=threads, measurements=measurements,
                           nominal_seconds=nominal, host_before=host_before, pinned_cpu=pinned_cpu, th=th)
    apply_flags([m for m in measurements if m.status == OK], verdict.flags)
    return verdict


def flag_host(result: HostResult, before_text: str = "", after_text: str = "", idle_text: str = "",
              th: Thresholds = THRESHOLDS) -> Verdict:
    """Host-wide flags and the evidence behind them, stored on a HostResult (flags, conditions)."""
    before, after, idle = read_snapshot(before_text), read_snapshot(after_text), read_idle(idle_text)
    verdict = host_verdict(before or Snapshot(), after or Snapshot(), idle, th)
    conditions = result.conditions
    for key, record in (("before", before), ("after", after), ("idle", idle)):
        if record is not None:
            conditions[key] = record.to_dict()
    if before is not None:
        conditions["clusters"] = [c.to_dict() for c in detect_clusters(before, result.cpu)]
        conditions["crypto"] = crypto_evidence(before).to_dict()
    conditions["verdict"] = verdict.to_dict()
    for flag in verdict.flags:
        if flag not in result.flags:
            result.flags.append(flag)
    return verdict


def measured_mhz(conditions: Mapping[str, object]) -> float | None:
    """The clock the benchmark really ran at, for per-MHz figures (None when the host has no cpufreq).

    The median over cells of the time_in_state clock of the policy each cell ran on; without cell
    evidence, the highest top clock of the host's policies (what a busy core would run at).
    """
    stored = StoredConditions.from_dict(conditions)
    if stored.cell_clocks_khz:
        return round(median(stored.cell_clocks_khz) / 1000, 1)
    tops = stored.top_clocks_khz
    return round(max(tops) / 1000, 1) if tops else None
