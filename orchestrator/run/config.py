"""`RunConfig`: the options of one run (`sslbench run`) or preview (`sslbench hosts`), checked and built once in
commands/options.py and passed down whole: to the driver (orchestrator/run/runner.py: inventory, Ansible's options,
the pattern, forks, host keys, site workers), the engine (provisioning, the plan) and the planner (`PlanOptions`).
Nothing below commands/ reads the command line."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from orchestrator import store
from orchestrator.run.ansible_options import AnsibleOptions
from orchestrator.run.inventory import InventoryChoice
from orchestrator.run.matrix import MatrixRequest
from orchestrator.run.workers import Worker

DEFAULT_IDLE_WAIT = 60  # seconds each host may take to be idle before its matrix (--idle-wait)


@dataclass(frozen=True)
class PlanOptions:
    """How each host's matrix is planned: the request, an optional time budget, the idle gate, the tunnels."""

    request: MatrixRequest = field(default_factory=MatrixRequest)
    budget_seconds: float | None = None
    idle_wait: int = DEFAULT_IDLE_WAIT
    tunnels: tuple[str, ...] = ()  # the tunnel groups measured after the cells (run/tunnels.py's TUNNEL_GROUPS)


@dataclass(frozen=True)
class RunConfig:
    """Which hosts, how to reach them, what to plan on them and where the results go."""

    inventory: InventoryChoice  # the path, and where it came from (said where the user did not type it)
    plan: PlanOptions = field(default_factory=PlanOptions)
    ansible: AnsibleOptions = field(default_factory=AnsibleOptions)
    limit: str | None = None  # Ansible's host pattern (--limit)
    forks: int | None = None  # hosts at once; None: runner.DEFAULT_FORKS
    insecure_no_host_key_check: bool = False
    workers: tuple[Worker, ...] = ()  # site workers, in the order given
    results: Path = store.DEFAULT_RESULTS  # where a run is stored (`hosts` stores nothing)
    no_provision: bool = False  # never install OpenSSL
    upgrade_openssl: bool = False  # install or upgrade it even where it is present
