"""conditions.sh (under dash, bash and BusyBox ash, over fake sysfs trees) and its parser."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from orchestrator.evidence.conditions import (
    blocks,
    millidegrees_to_c,
    parse_all_conditions,
    parse_cell,
    parse_conditions,
    parse_cpu_list,
    parse_idle,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "playbooks" / "files" / "conditions.sh"
DATA = ROOT / "tests" / "data" / "conditions"


# --- the script over fake trees, in every shell ----------------------------------------------------

def test_full_snapshot_of_a_big_little_board(posix_shell, tmp_path, make_sysroot, run_script, rk3576):
    root = make_sysroot(tmp_path / "rk3576", rk3576)
    out = run_script(posix_shell, root, "snapshot", "before")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    snap = parse_conditions(out.stdout)
    assert snap["label"] == "before"
    assert snap["loadavg"] == [0.04, 0.11, 0.09]
    assert snap["running"] == 1 and snap["tasks"] == 243
    assert sorted(snap["cpu_times"]) == ["cpu"] + [f"cpu{i}" for i in range(8)]
    assert snap["cpu_times"]["cpu"][:4] == [4705, 12, 3398, 2270135]
    big = snap["policies"]["policy4"]
    assert big["related_cpus"] == [4, 5, 6, 7]
    assert big["scaling_governor"] == "schedutil"
    assert big["cpuinfo_max_freq"] == 2304000 and big["scaling_max_freq"] == 2304000
    assert big["time_in_state"][-1] == [2304000, 1000]
    assert len(big["time_in_state"]) == len(rk3576["policies"]["policy4"]["time_in_state"])
    assert snap["policies"]["policy0"]["affected_cpus"] == [0, 1, 2, 3]
    assert snap["thermal"]["thermal_zone1"] == {"type": "bigcore-thermal", "temp_c": 39.7}
    assert snap["cpus"] == {"online": list(range(8)), "offline": [], "present": list(range(8)),
                            "possible": list(range(8))}
    assert snap["topology"]["cpu5"] == {"physical_package_id": 0, "cluster_id": 1, "core_id": 1, "cpu_capacity": 1024}
    assert snap["swap"] == {"total_kb": 4020000, "free_kb": 4020000, "used_kb": 0}
    assert snap["memory"]["mem_available_kb"] == 7500000
    assert snap["swaps"] == [{"device": "/dev/zram0", "type": "partition", "size_kb": 4020000, "used_kb": 0}]
    names = [(c["name"], c["driver"], c["priority"]) for c in snap["crypto"]]
    assert names == [("gcm(aes)", "gcm-aes-ce", 300), ("cbc(aes)", "cbc-aes-ce", 300), ("sha256", "sha256-ce", 200)]
    assert "no vcgencmd (not a Raspberry Pi firmware)" in snap["notes"]
    assert "throttled" not in snap
    assert json.loads(json.dumps(snap)) == snap  # goes into run.json unchanged


def test_every_missing_file_gives_a_note_not_an_error(posix_shell, tmp_path, make_sysroot, run_script):
    root = make_sysroot(tmp_path / "bare", {})  # only /proc/uptime exists
    out = run_script(posix_shell, root, "snapshot", "bare")
    assert out.returncode == 0
    assert out.stderr == ""
    snap = parse_conditions(out.stdout)
    for expected in ("no /proc/loadavg", "no /proc/stat", "no /proc/meminfo", "no /proc/crypto",
                     "no /proc/swaps", "no /sys/devices/system/cpu/online", "no /sys/devices/system/cpu/offline"):
        assert expected in snap["notes"]
    assert any(n.startswith("no /sys/devices/system/cpu/cpufreq policies") for n in snap["notes"])
    assert any(n.startswith("no /sys/class/thermal zones") for n in snap["notes"])
    assert "policies" not in snap and "thermal" not in snap and "loadavg" not in snap


def test_policy_without_stats_and_old_kernel_layout(posix_shell, tmp_path, make_sysroot, run_script):
    spec = {"cpus": {"online": "0-1", "offline": ""}}
    root = make_sysroot(tmp_path / "old", spec)
    # pre-4.3 kernels: no policyN directories, cpuN/cpufreq instead; no CONFIG_CPU_FREQ_STAT
    d = root / "sys/devices/system/cpu/cpu0/cpufreq"
    d.mkdir(parents=True)
    (d / "scaling_governor").write_text("ondemand\n")
    (d / "scaling_cur_freq").write_text("400000\n")
    (d / "related_cpus").write_text("0 1\n")
    snap = parse_conditions(run_script(posix_shell, root).stdout)
    assert snap["policies"]["cpu0"]["scaling_governor"] == "ondemand"
    assert snap["policies"]["cpu0"]["scaling_cur_freq"] == 400000
    assert snap["policies"]["cpu0"]["related_cpus"] == [0, 1]
    assert "no /sys/devices/system/cpu/cpu0/cpufreq/stats/time_in_state (kernel without CONFIG_CPU_FREQ_STAT)" in snap["notes"]
    assert "no /sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq" in snap["notes"]


def test_vcgencmd_get_throttled_is_recorded(posix_shell, tmp_path, make_sysroot, run_script):
    root = make_sysroot(tmp_path / "pi", {"cpus": {"online": "0-3"}})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "vcgencmd"
    # test stand-in for the Raspberry Pi firmware tool: prints what a Pi 4 on a weak supply prints
    fake.write_text('#!/bin/sh\n[ "$1" = get_throttled ] && echo "throttled=0x50005"\n')
    fake.chmod(0o755)
    snap = parse_conditions(run_script(posix_shell, root, path=f"{bin_dir}:/usr/bin:/bin").stdout)
    assert snap["throttled"] == 0x50005


@pytest.mark.skipif(not Path("/proc/crypto").is_file(), reason="no /proc/crypto on this machine")
def test_this_kernels_proc_crypto_keeps_every_cipher_entry_and_its_driver(posix_shell, tmp_path, make_sysroot,
                                                                           run_script):
    # the kernel's own /proc/crypto (copied: the script reads it under SYSROOT), walked by the script
    real = Path("/proc/crypto").read_text()
    root = make_sysroot(tmp_path / "here", {"crypto": real})
    snap = parse_conditions(run_script(posix_shell, root, "snapshot", "here").stdout)
    blocks = [dict((k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in block.splitlines()))
              for block in real.split("\n\n") if block.strip()]
    wanted = [b for b in blocks if any(word in b["name"] for word in ("aes", "gcm", "sha", "chacha", "poly1305",
                                                                      "ghash"))]
    assert wanted, "this kernel lists no AES/SHA entry: nothing to check"
    assert [(c["name"], c["driver"], c["priority"], c["type"]) for c in snap["crypto"]] == \
        [(b["name"], b["driver"], int(b["priority"]), b["type"]) for b in wanted]
    assert len(wanted) < len(blocks)  # the others (crc32c, lzo, rng...) are left out


def test_quick_snapshot_keeps_only_what_changes(posix_shell, tmp_path, make_sysroot, run_script, rk3576):
    root = make_sysroot(tmp_path / "rk", rk3576)
    snap = parse_conditions(run_script(posix_shell, root, "quick", "cell-before").stdout)
    assert snap["label"] == "cell-before"
    assert snap["policies"]["policy4"]["time_in_state"]
    assert snap["policies"]["policy4"]["related_cpus"] == [4, 5, 6, 7]
    assert snap["policies"]["policy4"]["scaling_max_freq"] == 2304000
    assert "cpuinfo_max_freq" not in snap["policies"]["policy4"]
    assert "crypto" not in snap and "topology" not in snap and "swap" not in snap


def test_cell_wrapper_to_stdout_puts_evidence_after_the_output(posix_shell, tmp_path):
    out = subprocess.run([*posix_shell, str(SCRIPT), "cell", "-", "--", "echo", "hello"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.startswith("hello\n")
    assert parse_cell(out.stdout)["run"]["command"] == "echo hello"


def test_usage_errors_exit_2(posix_shell):
    out = subprocess.run([*posix_shell, str(SCRIPT), "bogus"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 2 and "usage:" in out.stderr
    out = subprocess.run([*posix_shell, str(SCRIPT), "cell", "x"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 2


def test_script_has_no_bashisms():
    text = SCRIPT.read_text()
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for bashism in ("[[", "+=", "<<<", "function ", "local ", "declare ", "${!", "$'"):
        assert bashism not in code, bashism


# --- the parser on captured texts ------------------------------------------------------------------

def test_cpu_lists():
    assert parse_cpu_list("0-3,6") == [0, 1, 2, 3, 6]
    assert parse_cpu_list("4 5 6 7") == [4, 5, 6, 7]
    assert parse_cpu_list("") == []
    assert parse_cpu_list("<unknown>") == []


def test_temperatures_in_millidegrees_or_degrees():
    assert millidegrees_to_c("45000") == 45.0
    assert millidegrees_to_c("-5500") == -5.5
    assert millidegrees_to_c("52") == 52.0  # old drivers report whole degrees
    assert millidegrees_to_c("N/A") is None


def test_real_capture_from_this_debian_vm():
    snap = parse_conditions((DATA / "debian12-x86_64-vm-snapshot.txt").read_text())
    assert snap["cpus"]["online"] == [0, 1]
    assert "policies" not in snap
    assert any("cpufreq" in n for n in snap["notes"])
    assert snap["tools"]["taskset"] == "/usr/bin/taskset"
    assert snap["topology"]["cpu0"]["cluster_id"] == 65535


def test_snapshot_inside_other_output_and_cut_short():
    text = ("TASK [bench] ****\nok: [r1] => \n" + (DATA / "rk3576-before.txt").read_text()
            + "PLAY RECAP\n@@ begin sslbench-conditions 1 after\n@@ loadavg\nloadavg 2.00 1.00 0.50 3/100 1\n@@ thermal thermal_zone0\ntype soc-thermal\n")
    snaps = parse_all_conditions(text)
    assert [s["label"] for s in snaps] == ["before", "after"]
    assert snaps[1]["loadavg"] == [2.0, 1.0, 0.5]
    assert snaps[1]["thermal"] == {"thermal_zone0": {"type": "soc-thermal"}}
    assert [kind for kind, _, _ in blocks(text)] == ["conditions", "conditions"]


def test_cell_sample_cut_when_the_sampler_was_stopped():
    text = ("@@ begin sslbench-cell 1 run\ncommand openssl speed\nchildren_before 0 0\n"
            "sample 10.00 3 0 0 taskset\nsample 11.00 3 98 1 openssl\nsample 12.0\n"
            "children_after 199 2\nexit 0\n@@ end sslbench-cell\n")
    run = parse_cell(text)["run"]
    assert run["samples"] == [{"uptime": 10.0, "cpu": 3, "ticks": 0, "comm": "taskset"},
                              {"uptime": 11.0, "cpu": 3, "ticks": 99, "comm": "openssl"}]
    assert run["children_after"] == 201 and run["exit"] == 0


def test_idle_absent_gives_empty():
    assert parse_idle("nothing here") == {}
    assert parse_conditions("") == {}


def test_before_and_after_are_snapshot_labels(posix_shell, tmp_path, make_sysroot, run_script):
    root = make_sysroot(tmp_path / "r", {"loadavg": "0.50 0.40 0.30 1/10 5"})
    for label in ("before", "after"):
        snap = parse_conditions(run_script(posix_shell, root, label).stdout)
        assert snap["label"] == label and snap["loadavg"] == [0.5, 0.4, 0.3]


def test_openssl_engines_and_providers(posix_shell, tmp_path, make_sysroot):
    root = make_sysroot(tmp_path / "r", {})
    fake = tmp_path / "openssl-1.1.1"
    # stand-in for an OpenWrt openssl 1.1.1 with the devcrypto engine: no `list -providers`
    fake.write_text('#!/bin/sh\nif [ "$1" = engine ]; then\n'
                    'echo "(devcrypto) /dev/crypto engine"; echo "     [ available ]"\n'
                    'echo "(dynamic) Dynamic engine loading support"; echo "     [ unavailable ]"\n'
                    'else echo "list: Unknown option: -providers" >&2; exit 1; fi\n')
    fake.chmod(0o755)
    env_path = "/usr/bin:/bin"
    out = subprocess.run([*posix_shell, str(SCRIPT)], capture_output=True, text=True, timeout=30,
                         env={"PATH": env_path, "SSLBENCH_SYSROOT": str(root), "SSLBENCH_OPENSSL": str(fake)})
    snap = parse_conditions(out.stdout)
    assert snap["openssl"] == {"path": str(fake), "providers": [],
                               "engines": [{"id": "devcrypto", "name": "/dev/crypto engine", "available": True},
                                           {"id": "dynamic", "name": "Dynamic engine loading support",
                                            "available": False}]}
    assert "openssl list -providers failed (OpenSSL before 3.0)" in snap["notes"]
    out = subprocess.run([*posix_shell, str(SCRIPT)], capture_output=True, text=True, timeout=30,
                         env={"PATH": str(tmp_path / "none"), "SSLBENCH_SYSROOT": str(root)})
    assert "no openssl (engines and providers unknown)" in parse_conditions(out.stdout)["notes"]


def test_real_capture_names_the_openssl_provider():
    snap = parse_conditions((DATA / "debian12-x86_64-vm-snapshot.txt").read_text())
    assert snap["openssl"]["providers"][0]["id"] == "default"
    assert snap["openssl"]["providers"][0]["status"] == "active"


def test_script_survives_jinja():
    # the playbook embeds the script through Ansible's templating: no Jinja markers in it
    text = SCRIPT.read_text()
    for marker in ("{{", "{%", "{#"):
        assert marker not in text, marker


def test_idle_gate_turned_off(posix_shell, tmp_path, make_sysroot, run_script, rk3576):
    root = make_sysroot(tmp_path / "r", rk3576)
    gate = parse_idle(run_script(posix_shell, root, "idle-wait", "0", "0.3").stdout)
    assert gate["idle"] is None and gate["reason"] == "disabled" and gate["samples"] == []


def test_a_2_4_kernels_short_stat_lines(posix_shell, tmp_path, make_sysroot, run_script, rk3576):
    # Linux 2.4's cpu lines stop after idle (no iowait, irq, softirq, steal): the missing fields count as 0, and
    # neither the snapshot nor the idle gate's arithmetic stops the script
    spec = dict(rk3576, stat=["cpu  4705 12 3398 2270135", "cpu0 2000 6 1700 1135000", "cpu1 2705 6 1698 1135135"])
    root = make_sysroot(tmp_path / "old", spec)
    snap = parse_conditions(run_script(posix_shell, root, "quick").stdout)
    assert snap["cpu_times"]["cpu"][:4] == [4705, 12, 3398, 2270135] and "cpu1" in snap["cpu_times"]
    out = run_script(posix_shell, root, "idle-wait", "1", "0.3", "30", "1")
    assert out.returncode == 0, out.stderr
    assert parse_idle(out.stdout)["samples"] == [{"waited": 1, "load1": 0.04, "cpu_cores": 0.0}]
