"""The SSH options and variables of an Ansible user, on a rig host (raspbian1, OpenSSH): the same inputs, from the
user's project directory, through ansible-playbook and through `sslbench hosts`, the same outcome. The project
holds the key, known_hosts and an ssh_config under relative names; the inventory says only the address and port,
so the host is reached only when the option under test does its part."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import ansible_user
from ansible_user import same_outcome

pytestmark = [pytest.mark.rig, pytest.mark.slow]

HOST = "raspbian1"
KEY = Path("/srv/sslbench-rig/keys/client_ed25519")


@pytest.fixture(autouse=True)
def own_ssh_masters(tmp_path, monkeypatch):
    """ansible-playbook's SSH master connections of one test only: a master a run before left open (ControlPersist)
    would let a later run in without the key or config under test."""
    monkeypatch.setitem(ansible_user.CLEAN_ENV, "ANSIBLE_SSH_CONTROL_PATH_DIR", str(tmp_path / "cp"))


@pytest.fixture
def project(tmp_path: Path, rig_hosts, rig_known_hosts) -> Path:
    host = rig_hosts[HOST]
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(KEY, root / "id_bench")
    (root / "id_bench").chmod(0o600)
    shutil.copy(rig_known_hosts, root / "known_hosts")
    (root / "hosts.yml").write_text(f"all:\n  hosts:\n    {HOST}:\n      ansible_host: {host['address']}\n"
                                    f"      ansible_port: {host['port']}\n      ansible_user: root\n")
    (root / "ssh_config").write_text(f"Host {host['address']}\n  IdentityFile {root / 'id_bench'}\n"
                                     f"  IdentitiesOnly yes\n  UserKnownHostsFile {root / 'known_hosts'}\n"
                                     "  BatchMode yes\n")
    return root


KNOWN = "-o UserKnownHostsFile=known_hosts -o IdentitiesOnly=yes -o BatchMode=yes"


def test_private_key_relative(project, tmp_path):
    # from another directory the same words name no key: refused (no master connection left to reuse: see above)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("hosts.yml", "known_hosts"):
        shutil.copy(project / name, elsewhere / name)
    same_outcome(elsewhere, ["-i", "hosts.yml", "--private-key", "id_bench", "--ssh-common-args", KNOWN],
                 expect_ok=False)
    same_outcome(project, ["-i", "hosts.yml", "--private-key", "id_bench", "--ssh-common-args", KNOWN])


def test_ssh_common_args_with_a_relative_config_file(project):
    same_outcome(project, ["-i", "hosts.yml", "--ssh-common-args", "-F no_such_config"], expect_ok=False)
    same_outcome(project, ["-i", "hosts.yml", "--ssh-common-args", "-F ssh_config"])


def test_ansible_private_key_file(project):
    same_outcome(project, ["-i", "hosts.yml", "--ssh-common-args", KNOWN], {"ANSIBLE_PRIVATE_KEY_FILE": "none_here"},
                 expect_ok=False)
    same_outcome(project, ["-i", "hosts.yml", "--ssh-common-args", KNOWN], {"ANSIBLE_PRIVATE_KEY_FILE": "id_bench"})


def test_ansible_ssh_args(project):
    same_outcome(project, ["-i", "hosts.yml"], {"ANSIBLE_SSH_ARGS": "-F no_such_config"}, expect_ok=False)
    same_outcome(project, ["-i", "hosts.yml"], {"ANSIBLE_SSH_ARGS": "-F ssh_config"})


def test_ansible_remote_user(project):
    """The inventory without a user: ANSIBLE_REMOTE_USER decides it, for sslbench as for ansible-playbook."""
    (project / "hosts.yml").write_text((project / "hosts.yml").read_text().replace("      ansible_user: root\n", ""))
    same_outcome(project, ["-i", "hosts.yml"], {"ANSIBLE_SSH_ARGS": "-F ssh_config", "ANSIBLE_REMOTE_USER": "root"})
    theirs, ours = same_outcome(project, ["-i", "hosts.yml"], {"ANSIBLE_SSH_ARGS": "-F ssh_config",
                                                               "ANSIBLE_REMOTE_USER": "nobody-here"},
                                expect_ok=False)
    assert "nobody-here@" in theirs.stdout + theirs.stderr or "Permission denied" in theirs.stdout
    assert "Permission denied" in ours.stdout + ours.stderr


def test_the_rig_fleet_without_its_vault_password_is_ansibles_error_not_unreachable_hosts(rig_inventory, tmp_path):
    """The issue's case: debian1's sudo password in a vaulted group_vars, no vault password given. Every host was
    "unreachable: ... (a site worker gone?)"; ansible-playbook itself says it has no vault secret."""
    env = dict(ansible_user.CLEAN_ENV)  # no ANSIBLE_VAULT_PASSWORD_FILE (the rig fixture sets one here)
    (tmp_path / "p.yml").write_text(ansible_user.PLAYBOOK)
    theirs = ansible_user.run([str(ansible_user.BIN / "ansible-playbook"), "-i", str(rig_inventory),
                                    "p.yml"], tmp_path, env)
    assert theirs.returncode != 0
    assert "Attempting to decrypt but no vault secrets found" in theirs.stdout + theirs.stderr
    ours = ansible_user.run([str(ansible_user.BIN / "sslbench"), "run", "-i", str(rig_inventory),
                                  "--results", str(tmp_path / "results"), "--algorithms", "sha256", "--sizes", "16",
                                  "--threads", "1", "--seconds", "1", "--idle-wait", "0"], tmp_path, env)
    ansible_user.gave_up(ours, "Attempting to decrypt but no vault secrets found; give the vault password with")
