"""`-mr` lines (`+H`, `+F`, `+F2`…`+F10`, `+DT`/`+R`, `+DTP`/`+Rn`) and the `Got: LINE from N` lines of
`-multi` children.

A -multi log interleaves the children's lines with the parent's: what a line without `Got:` gave is the
parent's until a child's line comes after it (openssl prints its summary after every child's), see
read_mr and _orphan. Which figure is the -multi figure is decided at the end (resolve._choose_rows).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.parse.names import canonical_algorithm, curve_algorithm
from orchestrator.parse.speed.numbers import all_zero, figure, int_or_none, is_number, number
from orchestrator.parse.speed.pk import (
    EC_CURVES,
    KEM_SIG_OPS,
    LIBRESSL_MLKEM_OPS,
    add_pk,
    curve_by_index,
    kem_sig_name,
    old_pk_format,
)
from orchestrator.parse.speed.state import ORPHAN, SIZES_1_0, SIZES_1_1, Row, State


def read_mr(line: str, state: State, child: int | None) -> None:
    if child is None and " from " in line:
        head, _, tail = line.rpartition(" from ")
        if tail.strip().isdigit():  # a child's line that lost its `Got: ` (a busy terminal)
            _orphan(state)
            child = int(tail)
            state.children.add(child)
            line = head.rstrip()
    if child is None and line[1:2] in ("F", "H"):  # the parent's figures, unless a child's line follows (_orphan)
        rows, pk_lines = len(state.rows), len(state.pk_seconds_lines)
        _read_mr_line(line, state, None)
        if len(state.rows) > rows or len(state.pk_seconds_lines) > pk_lines:
            state.bare += state.rows[rows:] + state.pk_seconds_lines[pk_lines:]
        elif line.startswith("+H:"):
            state.bare.append("+H")
    else:
        _read_mr_line(line, state, child)


def _orphan(state: State) -> None:
    """A child's output follows: the `-mr` figures read since the last `Got:` line were not the
    parent's summary (openssl prints it after every child's) but pieces of children's lines."""
    for item in state.bare:
        if isinstance(item, Row):
            item.child = ORPHAN
        elif isinstance(item, list):
            item[4] = ORPHAN
        else:  # "+H": the sizes came from a child's line too
            state.sizes = None
        state.orphans += 1
    state.bare = []


def _read_mr_line(line: str, state: State, child: int | None) -> None:
    parts = line.split(":")
    tag = parts[0]
    if tag == "+DT":  # the progress pair +DT/+R first: most -mr lines are those
        if len(parts) >= 4 and parts[-1].isdigit():
            state.pending_dt = (":".join(parts[1:-2]), int(parts[-1]))
    elif tag == "+R" and len(parts) >= 4:
        _read_mr_result(parts, state)
    elif tag == "+H":
        sizes = tuple(int(p) for p in parts[1:] if p.strip().isdigit())
        if child is None:
            state.sizes = sizes
        else:
            state.child_sizes[child] = sizes
    elif tag == "+F":
        _read_mr_throughput(parts, line, state, child)
    elif tag.startswith("+F") and tag[2:].isdigit():
        _read_mr_pk(tag, parts, line, state, child)
    elif tag == "+DTP":
        state.pending_dtp = _dtp_key(parts[1:])
    elif tag.startswith("+R") and tag[2:].isdigit():
        _read_mr_pk_result(parts, state)
    elif tag in ("+DN", "+DNP"):
        pass
    else:
        state.skipped.append(f"unknown machine-readable line {line[:60]!r}")


def _read_mr_throughput(parts: list[str], line: str, state: State, child: int | None) -> None:
    if len(parts) < 4:
        state.skipped.append(f"short +F line {line[:60]!r}")
        return
    label = parts[2]
    values = parts[3:]
    sizes = sizes_for(len(values), state.child_sizes.get(child) if child is not None else state.sizes, state)
    if sizes is None:
        state.skipped.append(f"+F line for {label!r} has {len(values)} values and no matching +H: skipped")
        return
    algorithm = canonical_algorithm(label)
    if not algorithm or not all(map(is_number, values)):  # openssl prints numbers only: a cut or mixed line
        state.skipped.append(f"unreadable +F line {line[:60]!r}: skipped")
        return
    unsupported = all_zero(values)
    for size, token in zip(sizes, values):
        number, error = (None, None) if unsupported else figure(token, None)  # (float() ignores white space)
        state.rows.append(Row(label=label, algorithm=algorithm, block_size=size, value=number, child=child,
                              error=error, unsupported=unsupported))


def sizes_for(count: int, own: tuple[int, ...] | None, state: State) -> tuple[int, ...] | None:
    """The block sizes of a line of `count` figures: its own `+H`, else a child's (the parent of
    `-mr -multi` prints none), else openssl's defaults for that count."""
    if own is not None and len(own) == count:
        return own
    for sizes in state.child_sizes.values():
        if len(sizes) == count:
            return sizes
    return {5: SIZES_1_0, 6: SIZES_1_1}.get(count)


def _read_mr_pk(tag: str, parts: list[str], line: str, state: State, child: int | None) -> None:
    """`+F2`…`+F10`: one public-key line, read by its tag's reader (_PK_LINES)."""
    read = _PK_LINES.get(tag)
    fields = [p.strip() for p in parts[1:]]
    try:
        if read is not None and read(tag, fields, state, child):
            return
    except ValueError:
        pass
    state.skipped.append(f"unreadable machine-readable line {line[:60]!r}")


def _rsa_dsa(tag: str, fields: list[str], state: State, child: int | None) -> bool:
    """`+F2:index:bits:sign:verify[:encrypt:decrypt]` (RSA), `+F3:…` (DSA): 3.2+'s four figures are ops/s,
    two are seconds/op or ops/s by version (decided at the end)."""
    if len(fields) < 4:
        return False
    family = "rsa" if tag == "+F2" else "dsa"
    bits = int(fields[1])
    values = fields[2:]
    if len(values) == 4:
        for op, value in zip(("sign", "verify", "encrypt", "decrypt"), values):
            add_pk(state, family + str(bits), op, figure(value, op), (family, bits, op), child)
    else:
        state.pk_seconds_lines.append([family, family + str(bits), bits, values[:2], child])
    return True


def _ecdsa(tag: str, fields: list[str], state: State, child: int | None) -> bool:
    """`+F4:index:bits:sign:verify`, seconds/op or ops/s by version (decided at the end)."""
    if len(fields) < 4:
        return False
    index, bits = int(fields[0]), int(fields[1])
    name = curve_algorithm("ecdsa", curve_by_index(index, bits, EC_CURVES))
    state.pk_seconds_lines.append(["ecdsa", name, bits, fields[2:4], child])
    return True


def _ecdh(tag: str, fields: list[str], state: State, child: int | None) -> bool:
    """`+F5:index:bits:…`: up to 1.1.0 seconds/op then ops/s, from 1.1.1 ops/s then seconds/op."""
    if len(fields) < 4:
        return False
    index, bits = int(fields[0]), int(fields[1])
    name = curve_algorithm("ecdh", curve_by_index(index, bits, EC_CURVES))
    first, second = number(fields[2]), number(fields[3])
    if first and second and first > 0 and second > 0 and (first < 1.0) != (second < 1.0):
        state.mr_old_format = first < 1.0  # one figure is seconds/op, the other ops/s
    rate = fields[3] if _rate_is_second(first, second, state) else fields[2]
    add_pk(state, name, "op", figure(rate, "op"), ("ecdh", bits, "op"), child)
    return True


def _eddsa_sm2_or_mlkem(tag: str, fields: list[str], state: State, child: int | None) -> bool:
    """`+F6:index:bits:curve:sign:verify` (EdDSA), `+F7:…` (SM2), both from 1.1.1 on, in ops/s; or
    LibreSSL's ML-KEM `+F6:bits:` with seconds/op and ops/s of keygen, encap, decap."""
    if tag == "+F6" and len(fields) == 7 and is_number(fields[1]):
        state.mr_old_format = True  # (LibreSSL keeps seconds/op everywhere)
        name = f"ml-kem-{int(fields[0])}"
        for op, value in zip(("keygen", "encaps", "decaps"), fields[2::2]):
            add_pk(state, name, op, figure(value, op), (name, None, op), child)
        return True
    if len(fields) < 5:
        return False
    state.mr_old_format = False
    bits, curve = int(fields[1]), fields[2]
    family = "eddsa" if tag == "+F6" else "sm2"
    name = curve_algorithm(family, curve)
    for op, value in zip(("sign", "verify"), fields[3:5]):
        add_pk(state, name, op, figure(value, op), (family, bits, op), child)
    return True


def _ffdh(tag: str, fields: list[str], state: State, child: int | None) -> bool:
    """`+F8:index:bits:ops/s:seconds`."""
    if len(fields) < 3:
        return False
    bits = int(fields[1])
    add_pk(state, f"ffdh{bits}", "op", figure(fields[2], "op"), ("ffdh", bits, "op"), child)
    return True


def _kem_signature(tag: str, fields: list[str], state: State, child: int | None) -> bool:
    """`+F9:index:keygen:encaps:decaps` (KEM), `+F10:index:keygen:sign:verify` (signature), ops/s; named at
    the end (resolve._name_kem_sig_rows): the index counts every KEM/signature the build knows."""
    if len(fields) < 4:
        return False
    table = "kem" if tag == "+F9" else "sig"
    index = int(fields[0])
    for op, value in zip(KEM_SIG_OPS[table], fields[1:4]):
        add_pk(state, f"{tag}:{index}", op, figure(value, op), (table, index, op), child)
    return True


_PK_LINES: dict[str, Callable[[str, list[str], State, int | None], bool]] = {
    "+F2": _rsa_dsa, "+F3": _rsa_dsa, "+F4": _ecdsa, "+F5": _ecdh, "+F6": _eddsa_sm2_or_mlkem,
    "+F7": _eddsa_sm2_or_mlkem, "+F8": _ffdh, "+F9": _kem_signature, "+F10": _kem_signature,
}


def _rate_is_second(first: float | None, second: float | None, state: State) -> bool:
    """Which figure of an ECDH `+F5` line is the rate (the other is seconds/op)."""
    old = old_pk_format(state)
    if old is None:  # unknown version: seconds/op of ECDH is (far) below 1, ops/s above
        if first is None or second is None:
            return first is None
        return second > first
    return old


def _read_mr_result(parts: list[str], state: State) -> None:
    """`+R:count:name:seconds` after `+DT:name:tm:size`."""
    pending = state.pending_dt
    state.pending_dt = None
    if pending is None:
        return
    name = ":".join(parts[2:-1])
    if name != pending[0] and name != "evp":
        return
    count, secs = int_or_none(parts[1]), number(parts[-1].partition(" ")[0])
    if count is not None and secs is not None:
        key = ("sym", canonical_algorithm(pending[0]), pending[1])
        state.progress_labels.setdefault(key[1], pending[0])
        state.progress.setdefault(key, []).append((count, secs))


def _dtp_key(fields: list[str]) -> tuple[Any, ...] | None:
    """`+DTP:bits:str:str2:tm` (or 3.5 `+DTP:name:op:tm`) -> (family, bits, op)."""
    if len(fields) >= 4 and fields[0].isdigit():
        bits, what, family = int(fields[0]), fields[1].strip().lower(), fields[2].strip().lower()
        return _pk_family_op(family, what, bits)
    if len(fields) >= 3:
        op = fields[1].strip().lower()
        op = {"signs": "sign"}.get(op, op)
        name = canonical_algorithm(fields[0])
        return (name, None, op) if name and op in KEM_SIG_OPS["kem"] + KEM_SIG_OPS["sig"] else None
    return None


def _pk_family_op(family: str, what: str, bits: int) -> tuple[Any, ...] | None:
    if family == "rsa":
        return ("rsa", bits, "sign" if what == "private" else "verify")
    if family.startswith("rsa "):
        return ("rsa", bits, family.split()[1])
    if family in ("dsa", "ecdsa", "sm2", "curvesm2"):
        family = "sm2" if family == "curvesm2" else family
        return (family, bits, what.rstrip("s") if what.startswith("sign") else what)
    if family in ("ecdh", "ffdh"):
        return (family, bits, "op")
    if family in ("ed25519", "ed448"):
        return ("eddsa", bits, what.rstrip("s") if what.startswith("sign") else what)
    if family == "mlkem" and what in LIBRESSL_MLKEM_OPS:  # LibreSSL: `+DTP:768:keygen:mlkem:10`
        return (f"ml-kem-{bits}", None, LIBRESSL_MLKEM_OPS[what])
    return None


_KEM_SIG_RESULTS = ("+R15", "+R16", "+R17", "+R18", "+R19", "+R20")


def _read_mr_pk_result(parts: list[str], state: State) -> None:
    """`+Rn:count:bits:seconds` (or `+Rn:count:bits:name:seconds`, `+Rn:count:name:seconds`)."""
    key = state.pending_dtp
    state.pending_dtp = None
    count, secs = int_or_none(parts[1]) if len(parts) > 1 else None, number(parts[-1].partition(" ")[0])
    if key is None or count is None or secs is None:
        return
    if parts[0] in _KEM_SIG_RESULTS and len(parts) >= 4:  # 3.2+ KEM / signature: names in run order
        if not parts[2]:
            return  # no name (`+R18:41::…`, a mangled line): it would name a `+F10` figure ""
        table = "kem" if parts[0] in ("+R15", "+R16", "+R17") else "sig"
        names = state.kem_names if table == "kem" else state.sig_names
        if parts[2] not in names:
            names.append(parts[2])
        key = (kem_sig_name(parts[2], table), None, key[2])
    state.progress.setdefault(("pk",) + key, []).append((count, secs))


def read_forked(line: str, state: State) -> None:
    """`Forked child N`: the parent forked child N (the fork count is the highest N + 1)."""
    child = line[len("Forked child"):].strip()
    if child.isdigit():
        state.forked.add(int(child))


def read_child(line: str, state: State) -> None:
    """`Got: LINE from N`: a -multi child's `-mr` line, passed on by the parent. Without its
    ` from N` the line was cut (children's output interleaves on a busy terminal): not read."""
    _orphan(state)
    body, _, tail = line[len("Got: "):].rpartition(" from ")
    if not tail.strip().isdigit():
        state.wrapped = ("got", line)  # cut, or wrapped: ` from N` may follow (see wrapped.join_wrapped)
        return
    child = int(tail)
    state.children.add(child)
    body = body.strip()
    if body.startswith("+"):
        read_mr(body, state, child=child)
