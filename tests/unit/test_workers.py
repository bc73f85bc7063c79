"""Site workers as the user gives them (orchestrator/run/workers.py): options, a TOML config, the limits that part the
fleet between this machine and each worker."""
import pytest

from orchestrator.errors import UserError
from orchestrator.run import workers


def test_worker_options_and_their_host_patterns():
    found = workers.configured(["lab1=pi@lab1", "home=rpi"], ["home=home_boards"], None)
    assert [(w.name, w.ssh, w.hosts) for w in found] == [("lab1", "pi@lab1", "lab1"), ("home", "rpi", "home_boards")]
    assert found[0].command() == ["ssh", "-o", "BatchMode=yes", "pi@lab1", "ansible-runner worker"]


def test_a_config_file_with_workers(tmp_path):
    config = tmp_path / "sslbench.toml"
    config.write_text('[workers.lab1]\nssh = "worker1"\nhosts = "openwrt"\nssh_args = "-F /x/ssh_config"\n'
                      'runner = "/opt/venv/bin/ansible-runner"\n')
    [worker] = workers.configured(None, None, str(config))
    assert worker.command() == ["ssh", "-o", "BatchMode=yes", "-F", "/x/ssh_config", "worker1",
                                'PATH=/opt/venv/bin:"$PATH" /opt/venv/bin/ansible-runner worker']
    assert worker.hosts == "openwrt"


@pytest.mark.parametrize("specs, hosts, text, message", [
    (["lab1"], None, None, "NAME=SSH_TARGET"),
    (["../x=h"], None, None, "NAME=SSH_TARGET"),
    (["a=h"], ["b=g"], None, "no worker 'b'"),
    (["a=h"], ["a=g1,g2"], None, "one pattern term"),
    (None, None, "[workers.a]\nhosts = 'g'\n", "needs ssh"),
    (None, None, "[workers.a]\nssh = 'h'\nport = 22\n", "not port"),
    (None, None, "[workers\n", "not valid TOML"),
])
def test_bad_workers_are_one_clear_error(tmp_path, specs, hosts, text, message):
    config = None
    if text is not None:
        config = tmp_path / "c.toml"
        config.write_text(text)
    with pytest.raises(UserError, match=message):
        workers.configured(specs, hosts, str(config) if config else None)


def test_the_fleet_is_parted_exactly():
    lab, home = workers.Worker("lab", "x", "lab_g"), workers.Worker("home", "y", "home-*")
    assert workers.local_limit(None, [lab, home]) == "all,!lab_g,!home-*"
    assert workers.local_limit("routers", [lab]) == "routers,!lab_g"
    assert workers.local_limit("r1,r2", [lab]) == "r1,r2,!lab_g"
    assert workers.local_limit("web:db", [lab]) == "web,db,!lab_g"
    assert workers.worker_limit("r1,r2", lab) == "r1,r2,&lab_g"
    assert workers.worker_limit(None, home) == "home-*"


def test_ansible_reads_the_parts_as_meant(tmp_path):
    # what ansible itself lists for each part of a fleet: exactly the hosts meant, none twice
    import subprocess
    import sys
    from pathlib import Path

    inventory = tmp_path / "hosts.ini"
    inventory.write_text("[lab_g]\nr1\nr2\n[home]\nh1\n[other]\no1\n")
    lab, home = workers.Worker("lab", "x", "lab_g"), workers.Worker("h", "y", "home")

    def listed(pattern):
        out = subprocess.run([str(Path(sys.executable).parent / "ansible"), "-i", str(inventory), pattern,
                              "--list-hosts"], capture_output=True, text=True).stdout
        return sorted(line.strip() for line in out.splitlines()[1:])

    assert listed(workers.local_limit("r1,h1,o1", [lab, home])) == ["o1"]
    assert listed(workers.worker_limit("r1,h1,o1", lab)) == ["r1"]
    assert listed(workers.worker_limit("r1,h1,o1", home)) == ["h1"]
    assert listed(workers.local_limit(None, [lab, home])) == ["o1"]
