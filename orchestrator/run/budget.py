"""`--budget 10m`: shrink the matrix a host runs until its planned time fits, and say what went.

Pure.  The planner is passed in (normally `matrix.plan_host` for one host), so the planned
seconds always come from the same place as the ETA: a request in, an object with `.cells`
(each with `.seconds`) out.  The request is a `matrix.MatrixRequest` (fields algorithms, sizes,
threads, apis, seconds, repeat); every step makes a smaller copy and keeps it only when the
plan really got shorter (a host without -seconds does not get faster by asking for 1 s).

Order of what goes first (the least information lost per second saved comes first):
  1. sizes down to the key ones: 16 (small packets), 1024 (a VPN packet), the largest (peak);
     the curve between them is smooth.
  2. the legacy API (EVP is what TLS and VPNs use; legacy is only the "is EVP faster" question).
  3. -seconds down one at a time (default, 3, 2, 1) where the host has it (more noise, every cell still there).
  4. repeats, one at a time down to 1 (the verdict gets weaker: diff needs 4 per side).
  5. sizes down to 1024 alone.
  6. algorithms, least asked-about first (ALGORITHM_DROP_ORDER); the last one always stays.
  7. the single-thread cells when an all-core run stays (or the reverse when only one is left).
If even the smallest plan does not fit, the result says so and how long it takes.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from orchestrator.errors import UserError
from orchestrator.units import format_eta

# Least asked-about first: these go first when algorithms must be dropped.  Names not listed
# (chosen by the user with --algorithms) go after these, last-named first.
ALGORITHM_DROP_ORDER = (
    "md5", "sha1", "rsa4096", "ecdhp256", "sha512", "ed25519", "ecdsap256", "aes-256-cbc",
    "rsa2048", "aes-128-cbc", "sha256", "aes-256-gcm", "chacha20-poly1305", "aes-128-gcm",
)
KEY_SIZES = (16, 1024)  # plus the largest size the host has
SINGLE_SIZE = 1024
DEFAULT_SECONDS_STEP = 3  # the first -seconds tried when shortening openssl's defaults (3 s / 10 s public-key)
# Per cell, beyond the benchmark seconds: openssl start-up, the evidence snapshots and the marker
# line (measured ~0.1-0.3 s on small boards; qemu-emulated hosts are slower).
CELL_OVERHEAD_SECONDS = 0.5

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?$")


def parse_duration(text: str) -> float:
    """'10m' -> 600, '90s' -> 90, '1h30m' -> 5400, '45' -> 45 seconds."""
    cleaned = (text or "").strip().lower().replace(" ", "")
    match = _DURATION.match(cleaned)
    if not cleaned or not match or not any(match.groups()):
        raise UserError(f"--budget takes a duration like 10m, 90s or 1h30m (got {text!r})")
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise UserError("--budget must be longer than 0 seconds")
    return total


@dataclass
class BudgetPlan:
    request: Any  # the (possibly smaller) MatrixRequest to run
    plan: Any  # what the planner returned for it
    budget_seconds: float
    planned_seconds: float
    fits: bool
    dropped: list[str] = field(default_factory=list)  # what was given up, in the order it went

    @property
    def message(self) -> str:
        if not self.dropped and self.fits:
            return f"plan fits the budget ({format_eta(self.planned_seconds)} of {format_eta(self.budget_seconds)})"
        head = (f"to fit {format_eta(self.budget_seconds)}" if self.fits
                else f"cannot fit {format_eta(self.budget_seconds)}: the smallest plan takes "
                     f"{format_eta(self.planned_seconds)}; raise --budget")
        return f"{head}; dropped: {'; '.join(self.dropped) or 'nothing'}"

    def to_dict(self) -> dict[str, Any]:
        return {"budget_seconds": self.budget_seconds, "planned_seconds": self.planned_seconds,
                "fits": self.fits, "dropped": list(self.dropped), "message": self.message}


def planned_seconds(plan: Any, cell_overhead: float = CELL_OVERHEAD_SECONDS, fixed: float = 0.0) -> float:
    """Benchmark seconds of every cell, plus the per-cell and fixed (idle gate, snapshots) overheads, plus the
    tunnels measured after the cells (each its own estimate: setup, iperf3's tests and their margins)."""
    tunnels = sum(t.eta_seconds for t in getattr(plan, "tunnels", ()))
    return float(sum(c.seconds for c in plan.cells) + cell_overhead * len(plan.cells) + fixed + tunnels)


def fit_budget(request: Any, planner: Callable[[Any], Any], budget_seconds: float, *,
               cell_overhead: float = CELL_OVERHEAD_SECONDS, fixed_seconds: float = 0.0) -> BudgetPlan:
    """The largest request (in the order above) whose plan fits `budget_seconds`."""
    plan = planner(request)
    cost = planned_seconds(plan, cell_overhead, fixed_seconds)
    dropped: list[str] = []
    for step in _STEPS:
        while cost > budget_seconds:
            change = step(request, plan)
            if change is None:
                break
            smaller, what = change
            smaller_plan = planner(smaller)
            smaller_cost = planned_seconds(smaller_plan, cell_overhead, fixed_seconds)
            if smaller_cost >= cost:
                break  # no saving on this host: keep what the user asked for
            dropped.append(f"{what} (saves {format_eta(cost - smaller_cost)})")
            request, plan, cost = smaller, smaller_plan, smaller_cost
        if cost <= budget_seconds:
            break
    return BudgetPlan(request=request, plan=plan, budget_seconds=budget_seconds, planned_seconds=cost,
                      fits=cost <= budget_seconds, dropped=dropped)


def _host_sizes(plan: Any) -> list[int]:
    sizes = {s for c in plan.cells for s in (c.sizes or ())}
    return sorted(sizes)


def _step_key_sizes(request: Any, plan: Any) -> tuple[Any, str] | None:
    have = _host_sizes(plan)
    if not have:
        return None
    keep = sorted({s for s in KEY_SIZES if s in have} | {have[-1]})
    if len(keep) >= len(have):
        return None
    gone = [s for s in have if s not in keep]
    return (dataclasses.replace(request, sizes=tuple(keep)),
            f"sizes {','.join(map(str, gone))} (kept {','.join(map(str, keep))})")


def _step_legacy(request: Any, _plan: Any) -> tuple[Any, str] | None:
    if "legacy" not in request.apis or len(request.apis) < 2:
        return None
    return dataclasses.replace(request, apis=tuple(a for a in request.apis if a != "legacy")), "legacy API cells"


def _step_seconds(request: Any, _plan: Any) -> tuple[Any, str] | None:
    """Default time (3 s per size, 10 s per public-key operation) -> 3 s -> 2 s -> 1 s, one step at a time."""
    if request.seconds == 1:
        return None
    shorter = DEFAULT_SECONDS_STEP if not request.seconds else min(request.seconds - 1, DEFAULT_SECONDS_STEP)
    was = f"{request.seconds} s" if request.seconds else "default time"
    return dataclasses.replace(request, seconds=shorter), f"-seconds {was} -> {shorter} s"


def _step_repeats(request: Any, _plan: Any) -> tuple[Any, str] | None:
    if request.repeat <= 1:
        return None
    return dataclasses.replace(request, repeat=request.repeat - 1), f"repeat {request.repeat} -> {request.repeat - 1}"


def _step_single_size(request: Any, plan: Any) -> tuple[Any, str] | None:
    have = _host_sizes(plan)
    if len(have) <= 1:
        return None
    keep = SINGLE_SIZE if SINGLE_SIZE in have else have[-1]
    return (dataclasses.replace(request, sizes=(keep,)),
            f"sizes {','.join(str(s) for s in have if s != keep)} (kept {keep})")


def _step_algorithm(request: Any, _plan: Any) -> tuple[Any, str] | None:
    names = list(request.algorithms)
    if len(names) <= 1:
        return None
    ranked = [n for n in ALGORITHM_DROP_ORDER if n in names]
    others = [n for n in reversed(names) if n not in ALGORITHM_DROP_ORDER]
    victim = (ranked + others)[0]
    return dataclasses.replace(request, algorithms=tuple(n for n in names if n != victim)), f"algorithm {victim}"


def _step_threads(request: Any, _plan: Any) -> tuple[Any, str] | None:
    threads = list(request.threads)
    if len(threads) <= 1:
        return None
    victim = "1" if "1" in threads else threads[-1]
    return dataclasses.replace(request, threads=tuple(t for t in threads if t != victim)), f"threads {victim}"


_STEPS = (_step_key_sizes, _step_legacy, _step_seconds, _step_repeats, _step_single_size, _step_algorithm,
          _step_threads)
