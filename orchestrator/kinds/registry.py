"""The registry of benchmark kinds itself: what a kind is (`Kind`), the registry (`KINDS`, `register`, `get`) and
`hook`, which imports a planner or parser a kind names. The kinds' modules import it (not the package, which
imports them: orchestrator/kinds/__init__.py)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol

from orchestrator.errors import UserError
from orchestrator.methods import MethodChange
from orchestrator.model import HostResult, Measurement


class Figure(Protocol):
    """The fields of a figure's key, as cells.Key and Measurement both have them: what a kind reads of a cell."""

    @property
    def algorithm(self) -> str: ...
    @property
    def api(self) -> str | None: ...
    @property
    def operation(self) -> str | None: ...
    @property
    def threads(self) -> int: ...
    @property
    def block_size(self) -> int | None: ...
    @property
    def cpu(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def implementation(self) -> str | None: ...


@dataclass(frozen=True)
class RunContext:
    """What a run says of how all its figures were taken (cells.run_timer, cells.run_aead): a kind's method may
    depend on it (openssl's timer and -aead), or not (a tunnel's method is per host, in HostResult.tunnels)."""

    timer: str | None = None
    aead: bool | None = False


@dataclass(frozen=True)
class Option:
    """One `sslbench run` option a kind's request takes (commands/options.py adds it)."""

    flag: str  # "--tunnels"
    metavar: str | None
    help: str


@dataclass(frozen=True)
class Needs:
    """The packages one package-manager family installs for a kind, and the ones it installs instead of a
    missing host feature (e.g. wireguard-go where the kernel has no WireGuard)."""

    family: str  # "openwrt" (apk, opkg), "debian" (apt-get), "redhat" (dnf, yum), "arch" (pacman)
    packages: tuple[str, ...]
    lacking: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # a feature the host lacks -> packages


# A cell's method id -> the version said of that side (the program that measured, the firmware under judgement)
Methods = Mapping[str, str | None]


@dataclass(frozen=True)
class Kind:
    """One benchmark kind: its declarations and the functions of its figures (module docstring)."""

    name: str  # Measurement.kind
    summary: str
    options: tuple[Option, ...]  # the request: the `run` options it takes
    needs: tuple[Needs, ...]  # per package-manager family
    nominal_seconds: Callable[[float | None], float]  # one planned unit (a timed run, a tunnel) at --seconds
    planner: str  # "module:function" of the planner (run/), imported by `hook`
    script: str  # the host script, relative to playbooks/
    parser: str  # "module:function" of the parser of its host output (parse/), imported by `hook`
    value: Callable[[Measurement], float | None]  # the figure in `unit_of`'s unit
    unit_of: Callable[[Figure], str]  # a units.fmt_rate unit: "B/s", "ops/s", "bit/s"
    label: Callable[[Figure], str]  # a cell as people name it (verdicts, trend rows)
    key_cells: Callable[[Figure], tuple[str, str, Any, Any]]  # algorithm, api, threads, block / op columns
    cell_methods: Callable[[HostResult, Iterable[Figure], RunContext], dict[Any, tuple[str, str | None]]]
    compare: Callable[[Methods, Methods], MethodChange | None]
    higher_is_better: bool = True
    firmware_lines: Callable[[HostResult, HostResult], list[str]] = lambda old, new: []  # what changed under test


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add a kind to the registry (the kinds' modules do, on import of this package; a test may add its own)."""
    KINDS[kind.name] = kind
    return kind


def get(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise UserError(f"unknown benchmark kind '{name}'; known: {', '.join(KINDS)}") from None


def hook(name: str) -> Callable[..., Any]:
    """The function a kind names ("orchestrator.parse.speed:parse_speed"), imported now: the planners and parsers
    sit above this wing, and a kind's module may name one not written yet (it fails here, when called for)."""
    module, _, attribute = name.partition(":")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"benchmark kind hook {name} is not available: {exc}") from None
    if not callable(found):
        raise UserError(f"benchmark kind hook {name} is not a function")
    return found  # type: ignore[no-any-return]  # checked callable; its signature is the kind's to keep


def higher_is_better(name: str) -> bool:
    """Which way a kind's figures improve (an unknown kind: rates, higher)."""
    kind = KINDS.get(name)
    return True if kind is None else kind.higher_is_better
