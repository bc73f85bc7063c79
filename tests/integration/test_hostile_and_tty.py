"""Issue 28 on the rig: a box that prints hostile text (hostile1: os-release, /proc/cpuinfo model and host name with
HTML, spreadsheet formulas and terminal escapes), benchmarked end to end and shown through every output; and a
sudo host with `Defaults requiretty` (tty1), where become works as `ansible -m raw -b` does.

Both hosts are kept out of the rig's inventory.yml (tests/rig/rig.py): each test writes an inventory for its host,
with what the rig knows of it, as a user's inventory says it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from orchestrator import store
from orchestrator.model import HOST_OK, OK
from orchestrator.render.report import VIEWS

pytestmark = pytest.mark.rig

RIG_DIR = Path(__file__).resolve().parents[1] / "rig"
sys.path.insert(0, str(RIG_DIR))
import rig  # noqa: E402

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
ANSIBLE = str(Path(sys.executable).parent / "ansible")
TINY = ["--algorithms", "sha256", "--sizes", "1024", "--threads", "1", "--api", "evp", "--seconds", "1",
        "--idle-wait", "0"]


def sslbench(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([SSLBENCH, *args], capture_output=True, text=True, timeout=timeout)


def inventory_of(name: str, path: Path, **extra: object) -> Path:
    h = rig.HOSTS_BY_NAME[name]
    hv = {"ansible_host": h.address, "ansible_port": h.port, "ansible_user": h.user,
          "ansible_ssh_private_key_file": str(rig.KEYS / "client_ed25519"),
          "ansible_ssh_common_args": f"-o UserKnownHostsFile={rig.STATE / 'known_hosts'} "
                                     "-o StrictHostKeyChecking=yes -o IdentitiesOnly=yes",
          **rig.TRANSFER.get(h.server, {}), **extra}
    path.write_text(yaml.safe_dump({"all": {"hosts": {name: hv}}}))
    return path


@pytest.fixture(scope="module")
def tty_inventory(rig_inventory, tmp_path_factory) -> Path:
    return inventory_of("tty1", tmp_path_factory.mktemp("tty") / "hosts.yml", ansible_become=True,
                        ansible_become_password=rig.sudo_password())


def test_tty1_is_as_strict_as_requiretty_and_raw_b_works_there(tty_inventory):
    # what the user saw: sudo refuses a command without a terminal, `ansible -m raw -b` gets one
    piped = subprocess.run(["ssh", "-F", str(rig.STATE / "ssh_config"), "tty1", "echo | sudo -S true"],
                           capture_output=True, text=True, timeout=60)
    assert "must have a tty" in piped.stderr
    raw = subprocess.run([ANSIBLE, "all", "-i", str(tty_inventory), "-m", "raw", "-b", "-a", "id -u"],
                         capture_output=True, text=True, timeout=120)
    assert raw.returncode == 0 and "\n0" in raw.stdout.replace("\r", ""), raw.stdout + raw.stderr


def test_requiretty_host_benchmarks_through_sudo(tty_inventory, tmp_path, testinfra_host):
    result = sslbench("run", "-i", str(tty_inventory), *TINY, "--results", str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    [run_dir] = store.list_runs(tmp_path)
    [host] = store.load_run(run_dir).hosts
    assert host.status == HOST_OK and [m.status for m in host.measurements] == [OK]
    assert host.os.family == "debian" and host.openssl.version
    tty1 = testinfra_host("tty1")
    # apt-get ran through sudo (the base has no openssl), and the steps' private directories are gone
    assert tty1.run("dpkg-query -W -f='${Status}' openssl").stdout == "install ok installed"
    assert tty1.run("ls -d /tmp/sslbench-tty.* 2>/dev/null").stdout == ""


@pytest.fixture(scope="module")
def hostile_results(rig_inventory, tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    where = tmp_path_factory.mktemp("hostile")
    inventory = inventory_of("hostile1", where / "hosts.yml")
    results = where / "results"
    for _ in range(2):  # two runs: diff, trend and history have something to compare
        result = sslbench("run", "-i", str(inventory), *TINY, "--results", str(results))
        assert result.returncode == 0, result.stderr[-3000:]
    return inventory, results, result


def test_hostile_host_benchmarked_and_its_text_kept_as_data(hostile_results, check_inert):
    _, results, run = hostile_results
    check_inert(run.stdout + run.stderr, "table")  # what `run` itself printed
    [host] = store.load_run(store.list_runs(results)[-1]).hosts
    assert host.status == HOST_OK and [m.status for m in host.measurements] == [OK]
    # stored exactly as the box printed it: the rule applies where text reaches a reader, not to the data
    assert host.cpu.model.startswith("=HYPERLINK(") and "\x1b]0;cpu\x07" in host.cpu.model
    assert "\x1b[2J" in host.os.name and "<script>h</script>" in host.os.uname


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_hosts_every_format(hostile_results, fmt, check_inert):
    inventory, _, _ = hostile_results
    result = sslbench("hosts", "-i", str(inventory), "--format", fmt, *TINY[:-2])
    assert result.returncode == 0, result.stderr[-3000:]
    assert "HYPERLINK" in result.stdout
    check_inert(result.stdout, fmt)
    check_inert(result.stderr, "table")


def test_every_command_every_format(hostile_results, tmp_path, check_inert):
    _, results, _ = hostile_results
    runs = [p.name for p in store.list_runs(results)]
    said = []
    for view in VIEWS:
        said.append((sslbench("report", "--results", str(results), "--view", view), "table"))
    for fmt in ("table", "markdown", "csv", "json"):
        said.append((sslbench("report", "--results", str(results), "--format", fmt), fmt))
        said.append((sslbench("history", "--results", str(results), "hostile1", "--format", fmt), fmt))
    for fmt in ("table", "markdown", "csv", "json", "junit"):
        said.append((sslbench("diff", "--results", str(results), *runs, "--format", fmt), fmt))
        said.append((sslbench("trend", "--results", str(results), "hostile1", "--format", fmt), fmt))
    for result, fmt in said:
        assert result.returncode == 0, result.args
        check_inert(result.stdout, "html" if fmt == "junit" else fmt)
        check_inert(result.stderr, "table")
    assert any("\\x1b]0;cpu\\x07" in r.stdout for r, _ in said)  # the model shown, its escapes visible
    for fmt, name in (("html", "report.html"), ("markdown", "report.md")):
        page = tmp_path / name
        assert sslbench("report", "--results", str(results), "--format", fmt, "-o", str(page)).returncode == 0
        check_inert(page.read_text(), fmt)
    site = tmp_path / "site"
    published = sslbench("publish", str(results), "-o", str(site), "--no-known")
    assert published.returncode == 0, published.stderr
    check_inert(published.stdout + published.stderr, "table")
    for page in site.glob("*.html"):
        check_inert(page.read_text(), "html")
