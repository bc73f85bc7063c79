"""Measured tunnels in a run (`--tunnels wireguard,openvpn|all|none`): which tunnels the user asked for, each
host's tunnel plan (one tunnel.sh run each, after its openssl cells) and the file the on-host runner reads.

playbooks/files/tunnel.sh measures one tunnel: 1 iperf3 stream forward and reverse, then one stream per logical
CPU both ways (when there are several), `--repeat` times; orchestrator/parse/tunnel.py reads what it prints.
Pure.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import UserError

# what the user names -> the tunnels (tunnel.sh's names, the Measurements' algorithms) it stands for. OpenVPN's
# DCO is a tunnel of its own: measured only where kmod-ovpn-dco is loaded, "not measurable: no ovpn-dco" elsewhere
TUNNEL_GROUPS = {
    "wireguard": ("wireguard",),
    "openvpn": ("openvpn-aes-256-gcm", "openvpn-chacha20-poly1305", "openvpn-dco-aes-256-gcm"),
}
DEFAULT_SECONDS = 10  # iperf3's -t for each test unless --seconds says otherwise
SETUP_SECONDS = 8.0  # namespaces, keys or certificates, the tunnel's handshake, the teardown
PER_TEST_SECONDS = 3.0  # around each iperf3 test: the server's start (1 s), snapshots, the server's end
PREFIX = "tunnel-"


def parse_tunnels(text: str | list[str] | None) -> tuple[str, ...]:
    """`wireguard,openvpn`, `all` or `none` (a TOML list of names too) -> the groups asked for, in TUNNEL_GROUPS
    order; a UserError names what is allowed."""
    if text is None:
        return ()
    words = text if isinstance(text, list) else str(text).split(",")
    names = {str(w).strip().lower() for w in words if str(w).strip()}
    if names == {"none"} or not names:
        return ()
    if "all" in names:
        names = (names - {"all"}) | set(TUNNEL_GROUPS)
    unknown = names - set(TUNNEL_GROUPS)
    if unknown or "none" in names:
        raise UserError(f"--tunnels takes {', '.join(TUNNEL_GROUPS)} (comma-separated), all or none "
                        f"(got {', '.join(sorted(unknown | (names & {'none'})))})")
    return tuple(name for name in TUNNEL_GROUPS if name in names)


def requested(given: str | None, config_path: str | None) -> tuple[str, ...]:
    """--tunnels, else `tunnels =` in the --config file, else none."""
    return parse_tunnels(given if given is not None else tunnels_from_config(config_path))


def tunnels_from_config(path: str | None) -> list[str] | str | None:
    """`tunnels = "wireguard,openvpn"` (or a list) at the top of the --config TOML file, else None."""
    if not path:
        return None
    try:
        value = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("tunnels")
    except (OSError, tomllib.TOMLDecodeError):
        return None  # workers.configured says what is wrong with the file
    if value is None or isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return value
    raise UserError(f"{path}: tunnels must be a string (\"wireguard,openvpn\", \"all\", \"none\") or a list of names")


@dataclass(frozen=True)
class TunnelPlan:
    """One tunnel.sh run on a host."""

    tunnel: str  # tunnel.sh's name: "wireguard", "openvpn-aes-256-gcm", ...
    seconds: int  # iperf3's -t
    streams: int  # the multi-stream tests' -P (1: only the single-stream tests)
    repeats: int

    @property
    def id(self) -> str:
        return PREFIX + self.tunnel

    @property
    def tests(self) -> int:
        return (2 if self.streams <= 1 else 4) * self.repeats

    @property
    def eta_seconds(self) -> float:
        if self.tunnel.startswith("openvpn-dco"):
            return 1.0  # measured only where the module is loaded: said not measurable at once elsewhere
        return SETUP_SECONDS + self.tests * (self.seconds + PER_TEST_SECONDS)

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "tunnel": self.tunnel, "seconds": self.seconds, "streams": self.streams,
                "repeats": self.repeats, "eta_seconds": self.eta_seconds}


def plan_tunnels(groups: tuple[str, ...], *, logical_cpus: int | None, seconds: int | None,
                 repeat: int) -> list[TunnelPlan]:
    """A host's tunnels: every tunnel of the groups asked for."""
    return [TunnelPlan(tunnel, seconds or DEFAULT_SECONDS, max(logical_cpus or 1, 1), max(repeat, 1))
            for group in groups for tunnel in TUNNEL_GROUPS[group]]


def tunnels_text(plans: list[TunnelPlan]) -> str:
    """The file the on-host runner reads: `id<TAB>tunnel seconds streams repeats` per line (checked tokens)."""
    return "".join(f"{p.id}\t{p.tunnel} {int(p.seconds)} {int(p.streams)} {int(p.repeats)}\n" for p in plans)
