"""The user's log files: read one (a path, or "-" for standard input) as text, or say in one line what is wrong
with it; tell a log worth printing from one with nothing in it.  `parse`, `import` and `reference` read through
here; what a parsed log says is laid out by render/logview.py."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

from orchestrator.errors import UserError
from orchestrator.model import ParsedLog


# The most of one log read: a saved `openssl speed` log is kilobytes, a console session of a whole fleet's
# nightly runs some hundreds of MB; `import /dev/zero` or `yes | sslbench import -` must stop with a sentence,
# not fill the memory.
MAX_LOG_BYTES = 512 * 1000 * 1000
_CHUNK = 1 << 20
_SNIFF = 8192  # what a log is told by: a byte-order mark, gzip's magic, binary bytes


def read_text(name: str | Path) -> str:
    """The text of FILE (or stdin for "-"), or a UserError that says what is wrong with it."""
    return read_log(name)[0]


def read_log(name: str | Path, limit: int = MAX_LOG_BYTES) -> tuple[str, bytes]:
    """The text of FILE (a path, a FIFO, a pipe such as <(…), or stdin for "-") and its bytes as read, or a
    UserError that says what is wrong with it. Read as a stream, once: binary or gzip input is refused at its
    first bytes, and input over `limit` bytes before it is all in memory."""
    name = str(name)
    label = "standard input" if name == "-" else name
    if name == "-":
        data = _read_stream(sys.stdin.buffer, label, limit)
    else:
        if Path(name).is_dir():
            raise UserError(f"{name} is a directory; give the log files in it, e.g. {name}/*.log")
        try:
            with open(name, "rb") as stream:
                data = _read_stream(stream, label, limit)
        except FileNotFoundError:
            raise UserError(f"{name}: no such file") from None
        except OSError as exc:
            raise UserError(f"cannot read {name}: {exc.strerror or exc}") from None
    text = data
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # PowerShell `>` writes UTF-16 with a byte-order mark
        text = data.decode("utf-16", errors="replace").encode("utf-8")
        _refuse_non_text(text[:_SNIFF], label)  # binary behind a byte-order mark is binary all the same
    if not text.strip():
        raise UserError(f"{label} is empty; give the saved output of `openssl speed` (2>&1) or a console session")
    return text.decode("utf-8-sig", errors="replace"), data


def _read_stream(stream: BinaryIO, label: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    head = b""
    while True:
        chunk = stream.read(_CHUNK if len(head) >= _SNIFF else _SNIFF - len(head))
        if not chunk:
            break
        if len(head) < _SNIFF:
            head += chunk
            if len(head) >= _SNIFF:
                _refuse_non_text(head, label)
        size += len(chunk)
        if size > limit:
            raise UserError(f"{label} is larger than {limit // 1000000} MB: too large for a log of `openssl speed` "
                            "or a console session; is it the right input?")
        chunks.append(chunk)
    if len(head) < _SNIFF:
        _refuse_non_text(head, label)
    return b"".join(chunks)


def _refuse_non_text(head: bytes, label: str) -> None:
    """gzip or binary data, told from the first bytes (UTF-16 with its byte-order mark is text)."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return
    if head[:2] == b"\x1f\x8b":
        raise UserError(f"{label} is gzip-compressed; run `gunzip` on it first or pipe `zcat {label} |` into "
                        "`sslbench parse -`")
    if b"\0" in head or _mostly_binary(head):
        raise UserError(f"{label} is not a text log (it contains binary data)")


def say_errors(name: str, log: ParsedLog) -> None:
    """A reader's bug met in the log (ParsedLog.errors), on stderr: never a quiet note, as figures may be lost."""
    label = "standard input" if name == "-" else name
    for error in log.errors:
        print(f"sslbench: {label}: {error}: a bug in sslbench, figures of that part may be missing; please report "
              "it with the log", file=sys.stderr)


def checked(name: str, log: ParsedLog) -> ParsedLog:
    """The parsed log of FILE, or a UserError when it holds no figure (a session of facts alone is fine)."""
    label = "standard input" if name == "-" else name
    say_errors(name, log)
    if not log.measurements and not _has_facts(log):
        said = next((note for note in log.skipped if "openssl said: " in note), None)
        if said:  # openssl itself failed ("speed: Unknown algorithm ..."): say what it said
            raise UserError(f"{label}: no openssl speed results: {said}")
        notes = [note for note in log.skipped if not note.endswith("no openssl speed results found")]
        if notes:  # figures were there but could not be read: say why (never "it ends before any test")
            raise UserError(f"{label}: no figure could be read: " + "; ".join(notes[:3])
                            + (f" (and {len(notes) - 3} more)" if len(notes) > 3 else ""))
        if log.openssl.version:
            raise UserError(f"{label}: openssl speed output without a single figure (it ends before any test "
                            f"finished)")
        raise UserError(f"{label}: found no openssl speed results and no system facts; "
                        f"is it the output of `openssl speed`?")
    return log


def _has_facts(log: ParsedLog) -> bool:
    """CPU or OS facts: a session of `cat /proc/cpuinfo` and `uname -a` is worth printing without a figure."""
    return bool(log.cpu.model or log.cpu.logical_cpus or log.os.family not in (None, "unknown") or log.os.kernel)


def _mostly_binary(sample: bytes) -> bool:
    """More than 10 % control bytes (other than tab/CR/LF/ESC/FF): not something a terminal printed."""
    controls = len(sample.translate(None, _NOT_CONTROL))  # counted in C, not byte by byte in Python
    return controls * 10 > len(sample)


_NOT_CONTROL = bytes([9, 10, 12, 13, 27]) + bytes(range(32, 256))
