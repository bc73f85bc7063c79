"""Human tables: the throughput table (`type 16 bytes …` header, rows `%-13s` + ` %11.2fk` or plain bytes/s,
including `-bytes N`, `-aead`, `-mb`, the headerless `-multi N` summary and sbc-bench's per-cluster rows) and
the public-key tables (RSA with 2 or 4 operations, DSA, ECDSA, ECDH, EdDSA, SM2, FFDH, 3.2+'s KEM and
signature tables, LibreSSL's ML-KEM table) with their headers.
"""
from __future__ import annotations

import re

from orchestrator.parse.names import canonical_algorithm, curve_algorithm
from orchestrator.parse.speed.numbers import INFINITY, NUM, all_zero, figure
from orchestrator.parse.speed.pk import KEM_SIG_OPS, add_pk, kem_sig_name
from orchestrator.parse.speed.state import SIZES_1_0, SIZES_1_1, Row, State

# One value as a throughput row prints it: `12630.54k`, `9999.50`, `inf`, `nan`.
_VALUE_TOKEN = re.compile(r"-?(?:\d+\.\d+|inf|nan)k?", re.IGNORECASE)
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ()/._,+-]{0,39}")
# A whole line that is one throughput row: words that are not values, then values to the end.
_ONE_ROW = re.compile(r"((?:(?!{v}\s)\S+\s+)+)({v}(?:\s+{v})*)".format(v=_VALUE_TOKEN.pattern), re.IGNORECASE)
_VALUES_ONLY = re.compile(r"{v}(?:\s+{v})*".format(v=_VALUE_TOKEN.pattern), re.IGNORECASE)
HEADER = re.compile(r"type((?:\s+\d+ bytes)+)")
# The rest of a header that a mail client wrapped: sizes (`8192` / `bytes  16384 bytes`).
HEADER_MORE = re.compile(r"(?:\d+|bytes)(?:\s+(?:\d+|bytes))*")

# Public-key rows. Led by a literal (the lookbehind after it): re finds a literal with a fast scan, a
# leading lookbehind would be tried at every position of every row.
_RSA4 = re.compile(
    rf"rsa(?<![A-Za-z]rsa)\s+(\d+)\s+bits?\s+{NUM}s\s+{NUM}s\s+{NUM}s\s+{NUM}s"
    rf"\s+({NUM})\s+({NUM})\s+({NUM})\s+({NUM})"
)
_RSA_DSA = re.compile(rf"([rd]sa)(?<![A-Za-z][rd]sa)\s+(\d+)\s+bits?\s+{NUM}s\s+{NUM}s\s+({NUM})\s+({NUM})")
_CURVE_SIGN = re.compile(
    rf"(\d+)\s+bits?\s+(ecdsa|EdDSA|SM2)\s+\(([^)\s]+)\)\s+{NUM}s\s+{NUM}s\s+({NUM})\s+({NUM})",
    re.IGNORECASE,
)
_CURVE_OP = re.compile(rf"(\d+)\s+bits?\s+ecdh\s+\(([^)\s]+)\)\s+{NUM}s\s+({NUM})", re.IGNORECASE)
_FFDH = re.compile(rf"(\d+)\s+bits?\s+ffdh\s+{NUM}s\s+({NUM})", re.IGNORECASE)
_KEM_SIG_ROW = re.compile(rf"(\S+)\s+{NUM}s\s+{NUM}s\s+{NUM}s\s+({NUM})\s+({NUM})\s+({NUM})")
_LIBRESSL_MLKEM_ROW = re.compile(rf"mlkem\s*(\d+)\s+{NUM}s\s+({NUM})\s+{NUM}s\s+({NUM})\s+{NUM}s\s+({NUM})")
ROW_END = frozenset("0123456789kKfFnN")  # a throughput row ends with a number, `k`, inf or nan
_ROW_TAIL_LABEL2 = {"cbc", "ede3", "ige"}  # the second word of 1.x labels such as `aes-128 cbc`


def split_trailing_row(line: str, state: State) -> str:
    """A -multi summary row glued to the last build line (`compiler: … evp 1.00k …`): read it apart."""
    tokens = line.split()
    n = 0
    while n < len(tokens) and _VALUE_TOKEN.fullmatch(tokens[-1 - n]):
        n += 1
    if n < 1 or n + 2 > len(tokens) or not tokens[-1].lower().endswith("k"):
        return line
    width = 2 if tokens[-1 - n] in _ROW_TAIL_LABEL2 else 1
    label = tokens[-n - width:-n]
    if not add_row(" ".join(label), tokens[-n:], state):
        return line
    return " ".join(tokens[:-n - width])


def read_header(line: str, state: State) -> None:
    match = HEADER.match(line)
    if match is None:
        return
    state.sizes = tuple(int(word) for word in match.group(1).split() if word.isdigit())
    rest = line[match.end():].strip()
    if rest and not HEADER_MORE.fullmatch(rest):  # a table whose newlines were lost: rows follow on the same line
        read_rows(rest, state)
    elif not rest or rest.isdigit():
        state.wrapped = ("header", line)  # its last sizes may come on the next line (a wrapped mail)


_PK_HEADER_WORDS = frozenset(("sign", "verify", "encrypt", "decrypt", "sign/s", "verify/s", "encr./s", "decr./s",
                              "op", "op/s", "keygen", "encaps", "decaps", "signs", "keygens/s", "encaps/s",
                              "decaps/s", "keygen/s", "encap", "encap/s", "decap", "decap/s"))


PK_HEADER_FIRST = frozenset("sveodk")


def is_pk_header(line: str) -> bool:
    return _PK_HEADER_WORDS.issuperset(line.split())


def read_pk_header(line: str, previous: frozenset[str] | None, state: State) -> None:
    """A public-key table's header (or the rest of a wrapped one): which table the rows belong to."""
    words = frozenset(line.split()) | (previous or frozenset())
    state.pk_header_words = words
    if "encaps/s" in words or "encaps" in words:
        state.pk_table = "kem"
    elif "keygens/s" in words or "signs" in words:
        state.pk_table = "sig"
    else:
        state.pk_table = None


def read_labelled_row(line: str, state: State) -> bool:
    """A throughput row with the core it ran on appended (sbc-bench). The core goes to
    Measurement.cpu (the cluster label of a pinned single-thread cell): one board's clusters are
    separate figures, never one median."""
    # sbc-bench: `aes-256-cbc  146626.41k … 1008697.34k (Cortex-A53)`; its summary quotes the rows
    # again as ``* `aes-256-cbc … (Cortex-A53)` ``. (String methods, not a regex: most lines ending in
    # `)` are something else, and a report has hundreds.)
    quoted = line[-1] == "`"
    if quoted:
        start = line.find("`")
        if start == len(line) - 1 or line[:start].strip(" *-") != "":
            return False
        line = line[start + 1:-1].strip()
        if not line:
            return False
    core = None
    if line[-1] == ")":
        at = line.rfind(" (")
        core = line[at + 2:-1]
        line = line[:at].rstrip()
        if at < 0 or not line or not core or len(core) > 40 or "(" in core or ")" in core:
            return False
        core = " ".join(core.split())
    if line[-1] not in ROW_END:
        return False
    if quoted:
        return _read_quoted_row(line, core, state)
    return read_rows(line, state, core=core)


def _read_quoted_row(line: str, core: str | None, state: State) -> bool:
    """sbc-bench's summary quotes rows the log already has: a quoted row adds records only when
    it is new (a summary pasted alone still gives its figures: no header, the count of values
    says which default sizes)."""
    before = len(state.rows)
    if not read_rows(line, state, core=core, sizes_by_count=True):
        return False
    seen = {(r.label, r.block_size, r.value) for r in state.rows[:before] if r.core == core and r.child is None}
    if all((r.label, r.block_size, r.value) in seen for r in state.rows[before:]):
        del state.rows[before:]
    return True


def read_rows(line: str, state: State, core: str | None = None, sizes_by_count: bool = False) -> bool:
    """Throughput rows `label v1 v2 …` (several when newlines were lost). True if any was read."""
    if state.sizes is None and not (state.child_sizes or state.seen_block or state.forked or sizes_by_count):
        # no header yet: add_row could not place any value (cheap exit for other output). A throughput row there
        # (its header lost in a paste) is said to be unread, never placed under assumed block sizes.
        if line[-1:] in ("k", "K") and _ONE_ROW.fullmatch(line) and not _VALUES_ONLY.fullmatch(line):
            _headerless(line, state)
        return False
    if "." not in line and not ("n" in line or "N" in line) or _VALUES_ONLY.fullmatch(line):
        return False  # no value token (`1.00k`, `inf`, `nan`), or no label before them (iostat, free ...)
    match = _ONE_ROW.fullmatch(line)
    if match:  # the usual line: one row, label then values (the loop below reads the same)
        return add_row(" ".join(match.group(1).split()), match.group(2).split(), state, core, sizes_by_count)
    tokens = line.split()
    found = False
    label: list[str] = []
    values: list[str] = []
    for token in tokens + [None]:
        if token is not None and _VALUE_TOKEN.fullmatch(token):
            if label:
                values.append(token)
            continue
        if label and values:
            found |= add_row(" ".join(label), values, state, core, sizes_by_count)
            label = []
            values = []
        if token is not None:
            if values:
                values = []
            label.append(token)
    return found


def add_row(label: str, values: list[str], state: State, core: str | None = None,
             sizes_by_count: bool = False, final: bool = False) -> bool:
    """A throughput row; one short of figures waits for the rest on the next line unless `final`."""
    if not _LABEL.fullmatch(label) or label.lower() == label.upper():  # needs a letter
        return False
    sizes = state.sizes
    if sizes is None:
        # The -multi summary has no header; its sizes come from the children (`Got: +H`).
        if state.child_sizes:
            sizes = next(iter(state.child_sizes.values()))
        elif state.seen_block or state.forked or sizes_by_count:  # a headerless -multi summary
            sizes = {5: SIZES_1_0, 6: SIZES_1_1}.get(len(values))
            if sizes is None and len(values) < 5 and not final:
                sizes = SIZES_1_1  # (only to wait for the rest of a wrapped row)
        if sizes is None:
            if final or len(values) > 6:
                _headerless(label + " " + " ".join(values), state)
            return False
    if len(values) < len(sizes) and state.elided and values:  # `… 130000.00k — snip —`: its first figures, no more
        state.skipped.append(f"row {label!r}: its last {len(sizes) - len(values)} figure(s) were elided in the log "
                             "(a '— snip —', '[...]' or '…' after them): not read")
        sizes = sizes[:len(values)]
    if len(values) != len(sizes):
        if len(values) < len(sizes) and not final:  # its last figures may come on the next line (wrapped)
            state.wrapped = ("row", label)
            state.wrapped_row = (label, values, core, sizes_by_count)
            return True
        if not any(v[-1] in "kK" for v in values):  # not a throughput row (`2208 MHz  1.00`, iostat ...)
            return False
        state.skipped.append(f"row {label!r} has {len(values)} values for {len(sizes)} block sizes: skipped")
        return True
    algorithm = canonical_algorithm(label)
    unsupported = all_zero(values) if values[0][0] == "0" else None
    rows = state.rows
    for size, token in zip(sizes, values):
        if unsupported:
            value = error = None
        else:  # inline fast path of _bytes_per_second: `12630.54k` -> 12630540.0
            try:
                value, error = (float(token[:-1] + "e3") if token[-1] in "kK" else float(token)), None
            except ValueError:
                value = None
            if value is None or not 0.0 < value < INFINITY:
                value, error = _bytes_per_second(token)
        rows.append(Row(label=label, algorithm=algorithm, block_size=size, value=value, error=error,
                        unsupported=unsupported, core=core))
    return True


def _headerless(line: str, state: State) -> None:
    """A throughput row with no header before it that tells its block sizes: not read, and said so (once a row)."""
    note = (f"row {line.split()[0]!r} ({len(line.split()) - 1} figure(s)) has no table header before it that tells "
            "its block sizes: not read")
    if note not in state.skipped:
        state.skipped.append(note)


def _bytes_per_second(token: str) -> tuple[float | None, str | None]:
    """`12630.54k` -> 12630540.0 (the decimal ×1000, rounded once), `9999.50` -> 9999.5; a figure
    that is not a rate (0, negative, inf, nan) -> None and why."""
    kilo = token.endswith(("k", "K"))
    return figure(token[:-1] + "e3" if kilo else token, None, printed=token)


def read_pk_rows(line: str, state: State) -> bool:
    """Public-key table rows; each regex runs only when its keyword is in the line (speed)."""
    found = False
    lowered = line.lower()
    if "rsa" in lowered or "dsa" in lowered:
        for match in _RSA4.finditer(line):
            bits = int(match.group(1))
            for op, value in zip(("sign", "verify", "encrypt", "decrypt"), match.groups()[1:]):
                add_pk(state, f"rsa{bits}", op, figure(value, op), ("rsa", bits, op), None)
            found = True
        if not found:
            for match in _RSA_DSA.finditer(line):
                family, bits = match.group(1), int(match.group(2))
                for op, value in zip(("sign", "verify"), match.groups()[2:]):
                    add_pk(state, f"{family}{bits}", op, figure(value, op), (family, bits, op), None)
                found = True
    if "(" in line:
        if "ecdsa" in lowered or "eddsa" in lowered or "sm2" in lowered:
            for match in _CURVE_SIGN.finditer(line):
                bits, family, curve = int(match.group(1)), match.group(2).lower(), match.group(3)
                name = curve_algorithm(family, curve)
                for op, value in zip(("sign", "verify"), match.groups()[3:]):
                    add_pk(state, name, op, figure(value, op), (family, bits, op), None)
                found = True
        if "ecdh" in lowered:
            for match in _CURVE_OP.finditer(line):
                bits, curve = int(match.group(1)), match.group(2)
                add_pk(state, curve_algorithm("ecdh", curve), "op", figure(match.group(3), "op"),
                        ("ecdh", bits, "op"), None)
                found = True
    if "ffdh" in lowered:
        for match in _FFDH.finditer(line):
            bits = int(match.group(1))
            add_pk(state, f"ffdh{bits}", "op", figure(match.group(2), "op"), ("ffdh", bits, "op"), None)
            found = True
    if line.startswith("mlkem"):  # LibreSSL: `mlkem 768 0.000083s 12100.0 …` (keygen, encap, decap)
        for match in _LIBRESSL_MLKEM_ROW.finditer(line):
            name = f"ml-kem-{match.group(1)}"
            for op, value in zip(("keygen", "encaps", "decaps"), match.groups()[1:]):
                add_pk(state, name, op, figure(value, op), (name, None, op), None)
            found = True
    if not found and state.pk_table:
        for match in _KEM_SIG_ROW.finditer(line):
            name = kem_sig_name(match.group(1), state.pk_table)
            for op, value in zip(KEM_SIG_OPS[state.pk_table], match.groups()[1:]):
                add_pk(state, name, op, figure(value, op), (name, None, op), None)
            found = True
    return found
