"""A plain `pip install .` must carry the playbooks and the default inventory: `sslbench run`
without -i uses them, and users rarely install from a checkout in editable mode."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_carries_every_playbook_script_and_inventory_file(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("sslbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"orchestrator/{p.relative_to(ROOT)}" for top in ("playbooks", "inventory")
               for p in (ROOT / top).rglob("*") if p.is_file()}
    assert shipped, "nothing found under playbooks/ and inventory/"
    assert shipped <= names, f"missing from the wheel: {sorted(shipped - names)}"
    assert "orchestrator/parse/speed/__init__.py" in names and "orchestrator/commands/run.py" in names


def test_runner_finds_the_playbooks_and_the_default_inventory():
    from orchestrator import runner
    assert (runner.PLAYBOOK_DIR / runner.MAIN_PLAYBOOK).is_file()
    assert (runner.PLAYBOOK_DIR / "files" / "sslbench-run.sh").is_file()
    assert runner.default_inventory().is_file()
