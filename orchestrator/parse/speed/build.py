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
# `openssl version`: "OpenSSL 3.0.16 11 Feb 2025 (Library: OpenSSL 3.0.15 3 Sep 2024)" (3.x prints the library
# always; 1.0.1-1.1.1 only where the version numbers differ), sbc-bench's "OpenSSL 3.0.15, built on 3 Sep 2024
# (Library: …)", LibreSSL "LibreSSL 3.8.2" (no library part).
_LIBRARY = re.compile(r"\(Library:\s*(?:OpenSSL\s+(\d+\.\d+\.\d+[a-z]*)|(LibreSSL\s+\d+\.\d+\.\d+))")


def read_build_line(line: str, build: OpenSSLBuild) -> None:
    if line.startswith("OpenSSL ") or line.startswith("LibreSSL "):
        match = _OPENSSL_VERSION.match(line) or _LIBRESSL_VERSION.match(line)
        if match and build.version is None:
            build.version = match.group(1) if line[0] == "O" else "LibreSSL " + match.group(1)
            build.version_line = line
            library = _LIBRARY.search(line)
            if library:  # the program's version, then libcrypto's
                build.program_version = build.version
                build.library_version = library.group(1) or library.group(2)
            else:  # speed's block (libcrypto's), or `openssl version` of a program as old as its library
                build.library_version = build.library_version or build.version
    elif line.startswith("version:"):
        match = _VERSION_LINE.match(line)
        if match:
            build.version = match.group(1)
            build.version_line = build.version_line or line
            build.library_version = match.group(1)  # 3.x speed prints OpenSSL_version(): libcrypto's
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
