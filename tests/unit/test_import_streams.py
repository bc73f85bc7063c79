"""`sslbench import` reads streams (stdin, pipes, FIFOs) once and with a bound; a run lands whole or not at all, and
once under the store's lock (issue 37, items 6-9). Through real processes: the pipe users type, concurrent imports."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from orchestrator import cli, store, logfiles
from orchestrator.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "speed"
LOG = DATA / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"
OTHERS = sorted(DATA.glob("openssl-1.1.1w-*.txt"))[:3]
SSLBENCH = [sys.executable, "-m", "orchestrator"]


def _sslbench(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SSLBENCH, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          **kw)  # type: ignore[call-overload]


def _store(results: Path) -> list[str]:
    """Everything in the store but its own bookkeeping (lock, journal)."""
    if not results.exists():
        return []
    return sorted(p.name for p in results.iterdir() if p.name not in (store.LOCK_FILE, ".written"))


def test_a_real_openssl_speed_piped_into_import_dash_is_stored(tmp_path: Path):
    """`ssh router 'openssl speed …' | sslbench import - --host router`, with this machine's openssl for ssh."""
    results = tmp_path / "results"
    speed = subprocess.Popen(["sh", "-c", "openssl speed -seconds 1 -bytes 1024 -evp sha256 2>&1"],
                             stdout=subprocess.PIPE)
    done = subprocess.run([*SSLBENCH, "import", "-", "--host", "router", "--results", str(results)], cwd=ROOT,
                          stdin=speed.stdout, capture_output=True, text=True, timeout=120)
    assert speed.wait(timeout=60) == 0
    assert done.returncode == 0, done.stderr
    (run_dir,) = store.list_runs(results)
    (host,) = store.load_run(run_dir).hosts
    assert [(m.algorithm, m.block_size) for m in host.measurements] == [("sha256", 1024)]
    (copy,) = host.logs
    assert b"sha256" in (run_dir / copy).read_bytes() and copy.endswith("stdin")
    assert _store(results) == [run_dir.name]


def test_process_substitution_and_a_fifo_are_read_once(tmp_path: Path):
    results = tmp_path / "results"
    done = subprocess.run(["bash", "-c", f'{" ".join(SSLBENCH)} import <(cat "$0") --host a --results "$1"',
                           str(LOG), str(results)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(OTHERS[0].read_bytes()))
    writer.start()
    done = _sslbench("import", str(fifo), "--host", "b", "--results", str(results))
    writer.join(timeout=60)
    assert done.returncode == 0, done.stderr
    runs = [store.load_run(path) for path in store.list_runs(results)]
    assert [run.hosts[0].host for run in runs] == ["a", "b"]
    for run, original in zip(runs, (LOG, OTHERS[0])):
        assert (results / run.run_id / run.hosts[0].logs[0]).read_bytes() == original.read_bytes()
    assert _store(results) == [run.run_id for run in runs]


def test_dev_zero_is_refused_at_its_first_bytes(tmp_path: Path):
    results = tmp_path / "results"
    done = _sslbench("import", "/dev/zero", "--host", "a", "--results", str(results))
    assert done.returncode == 2 and done.stderr.strip() == "sslbench: /dev/zero is not a text log (it contains binary data)"
    assert _store(results) == []


def test_endless_text_stops_at_the_size_cap(tmp_path: Path):
    """A stream of text that never ends (`yes`) is read up to the cap, then refused, not held whole."""
    endless = subprocess.Popen(["yes", "aes-128-gcm  1.00k 2.00k"], stdout=subprocess.PIPE)
    try:
        assert endless.stdout is not None
        with pytest.raises(UserError, match="larger than 2 MB"):
            logfiles.read_log(f"/dev/fd/{endless.stdout.fileno()}", limit=2_000_000)
    finally:
        endless.kill()
        endless.wait()


def test_a_failed_write_leaves_nothing_in_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]):
    results = tmp_path / "results"

    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(store, "save_run", full)
    assert cli.main(["import", str(LOG), "--host", "a", "--results", str(results)]) == 2
    assert "No space left" in capsys.readouterr().err
    assert _store(results) == []


@pytest.mark.parametrize("date", ["0001-01-01T00:00:00+02:00", "9999-12-31T23:59:59-05:00"])
def test_a_date_out_of_range_is_one_line(tmp_path: Path, date: str):
    done = _sslbench("import", str(LOG), "--host", "a", "--date", date, "--results", str(tmp_path / "r"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "--date" in done.stderr, done.stderr
    assert _store(tmp_path / "r") == []


def test_two_imports_of_one_log_at_once_store_it_once(tmp_path: Path):
    results = tmp_path / "results"
    for attempt in range(3):
        command = [*SSLBENCH, "import", str(OTHERS[attempt]), "--host", "a", "--results", str(results)]
        both = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
        codes = sorted(p.wait(timeout=120) for p in both)
        assert codes == [0, 2], [p.communicate() for p in both]
    assert len(store.list_runs(results)) == 3


def test_concurrent_imports_of_different_logs_each_land_once(tmp_path: Path):
    results = tmp_path / "results"
    logs = [LOG, *OTHERS]
    started = [subprocess.Popen([*SSLBENCH, "import", str(log), "--host", f"h{i}", "--results", str(results)],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for i, log in enumerate(logs)]
    assert [p.wait(timeout=120) for p in started] == [0] * len(logs)
    hosts = sorted(store.load_run(path).hosts[0].host for path in store.list_runs(results))
    assert hosts == [f"h{i}" for i in range(len(logs))]
    assert len((results / ".written").read_text().splitlines()) == len(logs)


def test_runs_starting_while_imports_land_are_each_written_once(tmp_path: Path):
    """What `sslbench run` does with the store (store.new_run_dir, then run.json), in processes of its own, while
    imports land: every run is in the store and in its journal once, in one order."""
    results = tmp_path / "results"
    start_run = ("import sys\nfrom orchestrator import store\nfrom orchestrator.model import Run\n"
                 "d = store.new_run_dir(sys.argv[1])\n"
                 "store.save_run(d, Run(run_id=d.name, created=store.utc_now()))\n")
    started = [subprocess.Popen([sys.executable, "-c", start_run, str(results)], cwd=ROOT) for _ in range(4)]
    started += [subprocess.Popen([*SSLBENCH, "import", str(log), "--host", f"h{i}", "--results", str(results)],
                                 cwd=ROOT, stdout=subprocess.DEVNULL) for i, log in enumerate([LOG, *OTHERS])]
    assert [p.wait(timeout=120) for p in started] == [0] * len(started)
    runs = [p.name for p in store.list_runs(results)]
    written = [line.split("\t")[0] for line in (results / ".written").read_text().splitlines()]
    assert len(runs) == len(started) and sorted(written) == sorted(runs) and runs == written
