"""The answers users want from a run, computed in one place for tables, diff and the reports.

- per-core and all-core throughput (threads 1 vs `-multi N`; per core = all-core / N), in MB/s and Mbit/s;
- the crypto ceiling of a VPN/TLS line rate for given links (Mbit/s), from aes-256-gcm / chacha20-poly1305
  at 1024–16384-byte blocks on one core and on all cores (crypto only: packet handling costs come on top, so it
  never says a host "carries" a link; a measured tunnel does, analysis/tunnel_answers.py);
- whether the CPU has crypto instructions (CpuFacts.crypto) and whether the EVP path uses them (EVP ≫ legacy on
  aes-*-cbc up to OpenSSL 1.1.1; OpenSSL 3.x's CPUINFO capability bits; see evp_check);
- RSA / ECDSA handshakes per second for TLS relays;
- the clock the host ran at (measured from cpufreq time_in_state where it has one) and throughput per core per MHz,
  so boards at different clocks compare fairly.

On big.LITTLE hosts single-thread cells are measured once per cluster (Measurement.cpu); "one core" is the best
cluster's figure, what one flow of a VPN gets when the scheduler puts it on a big core.

Values are medians over repeats; units as in orchestrator.units (MB/s = 10^6 bytes/s, Mbit/s = 10^6 bits/s).

Every answer carries the validity flags (busy, throttled, partial ...) of the cells it rests on: a verdict drawn
from a figure that may be wrong must say so wherever it is shown. Cells are grouped with the read-time busy rule
the tables use (`grouped`: a progress line timed for less than the run asked flags its cell busy).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from orchestrator import stats
from orchestrator.analysis.cells import (CARRIED_FLAGS, Cell, Key, best_core, host_cells, medians as cell_medians,
                                         requested_seconds)
from orchestrator.errors import UserError
from orchestrator.evidence.validity import StoredConditions, busy_below, measured_mhz
from orchestrator.model import LINE_BLOCKS, SPEED, HostResult, Run
from orchestrator.units import mbits

AEADS = ("aes-256-gcm", "chacha20-poly1305")
DEFAULT_LINKS = (100, 1000)  # Mbit/s
EVP_GAIN = 2.0  # EVP at least this many times legacy: the EVP path uses the CPU's AES instructions
AES_CBC = ("aes-128-cbc", "aes-192-cbc", "aes-256-cbc")
API_PREFERENCE = ("evp", None, "legacy")  # the figure to quote when a cell was measured through several APIs


Flags = tuple[str, ...]  # the sorted validity flags of the figures an answer rests on; () when none
FigureFlags = Mapping[Key, Flags]


def medians(result: HostResult) -> dict[Key, float]:
    """Median value of every openssl cell with at least one ok sample; of a cell pinned per cluster, the best
    cluster's."""
    return best_core(cell_medians(host_cells(speed_only(result))))


def speed_only(result: HostResult) -> HostResult:
    """The host with its openssl speed measurements only: a measured tunnel is answered by tunnel_answers, never as
    an openssl cell."""
    if all(m.kind == SPEED for m in result.measurements):
        return result
    return dataclasses.replace(result, measurements=[m for m in result.measurements if m.kind == SPEED])


def grouped(run: Run, result: HostResult) -> dict[Key, Cell]:
    """A host's openssl cells of a run under the read-time busy rule the tables, diff and trend use (busy_below of
    the seconds the run asked for)."""
    return host_cells(speed_only(result), busy_below(requested_seconds(run)))


def figure_flags(cells: Mapping[Key, Cell]) -> dict[Key, Flags]:
    """Per figure of best_core (its key with cpu None), the carried flags of the cell it quotes: on a big.LITTLE
    host the best cluster's, chosen as best_core chooses it."""
    best: dict[Key, tuple[float, Flags]] = {}
    for key, cell in cells.items():
        if not cell.samples:
            continue
        value = stats.median(cell.samples)
        plain = key._replace(cpu=None) if key.cpu is not None else key
        if plain not in best or value > best[plain][0]:
            best[plain] = (value, tuple(sorted(cell.flags & CARRIED_FLAGS)))
    return {key: flags for key, (_, flags) in best.items()}


def union(*flag_sets: Iterable[str]) -> Flags:
    """The flags of several figures together, sorted."""
    return tuple(sorted({flag for flags in flag_sets for flag in flags}))


def flagged(flags: Flags) -> str:
    """What an answer's text adds when its figures are flagged: "" when they are not."""
    return f" [flagged {', '.join(flags)}]" if flags else ""


def clock_mhz(result: HostResult) -> tuple[float | None, str]:
    """(MHz, where it came from): the clock measured during the cells, else the top cpufreq clock, else none."""
    mhz = measured_mhz(result.conditions or {})
    if mhz is None:
        return None, "no cpufreq on the host"
    measured = bool(StoredConditions.from_dict(result.conditions).cell_clocks_khz)
    return mhz, "measured" if measured else "cpufreq maximum"


@dataclass
class Throughput:
    algorithm: str
    api: str | None
    block_size: int
    one_core: float | None  # bytes/s, threads 1
    all_cores: float | None  # bytes/s, -multi N
    cores: int | None  # N of -multi N
    one_core_flags: Flags = ()
    all_cores_flags: Flags = ()

    @property
    def per_core(self) -> float | None:
        """All-core throughput divided by N (how well it scales), or the single-thread figure without -multi."""
        if self.all_cores is not None and self.cores:
            return self.all_cores / self.cores
        return self.one_core

    @property
    def per_core_flags(self) -> Flags:
        """The flags of the figure per_core divides."""
        return self.all_cores_flags if self.all_cores is not None and self.cores else self.one_core_flags


@dataclass
class LineRate:
    """What `openssl speed` says of a link: a crypto ceiling in user space above or below it, never that the host
    carries it (only a measured tunnel says that: analysis/tunnel_answers.py)."""

    link_mbit: int
    carried: bool | None  # the crypto ceiling is at or above the link; None when nothing was measured to decide
    cores_needed: int | None  # 1, N, or None when it cannot carry the link
    best_mbit: float | None
    verdict: str  # says the flags of the figures it rests on
    flags: Flags = ()


# What the line rate predicts: `openssl speed` times libcrypto in user space, the data path of these.
OPENSSL_PATHS = "OpenVPN, TLS (web servers, relays), IPsec through OpenSSL (e.g. strongSwan's openssl plugin)"

# Data paths that never touch OpenSSL: the kernel's own crypto, named as /proc/crypto names it. WireGuard calls
# the kernel's ChaCha20 and Poly1305 library code, whose CPU-specific versions (chacha20-neon, -simd, poly1305-mips
# ...) register under these names; kernel IPsec (XFRM/ESP) asks the crypto API for its AEAD template.
KERNEL_PATHS = (
    ("WireGuard", ("chacha20", "poly1305")),
    ("kernel IPsec AES-GCM", ("rfc4106(gcm(aes))", "gcm(aes)")),
    ("kernel IPsec ChaCha20-Poly1305", ("rfc7539esp(chacha20,poly1305)", "rfc7539(chacha20,poly1305)")),
)


@dataclass
class KernelPath:
    """A data path run by the kernel's crypto, and the implementation the kernel prefers for it."""

    path: str
    drivers: list[tuple[str, str, int]]  # (algorithm, driver, priority): the highest priority per algorithm
    said: str  # "chacha20-neon (priority 300) · poly1305-neon (200)", or why nothing is known


def kernel_paths(result: HostResult) -> list[KernelPath]:
    """From the /proc/crypto snapshot conditions.sh took before the run (none: an empty list): per kernel path,
    the driver the kernel would use (the highest priority); openssl speed measured none of them."""
    snapshot = StoredConditions.from_dict(result.conditions).before
    if snapshot is None:
        return []
    best: dict[str, tuple[str, int]] = {}
    for entry in snapshot.crypto or []:
        name, driver, priority = entry.name, entry.driver, entry.priority or 0
        if name and driver and (name not in best or priority > best[name][1]):
            best[name] = (driver, priority)
    if not best:
        return []
    out = []
    for path, names in KERNEL_PATHS:
        found = [(name, *best[name]) for name in names if name in best]
        if path != "WireGuard":
            found = found[:1]  # the ESP template where loaded, else the plain AEAD it is built on
        said = " · ".join(f"{name}: {driver} (priority {priority})" for name, driver, priority in found)
        out.append(KernelPath(path, found, said or "not in /proc/crypto when measured (module not loaded, or not used yet)"))
    return out


@dataclass
class HostInsights:
    host: str
    throughput: list[Throughput] = field(default_factory=list)
    line_rates: list[LineRate] = field(default_factory=list)
    crypto_instructions: list[str] = field(default_factory=list)
    evp_ratio: float | None = None  # best EVP / legacy ratio on aes-*-cbc
    evp_verdict: str = ""
    handshakes: dict[str, float] = field(default_factory=dict)  # name -> per second
    handshake_notes: list[str] = field(default_factory=list)
    mhz: float | None = None  # the clock per-MHz figures divide by
    mhz_source: str = ""
    kernel_paths: list[KernelPath] = field(default_factory=list)  # WireGuard / kernel IPsec: the kernel's crypto
    evp_flags: Flags = ()  # of the aes-cbc figures evp_ratio divides
    handshake_flags: dict[str, Flags] = field(default_factory=dict)  # name -> flags of its sign and kex figures

    @property
    def flags(self) -> Flags:
        """Every flag of every answer: what a one-line summary of the host (the site's index) must show."""
        return union(*(t.one_core_flags + t.all_cores_flags for t in self.throughput),
                     *(lr.flags for lr in self.line_rates), self.evp_flags, *self.handshake_flags.values())

    def per_mhz(self, bytes_per_second: float | None) -> float | None:
        """bytes/s per MHz of clock (None when the clock is unknown)."""
        return bytes_per_second / self.mhz if bytes_per_second is not None and self.mhz else None


def throughput(values: dict[Key, float], algorithms: Sequence[str] | None = None,
               flags: FigureFlags | None = None) -> list[Throughput]:
    """Single-core and all-core throughput per algorithm, API (evp first) and block size (ascending); flags:
    figure_flags of the cells (none: no figure is flagged)."""
    out = []
    flags = flags or {}
    measured = [k for k in values if k.operation is None and k.block_size is not None]
    names = sorted({k.algorithm for k in measured}) if algorithms is None else algorithms
    for algorithm in names:
        rows = {k: values[k] for k in measured if k.algorithm == algorithm}
        apis = {k.api for k in rows}
        for api in [a for a in API_PREFERENCE if a in apis] + sorted(a for a in apis if a not in API_PREFERENCE):
            for block in sorted({k.block_size for k in rows if k.api == api and k.block_size is not None}):
                one_key = Key(algorithm, api, None, 1, block)
                multi = [(k.threads, v, k) for k, v in rows.items()
                         if k.api == api and k.block_size == block and k.threads > 1]
                cores, all_cores, multi_key = max(multi) if multi else (None, None, None)
                out.append(Throughput(algorithm, api, block, rows.get(one_key), all_cores, cores,
                                      flags.get(one_key, ()), flags.get(multi_key, ()) if multi_key else ()))
    return out


@dataclass
class _Best:
    """The fastest AEAD figure of the line-rate range, on one core or on all of them."""

    bytes_per_second: float
    algorithm: str
    block: int
    cores: int
    flags: Flags

    @property
    def mbit(self) -> float:
        return mbits(self.bytes_per_second)


def _best_aeads(values: dict[Key, float], flags: FigureFlags) -> tuple[_Best | None, _Best | None]:
    """(one core, all cores): the fastest of AEADS at the smallest block of LINE_BLOCKS each measured."""
    best_one: _Best | None = None
    best_all: _Best | None = None
    for algorithm in AEADS:
        in_range = [t for t in throughput(values, [algorithm], flags)
                    if LINE_BLOCKS[0] <= t.block_size <= LINE_BLOCKS[1]]
        if not in_range:
            continue
        smallest = min(t.block_size for t in in_range)
        for t in (t for t in in_range if t.block_size == smallest):  # every API measured at that block
            if t.one_core is not None and (best_one is None or t.one_core > best_one.bytes_per_second):
                best_one = _Best(t.one_core, t.algorithm, t.block_size, 1, t.one_core_flags)
            if t.all_cores is not None and (best_all is None or t.all_cores > best_all.bytes_per_second):
                best_all = _Best(t.all_cores, t.algorithm, t.block_size, t.cores or 0, t.all_cores_flags)
    return best_one, best_all


def line_rates(values: dict[Key, float], links: Sequence[int] = DEFAULT_LINKS,
               flags: FigureFlags | None = None) -> list[LineRate]:
    """Is the host's crypto ceiling above each link? From the smallest block in LINE_BLOCKS (the VPN-sized, harder
    case). Each verdict carries the flags (figure_flags) of the figures it rests on."""
    best_one, best_all = _best_aeads(values, flags or {})
    return [_line_rate(link, best_one, best_all) for link in links]


def _line_rate(link: int, best_one: _Best | None, best_all: _Best | None) -> LineRate:
    if best_one is None and best_all is None:
        return LineRate(link, None, None, None,
                        f"{link} Mbit/s: unknown (measure {' or '.join(AEADS)} at 1024-16384-byte blocks)")
    one = best_one.mbit if best_one else None
    every = best_all.mbit if best_all else None
    best = max(v for v in (one, every) if v is not None)
    if best_one is not None and best_one.mbit >= link:
        text = (f"crypto ceiling above {link} Mbit/s on 1 core ({best_one.algorithm}: {best_one.mbit:,.0f} Mbit/s "
                f"at {best_one.block}-byte blocks)")
        return LineRate(link, True, 1, best, text + flagged(best_one.flags), best_one.flags)
    # "not on 1 core" and "cannot carry" rest on both figures
    both = union(best_one.flags if best_one else (), best_all.flags if best_all else ())
    if best_all is not None and best_all.mbit >= link:
        cores = best_all.cores
        text = (f"crypto ceiling above {link} Mbit/s on {cores} cores, not on 1 core "
                f"({best_all.algorithm}: {best_all.mbit:,.0f} Mbit/s on {cores} cores"
                + (f", {one:,.0f} on 1 core)" if one is not None else ")"))
        return LineRate(link, True, cores, best, text + flagged(both), both)
    scope = "all cores measured" if every is not None else "1 core; all cores not measured"
    return LineRate(link, False, None, best, f"crypto ceiling below {link} Mbit/s (best {best:,.0f} Mbit/s, {scope})"
                    + flagged(both), both)


IA32CAP_AES = 57  # OPENSSL_ia32cap: CPUID(1).ECX bit 25 (AES-NI) in the upper half of the first 64-bit word
ARMCAP_AES = 1 << 2  # OPENSSL_armcap: ARMV8_AES


def openssl_aes_capability(cpuinfo: str | None) -> bool | None:
    """Does OpenSSL itself say it will use AES instructions? From its `CPUINFO:` line (OpenSSL 3.x), which
    reflects any OPENSSL_ia32cap/armcap mask; None when the line is missing or unknown."""
    if not cpuinfo:
        return None
    x86 = re.search(r"OPENSSL_ia32cap=0x([0-9a-fA-F]+)", cpuinfo)
    if x86:
        return bool((int(x86.group(1), 16) >> IA32CAP_AES) & 1)
    arm = re.search(r"OPENSSL_armcap=0x([0-9a-fA-F]+)", cpuinfo)
    if arm:
        return bool(int(arm.group(1), 16) & ARMCAP_AES)
    return None


def _openssl_major(version: str | None) -> int | None:
    found = re.match(r"(?:OpenSSL\s+)?(\d+)\.", version or "")
    return int(found.group(1)) if found else None


def evp_ratio(values: dict[Key, float]) -> tuple[float | None, tuple[Key, Key] | None]:
    """The best EVP / legacy ratio on aes-*-cbc, one core, at the largest block both measured, and the two cells
    it divides (None, None: not measured)."""
    best: tuple[float, tuple[Key, Key]] | None = None
    for algorithm in AES_CBC:
        single = {k: v for k, v in values.items() if k.algorithm == algorithm and k.threads == 1 and k.operation is None}
        evp = {k.block_size: k for k in single if k.api == "evp"}
        legacy = {k.block_size: k for k in single if k.api == "legacy"}
        common = sorted(set(evp) & set(legacy), key=lambda b: b or 0)
        if common and values[legacy[common[-1]]] > 0:
            cells = (evp[common[-1]], legacy[common[-1]])
            ratio = values[cells[0]] / values[cells[1]]
            if best is None or ratio > best[0]:
                best = (ratio, cells)
    return (best[0], best[1]) if best else (None, None)


def evp_check(values: dict[Key, float], result: HostResult) -> tuple[float | None, str]:
    """Does the CPU have AES instructions, and does OpenSSL's EVP path use them?

    Evidence, strongest first: EVP ≫ legacy on aes-*-cbc (up to OpenSSL 1.1.1 the legacy speed test calls the
    low-level AES_* code, which never uses AES instructions); OpenSSL 3.x's own `CPUINFO:` capability bits
    (in 3.x `speed` runs the legacy ciphers through EVP too, so EVP ≈ legacy proves nothing there).
    """
    cpu = result.cpu
    has_aes = any(flag.lower() in ("aes", "aes-ni", "aesni") for flag in cpu.crypto)
    cpu_known = bool(cpu.crypto or cpu.model or cpu.arch)
    best, _ = evp_ratio(values)
    if has_aes:
        cpu_text = "the CPU has AES instructions"
    else:
        cpu_text = "the CPU reports no AES instructions" if cpu_known else "CPU features unknown (no /proc/cpuinfo)"
    if best is not None and best >= EVP_GAIN:
        return best, f"{cpu_text}; EVP is {best:.1f}x legacy on aes-cbc: the EVP path uses hardware/asm AES"
    capability = openssl_aes_capability(result.openssl.cpuinfo)
    if capability is True:
        return best, f"{cpu_text}; OpenSSL's CPUINFO capability bits say it uses them (EVP path: yes)"
    if capability is False and has_aes:
        return best, (f"{cpu_text} but OpenSSL's CPUINFO capability bits have AES off "
                      "(masked by OPENSSL_ia32cap/armcap?): the EVP path does not use them")
    major = _openssl_major(result.openssl.version or next(
        (m.openssl_version for m in result.measurements if m.openssl_version), None))
    if best is None:
        return None, f"{cpu_text}; EVP vs legacy not measured (run aes-128-cbc with and without -evp)"
    if major is not None and major >= 3:
        return best, (f"{cpu_text}; EVP is {best:.1f}x legacy on aes-cbc, which cannot tell on OpenSSL 3.x "
                      "(its speed test runs legacy ciphers through EVP as well)")
    if has_aes:
        return best, (f"{cpu_text} but EVP is only {best:.1f}x legacy on aes-cbc: "
                      "this OpenSSL does not seem to use them (built without asm?)")
    return best, f"{cpu_text}; EVP is {best:.1f}x legacy on aes-cbc (no hardware AES to gain from)"


def handshakes(values: dict[Key, float], flags: FigureFlags | None = None
               ) -> tuple[dict[str, float], list[str], dict[str, Flags]]:
    """Full TLS handshakes per second a relay's CPU can sign, one core and all cores; notes; per handshake the
    flags (figure_flags) of the figures it is computed from.

    A server does one private-key operation (RSA or ECDSA sign) per full handshake, plus one key exchange
    (x25519 or ECDH P-256) when that was measured: handshakes/s ≈ 1 / (1/sign + 1/kex).
    """
    out: dict[str, float] = {}
    notes: list[str] = []
    flags = flags or {}
    said: dict[str, Flags] = {}
    kex_name = next((n for n in ("x25519", "ecdhp256") if any(k.algorithm == n for k in values)), None)
    for name, algorithm in (("RSA-2048", "rsa2048"), ("ECDSA-P256", "ecdsap256")):
        signs = {k.threads: k for k in values if k.algorithm == algorithm and k.operation == "sign"}
        for threads, sign_key in sorted(signs.items()):
            kex_key: Key | None = Key(kex_name, None, "op", threads, None) if kex_name else None
            if kex_key not in values and kex_name:
                kex_key = next((k for k in values if k.algorithm == kex_name and k.threads == threads), None)
            sign, kex = values[sign_key], values.get(kex_key) if kex_key else None
            rate = 1 / (1 / sign + 1 / kex) if kex else sign
            scope = "1 core" if threads == 1 else f"{threads} cores"
            out[f"{name} handshakes/s ({scope})"] = rate
            said[f"{name} handshakes/s ({scope})"] = union(flags.get(sign_key, ()),
                                                           flags.get(kex_key, ()) if kex and kex_key else ())
        if signs and not kex_name:
            notes.append(f"{name}: sign/s only (measure x25519 or ecdhp256 to include the key exchange)")
    return out, notes, said


def host_insights(result: HostResult, links: Sequence[int] = DEFAULT_LINKS,
                  cells: Mapping[Key, Cell] | None = None) -> HostInsights:
    """The answers for one host, from its cells (default: host_cells without a run's busy rule; a report passes
    `grouped` of its run), each with the flags of the figures it rests on."""
    # openssl's cells only: a measured tunnel is answered by tunnel_answers
    cells = host_cells(speed_only(result)) if cells is None else {k: c for k, c in cells.items() if k.kind == SPEED}
    values = best_core(cell_medians(cells))
    flags = figure_flags(cells)
    ratio, verdict = evp_check(values, result)
    _, divided = evp_ratio(values)
    shakes, notes, shake_flags = handshakes(values, flags)
    mhz, mhz_source = clock_mhz(result)
    return HostInsights(
        host=result.host,
        throughput=throughput(values, flags=flags),
        line_rates=line_rates(values, links, flags),
        crypto_instructions=list(result.cpu.crypto),
        evp_ratio=ratio,
        evp_verdict=verdict,
        handshakes=shakes,
        handshake_notes=notes,
        mhz=mhz,
        mhz_source=mhz_source,
        kernel_paths=kernel_paths(result),
        evp_flags=union(*(flags.get(k, ()) for k in divided)) if divided else (),
        handshake_flags=shake_flags,
    )


def run_insights(run: Run, result: HostResult, links: Sequence[int] = DEFAULT_LINKS) -> HostInsights:
    """host_insights of a host of a stored run, its cells grouped under the run's busy rule (grouped)."""
    return host_insights(result, links, grouped(run, result))


def parse_links(text: str) -> list[int]:
    """'100,1000' -> [100, 1000] (Mbit/s)."""
    try:
        links = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"--link takes Mbit/s numbers separated by commas, like 100,1000 (got '{text}')") from None
    if not links or any(link <= 0 for link in links):
        raise UserError(f"--link takes positive Mbit/s numbers, like 100,1000 (got '{text}')")
    return links
