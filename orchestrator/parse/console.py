"""A whole captured console session (or a saved log) -> ParsedLog.

Users paste what their terminal showed: shell prompts (`root@OpenWrt:~# `, `pi@raspberrypi:~ $ `,
`[root@host ~]# `, bare `$ `), several commands (`openssl speed ...`, `cat /proc/cpuinfo`, `uname -a`,
`openssl version -a`, `opkg install ...` noise), or just bare `openssl speed` output; sometimes with
newlines lost or doubled by a copy from a web page. The sslbench detect step prints files between
section markers (`==> /etc/os-release <==` as `head`/`tail` print them, or `@@ NAME` ... `@@ end`).

The text is cut into segments at prompts and markers. `openssl speed` segments go to `parse_speed`
with hints from their command line; facts segments to the facts parsers; a segment with no (known)
command is recognised by its content. Never raises: what could not be read goes to `skipped`.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import fields

from orchestrator.model import CpuFacts, OpenSSLBuild, ParsedLog
from orchestrator.parse.cpuinfo import parse_cpuinfo
from orchestrator.parse.names import speed_command_hints
from orchestrator.parse.osinfo import detect_os, parse_ddwrt
from orchestrator.parse.speed import parse_openssl_build, parse_speed_and_rest
from orchestrator.parse.speed.lines import ANCHORS, ends_cut
from orchestrator.parse.speed.runs import speed_runs

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")

# A prompt line: the prompt, then optionally the command typed after it.
_PROMPT = re.compile(
    r"""^[ \t]*(?:
        \[[^\]\n]{1,80}\][ \t]?[#$]                                   # [root@host ~]#
      | [\w.+-]+@[\w.-]+(?::[^\s#$]*)?(?:[ \t][^\s#$@]{1,40})?[ \t]?[#$]  # root@OpenWrt:~#  pi@raspberrypi:~ $
      | [\w.-]+:\S*[ \t][\w.-]+[#$]                                   # mac: host:~ user$
      | (?:ba|a|z)?sh-[\d.]+[#$]                                      # bash-4.2$
      | (?:PS[ \t])?[A-Za-z]:\\[^>\n]{0,120}>                           # PS C:\Users\me>  C:\>
      | [#$](?=[ \t]+\S)(?![ \t]+[A-Z][a-z])                              # bare "$ cmd" / "# cmd" (not "# Title")
    )(?:[ \t]+(?P<cmd>[^\n]*?))?[ \t]*$""",
    re.M | re.X,
)
# Section markers: `==> /etc/os-release <==` (head/tail), `@@ /etc/os-release`, `@@ begin NAME`, `@@ end`.
_MARKER = re.compile(r"^[ \t]*(?:==>[ \t]*(?P<head>[^\n]+?)[ \t]*<==|@@[ \t]+(?P<at>[^\n]+?))[ \t]*$", re.M)

_SPEED_COMMAND = re.compile(r"(?:^|[\s;&|/])openssl(?:\.exe)?\s+speed(?:\s|$)")
# Signs of `openssl speed` output, one pattern each (see _looks_like_speed). Each starts with a literal, which
# re finds with a fast scan (one alternation without a common first character would be tried at every
# position of every log); hence the two lookbehinds placed after a literal:
_SPEED_CONTENT = tuple(re.compile(pattern) for pattern in (
    r"Doing \S.{0,80}? for \d+s",
    r"\+F\d?:\d+:",
    r"\+DTP?:[^:\n]+:",  # -mr progress lines: all a log cut before its +F lines holds
    r"\+H:\d+",
    r"The 'numbers' are in 1000s",
    r"Got: \+",
    r"Forked child \d",
    r"\.(?<=\d\.)\d\dk[\s|]+\d+\.\d\dk",  # two throughput values: `1.23k  45.67k`, `1.23k | 45.67k` (a pipe table)
    r"speed: (?<!\Sspeed: )(?:Unknown|Unrecognized|Invalid|unknown)",  # at the start or after white space
    r"Error: bad option or value",
    # a public-key table pasted alone: its header, or a row's seconds/op column (`rsa 2048 bits 0.000190s`)
    r"sign/s\s+verify/s",
    r" op/s",
    r"keygens?/s",
    r"bits? +-?\d+\.\d{4,6}s ",
))
# Case-sensitive on purpose: `lscpu` prints "Model name:" / "Flags:", which is not /proc/cpuinfo.
_CPUINFO_KEYS = ("processor", "Processor", "model name", "cpu model", "system type", "Features", "CPU part",
                 "CPU implementer", "flags", "vendor_id")
_CPUINFO_LINE = re.compile(rf"[ \t]*(?:{'|'.join(_CPUINFO_KEYS)})[ \t]*:")  # (.match on one line)
_KEY_VALUE_LINE = re.compile(r"^[ \t]*[A-Za-z][\w ()/.-]{0,40}?[ \t]*:(?:[ \t].*)?$|^[ \t]*$")
# Whole lines of a text, found by _lines_matching in "\n" + text: led by the literal newline, which re finds
# with a fast scan (a leading ^ in MULTILINE mode is tried at every character of a 60 KB report).
_CPUINFO_LINE_IN_TEXT = re.compile(r"\n" + _CPUINFO_LINE.pattern)
_OS_RELEASE_LINE = re.compile(r"\n([ \t]*(?:NAME|ID|ID_LIKE|VERSION|VERSION_ID|VERSION_CODENAME|PRETTY_NAME|BUILD_ID"
                              r"|HOME_URL|SUPPORT_URL|BUG_REPORT_URL|ANSI_COLOR|CPE_NAME)=[^\n]*)")
_OPENWRT_LINE = re.compile(r"\n([ \t]*DISTRIB_\w+=[^\n]*)")
_ARMBIAN_LINE = re.compile(r"\n([ \t]*(?:BOARD|BOARD_NAME|BOARDFAMILY|VERSION|LINUXFAMILY|BRANCH|ARCH)=[^\n]*)")
_REDHAT_LINE = re.compile(r"\n([ \t]*(?:CentOS|Red Hat|Fedora|Rocky|AlmaLinux|Oracle Linux)[^\n]*? release \d[^\n]*)")
_UNAME_LINE = re.compile(r"\n([ \t]*Linux \S+ \d+\.\d+\S* #[^\n]*)")
# Keys that start a line in cpuinfo / os-release / openwrt_release: where a lost newline most likely was.
_LINE_KEYS = (
    "processor|model name|BogoMIPS|bogomips|Features|CPU implementer|CPU architecture|CPU variant|CPU part"
    "|CPU revision|Hardware|Revision|Serial|Model|system type|machine|cpu model|vendor_id|cpu family|model"
    "|stepping|microcode|cpu MHz|cache size|physical id|siblings|core id|cpu cores|apicid|initial apicid"
    "|fpu|fpu_exception|cpuid level|wp|flags|bugs|TLB size|clflush size|cache_alignment|address sizes"
    "|power management|wait instruction|microsecond timers|tlb_entries|extra interrupt vector"
    "|hardware watchpoint|isa|ASEs implemented|Options implemented|shadow register sets|kscratch registers"
    "|package|core|VCED exceptions|VCEI exceptions"
)
_GLUED = re.compile(
    r"(?<=\S)[ \t]+(?=(?:[\w.+-]+@[\w.-]+:\S*[ \t]?[#$][ \t])"
    rf"|(?:{_LINE_KEYS})[ \t]*:(?:[ \t]|$)"
    r"|(?:PRETTY_NAME|NAME|VERSION_ID|VERSION_CODENAME|VERSION|ID_LIKE|ID|HOME_URL|SUPPORT_URL|BUG_REPORT_URL"
    r"|DISTRIB_[A-Z]+)=)"
)
# Where openssl starts a line (speed/lines.ANCHORS), and a bare `$ openssl …` / `# openssl …` prompt: in a session
# whose newlines were all lost, the places where a run, and the next command, start again.
_GLUED_SPEED = re.compile(r"[ \t]+(?=[#$][ \t]+openssl[ \t])|" + "|".join(pattern for _, pattern in ANCHORS))
# Quoting in an e-mail, a forum post or a Markdown blockquote (`> `, `>`, nested `> > `, `>>`): a line's marks.
_QUOTE_MARKS = re.compile(r"\n[ \t]*>[> \t]*")
# Where a progress or -multi/-mr line starts: counted at a line's start and anywhere, to tell a paragraph that a
# renderer re-wrapped (html2text's 78 columns) from a log that kept its lines.
_LINE_WORDS = ("Doing", "+DT:", "+R:", "Got:", "Forked")  # (no space: a re-wrap may break the line after it)
# Where the output of a command starts when a lost newline glued it to the command line.
_OUTPUT_START = re.compile(
    r"[ \t]+(?=Doing \S|Forked child|\+DT:|\+H:|\+F\d?:|Got: |version: \d|OpenSSL \d|LibreSSL \d"
    r"|The 'numbers'|type[ \t]+16 bytes|speed: |Linux \S+ \d|built on:)"
)

_KEY_VALUE_FILES = ("os-release", "openwrt_release", "armbian-release")
# Two text lines with one newline between them. Led by the literal newline, which re finds with a fast scan
# (`[^\n]\n[^\n]` made it try every character of a doubled-newline log).
_ADJACENT_LINES = re.compile(r"\n(?<=[^\n]\n)[^\n]")
_FACT_KINDS = ("cpuinfo", "os-release", "openwrt_release", "armbian-release", "redhat-release",
               "uname -a", "uname -r", "uname -m", "banner", "nvram get os_version", "rpi-issue",
               "debian_version", "alpine-release", "arch-release")


def parse_console(text: str) -> ParsedLog:
    """Everything a captured session or saved log says: measurements, CPU, OS and OpenSSL facts."""
    result = ParsedLog()
    files: dict[str, str] = {}
    cpuinfo_texts: list[str] = []
    segments = _segments(_normalise(text))
    cut = ends_cut(text)  # the log was cut off in the middle of its last line (of its last segment)
    for n, (command, body) in enumerate(segments):
        kind = _command_kind(command)
        try:
            if kind == "speed" or (kind is None and _looks_like_speed(body)):
                rest = _add_speed(result, command, body, cut and n == len(segments) - 1)
                if kind is None and rest:  # facts among speed output: only in the lines that are not
                    _sniff_facts("\n".join(rest), files, cpuinfo_texts)
            elif kind == "openssl version":
                _merge_build(result.openssl, parse_openssl_build(body))
            elif kind == "cpuinfo" and not _lines_matching(_CPUINFO_LINE_IN_TEXT, body):
                result.skipped.append(f"{_label(command)}: no cpuinfo fields in its output ({_first_line(body)})")
            elif kind == "cpuinfo":
                cpuinfo_texts.append(body)
            elif kind in _KEY_VALUE_FILES and "=" not in body:
                result.skipped.append(f"{_label(command)}: no KEY=value lines in its output ({_first_line(body)})")
            elif kind in _FACT_KINDS:
                files.setdefault(kind, body)
            else:  # no command, an unknown one (ssh, cat /etc/*release*, opkg ...), or a marker section
                _sniff_facts(body, files, cpuinfo_texts)
        except Exception as exc:  # a bug in one parser must not lose the rest of the session: recorded as one
            result.errors.append(f"{_label(command)}: internal error ({type(exc).__name__}: {exc})")
    try:
        _finish_facts(result, files, cpuinfo_texts)
    except Exception as exc:  # the facts readers' bug: the figures are kept, the error said
        result.errors.append(f"internal error reading the facts ({type(exc).__name__}: {exc})")
    return result


def _looks_like_speed(text: str) -> bool:
    return any(pattern.search(text) for pattern in _SPEED_CONTENT)


def _normalise(text: str) -> str:
    # Substring checks first: most logs need none of this, and the benchmark counts microseconds.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "")
    if ">" in text:
        # Quoting marks go before anything else reads the lines: they hide the prompts (each command's output
        # would be read as one run, its thread count and API those of the last command).
        text = _QUOTE_MARKS.sub("\n", "\n" + text)[1:]
    # Doubled newlines (every line followed by an empty one): no two text lines are adjacent.
    if text.count("\n\n") >= 3 and not _ADJACENT_LINES.search(text):
        text = text.replace("\n\n", "\n")
    if _rewrapped(text):  # the paragraph as it was before the re-wrap: one line, its newlines lost (below)
        text = _REWRAP.sub(" ", text)
    # Lost newlines: only long lines are suspects (x86 `flags` lines are long but have no glued keys).
    lines = text.split("\n")
    if max(map(len, lines)) > 400:
        suspects = [i for i, line in enumerate(lines) if len(line) > 400 and _suspect(line)]  # most: `compiler:`
        if suspects:
            for i in suspects:
                lines[i] = _GLUED.sub("\n", lines[i])
                if "openssl" in lines[i] or "Doing " in lines[i] or "+H:" in lines[i] or "+DT" in lines[i]:
                    lines[i] = _GLUED_SPEED.sub("\n", lines[i])
            text = "\n".join(lines)
    return text


_REWRAP = re.compile(r"(?<=\S)[ \t]*\n(?=[ \t]*\S)")  # a newline between two text lines


def _rewrapped(text: str) -> bool:
    """A text whose lines a renderer re-wrapped to its width (html2text: 78 columns): no long line, and more
    progress / -multi lines start inside a line than at one (openssl starts each on a line of its own)."""
    inside = at_start = 0
    for word in _LINE_WORDS:
        total = text.count(word)
        if total:
            starts = text.count("\n" + word) + text.startswith(word)
            inside += total - starts
            at_start += starts
    return inside >= 2 and inside > at_start and max(map(len, text.split("\n"))) <= 100


def _suspect(line: str) -> bool:
    """A line long enough to hold several glued lines; `compiler:`/`options:`/`flags` are long by nature."""
    return len(line) > 400 and not line.startswith(_LONG_BY_NATURE)


_LONG_BY_NATURE = ("compiler:", "options:", "flags", "bugs", "CFLAGS")


def _segments(text: str) -> list[tuple[str | None, str]]:
    """(command or marker name, output) pairs in order; output before any prompt has command None."""
    cuts: list[tuple[int, int, str | None]] = []
    glued: dict[int, str] = {}  # cut start -> output that a lost newline glued onto the command line
    for match in _prompt_lines(text):
        command, output = _split_glued_command((match.group("cmd") or "").strip())
        cuts.append((match.start(), match.end(), command or None))
        if output:
            glued[match.start()] = output
    for match in _MARKER.finditer(text) if "==>" in text or "@@" in text else ():
        name = (match.group("head") or match.group("at") or "").strip()
        if name.startswith("begin "):
            name = name[6:]
        cuts.append((match.start(), match.end(), None if name.startswith("end") else "section " + name))
    if not cuts:
        return [(None, text)]
    cuts.sort()
    segments: list[tuple[str | None, str]] = []
    if cuts[0][0] > 0:
        segments.append((None, text[: cuts[0][0]]))
    for i, (start, end, cut_command) in enumerate(cuts):
        stop = cuts[i + 1][0] if i + 1 < len(cuts) else len(text)
        body = text[end:stop].strip("\n")
        if start in glued:
            body = glued[start] + "\n" + body
        segments.append((cut_command, body))
    return [(c, b) for c, b in segments if b.strip() or (c and _command_kind(c) == "speed")]


def _prompt_lines(text: str) -> Iterator[re.Match[str]]:
    """_PROMPT matches, tried only on lines that hold a prompt character (most log lines hold none)."""
    tried: set[int] = set()
    for mark in "#$>":
        at = text.find(mark)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            if start not in tried:
                tried.add(start)
                match = _PROMPT.match(text, start)
                if match:
                    yield match
            end = text.find("\n", at)
            at = text.find(mark, end) if end != -1 else -1


def _split_glued_command(command: str) -> tuple[str, str]:
    """`cat /etc/os-release NAME="Debian"...` -> (`cat /etc/os-release`, `NAME="Debian"...`).

    Commands people type are short; a long one swallowed its output when newlines were lost.
    """
    match = _OUTPUT_START.search(command)
    if len(command) < 120:  # short: only split at text no command contains ("speed: Unknown algorithm")
        return (command[: match.start()], command[match.end():]) if match else (command, "")
    words = command.split()
    if words[0] in ("cat", "head", "tail", "more", "less") and len(words) > 2:
        return " ".join(words[:2]), " ".join(words[2:])
    if words[0] == "uname" or words[:2] == ["openssl", "version"]:
        count = 1 if words[0] == "uname" else 2
        while count < len(words) and words[count].startswith("-"):
            count += 1
        return " ".join(words[:count]), " ".join(words[count:])
    if match:
        return command[: match.start()], command[match.end():]
    return command, ""


_COMMAND_KINDS = [(kind, re.compile(pattern)) for kind, pattern in (
    ("cpuinfo", r"/proc/cpuinfo|^cpuinfo$"),
    ("os-release", r"os-release"),
    ("openwrt_release", r"openwrt_release"),
    ("armbian-release", r"armbian-release"),
    ("redhat-release", r"(?:redhat|centos|fedora|rocky|almalinux|system)-release"),
    ("uname -r", r"^(?:\S*/)?uname\s+-r\b"),
    ("uname -m", r"^(?:\S*/)?uname\s+-m\b"),
    ("uname -a", r"^(?:\S*/)?uname\b"),
    ("nvram get os_version", r"nvram\s+get\s+os_version"),
    ("banner", r"/etc/(?:motd|banner|issue)\b|^(?:motd|banner)$"),
    ("rpi-issue", r"rpi-issue"),
    ("debian_version", r"debian_version"),
    ("alpine-release", r"alpine-release"),
    ("arch-release", r"arch-release"),
)]
_OPENSSL_VERSION = re.compile(r"\bopenssl\s+version\b")


def _command_kind(command: str | None) -> str | None:
    """What a command (or a marker's file name) prints, as the key the facts parsers expect."""
    if not command:
        return None
    cmd = command[8:] if command.startswith("section ") else command
    if _SPEED_COMMAND.search(" " + cmd):
        return "speed"
    if _OPENSSL_VERSION.search(cmd):
        return "openssl version"
    for kind, pattern in _COMMAND_KINDS:
        if pattern.search(cmd):
            return kind
    return None


def _add_speed(result: ParsedLog, command: str | None, body: str, cut: bool) -> list[str]:
    """Adds what `body` measured (each of its runs); returns its lines that are not speed output.
    `cut`: the log was cut off in the middle of the body's last line."""
    rest: list[str] = []
    runs = speed_runs(body)
    for n, run in enumerate(runs):
        rest += _add_speed_run(result, command, run, cut and n == len(runs) - 1)
    return rest


def _add_speed_run(result: ParsedLog, command: str | None, body: str, cut: bool) -> list[str]:
    hints = speed_command_hints(command) if command else {}
    parsed, rest = parse_speed_and_rest(
        body, threads=hints.get("threads"), api=hints.get("api"), algorithm=hints.get("algorithm"), cut=cut
    )
    result.measurements.extend(parsed.measurements)
    _merge_build(result.openssl, parsed.openssl)
    timing = "elapsed" if command and "-elapsed" in command.split() else parsed.timing
    if timing:
        result.timing = timing if result.timing in (None, timing) else "mixed"
    label = _label(command)
    result.skipped.extend(f"{label}: {note}" if command else note for note in parsed.skipped)
    result.errors.extend(f"{label}: {error}" if command else error for error in parsed.errors)
    if command and not parsed.measurements and not parsed.skipped:
        first = _first_line(body)
        why = f" ({first})" if first and not _looks_like_speed(first) else ""
        result.skipped.append(f"{label}: no results{why}")
    return rest


def _sniff_facts(body: str, files: dict[str, str], cpuinfo_texts: list[str]) -> None:
    """Recognise facts by their content, for output whose command is unknown or missing."""
    if any(key in body for key in _CPUINFO_KEYS) and _lines_matching(_CPUINFO_LINE_IN_TEXT, body):
        block = _cpuinfo_block(body)
        if block:
            cpuinfo_texts.append(block)
    for kind, pattern, needle in (("os-release", _OS_RELEASE_LINE, "NAME="), ("openwrt_release", _OPENWRT_LINE, "DISTRIB_"),
                                  ("redhat-release", _REDHAT_LINE, " release "), ("uname -a", _UNAME_LINE, "Linux ")):
        if needle not in body and not (kind == "os-release" and "ID=" in body):  # cheap test before the regex
            continue
        lines = _lines_matching(pattern, body)
        if lines and (kind != "os-release" or any(re.match(r"\s*(?:ID|PRETTY_NAME)=", l) for l in lines)):
            files.setdefault(kind, "\n".join(lines))
    if "BOARDFAMILY=" in body:
        files.setdefault("armbian-release", "\n".join(_lines_matching(_ARMBIAN_LINE, body)))
    if "DD-WRT" in body and parse_ddwrt(body):
        files.setdefault("banner", body)


def _lines_matching(pattern: re.Pattern[str], text: str) -> list[str]:
    """The lines of `text` that one of the newline-led patterns above matches."""
    return pattern.findall("\n" + text)


def _cpuinfo_block(body: str) -> str:
    """The run of `key : value` / blank lines around the first cpuinfo line (drops prompts, tables)."""
    lines = body.split("\n")
    first = next(i for i, line in enumerate(lines) if _CPUINFO_LINE.match(line))
    start = first
    while start > 0 and _KEY_VALUE_LINE.match(lines[start - 1]) and lines[start - 1].strip():
        start -= 1  # MIPS prints `system type` / `machine` before `processor`
    end = first
    while end < len(lines) and _KEY_VALUE_LINE.match(lines[end]):
        end += 1
    return "\n".join(lines[start:end])


def _finish_facts(result: ParsedLog, files: dict[str, str], cpuinfo_texts: list[str]) -> None:
    if cpuinfo_texts:
        # Several cpuinfo outputs (e.g. `grep` then `cat`): keep the one that says the most.
        candidates = [parse_cpuinfo(t) for t in cpuinfo_texts]
        result.cpu = max(candidates, key=lambda c: sum(1 for name in _CPU_FIELDS if getattr(c, name)))
    if files:
        result.os = detect_os(files)
    if result.cpu.arch is None and result.os.machine:
        result.cpu.arch = _arch_of_machine(result.os.machine)


_CPU_FIELDS = tuple(f.name for f in fields(CpuFacts))


def _arch_of_machine(machine: str) -> str | None:
    machine = machine.lower()
    if machine in ("x86_64", "amd64") or re.fullmatch(r"i[3-6]86", machine):
        return "x86"
    if machine.startswith(("arm", "aarch64")):
        return "arm"
    if machine.startswith("mips"):
        return "mips"
    return None


def _merge_build(into: OpenSSLBuild, other: OpenSSLBuild | None) -> None:
    """Fill fields still unknown; the first log that tells wins."""
    if other is None:
        return
    for name in _BUILD_FIELDS:
        if getattr(into, name) is None and getattr(other, name) is not None:
            setattr(into, name, getattr(other, name))


_BUILD_FIELDS = tuple(f.name for f in fields(OpenSSLBuild))  # once: fields() is slow for once per log


def _first_line(text: str) -> str:
    return next((line.strip()[:120] for line in text.split("\n") if line.strip()), "")


def _label(command: str | None) -> str:
    if not command:
        return "log"
    return f"`{command[:80]}`"

