"""What a package manager says is installed, as the install step prints it (orchestrator/run/platforms.py's
`Tunnels.query`): the version of each package asked about.

  dpkg-query -W -f '${Package} ${Version}\\n', rpm -q --qf '%{NAME} %{VERSION}-%{RELEASE}\\n', pacman -Q:
                        `NAME VERSION`
  opkg list-installed:  `NAME - VERSION`
  apk list --installed: `NAME-VERSION ARCH {ORIGIN} (LICENSE) [installed]`
A package that is not installed is left out (`package x is not installed`, dpkg-query's complaint on stderr).
Pure: text in, data out; never raises.
"""
from __future__ import annotations

import re
from typing import Iterable

_APK = re.compile(r"^(?P<rest>\S+)\s.*\[installed\]")


def installed_versions(text: str, names: Iterable[str]) -> dict[str, str]:
    """name -> version for each of `names` the text says is installed."""
    wanted = set(names)
    found: dict[str, str] = {}
    for line in text.replace("\r\n", "\n").split("\n"):
        got = _read(line.strip(), wanted)
        if got and got[0] not in found:
            found[got[0]] = got[1]
    return found


def _read(line: str, wanted: set[str]) -> tuple[str, str] | None:
    words = line.split()
    if len(words) >= 3 and words[1] == "-" and words[0] in wanted:  # opkg
        return words[0], words[2]
    apk = _APK.match(line)
    if apk:  # the longest wanted name the word starts with, a version (a digit) after its dash
        word = apk["rest"]
        for name in sorted(wanted, key=len, reverse=True):
            if word.startswith(name + "-") and word[len(name) + 1:][:1].isdigit():
                return name, word[len(name) + 1:]
        return None
    if len(words) == 2 and words[0] in wanted and words[1][:1].isdigit() or (
            len(words) == 2 and words[0] in wanted and ":" in words[1]):  # dpkg (epoch), rpm, pacman
        return words[0], words[1]
    return None
