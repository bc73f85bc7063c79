"""Does measuring through sslbench change the figures, and what does the orchestration cost?

Interleaves, for the same cells on this machine: `openssl speed -elapsed` run directly (before and after:
the cells' own arguments, wall-clock timing as sslbench runs them), and `sslbench run` (Ansible,
ansible_connection: local).  Prints
  - per cell, the ratio sslbench / direct (target: within +-5 %), and the median ratio;
  - the run's wall time / the sum of the cells' benchmark seconds (target: <= 1.10 x + 5 s). The run uses the
    default idle gate (issue 6): the time it waited for this machine to calm down after the direct runs is
    a deliberate wait, not orchestration, so it is printed and taken out of the ratio; the condition
    snapshots and the per-cell wrapper stay in.
Measured, not asserted: this machine is shared and noisy, so read the numbers.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator import store
from orchestrator.run import matrix
from orchestrator.model import OK  # noqa: E402
from orchestrator.parse.speed import parse_speed  # noqa: E402

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
ALGORITHMS = "aes-128-gcm,aes-256-cbc,chacha20-poly1305,sha256"
SIZES = "16,1024,16384"
SECONDS = 3
ROUNDS = 2


def planned_cells() -> list[matrix.CellPlan]:
    version = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout
    request = matrix.parse_request(ALGORITHMS, SIZES, "1", "evp", SECONDS)
    return matrix.plan_host("localhost", request, openssl_version=version, logical_cpus=1).cells


def direct(cells: list[matrix.CellPlan]) -> dict[tuple, float]:
    figures = {}
    for cell in cells:
        out = subprocess.run(["openssl", *cell.args], capture_output=True, text=True).stdout
        for m in parse_speed(out, threads=cell.threads, api=cell.api, algorithm=cell.algorithm).measurements:
            figures[(m.algorithm, m.block_size)] = m.bytes_per_second
    return figures


def through_sslbench(results: Path) -> tuple[dict[tuple, float], float]:
    start = time.monotonic()
    proc = subprocess.run([SSLBENCH, "run", "--algorithms", ALGORITHMS, "--sizes", SIZES, "--threads", "1",
                           "--api", "evp", "--seconds", str(SECONDS), "--results", str(results)],
                          capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"sslbench run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    run = store.load_run(store.list_runs(results)[-1])
    figures = {(m.algorithm, m.block_size): m.bytes_per_second
               for m in run.hosts[0].measurements if m.status == OK}
    idle_waited = float((run.hosts[0].conditions.get("idle") or {}).get("waited") or 0)
    return figures, wall, idle_waited


def main() -> None:
    cells = planned_cells()
    cell_seconds = sum(c.seconds for c in cells)
    ratios: dict[tuple, list[float]] = {}
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(ROUNDS):
            before = direct(cells)
            ours, wall, idle_waited = through_sslbench(Path(tmp) / f"r{round_}")
            after = direct(cells)
            walls.append((wall, idle_waited))
            for key, value in ours.items():
                reference = statistics.mean(v for v in (before.get(key), after.get(key)) if v)
                ratios.setdefault(key, []).append(value / reference)
    print(f"cells: {len(cells)} x {SECONDS} s per size, {cell_seconds:.0f} s of benchmark per run, {ROUNDS} rounds")
    print(f"{'algorithm':<20} {'size':>6}  sslbench/direct")
    for (algorithm, size), values in sorted(ratios.items()):
        print(f"{algorithm:<20} {size:>6}  " + "  ".join(f"{v:.3f}" for v in values))
    all_ratios = [v for values in ratios.values() for v in values]
    median = statistics.median(all_ratios)
    worst = max(all_ratios, key=lambda v: abs(v - 1))
    print(f"figures: median ratio {median:.3f} ({(median - 1) * 100:+.1f} %), worst {worst:.3f} "
          f"(target: within +-5 %)")
    for wall, idle_waited in walls:
        limit = cell_seconds * 1.10 + 5
        work = wall - idle_waited
        print(f"wall time: {wall:.1f} s, of which the idle gate waited {idle_waited:.0f} s; the rest {work:.1f} s "
              f"for {cell_seconds:.0f} s of cells: ratio {work / cell_seconds:.3f}, overhead "
              f"{work - cell_seconds:.1f} s (target: <= {limit:.1f} s, i.e. 10 % + 5 s)")


if __name__ == "__main__":
    main()
