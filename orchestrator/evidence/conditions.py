"""Read what playbooks/files/conditions.sh printed: snapshots, idle gates and cell evidence.

Pure text in, plain JSON-ready dicts out (string keys, lists, numbers), so the result can go
straight into `HostResult.conditions` and come back from run.json unchanged.  Anything the
host did not have is simply absent, and the script's `note:` lines are kept.

The text may come wrapped in other output (Ansible stdout, a whole cell log): only the lines of its
`@@ begin sslbench-<kind>` … `@@ end` blocks are read (orchestrator/parse/protocol.py splits them).
"""
from __future__ import annotations

import re
from typing import Any

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


def parse_conditions(text: str) -> dict[str, Any]:
    """The first snapshot in `text` (empty dict when there is none)."""
    snaps = parse_all_conditions(text)
    return snaps[0] if snaps else {}


def parse_all_conditions(text: str) -> list[dict[str, Any]]:
    return [parse_snapshot_lines(lines, label) for kind, label, lines in blocks(text) if kind == SNAPSHOT]


def parse_idle(text: str) -> dict[str, Any]:
    """The idle gate's verdict: {"idle": bool|None, "waited": s, "reason": ..., "samples": [...]}."""
    for kind, _label, lines in blocks(text):
        if kind == IDLE:
            return _parse_idle_lines(lines)
    return {}


def parse_cell(text: str) -> dict[str, Any]:
    """Evidence of one cell: {"before": snapshot, "run": {...}, "after": snapshot}."""
    result: dict[str, Any] = {}
    for kind, label, lines in blocks(text):
        if kind == SNAPSHOT and label == "cell-before":
            result["before"] = parse_snapshot_lines(lines, label)
        elif kind == SNAPSHOT and label == "cell-after":
            result["after"] = parse_snapshot_lines(lines, label)
        elif kind == CELL:
            result["run"] = _parse_run_lines(lines)
    return result


def parse_snapshot_lines(lines: list[str], label: str = "") -> dict[str, Any]:
    snap: dict[str, Any] = {"label": label, "notes": []}
    section, name = "", ""
    for line in lines:
        if line.startswith(NOTE):
            snap["notes"].append(line[len(NOTE):].strip())
            continue
        header = subsection(line)
        if header:
            section, name = header
            _open_section(snap, section, name)
            continue
        SECTION_READERS.get(section, _ignore)(snap, name, line)
    return snap


def _open_section(snap: dict[str, Any], section: str, name: str) -> None:
    if section == "cpufreq":
        snap.setdefault("policies", {}).setdefault(name, {})
    elif section == "time_in_state":
        snap.setdefault("policies", {}).setdefault(name, {})["time_in_state"] = []
    elif section == "thermal":
        snap.setdefault("thermal", {}).setdefault(name, {})
    elif section == "topology":
        snap.setdefault("topology", {}).setdefault(name, {})
    elif section == "hybrid":
        snap.setdefault("hybrid", {})
    elif section == "crypto":
        snap.setdefault("crypto", [])
    elif section == "swaps":
        snap.setdefault("swaps", [])
    elif section == "openssl_engines":
        snap.setdefault("openssl", {"path": name})["engines"] = []
    elif section == "openssl_providers":
        snap.setdefault("openssl", {"path": name})["providers"] = []


def _key_value(line: str) -> tuple[str, str]:
    key, _, value = line.strip().partition(" ")
    return key, value.strip()


def _number(text: str) -> int | float | None:
    text = text.strip()
    if not _NUM.match(text):
        return None
    return float(text) if "." in text else int(text)


def _read_time(snap: dict[str, Any], _name: str, line: str) -> None:
    key, value = _key_value(line)
    if key == "epoch":
        snap["timestamp"] = _number(value)
    elif key == "uptime":
        snap["uptime"] = _number(value.split()[0]) if value else None


def _read_loadavg(snap: dict[str, Any], _name: str, line: str) -> None:
    key, value = _key_value(line)
    fields = value.split() if key == "loadavg" else line.split()
    try:
        snap["loadavg"] = [float(f) for f in fields[:3]]
    except ValueError:
        return
    if len(fields) > 3 and "/" in fields[3]:
        running, _, total = fields[3].partition("/")
        if running.isdigit() and total.isdigit():
            snap["running"], snap["tasks"] = int(running), int(total)


def _read_stat(snap: dict[str, Any], _name: str, line: str) -> None:
    fields = line.split()
    if len(fields) >= 5 and fields[0].startswith("cpu") and all(f.isdigit() for f in fields[1:]):
        snap.setdefault("cpu_times", {})[fields[0]] = [int(f) for f in fields[1:]]


def _read_cpus(snap: dict[str, Any], _name: str, line: str) -> None:
    key, value = _key_value(line)
    if key in ("online", "offline", "present", "possible"):
        snap.setdefault("cpus", {})[key] = parse_cpu_list(value)


_FREQ_KEYS = {"cpuinfo_min_freq", "cpuinfo_max_freq", "scaling_min_freq", "scaling_max_freq", "scaling_cur_freq"}


def _read_cpufreq(snap: dict[str, Any], name: str, line: str) -> None:
    key, value = _key_value(line)
    policy = snap.setdefault("policies", {}).setdefault(name, {})
    if key in ("affected_cpus", "related_cpus"):
        policy[key] = parse_cpu_list(value)
    elif key in _FREQ_KEYS:
        number = _number(value)
        if isinstance(number, int):
            policy[key] = number  # kHz
    elif key == "scaling_available_governors":
        policy[key] = value.split()
    elif key:
        policy[key] = value


def _read_time_in_state(snap: dict[str, Any], name: str, line: str) -> None:
    fields = line.split()
    if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
        # [kHz, time in 10 ms units]: a list of pairs, so it survives JSON unchanged
        snap["policies"][name]["time_in_state"].append([int(fields[0]), int(fields[1])])


def _read_thermal(snap: dict[str, Any], name: str, line: str) -> None:
    key, value = _key_value(line)
    zone = snap["thermal"][name]
    if key == "type":
        zone["type"] = value
    elif key == "temp":
        zone["temp_c"] = millidegrees_to_c(value)


def millidegrees_to_c(text: str) -> float | None:
    """Thermal zones report millidegrees ("45000"); a few old drivers report degrees ("45")."""
    number = _number(text)
    if number is None:
        return None
    celsius = number / 1000 if abs(number) >= 200 else float(number)
    return round(celsius, 1)


def _read_topology(snap: dict[str, Any], name: str, line: str) -> None:
    key, value = _key_value(line)
    number = _number(value)
    if key and isinstance(number, int):
        snap["topology"][name][key] = number


def _read_meminfo(snap: dict[str, Any], _name: str, line: str) -> None:
    key, _, rest = line.partition(":")
    fields = rest.split()
    if not fields or not fields[0].isdigit():
        return
    kib = int(fields[0])
    wanted = {"MemTotal": "mem_total_kb", "MemAvailable": "mem_available_kb",
              "SwapTotal": "total_kb", "SwapFree": "free_kb"}
    if key in ("SwapTotal", "SwapFree"):
        swap = snap.setdefault("swap", {})
        swap[wanted[key]] = kib
        if "total_kb" in swap and "free_kb" in swap:
            swap["used_kb"] = swap["total_kb"] - swap["free_kb"]
    elif key in wanted:
        snap.setdefault("memory", {})[wanted[key]] = kib


def _read_swaps(snap: dict[str, Any], _name: str, line: str) -> None:
    fields = line.split()
    if len(fields) >= 4 and not line.startswith("Filename"):
        snap["swaps"].append({"device": fields[0], "type": fields[1],
                              "size_kb": _number(fields[2]), "used_kb": _number(fields[3])})


def _read_throttled(snap: dict[str, Any], _name: str, line: str) -> None:
    match = re.search(r"throttled=(0x[0-9a-fA-F]+|\d+)", line)
    if match:
        snap["throttled"] = int(match.group(1), 0)


def _read_tools(snap: dict[str, Any], _name: str, line: str) -> None:
    key, value = _key_value(line)
    if key and value:
        snap.setdefault("tools", {})[key] = value  # a bare name (no "/") is a shell builtin or BusyBox applet


def _read_hybrid(snap: dict[str, Any], _name: str, line: str) -> None:
    """`cpu_core 0-11` / `cpu_atom 12-19`: the CPUs of each core type of an Intel hybrid."""
    key, value = _key_value(line)
    if key:
        snap["hybrid"][key] = parse_cpu_list(value)


def _read_crypto(snap: dict[str, Any], _name: str, line: str) -> None:
    entry: dict[str, Any] = {}
    for field in line.split():
        key, sep, value = field.partition("=")
        if sep:
            entry[key] = value
    if "name" in entry:
        prio = _number(entry.get("priority", ""))
        entry["priority"] = prio if isinstance(prio, int) else None
        snap["crypto"].append(entry)


_ENGINE = re.compile(r"^\((\w+)\)\s*(.*)$")


def _read_engines(snap: dict[str, Any], _name: str, line: str) -> None:
    """`(devcrypto) /dev/crypto engine` then `     [ available ]` (engine -t)."""
    engines = snap["openssl"]["engines"]
    match = _ENGINE.match(line.strip())
    if match:
        engines.append({"id": match.group(1), "name": match.group(2).strip(), "available": None})
    elif engines and "[" in line and "available" in line:
        engines[-1]["available"] = "unavailable" not in line


def _read_providers(snap: dict[str, Any], _name: str, line: str) -> None:
    """`list -providers`: a provider id at 2 spaces, its `name:`/`status:` lines deeper."""
    providers = snap["openssl"]["providers"]
    if line.startswith("  ") and not line.startswith("    ") and line.strip():
        providers.append({"id": line.strip()})
    elif providers and ":" in line and line.startswith("    "):
        key, _, value = line.strip().partition(":")
        if key in ("name", "version", "status"):
            providers[-1][key] = value.strip()


def _ignore(_snap: dict[str, Any], _name: str, _line: str) -> None:
    pass


SECTION_READERS = {
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


def _parse_idle_lines(lines: list[str]) -> dict[str, Any]:
    gate: dict[str, Any] = {"idle": None, "samples": [], "notes": []}
    for line in lines:
        if line.startswith("note: "):
            gate["notes"].append(line[6:].strip())
            continue
        key, value = _key_value(line)
        pairs = dict(p.split("=", 1) for p in value.split() if "=" in p)
        if key == "params":
            gate["params"] = {k: _number(v) for k, v in pairs.items()}
        elif key == "sample":
            gate["samples"].append({
                "waited": _number(pairs.get("waited", "")),
                "load1": _hundredths(pairs.get("load1")),
                "cpu_cores": _hundredths(pairs.get("cpu_centicores")),
            })
        elif key == "idle":
            word = value.split()[0] if value else ""
            gate["idle"] = {"yes": True, "no": False}.get(word)  # "skipped": the gate was turned off
            gate["waited"] = _number(pairs.get("waited", ""))
            gate["reason"] = pairs.get("reason")
    return gate


def _hundredths(text: str | None) -> float | None:
    number = _number(text or "")
    return None if number is None else number / 100


def _parse_run_lines(lines: list[str]) -> dict[str, Any]:
    run: dict[str, Any] = {"samples": []}
    for line in lines:
        key, value = _key_value(line)
        fields = value.split()
        if key == "command":
            run["command"] = value
        elif key in ("children_before", "children_after") and len(fields) == 2 and all(f.isdigit() for f in fields):
            run[key] = int(fields[0]) + int(fields[1])  # user + system, clock ticks
        elif key in ("uptime_before", "uptime_after", "pid", "exit"):
            run[key] = _number(fields[0]) if fields else None
        elif key == "allowed":
            run["allowed_cpus"] = parse_cpu_list(value)
        elif key == "sample" and len(fields) >= 5:
            up, cpu, utime, stime = (_number(f) for f in fields[:4])
            if up is None or cpu is None or utime is None or stime is None:
                continue  # a line cut when the sampler was stopped
            run["samples"].append({"uptime": up, "cpu": cpu, "ticks": utime + stime, "comm": " ".join(fields[4:])})
    return run


# --- typed readers of the parsed evidence ---------------------------------------------------------
# The dicts above go through run.json and back, so a reader cannot trust their shape: a section the host
# did not have is absent, a hand-edited or older run.json may hold null.  These readers are the one place
# that knows the layout; the judges (clusters, validity, insights) use them instead of `.get(...)` chains.

def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def online_cpus(snapshot: dict[str, Any]) -> list[int]:
    return _list(_dict(snapshot.get("cpus")).get("online"))


def cpu_set(snapshot: dict[str, Any], which: str) -> list[int] | None:
    """`online`, `offline`, `present` or `possible` from /sys/devices/system/cpu; None when not read."""
    value = _dict(snapshot.get("cpus")).get(which)
    return value if isinstance(value, list) else None


def policies(snapshot: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """cpufreq policies by name (policy0, cpu0 on old kernels)."""
    return {name: _dict(pol) for name, pol in _dict(snapshot.get("policies")).items()}


def policy(snapshot: dict[str, Any], name: str) -> dict[str, Any]:
    return _dict(_dict(snapshot.get("policies")).get(name))


def policy_cpus(pol: dict[str, Any]) -> list[int]:
    """The CPUs a cpufreq policy clocks (related_cpus, else affected_cpus)."""
    return _list(pol.get("related_cpus")) or _list(pol.get("affected_cpus"))


def time_in_state(pol: dict[str, Any]) -> list[list[int]]:
    """[[kHz, time in 10 ms units], ...] of one policy."""
    return _list(pol.get("time_in_state"))


def topology(snapshot: dict[str, Any]) -> dict[str, dict[str, int]]:
    """/sys/devices/system/cpu/cpuN/topology numbers (and cpu_capacity) by `cpuN`."""
    return {name: _dict(topo) for name, topo in _dict(snapshot.get("topology")).items()}


def hybrid_cpus(snapshot: dict[str, Any]) -> dict[str, list[int]]:
    """The CPUs of each core type of an Intel hybrid, by PMU name (cpu_core, cpu_atom)."""
    return {pmu: _list(cpus) for pmu, cpus in _dict(snapshot.get("hybrid")).items()}


def cpu_times(snapshot: dict[str, Any]) -> dict[str, list[int]]:
    """/proc/stat's cpu lines in USER_HZ ticks: "cpu" (all) and "cpuN"."""
    return {name: _list(ticks) for name, ticks in _dict(snapshot.get("cpu_times")).items()}


def thermal_zones(snapshot: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: _dict(zone) for name, zone in _dict(snapshot.get("thermal")).items()}


def swap_used_kb(snapshot: dict[str, Any]) -> int | None:
    used = _dict(snapshot.get("swap")).get("used_kb")
    return used if isinstance(used, int) else None


def tools(snapshot: dict[str, Any]) -> dict[str, str]:
    """The host's helper tools by name and where they are (a bare name: a builtin or BusyBox applet)."""
    return _dict(snapshot.get("tools"))


def crypto_drivers(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """/proc/crypto entries: name, driver, priority."""
    return [_dict(entry) for entry in _list(snapshot.get("crypto"))]


def openssl_engines(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    return [_dict(e) for e in _list(_dict(snapshot.get("openssl")).get("engines"))]


def openssl_providers(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    return [_dict(p) for p in _list(_dict(snapshot.get("openssl")).get("providers"))]


def cell_run(cell: dict[str, Any]) -> dict[str, Any]:
    """What the cell wrapper recorded of the benchmark process (parse_cell's "run")."""
    return _dict(cell.get("run"))


def cell_snapshot(cell: dict[str, Any], when: str) -> dict[str, Any]:
    """The snapshot taken `before` or `after` a cell."""
    return _dict(cell.get(when))


def run_samples(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The wrapper's samples of the benchmark process: uptime, cpu, ticks, comm."""
    return [_dict(s) for s in _list(run.get("samples"))]


def process_samples(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The samples of the benchmark itself: the first one can catch `taskset` before it set the mask and exec'd."""
    samples = run_samples(run)
    if len(samples) > 1 and samples[0].get("comm") != samples[-1].get("comm"):
        samples = samples[1:]
    return samples


def observed_cpus(run: dict[str, Any]) -> list[int]:
    """The CPUs the benchmark process was seen on (the `processor` field of /proc/PID/stat per sample)."""
    return sorted({s["cpu"] for s in process_samples(run) if isinstance(s.get("cpu"), int)})


def allowed_cpus(run: dict[str, Any]) -> list[int]:
    """The kernel's Cpus_allowed_list of the benchmark process."""
    return _list(run.get("allowed_cpus"))


def run_command(run: dict[str, Any]) -> str:
    command = run.get("command")
    return command if isinstance(command, str) else ""


# HostResult.conditions as the run stores it: the snapshots above plus the judges' verdicts.

def cell_verdicts(conditions: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each cell's verdict ({"flags", "reasons", "facts"}) by cell id."""
    return {cell: _dict(v) for cell, v in _dict(conditions.get("cells")).items()}


def verdict_facts(verdict: dict[str, Any]) -> dict[str, Any]:
    return _dict(verdict.get("facts"))


def host_verdict_facts(conditions: dict[str, Any]) -> dict[str, Any]:
    return verdict_facts(_dict(conditions.get("verdict")))
