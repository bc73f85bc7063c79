"""Read what playbooks/files/conditions.sh printed: snapshots, idle gates and cell evidence.

Pure text in, plain JSON-ready dicts out (string keys, lists, numbers), so the result can go
straight into `HostResult.conditions` and come back from run.json unchanged.  Anything the
host did not have is simply absent, and the script's `note:` lines are kept.

The text may come wrapped in other output (Ansible stdout, a whole cell log): only the lines of its
`@@ begin sslbench-<kind>` … `@@ end` blocks are read (orchestrator/protocol.py splits them).
"""
from __future__ import annotations

import re
from typing import Any

from orchestrator.protocol import NOTE, blocks, subsection

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
