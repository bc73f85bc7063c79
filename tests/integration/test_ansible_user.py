"""sslbench as an Ansible user works, from their own project directory: every path they type and every ANSIBLE_*
variable they set means what it means to ansible-playbook, and when Ansible gives up the run ends with Ansible's
words (exit 2), not with every host "unreachable".

Each case runs the same inputs, from the same directory, through ansible-playbook (a one-task playbook) and through
`sslbench hosts` (the detect phase: one pass of sslbench's own playbook), and expects the same outcome. The project's
hosts are this machine, reached without SSH (`ansible_connection: local`), under a name of their own; the SSH
options are in test_ansible_user_ssh.py (a rig host).
"""
from __future__ import annotations

import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# the runs through ansible-playbook and sslbench, shared with test_ansible_user_ssh.py
from ansible_user import BIN, CLEAN_ENV, VAULT_PASSWORD, ansible_playbook, gave_up, hosts, run, same_outcome, sslbench

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl on this machine")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's Ansible project: an inventory whose host is this machine only once a variable says how to reach
    it (`benchbox`, ansible_host 127.0.0.1: without `ansible_connection: local` it would be SSH, which fails)."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "hosts.yml").write_text("all:\n  hosts:\n    benchbox:\n      ansible_host: 127.0.0.1\n"
                                    "      ansible_port: 1\n")
    (root / "local.yml").write_text("ansible_connection: local\n")
    return root


def vaulted(path: Path, text: str, password_file: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    subprocess.run([str(BIN / "ansible-vault"), "encrypt", "--vault-password-file", str(password_file), str(path)],
                   check=True, capture_output=True, env=CLEAN_ENV)


@pytest.fixture
def vaulted_project(project: Path) -> Path:
    """The connection variable in a vaulted group_vars file beside the inventory, the password in `vault-pass`."""
    (project / "vault-pass").write_text(VAULT_PASSWORD + "\n")
    vaulted(project / "group_vars" / "all" / "vault.yml", "ansible_connection: local\n", project / "vault-pass")
    return project


# --- paths typed on the command line ----------------------------------------------------------------------------

def test_relative_inventory(project):
    same_outcome(project, ["-i", "hosts.yml", "-e", "@local.yml"])


def test_extra_vars_from_a_relative_file(project, tmp_path):
    same_outcome(project, ["-i", "hosts.yml", "-e", "@local.yml"])
    # from elsewhere the same words name no file: both fail, Ansible's "Unable to retrieve file contents"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(project / "hosts.yml", elsewhere)
    same_outcome(elsewhere, ["-i", "hosts.yml", "-e", "@local.yml"], expect_ok=False)
    said = hosts(elsewhere, "-i", "hosts.yml", "-e", "@local.yml")
    assert said.returncode == 2 and "Unable to retrieve file contents" in said.stderr, said.stderr
    assert f"{elsewhere / 'local.yml'}' on the Ansible Controller" in said.stderr


def test_vault_password_file(vaulted_project):
    same_outcome(vaulted_project, ["-i", "hosts.yml", "--vault-password-file", "vault-pass"])


def test_vault_id_label_at_file(vaulted_project):
    same_outcome(vaulted_project, ["-i", "hosts.yml", "--vault-id", "prod@vault-pass"])


def test_results_are_stored_where_the_user_said(project):
    result = sslbench(project, "run", "-i", "hosts.yml", "-e", "@local.yml", "--results", "runs", "--algorithms",
                      "sha256", "--sizes", "16", "--threads", "1", "--seconds", "1", "--api", "evp",
                      "--idle-wait", "0")
    assert result.returncode == 0, result.stderr
    [run_json] = (project / "runs").glob("*/run.json")
    assert (run_json.parent / "benchbox").is_dir()


def test_config_is_read_from_the_users_directory(project):
    """--config: sslbench's own TOML (site workers), read where the user typed it, its errors in its words."""
    (project / "workers.toml").write_text("[workers.lab\n")
    said = hosts(project, "-i", "hosts.yml", "-e", "@local.yml", "--config", "workers.toml")
    assert said.returncode == 2 and "workers.toml" in said.stderr and "Traceback" not in said.stderr, said.stderr


# --- environment variables --------------------------------------------------------------------------------------

def test_ansible_config_relative(vaulted_project):
    conf = vaulted_project / "conf"
    conf.mkdir()
    # a path in ansible.cfg is relative to the file: the user's own config works unchanged
    (conf / "site.cfg").write_text("[defaults]\nvault_password_file = ../vault-pass\n")
    same_outcome(vaulted_project, ["-i", "hosts.yml"], {"ANSIBLE_CONFIG": "conf/site.cfg"})
    same_outcome(vaulted_project, ["-i", "hosts.yml"], {"ANSIBLE_CONFIG": "conf/none.cfg"}, expect_ok=False)


def test_ansible_cfg_in_the_current_directory(vaulted_project):
    (vaulted_project / "ansible.cfg").write_text("[defaults]\nvault_password_file = vault-pass\n")
    same_outcome(vaulted_project, ["-i", "hosts.yml"])


def test_ansible_vault_password_file_relative(vaulted_project):
    same_outcome(vaulted_project, ["-i", "hosts.yml"], {"ANSIBLE_VAULT_PASSWORD_FILE": "vault-pass"})


def test_ansible_inventory_relative(project):
    """Without -i, ANSIBLE_INVENTORY as ansible-playbook reads it (sslbench's own default is this machine)."""
    same_outcome(project, ["-e", "@local.yml"], {"ANSIBLE_INVENTORY": "hosts.yml"})
    ours = hosts(project, "-e", "@local.yml", env={"ANSIBLE_INVENTORY": "hosts.yml"})
    assert '"host": "benchbox"' in ours.stdout


def other_fleet(project: Path) -> None:
    """A second inventory whose host is reached without a variable of the project's: `otherbox`."""
    (project / "other.yml").write_text("all:\n  hosts:\n    otherbox:\n      ansible_connection: local\n")


def test_inventory_of_ansible_cfg_in_the_current_directory(project):
    """No -i, no ANSIBLE_INVENTORY: the `inventory =` of ./ansible.cfg, as ansible-playbook reads it, never this
    machine under sslbench's `localhost`; the output says which inventory it was."""
    (project / "ansible.cfg").write_text("[defaults]\ninventory = hosts.yml\n")
    theirs, ours = same_outcome(project, ["-e", "@local.yml"])
    assert "benchbox" in theirs.stdout and '"host": "benchbox"' in ours.stdout
    assert '"host": "localhost"' not in ours.stdout
    assert f"inventory: {project / 'hosts.yml'} (inventory = in {project / 'ansible.cfg'})" in ours.stderr


def test_inventory_of_ansible_config_relative_to_the_file(project):
    """ANSIBLE_CONFIG=cfg2/ansible.cfg naming `../other.yml` (relative to the file); ANSIBLE_INVENTORY, then -i, win
    over it, for both."""
    other_fleet(project)
    (project / "cfg2").mkdir()
    (project / "cfg2" / "ansible.cfg").write_text("[defaults]\ninventory = ../other.yml\n")
    env = {"ANSIBLE_CONFIG": "cfg2/ansible.cfg"}
    theirs, ours = same_outcome(project, [], env)
    assert "otherbox" in theirs.stdout and '"host": "otherbox"' in ours.stdout
    assert f"inventory: {project / 'other.yml'} (inventory = in {project / 'cfg2' / 'ansible.cfg'})" in ours.stderr
    env["ANSIBLE_INVENTORY"] = "hosts.yml"
    theirs, ours = same_outcome(project, ["-e", "@local.yml"], env)
    assert "otherbox" not in theirs.stdout and '"host": "benchbox"' in ours.stdout and "otherbox" not in ours.stdout
    assert "(ANSIBLE_INVENTORY)" in ours.stderr
    theirs, ours = same_outcome(project, ["-i", "other.yml"], env)
    assert "otherbox" in theirs.stdout and '"host": "otherbox"' in ours.stdout
    assert "inventory:" not in ours.stderr  # the one the user typed is not said back


def test_run_says_the_default_inventory_is_this_machine(project):
    """Nothing names an inventory (a config of the test's own: /etc/ansible/ansible.cfg must not count): `run` says
    it measures this machine."""
    (project / "ansible.cfg").write_text("[defaults]\nforks = 3\n")
    result = sslbench(project, "run", "--results", "runs", "--algorithms", "sha256", "--sizes", "16", "--threads",
                      "1", "--seconds", "1", "--api", "evp", "--idle-wait", "0")
    assert result.returncode == 0, result.stderr
    assert "inventory: sslbench's default: this machine only (localhost)" in result.stderr


def test_wrong_vault_password_file(vaulted_project):
    """A password file that does not open the vault: Ansible's words, and a hint that names the file given (never
    "give the vault password with --vault-password-file", which the user did)."""
    (vaulted_project / "wrong-pass").write_text("not the password\n")
    args = ["-i", "hosts.yml", "--vault-password-file", "wrong-pass"]
    theirs = ansible_playbook(vaulted_project, *args)
    assert theirs.returncode != 0 and "Decryption failed" in theirs.stdout + theirs.stderr
    ours = hosts(vaulted_project, *args)
    gave_up(ours, "Decryption failed")
    assert "the vault password in wrong-pass (--vault-password-file) does not open" in ours.stderr, ours.stderr
    assert "give the vault password" not in ours.stderr
    # the same file named by ansible.cfg: the hint says where it came from
    (vaulted_project / "ansible.cfg").write_text("[defaults]\nvault_password_file = wrong-pass\n")
    ours = hosts(vaulted_project, "-i", "hosts.yml")
    gave_up(ours, "Decryption failed")
    assert f"{vaulted_project / 'wrong-pass'} (vault_password_file in {vaulted_project / 'ansible.cfg'})" \
        in ours.stderr, ours.stderr


# --- Ansible's own words when it gives up -----------------------------------------------------------------------

def two_host_project(project: Path) -> Path:
    """Two hosts, the second in a group with a vaulted group_vars: ansible-playbook has started the first host's
    task when it gives up on the second."""
    (project / "vault-pass").write_text(VAULT_PASSWORD + "\n")
    (project / "two.yml").write_text(
        "all:\n  hosts:\n    benchbox:\n      ansible_connection: local\n  children:\n    secret:\n      hosts:\n"
        "        other:\n          ansible_connection: local\n")
    vaulted(project / "group_vars" / "secret" / "vault.yml", "sslbench_check: vaulted\n", project / "vault-pass")
    return project


def test_vault_secret_missing(project):
    two_host_project(project)
    theirs = ansible_playbook(project, "-i", "two.yml")
    assert theirs.returncode != 0 and "no vault secrets found" in theirs.stdout + theirs.stderr
    gave_up(hosts(project, "-i", "two.yml"), "Attempting to decrypt but no vault secrets found")
    gave_up(sslbench(project, "run", "-i", "two.yml", "--results", "runs"),
            "Attempting to decrypt but no vault secrets found")
    # and with the password both go through
    same_outcome(project, ["-i", "two.yml", "--vault-password-file", "vault-pass"])


def test_inventory_plugin_error(project):
    """A `constructed` inventory whose strict `compose` names an undefined variable: Ansible parses nothing."""
    (project / "inv").mkdir()
    shutil.copy(project / "hosts.yml", project / "inv" / "01-hosts.yml")
    (project / "inv" / "02-constructed.yml").write_text(
        "plugin: ansible.builtin.constructed\nstrict: true\ncompose:\n  ansible_connection: no_such_variable\n")
    theirs = ansible_playbook(project, "-i", "inv", env={"ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "true"})
    assert theirs.returncode != 0
    ours = hosts(project, "-i", "inv", env={"ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "true"})
    gave_up(ours, "no_such_variable")


def test_missing_collection(project):
    """A strategy from a collection that is not installed: Ansible's "Invalid play strategy specified"."""
    env = {"ANSIBLE_STRATEGY": "community.absent.fast"}
    theirs = ansible_playbook(project, "-i", "hosts.yml", "-e", "@local.yml", env=env)
    assert theirs.returncode != 0 and "Invalid play strategy specified" in theirs.stdout + theirs.stderr
    gave_up(hosts(project, "-i", "hosts.yml", "-e", "@local.yml", env=env),
            "Invalid play strategy specified: community.absent.fast")


def test_inventory_plugin_from_a_missing_collection(project):
    """ansible-playbook only warns and plays to no host (exit 0); sslbench, which has nothing to measure, ends with
    Ansible's warning (exit 2)."""
    (project / "absent.yml").write_text("plugin: community.absent.thing\n")
    theirs = ansible_playbook(project, "-i", "absent.yml")
    assert "specifies unknown plugin 'community.absent.thing'" in theirs.stdout + theirs.stderr
    gave_up(hosts(project, "-i", "absent.yml"), "specifies unknown plugin 'community.absent.thing'")


def test_bad_ansible_cfg(project):
    (project / "ansible.cfg").write_text("[defaults\nforks = 3\n")
    theirs = ansible_playbook(project, "-i", "hosts.yml", "-e", "@local.yml")
    assert theirs.returncode != 0 and "Error reading config file" in theirs.stdout + theirs.stderr
    gave_up(hosts(project, "-i", "hosts.yml", "-e", "@local.yml"), "Error reading config file")


def enable_callback(project, methods: str) -> None:
    """A notification callback plugin `boom` with the given methods, enabled by the project's ansible.cfg."""
    (project / "callback_plugins").mkdir()
    (project / "callback_plugins" / "boom.py").write_text(textwrap.dedent("""\
        from ansible.plugins.callback import CallbackBase


        class CallbackModule(CallbackBase):
            CALLBACK_VERSION = 2.0
            CALLBACK_TYPE = "notification"
            CALLBACK_NAME = "boom"
            CALLBACK_NEEDS_ENABLED = True

    """) + textwrap.indent(textwrap.dedent(methods), "    "))
    (project / "ansible.cfg").write_text("[defaults]\ncallback_plugins = callback_plugins\ncallbacks_enabled = boom\n")


def test_callback_that_raises(project):
    """A notification callback whose every event raises: Ansible warns and goes on, and so does sslbench (its
    events come through ansible-runner's own callback); one that cannot load at all is Ansible's warning too."""
    enable_callback(project, """\
            def v2_runner_on_start(self, host, task):
                raise RuntimeError("boom in a callback")

            def v2_runner_on_ok(self, result):
                raise RuntimeError("boom in a callback")
    """)
    theirs, _ours = same_outcome(project, ["-i", "hosts.yml", "-e", "@local.yml"])
    assert "boom in a callback" in theirs.stdout + theirs.stderr  # the callback did run, and raise


def test_callback_that_raises_in_its_constructor_is_a_warning_for_both(project):
    enable_callback(project, """\
            def __init__(self, *args, **kwargs):
                raise RuntimeError("boom in a callback")
    """)
    theirs, _ours = same_outcome(project, ["-i", "hosts.yml", "-e", "@local.yml"])
    assert "Failed to load callback plugin 'boom'" in theirs.stdout + theirs.stderr


# --- dynamic inventories ----------------------------------------------------------------------------------------

def test_constructed_inventory_plugin_file(project):
    """A `constructed` file beside a static one (an inventory directory, as users keep them): the host is in the
    group constructed makes, whose group_vars say how to reach it."""
    inv = project / "inv"
    (inv / "group_vars" / "benchmarked").mkdir(parents=True)
    (inv / "01-static.yml").write_text("all:\n  hosts:\n    benchbox:\n      ansible_host: 127.0.0.1\n"
                                       "      ansible_port: 1\n      role: bench\n")
    (inv / "02-constructed.yml").write_text(
        "plugin: ansible.builtin.constructed\nstrict: true\ngroups:\n  benchmarked: role == 'bench'\n")
    (inv / "group_vars" / "benchmarked" / "conn.yml").write_text("ansible_connection: local\n")
    same_outcome(project, ["-i", "inv"])
    # without the constructed file the host has no group, so no way to be reached: both fail
    (inv / "02-constructed.yml").unlink()
    same_outcome(project, ["-i", "inv"], expect_ok=False)


def test_executable_script_inventory(project):
    """An executable inventory script (`--list` JSON, Ansible's script plugin), with a relative path."""
    script = project / "inventory.py"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, sys
        if sys.argv[1:] == ["--list"]:
            print(json.dumps({{"bench": {{"hosts": ["scripted"]}},
                               "_meta": {{"hostvars": {{"scripted": {{"ansible_connection": "local"}}}}}}}}))
        else:
            print("{{}}")
    """))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    _theirs, ours = same_outcome(project, ["-i", "inventory.py"])
    assert '"host": "scripted"' in ours.stdout


def test_vault_id_label_at_prompt_is_asked_here_and_answers_ansibles_prompt(project):
    """`--vault-id dev@prompt`: sslbench asks once (no terminal here: getpass reads stdin) and answers
    ansible-playbook's own "Vault password (dev): " prompt; the password is on no command line and in no file."""
    (project / "vault-pass").write_text(VAULT_PASSWORD + "\n")
    path = project / "group_vars" / "all" / "vault.yml"
    path.parent.mkdir(parents=True)
    path.write_text("ansible_connection: local\n")
    subprocess.run([str(BIN / "ansible-vault"), "encrypt", "--vault-id", f"dev@{project / 'vault-pass'}", str(path)],
                   check=True, capture_output=True, env=CLEAN_ENV)
    (project / "vault-pass").unlink()
    ours = subprocess.run([str(BIN / "sslbench"), "hosts", "-i", "hosts.yml", "--idle-wait", "0", "--format", "json",
                           "--vault-id", "dev@prompt"], cwd=project, env=CLEAN_ENV, input=VAULT_PASSWORD + "\n",
                          capture_output=True, text=True, timeout=120, start_new_session=True)
    assert ours.returncode == 0, ours.stdout + ours.stderr
    assert '"status": "ok"' in ours.stdout and "Vault password (dev): " in ours.stderr
    wrong = subprocess.run([str(BIN / "sslbench"), "hosts", "-i", "hosts.yml", "--vault-id", "dev@prompt"],
                           cwd=project, env=CLEAN_ENV, input="not it\n", capture_output=True, text=True, timeout=120,
                           start_new_session=True)
    assert wrong.returncode == 2 and "Decryption failed" in wrong.stderr, wrong.stderr
    assert "the vault password typed at 'Vault password (dev):' (--vault-id dev@prompt) does not open" \
        in wrong.stderr, wrong.stderr
