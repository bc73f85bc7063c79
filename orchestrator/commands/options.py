"""Command-line options that commands share. `sslbench run` and `sslbench hosts`: which hosts and how to reach them
(the ansible-playbook options users already type), and the matrix to plan, read once into a `RunConfig`
(`run_config`). `diff` and `trend`: the CI options (`--format junit`, `-o`, `--fail-on-regression`). Checked here:
bad values are UserErrors."""
from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import Callable

from orchestrator import store
from orchestrator.analysis import verdict
from orchestrator.errors import UserError
from orchestrator.render import formats
from orchestrator.run import budget, matrix, tunnels, workers
from orchestrator.run.ansible_options import AnsibleOptions
from orchestrator.run.config import DEFAULT_IDLE_WAIT, PlanOptions, RunConfig
from orchestrator.run.inventory import choose_inventory
from orchestrator.run.matrix import MatrixRequest

INSECURE_WARNING = ("WARNING: --insecure-no-host-key-check: SSH host keys are NOT verified; anyone on the network "
                    "path can impersonate your hosts")


def add_common_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-i", "--inventory", metavar="INVENTORY",
                   help="Ansible inventory (YAML or INI file, inventory plugin file, executable script, or "
                        "directory); default, as ansible-playbook: $ANSIBLE_INVENTORY, else `inventory =` in the "
                        "ansible.cfg Ansible loads, else this machine (the first line says which)")
    p.add_argument("--limit", type=_pattern, metavar="PATTERN", help="Ansible host pattern: only these hosts")
    p.add_argument("--forks", type=_forks, metavar="N",
                   help="SSH sessions at once (Ansible forks; default 50): a fleet that fits is carried through in "
                        "one pass, a larger one is launched and then polled in short passes")
    p.add_argument("--insecure-no-host-key-check", action="store_true",
                   help="DANGEROUS: accept any SSH host key (man-in-the-middle possible)")
    sites = p.add_argument_group("site workers", "run the hosts of a pattern from another machine (ansible-runner "
                                                 "worker over ssh), e.g. a lab behind NAT; see orchestrator/run/workers.py")
    sites.add_argument("--worker", action="append", metavar="NAME=SSH_TARGET",
                       help="a worker reached with `ssh SSH_TARGET`, running the hosts of the group NAME; repeatable")
    sites.add_argument("--worker-hosts", action="append", metavar="NAME=PATTERN",
                       help="the hosts worker NAME runs: one Ansible pattern term (default: the group NAME)")
    sites.add_argument("--config", metavar="FILE", help="a TOML file with [workers.NAME] tables (ssh, hosts, "
                                                        "ssh_args, runner)")
    ansible = p.add_argument_group("Ansible options", "passed to ansible-playbook as you would type them there, "
                                                      "run in this directory (relative paths, ./ansible.cfg and "
                                                      "ANSIBLE_* variables mean what they mean to ansible-playbook); "
                                                      "passwords are asked once here and never stored")
    ansible.add_argument("-u", "--user", metavar="USER", help="connect as this user")
    ansible.add_argument("-k", "--ask-pass", action="store_true", help="ask for the SSH password")
    ansible.add_argument("-b", "--become", action="store_true", help="run the commands on the hosts with become "
                                                                      "(sudo): needed to install OpenSSL as non-root")
    ansible.add_argument("-K", "--ask-become-pass", action="store_true", help="ask for the become (sudo) password")
    ansible.add_argument("-e", "--extra-vars", action="append", metavar="VARS",
                         help="key=value, JSON or @file; repeatable (values are not written to run.json)")
    ansible.add_argument("--private-key", metavar="FILE", help="SSH private key file")
    ansible.add_argument("--ssh-common-args", metavar="ARGS", help="extra ssh arguments, e.g. '-o ProxyJump=gw'")
    ansible.add_argument("--vault-password-file", action="append", metavar="FILE",
                         help="vault password file (for vaulted group_vars); repeatable")
    ansible.add_argument("--vault-id", action="append", metavar="LABEL@FILE",
                         help="vault identity: LABEL@FILE, LABEL@prompt or FILE; repeatable")
    ansible.add_argument("-J", "--ask-vault-pass", action="store_true", help="ask for the vault password")
    ansible.add_argument("-v", "--verbose", action="count", default=0,
                         help="Ansible's verbosity (-vvv: SSH commands) in ansible-stdout.txt")


def _pattern(text: str) -> str:
    """--limit: Ansible reads an empty pattern as every host (`--limit "$HOSTS"` with HOSTS unset ran the fleet)."""
    if not text.strip(" ,"):
        raise argparse.ArgumentTypeError("an empty pattern would be every host; leave --limit out for that")
    return text


def _forks(text: str) -> int:
    """--forks: 1 or more (Ansible would take 0 for its default without a word, and answer a negative number
    with its whole usage text)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a number of hosts at once, 1 or more (got '{text}')")
    return int(text)


def add_matrix_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--algorithms", metavar="A,B", help=f"default: {','.join(matrix.DEFAULT_ALGORITHMS)}")
    p.add_argument("--sizes", metavar="N,N", help="block sizes in bytes (default: all the host's OpenSSL has)")
    p.add_argument("--threads", metavar="1,all", help="threads per cell: 1, all (logical CPUs) or N; default 1,all")
    p.add_argument("--api", metavar="evp,legacy", help="EVP and/or legacy API (legacy only where it exists)")
    p.add_argument("--seconds", type=int, metavar="N",
                   help="seconds per size/operation (OpenSSL >= 1.1.1; default: openssl's 3 s, 10 s public-key)")
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="run the whole matrix N times")
    p.add_argument("--budget", metavar="DURATION",
                   help="fit each host's matrix into this time (10m, 90s, 1h30m): drops sizes, legacy, seconds, "
                        "repeats, algorithms in that order and says what went")
    p.add_argument("--tunnels", metavar="wireguard,openvpn",
                   help="then measure these tunnels, both ends on each host in namespaces of their own (iperf3, "
                        "--seconds or 10 s): wireguard, openvpn, all or none (default; `tunnels =` in --config)")
    p.add_argument("--idle-wait", default=str(DEFAULT_IDLE_WAIT), metavar="SECONDS",
                   help=f"wait at most this long for each host to be idle before its matrix (default "
                        f"{DEFAULT_IDLE_WAIT}; 0 = no gate); a host that stays busy is flagged busy")


def parse_idle_wait(text: str | int | None) -> int:
    """--idle-wait: whole seconds, 0 (no gate) to 3600."""
    value = str(DEFAULT_IDLE_WAIT if text is None else text).strip()
    if not value.isdigit() or int(value) > 3600:
        raise UserError(f"--idle-wait takes whole seconds from 0 (no idle gate) to 3600 (got {text!r})")
    return int(value)


def plan_options_from_args(args: argparse.Namespace) -> PlanOptions:
    return PlanOptions(request=request_from_args(args),
                       budget_seconds=budget.parse_duration(args.budget) if args.budget else None,
                       idle_wait=parse_idle_wait(args.idle_wait),
                       tunnels=tunnels.requested(getattr(args, "tunnels", None), getattr(args, "config", None)))


def request_from_args(args: argparse.Namespace) -> MatrixRequest:
    return matrix.parse_request(args.algorithms, args.sizes, args.threads, args.api, args.seconds, args.repeat)


def run_config(args: argparse.Namespace, *, results: Path = store.DEFAULT_RESULTS,
               warn_insecure: bool = False) -> RunConfig:
    """The options of `run` and `hosts`, checked and built once, in the order the user hears of them: the matrix (a
    bad value stops here, before any prompt), the inventory (said where -i did not name it: never measure this
    machine, or a fleet named elsewhere, unawares), the host key warning (`run`), the site workers, and the
    passwords last (a Ctrl-C at a prompt leaves no empty run behind)."""
    plan = plan_options_from_args(args)
    inventory = choose_inventory(args.inventory)
    if inventory.said():
        print(f"sslbench: {inventory.said()}", file=sys.stderr)
    if warn_insecure and args.insecure_no_host_key_check:
        print(f"sslbench: {INSECURE_WARNING}", file=sys.stderr)
    sites = tuple(workers.configured(args.worker, args.worker_hosts, args.config))
    return RunConfig(inventory=inventory, plan=plan, ansible=ansible_options(args), limit=args.limit,
                     forks=args.forks, insecure_no_host_key_check=args.insecure_no_host_key_check, workers=sites,
                     results=results, no_provision=args.no_provision, upgrade_openssl=args.upgrade_openssl)


def ansible_options(args: argparse.Namespace, ask: Callable[[str], str] = getpass.getpass) -> AnsibleOptions:
    """The ansible-playbook options as typed, with the passwords -k, -K, -J and `--vault-id LABEL@prompt` ask for."""
    typed = AnsibleOptions(user=args.user, become=args.become, extra_vars=tuple(args.extra_vars or ()),
                           private_key=args.private_key, ssh_common_args=args.ssh_common_args,
                           vault_password_files=tuple(args.vault_password_file or ()),
                           vault_ids=tuple(args.vault_id or ()), verbosity=args.verbose or 0)
    return typed.with_passwords([name for name in AnsibleOptions.PROMPTS if getattr(args, name, False)], ask)


def add_ci_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=formats.CI_FORMATS, default=formats.TEXT,
                   help="output format (default: table); junit: a test case per cell for CI")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="with --format junit: write the XML here and print the table")
    p.add_argument("--fail-on-regression", type=float, metavar="PCT",
                   help=f"exit {verdict.EXIT_REGRESSION} on a significant drop of more than PCT percent (a failed "
                        "JUnit test case each); without it nothing fails: exit 0, and JUnit reports each "
                        "significant drop in its case's system-out, not as a failure")


def regression_limit(args: argparse.Namespace) -> float | None:
    """--fail-on-regression PCT, checked with -o (which only writes JUnit XML)."""
    pct: float | None = args.fail_on_regression
    if pct is not None and pct < 0:
        raise UserError("--fail-on-regression takes a percentage >= 0, like 5")
    if args.output and not formats.get(args.format).ci:
        raise UserError("-o writes the JUnit XML: use it with --format junit")
    return pct


def add_width_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--width", type=_columns, metavar="N",
                        help="fit tables to N columns, saying below each what was dropped or abbreviated (0: never "
                             "cut); default: the terminal's width ($COLUMNS), not cut when stdout is not a terminal")


def _columns(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of columns, like 80 (got '{text}')") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a number of columns, 0 or more (got '{text}')")
    return value
