"""`sslbench run` end to end on this machine (ansible_connection: local) with a tiny matrix."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.model import HOST_FAILED, HOST_OK, OK
from orchestrator.run.stages import work_dir

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl on this machine")]

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
# --idle-wait 2: the gate runs (one 2-s sample) without holding the suite up on a busy CI machine
TINY = ["--algorithms", "aes-128-gcm,sha256,ed25519", "--sizes", "1024", "--threads", "1", "--seconds", "1",
        "--idle-wait", "2"]


def sslbench(*args, cwd=None, timeout=180):
    return subprocess.run([SSLBENCH, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def only_run(results: Path) -> Path:
    runs = store.list_runs(results)
    assert len(runs) == 1, runs
    return runs[0]


def openssl_speed_processes(marker: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in text:
            found.append(text)
    return found


def test_run_on_localhost_stores_parses_and_reports(tmp_path):
    before = {p.name for p in Path("/tmp").glob("sslbench.*")}
    result = sslbench("run", *TINY, "--results", str(tmp_path))
    assert result.returncode == 0, result.stderr
    run_dir = only_run(tmp_path)
    run = store.load_run(run_dir)
    assert run.command[:2] == ["sslbench", "run"] and run.matrix["seconds"] == 1
    [host] = run.hosts
    assert host.status == HOST_OK and host.reason is None
    assert host.os.family and host.cpu.logical_cpus and host.openssl.version
    ok = {(m.algorithm, m.api, m.block_size, m.operation) for m in host.measurements if m.status == OK}
    assert ("aes-128-gcm", "evp", 1024, None) in ok and ("sha256", "legacy", 1024, None) in ok
    assert ("ed25519", None, None, "sign") in ok
    assert all(m.openssl_version == host.openssl.version for m in host.measurements)
    logs = sorted(p.name for p in (run_dir / "localhost").glob("*.log"))
    assert len(logs) == 4 and all((run_dir / rel).is_file() for rel in host.logs)
    # the evidence: idle gate and snapshots around the matrix, stored apart from the cell logs
    assert sorted(p.name for p in (run_dir / "localhost").glob("conditions-*.txt")) == [
        "conditions-after.txt", "conditions-before.txt", "conditions-idle.txt"]
    conditions = host.conditions
    assert conditions["idle"]["params"]["max"] == 2 and conditions["idle"]["samples"]
    assert conditions["before"]["label"] == "before" and conditions["after"]["label"] == "after"
    assert "cpu" in conditions["before"]["cpu_times"] and conditions["verdict"]["flags"] == host.flags
    # every cell judged from its own evidence; the flags are on its figures
    assert len(conditions["cells"]) == 4
    for m in host.measurements:
        [verdict] = [v for cell_id, v in conditions["cells"].items() if f"-{m.api or 'pk'}-{m.algorithm}-" in cell_id]
        assert m.flags == verdict["flags"] and "background_cores" in verdict["facts"]
    assert "PLAY" in (run_dir / "ansible-stdout.txt").read_text()
    assert "aes-128-gcm" in result.stdout and "1024 B MB/s" in result.stdout  # the table is printed
    # no work dir left behind on the host
    assert {p.name for p in Path("/tmp").glob("sslbench.*")} == before

    report = sslbench("report", str(run_dir), "--format", "json")
    assert report.returncode == 0, report.stderr
    records = json.loads(report.stdout)
    gcm = [r for r in records if r["algorithm"] == "aes-128-gcm"]
    assert gcm and gcm[0]["host"] == "localhost" and gcm[0]["block_size"] == 1024 and gcm[0]["threads"] == 1
    assert gcm[0]["api"] == "evp" and gcm[0]["bytes_per_second"] > 1e6
    latest = sslbench("report", "--results", str(tmp_path), "--format", "csv")
    assert latest.returncode == 0 and latest.stdout.startswith("algorithm,api,threads,host")


def test_cell_the_host_refuses_is_unsupported_and_the_run_goes_on(tmp_path):
    result = sslbench("run", "--algorithms", "nosuch-cipher,sha256", "--sizes", "64", "--threads", "1",
                      "--api", "evp", "--seconds", "1", "--idle-wait", "0", "--results", str(tmp_path))
    assert result.returncode == 0, result.stderr
    [host] = store.load_run(only_run(tmp_path)).hosts
    assert host.status == HOST_OK
    status = {m.algorithm: m for m in host.measurements}
    assert status["sha256"].status == OK
    refused = status["nosuch-cipher"]
    assert refused.status == "unsupported" and "nosuch-cipher" in refused.reason
    assert "unsupported" in result.stdout  # shown in the table, not hidden


def test_ini_inventory_with_group_vars_next_to_it(tmp_path):
    """The user's inventory is used as is: INI, with group_vars beside it (here: how to connect)."""
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "hosts.ini").write_text("[boards]\nthis-box\n")
    (tmp_path / "inv" / "group_vars").mkdir()
    (tmp_path / "inv" / "group_vars" / "boards.yml").write_text("ansible_connection: local\n")
    result = sslbench("run", "-i", str(tmp_path / "inv" / "hosts.ini"), "--algorithms", "sha256", "--sizes", "64",
                      "--threads", "1", "--api", "evp", "--seconds", "1", "--idle-wait", "0",
                      "--results", str(tmp_path / "results"))
    assert result.returncode == 0, result.stderr
    [host] = store.load_run(only_run(tmp_path / "results")).hosts
    assert host.host == "this-box" and host.status == HOST_OK


def test_hosts_shows_facts_and_plan_without_benchmarking(tmp_path):
    result = sslbench("hosts", "--algorithms", "aes-128-gcm", "--threads", "1", "--seconds", "2", "--format", "json")
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["host"] == "localhost" and row["status"] == "ok" and row["cells"] == 1 and round(row["eta_seconds"]) == 12
    assert row["would_install"] is None
    # --budget: the plan is fitted (the idle gate counts) and what went is said
    fitted = sslbench("hosts", "--algorithms", "aes-128-gcm,sha256", "--threads", "1", "--budget", "30s",
                      "--idle-wait", "0", "--format", "json")
    assert fitted.returncode == 0, fitted.stderr
    [row] = json.loads(fitted.stdout)
    assert row["cells"] >= 1 and "localhost: budget: to fit 30s; dropped: sizes" in fitted.stderr


def test_inventory_values_with_shell_metacharacters(tmp_path):
    """A host name and a variable full of shell syntax: nothing runs, paths stay inside the run dir."""
    canary = tmp_path / "PWNED"
    inventory = tmp_path / "inventory.yml"
    name = f"box;touch {canary};$(touch {canary})`touch {canary}`/../.."
    inventory.write_text(json.dumps({"all": {"hosts": {name: {
        "ansible_connection": "local", "note": f"'; touch {canary}; echo '"}}}}))
    result = sslbench("run", "-i", str(inventory), "--algorithms", "sha256", "--sizes", "64", "--threads", "1",
                      "--api", "evp", "--seconds", "1", "--idle-wait", "0", "--results", str(tmp_path / "results"))
    assert result.returncode == 0, result.stderr
    assert not canary.exists()
    run_dir = only_run(tmp_path / "results")
    [host] = store.load_run(run_dir).hosts
    assert host.host == name and host.status == HOST_OK
    host_dirs = [p for p in run_dir.iterdir() if p.is_dir()]
    assert len(host_dirs) == 1 and host_dirs[0].name == store.safe_name(name) and "/" not in host_dirs[0].name


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_ctrl_c_or_kill_stops_openssl_and_keeps_finished_cells(tmp_path, signum):
    results = tmp_path / "results"
    # cells of 6 sizes x 1 s: the first is back at the first poll (10 s in), the last is 24 s in
    proc = subprocess.Popen([SSLBENCH, "run", "--algorithms", "sha512,sha256,sha1,md5", "--threads", "1",
                             "--api", "evp", "--seconds", "1", "--idle-wait", "0", "--results", str(results)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 90
    while time.time() < deadline and not list(results.glob("*/localhost/001-*.log")):
        time.sleep(0.3)
    assert list(results.glob("*/localhost/001-*.log")), "the first cell never came back"
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 128 + signum, err
    run = store.load_run(only_run(results))
    [host] = run.hosts
    assert host.status == HOST_FAILED and "interrupted" in host.reason
    kept = {m.algorithm for m in host.measurements if m.status == OK}
    assert "sha512" in kept and "md5" not in kept
    time.sleep(0.5)
    assert openssl_speed_processes("-seconds 1 -evp ") == []  # no orphan openssl left running
    assert not Path(work_dir(run.run_id, host.host)).exists()


@pytest.mark.skipif(os.cpu_count() < 2 or shutil.which("taskset") is None, reason="needs 2 CPUs and taskset")
def test_big_little_host_runs_single_thread_cells_pinned_once_per_cluster(tmp_path):
    """This machine dressed as big.LITTLE: a fake sysfs (SSLBENCH_SYSROOT, read by detect.sh and
    conditions.sh) says CPU 1 is a 2.0 GHz cluster and CPU 0 a 1.4 GHz one.  The pinning itself is real
    (taskset), and checked from where the process really ran."""
    cpu = tmp_path / "root" / "sys/devices/system/cpu"
    for n, khz in ((0, "1400000"), (1, "2000000")):
        policy = cpu / "cpufreq" / f"policy{n}"
        policy.mkdir(parents=True)
        (policy / "related_cpus").write_text(f"{n}\n")
        (policy / "cpuinfo_max_freq").write_text(khz + "\n")
    (cpu / "online").write_text("0-1\n")
    result = subprocess.run([SSLBENCH, "run", "--algorithms", "sha256", "--sizes", "1024", "--threads", "1,2",
                             "--api", "evp", "--seconds", "1", "--idle-wait", "0", "--results", str(tmp_path / "r")],
                            capture_output=True, text=True, timeout=180,
                            env={**os.environ, "SSLBENCH_SYSROOT": str(tmp_path / "root")})
    assert result.returncode == 0, result.stderr
    assert "localhost: single-thread cells pinned to CPU 1 (cpu1), CPU 0 (cpu0)" in result.stderr
    run = store.load_run(only_run(tmp_path / "r"))
    [host] = run.hosts
    cells = {c["id"]: c for c in run.matrix["hosts"]["localhost"]["cells"]}
    assert sorted((c["threads"], c["pin"]) for c in cells.values()) == [(1, 0), (1, 1), (2, None)]
    verdicts = host.conditions["cells"]
    for cell_id, cell in cells.items():
        facts = verdicts[cell_id]["facts"]
        if cell["pin"] is None:
            assert "pinning" not in facts  # -multi: all cores
        else:
            assert facts["pinning"]["held"] is True and facts["pinning"]["seen"] == [cell["pin"]], facts
            # the mask is read at the sampler's second tick: a 1-s cell may end before it
            assert facts["pinning"]["allowed"] in ([], [cell["pin"]]) and "pin-failed" not in verdicts[cell_id]["flags"]
    pinned = sorted((m.threads, m.cpu or "") for m in host.measurements if m.status == OK)
    assert pinned == [(1, "cpu0"), (1, "cpu1"), (2, "")]  # each cluster its own figure; -multi unlabelled
    # each cluster its own row in the table and in a diff
    header, *rows = [line.split() for line in result.stdout.splitlines() if line.startswith(("algorithm", "sha256"))]
    assert header[:4] == ["algorithm", "api", "threads", "cpu"]
    assert sorted(row[2:4] for row in rows) == [["1", "cpu0"], ["1", "cpu1"], ["2", "localhost"]]
    run_dir = only_run(tmp_path / "r")
    diff = sslbench("diff", str(run_dir), str(run_dir), "--format", "json")
    assert diff.returncode == 0, diff.stderr
    assert sorted((r["threads"], r["cpu"] or "") for r in json.loads(diff.stdout)) == [(1, "cpu0"), (1, "cpu1"), (2, "")]
