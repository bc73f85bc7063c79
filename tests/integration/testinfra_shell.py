"""Commands on a rig host through testinfra (conftest's testinfra_host), for the tests that look at a host
themselves (test_rig.py, test_run_rig.py)."""
from __future__ import annotations


def said(host, command: str) -> str:
    """A command's output on a testinfra host, without the start-up text raspbian1's shell prints first (a
    banner, then a title escape ending in BEL, no newline): testinfra's own probes (host.file, system_info)
    trip over it, as they would on such a board."""
    return host.run(command).stdout.split("\x07")[-1]


def exists_on(host, path: str) -> bool:
    return said(host, f"[ -e {path} ] && echo exists || echo absent").strip() == "exists"
