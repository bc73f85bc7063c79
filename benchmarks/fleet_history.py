"""Months of nightly runs of a fleet, with planted firmware steps and drifts: the ground truth `trend` must find.

`generate(root, runs=500, hosts=20)` writes a store through store.save_run, as `sslbench run --repeat 3 --seconds 1`
leaves it: every sample of every cell (3 per cell and run, so Mann-Whitney has samples), progress-line counts and
seconds, host facts whose firmware identity identity.py derives (OpenWrt release and revision, kernel, OpenSSL
version and build options), the run's matrix. Each run measures the whole fleet. Noise as real boards show it:
a per-run offset of the whole board (its temperature, what else ran) of ~0.6 %, per-sample noise of 0.8-2 %, now and
then a sample slowed 3-15 % by a cron job; ~1.5 % of host-runs are flagged `busy` or `throttled` (and are slower);
every firmware moves every cell by up to ±0.6 % (real, significant with hundreds of samples, below
trend.STEP_MIN_PCT: not a step).

Planted, and returned as the ground truth:
- steps: a firmware makes some cells of some boards 6-25 % slower or faster (an OpenSSL build without asm, a new
  OpenSSL with faster ChaCha20 on ARM, a kernel with mitigations), from that firmware on;
- drifts: within one firmware, a host's runs from some night on are 8-20 % slower for a while (thermal paste, a
  failing power supply, a kernel module loaded), then recover before the next upgrade.

Hosts upgrade in a staggered roll-out: host h takes firmware f a few nights after the first hosts.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator import store
from orchestrator.analysis.cells import Key, label
from orchestrator.model import CpuFacts, HostResult, Measurement, OpenSSLBuild, OsFacts, Run

FIRMWARES = (  # (OpenWrt release, revision, kernel, OpenSSL, build options)
    ("23.05.0", "r23497-6637af95aa", "5.15.134", "3.0.11", "enable-asm"),
    ("23.05.2", "r23630-842932a63d", "5.15.137", "3.0.12", "enable-asm"),
    ("23.05.3", "r23809-234f1a2efa", "5.15.150", "3.0.13", "enable-asm"),
    ("23.05.4", "r24012-d8dd03c46f", "5.15.162", "3.0.14", "no-asm"),
    ("23.05.5", "r24106-10cc5fcd00", "5.15.167", "3.0.15", "enable-asm"),
    ("24.10.0", "r28427-6df0e3d02a", "6.6.73", "3.0.15", "enable-asm"),
)
STARTS = (0, 70, 150, 240, 330, 420)  # the night (of runs=500) the first hosts take each firmware

BOARDS = (  # (name, cpu model, arch, cores, crypto instructions, bytes/s of aes-256-gcm at 16 KiB on one core)
    ("mt7621", "MIPS 1004Kc V2.15", "mips", 4, [], 9e6),
    ("ath79", "MIPS 74Kc V5.0", "mips", 1, [], 6e6),
    ("rk3328", "Cortex-A53", "arm", 4, ["aes", "pmull", "sha1", "sha2"], 6.2e8),
    ("rk3568", "Cortex-A55", "arm", 4, ["aes", "pmull", "sha1", "sha2"], 9.5e8),
    ("x86", "Intel(R) Celeron(R) J4125 CPU @ 2.00GHz", "x86", 4, ["aes"], 2.1e9),
)

# (algorithm, api, threads (0 = all cores), block size or operation, rate relative to aes-256-gcm 16 KiB t1)
CELLS = (
    ("aes-256-gcm", "evp", 1, 1024, 0.85), ("aes-256-gcm", "evp", 1, 16384, 1.0), ("aes-256-gcm", "evp", 0, 16384, 1.0),
    ("chacha20-poly1305", "evp", 1, 1024, 0.9), ("chacha20-poly1305", "evp", 1, 16384, 1.1),
    ("aes-128-cbc", "evp", 1, 16384, 1.3), ("aes-128-cbc", "legacy", 1, 16384, 0.7),
    ("sha256", "evp", 1, 1024, 0.8), ("sha256", "evp", 1, 16384, 0.95),
    ("rsa2048", None, 1, "sign", 1e-5), ("rsa2048", None, 1, "verify", 3e-4),
    ("ecdsap256", None, 1, "sign", 2e-4), ("ecdsap256", None, 1, "verify", 7e-5),
    ("ed25519", None, 1, "sign", 3e-4), ("ed25519", None, 1, "verify", 1e-4),
    ("x25519", None, 1, "op", 1.5e-4),
)
REPEATS = 3
SECONDS = 1


def cells_of(cores: int) -> tuple[tuple, ...]:
    """The cells a board measures: no all-cores cell on a single-core board (`--threads 1,all` runs one there)."""
    return tuple(c for c in CELLS if c[2] != 0 or cores > 1)


@dataclass(frozen=True)
class PlantedStep:
    host: str
    firmware: int  # index into FIRMWARES: the step is from firmware-1 to firmware
    algorithm: str
    factor: float

    def cells(self, cores: int) -> list[Key]:
        return [_key(c, cores) for c in cells_of(cores) if c[0] == self.algorithm]


@dataclass(frozen=True)
class PlantedDrift:
    host: str
    firmware: int
    start: int  # nights after the host took that firmware
    length: int
    factor: float


@dataclass
class Truth:
    hosts: list[str]
    steps: list[PlantedStep]
    drifts: list[PlantedDrift]
    # filled while generating: the first run id of each drift, and the firmware labels' short forms per index
    drift_runs: dict[PlantedDrift, str] = field(default_factory=dict)
    shorts: list[str] = field(default_factory=list)

    def expected_steps(self, cores: dict[str, int]) -> set[tuple[str, str, str, str]]:
        """(host, cell label, old firmware short, new firmware short) of every planted step."""
        return {(s.host, label(key), self.shorts[s.firmware - 1], self.shorts[s.firmware])
                for s in self.steps for key in s.cells(cores[s.host])}


def _key(cell: tuple, cores: int) -> Key:
    algorithm, api, threads, what, _ = cell
    threads = cores if threads == 0 else threads
    if isinstance(what, str):
        return Key(algorithm, api, what, threads, None)
    return Key(algorithm, api, None, threads, what)


def plan(hosts: int, seed: int = 16) -> Truth:
    rng = random.Random(seed)
    names = [f"{BOARDS[h % len(BOARDS)][0]}-{h:02d}" for h in range(hosts)]
    steps: list[PlantedStep] = []
    for firmware in range(1, len(FIRMWARES)):
        for host in rng.sample(names, max(1, hosts // 6)):
            algorithm = rng.choice(sorted({c[0] for c in CELLS}))
            factor = rng.choice((-1, 1)) * rng.uniform(0.06, 0.25)
            steps.append(PlantedStep(host, firmware, algorithm, 1 + factor))
    drifts: list[PlantedDrift] = []
    for host in rng.sample(names, max(1, hosts // 3)):
        firmware = rng.randrange(len(FIRMWARES) - 1)  # not the last: its segment runs to the end
        drifts.append(PlantedDrift(host, firmware, rng.randrange(15, 40), rng.randrange(3, 20),
                                   1 - rng.uniform(0.08, 0.20)))
    return Truth(names, steps, drifts)


def _firmware_of(host_index: int, night: int, runs: int) -> int:
    scale = runs / 500
    stagger = host_index % 6
    return max(f for f, start in enumerate(STARTS) if night >= int(start * scale) + (stagger if f else 0))


def _facts(board: tuple, firmware: int) -> tuple[OsFacts, OpenSSLBuild, CpuFacts]:
    release, revision, kernel, openssl, options = FIRMWARES[firmware]
    name, model, arch, cores, crypto, _ = board
    os_facts = OsFacts("openwrt", "OpenWrt", release, revision, kernel, {"mips": "mips", "arm": "aarch64"}.get(arch, "x86_64"))
    build = OpenSSLBuild(openssl, f"OpenSSL {openssl}", options=f"bn(64,32) {options}", compiler=f"{name}-openwrt-linux-musl-gcc -O2")
    cpu = CpuFacts(model=model, arch=arch, logical_cpus=cores, crypto=list(crypto), cores=[model] * cores)
    return os_facts, build, cpu


def generate(root: Path, runs: int = 500, hosts: int = 20, seed: int = 16) -> Truth:
    """Write the store under root (a results directory); returns what was planted."""
    truth = plan(hosts, seed)
    rng = random.Random(seed + 1)
    start = dt.datetime(2025, 6, 1, 2, 0, tzinfo=dt.timezone.utc)
    steps = {(s.host, s.firmware, s.algorithm): s.factor for s in truth.steps}
    drifts = {d.host: d for d in truth.drifts}
    small = {(f, c[0]): 1 + random.Random(f * 1000 + i).uniform(-0.006, 0.006)
             for f in range(len(FIRMWARES)) for i, c in enumerate(CELLS)}
    took: dict[tuple[str, int], int] = {}  # (host, firmware) -> the night it was taken
    truth.shorts = [f"OpenWrt {release} {revision}" for release, revision, *_ in FIRMWARES]
    for night in range(runs):
        when = start + dt.timedelta(hours=12 * night)
        run_id = when.strftime("%Y%m%dT%H%M%S.000000Z-") + hashlib.sha256(str(night).encode()).hexdigest()[:4]
        results = []
        for h, host in enumerate(truth.hosts):
            board = BOARDS[h % len(BOARDS)]
            cores = board[3]
            firmware = _firmware_of(h, night, runs)
            took.setdefault((host, firmware), night)
            since = night - took[host, firmware]
            os_facts, build, cpu = _facts(board, firmware)
            drift = drifts.get(host)
            drifting = (drift is not None and drift.firmware == firmware
                        and drift.start <= since < drift.start + drift.length)
            if drifting and drift is not None and since == drift.start:
                truth.drift_runs[drift] = run_id
            flags: list[str] = []
            slow = 1.0
            if not drifting and rng.random() < 0.015:
                flags = [rng.choice(("busy", "throttled"))]
                slow = rng.uniform(0.85, 0.97)
            offset = rng.gauss(1.0, 0.006) * slow * (drift.factor if drifting and drift else 1.0)
            measurements = []
            for cell in cells_of(cores):
                algorithm, api, threads, what, relative = cell
                key = _key(cell, cores)
                rate = board[5] * relative * offset * (cores * 0.97 if cell[2] == 0 else 1.0)
                for f in range(1, firmware + 1):
                    rate *= steps.get((host, f, algorithm), 1.0)
                rate *= small[firmware, algorithm]
                noise = 0.008 if isinstance(what, int) and what >= 1024 else 0.015
                for r in range(REPEATS):
                    value = rate * rng.gauss(1.0, noise)
                    if rng.random() < 0.02:
                        value *= rng.uniform(0.85, 0.97)  # a cron job ran during this sample
                    m = Measurement(algorithm, threads=key.threads, api=api, openssl_version=build.version, repeat=r,
                                    seconds=round(rng.uniform(0.99, 1.0), 2) if key.threads == 1 else None)
                    if key.operation:
                        m.operation, m.ops_per_second = key.operation, round(value, 1)
                        m.count = int(value * SECONDS)
                    else:
                        m.block_size = key.block_size
                        m.bytes_per_second = round(value / 10) * 10.0  # openssl prints 1000s of bytes, 2 decimals
                        m.count = int(value * SECONDS / (key.block_size or 1))
                    measurements.append(m)
            results.append(HostResult(host, cpu=cpu, os=os_facts, openssl=build, measurements=measurements,
                                      flags=flags))
        run = Run(run_id, when.replace(microsecond=0).isoformat(), command=["sslbench", "run", "--repeat", "3"],
                  matrix={"seconds": SECONDS, "repeat": REPEATS}, hosts=results)
        store.save_run(store.new_run_dir(root, run_id), run)
    return truth


def found_by_trend(runs: list[Run], truth: Truth) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
    """What `trend` names over the store, and what was planted: (named, planted) as comparable tuples.

    Steps: (host, cell, old firmware, new firmware) of every named step; drifts: ("drift", host, first run id).
    """
    from orchestrator.analysis import trend

    cores = {host: BOARDS[h % len(BOARDS)][3] for h, host in enumerate(truth.hosts)}
    named: set[tuple[str, ...]] = set()
    for host in truth.hosts:
        result = trend.trend(runs, host)
        shorts = {s.letter: s.short for s in result.segments}
        for cell in result.cells:
            for step in cell.steps:
                if step is not None and step.named:
                    named.add((host, label(cell.key), shorts[step.old], shorts[step.new]))
        named.update(("drift", host, d.first_run) for d in result.drifts)
    planted: set[tuple[str, ...]] = set(truth.expected_steps(cores))
    planted.update(("drift", d.host, truth.drift_runs[d]) for d in truth.drifts)
    return named, planted
