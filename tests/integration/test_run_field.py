"""`sslbench run` on the hosts that are as strict as the field (issue 13): a sudo user whose password is vaulted or
typed, a host behind a jump host whose hop fails. (The whole fleet on the default matrix is in test_run_rig.py.)"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from orchestrator import store
from orchestrator.model import HOST_OK, HOST_UNREACHABLE, OK

pytestmark = pytest.mark.rig

RIG_DIR = Path(__file__).resolve().parents[1] / "rig"
sys.path.insert(0, str(RIG_DIR))
import rig  # noqa: E402

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
TINY = ["--algorithms", "sha256", "--sizes", "1024", "--threads", "1", "--api", "evp", "--seconds", "1",
        "--idle-wait", "0"]


def sslbench(*args, env=None, stdin=None, timeout=900):
    return subprocess.run([SSLBENCH, *args], capture_output=True, text=True, timeout=timeout, env=env, input=stdin)


def without_vault_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "ANSIBLE_VAULT_PASSWORD_FILE"}


def only_run(results: Path):
    [run_dir] = store.list_runs(results)
    return run_dir, store.load_run(run_dir)


def nothing_says(secret: str, *places: Path) -> None:
    for place in places:
        for path in [place] if place.is_file() else place.rglob("*"):
            if path.is_file():
                assert secret not in path.read_text(errors="replace"), f"the password leaked into {path}"


def test_vaulted_sudo_password_through_vault_password_file(rig_inventory, tmp_path):
    # what a user types: their inventory unchanged, the vault password file on the command line
    result = sslbench("run", "-i", str(rig_inventory), "--limit", "debian1", "--vault-password-file",
                      str(rig.VAULT_PASSWORD_FILE), *TINY, "--results", str(tmp_path), env=without_vault_env())
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir, run = only_run(tmp_path)
    [host] = run.hosts
    assert host.status == HOST_OK and [m.status for m in host.measurements] == [OK]
    assert host.os.family == "debian"
    assert "--vault-password-file" in run.command
    nothing_says(rig.sudo_password(), run_dir, Path(tmp_path))


def test_vaulted_inventory_without_the_vault_password_is_one_clear_line(rig_inventory, tmp_path):
    result = sslbench("run", "-i", str(rig_inventory), "--limit", "debian1", *TINY, "--results", str(tmp_path),
                      env=without_vault_env())
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "--vault-password-file" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_become_password_typed_at_the_prompt(rig_inventory, tmp_path):
    # the same host in an inventory of the user's own without the vaulted group_vars: -K asks for it
    inventory = tmp_path / "hosts.yml"
    data = yaml.safe_load(rig_inventory.read_text())
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"debian1": data["all"]["children"]["debian"]["hosts"]["debian1"]}}}))
    results = tmp_path / "results"
    plain = sslbench("run", "-i", str(inventory), *TINY, "--results", str(results))
    assert plain.returncode == 1 and "debian1" in plain.stderr  # sudo needs its password
    shutil.rmtree(results)
    typed = sslbench("run", "-i", str(inventory), "-K", *TINY, "--results", str(results),
                     stdin=rig.sudo_password() + "\n")
    assert typed.returncode == 0, typed.stderr[-3000:]
    run_dir, run = only_run(results)
    assert run.hosts[0].status == HOST_OK
    nothing_says(rig.sudo_password(), results)


def test_ssh_password_typed_at_the_prompt(rig_inventory, tmp_path):
    # -k: no key at all, the login password answers ssh's prompt (sshpass), -K the same one for sudo
    data = yaml.safe_load(rig_inventory.read_text())["all"]["children"]["debian"]["hosts"]["debian1"]
    data = {k: v for k, v in data.items() if k != "ansible_ssh_private_key_file"}
    data["ansible_ssh_common_args"] = data["ansible_ssh_common_args"].replace("-o IdentitiesOnly=yes",
                                                                              "-o PubkeyAuthentication=no")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"debian1": data}}}))
    results = tmp_path / "results"
    typed = sslbench("run", "-i", str(inventory), "-k", "-K", *TINY, "--results", str(results),
                     stdin=f"{rig.sudo_password()}\n{rig.sudo_password()}\n")
    assert typed.returncode == 0, typed.stderr[-3000:]
    assert only_run(results)[1].hosts[0].status == HOST_OK
    nothing_says(rig.sudo_password(), results)


def test_a_failed_jump_hop_shows_sshs_own_reason_in_every_report(rig_inventory, tmp_path):
    # the user's ssh config does not know jump1's host key: the hop fails before ddwrt2 is even asked
    ssh_config = tmp_path / "ssh_config"
    unknown = tmp_path / "empty_known_hosts"
    unknown.write_text("")
    ssh_config.write_text(re.sub(r"UserKnownHostsFile \S+", f"UserKnownHostsFile {unknown}",
                                 (rig.STATE / "ssh_config").read_text()))
    data = yaml.safe_load(rig_inventory.read_text())["all"]["children"]
    hidden = dict(data["ddwrt"]["hosts"]["ddwrt2"])
    hidden["ansible_ssh_common_args"] = hidden["ansible_ssh_common_args"].replace(f"-F {rig.STATE / 'ssh_config'}",
                                                                                  f"-F {ssh_config}")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"ddwrt2": hidden,
                                                           "ddwrt1": data["ddwrt"]["hosts"]["ddwrt1"]}}}))
    results = tmp_path / "results"
    result = sslbench("run", "-i", str(inventory), *TINY, "--results", str(results))
    assert result.returncode == 1
    _, run = only_run(results)
    by_host = {h.host: h for h in run.hosts}
    assert by_host["ddwrt1"].status == HOST_OK
    assert by_host["ddwrt2"].status == HOST_UNREACHABLE
    assert "Host key verification failed." in by_host["ddwrt2"].reason, by_host["ddwrt2"].reason
    for fmt in ("table", "markdown", "csv", "json"):
        shown = sslbench("report", "--results", str(results), "--format", fmt)
        assert shown.returncode == 0 and "ddwrt2" in shown.stdout and "unreachable" in shown.stdout, fmt
        assert "Host key verification failed." in shown.stdout, fmt
    rows = json.loads(sslbench("report", "--results", str(results), "--format", "json").stdout)
    assert [r["status"] for r in rows if r["host"] == "ddwrt2"] == [HOST_UNREACHABLE]
    page = tmp_path / "report.html"
    assert sslbench("report", "--results", str(results), "--format", "html", "-o", str(page)).returncode == 0
    assert "ddwrt2" in page.read_text() and "Host key verification failed." in page.read_text()


def test_ansible_options_typed_on_the_command_line(rig_inventory, tmp_path):
    # an inventory that says only where debian1 is: user, key, become, host keys and the sudo password all come
    # from the options a user types with ansible-playbook
    hv = yaml.safe_load(rig_inventory.read_text())["all"]["children"]["debian"]["hosts"]["debian1"]
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(f"debian1 ansible_host={hv['ansible_host']} ansible_port={hv['ansible_port']}\n")
    results = tmp_path / "results"
    password = rig.sudo_password()
    result = sslbench("run", "-i", str(inventory), "-u", rig.SUDO_USER, "-b", "--private-key",
                      hv["ansible_ssh_private_key_file"], "--ssh-common-args",
                      f"-o UserKnownHostsFile={rig.STATE / 'known_hosts'} -o StrictHostKeyChecking=yes",
                      "-e", f"ansible_become_password={password}", "-vvv", *TINY, "--results", str(results))
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir, run = only_run(results)
    assert run.hosts[0].status == HOST_OK and run.hosts[0].measurements[0].status == OK
    assert "ansible_become_password=***" in run.command
    assert "<127.0.0.26> ESTABLISH SSH CONNECTION FOR USER: bench" in (run_dir / "ansible-stdout.txt").read_text()
    nothing_says(password, results)
