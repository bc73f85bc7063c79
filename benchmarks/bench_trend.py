"""Targets (issue 16): on a store of >= 500 runs of >= 20 hosts over >= 5 firmware versions with planted steps and
drifts, `sslbench trend` names every planted step and drift and no others, and finishes in < 5 s; `sslbench publish`
of the whole store in < 30 s.

Writes the store with benchmarks/fleet_history.py (500 nightly runs of 20 hosts, 6 firmware versions, 16 cells, 3
samples per cell and run: 480,000 measurements), then runs the real commands as fresh processes, as users do:
`python -m orchestrator trend HOST --results DIR --format F` (interpreter start, imports, loading all 500 run.json
files, the trend, the output) and `python -m orchestrator publish DIR -o SITE`. Prints the wall times (median of
--runs) and their ratios to the targets (< 1.0 meets it), and what trend named against what was planted. Never asserts.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import fleet_history  # noqa: E402
from orchestrator import store  # noqa: E402

TREND_TARGET, PUBLISH_TARGET = 5.0, 30.0
FORMATS = ("table", "markdown", "csv", "json", "junit")


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="repetitions of each timing (median printed)")
    parser.add_argument("--nights", type=int, default=500)
    parser.add_argument("--hosts", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-trend-"))
    try:
        results = work / "results"
        start = time.perf_counter()
        truth = fleet_history.generate(results, runs=args.nights, hosts=args.hosts)
        size = sum(p.stat().st_size for p in results.rglob("run.json"))
        print(f"store: {args.nights} runs of {args.hosts} hosts, {len(fleet_history.FIRMWARES)} firmware versions, "
              f"{len(fleet_history.CELLS)} cells x {fleet_history.REPEATS} samples; {size / 1e6:.0f} MB of run.json; "
              f"written in {time.perf_counter() - start:.1f} s (not timed below)")
        named, planted = fleet_history.found_by_trend(store.load_all(results), truth)
        steps = sum(1 for p in planted if p[0] != "drift")
        print(f"planted: {steps} step cells ({len(truth.steps)} firmware steps), {len(truth.drifts)} drifts; "
              f"trend named {len(named & planted)} of them, missed {len(planted - named)}, "
              f"named {len(named - planted)} others")
        for item in sorted(planted - named):
            print(f"  missed: {item}")
        for item in sorted(named - planted):
            print(f"  other: {item}")
        host = truth.steps[0].host
        python = [sys.executable, "-m", "orchestrator"]
        print(f"\n`sslbench trend {host}` (target < {TREND_TARGET:g} s), median of {args.runs}:")
        for fmt in FORMATS:
            times = [timed(python + ["trend", host, "--results", str(results), "--format", fmt]) for _ in range(args.runs)]
            wall = statistics.median(times)
            print(f"  --format {fmt:8s} {wall:6.2f} s   ratio {wall / TREND_TARGET:.2f}")
        print(f"\n`sslbench publish` of the whole store (target < {PUBLISH_TARGET:g} s), median of {args.runs}:")
        times = []
        for i in range(args.runs):
            site = work / f"site-{i}"
            times.append(timed(python + ["publish", str(results), "-o", str(site)]))
        wall = statistics.median(times)
        pages = len(list((work / "site-0").glob("*.html")))
        images = len(list((work / "site-0").rglob("*.png")))
        print(f"  {pages} pages, {images} PNGs: {wall:6.2f} s   ratio {wall / PUBLISH_TARGET:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
