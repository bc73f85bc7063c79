"""playbooks/files/tunnel.sh's output into tunnel `Measurement`s, their `TunnelMethod` and `TunnelEvidence`.

tunnel.sh prints `@@ NAME [WORDS]` before each part and `@@ end` after a tunnel: its facts (`tunnel`, `kernel`,
`hz`, `cores`, `seconds`, `iperf3-version`, `implementation`, `sockbuf`, `mtu tunnel|veth`), then per `@@ repeat N`
one `@@ run DIRECTION STREAMS` per iperf3 test with its snapshots (`stat`, `snmp a|b`, `proc` before and after),
the client's `-J` output and the server's text (`iperf3 client|server`, each ended by `@@ iperf3-cpu UTIME STIME
RC`). `@@ not-measurable WHY`: the host cannot run the tunnel.

The busy rule: the share of the machine's CPU time (/proc/stat, all CPUs: user, nice, system, irq, softirq over
those and idle and iowait; steal left out, the hypervisor's) that went neither to the tunnel's and iperf3's
processes nor to irq/softirq (where the kernel moves the tunnel's packets) is `busy_fraction`; above
BUSY_FRACTION the figure is flagged model.BUSY, as a cell whose host did other work is. Kernel WireGuard encrypts
in kernel workers no process accounts for, so its busy_fraction is None and it is never flagged by this rule.

Pure: text in, data out; never raises.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from orchestrator.model import (BUSY, ERROR, FORWARD, REVERSE, TUNNEL, UNSUPPORTED, Measurement, ProcessCpu,
                                TunnelEvidence, TunnelMethod)
from orchestrator.parse import iperf3

MARK = "@@ "
# above this share of the machine's CPU doing other work, a tunnel figure is flagged busy: the tunnel, iperf3 and
# the packet path use at most one core in two on the 2-core boards sslbench meets, so a tenth of the machine is
# work of its own, not noise of accounting (clock ticks of 10 ms over a 10 s run)
BUSY_FRACTION = 0.10
NOT_MEASURABLE = "not measurable: "
KERNEL = "kernel"
# tunnel.sh's name of OpenVPN's DCO tunnel: the same cipher's tunnel (algorithm), carried by another implementation
DCO_PREFIX, DCO = "openvpn-dco-", "openvpn-dco"


def algorithm_of(script_name: str) -> tuple[str, str | None]:
    """tunnel.sh's tunnel name -> (the Measurement's algorithm, the implementation the name already says):
    `openvpn-dco-aes-256-gcm` is `openvpn-aes-256-gcm` carried by `openvpn-dco`."""
    if script_name.startswith(DCO_PREFIX):
        return "openvpn-" + script_name[len(DCO_PREFIX):], DCO
    return script_name, None


@dataclass
class TunnelOutput:
    """What one tunnel.sh output said (any number of tunnels)."""

    measurements: list[Measurement] = field(default_factory=list)
    methods: list[TunnelMethod] = field(default_factory=list)
    evidence: list[TunnelEvidence] = field(default_factory=list)


@dataclass
class _Run:
    direction: str
    streams: int
    repeat: int
    parts: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class _Tunnel:
    name: str
    facts: dict[str, str] = field(default_factory=dict)
    runs: list[_Run] = field(default_factory=list)
    not_measurable: str | None = None
    ended: bool = False


def parse_tunnel(text: str) -> TunnelOutput:
    """Every tunnel in tunnel.sh's output."""
    out = TunnelOutput()
    try:
        for tunnel in _tunnels(text):
            _read(tunnel, out)
    except Exception:  # never raises: a parser bug must not cost the user the run's other figures
        pass
    return out


def _tunnels(text: str) -> list[_Tunnel]:
    tunnels: list[_Tunnel] = []
    part: list[str] | None = None
    repeat = 0
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.startswith(MARK):
            if part is not None:
                part.append(line)
            continue
        name, _, words = line[len(MARK):].partition(" ")
        words = words.strip()
        if name == "tunnel":
            tunnels.append(_Tunnel(words))
            part, repeat = None, 0
            continue
        if not tunnels:
            continue
        tunnel = tunnels[-1]
        part = _section(tunnel, name, words, repeat)
        if name == "repeat":
            repeat = max(_int(words) or 1, 1) - 1
    return tunnels


def _section(tunnel: _Tunnel, name: str, words: str, repeat: int) -> list[str] | None:
    """Take one `@@ NAME WORDS` line; the lines that follow go to the list returned (None: to nothing)."""
    if name == "end" or name == "stopped":
        tunnel.ended = tunnel.ended or name == "end"
        return None
    if name == "not-measurable":
        tunnel.not_measurable = words
        return None
    if name == "run":
        direction, _, streams = words.partition(" ")
        tunnel.runs.append(_Run(direction, _int(streams) or 1, repeat))
        return None
    if name in ("stat", "snmp", "proc", "iperf3", "iperf3-cpu") and tunnel.runs:
        key = f"{name} {words}" if name != "iperf3-cpu" else name
        run = tunnel.runs[-1]
        if name == "iperf3-cpu":  # after the iperf3 output it ends: which one it was is the last iperf3 part
            last = [k for k in run.parts if k.startswith("iperf3 ")]
            key = f"cpu {last[-1][len('iperf3 '):]}" if last else key
            run.parts[key] = [words]
            return None
        return run.parts.setdefault(key, [])
    if name == "mtu":
        which, _, value = words.partition(" ")
        tunnel.facts[f"mtu {which}"] = value
        return None
    tunnel.facts[name] = words
    return None


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip())
    except ValueError:
        return None


def _implementation(tunnel: _Tunnel) -> tuple[str | None, str | None]:
    name, _, version = tunnel.facts.get("implementation", "").partition(" ")
    return (name or algorithm_of(tunnel.name)[1]), (version.strip() or None)


def _method(tunnel: _Tunnel) -> TunnelMethod | None:
    implementation, version = _implementation(tunnel)
    if "implementation" not in tunnel.facts or implementation is None:
        return None
    iperf3_version = iperf3._version(tunnel.facts.get("iperf3-version"))  # "iperf 3.12 (cJSON 1.7.15)"
    seconds = _int(tunnel.facts.get("seconds"))
    return TunnelMethod(
        tunnel=algorithm_of(tunnel.name)[0], implementation=implementation, implementation_version=version,
        iperf3_version=iperf3_version, mtu=_int(tunnel.facts.get("mtu tunnel")),
        veth_mtu=_int(tunnel.facts.get("mtu veth")), duration_seconds=float(seconds) if seconds else None,
        socket_buffer=_int(tunnel.facts.get("sockbuf")), kernel=tunnel.facts.get("kernel") or None)


def _read(tunnel: _Tunnel, out: TunnelOutput) -> None:
    implementation, _ = _implementation(tunnel)
    method = _method(tunnel)
    if method is not None:
        out.methods.append(method)
    for run in tunnel.runs:
        measurement, evidence = _measure(tunnel, run, implementation)
        out.measurements.append(measurement)
        if evidence is not None:
            out.evidence.append(evidence)
    if tunnel.not_measurable is not None and not tunnel.runs:
        out.measurements.append(Measurement(
            algorithm=algorithm_of(tunnel.name)[0], operation=FORWARD, threads=1, status=UNSUPPORTED,
            reason=NOT_MEASURABLE + tunnel.not_measurable, kind=TUNNEL, implementation=implementation))


def _measure(tunnel: _Tunnel, run: _Run, implementation: str | None) -> tuple[Measurement, TunnelEvidence | None]:
    operation = REVERSE if run.direction == REVERSE else FORWARD
    base = Measurement(algorithm=algorithm_of(tunnel.name)[0], operation=operation, threads=run.streams, repeat=run.repeat,
                       kind=TUNNEL, implementation=implementation)
    client = iperf3.parse_json("\n".join(run.parts.get("iperf3 client", [])))
    result = client[0] if client else None
    if result is None or result.error or result.receiver_bits_per_second is None:
        why = (result.error if result and result.error else
               "the tunnel stopped during the test" if "iperf3 client" not in run.parts else "no iperf3 result")
        base.status, base.reason = ERROR, f"iperf3: {why}"
        return base, None
    base.bytes_per_second = result.receiver_bits_per_second / 8
    base.seconds = result.duration_seconds
    evidence = _evidence(tunnel, run, base, result, implementation)
    if evidence.busy_fraction is not None and evidence.busy_fraction > BUSY_FRACTION:
        base.flags.append(BUSY)
    return base, evidence


def _evidence(tunnel: _Tunnel, run: _Run, m: Measurement, result: iperf3.Iperf3Result,
              implementation: str | None) -> TunnelEvidence:
    hz = float(_int(tunnel.facts.get("hz")) or 100)
    cpu = _process_cpu(run, hz)
    rcv, snd = _udp_errors(run)
    busy = None if implementation == KERNEL else _busy(run, sum(p.seconds for p in cpu) * hz)
    return TunnelEvidence(
        algorithm=m.algorithm, implementation=implementation or "", operation=m.operation or FORWARD,
        threads=m.threads, repeat=m.repeat, sender_bytes_per_second=result.sender_bytes_per_second,
        retransmits=result.retransmits, udp_rcvbuf_errors=rcv, udp_sndbuf_errors=snd, cpu_seconds=cpu,
        busy_fraction=busy)


def _ticks(line: str) -> tuple[str, int] | None:
    """`NAME PID UTIME STIME` -> (name, utime + stime)."""
    parts = line.split()
    if len(parts) != 4 or not parts[2].isdigit() or not parts[3].isdigit():
        return None
    return parts[0], int(parts[2]) + int(parts[3])


def _process_cpu(run: _Run, hz: float) -> list[ProcessCpu]:
    before = dict(t for t in map(_ticks, run.parts.get("proc before", [])) if t)
    after = dict(t for t in map(_ticks, run.parts.get("proc after", [])) if t)
    found = [ProcessCpu(name, (after[name] - before[name]) / hz) for name in after if name in before]
    for side in ("client", "server"):
        words = (run.parts.get(f"cpu {side}") or [""])[0].split()
        if len(words) >= 2 and words[0].isdigit() and words[1].isdigit():
            found.append(ProcessCpu(f"iperf3-{side}", (int(words[0]) + int(words[1])) / hz))
    return found


def _stat(lines: list[str]) -> list[int] | None:
    """/proc/stat's `cpu` line: user nice system idle iowait irq softirq steal ..."""
    for line in lines:
        parts = line.split()
        if parts and parts[0] == "cpu" and len(parts) >= 8 and all(p.isdigit() for p in parts[1:8]):
            return [int(p) for p in parts[1:8]]
    return None


def _busy(run: _Run, ours: float) -> float | None:
    before, after = _stat(run.parts.get("stat before", [])), _stat(run.parts.get("stat after", []))
    if before is None or after is None:
        return None
    delta = [b - a for a, b in zip(before, after)]
    user, nice, system, idle, iowait, irq, softirq = delta
    total = sum(delta)
    if total <= 0:
        return None
    other = user + nice + system - ours
    return round(max(other, 0) / total, 4)


def _udp(lines: list[str]) -> dict[str, int]:
    """/proc/net/snmp's two `Udp:` lines (names, then values) as a dict."""
    rows = [line.split()[1:] for line in lines if line.startswith("Udp:")]
    if len(rows) < 2:
        return {}
    return {name: int(value) for name, value in zip(rows[0], rows[1]) if value.lstrip("-").isdigit()}


def _udp_errors(run: _Run) -> tuple[int | None, int | None]:
    rcv = snd = 0
    for side in ("a", "b"):
        before, after = _udp(run.parts.get(f"snmp {side} before", [])), _udp(run.parts.get(f"snmp {side} after", []))
        if "RcvbufErrors" not in before or "RcvbufErrors" not in after:
            return None, None
        rcv += after["RcvbufErrors"] - before["RcvbufErrors"]
        snd += after.get("SndbufErrors", 0) - before.get("SndbufErrors", 0)
    return rcv, snd
