"""Pure parsers: text in, plain records (orchestrator.model) out. Never imports Ansible.

`parse_console` is the entry point for anything a user or the runner captured; the others read one kind of text.
"""
from orchestrator.parse.console import parse_console
from orchestrator.parse.cpuinfo import parse_cpuinfo
from orchestrator.parse.names import canonical_algorithm, speed_command_hints
from orchestrator.parse.osinfo import (
    detect_os,
    parse_ddwrt,
    parse_openwrt_release,
    parse_os_release,
    parse_redhat_release,
    parse_uname,
)
from orchestrator.parse.speed import parse_openssl_build, parse_speed

__all__ = [
    "canonical_algorithm",
    "detect_os",
    "parse_console",
    "parse_cpuinfo",
    "parse_ddwrt",
    "parse_openssl_build",
    "parse_openwrt_release",
    "parse_os_release",
    "parse_redhat_release",
    "parse_speed",
    "parse_uname",
    "speed_command_hints",
]
