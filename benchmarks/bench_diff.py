"""Target: `sslbench diff` of two stores of 1,000 hosts x 50 cells each in under 5 s on this machine.

Generates two runs, first with one sample per cell, then with 5 samples per cell (as `sslbench run --repeat 5`
stores them, so every cell gets a Mann-Whitney verdict), and times what the command does: load both run.json
files, diff, render.
Prints the measured seconds and the ratio to the target (< 1.0 meets it). Never asserts.
"""
from __future__ import annotations

import io
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator import cli, stats, store  # noqa: E402
from orchestrator.model import HostResult, Measurement, Run  # noqa: E402

HOSTS = 1000
REPEATS = (1, 5)  # the target as stated (one sample per cell), then with `--repeat 5` samples for the U test
TARGET_SECONDS = 5.0
# 50 cells per host: 2 AEADs x 2 thread counts x 6 blocks (24), sha256 + aes-128-cbc evp/legacy x 6 blocks (18),
# rsa2048/ecdsap256 sign/verify x 2 thread counts (8).
BLOCKS = (16, 64, 256, 1024, 8192, 16384)


def cells() -> list[dict]:
    out = [dict(algorithm=a, api="evp", threads=t, block_size=b)
           for a in ("aes-256-gcm", "chacha20-poly1305") for t in (1, 4) for b in BLOCKS]
    out += [dict(algorithm=a, api=api, threads=1, block_size=b)
            for a, api in (("sha256", None), ("aes-128-cbc", "evp"), ("aes-128-cbc", "legacy")) for b in BLOCKS]
    out += [dict(algorithm=a, operation=op, threads=t)
            for a in ("rsa2048", "ecdsap256") for op in ("sign", "verify") for t in (1, 4)]
    return out


CELLS = cells()
assert len(CELLS) == 50, len(CELLS)


def make_run(run_id: str, created: str, change: float, rng: random.Random, repeats: int) -> Run:
    hosts = []
    for h in range(HOSTS):
        base = random.Random(h).uniform(1e6, 1e9)  # the same box in both runs
        ms = []
        for c in CELLS:
            shift = change if rng.random() < 0.3 else 1.0  # a third of the cells really change
            for r in range(repeats):
                value = base * shift * rng.gauss(1.0, 0.02)
                if "operation" in c:
                    ms.append(Measurement(c["algorithm"], operation=c["operation"], ops_per_second=value / 1e4,
                                          threads=c["threads"], repeat=r, seconds=rng.uniform(2.5, 3.0)))
                else:
                    ms.append(Measurement(c["algorithm"], c["block_size"], value, threads=c["threads"],
                                          api=c["api"], repeat=r, seconds=rng.uniform(2.5, 3.0)))
        hosts.append(HostResult(f"host-{h:04d}", measurements=ms))
    return Run(run_id=run_id, created=created, hosts=hosts, matrix={"seconds": 3, "repeat": repeats})


def main() -> int:
    for repeats in REPEATS:
        measure(repeats)
    return 0


def measure(repeats: int) -> None:
    rng = random.Random(42)
    print(f"== {HOSTS} hosts x {len(CELLS)} cells, {repeats} sample(s) per cell")
    stats.mann_whitney_p([1.0, 2.0], [3.0, 4.0])  # import scipy outside the timing
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        for run_id, created, change in (("20260101T000000Z-0old", "2026-01-01T00:00:00+00:00", 1.0),
                                        ("20260201T000000Z-0new", "2026-02-01T00:00:00+00:00", 0.9)):
            store.save_run(store.new_run_dir(tmp, run_id), make_run(run_id, created, change, rng, repeats))
        size = sum(p.stat().st_size for p in Path(tmp).glob("*/run.json")) / 1e6
        print(f"generated the two stores ({size:.0f} MB of run.json) in {time.perf_counter() - started:.1f} s")

        for fmt in ("json", "table"):
            wall, cpu, code, size = run_command(["diff", "20260101T000000Z-0old", "latest", "--results", tmp,
                                                 "--format", fmt])
            print(f"sslbench diff OLD latest --format {fmt}: {wall:.2f} s wall, {cpu:.2f} s CPU "
                  f"(exit {code}, {size // 1024} KiB out); ratio to the {TARGET_SECONDS:.0f} s target: "
                  f"{wall / TARGET_SECONDS:.2f} wall, {cpu / TARGET_SECONDS:.2f} CPU")


def run_command(argv: list[str]) -> tuple[float, float, int, int]:
    """Run the CLI in this process (scipy already imported: a fresh interpreter adds ~1 s of imports)."""
    sink = io.StringIO()
    wall, cpu = time.perf_counter(), time.process_time()
    stdout, sys.stdout = sys.stdout, sink
    try:
        code = cli.main(argv)
    finally:
        sys.stdout = stdout
    return time.perf_counter() - wall, time.process_time() - cpu, code, len(sink.getvalue())


if __name__ == "__main__":
    raise SystemExit(main())
