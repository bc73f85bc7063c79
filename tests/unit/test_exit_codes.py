"""#37: SIGTERM exits 143 and SIGHUP 129 while the docs listed only 130. The exit code of a stopped run is 128 + the
signal's number, and `sslbench --help` and the README say so for each signal Interrupt takes."""
from __future__ import annotations

import signal
from pathlib import Path

from orchestrator import cli
from orchestrator.run.runner import Interrupt

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_each_signal_a_run_takes_exits_128_plus_its_number_as_help_and_readme_say(capsys):
    cli.build_parser().print_help()
    shown = " ".join(capsys.readouterr().out.split())
    readme = " ".join(README.split())
    for signum in Interrupt.SIGNALS:
        interrupt = Interrupt()
        interrupt._handle(signum, None)  # as the signal arrives
        code = interrupt.exit_code
        assert code == 128 + signum
        name = signal.Signals(signum).name
        assert f"{code} " in shown and name in shown.split(f"{code} ", 1)[1][:40], (name, shown)
        assert f"{code} " in readme and name in readme.split(f"{code} ", 1)[1][:60], name
    capsys.readouterr()


def test_a_stop_of_our_own_exits_2():
    interrupt = Interrupt()
    interrupt.stop("cannot write the results (No space left on device)")
    assert interrupt.exit_code == 2
