"""Target: `sslbench diff` of two stores of 1,000 hosts x 50 cells each in under 5 s on this machine.

Writes two realistic stores (what `sslbench run` stores: progress-line count/seconds, openssl's rounded figures,
host facts, validity flags, unsupported cells, the matrix plan and the log list), first with one sample per cell,
then with 5 per cell (`--repeat 5`, so every cell gets a Mann-Whitney verdict). Then runs the real command,
`python -m orchestrator diff OLD latest --results DIR --format F`, as a fresh process for every output format:
interpreter start, imports, loading both run.json files, the diff and the output all count.
Prints the wall time (median of --runs) and its ratio to the target (< 1.0 meets it). Never asserts.
"""
from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator import store
from orchestrator.model import BUSY, CpuFacts, HostResult, Measurement, OpenSSLBuild, OsFacts, Run  # noqa: E402

HOSTS = 1000
REPEATS = (1, 5)  # the target as stated (one sample per cell), then `--repeat 5` samples for the U test
FORMATS = ("table", "markdown", "csv", "json")
TARGET_SECONDS = 5.0
SECONDS = 3  # `sslbench run --seconds 3`
BLOCKS = (16, 64, 256, 1024, 8192, 16384)
OLD_ID, NEW_ID = "20260101T000000.000000Z-0a0a", "20260201T000000.000000Z-0b0b"

# 50 cells per host, as 11 openssl invocations: (algorithm, api, threads, operations or None for the block sizes).
# 2 AEADs x 2 thread counts x 6 blocks (24), sha256 + aes-128-cbc evp/legacy x 6 blocks (18),
# rsa2048/ecdsap256 sign/verify x 2 thread counts (8).
INVOCATIONS = (
    [(a, "evp", t, None) for a in ("aes-256-gcm", "chacha20-poly1305") for t in (1, 4)]
    + [("sha256", None, 1, None), ("aes-128-cbc", "evp", 1, None), ("aes-128-cbc", "legacy", 1, None)]
    + [(a, None, t, ("sign", "verify")) for a in ("rsa2048", "ecdsap256") for t in (1, 4)]
)
assert sum(len(ops or BLOCKS) for *_, ops in INVOCATIONS) == 50

BOARDS = (  # (cpu model, arch, cores, crypto instructions, os family, os version, openssl)
    ("Cortex-A53", "arm", 4, ["aes", "pmull", "sha1", "sha2"], "openwrt", "23.05.4", "3.0.15"),
    ("Cortex-A72", "arm", 4, ["aes", "pmull", "sha1", "sha2"], "debian", "12", "3.0.15"),
    ("MIPS 24Kc V7.4", "mips", 1, [], "openwrt", "18.06.9", "1.0.2u"),  # no chacha20-poly1305: unsupported
    ("Intel(R) Celeron(R) N5105 @ 2.00GHz", "x86", 4, ["aes", "sha_ni"], "ubuntu", "24.04", "3.0.13"),
)


def make_run(run_id: str, created: str, change: float, rng: random.Random, repeats: int) -> Run:
    hosts, plans = [], {}
    for h in range(HOSTS):
        box = random.Random(h)  # the same box in both runs
        name = f"host-{h:04d}"
        model, arch, cores, crypto, family, version, openssl = BOARDS[h % len(BOARDS)]
        base = box.uniform(2e6, 2e9)  # bytes/s at 16 KiB blocks
        busy_host = rng.random() < 0.03  # validity flagged the whole host (applied to its ok measurements)
        measurements, logs, cells, shifts = [], [], [], {}
        for algorithm, api, threads, operations in INVOCATIONS:
            cell_id = f"{algorithm}-{api or 'pk'}-t{threads}"
            unsupported = algorithm == "chacha20-poly1305" and openssl.startswith("1.0")
            for r in range(repeats):
                cells.append({"id": f"{cell_id}-r{r}", "algorithm": algorithm, "api": api, "threads": threads,
                              "sizes": [] if operations else list(BLOCKS), "seconds": SECONDS, "repeat": r,
                              "args": ["speed", "-seconds", str(SECONDS), *(["-multi", str(threads)] if threads > 1
                                                                            else []), algorithm],
                              "pin": None, "cpu": None})
                logs.append(f"{name}/{cell_id}-r{r}.log")
                for key in operations or BLOCKS:
                    shift = shifts.setdefault((algorithm, api, threads, key),  # the same for every repeat
                                              change if rng.random() < 0.3 else 1.0)  # a third of the cells change
                    m = Measurement(algorithm, threads=threads, api=api, openssl_version=openssl, repeat=r)
                    rate = base * shift * rng.gauss(1.0, 0.02) * (threads if threads > 1 else 1)
                    # openssl's progress line "... N x's in 2.99s" (threads 1 only; -multi children print none)
                    seconds = round(rng.uniform(2.97, 3.0) if rng.random() > 0.01 else rng.uniform(2.2, 2.6), 2)
                    if operations:
                        m.operation = key
                        ops = rate / 1e5 * (8 if key == "verify" else 1)
                        if threads == 1:
                            m.count, m.seconds = int(ops * seconds), seconds
                            ops = m.count / seconds
                        m.ops_per_second = round(ops, 1)  # the table prints sign/s with one decimal
                    else:
                        m.block_size = key
                        bps = rate * (0.3 + 0.7 * key / 16384)
                        if threads == 1:
                            m.count, m.seconds = int(bps * seconds / key), seconds
                            bps = m.count * key / seconds
                        m.bytes_per_second = float(f"{bps / 1000:.2f}e3")  # the table's "12630.54k"
                    if unsupported:
                        m.status, m.reason = "unsupported", f"openssl {openssl} has no {algorithm}"
                        m.bytes_per_second = m.ops_per_second = m.count = m.seconds = None
                    elif busy_host:
                        m.flags = [BUSY]
                    measurements.append(m)
        facts = {"loadavg": [round(box.uniform(0, 0.3), 2)] * 3, "thermal": {"thermal_zone0": 41.5},
                 "time_in_state": {"policy0": {"600000": 1200, "1200000": 93410}}}
        hosts.append(HostResult(
            name, firmware=f"{family} {version}",
            cpu=CpuFacts(model=model, arch=arch, logical_cpus=cores, crypto=list(crypto), cores=[model] * cores,
                         bogomips=round(box.uniform(50, 400), 2)),
            os=OsFacts(family=family, name=f"{family} {version}", version=version, kernel="6.6.73",
                       machine=arch, uname=f"Linux {name} 6.6.73 #0 SMP {arch} GNU/Linux"),
            openssl=OpenSSLBuild(version=openssl, version_line=f"OpenSSL {openssl} 30 Jan 2024",
                                 built_on="reproducible build, date unspecified", options="bn(64,64)",
                                 compiler="gcc -fPIC -pthread -O3", platform=f"linux-{arch}"),
            measurements=measurements, logs=logs, flags=[BUSY] if busy_host else [],
            conditions={"before": facts, "after": facts,
                        "verdict": {"flags": [BUSY] if busy_host else [], "reasons": [], "facts": {}}}))
        plans[name] = {"openssl": openssl, "cells": cells, "eta_seconds": SECONDS * len(cells), "notes": []}
    matrix = {"algorithms": sorted({i[0] for i in INVOCATIONS}), "sizes": list(BLOCKS), "threads": ["1", "all"],
              "apis": ["evp", "legacy"], "seconds": SECONDS, "repeat": repeats, "hosts": plans}
    return Run(run_id=run_id, created=created, hosts=hosts, matrix=matrix,
               command=["sslbench", "run", "-i", "fleet.yml", "--seconds", str(SECONDS), "--repeat", str(repeats)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="times each command is run; the median counts")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="write the stores to DIR/repeat-N and keep them")
    args = parser.parse_args()
    startup = [run_command(["--version"])[0] for _ in range(args.runs)]
    print(f"python -m orchestrator --version (interpreter start + CLI imports): {statistics.median(startup):.2f} s")
    for repeats in REPEATS:
        if args.keep:
            measure(repeats, args.runs, args.keep / f"repeat-{repeats}")
        else:
            with tempfile.TemporaryDirectory() as tmp:
                measure(repeats, args.runs, Path(tmp))
    return 0


def measure(repeats: int, runs: int, tmp: Path) -> None:
    rng = random.Random(42)
    print(f"== {HOSTS} hosts x 50 cells, {repeats} sample(s) per cell")
    started = time.perf_counter()
    for run_id, created, change in ((OLD_ID, "2026-01-01T00:00:00+00:00", 1.0),
                                    (NEW_ID, "2026-02-01T00:00:00+00:00", 0.9)):
        run = make_run(run_id, created, change, rng, repeats)
        saving = time.perf_counter()
        store.save_run(store.new_run_dir(tmp, run_id), run)
        saved = time.perf_counter() - saving
    size = sum(p.stat().st_size for p in tmp.glob("*/run.json")) / 1e6
    print(f"generated the two stores ({size:.0f} MB of run.json) in {time.perf_counter() - started:.1f} s "
          f"(saving one: {saved:.2f} s)")
    for fmt in FORMATS:
        results = [run_command(["diff", OLD_ID, "latest", "--results", str(tmp), "--format", fmt])
                   for _ in range(runs)]
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        out = results[0][2]
        print(f"sslbench diff OLD latest --format {fmt:8}: {wall:5.2f} s wall (runs: "
              f"{', '.join(f'{r[0]:.2f}' for r in results)}), {cpu:5.2f} s CPU, {out // 1024} KiB out; "
              f"ratio to the {TARGET_SECONDS:.0f} s target: {wall / TARGET_SECONDS:.2f}")


def run_command(argv: list[str]) -> tuple[float, float, int]:
    """Wall and CPU seconds of `python -m orchestrator ARGV` in a fresh process, and the bytes it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "orchestrator", *argv], cwd=ROOT, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"sslbench {' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, len(done.stdout)


if __name__ == "__main__":
    raise SystemExit(main())
