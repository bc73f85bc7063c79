"""The version block `openssl speed` prints before its tables (and `openssl version -a` prints):
`OpenSSL 1.0.2u  20 Dec 2019` / `version: 3.0.19`, `built on:`, `options:`, `compiler:`, `platform:`, `CPUINFO:`."""
from __future__ import annotations

import re

from orchestrator.model import OpenSSLBuild

BUILD_PREFIXES = ("OpenSSL ", "LibreSSL ", "version:", "built on:", "options:", "compiler:", "platform:", "CPUINFO:")
BUILD_FIRST = frozenset(prefix[0] for prefix in BUILD_PREFIXES)  # the cheap test before line.startswith(BUILD_PREFIXES)
_OPENSSL_VERSION = re.compile(r"OpenSSL\s+(\d+\.\d+\.\d+[a-z]*)")
_LIBRESSL_VERSION = re.compile(r"LibreSSL\s+(\d+\.\d+\.\d+)")
_VERSION_LINE = re.compile(r"version:\s*(\d+\.\d+\.\d+[a-z]*)")


def read_build_line(line: str, build: OpenSSLBuild) -> None:
    if line.startswith("OpenSSL ") or line.startswith("LibreSSL "):
        match = _OPENSSL_VERSION.match(line) or _LIBRESSL_VERSION.match(line)
        if match and build.version is None:
            build.version = match.group(1) if line[0] == "O" else "LibreSSL " + match.group(1)
            build.version_line = line
    elif line.startswith("version:"):
        match = _VERSION_LINE.match(line)
        if match:
            build.version = match.group(1)
            build.version_line = build.version_line or line
    elif line.startswith("built on:"):
        value = line
        while value.startswith("built on:"):  # 3.0.0 prints "built on: built on: …"
            value = value[len("built on:"):].strip()
        if value:
            build.built_on = value
    elif line.startswith("options:"):
        build.options = line[len("options:"):].strip() or build.options
    elif line.startswith("compiler:"):
        build.compiler = line[len("compiler:"):].strip() or build.compiler
    elif line.startswith("platform:"):
        build.platform = line[len("platform:"):].strip() or build.platform
    elif line.startswith("CPUINFO:"):
        build.cpuinfo = line[len("CPUINFO:"):].strip() or build.cpuinfo
