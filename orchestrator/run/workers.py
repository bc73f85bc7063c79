"""Site workers: parts of a fleet run from other machines (a lab per office, a Raspberry Pi per home network),
through ansible-runner's streaming protocol (`ansible-runner transmit | ssh WORKER ansible-runner worker |
ansible-runner process`, what AWX's Receptor mesh carries). Each worker runs the phases for the hosts its pattern
matches; its events come back into the one progress view and the one run. A worker that dies loses only its own
hosts' unfinished cells.

Given as `--worker NAME=SSH_TARGET` (the hosts: the inventory group NAME, or `--worker-hosts NAME=PATTERN`), or as
a `[workers.NAME]` table of a TOML config file (`--config FILE`):

    [workers.lab1]
    ssh = "pi@lab1.example.net"          # what `ssh` is given: a destination or a Host of ~/.ssh/config
    hosts = "lab1_routers"               # one Ansible pattern term: a group, a host, a glob (default: the group
                                         # named like the worker); no `,` or `:`, so it can be set apart exactly
    ssh_args = "-F ~/.ssh/sslbench"      # more ssh options (optional)
    runner = "/opt/sslbench/bin/ansible-runner"   # ansible-runner on the worker (default: ansible-runner)

The worker needs ansible-core and ansible-runner, and reaches its hosts with the inventory's own settings (keys
and known_hosts paths must exist there). Pure: text in, Worker out; UserError on bad input.
"""
from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import UserError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_KEYS = {"ssh", "hosts", "ssh_args", "runner"}


@dataclass(frozen=True)
class Worker:
    name: str
    ssh: str  # ssh destination
    hosts: str  # Ansible host pattern
    ssh_args: tuple[str, ...] = ()
    runner: str = "ansible-runner"

    def command(self) -> list[str]:
        """The ssh command that starts `ansible-runner worker` there (its stdin/stdout carry the stream). A runner
        given by its path (a venv) finds ansible-playbook beside it."""
        remote = [shlex.quote(self.runner), "worker"]
        if "/" in self.runner:
            remote.insert(0, f"PATH={shlex.quote(self.runner.rsplit('/', 1)[0])}:\"$PATH\"")
        return ["ssh", "-o", "BatchMode=yes", *self.ssh_args, self.ssh, " ".join(remote)]


def configured(specs: Sequence[str] | None, host_specs: Sequence[str] | None,
               config_file: str | None) -> list[Worker]:
    """Workers from --worker NAME=SSH_TARGET, --worker-hosts NAME=PATTERN and a config file's [workers.*]."""
    workers = _collect(specs, host_specs, config_file)
    for worker in workers:
        if any(c in worker.hosts for c in ",:!&") or not worker.hosts.strip():
            raise UserError(f"worker {worker.name}: hosts must be one pattern term (a group, a host or a glob), "
                            f"without , : ! & (got {worker.hosts!r})")
    return workers


def _collect(specs: Sequence[str] | None, host_specs: Sequence[str] | None,
             config_file: str | None) -> list[Worker]:
    workers: dict[str, Worker] = dict(_from_config(Path(config_file)) if config_file else {})
    patterns = dict(_pair(spec, "--worker-hosts", "NAME=PATTERN") for spec in host_specs or [])
    for spec in specs or []:
        name, target = _pair(spec, "--worker", "NAME=SSH_TARGET")
        workers[name] = Worker(name=name, ssh=target, hosts=patterns.get(name, name))
    for name, pattern in patterns.items():
        if name not in workers:
            raise UserError(f"--worker-hosts {name}=...: no worker {name!r} (give --worker {name}=SSH_TARGET)")
        workers[name] = Worker(name=name, ssh=workers[name].ssh, hosts=pattern, ssh_args=workers[name].ssh_args,
                               runner=workers[name].runner)
    return list(workers.values())


def _pair(spec: str, option: str, form: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not _NAME.match(name) or not value.strip():
        raise UserError(f"{option} takes {form} (a name of letters, digits, . _ -), got {spec!r}")
    return name, value.strip()


def _from_config(path: Path) -> dict[str, Worker]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read the config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path} is not valid TOML: {exc}") from None
    tables = data.get("workers", {})
    if not isinstance(tables, dict):
        raise UserError(f"{path}: `workers` must be a table of [workers.NAME] tables")
    workers = {}
    for name, table in tables.items():
        if not _NAME.match(name) or not isinstance(table, dict):
            raise UserError(f"{path}: [workers.{name}] must be a table, named with letters, digits, . _ -")
        unknown = set(table) - _KEYS
        if unknown or not isinstance(table.get("ssh"), str) or not table["ssh"].strip():
            raise UserError(f"{path}: [workers.{name}] needs ssh = \"DESTINATION\" and knows only "
                            f"{', '.join(sorted(_KEYS))}" + (f" (not {', '.join(sorted(unknown))})" if unknown else ""))
        workers[name] = Worker(name=name, ssh=table["ssh"].strip(), hosts=str(table.get("hosts") or name),
                               ssh_args=tuple(shlex.split(str(table.get("ssh_args", "")))),
                               runner=str(table.get("runner") or "ansible-runner"))
    return workers


def local_limit(user_limit: str | None, workers: list[Worker]) -> str:
    """The hosts this machine runs itself: the user's --limit without every worker's hosts."""
    return ",".join([*_terms(user_limit or "all"), *(f"!{w.hosts}" for w in workers)])


def worker_limit(user_limit: str | None, worker: Worker) -> str:
    """A worker's hosts within the user's --limit."""
    return ",".join([*_terms(user_limit), f"&{worker.hosts}"]) if user_limit else worker.hosts


def _terms(pattern: str) -> list[str]:
    """An Ansible pattern's terms, as Ansible splits it: on `,` when there is one, else on `:` (so terms can be
    joined again with `,`, which Ansible then splits on alone)."""
    return [t for t in (pattern.split(",") if "," in pattern else pattern.split(":")) if t.strip()]
