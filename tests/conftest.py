"""Shared test helpers: golden files of whole outputs (as benchstat's tests keep them); the benchmarks' store
generator."""
from __future__ import annotations

import copy
import csv
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def golden():
    """golden("name.txt", text): the text must equal tests/golden/name.txt byte for byte.
    SSLBENCH_UPDATE_GOLDEN=1 rewrites the file instead (then read the diff before committing it)."""

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if os.environ.get("SSLBENCH_UPDATE_GOLDEN") == "1":
            path.write_text(text)
            return
        assert path.exists(), f"no golden file {path}: run with SSLBENCH_UPDATE_GOLDEN=1 and read it"
        assert text == path.read_text(), f"output differs from {path}"

    return check


@pytest.fixture(scope="session")
def fleet_history() -> ModuleType:
    """benchmarks/fleet_history.py: months of nightly runs of a fleet with planted firmware steps and drifts."""
    spec = importlib.util.spec_from_file_location("fleet_history", BENCHMARKS / "fleet_history.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module

# ---- conditions.sh over fake /proc and /sys trees, in every POSIX shell here (tests/unit/test_conditions.py,
# tests/integration/test_conditions_shells.py) ---------------------------------------------------------------

CONDITIONS_SH = Path(__file__).resolve().parents[1] / "playbooks" / "files" / "conditions.sh"


def _posix_shells() -> list[list[str]]:
    found = []
    for shell in ("dash", "bash"):
        if shutil.which(shell):
            found.append([shutil.which(shell)])
    if shutil.which("busybox"):
        found.append([shutil.which("busybox"), "ash"])
    return found


_POSIX_SHELLS = _posix_shells()

# RK3576 (Cortex-A53 x4 + Cortex-A72 x4): the clock steps of sbc-bench's armsom-sige5 report.
_A53_STEPS = (408000, 600000, 816000, 1008000, 1200000, 1416000, 1608000, 1800000, 2016000, 2208000)
_A72_STEPS = (408000, 600000, 816000, 1008000, 1200000, 1416000, 1608000, 1800000, 2016000, 2208000, 2304000)

_RK3576: dict[str, Any] = {
    "cpus": {"online": "0-7", "offline": "", "present": "0-7", "possible": "0-7"},
    "loadavg": "0.04 0.11 0.09 1/243 1822",
    "stat": ["cpu  4705 12 3398 2270135 611 0 152 0 0 0"]
    + [f"cpu{i} {500 + i} 1 {400 + i} 283700 70 0 19 0 0 0" for i in range(8)],
    "policies": {
        "policy0": {"related_cpus": "0 1 2 3", "affected_cpus": "0 1 2 3", "scaling_governor": "schedutil",
                    "scaling_driver": "cpufreq-dt", "cpuinfo_min_freq": "408000", "cpuinfo_max_freq": "2208000",
                    "scaling_min_freq": "408000", "scaling_max_freq": "2208000", "scaling_cur_freq": "408000",
                    "time_in_state": [(f, 1000) for f in _A53_STEPS]},
        "policy4": {"related_cpus": "4 5 6 7", "affected_cpus": "4 5 6 7", "scaling_governor": "schedutil",
                    "scaling_driver": "cpufreq-dt", "cpuinfo_min_freq": "408000", "cpuinfo_max_freq": "2304000",
                    "scaling_min_freq": "408000", "scaling_max_freq": "2304000", "scaling_cur_freq": "600000",
                    "time_in_state": [(f, 1000) for f in _A72_STEPS]},
    },
    "thermal": {"thermal_zone0": ("soc-thermal", "38800"), "thermal_zone1": ("bigcore-thermal", "39700"),
                "thermal_zone2": ("little_core-thermal", "38800"), "thermal_zone3": ("gpu-thermal", "37900"),
                "thermal_zone4": ("npu-thermal", "37900"), "thermal_zone5": ("ddr-thermal", "38800")},
    "topology": {i: {"physical_package_id": "0", "cluster_id": str(i // 4), "core_id": str(i % 4),
                     "cpu_capacity": "530" if i < 4 else "1024"} for i in range(8)},
    "meminfo": ["MemTotal:        8040000 kB", "MemFree:         7000000 kB", "MemAvailable:    7500000 kB",
                "SwapTotal:       4020000 kB", "SwapFree:        4020000 kB"],
    "swaps": ["Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority",
              "/dev/zram0                              partition\t4020000\t\t0\t\t100"],
    "crypto": (
        "name         : gcm(aes)\ndriver       : gcm-aes-ce\nmodule       : kernel\npriority     : 300\n"
        "refcnt       : 1\nselftest     : passed\ninternal     : no\ntype         : aead\n\n"
        "name         : cbc(aes)\ndriver       : cbc-aes-ce\nmodule       : kernel\npriority     : 300\n"
        "type         : skcipher\n\n"
        "name         : crc32c\ndriver       : crc32c-generic\nmodule       : kernel\npriority     : 100\n"
        "type         : shash\n\n"
        "name         : sha256\ndriver       : sha256-ce\nmodule       : sha2_ce\npriority     : 200\n"
        "type         : shash\n"  # the last entry has no blank line after it
    ),
}


def _make_sysroot(root: Path, spec: dict[str, Any]) -> Path:
    """A fake /proc and /sys with only what `spec` names (everything else is missing)."""
    proc, cpu = root / "proc", root / "sys/devices/system/cpu"
    proc.mkdir(parents=True)
    cpu.mkdir(parents=True)
    (proc / "uptime").write_text("2839.50 21734.20\n")
    if "loadavg" in spec:
        (proc / "loadavg").write_text(spec["loadavg"] + "\n")
    if "stat" in spec:
        (proc / "stat").write_text("\n".join(spec["stat"]) + "\nintr 1 2 3\nctxt 99\n")
    if "meminfo" in spec:
        (proc / "meminfo").write_text("\n".join(spec["meminfo"]) + "\n")
    if "swaps" in spec:
        (proc / "swaps").write_text("\n".join(spec["swaps"]) + "\n")
    if "crypto" in spec:
        (proc / "crypto").write_text(spec["crypto"])
    for name, value in spec.get("cpus", {}).items():
        (cpu / name).write_text(value + "\n")
    for name, pol in spec.get("policies", {}).items():
        d = cpu / "cpufreq" / name
        d.mkdir(parents=True)
        for key, value in pol.items():
            if key == "time_in_state":
                (d / "stats").mkdir()
                (d / "stats/time_in_state").write_text("".join(f"{f} {t}\n" for f, t in value))
            else:
                (d / key).write_text(value + "\n")
    for zone, (kind, temp) in spec.get("thermal", {}).items():
        z = root / "sys/class/thermal" / zone
        z.mkdir(parents=True)
        (z / "type").write_text(kind + "\n")
        (z / "temp").write_text(temp + "\n")
    for n, files in spec.get("topology", {}).items():
        t = cpu / f"cpu{n}" / "topology"
        t.mkdir(parents=True)
        for key, value in files.items():
            (t.parent if key in ("cpu_capacity", "online") else t).joinpath(key).write_text(value + "\n")
    return root


def _run_conditions(shell: list[str], sysroot: Path | None, *args: str, path: str | None = None,
                    timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {"PATH": path or "/usr/bin:/bin", "LC_ALL": "C"}
    if sysroot is not None:
        env["SSLBENCH_SYSROOT"] = str(sysroot)
    return subprocess.run([*shell, str(CONDITIONS_SH), *args], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture(params=_POSIX_SHELLS, ids=lambda argv: " ".join([Path(argv[0]).name, *argv[1:]]))
def posix_shell(request: pytest.FixtureRequest) -> list[str]:
    """The command line of each POSIX shell found here: dash, bash, BusyBox ash (the hosts' narrowest)."""
    return list(request.param)


@pytest.fixture
def rk3576() -> dict[str, Any]:
    """The fake tree of an RK3576 board (make_sysroot's spec), a copy a test may change."""
    return copy.deepcopy(_RK3576)


@pytest.fixture
def make_sysroot() -> Callable[[Path, dict[str, Any]], Path]:
    """make_sysroot(root, spec): a fake /proc and /sys with only what `spec` names."""
    return _make_sysroot


@pytest.fixture
def run_script() -> Callable[..., subprocess.CompletedProcess[str]]:
    """run_script(shell, sysroot, *args, path=None, timeout=30): conditions.sh run over the fake tree."""
    return _run_conditions


# ---- output no reader acts on (tests/unit/test_textsafe.py, tests/integration/test_hostile_and_tty.py) ---------

# What a terminal acts on: C0 controls but LF, DEL, C1 controls, and the bidirectional overrides and isolates
_ACTING = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _check_inert(text: str, fmt: str) -> None:
    """Nothing in `text` acts on a terminal, a spreadsheet, a Markdown or HTML renderer."""
    assert not _ACTING.search(text), repr(_ACTING.search(text))
    if fmt == "csv":
        for row in csv.reader(io.StringIO(text)):
            for value in row:
                assert not value.startswith(("=", "+", "-", "@", "\t", "\r")) or value == "-" \
                    or re.fullmatch(r"[+-][\d.,]+%?", value), value
    if fmt == "markdown":
        assert not re.search(r"(?<!\\)<(script|img)", text) and not re.search(r"(?<!\\)\|cmd", text)
    if fmt == "html":
        from orchestrator.render import site_index  # (conftest imports no project module at its top)

        text = text.replace(f"<script>{site_index.SCRIPT}</script>", "")  # the index's sorting, written by us
        assert "<script" not in text and "<img src=x" not in text


@pytest.fixture
def check_inert() -> Callable[[str, str], None]:
    """check_inert(text, fmt): the one check of every output format (table, markdown, csv, json, html)."""
    return _check_inert
