"""A store as a user has it after a few months: five boards, firmware upgrades, a big.LITTLE board whose
single-thread cells are pinned per cluster, a board that went unreachable, imported logs; and a router measured
every night for most of a year. For the golden files of tables, `report` and `history` (tests/golden/).

Figures are of the order real boards give (openssl speed -evp, MB/s at 16 KiB blocks on one core), so the tables
look as users see them; smaller blocks get the usual share of it (SHAPE).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator import store
from orchestrator.model import CpuFacts, HostResult, Measurement, OpenSSLBuild, OsFacts, Run

BLOCKS = (16, 64, 256, 1024, 8192, 16384)
SHAPE = {16: 0.31, 64: 0.57, 256: 0.82, 1024: 0.94, 8192: 0.99, 16384: 1.0}  # share of the 16-KiB figure


@dataclass
class Board:
    name: str
    cpu: CpuFacts
    os: OsFacts
    openssl: str
    mbytes: dict[tuple[str, str], float]  # (algorithm, api) -> MB/s at 16 KiB, one core
    pk: dict[tuple[str, str], float]  # (algorithm, operation) -> ops/s, one core
    clusters: dict[str, float] = field(default_factory=dict)  # pinned cluster -> share of the best core
    multi: tuple[str, ...] = ("aes-256-gcm", "chacha20-poly1305")  # also measured with -multi N
    mhz: dict[str, int] = field(default_factory=dict)  # cpufreq policy -> kHz measured during the cells
    unsupported: dict[str, str] = field(default_factory=dict)  # algorithm -> reason


def cpu(model: str, arch: str, cores: int, crypto: list[str], names: list[str] | None = None) -> CpuFacts:
    return CpuFacts(model=model, arch=arch, logical_cpus=cores, crypto=crypto, cores=names or [])


APU2 = Board(
    "apu2", cpu("AMD GX-412TC SOC", "x86", 4, ["aes", "pclmulqdq"]),
    OsFacts("debian", "Debian GNU/Linux 12 (bookworm)", "12", kernel="6.1.0-28-amd64", machine="x86_64"), "3.0.15",
    {("aes-256-gcm", "evp"): 212.4, ("chacha20-poly1305", "evp"): 189.7, ("aes-128-cbc", "evp"): 421.3,
     ("aes-128-cbc", "legacy"): 417.9, ("sha256", "evp"): 151.2},
    {("rsa2048", "sign"): 221.4, ("rsa2048", "verify"): 8113.0, ("ecdsap256", "sign"): 5102.6,
     ("ecdsap256", "verify"): 1698.2, ("x25519", "op"): 4410.0},
    mhz={"policy0": 1000000})
PI4 = Board(
    "pi4", cpu("Cortex-A72", "arm", 4, []),
    OsFacts("raspbian", "Raspbian GNU/Linux 11 (bullseye)", "11", kernel="6.1.21-v8+", machine="aarch64"), "1.1.1w",
    {("aes-256-gcm", "evp"): 41.8, ("chacha20-poly1305", "evp"): 201.5, ("aes-128-cbc", "evp"): 81.2,
     ("aes-128-cbc", "legacy"): 77.9, ("sha256", "evp"): 139.6},
    {("rsa2048", "sign"): 318.9, ("rsa2048", "verify"): 11920.0, ("ecdsap256", "sign"): 5630.1,
     ("ecdsap256", "verify"): 1903.4, ("x25519", "op"): 3791.0},
    mhz={"policy0": 1500000})
ROCK5B = Board(
    "rock5b", cpu("Cortex-A76", "arm", 8, ["aes", "pmull", "sha1", "sha2"], ["Cortex-A55"] * 4 + ["Cortex-A76"] * 4),
    OsFacts("armbian", "Armbian 24.5.1 bookworm", "24.5.1", kernel="6.1.43-vendor-rk35xx", machine="aarch64"),
    "3.0.13",
    {("aes-256-gcm", "evp"): 1652.0, ("chacha20-poly1305", "evp"): 823.4, ("aes-128-cbc", "evp"): 1398.7,
     ("aes-128-cbc", "legacy"): 1391.2, ("sha256", "evp"): 1702.5},
    {("rsa2048", "sign"): 1489.3, ("rsa2048", "verify"): 53120.0, ("ecdsap256", "sign"): 36210.8,
     ("ecdsap256", "verify"): 11830.6, ("x25519", "op"): 21430.0},
    clusters={"Cortex-A76": 1.0, "Cortex-A55": 0.34}, mhz={"policy4": 2352000})
WRT3200 = Board(
    "wrt3200", cpu("ARMv7 Processor rev 1 (v7l)", "arm", 2, []),
    OsFacts("openwrt", "OpenWrt", "22.03.5", "r20134-5f15225c1e", kernel="5.10.176", machine="armv7l"), "1.1.1t",
    {("aes-256-gcm", "evp"): 27.9, ("chacha20-poly1305", "evp"): 94.6, ("aes-128-cbc", "evp"): 55.1,
     ("aes-128-cbc", "legacy"): 48.3, ("sha256", "evp"): 57.8},
    {("rsa2048", "sign"): 94.7, ("rsa2048", "verify"): 3296.0, ("ecdsap256", "sign"): 1893.0,
     ("ecdsap256", "verify"): 641.2, ("x25519", "op"): 1449.0},
    mhz={"policy0": 1600000})
R7000 = Board(
    "r7000", cpu("ARMv7 Processor rev 0 (v7l)", "arm", 2, []),
    OsFacts("ddwrt", "DD-WRT", "v3.0-r52189", kernel="4.4.302-st3", machine="armv7l"), "1.0.2u",
    {("aes-256-gcm", "evp"): 15.2, ("aes-128-cbc", "evp"): 29.8, ("aes-128-cbc", "legacy"): 29.1,
     ("sha256", "evp"): 33.4},
    {("rsa2048", "sign"): 54.9, ("rsa2048", "verify"): 1962.0, ("ecdsap256", "sign"): 1010.3,
     ("ecdsap256", "verify"): 395.8},
    multi=("aes-256-gcm",), unsupported={"chacha20-poly1305": "chacha20-poly1305 is not in OpenSSL 1.0.2u"})


def measure(board: Board, *, scale: float = 1.0, repeats: int = 1, flags: tuple[str, ...] = ()) -> HostResult:
    """A host's result as `sslbench run` stores it: every cell, one measurement per repeat."""
    cores = board.cpu.logical_cpus or 1
    clusters = board.clusters or {None: 1.0}
    out: list[Measurement] = []
    for r in range(repeats):
        jitter = 1 + 0.004 * ((r * 7) % 5 - 2)  # -0.8 % ... +0.8 %, a few per mille as real repeats
        for (algorithm, api), mbytes in board.mbytes.items():
            for block in BLOCKS:
                figure = mbytes * 1e6 * SHAPE[block] * scale * jitter
                for cluster, share in clusters.items():
                    out.append(Measurement(algorithm, block, round(figure * share, 1), api=api, threads=1,
                                           openssl_version=board.openssl, repeat=r, cpu=cluster))
                if algorithm in board.multi:
                    out.append(Measurement(algorithm, block, round(figure * cores * 0.93, 1), api=api, threads=cores,
                                           openssl_version=board.openssl, repeat=r))
        for (algorithm, operation), ops in board.pk.items():
            for cluster, share in clusters.items():
                out.append(Measurement(algorithm, operation=operation, ops_per_second=round(ops * share * scale * jitter, 1),
                                       openssl_version=board.openssl, repeat=r, cpu=cluster))
    for algorithm, reason in board.unsupported.items():  # as matrix.py plans them: every size and thread count
        out += [Measurement(algorithm, block, api="evp", threads=threads, status="unsupported", reason=reason,
                            openssl_version=board.openssl) for threads in (1, cores) for block in BLOCKS]
    conditions = {"cells": {f"cell{i}": {"facts": {"clock_khz": {policy: khz}}}
                            for i, (policy, khz) in enumerate(board.mhz.items())}} if board.mhz else {}
    return HostResult(board.name, cpu=board.cpu, os=board.os, openssl=OpenSSLBuild(version=board.openssl),
                      measurements=out, flags=list(flags), conditions=conditions)


def upgraded(board: Board, os: OsFacts, openssl: str) -> Board:
    return Board(board.name, board.cpu, os, openssl, board.mbytes, board.pk, board.clusters, board.multi, board.mhz,
                 board.unsupported)


PI4_12 = upgraded(PI4, OsFacts("raspbian", "Raspbian GNU/Linux 12 (bookworm)", "12", kernel="6.6.51+rpt-rpi-v8",
                               machine="aarch64"), "3.0.15")
WRT3200_23 = upgraded(WRT3200, OsFacts("openwrt", "OpenWrt", "23.05.3", "r23809-234f1a2efa", kernel="5.15.150",
                                       machine="armv7l"), "3.0.13")

RUN_JAN = "20260105T090000.000000Z-a1f3"
RUN_MAR = "20260302T101500.000000Z-b7e2"
RUN_NEW = "20260310T184200.000000Z-c4d9"
RUN_PI = "20260311T070000.000000Z-d2a8"


def fleet_runs() -> list[Run]:
    """Oldest first: January (three boards, the pi4 throttled), March after the upgrades (the DD-WRT router
    unreachable since), two new boards, the pi4 again with a heatsink and 4 repeats."""
    unreachable = HostResult("r7000", status="unreachable",
                             reason="detect: ssh: connect to host 192.168.1.1 port 22: No route to host")
    return [
        Run(RUN_JAN, "2026-01-05T09:00:00+00:00", hosts=[
            measure(WRT3200), measure(PI4, scale=0.9, flags=("throttled",)), measure(R7000)]),
        Run(RUN_MAR, "2026-03-02T10:15:00+00:00", hosts=[
            measure(WRT3200_23, scale=1.06), measure(PI4_12, scale=1.02), unreachable]),
        Run(RUN_NEW, "2026-03-10T18:42:00+00:00", hosts=[measure(ROCK5B), measure(APU2, repeats=3)]),
        Run(RUN_PI, "2026-03-11T07:00:00+00:00", hosts=[measure(PI4_12, scale=1.03, repeats=4)]),
    ]


def save(runs: list[Run], results: Path) -> Path:
    for run in sorted(runs, key=lambda r: r.created):  # written as they were made: the journal keeps that order
        store.save_run(store.new_run_dir(results, run.run_id), run)
    return results


def nightly_runs(count: int = 250) -> list[Run]:
    """A router measured every night from 2025-03-01: OpenWrt 22.03.5, then 23.05.2, then 23.05.3 (imported
    logs of the first nights carry the user's own firmware label)."""
    start = dt.datetime(2025, 3, 1, 2, 30, tzinfo=dt.timezone.utc)
    firmwares = [(OsFacts("openwrt", "OpenWrt", "22.03.5", "r20134-5f15225c1e", kernel="5.10.176"), "1.1.1t"),
                 (OsFacts("openwrt", "OpenWrt", "23.05.2", "r23630-842932a63d", kernel="5.15.137"), "3.0.12"),
                 (OsFacts("openwrt", "OpenWrt", "23.05.3", "r23809-234f1a2efa", kernel="5.15.150"), "3.0.13")]
    runs = []
    for night in range(count):
        when = start + dt.timedelta(days=night)
        os, openssl = firmwares[0 if night < 100 else 1 if night < 220 else 2]
        result = HostResult("router", os=os, openssl=OpenSSLBuild(version=openssl), measurements=[
            Measurement("aes-256-gcm", 1024, 26.1e6 + 1e4 * (night % 7), api="evp", openssl_version=openssl)])
        if night < 3:
            result.firmware = "stock 21.02 (imported)"
        run_id = when.strftime("%Y%m%dT%H%M%S.000000Z-") + f"{night:04x}"
        runs.append(Run(run_id, when.isoformat(), hosts=[result], source="import" if night < 3 else "run"))
    return runs
