"""/proc/cpuinfo -> CpuFacts, for x86, ARM (v6, v7, v8 big.LITTLE) and MIPS layouts.

Pure: text in, dataclass out. Tolerates CRLF, leading prompt junk, missing `processor` lines
(old ARM kernels print one `Processor : ARMv6-compatible ...` line and no CPU number).
"""
from __future__ import annotations

import re

from orchestrator.model import CpuFacts

# Crypto-relevant CPU features, in the order tables list them.
X86_CRYPTO = ("aes", "pclmulqdq", "sha_ni", "avx2", "vaes", "vpclmulqdq")
ARM_CRYPTO = ("aes", "pmull", "sha1", "sha2", "sha3", "sha512", "asimd", "neon")

# ARM Ltd (implementer 0x41) part numbers -> core names (kernel `CPU part`).
ARM_PARTS = {
    0xB02: "ARM11 MPCore", 0xB36: "ARM1136", 0xB56: "ARM1156", 0xB76: "ARM1176",
    0xC05: "Cortex-A5", 0xC07: "Cortex-A7", 0xC08: "Cortex-A8", 0xC09: "Cortex-A9",
    # 0xc0d was announced as Cortex-A12 and folded into Cortex-A17 (RK3288 reports it).
    0xC0D: "Cortex-A17", 0xC0E: "Cortex-A17", 0xC0F: "Cortex-A15",
    0xD01: "Cortex-A32", 0xD03: "Cortex-A53", 0xD04: "Cortex-A35", 0xD05: "Cortex-A55",
    0xD06: "Cortex-A65", 0xD07: "Cortex-A57", 0xD08: "Cortex-A72", 0xD09: "Cortex-A73",
    0xD0A: "Cortex-A75", 0xD0B: "Cortex-A76", 0xD0C: "Neoverse-N1", 0xD0D: "Cortex-A77",
    0xD0E: "Cortex-A76AE", 0xD40: "Neoverse-V1", 0xD41: "Cortex-A78", 0xD42: "Cortex-A78AE",
    0xD44: "Cortex-X1", 0xD46: "Cortex-A510", 0xD47: "Cortex-A710", 0xD48: "Cortex-X2",
    0xD49: "Neoverse-N2", 0xD4A: "Neoverse-E1", 0xD4B: "Cortex-A78C", 0xD4D: "Cortex-A715",
    0xD4E: "Cortex-X3", 0xD4F: "Neoverse-V2", 0xD80: "Cortex-A520", 0xD81: "Cortex-A720",
    0xD82: "Cortex-X4",
}
# A few non-ARM-Ltd implementers seen on boards and ARM servers.
OTHER_PARTS = {
    (0x48, 0xD01): "Kunpeng-920",
    (0x51, 0x800): "Kryo 2xx Gold", (0x51, 0x801): "Kryo 2xx Silver",
    (0x51, 0x802): "Kryo 3xx Gold", (0x51, 0x803): "Kryo 3xx Silver",
    (0x51, 0x804): "Kryo 4xx Gold", (0x51, 0x805): "Kryo 4xx Silver",
}

_KEY_VALUE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 _()-]*?)\s*:\s?(.*)$")


def parse_cpuinfo(text: str) -> CpuFacts:
    """Read one /proc/cpuinfo text. Unknown layouts give a CpuFacts with what could be read."""
    blocks, shared = _blocks(text)
    every = blocks + [shared]
    facts = CpuFacts()
    facts.arch = _arch(every)
    facts.logical_cpus = _logical_cpus(blocks, shared)
    facts.bogomips = _first_float(every, "bogomips")
    # MIPS `system type`, ARM `Hardware`, else the board `Model` line (x86 `model` is a number: skip it).
    board = _first(every, "model") if facts.arch == "arm" else None
    facts.system_type = _first(every, "system type") or _first(every, "hardware") or board
    facts.crypto = _crypto(every, facts.arch)
    facts.cores = [name for name in (_core_name(b) for b in blocks) if name] if blocks else []
    single = None if facts.cores else _core_name(shared)
    if single:  # single-core ARM with no `processor : 0` line
        facts.cores = [single]
    facts.model = _model(every, facts.cores, facts.arch)
    return facts


def _blocks(text: str) -> tuple[list[dict[str, str]], dict[str, str]]:
    """Split into one dict per `processor : N` entry, plus the keys outside any entry (Hardware, Serial...)."""
    blocks: list[dict[str, str]] = []
    shared: dict[str, str] = {}
    current: dict[str, str] | None = None
    for line in text.replace("\r", "").split("\n"):
        match = _KEY_VALUE.match(line)
        if not match:
            if not line.strip():
                current = None  # a blank line ends a CPU entry; what follows is board-wide
            continue
        key, value = match.group(1).strip().lower(), match.group(2).strip()
        if key == "processor" and re.fullmatch(r"\d+(-\d+)?", value):
            current = {"processor": value}
            blocks.append(current)
            continue
        if key == "processor":  # old ARM: `Processor : ARMv6-compatible processor rev 7 (v6l)`
            if not re.search(r"processor|\brev \d|arm", value, re.I):
                continue
            key = "model name"
        target = current if current is not None else shared
        target.setdefault(key, value)
    # MIPS prints `system type`/`machine` before `processor : 0`: they land in `shared`, which is right.
    return blocks, shared


def _first(dicts: list[dict[str, str]], key: str) -> str | None:
    for d in dicts:
        if d.get(key):
            return d[key]
    return None


def _first_float(dicts: list[dict[str, str]], key: str) -> float | None:
    value = _first(dicts, key)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


_X86_WORDS = {"fpu", "tsc", "sse", "sse2", "cx8", "cmov"}
_ARM_WORDS = {"fp", "asimd", "neon", "vfp", "half", "thumb", "swp", "evtstrm", "edsp"}


def _arch(dicts: list[dict[str, str]]) -> str | None:
    keys = set().union(*dicts)
    cpu_model = (_first(dicts, "cpu model") or "").lower()
    words = set((_first(dicts, "flags") or _first(dicts, "features") or "").split())
    if "vendor_id" in keys or words & _X86_WORDS:
        return "x86"
    if "cpu implementer" in keys or "cpu architecture" in keys or words & _ARM_WORDS:
        return "arm"
    if "mips" in cpu_model or "isa" in keys and "mips" in (_first(dicts, "isa") or "") or "system type" in keys:
        return "mips"
    return None


def _logical_cpus(blocks: list[dict[str, str]], shared: dict[str, str]) -> int | None:
    count = 0
    for block in blocks:
        first, _, last = block["processor"].partition("-")  # `processor : 0-3` in some pasted summaries
        count += int(last) - int(first) + 1 if last else 1
    if count:
        return count
    return 1 if shared.get("model name") or shared.get("cpu model") else None


def _crypto(dicts: list[dict[str, str]], arch: str | None) -> list[str]:
    words: set[str] = set()
    for d in dicts:
        words.update((d.get("flags") or d.get("features") or "").split())
    wanted = X86_CRYPTO if arch == "x86" else ARM_CRYPTO if arch == "arm" else ()
    return [w for w in wanted if w in words]


def _core_name(block: dict[str, str]) -> str | None:
    part = _hex(block.get("cpu part"))
    if part is None:
        return None
    implementer = _hex(block.get("cpu implementer"))
    if implementer in (None, 0x41):
        return ARM_PARTS.get(part)
    return OTHER_PARTS.get((implementer, part))


def _hex(value: str | None) -> int | None:
    try:
        return int(value, 16) if value else None
    except ValueError:
        return None


def _model(dicts: list[dict[str, str]], cores: list[str], arch: str | None) -> str | None:
    if arch == "arm" and cores:
        return _describe_cores(cores)
    return _first(dicts, "model name") or _first(dicts, "cpu model") or _first(dicts, "cpu")


def _describe_cores(cores: list[str]) -> str:
    """`Cortex-A72` when all cores are alike, `4x Cortex-A55 + 4x Cortex-A76` for big.LITTLE."""
    kinds = list(dict.fromkeys(cores))
    if len(kinds) == 1:
        return kinds[0]
    return " + ".join(f"{cores.count(kind)}x {kind}" for kind in kinds)
