"""`sslbench run` against the loopback fleet (tests/rig): every family end to end, and the faults.

Needs `make rig-up` (root); skipped with the reason otherwise (fixtures in conftest.py).
Matrices are tiny (-seconds 1, one size) so the module runs in a few minutes, but for the default matrix on the
whole fleet (about three).
"""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from testinfra_shell import exists_on

from orchestrator import store
from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE, OK
from orchestrator.run.stages import work_dir

pytestmark = pytest.mark.rig

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
TINY = ["--algorithms", "aes-128-gcm,sha256", "--sizes", "1024", "--threads", "1", "--api", "evp", "--seconds", "1",
        "--idle-wait", "0"]


def sslbench(*args, timeout=900):
    return subprocess.run([SSLBENCH, *args], capture_output=True, text=True, timeout=timeout)


def work_dirs_of_run(run_id: str) -> str:
    """What every host's work dir of the run starts with (bench.work_dir adds a hash of the host's name)."""
    return f"/tmp/sslbench.{re.sub('[^0-9A-Za-z-]', '', run_id)}."


def load_only_run(results: Path):
    runs = store.list_runs(results)
    assert len(runs) == 1
    return runs[0], store.load_run(runs[0])


def wait_for_first_cell(results: Path, host: str) -> None:
    """Until the host's first cell log is stored (at most 5 minutes)."""
    first = f"*/{store.safe_name(host)}/001-*.log"
    deadline = time.time() + 300
    while time.time() < deadline and not list(results.glob(first)):
        time.sleep(0.3)
    assert list(results.glob(first)), "the first cell never came back"


def of_family(rig_hosts, family):
    names = [name for name, h in rig_hosts.items() if h["family"] == family]
    if not names:
        pytest.skip(f"the fleet has no {family} host")
    return names[0]


def test_whole_fleet_end_to_end(rig_inventory, rig_hosts, testinfra_host, tmp_path):
    # --idle-wait 2: the idle gate runs everywhere (one sample), without holding the suite up
    result = sslbench("run", "-i", str(rig_inventory), *TINY[:-2], "--idle-wait", "2", "--results", str(tmp_path))
    run_dir, run = load_only_run(tmp_path)
    by_host = {h.host: h for h in run.hosts}
    assert result.returncode == 0, result.stderr[-3000:]
    assert set(by_host) == set(rig_hosts)
    for name, facts in rig_hosts.items():
        host = by_host[name]
        assert host.status == HOST_OK, (name, host.reason)
        assert host.os.family == facts["family"], (name, host.os)  # read from the host, not the group name
        assert host.openssl.version, name
        ok = [m for m in host.measurements if m.status == OK]
        assert {m.algorithm for m in ok} == {"aes-128-gcm", "sha256"}, (name, host.measurements)
        assert all(m.block_size == 1024 and m.bytes_per_second > 0 for m in ok)
        assert len(list((run_dir / store.safe_name(name)).glob("*.log"))) == 2
        assert (run_dir / store.safe_name(name) / "facts.txt").is_file()
        # conditions.sh ran there (BusyBox ash or a Debian userland): gate, snapshots, every cell's evidence
        conditions = host.conditions
        assert conditions["idle"]["params"]["max"] == 2 and conditions["idle"]["samples"], name
        for label in ("before", "after"):
            snap = conditions[label]
            assert snap["label"] == label and "cpu" in snap["cpu_times"] and len(snap["loadavg"]) == 3, name
            assert all(isinstance(note, str) and note for note in snap["notes"]), name
        # /sys is this machine's, read-only: a real x86 topology (what it lacks is a note, not an error)
        assert conditions["before"]["topology"], (name, conditions["before"])
        assert host.os.name and (host.os.version or host.os.revision), (name, host.os)  # DD-WRT: its build number
        assert len(conditions["cells"]) == 2 and all("background_cores" in v["facts"]
                                                     for v in conditions["cells"].values()), name
        assert sorted(p.name for p in (run_dir / store.safe_name(name)).glob("conditions-*.txt")) == [
            "conditions-after.txt", "conditions-before.txt", "conditions-idle.txt"]
        # nothing left behind on the host
        assert not exists_on(testinfra_host(name), work_dir(run.run_id, name))
    assert by_host["raspbian1"].os.version == "11"  # its shell's start-up text, glued to the first marker, hid nothing
    # provisioning really happened where openssl was missing (checked on the hosts afterwards)
    openwrt = testinfra_host(of_family(rig_hosts, "openwrt"))
    assert "openssl-util" in openwrt.check_output("opkg list-installed")
    assert openwrt.run("openssl version").rc == 0
    armbian = testinfra_host(of_family(rig_hosts, "armbian"))
    assert armbian.run("dpkg -s openssl").rc == 0 and armbian.run("openssl version").rc == 0
    # OpenWrt 19.07 (no setsid, no nohup, no taskset) got its era's OpenSSL from its own feed
    assert by_host["openwrt2"].os.version == "19.07.10" and by_host["openwrt2"].openssl.version.startswith("1.1.1")
    # debian1 logs in as a user: apt-get ran through sudo with the vaulted password
    debian = testinfra_host("debian1")
    assert debian.run("dpkg -s openssl").rc == 0 and debian.run("id -u").stdout.strip() != "0"
    assert by_host["ddwrt2"].status == HOST_OK  # reached through jump1 only


@pytest.mark.slow
def test_default_matrix_on_the_whole_fleet(rig_inventory, rig_hosts, tmp_path):
    """Every host ok with the default matrix (1 s per size), and no single-thread cell run twice on a host whose
    cores are identical (each sees this machine's /sys: one cluster_id per core). Placed after the end-to-end test:
    on a fresh rig that one installs armbian's openssl (apt under qemu) beside tiny cells in 30 s, where beside the
    whole fleet's default matrix it took 2 minutes."""
    result = sslbench("run", "-i", str(rig_inventory), "--seconds", "1", "--idle-wait", "2", "--results",
                      str(tmp_path), timeout=1800)
    run_dir, run = load_only_run(tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert run.matrix["timing"] == "elapsed"
    by_host = {h.host: h for h in run.hosts}
    assert set(by_host) == set(rig_hosts)
    for name, host in by_host.items():
        assert host.status == HOST_OK, (name, host.reason)
        cells = run.matrix["hosts"][name]["cells"]
        assert all("-elapsed" in c["args"] for c in cells), name
        assert all(c["pin"] is None for c in cells) and run.matrix["hosts"][name]["pins"] == [], name
        keys = [(c["algorithm"], c["api"], c["threads"], tuple(c["sizes"]), c["repeat"]) for c in cells]
        assert len(keys) == len(set(keys)), (name, keys)
        assert any(m.status == OK for m in host.measurements), name


# within --forks each host's task polls it in its session; beyond, the controller polls over the session's command
# line, and once that fails asks the host through Ansible passes
@pytest.mark.parametrize("forks", [[], ["--forks", "1"]], ids=["in-its-task", "beyond-forks"])
def test_host_whose_ssh_server_dies_mid_run(rig_inventory, rig_hosts, rig_control, tmp_path, forks):
    victim = of_family(rig_hosts, "raspbian")
    other = of_family(rig_hosts, "ddwrt")
    results = tmp_path / "results"
    # 6 cells of 3 s: polled every 10 s (a quarter of the matrix, at least 10 s), so cells come back mid-run
    proc = subprocess.Popen([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", f"{victim},{other}",
                             "--algorithms", "sha256,sha512,sha1,md5,aes-128-cbc,aes-256-cbc", "--sizes", "1024",
                             "--threads", "1", "--api", "evp", "--seconds", "3", "--idle-wait", "0", "--results", str(results), *forks],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_first_cell(results, victim)
        rig_control.stop_host(victim, sessions=True)  # the box drops off: server and open sessions gone
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err[-3000:]
    _, run = load_only_run(results)
    by_host = {h.host: h for h in run.hosts}
    assert by_host[other].status == HOST_OK
    assert len([m for m in by_host[other].measurements if m.status == OK]) == 6
    dead = by_host[victim]
    assert dead.status in (HOST_UNREACHABLE, HOST_FAILED) and dead.reason
    assert any(m.status == OK for m in dead.measurements)  # finished cells were kept
    assert "incomplete" in dead.flags
    assert victim in err  # reported at the end


def test_ssh_masters_that_die_mid_run_lose_no_host_beyond_forks(rig_inventory, rig_hosts, tmp_path):
    """Hosts beyond --forks are polled over their session's command line, through the SSH master connection
    Ansible opened. Masters die (ControlPersist runs out between polls 60 s apart, a NAT drops them): the next poll
    connects anew, or goes through Ansible again, and no host or cell is lost."""
    hosts = [of_family(rig_hosts, "openwrt"), of_family(rig_hosts, "ddwrt")]
    results = tmp_path / "results"
    proc = subprocess.Popen([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", ",".join(hosts), "--forks", "1",
                             "--algorithms", "sha256,sha512,sha1,md5", "--sizes", "1024", "--threads", "1",
                             "--api", "evp", "--seconds", "3", "--idle-wait", "0", "--results", str(results)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_first_cell(results, hosts[0])
        masters = subprocess.run(["pkill", "-f", r"^ssh: .*/sslbench-runner-[^/]*/cp/.* \[mux\]"])
        assert masters.returncode == 0, "no SSH master connection of the run to stop"
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    _, run = load_only_run(results)
    assert [(h.status, len([m for m in h.measurements if m.status == OK])) for h in run.hosts] == [(HOST_OK, 4)] * 2


def test_opkg_update_without_feed_fails_that_host_only(rig_inventory, rig_hosts, rig_control, tmp_path):
    openwrt = of_family(rig_hosts, "openwrt")
    other = of_family(rig_hosts, "ddwrt")
    with rig_control.feed_unreachable():
        # --upgrade-openssl: opkg runs even if an earlier test already installed openssl-util
        result = sslbench("run", "-i", str(rig_inventory), "--limit", f"{openwrt},{other}", "--upgrade-openssl",
                          *TINY, "--results", str(tmp_path))
    assert result.returncode == 1, result.stderr[-3000:]
    _, run = load_only_run(tmp_path)
    by_host = {h.host: h for h in run.hosts}
    assert by_host[openwrt].status == HOST_FAILED
    reason = by_host[openwrt].reason
    assert "opkg" in reason and re.search(r"wget returned|Failed to download", reason), reason
    assert not by_host[openwrt].measurements
    assert by_host[other].status == HOST_OK  # DD-WRT has no package manager: nothing to upgrade, benchmarked
    assert openwrt in result.stderr and "wget returned" in result.stderr  # said clearly at the end


def test_wrong_host_key_is_refused(rig_hosts, tmp_path):
    """The inventory does not pin StrictHostKeyChecking: sslbench's own setting must refuse the host."""
    victim = of_family(rig_hosts, "ddwrt")
    hv = dict(rig_hosts[victim]["vars"])
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    known = tmp_path / "known_hosts"
    known.write_text(f"[{hv['ansible_host']}]:{hv['ansible_port']} {(tmp_path / 'other.pub').read_text()}")
    hv["ansible_ssh_common_args"] = f"-o UserKnownHostsFile={known} -o IdentitiesOnly=yes"
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {victim: hv}}}))
    result = sslbench("run", "-i", str(inventory), *TINY, "--results", str(tmp_path / "results"))
    assert result.returncode == 1, result.stderr[-3000:]
    _, run = load_only_run(tmp_path / "results")
    [host] = run.hosts
    assert host.status == HOST_UNREACHABLE and "Host key verification failed" in host.reason
    assert not host.measurements


def test_inventory_values_with_shell_metacharacters_on_busybox(rig_hosts, testinfra_host, tmp_path):
    victim = of_family(rig_hosts, "openwrt")
    hv = dict(rig_hosts[victim]["vars"])
    name = "evil;touch /tmp/PWNED;$(touch /tmp/PWNED)`touch /tmp/PWNED`"
    hv["sslbench_note"] = "'; touch /tmp/PWNED; echo '"
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {name: hv}}}))
    box = testinfra_host(victim)
    box.run("rm -f /tmp/PWNED")
    result = sslbench("run", "-i", str(inventory), *TINY, "--results", str(tmp_path / "results"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert not exists_on(box, "/tmp/PWNED")
    assert not Path("/tmp/PWNED").exists()
    run_dir, run = load_only_run(tmp_path / "results")
    assert run.hosts[0].host == name and run.hosts[0].status == HOST_OK
    assert [p.name for p in run_dir.iterdir() if p.is_dir()] == [store.safe_name(name)]


def run_processes_in(root: Path, run_id: str) -> list[str]:
    """Processes of one sslbench run inside a fleet host's root, seen from this machine's /proc: their
    working directory is the run's work dir (other tests may run openssl on the same host meanwhile)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if Path(f"/proc/{proc.name}/root").resolve() != root.resolve():
                continue
            if work_dirs_of_run(run_id) not in os.readlink(f"/proc/{proc.name}/cwd"):
                continue
            found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found


# in its task's session, and beyond --forks (another host with it, --forks 1): polled from the controller
@pytest.mark.parametrize("beyond_forks", [False, True], ids=["in-its-task", "beyond-forks"])
def test_ctrl_c_stops_openssl_on_a_dropbear_host(rig_inventory, rig_hosts, testinfra_host, tmp_path, beyond_forks):
    sys.path.insert(0, str(Path(rig_inventory).parent))
    import rig as riglib  # where the host's root file system is, to look at its processes from outside

    victim = of_family(rig_hosts, "openwrt")
    root = riglib.host_root(riglib.HOSTS_BY_NAME[victim])
    results = tmp_path / "results"
    hosts = f"{victim},{of_family(rig_hosts, 'ddwrt')}" if beyond_forks else victim
    proc = subprocess.Popen([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", hosts,
                             "--algorithms", "sha256,sha512,sha1,md5", "--sizes", "16,1024", "--threads", "1,all",
                             "--api", "evp", "--seconds", "2", "--idle-wait", "0", "--results", str(results),
                             *(["--forks", "1"] if beyond_forks else [])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for_first_cell(results, victim)
        run_id = store.list_runs(results)[0].name
        # the next cell's openssl: between two cells the runner writes a log and a snapshot first, and a poll may
        # bring the first cell back in that moment
        deadline = time.time() + 10
        while time.time() < deadline and not any(" speed " in p for p in run_processes_in(root, run_id)):
            time.sleep(0.1)
        assert any(" speed " in p for p in run_processes_in(root, run_id)), "no openssl running to be stopped"
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the whole process group, ssh included
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-3000:]
    time.sleep(1)
    assert run_processes_in(root, run_id) == []  # no orphan openssl (or runner) burning the router's CPU
    _, run = load_only_run(results)
    host = next(h for h in run.hosts if h.host == victim)
    assert "interrupted" in host.reason and any(m.status == OK for m in host.measurements)
    assert run.interrupted == "interrupted (Ctrl-C)"
    assert not exists_on(testinfra_host(victim), work_dir(run.run_id, victim))


def test_hosts_reads_every_host_without_benchmarking(rig_inventory, rig_hosts):
    result = sslbench("hosts", "-i", str(rig_inventory), *TINY, "--format", "json", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {row["host"]: row for row in yaml.safe_load(result.stdout)}
    assert set(rows) == set(rig_hosts)
    for name, facts in rig_hosts.items():
        row = rows[name]
        # the OS as people write it ("DD-WRT r55630", "Raspbian GNU/Linux 11") names the rig's family
        assert row["status"] == "ok" and row["os"].replace("-", "").lower().startswith(facts["family"]), row
        assert row["cells"] == 2 and round(row["eta_seconds"]) == 2
        if row["openssl"] is None:  # pristine fleet: says what it would install, with what
            assert row["would_install"]["package"] and row["would_install"]["with"] in row["package_managers"], row


def test_a_dropbear_box_under_many_names_is_detected_under_every_one(rig_hosts, tmp_path):
    """Twelve aliases of one dropbear router at once: dropbear resets connections beyond 5 unauthenticated ones per
    client and the aliases share one SSH master, so some first detects fail. Each such host is asked again."""
    name = next((n for n, h in rig_hosts.items() if h["family"] == "openwrt"), None) or pytest.skip("no openwrt host")
    aliases = {f"{name}-alias{i:02d}": rig_hosts[name]["vars"] for i in range(12)}
    inventory = tmp_path / "aliases.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": aliases}}))
    result = sslbench("hosts", "-i", str(inventory), *TINY, "--format", "json", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = yaml.safe_load(result.stdout)
    assert sorted(row["host"] for row in rows if row["status"] == "ok") == sorted(aliases), result.stderr


def test_one_box_under_two_names_runs_two_benchmarks_that_do_not_share_a_work_dir(rig_hosts, testinfra_host,
                                                                                  tmp_path):
    """A router listed by its LAN and its WAN address: two launchers on one box. With one work dir per run the
    second found the first's runner ("launched before") and the first's `forget` removed the dir under it."""
    name = next((n for n, h in rig_hosts.items() if h["family"] == "openwrt"), None) or pytest.skip("no openwrt host")
    aliases = {f"{name}-lan": rig_hosts[name]["vars"], f"{name}-wan": rig_hosts[name]["vars"]}
    inventory = tmp_path / "aliases.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": aliases}}))
    result = sslbench("run", "-i", str(inventory), *TINY, "--results", str(tmp_path / "results"), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    _, run = load_only_run(tmp_path / "results")
    for host in run.hosts:
        assert host.status == HOST_OK and {m.algorithm for m in host.measurements if m.status == OK} == {
            "aes-128-gcm", "sha256"}, (host.host, host.reason)
        assert not exists_on(testinfra_host(name), work_dir(run.run_id, host.host))
    assert sorted(h.host for h in run.hosts) == sorted(aliases)
