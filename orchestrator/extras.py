"""Optional parts of an install. `pip install sslbench` is what a Raspberry Pi controller needs (run, hosts, parse,
tables, diff, trend, CI verdicts, dashboards); `pip install 'sslbench[plots]'` adds matplotlib (and with it numpy,
Pillow, fontTools, kiwisolver: about two thirds of an install) for the plots of HTML/Markdown reports and the site,
which without it are complete but for their plots and say so in PLOTS_HINT."""
from __future__ import annotations

import importlib.util

PLOTS_HINT = "Plots need matplotlib: pip install 'sslbench[plots]'"


def have_plots() -> bool:
    """Is matplotlib importable? (Asked, not imported: importing it costs a report half a second.)"""
    return importlib.util.find_spec("matplotlib") is not None
