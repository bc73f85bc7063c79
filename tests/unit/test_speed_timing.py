"""How openssl timed a log (ParsedLog.timing): -elapsed (wall clock) or its default (user CPU time), as sslbench
run records it in run.json and sslbench import reads it from others' logs."""
from pathlib import Path

from orchestrator.parse import parse_console, parse_speed

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_openssl_saying_so_means_wall_clock():
    for name in ("openssl-3.0.22-x86_64-elapsed-evp-aes-128-gcm.txt", "openssl-1.1.1w-x86_64-elapsed-evp-aes-128-gcm.txt"):
        log = parse_speed(read(name))
        assert log.timing == "elapsed" and log.measurements, name
        assert parse_console(read(name)).timing == "elapsed"


def test_the_command_line_says_so_where_openssl_does_not():
    # -mr prints no message: the prompt line with the command is the only evidence
    log = parse_console(read("openssl-3.0.22-x86_64-console-mr-elapsed.txt"))
    assert log.timing == "elapsed" and [m.algorithm for m in log.measurements] == ["aes-128-gcm"]
    assert parse_speed(read("openssl-3.0.22-x86_64-console-mr-elapsed.txt").split("\n", 1)[1]).timing == "cpu"


def test_progress_lines_without_elapsed_are_openssls_default_cpu_time():
    for name in ("openssl-3.0.19-x86_64-evp-aes-128-gcm.txt", "openssl-1.1.1w-x86_64-evp-aes-128-gcm.txt",
                 "openssl-3.0.19-x86_64-mr-chacha20-poly1305.txt"):
        assert parse_speed(read(name)).timing == "cpu", name


def test_a_table_alone_does_not_say():
    table = read("openssl-3.0.19-x86_64-evp-aes-128-gcm-stdout-only.txt")
    assert parse_speed(table).measurements and parse_speed(table).timing is None


def test_a_session_with_both_says_mixed():
    session = ("root@box:~# openssl speed -elapsed -seconds 1 -bytes 1024 -evp aes-128-gcm\n"
               + read("openssl-3.0.22-x86_64-elapsed-evp-aes-128-gcm.txt")
               + "root@box:~# openssl speed -seconds 1 -evp aes-128-gcm\n"
               + read("openssl-3.0.19-x86_64-evp-aes-128-gcm.txt") + "root@box:~# \n")
    log = parse_console(session)
    assert log.timing == "mixed" and len({m.openssl_version for m in log.measurements}) == 2


def test_import_records_the_timing_in_run_json(tmp_path):
    from orchestrator import store
    from orchestrator.commands.import_logs import import_logs

    elapsed = import_logs([DATA / "openssl-3.0.22-x86_64-elapsed-evp-aes-128-gcm.txt"], "r1", results_dir=tmp_path)
    assert store.load_run(elapsed).matrix["timing"] == "elapsed"
    cpu = import_logs([DATA / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"], "r1", results_dir=tmp_path / "b")
    assert store.load_run(cpu).matrix["timing"] == "cpu"
