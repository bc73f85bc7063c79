"""The one table of OS probes and package managers (orchestrator/run/platforms.py), as detect.sh and the playbook use it."""
import shlex
import shutil
import subprocess
from pathlib import Path

import yaml

from orchestrator.parse import protocol
from orchestrator.run import platforms

PLAYBOOKS = Path(__file__).resolve().parents[2] / "playbooks"
DETECT = PLAYBOOKS / "files" / "detect.sh"


def test_package_manager_choice_comes_from_what_was_found():
    choose = platforms.choose_package_manager
    assert choose(["opkg", "apk"]).name == "apk"  # OpenWrt 25 moved to apk
    assert choose(["/opt/bin/opkg"]).install.startswith("/opt/bin/opkg update && ")
    assert choose(["yum", "dnf"]).name == "dnf"
    assert choose(["yum"]).package == "openssl" and choose(["opkg"]).package == "openssl-util"
    assert choose([]) is None


def test_detect_looks_at_exactly_the_tables_files_and_package_managers(tmp_path):
    root = tmp_path / "root"
    release = root / "os-release"
    release.parent.mkdir()
    release.write_text('ID=openwrt\nVERSION_ID="23.05.5"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("cat", "uname", "grep", "ls", "df", "tail", "awk"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    for fake in ("opkg", "pacman"):
        (bin_dir / fake).write_text("#!/bin/sh\n")
        (bin_dir / fake).chmod(0o755)
    env = {"PATH": str(bin_dir), "SSLBENCH_SYSROOT": str(tmp_path / "none"),
           "SSLBENCH_RELEASE_FILES": f"{release} {root / 'missing-release'}",
           "SSLBENCH_PACKAGE_MANAGERS": f"apk opkg {bin_dir / 'pacman'} /no/such/opkg"}
    out = subprocess.run([shutil.which("sh"), str(DETECT)], capture_output=True, text=True, env=env, timeout=30)
    sections = protocol.split_sections(out.stdout)
    assert sections[str(release)] == 'ID=openwrt\nVERSION_ID="23.05.5"\n'
    assert str(root / "missing-release") not in sections
    assert sections["package managers"].split() == ["opkg", str(bin_dir / "pacman")]
    assert set(platforms.RELEASE_COMMANDS) <= set(sections) | {"nvram get os_version"}  # nvram only where it exists


def test_the_detect_step_takes_the_lists_and_the_install_step_is_the_package_managers_command():
    from orchestrator.run import stages

    script = stages.detect_script()
    assert f"SSLBENCH_RELEASE_FILES={shlex.quote(' '.join(platforms.RELEASE_FILES))}" in script.splitlines()
    assert f"SSLBENCH_PACKAGE_MANAGERS={shlex.quote(' '.join(pm.name for pm in platforms.PACKAGE_MANAGERS))}" in \
        script.splitlines()
    assert script.endswith((PLAYBOOKS / "files" / "detect.sh").read_text())
    plays = yaml.safe_load((PLAYBOOKS / "sslbench.yml").read_text())
    assert [list(t) for play in plays for t in play["tasks"]] == [["name", "sslbench_step", "changed_when"]]