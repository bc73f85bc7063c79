"""The CLI turns a user-facing failure into one line on stderr and an exit code, never a traceback."""
import argparse

from orchestrator import cli
from orchestrator.errors import UserError


def _main_with_handler(monkeypatch, handler):
    parser = argparse.ArgumentParser()
    parser.set_defaults(func=handler)
    monkeypatch.setattr(cli, "build_parser", lambda command=None: parser)
    return cli.main([])


def _raise(exc):
    def handler(args):
        raise exc
    return handler


def test_os_error_is_one_line_naming_the_file(monkeypatch, capsys):
    code = _main_with_handler(monkeypatch, _raise(PermissionError(13, "Permission denied", "/results/run.json")))
    err = capsys.readouterr().err
    assert code == 2
    assert err == "sslbench: Permission denied (/results/run.json); nothing more was written\n"


def test_user_error_keeps_its_exit_code(monkeypatch, capsys):
    assert _main_with_handler(monkeypatch, _raise(UserError("no such run: x; see sslbench report", 3))) == 3
    assert capsys.readouterr().err == "sslbench: no such run: x; see sslbench report\n"


def test_every_command_is_listed_in_help(capsys):
    text = cli.build_parser().format_help()
    for name in ("run", "hosts", "parse", "report", "import", "diff", "history"):
        assert f"    {name} " in text


def test_a_command_loads_only_its_own_module():
    """`sslbench parse …` must not pay for importing Ansible (the `run` command's runner)."""
    import subprocess
    import sys
    check = ("import sys\nfrom orchestrator import cli\ntry:\n    cli.main(['parse', '--help'])\nexcept SystemExit:\n"
             "    pass\nprint('ansible_runner' in sys.modules, 'orchestrator.commands.run' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert "--json" in done.stdout and done.stdout.splitlines()[-1] == "False False"


def test_an_empty_limit_or_a_forks_under_one_is_refused_before_any_host_is_reached(capsys):
    """Ansible reads `--limit ""` as every host: `sslbench run --limit "$HOSTS"` with HOSTS unset benchmarked the
    whole fleet. --forks 0 was quietly the default, a negative one Ansible's whole usage text."""
    import pytest

    for command in ("run", "hosts"):
        for bad in (["--limit", ""], ["--limit", " , "], ["--forks", "0"], ["--forks", "-3"], ["--forks", "x"]):
            with pytest.raises(SystemExit) as exit_info:
                cli.main([command, *bad])
            assert exit_info.value.code == 2
            err = capsys.readouterr().err
            assert f"argument {bad[0]}:" in err and "Traceback" not in err
    args = cli.build_parser("run").parse_args(["run", "--limit", "pi*,!pi9", "--forks", "3"])
    assert (args.limit, args.forks) == ("pi*,!pi9", 3)
