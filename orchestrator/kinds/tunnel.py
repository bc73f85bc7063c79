"""Measured tunnels: iperf3 through WireGuard or OpenVPN between two network namespaces of one host, in Mbit/s.

A figure is the receiver's throughput of one tunnel (Measurement.algorithm: "wireguard", "openvpn-aes-256-gcm",
"openvpn-chacha20-poly1305") carried by one implementation ("kernel", "wireguard-go", "openvpn-tun",
"openvpn-dco"), one way (forward, reverse), over `threads` iperf3 streams. Its method is the host's TunnelMethod
of that tunnel: iperf3's version, the tunnel's and the veth pair's MTU, the duration and OpenVPN's socket buffer
(and the kernel, for a tunnel not carried by kernel WireGuard) make figures comparable or not. The
implementation's version, and the kernel of kernel WireGuard, are what a firmware update changes: the thing
judged, never a method change (a slower WireGuard after a kernel update is a regression where the evidence allows).

The planner (run/tunnels.py), host script (playbooks/files/tunnel.sh) and parser (parse/tunnel.py) are the tunnel
helper's; this module names them and `kinds.hook` imports them when called.
"""
from __future__ import annotations

from typing import Any, Iterable

from orchestrator.kinds.registry import Figure, Kind, Methods, Needs, Option, RunContext, register
from orchestrator.methods import MethodChange
from orchestrator.model import TUNNEL, HostResult, Measurement, TunnelMethod
from orchestrator.units import BITS

TUNNELS = ("wireguard", "openvpn-aes-256-gcm", "openvpn-chacha20-poly1305")
IMPLEMENTATIONS = ("kernel", "wireguard-go", "openvpn-tun", "openvpn-dco")
KERNEL = "kernel"  # kernel WireGuard: the kernel is its implementation
IPERF3_RUNS = 4  # per tunnel: forward and reverse, one stream and all cores
DEFAULT_SECONDS = 10  # of each iperf3 run, without --seconds
SETUP_SECONDS = 10  # namespaces, keys, the tunnel up and down
UNKNOWN = "?"

# TunnelMethod fields whose change between two sides is a change of method ("may have changed", never judged), by
# the words a sentence says them in. `kernel` joins them for a tunnel carried in user space (below).
METHOD_FIELDS = {"iperf3_version": "iperf3", "mtu": "tunnel MTU", "veth_mtu": "veth MTU",
                 "duration_seconds": "iperf3 duration (s)", "socket_buffer": "socket buffer (bytes)"}
KERNEL_FIELD = {"kernel": "kernel"}
COMPARABLE = ("only figures measured with the same iperf3, tunnel and veth MTU, duration and socket buffer "
              "compare; measure both sides alike")


def nominal_seconds(seconds: float | None) -> float:
    """One tunnel: IPERF3_RUNS iperf3 runs of --seconds (DEFAULT_SECONDS without it), and its setup."""
    return IPERF3_RUNS * float(seconds or DEFAULT_SECONDS) + SETUP_SECONDS


def value(m: Measurement) -> float | None:
    """bits/s: the unit tunnels are sold and shown in (units.fmt_rate shows Mbit/s)."""
    return None if m.bytes_per_second is None else m.bytes_per_second * 8


def unit_of(figure: Figure) -> str:
    return BITS


def label(key: Figure) -> str:
    """'wireguard kernel forward t1', 'openvpn-aes-256-gcm openvpn-dco reverse t4'."""
    return " ".join(part for part in (key.algorithm, key.implementation or "", key.operation or "",
                                      f"t{key.threads}") if part)


def key_cells(key: Figure) -> tuple[str, str, Any, Any]:
    """A table's key columns (algorithm, api, threads, block / op): the implementation where openssl has its api,
    the direction where it has its block size."""
    return key.algorithm, key.implementation or "", key.threads, key.operation or ""


def method_fields(method: TunnelMethod) -> dict[str, str]:
    fields = {**METHOD_FIELDS, **({} if method.implementation == KERNEL else KERNEL_FIELD)}
    return {name: UNKNOWN if getattr(method, name) is None else _said(getattr(method, name)) for name in fields}


def _said(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def method_id(method: TunnelMethod | None) -> str:
    """'tunnel;iperf3_version=3.16;mtu=1420;…' ('?' for what the host did not say; 'tunnel' with no method)."""
    if method is None:
        return TUNNEL
    return ";".join([TUNNEL, *(f"{name}={said}" for name, said in method_fields(method).items())])


def _fields_of(method: str) -> dict[str, str]:
    return dict(part.partition("=")[::2] for part in method.split(";")[1:])


def judged(method: TunnelMethod | None) -> tuple[str, str] | None:
    """What is judged of a tunnel, and its version: the kernel that carries kernel WireGuard, else the
    implementation ("wireguard-go", "0.0.20230223"); None where the host did not say."""
    if method is None:
        return None
    what, version = (("kernel", method.kernel) if method.implementation == KERNEL else
                     (method.implementation, method.implementation_version))
    return (what, version) if version else None


def firmware(method: TunnelMethod | None) -> str | None:
    """'kernel 6.6.73', 'openvpn-dco 2.6.14': the version said of a tunnel's side."""
    said = judged(method)
    return None if said is None else " ".join(said)


def cell_methods(result: HostResult, keys: Iterable[Figure], context: RunContext) -> dict[Any, tuple[str, str | None]]:
    """Each tunnel cell's method: the host's TunnelMethod of its tunnel and implementation."""
    by_tunnel = {(m.tunnel, m.implementation): m for m in result.tunnels}
    out: dict[Any, tuple[str, str | None]] = {}
    for key in keys:
        method = by_tunnel.get((key.algorithm, key.implementation or ""))
        out[key] = (method_id(method), firmware(method))
    return out


def compare(old: Methods, new: Methods) -> MethodChange | None:
    """A field of METHOD_FIELDS known on both sides and different: the method may have changed (never judged).
    A field one side did not say changes nothing by itself; the firmware (implementation version, kernel WireGuard's
    kernel) is not part of the method."""
    if not old or not new or set(old) == set(new):
        return None
    for a in sorted(old):
        for b in sorted(new):
            fields_a, fields_b = _fields_of(a), _fields_of(b)
            for name, words in {**METHOD_FIELDS, **KERNEL_FIELD}.items():
                was, now = fields_a.get(name, UNKNOWN), fields_b.get(name, UNKNOWN)
                if UNKNOWN not in (was, now) and was != now:
                    return MethodChange(name, f"the tunnel's method may have changed: {words} {was} → {now}; "
                                              "not judged", COMPARABLE, maybe=True)
    return None


def firmware_lines(old: HostResult, new: HostResult) -> list[str]:
    """'wireguard (kernel): kernel 6.6.73 → 6.6.80': the firmware a tunnel's figures judge, where it changed."""
    before = {(m.tunnel, m.implementation): judged(m) for m in old.tunnels}
    lines = []
    for method in new.tunnels:
        was, now = before.get((method.tunnel, method.implementation)), judged(method)
        if was and now and was != now:
            lines.append(f"{method.tunnel} ({method.implementation}): {now[0]} {was[1]} → {now[1]}")
    return lines


TUNNEL_KIND = register(Kind(
    name=TUNNEL,
    summary="measured tunnels: iperf3 through WireGuard / OpenVPN between two namespaces of the host, in Mbit/s",
    options=(Option("--tunnels", "T,U", f"the tunnels to measure: {', '.join(TUNNELS)}"),
             Option("--seconds", "N", f"seconds of each iperf3 run (default {DEFAULT_SECONDS})"),
             Option("--repeat", "N", "samples per tunnel and direction")),
    needs=(Needs("openwrt", ("ip-full", "kmod-veth", "kmod-wireguard", "wireguard-tools", "iperf3",
                             "openvpn-openssl")),
           Needs("debian", ("iproute2", "wireguard-tools", "iperf3", "openvpn"),
                 lacking={"kernel wireguard": ("wireguard-go",)})),
    nominal_seconds=nominal_seconds,
    planner="orchestrator.run.tunnels:plan_tunnels",
    script="files/tunnel.sh",
    parser="orchestrator.parse.tunnel:parse_tunnel",
    value=value, unit_of=unit_of, label=label, key_cells=key_cells, cell_methods=cell_methods, compare=compare,
    firmware_lines=firmware_lines,
))
