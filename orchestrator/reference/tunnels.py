"""Published measured tunnels of the known boards' SoCs (known/tunnels.toml): WireGuard through a board's own data
path as others measured and published it, each row with its source, to rank a user's measured tunnel beside them
and to set the measured range of a board's SoC beside its openssl prediction.

Rows are facts as published: the device, system, speed and note cells are kept as printed; only `mbit` reads the
printed speed as a number (iperf3's "Mbits/sec" and "Gbits/sec" are 10^6 and 10^9 bits per second).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from orchestrator.analysis.tunnel_answers import TUNNEL_NAMES
from orchestrator.errors import UserError
from orchestrator.reference.entries import KNOWN_DIR

TUNNELS_FILE = "tunnels.toml"
_FIELDS = ("device", "system", "speed", "note", "soc", "tunnel", "implementation", "direction", "streams", "source",
           "retrieved")
_SPEED = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([MG])bits?/sec\s*$", re.I)


@dataclass(frozen=True)
class PublishedTunnel:
    """One published tunnel figure (a row of known/tunnels.toml)."""

    device: str  # as the source prints it: "NanoPi R2S / RK3328"
    system: str  # "OpenWrt 23.05.2 / 5.15.137"
    speed: str  # "234 Mbits/sec", as printed
    note: str
    soc: str  # as the known boards' cpu names it: "RK3328", "Armada 385"
    tunnel: str  # "wireguard", ...
    implementation: str  # "kernel", ...
    direction: str  # "forward" or "reverse"
    streams: int
    source: str
    retrieved: str

    @property
    def mbit(self) -> float:
        """The printed speed in Mbit/s."""
        found = _SPEED.match(self.speed)
        assert found is not None  # load_tunnels refuses a row it cannot read
        return float(found.group(1)) * (1000.0 if found.group(2).upper() == "G" else 1.0)

    @property
    def how(self) -> str:
        """'1 stream' (and ', reverse'), as the source measured it."""
        streams = f"{self.streams} stream" + ("s" if self.streams != 1 else "")
        return streams + ("" if self.direction == "forward" else f", {self.direction}")


def load_tunnels(directory: Path = KNOWN_DIR) -> list[PublishedTunnel]:
    """Every row of known/tunnels.toml ([] without the file); a row without a source or a readable speed is an
    error naming it (a figure is never shown without where it came from)."""
    path = directory / TUNNELS_FILE
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"cannot read the known measured tunnels in {path}: {exc}") from None
    rows = []
    for number, item in enumerate(data.get("tunnel", []), 1):
        if not isinstance(item, dict) or any(name not in item for name in _FIELDS):
            raise UserError(f"{path}: tunnel {number} lacks one of {', '.join(_FIELDS)}")
        streams = item["streams"]
        row = PublishedTunnel(**{name: str(item[name]) for name in _FIELDS if name != "streams"},
                              streams=streams if isinstance(streams, int) else 0)
        if row.streams < 1 or not row.source.startswith("https://") or not _SPEED.match(row.speed):
            raise UserError(f"{path}: tunnel {number} ({row.device}) needs whole streams, an https source and a "
                            f"speed in Mbits/sec or Gbits/sec (got '{row.speed}')")
        rows.append(row)
    return rows


def _head(cpu: str) -> str:
    """The CPU's own name, before the first parenthesis: a note in parentheses may name another SoC."""
    return cpu.split("(", 1)[0]


def of_cpu(cpu: str, rows: Iterable[PublishedTunnel]) -> list[PublishedTunnel]:
    """The rows of the SoC a CPU text names (a known board's cpu, a host's system type or model): the SoC's name at
    the start of a word ("MT7621" names "MT7621AT"), fastest first."""
    head = _head(cpu)
    found = [row for row in rows if re.search(rf"(?<![A-Za-z0-9]){re.escape(row.soc)}", head, re.I)]
    return sorted(found, key=lambda row: -row.mbit)


def published_range(rows: Sequence[PublishedTunnel]) -> str:
    """'WireGuard (kernel) 730-946 Mbit/s measured, 1 stream, 9 published rows (SoC MT7986)'; "" without rows."""
    if not rows:
        return ""
    low, high = min(row.mbit for row in rows), max(row.mbit for row in rows)
    span = f"{_mbit(low)} Mbit/s" if low == high else f"{_mbit(low)}-{_mbit(high)} Mbit/s"
    hows = sorted({row.how for row in rows})
    kinds = sorted({f"{TUNNEL_NAMES.get(row.tunnel, row.tunnel)} ({row.implementation})" for row in rows})
    count = f"{len(rows)} published row" + ("s" if len(rows) > 1 else "")
    return f"{', '.join(kinds)} {span} measured, {'; '.join(hows)}, {count} (SoC {rows[0].soc})"


def sources(rows: Iterable[PublishedTunnel]) -> str:
    """The sources of rows, each once."""
    return " ".join(dict.fromkeys(row.source for row in rows))


def _mbit(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or value == int(value) else f"{value:,.1f}"
