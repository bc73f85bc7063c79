"""The registry of benchmark kinds: what sslbench can measure, one module per kind, found here by name.

A kind (`Kind`) says everything the layers need to know of its figures, and nothing else knows it: its name
(`Measurement.kind`), what a request for it looks like (the `run` options it takes), what a host needs for it
(packages per package-manager family), how long a planned unit of it takes, the names of the planner, host script
and parser that do its work, how a figure reads (its value and unit, how a cell is labelled and laid out in a
table's key columns), which direction is better, and its **method**: what makes two of its figures comparable
(`cell_methods`, one method id per cell) and what a change of it means (`compare`: None, or the MethodChange that
sets a diff or trend step aside as "method changed").

Its planner, host script and parser sit in wings above this one (run/, playbooks/, parse/): a kind names them, and
`hook` imports one when it is called (PerfKitBenchmarker's benchmark modules found through a registry, the way
render/formats.py finds a format's module). A new kind is one module here (it `register`s its Kind in `registry.py`)
and its entry in REGISTERED below (docs/ARCHITECTURE.md "Where a newcomer adds"); `register` adds one at run time (tests do).
"""
from __future__ import annotations

from orchestrator.kinds import speed, tunnel
from orchestrator.kinds.registry import (KINDS, Figure, Kind, Methods, Needs, Option, RunContext, get, higher_is_better,
                                         hook, register)

# the kinds, each registered by its module on import: openssl speed first (tables list its figures first)
REGISTERED = (speed.SPEED_KIND, tunnel.TUNNEL_KIND)

__all__ = ["KINDS", "REGISTERED", "Figure", "Kind", "Methods", "Needs", "Option", "RunContext", "get",
           "higher_is_better", "hook", "register"]
