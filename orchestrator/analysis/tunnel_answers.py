"""Line rate from measured tunnels: what a host's own data path carried, beside what `openssl speed` predicts.

A tunnel figure (Measurement kind TUNNEL: WireGuard or OpenVPN between two network namespaces on the host, iperf3
through it) is a measurement of the whole data path: crypto, packet handling, copies, the scheduler. The
`openssl speed` figure is only the crypto's ceiling in user space, off by an order of magnitude in both directions
(issue 36), so a line-rate verdict ("carries 100 Mbit/s") is drawn from a measured tunnel only; the prediction is
shown beside it with the ratio measured / predicted.

- figures: each tunnel × implementation × direction × streams, the median of its ok repeats (bytes/s, the
  receiver's), with the flags of its measurements and of the host, or why it was not measurable;
- prediction: the openssl figure of the tunnel's cipher (WireGuard: chacha20-poly1305; OpenVPN: its data cipher)
  at the smallest block of model.LINE_BLOCKS, on one core for one stream, on all cores for several; without the
  cipher measured, the faster AEAD insights.line_rates quotes, named as what it is;
- verdict per link from the measured figure alone.

Pure; units as in orchestrator.units (Mbit/s = 10^6 bits/s).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from orchestrator import stats
from orchestrator.analysis.cells import CARRIED_FLAGS, Cell, Key, best_core, host_cells, key_of, medians
from orchestrator.analysis.insights import AEADS, FigureFlags, Flags, figure_flags, flagged, throughput, union
from orchestrator.model import FORWARD, LINE_BLOCKS, TUNNEL, HostResult
from orchestrator.units import mbits

IMPORTED_HOW = "imported iperf3 log (how it was measured is not recorded)"
TUNNEL_NAMES = {"wireguard": "WireGuard", "openvpn-aes-256-gcm": "OpenVPN AES-256-GCM",
                "openvpn-chacha20-poly1305": "OpenVPN CHACHA20-POLY1305"}
IMPLEMENTATION_NAMES = {"kernel": "kernel", "wireguard-go": "wireguard-go", "openvpn-tun": "tun",
                        "openvpn-dco": "DCO"}
# The openssl speed cell that times a tunnel's cipher: WireGuard's ChaCha20-Poly1305 runs in the kernel (or in
# wireguard-go), so the user-space figure is a ceiling of another implementation of the same cipher.
CIPHER = {"wireguard": "chacha20-poly1305", "openvpn-aes-256-gcm": "aes-256-gcm",
          "openvpn-chacha20-poly1305": "chacha20-poly1305"}


@dataclass
class TunnelFigure:
    """One measured tunnel figure of a host: the median over its repeats, or why there is none."""

    tunnel: str  # the Measurement's algorithm: "wireguard", "openvpn-aes-256-gcm", ...
    implementation: str | None
    direction: str  # model.FORWARD or REVERSE
    streams: int
    bytes_per_second: float | None  # the receiver's, median of the ok repeats
    samples: int = 0
    flags: Flags = ()
    reason: str | None = None  # "not measurable: ..." where the host could not run it
    # measured by `sslbench run --tunnels` on the host (its HostResult has the tunnel's TunnelMethod): both ends on
    # the board; False: from an imported iperf3 log, which does not say where its ends were
    own: bool = True

    @property
    def mbit(self) -> float | None:
        return mbits(self.bytes_per_second) if self.bytes_per_second is not None else None

    @property
    def name(self) -> str:
        """'WireGuard (kernel)', 'OpenVPN AES-256-GCM (tun)'."""
        name = TUNNEL_NAMES.get(self.tunnel, self.tunnel)
        impl = IMPLEMENTATION_NAMES.get(self.implementation or "", self.implementation)
        return f"{name} ({impl})" if impl else name

    @property
    def how(self) -> str:
        """'1 stream, both ends on this board' (and 'reverse' for iperf3 -R); an imported log's: where it came from."""
        streams = f"{self.streams} stream" + ("s" if self.streams != 1 else "")
        direction = "" if self.direction == FORWARD else f", {self.direction}"
        where = "both ends on this board" if self.own else IMPORTED_HOW
        return f"{streams}{direction}, {where}"

    @property
    def said(self) -> str:
        """'WireGuard (kernel) 234 Mbit/s, 1 stream, both ends on this board' (+ its flags)."""
        if self.mbit is None:
            return f"{self.name}, {self.how}: {self.reason or 'no figure'}"
        return f"{self.name} {self.mbit:,.0f} Mbit/s, {self.how}{flagged(self.flags)}"


@dataclass
class Prediction:
    """The openssl speed figure set beside a tunnel: a crypto ceiling in user space, never a line rate."""

    algorithm: str
    block: int
    cores: int  # 1, or N of -multi N
    bytes_per_second: float
    flags: Flags = ()
    own_cipher: bool = True  # False: the tunnel's cipher was not measured, another AEAD stands in

    @property
    def mbit(self) -> float:
        return mbits(self.bytes_per_second)

    @property
    def said(self) -> str:
        """'predicted 4,653 Mbit/s (aes-128-gcm, 1024 B, 1 core, user space)'."""
        cores = "1 core" if self.cores == 1 else f"{self.cores} cores"
        stand_in = "" if self.own_cipher else ", not the tunnel's cipher"
        return (f"predicted {self.mbit:,.0f} Mbit/s ({self.algorithm}, {self.block} B, {cores}, user space"
                f"{stand_in}){flagged(self.flags)}")


@dataclass
class TunnelAnswer:
    """A measured tunnel, its prediction, measured / predicted, and a verdict per link from the measured figure."""

    figure: TunnelFigure
    prediction: Prediction | None
    verdicts: list[str] = field(default_factory=list)  # one per link, from the measured figure only
    carried: list[bool | None] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.figure.bytes_per_second is None or self.prediction is None or not self.prediction.bytes_per_second:
            return None
        return self.figure.bytes_per_second / self.prediction.bytes_per_second

    @property
    def flags(self) -> Flags:
        return union(self.figure.flags, self.prediction.flags if self.prediction else ())


def tunnel_figures(result: HostResult) -> list[TunnelFigure]:
    """The host's tunnel cells (cells.host_cells: one per tunnel, implementation, direction and streams, in the
    order the host measured them), each the median of its ok repeats with the flags of its measurements and host,
    or why it was not measured."""
    reasons = {key_of(m): m.reason for m in result.measurements if m.kind == TUNNEL and m.reason}
    measured = {(m.tunnel, m.implementation) for m in result.tunnels}
    out = []
    for key, cell in host_cells(result).items():
        if key.kind != TUNNEL:
            continue
        bits = stats.median(cell.samples) if cell.samples else None  # a tunnel cell holds bit/s (kinds/tunnel.py)
        out.append(TunnelFigure(key.algorithm, key.implementation, key.operation or FORWARD, key.threads,
                                None if bits is None else bits / 8, len(cell.samples),
                                tuple(sorted(cell.flags & CARRIED_FLAGS)),
                                None if cell.samples else reasons.get(key, "no figure"),
                                own=any(tunnel == key.algorithm and key.implementation in (None, implementation)
                                        for tunnel, implementation in measured)))
    return out


def predict(tunnel: str, streams: int, values: Mapping[Key, float], flags: FigureFlags) -> Prediction | None:
    """The openssl figure of the tunnel's cipher at the smallest block of LINE_BLOCKS measured (1 stream: one
    core; several: all cores), else the faster AEAD's; None when neither was measured."""
    cipher = CIPHER.get(tunnel)
    for algorithms, own in (((cipher,), True), (AEADS, False)) if cipher else ((AEADS, False),):
        best: Prediction | None = None
        for algorithm in algorithms:
            rows = [t for t in throughput(dict(values), [algorithm], flags)
                    if LINE_BLOCKS[0] <= t.block_size <= LINE_BLOCKS[1]]
            if not rows:
                continue
            smallest = min(t.block_size for t in rows)
            for t in (t for t in rows if t.block_size == smallest):
                figure, cores, said = ((t.one_core, 1, t.one_core_flags) if streams <= 1 else
                                       (t.all_cores, t.cores or 0, t.all_cores_flags))
                if figure is not None and (best is None or figure > best.bytes_per_second):
                    best = Prediction(algorithm, smallest, cores, figure, said, own)
        if best is not None:
            return best
    return None


def verdict(figure: TunnelFigure, link: int) -> tuple[bool | None, str]:
    """Does the measured tunnel carry the link? Only a measured figure says "carries"."""
    if figure.mbit is None:
        return None, f"{link} Mbit/s: not measured ({figure.reason or 'no figure'})"
    if figure.mbit >= link:
        return True, f"carries {link} Mbit/s (measured {figure.mbit:,.0f} Mbit/s){flagged(figure.flags)}"
    return False, f"does not carry {link} Mbit/s (measured {figure.mbit:,.0f} Mbit/s){flagged(figure.flags)}"


def tunnel_answers(result: HostResult, values: Mapping[Key, float], flags: FigureFlags,
                   links: Sequence[int]) -> list[TunnelAnswer]:
    """Every measured tunnel of the host with its prediction (values, flags: insights' medians and figure_flags
    of the host's openssl cells) and a verdict per link."""
    out = []
    for figure in tunnel_figures(result):
        said = [verdict(figure, link) for link in links]
        out.append(TunnelAnswer(figure, predict(figure.tunnel, figure.streams, values, flags),
                                [text for _, text in said], [carried for carried, _ in said]))
    return out


def host_tunnels(result: HostResult, cells: Mapping[Key, Cell], links: Sequence[int]) -> list[TunnelAnswer]:
    """tunnel_answers from a host's openssl cells (insights.grouped of its run, as the other answers)."""
    return tunnel_answers(result, best_core(medians(cells)), figure_flags(cells), links)
