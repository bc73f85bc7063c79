"""`sslbench parse`: in-process through cli.main, and once through the installed console script."""
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"
ROOT = Path(__file__).resolve().parents[2]
SESSION = DATA / "console" / "debian12-x86_64-openssl-3.0.19-session.txt"
MULTI = DATA / "speed" / "openssl-1.1.1w-armv7l-qemu-multi2-chacha20-poly1305.txt"
MIPS = DATA / "console" / "openwrt-18.06-gl-usb150-mips24kc-session.txt"


def run(capsys, *argv):
    code = main(["parse", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_shows_both_units_facts_and_pk(capsys):
    code, out, err = run(capsys, SESSION)
    assert code == 0
    assert "CPU:     AMD EPYC (x86, 2 logical CPUs)" in out
    assert "crypto:  aes pclmulqdq sha_ni avx2 vaes vpclmulqdq" in out
    assert "OS:      Debian GNU/Linux 12 (bookworm)" in out and "OpenSSL: 3.0.19" in out
    assert "Throughput in MB/s (MB/s = 10^6 bytes/s" in out and "Throughput in Mbit/s" in out
    aes_rows = [line.split() for line in out.splitlines() if line.startswith("aes-256-gcm")]
    assert aes_rows[0][:3] == ["aes-256-gcm", "evp", "2"]
    assert aes_rows[0][3] == "42.5" and aes_rows[1][3] == "340"  # 42,508,510 B/s = 42.5 MB/s = 340 Mbit/s
    assert "sign/s" in out and "rsa2048" in out
    assert err.startswith("note: ") and "Unknown algorithm chacha20-poly1305" in err
    assert err.count("\n") == 1  # one note line


def test_the_table_says_why_a_cell_is_not_a_plain_figure(capsys):
    code, out, _ = run(capsys, DATA / "speed" / "openssl-3.3.2-aarch64-constructed-verify-failed.txt")
    assert code == 0 and "error" in out
    assert "  rsa2048 verify: error: verify failed (openssl printed '-0.1')" in out.splitlines()
    code, out, _ = run(capsys, DATA / "speed" / "libressl-4.3.0-constructed-multi2-mlkem768.txt")
    assert "  ml-kem-768 (2 processes) keygen, encaps, decaps: partial-children: openssl's -multi summary has no figure" in out


def test_json_one_file_is_an_object(capsys):
    code, out, err = run(capsys, "--json", MULTI)
    assert code == 0 and err == ""
    data = json.loads(out)
    assert set(data) >= {"file", "measurements", "cpu", "os", "openssl", "skipped"}
    assert set(data["cpu"]) >= {"model", "logical_cpus", "crypto"}
    m = {(x["block_size"]): x for x in data["measurements"]}
    assert m[16]["algorithm"] == "chacha20-poly1305" and m[16]["threads"] == 2
    assert m[16]["bytes_per_second"] == 82660.08 * 1000
    assert data["openssl"]["version"] == "1.1.1w"


def test_json_is_compact_for_a_file_and_indented_on_a_terminal(capsys, monkeypatch):
    code, out, _ = run(capsys, "--json", MULTI)
    assert code == 0 and out.count("\n") == 1 and '": ' not in out and json.loads(out)["file"] == str(MULTI)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    code, out, _ = run(capsys, "--json", MULTI)
    assert code == 0 and out.startswith('{\n  "file": ') and json.loads(out)["file"] == str(MULTI)


def test_json_several_files_is_an_array(capsys):
    code, out, _ = run(capsys, "--json", MULTI, MIPS)
    assert code == 0
    data = json.loads(out)
    assert [Path(d["file"]).name for d in data] == [MULTI.name, MIPS.name]
    assert data[1]["cpu"]["model"] == "MIPS 24Kc V7.4" and data[1]["os"]["family"] == "openwrt"


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MULTI.read_bytes())))
    code, out, _ = run(capsys, "--json", "-")
    assert code == 0 and json.loads(out)["file"] == "-"


def test_utf16_log_saved_by_powershell(capsys, tmp_path):
    path = tmp_path / "speed.txt"
    path.write_bytes(MULTI.read_text().replace("\n", "\r\n").encode("utf-16"))  # BOM + UTF-16LE, CRLF
    code, out, _ = run(capsys, "--json", path)
    assert code == 0 and json.loads(out)["measurements"][0]["bytes_per_second"] == 82660.08 * 1000


def test_facts_only_session_prints_facts(capsys):
    code, out, _ = run(capsys, MIPS)
    assert code == 0
    assert "MIPS 24Kc V7.4 (mips, 1 logical CPU, Atheros AR9330 rev 1)" in out
    assert "no openssl speed results in this log" in out


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "is empty"),
        (b"   \n\n", "is empty"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)), "binary data"),
        (gzip.compress(MULTI.read_bytes()), "gzip-compressed"),
        (b"Dear diary,\ntoday nothing happened.\n", "found no openssl speed results"),
        (b"speed: Unknown algorithm -multi\n", "openssl said: speed: Unknown algorithm -multi"),
    ],
)
def test_bad_files_exit_2_with_one_line(capsys, tmp_path, content, message):
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    code, out, err = run(capsys, path)
    assert code == 2 and out == ""
    assert err.startswith("sslbench: ") and message in err and err.count("\n") == 1


def test_missing_path_and_directory(capsys, tmp_path):
    code, _, err = run(capsys, tmp_path / "nope.log")
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, tmp_path)
    assert code == 2 and "is a directory" in err


def test_one_bad_file_among_several_still_prints_the_good_ones(capsys, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    code, out, err = run(capsys, MULTI, empty)
    assert code == 2
    assert "chacha20-poly1305" in out
    assert "empty.log is empty" in err


def test_a_thousand_files_in_worker_processes_keep_their_order_and_their_errors(capsys, tmp_path):
    # 1,000+ files: parsed in worker processes (orchestrator.parse.batch); output and errors in file order.
    from orchestrator.parse import parse_console
    sources = [p for p in sorted((DATA / "speed").glob("*.txt")) if parse_console(p.read_text()).measurements]
    files = []
    for i in range(1100):
        path = tmp_path / f"{i:04d}.log"
        path.write_text(sources[i % len(sources)].read_text())
        files.append(path)
    files[5] = tmp_path / "missing.log"
    files[700].write_text("")
    code, out, err = run(capsys, "--json", *files)
    assert code == 2
    objects = json.loads(out)
    assert [o["file"] for o in objects] == [str(f) for f in files if f.name not in ("missing.log", "0700.log")]
    for o in objects[::97]:
        code_one, out_one, _ = run(capsys, "--json", o["file"])
        assert code_one == 0 and json.loads(out_one)["measurements"] == o["measurements"]
    problems = [line for line in err.splitlines() if line.startswith("sslbench: ")]
    assert problems[0].endswith("missing.log: no such file") and "0700.log is empty" in problems[1]


def test_every_file_bad_prints_nothing_on_stdout(capsys, tmp_path):
    code, out, err = run(capsys, "--json", tmp_path / "a.log", tmp_path / "b.log")
    assert code == 2 and out == "" and err.count("no such file") == 2


def test_help_explains_units_and_stdin(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["parse", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "10^6 bytes" in out and "- reads standard input" in out and "--json" in out


def test_installed_console_script():
    script = ROOT / ".venv" / "bin" / "sslbench"
    if not script.exists():
        pytest.skip("no .venv/bin/sslbench (run `make setup`)")
    done = subprocess.run([str(script), "parse", "--json", str(MULTI)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["measurements"][0]["algorithm"] == "chacha20-poly1305"
    done = subprocess.run([str(script), "parse", "/nonexistent.log"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("sslbench: ") and "Traceback" not in done.stderr


def test_a_batch_says_its_notes_in_one_line_and_each_file_keeps_them_in_its_json(capsys, tmp_path):
    # 1,000+ files (worker processes), a third with a part openssl refused: one note line, not one per file
    files = []
    for i in range(1200):
        path = tmp_path / f"{i:04d}.log"
        path.write_text((SESSION if i % 3 == 1 else MULTI).read_text())
        files.append(path)
    code, out, err = run(capsys, "--json", *files)
    assert code == 0
    objects = json.loads(out)
    assert [o["file"] for o in objects] == [str(f) for f in files]
    noted = [o["file"] for o in objects if o["skipped"]]
    assert noted == [str(f) for i, f in enumerate(files) if i % 3 == 1]
    assert all("Unknown algorithm chacha20-poly1305" in " ".join(o["skipped"]) for o in objects if o["skipped"])
    [note] = err.splitlines()
    assert note.startswith("note: 400 of 1200 files have parts that could not be read") and str(files[1]) in note
    # one file: its own note, as before
    code, out, err = run(capsys, "--json", SESSION)
    assert code == 0 and err.startswith(f"note: {SESSION}: skipped ") and err.count("\n") == 1
