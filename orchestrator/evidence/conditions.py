"""Read what playbooks/files/conditions.sh printed: snapshots, idle gates and cell evidence.

Text in, typed records out (evidence/records.py), read once: the judges never see the text or a dict. A record's
`to_dict` is the form `HostResult.conditions` stores, and `parse_conditions`/`parse_idle`/`parse_cell` give that
form of a text straight away. Anything the host did not have is simply absent, and the script's `note:` lines
are kept.

The text may come wrapped in other output (Ansible stdout, a whole cell log): only the lines of its
`@@ begin sslbench-<kind>` … `@@ end` blocks are read (orchestrator/parse/protocol.py splits them). Inside a
snapshot each `@@ SECTION [NAME]` part is read by its entry in SECTION_READERS.
"""
from __future__ import annotations

import re
from typing import Callable

from orchestrator.evidence.cell import CellEvidence, CellRun, RunSample
from orchestrator.evidence.records import (
    CpuSets,
    CryptoDriver,
    IdleGate,
    IdleOutcome,
    IdleSample,
    OpenSSLEngine,
    OpenSSLPlugins,
    OpenSSLProvider,
    Policy,
    Snapshot,
    Swap,
    SwapDevice,
    ThermalZone,
    FREQ_KEYS,
)
from orchestrator.parse.protocol import NOTE, blocks, subsection

SNAPSHOT = "conditions"
IDLE = "idle"
CELL = "cell"

_NUM = re.compile(r"^-?\d+(?:\.\d+)?$")


def parse_cpu_list(text: str | None) -> list[int]:
    """Kernel CPU lists: "0-3,6" or "0 1 2" (affected_cpus) -> [0, 1, 2, 3, 6]; "" -> []."""
    cpus: list[int] = []
    for part in re.split(r"[,\s]+", (text or "").strip()):
        if not part:
            continue
        low, _, high = part.partition("-")
        try:
            if high:
                cpus.extend(range(int(low), int(high) + 1))
            else:
                cpus.append(int(low))
        except ValueError:
            continue  # "<unknown>" and such: say nothing rather than something wrong
    return sorted(set(cpus))


# --- the readers: text in, records out ------------------------------------------------------------

def read_snapshots(text: str) -> list[Snapshot]:
    """Every snapshot in `text`, in order."""
    return [read_snapshot_lines(lines, label) for kind, label, lines in blocks(text) if kind == SNAPSHOT]


def read_snapshot(text: str) -> Snapshot | None:
    """The first snapshot in `text` (None when there is none)."""
    snaps = read_snapshots(text)
    return snaps[0] if snaps else None


def read_idle(text: str) -> IdleGate | None:
    """The idle gate's verdict (None when the text has no gate)."""
    for kind, _label, lines in blocks(text):
        if kind == IDLE:
            return _read_idle_lines(lines)
    return None


def read_cell(text: str) -> CellEvidence:
    """Evidence of one cell: the snapshots before and after it, and its run."""
    cell = CellEvidence()
    for kind, label, lines in blocks(text):
        if kind == SNAPSHOT and label == "cell-before":
            cell.before = read_snapshot_lines(lines, label)
        elif kind == SNAPSHOT and label == "cell-after":
            cell.after = read_snapshot_lines(lines, label)
        elif kind == CELL:
            cell.run = _read_run_lines(lines)
    return cell


# The stored form of a text's evidence, as HostResult.conditions holds it (empty: none in the text).

def parse_conditions(text: str) -> dict[str, object]:
    snap = read_snapshot(text)
    return snap.to_dict() if snap else {}


def parse_all_conditions(text: str) -> list[dict[str, object]]:
    return [snap.to_dict() for snap in read_snapshots(text)]


def parse_idle(text: str) -> dict[str, object]:
    gate = read_idle(text)
    return gate.to_dict() if gate else {}


def parse_cell(text: str) -> dict[str, object]:
    return read_cell(text).to_dict()


def read_snapshot_lines(lines: list[str], label: str = "") -> Snapshot:
    snap = Snapshot(label=label)
    section, name = "", ""
    for line in lines:
        if line.startswith(NOTE):
            snap.notes.append(line[len(NOTE):].strip())
            continue
        header = subsection(line)
        if header:
            section, name = header
            _open_section(snap, section, name)
            continue
        SECTION_READERS.get(section, _ignore)(snap, name, line)
    return snap


def _open_section(snap: Snapshot, section: str, name: str) -> None:
    """A section's header: its record exists from here on, even when no line of it follows."""
    if section == "cpufreq":
        _policy(snap, name)
    elif section == "time_in_state":
        _policy(snap, name).time_in_state = []
    elif section == "thermal":
        snap.thermal = snap.thermal if snap.thermal is not None else {}
        snap.thermal.setdefault(name, ThermalZone())
    elif section == "topology":
        snap.topology = snap.topology if snap.topology is not None else {}
        snap.topology.setdefault(name, {})
    elif section == "hybrid":
        snap.hybrid = snap.hybrid if snap.hybrid is not None else {}
    elif section == "crypto":
        snap.crypto = snap.crypto if snap.crypto is not None else []
    elif section == "swaps":
        snap.swaps = snap.swaps if snap.swaps is not None else []
    elif section == "openssl_engines":
        _openssl(snap, name).engines = []
    elif section == "openssl_providers":
        _openssl(snap, name).providers = []


def _policy(snap: Snapshot, name: str) -> Policy:
    snap.policies = snap.policies if snap.policies is not None else {}
    return snap.policies.setdefault(name, Policy())


def _openssl(snap: Snapshot, path: str) -> OpenSSLPlugins:
    if snap.openssl is None:
        snap.openssl = OpenSSLPlugins(path)
    return snap.openssl


def _key_value(line: str) -> tuple[str, str]:
    key, _, value = line.strip().partition(" ")
    return key, value.strip()


def _number(text: str) -> int | float | None:
    text = text.strip()
    if not _NUM.match(text):
        return None
    return float(text) if "." in text else int(text)


def _read_time(snap: Snapshot, _name: str, line: str) -> None:
    key, value = _key_value(line)
    if key == "epoch":
        snap.timestamp = _number(value)
    elif key == "uptime":
        snap.uptime = _number(value.split()[0]) if value else None


def _read_loadavg(snap: Snapshot, _name: str, line: str) -> None:
    key, value = _key_value(line)
    fields = value.split() if key == "loadavg" else line.split()
    try:
        snap.loadavg = [float(f) for f in fields[:3]]
    except ValueError:
        return
    if len(fields) > 3 and "/" in fields[3]:
        running, _, total = fields[3].partition("/")
        if running.isdigit() and total.isdigit():
            snap.running, snap.tasks = int(running), int(total)


def _read_stat(snap: Snapshot, _name: str, line: str) -> None:
    fields = line.split()
    if len(fields) >= 5 and fields[0].startswith("cpu") and all(f.isdigit() for f in fields[1:]):
        snap.cpu_times = snap.cpu_times if snap.cpu_times is not None else {}
        snap.cpu_times[fields[0]] = [int(f) for f in fields[1:]]


def _read_cpus(snap: Snapshot, _name: str, line: str) -> None:
    key, value = _key_value(line)
    if key in ("online", "offline", "present", "possible"):
        snap.cpus = snap.cpus or CpuSets()
        setattr(snap.cpus, key, parse_cpu_list(value))


def _read_cpufreq(snap: Snapshot, name: str, line: str) -> None:
    key, value = _key_value(line)
    policy = _policy(snap, name)
    if key in ("affected_cpus", "related_cpus"):
        setattr(policy, key, parse_cpu_list(value))
    elif key in FREQ_KEYS:
        number = _number(value)
        if isinstance(number, int):
            setattr(policy, key, number)  # kHz
    elif key == "scaling_available_governors":
        policy.scaling_available_governors = value.split()
    elif key in ("scaling_driver", "scaling_governor"):
        setattr(policy, key, value)
    elif key:
        policy.other[key] = value


def _read_time_in_state(snap: Snapshot, name: str, line: str) -> None:
    fields = line.split()
    steps = _policy(snap, name).time_in_state
    if steps is not None and len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
        steps.append((int(fields[0]), int(fields[1])))


def _read_thermal(snap: Snapshot, name: str, line: str) -> None:
    key, value = _key_value(line)
    zone = (snap.thermal or {}).get(name)
    if zone is None:
        return
    if key == "type":
        zone.type = value
    elif key == "temp":
        zone.temp_c = millidegrees_to_c(value)


def millidegrees_to_c(text: str) -> float | None:
    """Thermal zones report millidegrees ("45000"); a few old drivers report degrees ("45")."""
    number = _number(text)
    if number is None:
        return None
    celsius = number / 1000 if abs(number) >= 200 else float(number)
    return round(celsius, 1)


def _read_topology(snap: Snapshot, name: str, line: str) -> None:
    key, value = _key_value(line)
    number = _number(value)
    if key and isinstance(number, int) and snap.topology is not None and name in snap.topology:
        snap.topology[name][key] = number


_MEMINFO = {"MemTotal": "mem_total_kb", "MemAvailable": "mem_available_kb"}


def _read_meminfo(snap: Snapshot, _name: str, line: str) -> None:
    key, _, rest = line.partition(":")
    fields = rest.split()
    if not fields or not fields[0].isdigit():
        return
    kib = int(fields[0])
    if key in ("SwapTotal", "SwapFree"):
        swap = snap.swap = snap.swap or Swap()
        if key == "SwapTotal":
            swap.total_kb = kib
        else:
            swap.free_kb = kib
        if swap.total_kb is not None and swap.free_kb is not None:
            swap.used_kb = swap.total_kb - swap.free_kb
    elif key in _MEMINFO:
        snap.memory = snap.memory if snap.memory is not None else {}
        snap.memory[_MEMINFO[key]] = kib


def _read_swaps(snap: Snapshot, _name: str, line: str) -> None:
    fields = line.split()
    if len(fields) >= 4 and not line.startswith("Filename") and snap.swaps is not None:
        snap.swaps.append(SwapDevice(fields[0], fields[1], _number(fields[2]), _number(fields[3])))


def _read_throttled(snap: Snapshot, _name: str, line: str) -> None:
    match = re.search(r"throttled=(0x[0-9a-fA-F]+|\d+)", line)
    if match:
        snap.throttled = int(match.group(1), 0)


def _read_tools(snap: Snapshot, _name: str, line: str) -> None:
    key, value = _key_value(line)
    if key and value:
        snap.tools = snap.tools if snap.tools is not None else {}
        snap.tools[key] = value  # a bare name (no "/") is a shell builtin or BusyBox applet


def _read_hybrid(snap: Snapshot, _name: str, line: str) -> None:
    """`cpu_core 0-11` / `cpu_atom 12-19`: the CPUs of each core type of an Intel hybrid."""
    key, value = _key_value(line)
    if key and snap.hybrid is not None:
        snap.hybrid[key] = parse_cpu_list(value)


def _read_crypto(snap: Snapshot, _name: str, line: str) -> None:
    said = dict(field.split("=", 1) for field in line.split() if "=" in field)
    if "name" in said and snap.crypto is not None:
        prio = _number(said.get("priority", ""))
        snap.crypto.append(CryptoDriver(said["name"], said.get("driver"), prio if isinstance(prio, int) else None,
                                        said.get("type"), said.get("module")))


_ENGINE = re.compile(r"^\((\w+)\)\s*(.*)$")


def _read_engines(snap: Snapshot, _name: str, line: str) -> None:
    """`(devcrypto) /dev/crypto engine` then `     [ available ]` (engine -t)."""
    engines = snap.openssl.engines if snap.openssl else None
    if engines is None:
        return
    match = _ENGINE.match(line.strip())
    if match:
        engines.append(OpenSSLEngine(match.group(1), match.group(2).strip()))
    elif engines and "[" in line and "available" in line:
        engines[-1].available = "unavailable" not in line


def _read_providers(snap: Snapshot, _name: str, line: str) -> None:
    """`list -providers`: a provider id at 2 spaces, its `name:`/`status:` lines deeper."""
    providers = snap.openssl.providers if snap.openssl else None
    if providers is None:
        return
    if line.startswith("  ") and not line.startswith("    ") and line.strip():
        providers.append(OpenSSLProvider(line.strip()))
    elif providers and ":" in line and line.startswith("    "):
        key, _, value = line.strip().partition(":")
        if key in ("name", "version", "status"):
            setattr(providers[-1], key, value.strip())


def _ignore(_snap: Snapshot, _name: str, _line: str) -> None:
    pass


SectionReader = Callable[[Snapshot, str, str], None]

# conditions.sh's sections, each read by one function into its part of the Snapshot
SECTION_READERS: dict[str, SectionReader] = {
    "time": _read_time,
    "loadavg": _read_loadavg,
    "stat": _read_stat,
    "cpus": _read_cpus,
    "cpufreq": _read_cpufreq,
    "time_in_state": _read_time_in_state,
    "thermal": _read_thermal,
    "topology": _read_topology,
    "hybrid": _read_hybrid,
    "meminfo": _read_meminfo,
    "swaps": _read_swaps,
    "throttled": _read_throttled,
    "tools": _read_tools,
    "crypto": _read_crypto,
    "openssl_engines": _read_engines,
    "openssl_providers": _read_providers,
}


def _read_idle_lines(lines: list[str]) -> IdleGate:
    gate = IdleGate()
    for line in lines:
        if line.startswith(NOTE):
            gate.notes.append(line[len(NOTE):].strip())
            continue
        key, value = _key_value(line)
        pairs = dict(p.split("=", 1) for p in value.split() if "=" in p)
        if key == "params":
            gate.params = {k: _number(v) for k, v in pairs.items()}
        elif key == "sample":
            gate.samples.append(IdleSample(_number(pairs.get("waited", "")), _hundredths(pairs.get("load1")),
                                           _hundredths(pairs.get("cpu_centicores"))))
        elif key == "idle":
            word = value.split()[0] if value else ""
            # "skipped": the gate was turned off
            gate.outcome = {"yes": IdleOutcome.IDLE, "no": IdleOutcome.NOT_IDLE}.get(word, IdleOutcome.SKIPPED)
            gate.waited = _number(pairs.get("waited", ""))
            gate.reason = pairs.get("reason")
    return gate


def _hundredths(text: str | None) -> float | None:
    number = _number(text or "")
    return None if number is None else number / 100


def _read_run_lines(lines: list[str]) -> CellRun:
    run = CellRun()
    for line in lines:
        key, value = _key_value(line)
        fields = value.split()
        if key == "command":
            run.command = value
        elif key in ("children_before", "children_after") and len(fields) == 2 and all(f.isdigit() for f in fields):
            setattr(run, key, int(fields[0]) + int(fields[1]))  # user + system, clock ticks
        elif key in ("uptime_before", "uptime_after", "pid", "exit"):
            setattr(run, key, _number(fields[0]) if fields else None)
        elif key == "allowed":
            run.allowed_cpus = parse_cpu_list(value)
        elif key == "sample" and len(fields) >= 5:
            up, cpu, utime, stime = (_number(f) for f in fields[:4])
            if up is None or cpu is None or utime is None or stime is None:
                continue  # a line cut when the sampler was stopped
            run.samples.append(RunSample(up, cpu, utime + stime, " ".join(fields[4:])))
    return run
