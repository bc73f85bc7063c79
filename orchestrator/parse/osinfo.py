"""Which OS/firmware a host runs: os-release, openwrt_release, armbian-release, DD-WRT, redhat-release, uname.

Pure: text in, dicts / OsFacts out. `detect_os` takes whatever files the detect step (or a captured
console session) provided, keyed by file name or command, and decides the family.
"""
from __future__ import annotations

import re
import shlex

from orchestrator.model import OsFacts

# os-release ID (or an ID_LIKE word) -> family
_ID_FAMILY = {
    "raspbian": "raspbian", "armbian": "armbian", "debian": "debian", "ubuntu": "ubuntu",
    "openwrt": "openwrt", "lede": "openwrt", "centos": "centos", "rhel": "rhel", "rocky": "rhel",
    "almalinux": "rhel", "ol": "rhel", "fedora": "fedora", "arch": "arch", "archarm": "arch",
    "manjaro-arm": "arch", "alpine": "alpine",
}

_SHELL_VAR = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
# "DD-WRT v3.0-r44715 std (11/03/20)" (web/motd) or "DD-WRT v3.0-r44715 std (c) 2020 NewMedia-NET GmbH" (ssh banner)
_DDWRT = re.compile(r"DD-WRT\s+(v[\d.]+(?:sp\d)?)(?:-r(\d+))?(?:M)?\s*(?:([a-z][\w-]*)\s*)?(?:\((\d\d/\d\d/\d\d)\))?")
_DDWRT_RELEASE = re.compile(r"^\s*Release:\s*(\d\d/\d\d/\d\d)", re.M)
_DDWRT_BOARD = re.compile(r"^\s*Board:\s*(.+?)\s*$", re.M)
_REDHAT = re.compile(
    r"^\s*(?P<name>.+?)\s+release\s+(?P<version>[\d.]+)(?:\s+\((?P<codename>[^)]*)\))?", re.M
)
_MACHINE = re.compile(
    r"^(x86_64|amd64|i[3-6]86|aarch64|arm64|armv\d+\w*|arm|mips\w*|ppc\w*|riscv\d+|s390x|sparc\w*|loongarch64)$"
)
_OS_WORDS = {"GNU/Linux", "Linux", "DD-WRT", "Android", "Toybox"}


def parse_shell_vars(text: str) -> dict[str, str]:
    """KEY=value lines as in os-release / openwrt_release / armbian-release, quotes removed."""
    values: dict[str, str] = {}
    for line in text.replace("\r", "").split("\n"):
        match = _SHELL_VAR.match(line)
        if not match:
            continue
        key, raw = match.group(1), match.group(2).strip()
        values.setdefault(key, _unquote(raw))
    return values


def _unquote(raw: str) -> str:
    """`"Debian GNU/Linux 12"` / `'OpenWrt'` / `bookworm` -> the value; shell rules only when escapes appear."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and "\\" not in raw and raw[0] not in raw[1:-1]:
        return raw[1:-1]
    if not any(c in raw for c in "'\"\\"):
        return raw
    try:
        return " ".join(shlex.split(raw, comments=False))
    except ValueError:  # an unbalanced quote in a truncated paste
        return raw.strip("'\"")


def parse_os_release(text: str) -> dict[str, str]:
    """/etc/os-release: ID, ID_LIKE, VERSION_ID, PRETTY_NAME ... (all keys kept)."""
    return parse_shell_vars(text)


def parse_openwrt_release(text: str) -> dict[str, str]:
    """/etc/openwrt_release: DISTRIB_ID, DISTRIB_RELEASE, DISTRIB_REVISION, DISTRIB_TARGET, DISTRIB_ARCH, DISTRIB_DESCRIPTION."""
    return {k: v for k, v in parse_shell_vars(text).items() if k.startswith("DISTRIB_")}


def parse_ddwrt(text: str) -> dict[str, str] | None:
    """A DD-WRT signature (motd / ssh banner / web footer / `uname -a` / `nvram get os_version`), or None."""
    match = _DDWRT.search(text)
    if match:
        version, revision, variant, date = match.groups()
        info = {"name": f"DD-WRT {version}", "version": version}
        if revision:
            info["revision"] = revision
        if variant and variant != "c":
            info["variant"] = variant
        release = date or _first_group(_DDWRT_RELEASE, text)
        if release:
            info["date"] = release
        board = _first_group(_DDWRT_BOARD, text)
        if board:
            info["board"] = board
        return info
    if re.search(r"\bDD-WRT\b", text):  # `uname -a` ends with "DD-WRT" (uname -o)
        return {"name": "DD-WRT"}
    return None


def parse_redhat_release(text: str) -> dict[str, str] | None:
    """`CentOS Linux release 7.9.2009 (Core)` -> name, version, codename, family; None if not that format."""
    match = _REDHAT.search(text)
    if not match:
        return None
    name = match.group("name").strip()
    lowered = name.lower()
    family = "centos" if "centos" in lowered else "fedora" if "fedora" in lowered else "rhel"
    info = {"name": name, "version": match.group("version"), "family": family}
    if match.group("codename"):
        info["codename"] = match.group("codename")
    return info


def parse_uname(text: str) -> dict[str, str]:
    """`uname -a` (or `uname -r` / `uname -m` alone) -> kernel, machine, hostname, uname."""
    line = next((l.strip() for l in text.replace("\r", "").split("\n") if l.strip()), "")
    tokens = line.split()
    if not tokens:
        return {}
    if len(tokens) == 1:  # `uname -r` or `uname -m`
        word = tokens[0]
        return {"machine": word} if _MACHINE.match(word) else {"kernel": word}
    info = {"uname": line}
    if len(tokens) >= 3:
        info["hostname"] = tokens[1]
        info["kernel"] = tokens[2]
    rest = [t for t in tokens[3:] if t not in _OS_WORDS]
    machines = [t for t in rest if _MACHINE.match(t)]
    if machines:
        info["machine"] = machines[0]
    return info


def detect_os(files: dict[str, str]) -> OsFacts:
    """Decide the OS family from whatever was captured.

    `files` maps a file name or command to its text: "/etc/os-release", "/etc/openwrt_release",
    "/etc/armbian-release", "/etc/redhat-release", "/etc/motd", "/etc/banner", "nvram get os_version",
    "uname -a" ... (a leading "cat " and the directory are ignored). The readers of FAMILY_READERS are asked in
    order and the first that recognises the texts decides; redhat-release then adds the minor version, and marker
    files (debian_version ...) name a family still unknown.
    """
    texts = {_normal_key(k): v for k, v in files.items() if isinstance(v, str) and v.strip()}
    uname: dict[str, str] = {}
    for key in ("uname -a", "uname -r", "uname -m", "uname"):
        if key in texts:
            for name, value in parse_uname(texts[key]).items():
                uname.setdefault(name, value)
    facts = OsFacts(family="unknown", kernel=uname.get("kernel"), machine=uname.get("machine"), uname=uname.get("uname"))
    os_release = parse_os_release(texts.get("os-release", ""))
    found = next((f for f in (reader(texts, os_release) for reader in FAMILY_READERS) if f), None)
    if found:
        facts.family, facts.name, facts.version, facts.revision = found
    if facts.family == "openwrt":  # the target names the build (OpenWrt 25.x: os-release's OPENWRT_BOARD too)
        openwrt = parse_openwrt_release(texts.get("openwrt_release", ""))
        facts.target = openwrt.get("DISTRIB_TARGET") or os_release.get("OPENWRT_BOARD") or None
    if facts.family in ("unknown", "centos", "rhel", "fedora") and "redhat-release" in texts:
        redhat = parse_redhat_release(texts["redhat-release"])
        if redhat:  # redhat-release has the minor version ("7.9.2009") that os-release lacks ("7")
            facts.family = redhat["family"] if facts.family == "unknown" else facts.family
            facts.name = facts.name or redhat["name"]
            facts.version = redhat["version"]
    if facts.family == "unknown":  # an os-release of a distribution we do not know, or none at all
        facts.family = next((family for key, family in _MARKER_FILES if key in texts), "unknown")
    return facts


_Found = tuple[str, "str | None", "str | None", "str | None"]  # family, name, version, revision


def _ddwrt_facts(texts: dict[str, str], _os_release: dict[str, str]) -> _Found | None:
    ddwrt = _ddwrt_from(texts)
    return ("ddwrt", ddwrt.get("name"), ddwrt.get("version"), ddwrt.get("revision")) if ddwrt else None


def _openwrt_facts(texts: dict[str, str], os_release: dict[str, str]) -> _Found | None:
    openwrt = parse_openwrt_release(texts.get("openwrt_release", ""))
    if not openwrt and os_release.get("ID", "").lower() not in ("openwrt", "lede"):
        return None
    return ("openwrt", openwrt.get("DISTRIB_DESCRIPTION") or os_release.get("PRETTY_NAME"),
            openwrt.get("DISTRIB_RELEASE") or os_release.get("VERSION_ID"),
            openwrt.get("DISTRIB_REVISION") or os_release.get("BUILD_ID"))


def _armbian_facts(texts: dict[str, str], os_release: dict[str, str]) -> _Found | None:
    armbian = parse_shell_vars(texts.get("armbian-release", ""))
    pretty = os_release.get("PRETTY_NAME", "")
    if not armbian and "armbian" not in pretty.lower():
        return None
    name = pretty if "armbian" in pretty.lower() else _join("Armbian", armbian.get("VERSION"))
    return ("armbian", name, armbian.get("VERSION") or _armbian_version(pretty) or os_release.get("VERSION_ID"),
            armbian.get("BOARD"))


def _os_release_facts(texts: dict[str, str], os_release: dict[str, str]) -> _Found | None:
    if not os_release:
        return None
    return (_family_from_os_release(os_release, texts), os_release.get("PRETTY_NAME") or os_release.get("NAME"),
            os_release.get("VERSION_ID"), None)


# Firmwares first (they also carry os-release files of their own), then os-release; files that only say the family
# by existing (_MARKER_FILES) decide what is still unknown at the end.
FAMILY_READERS = (_ddwrt_facts, _openwrt_facts, _armbian_facts, _os_release_facts)
_MARKER_FILES = (("alpine-release", "alpine"), ("arch-release", "arch"), ("debian_version", "debian"))


def _family_from_os_release(values: dict[str, str], texts: dict[str, str]) -> str:
    ident = values.get("ID", "").lower()
    if ident == "debian" and "rpi-issue" in texts:  # Raspberry Pi OS 64-bit says ID=debian
        return "raspbian"
    if ident in _ID_FAMILY:
        return _ID_FAMILY[ident]
    for like in values.get("ID_LIKE", "").lower().split():
        if like in _ID_FAMILY:
            return _ID_FAMILY[like]
    # A pasted fragment may hold only PRETTY_NAME ("Raspbian GNU/Linux 10 (buster)"): go by its first word.
    words = re.findall(r"[a-z]+", (values.get("PRETTY_NAME") or values.get("NAME") or "").lower())
    aliases = {"red": "rhel", "raspberry": "raspbian", "openwrt": "openwrt", "arch": "arch"}
    for word in words[:1]:
        if word in _ID_FAMILY or word in aliases:
            return _ID_FAMILY.get(word) or aliases[word]
    return "unknown"


def _ddwrt_from(texts: dict[str, str]) -> dict[str, str] | None:
    info = next((found for found in (parse_ddwrt(texts[key]) for key in ("motd", "banner", "issue", "uname -a", "uname")
                                     if key in texts) if found), None)
    os_version = texts.get("nvram get os_version", "").strip()
    if re.fullmatch(r"\d+", os_version):  # DD-WRT's SVN build number, where no banner gave it
        info = {"name": "DD-WRT", **(info or {})}
        info.setdefault("revision", os_version)
    return info


def _normal_key(key: str) -> str:
    key = key.strip()
    if key.startswith("cat "):
        key = key[4:].strip()
    return key.rsplit("/", 1)[-1] if key.startswith("/") else key


def _first_group(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None


def _armbian_version(pretty: str) -> str | None:
    match = re.search(r"Armbian\S*\s+([\d.]+\S*)", pretty)
    return match.group(1) if match else None


def _join(*parts: str | None) -> str | None:
    words = [p for p in parts if p]
    return " ".join(words) if len(words) > 1 else None
