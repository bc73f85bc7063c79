"""Progress lines: `Doing aes-128-cbc for 3s on 1024 size blocks: 123456 aes-128-cbc's in 2.99s` (3.2+:
`… ops in …`), the public-key and KEM / signature ones, and what openssl says when a test fails.

Each gives a count and CPU seconds, kept in State.progress by test in run order: resolve.py attaches
them to the table's figures, or makes a figure of them when the table never came (a cut-off log).
"""
from __future__ import annotations

import re
from typing import Any

from orchestrator.parse.names import canonical_algorithm
from orchestrator.parse.speed.numbers import NUM, number
from orchestrator.parse.speed.pk import LIBRESSL_MLKEM_OPS, kem_sig_name
from orchestrator.parse.speed.state import State

_PROGRESS = re.compile(
    r"Doing (?P<name>.+?)(?: ops)? for (?P<tm>\d+)s on (?P<size>\d+) size blocks: "
    r"(?P<count>-?\d+) .+?(?:'s| ops) in (?P<secs>" + NUM + r")s"
)
_PK_PROGRESS = re.compile(
    # (`256 -bits`: html2text's space after a bold `**256**`)
    r"(?P<count>-?\d+) (?P<bits>\d+)(?: ?-| )bits? (?P<what>[A-Za-z0-9' -]+?) in (?P<secs>" + NUM + r")s"
)
_NAMED_PROGRESS = re.compile(
    r"(?P<count>-?\d+) (?P<name>\S+) (?:KEM |signature )?(?P<op>keygen|encaps|decaps|sign|verify) ops "
    r"in (?P<secs>" + NUM + r")s"
)


# What openssl says when something went wrong.
ERROR_LINE = re.compile(r"speed: (?<!\wspeed: )|Error: bad option|is an unknown cipher or digest|Child exited with|"
                        r"Child terminated by signal|Unknown type '|error!$")
_NOT_A_RESULT = ("Doing ", "+", "Got: ", "Forked child")  # lines that never end a `Doing …` line


def continues_progress(line: str, state: State) -> bool:
    """The result of the last `Doing …` line, come on its own line (after a failure message, or wrapped)."""
    doing, state.pending_progress = state.pending_progress, None
    return not line.startswith(_NOT_A_RESULT) and read_progress_result(f"{doing} {line}", state)


def read_error(line: str, state: State) -> None:
    """What openssl said went wrong; `NAME error!` (3.x: the test could not run) also marks NAME."""
    state.skipped.append(f"openssl said: {line[:200]}")
    if line.endswith(" error!"):
        state.failed_tests.add(canonical_algorithm(line[:-len(" error!")].rpartition(": ")[2]))


def read_progress(line: str, state: State) -> bool:
    """A `Doing …` line; True when it held its result (count and seconds). One without (the result
    came on the next line, after a failure message or a wrap) waits in state.pending_progress."""
    if line.endswith(" error!"):  # `Doing md4 for 1s on 16 size blocks: md4 error!`
        read_error(line, state)
        return False
    # 3.2+ says `Doing … ops for`; `… ECDH ops in 0.70s` alone is in every version since 1.0
    if " ops for " in line or (" ops in " in line and "size blocks" in line):
        state.ops_format = True
    if read_progress_result(line, state):
        return True
    state.pending_progress = line
    return False


def read_progress_result(line: str, state: State) -> bool:
    if "size blocks: " in line and _read_sym_progress(line, state):
        return True
    match = _PROGRESS.search(line) if "size blocks" in line else None
    if match:
        count, secs = int(match.group("count")), number(match.group("secs"))
        if secs is not None:
            key = ("sym", canonical_algorithm(match.group("name")), int(match.group("size")))
            state.progress_labels.setdefault(key[1], match.group("name"))
            state.progress.setdefault(key, []).append((count, secs))
        return True
    start = line.find(": ") + 1  # the result follows `for 10s: ` (a search from 0 tries every digit before)
    match = _PK_PROGRESS.search(line, start) if "bit" in line else None
    if match:
        pk_key = _pk_progress_key(match.group("what"), int(match.group("bits")))
        secs = number(match.group("secs"))
        if pk_key is not None and secs is not None:
            state.progress.setdefault(("pk",) + pk_key, []).append((int(match.group("count")), secs))
        return True
    match = _NAMED_PROGRESS.search(line, start)
    if match:
        secs = number(match.group("secs"))
        name = match.group("name")
        op = match.group("op")
        table = "sig" if " signature " in line else "kem"
        names = state.sig_names if table == "sig" else state.kem_names
        if name not in names:
            names.append(name)
        if secs is not None:
            named_key = ("pk", kem_sig_name(name, table), None, op)
            state.progress.setdefault(named_key, []).append((int(match.group("count")), secs))
        return True
    return False


def _read_sym_progress(line: str, state: State) -> bool:
    """`Doing NAME[ ops] for Ts on SIZE size blocks: COUNT NAME's in SECSs` with string methods
    (the _PROGRESS regex is the fallback for anything unusual). True when read."""
    head, _, tail = line.partition(" size blocks: ")
    name_tm, _, size = head.rpartition("s on ")
    name, _, tm = name_tm.rpartition(" for ")
    count, _, rest = tail.partition(" ")
    what, _, secs = rest.rpartition(" in ")
    if not (secs[-1:] == "s" and count.lstrip("-").isdigit() and size.isdigit() and tm.isdigit() and name[:6] == "Doing "
            and (what[-2:] == "'s" or what[-4:] == " ops")):
        return False
    name = name[6:-4] if name.endswith(" ops") else name[6:]
    value = number(secs[:-1])
    if value is not None and name:
        key = ("sym", canonical_algorithm(name), int(size))
        state.progress_labels.setdefault(key[1], name)
        runs = state.progress.get(key)
        if runs is None:
            state.progress[key] = [(int(count), value)]
        else:
            runs.append((int(count), value))
        return True
    return False


_PROGRESS_FAMILY = {"DSA": "dsa", "ECDSA": "ecdsa", "Ed25519": "eddsa", "Ed448": "eddsa", "SM2": "sm2",
                    "CurveSM2": "sm2"}


def _pk_progress_key(what: str, bits: int) -> tuple[Any, ...] | None:
    """`private RSA's`, `public RSA encrypt ops`, `DSA signs`, `ECDSA verify`, `ECDH ops`,
    `Ed25519 signs`, `SM2 sign ops`, `FFDH ops` -> (family, bits, op)."""
    words = what.replace("'s", "").split()
    if not words:
        return None
    if "RSA" in words:
        for op in ("sign", "verify", "encrypt", "decrypt"):
            if op in words:
                return ("rsa", bits, op)
        return ("rsa", bits, "sign" if words[0] == "private" else "verify")
    family = _PROGRESS_FAMILY.get(words[0])
    if family and len(words) > 1:
        op = "sign" if words[1].startswith("sign") else "verify"
        return (family, bits, op)
    if words[0] in ("ECDH", "FFDH"):
        return (words[0].lower(), bits, "op")
    if words[0] == "ML-KEM" and len(words) > 1 and words[1] in LIBRESSL_MLKEM_OPS:  # LibreSSL
        return (f"ml-kem-{bits}", None, LIBRESSL_MLKEM_OPS[words[1]])
    return None
