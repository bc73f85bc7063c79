"""Fixtures for tests against the loopback test fleet (tests/rig, `make rig-up`).

Tests marked `rig` are skipped, with the reason, when the fleet is not up; they never fail for it.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

RIG_DIR = Path(__file__).resolve().parents[1] / "rig"
RIG_PY = RIG_DIR / "rig.py"
INVENTORY = RIG_DIR / "inventory.yml"
SSH_CONFIG = RIG_DIR / "state" / "ssh_config"
KNOWN_HOSTS = RIG_DIR / "state" / "known_hosts"
# debian1's sudo password is in a vaulted group_vars file (tests/rig/group_vars/debian/vault.yml), as users keep
# theirs: every Ansible run against the whole inventory needs the vault password, like a user's ansible.cfg gives it.
VAULT_PASSWORD_FILE = RIG_DIR / "state" / "vault-pass"


def rig_cli(*args: str) -> subprocess.CompletedProcess:
    """Run tests/rig/rig.py with args (needs root, like the fleet itself)."""
    return subprocess.run([sys.executable, str(RIG_PY), *args], capture_output=True, text=True, timeout=180)


def inventory_hosts(path: Path = INVENTORY) -> dict[str, dict]:
    """host name -> {family, address, port, vars} from the rig's inventory (group = family)."""
    data = yaml.safe_load(path.read_text())
    hosts = {}
    for family, group in data["all"]["children"].items():
        for name, hostvars in (group.get("hosts") or {}).items():
            hosts[name] = {"family": family, "address": hostvars["ansible_host"],
                           "port": hostvars["ansible_port"], "vars": dict(hostvars)}
    return hosts


def _unavailable_reason() -> str | None:
    if not INVENTORY.exists() or not SSH_CONFIG.exists():
        return "the test fleet is not up (no tests/rig/inventory.yml): run `make rig-up` as root"
    status = rig_cli("status")
    if status.returncode != 0:
        down = [l.split()[0] for l in status.stdout.splitlines() if l.rstrip().endswith(("down", "?"))]
        return f"the test fleet is not answering ({', '.join(down) or status.stderr.strip()}): run `make rig-up`"
    return None


@pytest.fixture(scope="session")
def _rig_unavailable() -> str | None:
    return _unavailable_reason()


@pytest.fixture(autouse=True)
def _skip_rig_tests_without_fleet(request):
    if request.node.get_closest_marker("rig"):
        reason = request.getfixturevalue("_rig_unavailable")
        if reason:
            pytest.skip(reason)


@pytest.fixture(scope="session")
def rig_inventory(_rig_unavailable) -> Path:
    """Path of the fleet's Ansible inventory (one group per family); the vault password in the environment."""
    if _rig_unavailable:
        pytest.skip(_rig_unavailable)
    os.environ["ANSIBLE_VAULT_PASSWORD_FILE"] = str(VAULT_PASSWORD_FILE)
    return INVENTORY


@pytest.fixture(scope="session")
def rig_known_hosts(rig_inventory) -> Path:
    """The rig hosts' keys as `rig.py up` wrote them, for a test that lays out an ssh setup of its own."""
    return KNOWN_HOSTS


@pytest.fixture(scope="session")
def rig_hosts(rig_inventory) -> dict[str, dict]:
    """host name -> {"family", "address", "port", "vars"} for every host of the fleet."""
    return inventory_hosts(rig_inventory)


@pytest.fixture(scope="session")
def testinfra_host(rig_inventory):
    """Factory: testinfra_host("openwrt1") -> a testinfra Host over the ssh backend (plain shell, no
    Python needed on the host), with the rig's key and known_hosts and host key checking on."""
    import testinfra

    def make(name: str):
        # controlpersist=0: no multiplexed master connection that would outlive a stopped server.
        return testinfra.get_host(f"ssh://{name}", ssh_config=str(SSH_CONFIG), controlpersist=0)

    return make


class RigControl:
    """Faults on the fleet; whatever a test breaks is repaired when the test ends."""

    def __init__(self) -> None:
        self._stopped: set[str] = set()
        self._feed_down = False
        self._apk_repo_down = False

    def _rig(self, *args: str) -> None:
        result = rig_cli(*args)
        assert result.returncode == 0, f"rig.py {' '.join(args)}: {result.stderr}"

    def stop_host(self, name: str, sessions: bool = False) -> None:
        """Stop the host's SSH server (and, with sessions=True, end its open sessions too)."""
        self._rig("stop", name, *(["--sessions"] if sessions else []))
        self._stopped.add(name)

    def start_host(self, name: str) -> None:
        self._rig("start", name)
        self._stopped.discard(name)

    def feed_down(self) -> None:
        """Make the OpenWrt package feed unreachable (`opkg update` then fails: wget returned 4)."""
        self._rig("feed-down")
        self._feed_down = True

    def feed_up(self) -> None:
        self._rig("feed-up")
        self._feed_down = False

    @contextlib.contextmanager
    def apk_repo_unreachable(self):
        """openwrt3's apk repository unreachable (`apk update` then fails: wget exited with error 4)."""
        self._rig("apk-repo-down")
        self._apk_repo_down = True
        try:
            yield
        finally:
            self._rig("apk-repo-up")
            self._apk_repo_down = False

    @contextlib.contextmanager
    def host_stopped(self, name: str, sessions: bool = False):
        self.stop_host(name, sessions)
        try:
            yield
        finally:
            self.start_host(name)

    @contextlib.contextmanager
    def feed_unreachable(self):
        self.feed_down()
        try:
            yield
        finally:
            self.feed_up()

    def repair(self) -> None:
        for name in sorted(self._stopped):
            self.start_host(name)
        if self._feed_down:
            self.feed_up()
        if self._apk_repo_down:
            self._rig("apk-repo-up")


@pytest.fixture
def rig_control(rig_inventory):
    """Stop/start one host's SSH server, take the opkg feed or the apk repository down; all undone after the test."""
    control = RigControl()
    yield control
    control.repair()


@pytest.fixture
def openwrt_pristine(testinfra_host):
    """openwrt1 with no package lists and no openssl; put back that way after the test (later tests, such as
    test_rig's and the whole fleet's, expect the router as the rig hands it out: nothing installed)."""
    host = testinfra_host("openwrt1")
    clean = "opkg remove openssl-util libopenssl3 libatomic1 >/dev/null; rm -rf /var/opkg-lists"
    host.run(clean)
    yield host
    host.run(clean)
