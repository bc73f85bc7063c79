"""import saved logs -> stored run -> history -> diff --by firmware, through the real CLI and parser."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from orchestrator import cli, store

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"
GCM_X86 = DATA / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"
SHA_X86 = DATA / "openssl-3.0.19-x86_64-evp-sha256.txt"
GCM_ARM = DATA / "openssl-1.1.1w-armv7l-qemu-evp-aes-128-gcm.txt"


def run_dirs(results: Path) -> list[Path]:
    return store.list_runs(results)


def test_import_stores_run_with_raw_logs_and_firmware_label(tmp_path, capsys):
    results = tmp_path / "results"
    code = cli.main(["import", str(GCM_X86), str(SHA_X86), "--host", "box", "--firmware", "fw-1",
                     "--results", str(results)])
    assert code == 0
    out = capsys.readouterr().out
    (run_dir,) = run_dirs(results)
    assert run_dir.name in out and str(run_dir) in out
    run = store.load_run(run_dir)
    assert run.source == "import"
    (host,) = run.hosts
    assert host.host == "box" and host.firmware == "fw-1"
    assert {m.algorithm for m in host.measurements} == {"aes-128-gcm", "sha256"}
    assert host.openssl.version == "3.0.19"
    assert len(host.logs) == 2
    for rel, original in zip(host.logs, (GCM_X86, SHA_X86)):
        assert (run_dir / rel).read_bytes() == original.read_bytes()


def test_same_cell_in_several_logs_becomes_repeats(tmp_path, capsys):
    results = tmp_path / "results"
    repeats = [DATA / "field-repeats" / f"a{i}.log" for i in (1, 2, 3)]  # three saved runs, not one log thrice
    assert cli.main(["import", *map(str, repeats), "--host", "box", "--results", str(results)]) == 0
    (run_dir,) = run_dirs(results)
    cells = {}
    for m in store.load_run(run_dir).hosts[0].measurements:
        cells.setdefault((m.algorithm, m.block_size), []).append(m.repeat)
    assert cells == {("aes-128-gcm", 16384): [0, 1, 2]}


def test_import_history_and_diff_by_firmware(tmp_path, capsys):
    results = str(tmp_path / "results")
    assert cli.main(["import", str(GCM_ARM), "--host", "router", "--firmware", "old-fw", "--results", results]) == 0
    assert cli.main(["import", str(GCM_X86), "--host", "router", "--results", results]) == 0
    capsys.readouterr()
    assert cli.main(["history", "router", "--results", results, "--format", "json"]) == 0
    history = json.loads(capsys.readouterr().out)
    labels = [h["firmware"] for h in history]
    assert "old-fw" in labels and any(label.startswith("OpenSSL 3.0.19 [") for label in labels)
    assert cli.main(["diff", "--host", "router", "--by", "firmware", "--from", "old-fw", "--to", "3.0.19",
                     "--results", results, "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 6
    at_16k = next(r for r in records if r["block_size"] == 16384)
    # 1.1.1w under qemu: 30703.62k; 3.0.19 on x86: 3333105.58k (the tables' "1000s of bytes")
    assert at_16k["old"] == 30703.62e3 and at_16k["new"] == 3333105.58e3
    assert at_16k["significant"] is None  # one sample per side
    assert round(at_16k["delta_pct"], 1) == round((3333105.58 / 30703.62 - 1) * 100, 1)


def test_empty_log_is_an_error_naming_the_file_and_stores_nothing(tmp_path, capsys):
    empty = tmp_path / "empty.log"
    empty.write_text("root@OpenWrt:~# uptime\n 12:00:01 up 3 days\n")
    results = tmp_path / "results"
    assert cli.main(["import", str(GCM_X86), str(empty), "--host", "box", "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert str(empty) in err and "no openssl speed results" in err
    assert run_dirs(results) == []


def test_unreadable_inputs_exit_2(tmp_path, capsys):
    results = str(tmp_path / "results")
    assert cli.main(["import", str(tmp_path / "missing.log"), "--host", "box", "--results", results]) == 2
    assert "missing.log: no such file" in capsys.readouterr().err
    assert cli.main(["import", str(tmp_path), "--host", "box", "--results", results]) == 2
    assert "is a directory" in capsys.readouterr().err
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\x7fELF\0\0\0")
    assert cli.main(["import", str(binary), "--host", "box", "--results", results]) == 2
    assert "not a text log" in capsys.readouterr().err
    packed = tmp_path / "speed.log.gz"
    packed.write_bytes(gzip.compress(b"OpenSSL 3.0.2 15 Mar 2022\n"))
    assert cli.main(["import", str(packed), "--host", "box", "--results", results]) == 2
    assert "gzip-compressed" in capsys.readouterr().err
    assert run_dirs(results) == []


def test_import_reads_a_log_saved_by_powershell_as_parse_does(tmp_path, capsys):
    """`openssl speed ... > speed.log` in Windows PowerShell (over ssh.exe) writes UTF-16 with a byte-order mark."""
    log = tmp_path / "speed.log"
    log.write_bytes(GCM_X86.read_text().encode("utf-16"))
    assert cli.main(["import", str(log), "--host", "box", "--results", str(tmp_path / "results")]) == 0
    run = store.load_run(run_dirs(tmp_path / "results")[0])
    assert {m.algorithm for m in run.hosts[0].measurements} == {"aes-128-gcm"}


def test_per_cluster_rows_of_one_log_are_cells_of_their_own_not_repeats():
    from orchestrator.analysis.provenance import merge
    from orchestrator.model import Measurement, ParsedLog

    log = ParsedLog(measurements=[Measurement("aes-256-cbc", 16, 1e8, cpu="Cortex-A72"),
                                  Measurement("aes-256-cbc", 16, 5e7, cpu="Cortex-A53")])
    again = ParsedLog(measurements=[Measurement("aes-256-cbc", 16, 1.1e8, cpu="Cortex-A72")])
    result = merge("sige5", [log, again], None)
    assert [(m.cpu, m.repeat) for m in result.measurements] == [
        ("Cortex-A72", 0), ("Cortex-A53", 0), ("Cortex-A72", 1)]
