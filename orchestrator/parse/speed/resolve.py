"""The end of a log: what the lines read mean, as records (Measurement) and notes.

In order (finish): the unit of `-mr` public-key figures (seconds/op or ops/s, by version or by the lines
themselves), the names of KEM / signature `-mr` lines, the fork count, the `-multi` figure of each cell
(openssl's own summary; the children's sum, flagged, where it has none), the API of each row, the
progress lines' counts attached in run order, and figures of the progress lines no row took (a cut-off
log, flagged partial).
"""
from __future__ import annotations

import math
from typing import Any

from orchestrator.model import ERROR, OK, PARTIAL, PARTIAL_CHILDREN, UNSUPPORTED, Measurement, ParsedLog
from orchestrator.parse.names import canonical_algorithm, curve_algorithm
from orchestrator.parse.speed.numbers import figure, figure_from_seconds, number
from orchestrator.parse.speed.pk import EC_CURVES, add_pk, kem_sig_name, old_pk_format, version_tuple
from orchestrator.parse.speed.state import ORPHAN, Row, State

# 1.x digests whose `-evp` label equals the built-in test's label: the table cannot tell them apart.
# (3.x: `hmac(sha256)` is both the built-in test and what `-hmac sha256` prints.)
_AMBIGUOUS = {"md2", "md4", "md5", "mdc2", "sha1", "sha224", "sha256", "sha384", "sha512", "rmd160",
              "ripemd160", "whirlpool", "rc4", "sm3", "sha3-256", "sha3-512", "blake2b512", "blake2s256",
              "hmac(sha256)"}
# Built-in tests of 1.x that never go through EVP.
_LEGACY_ONLY = {"ghash", "rand", "hmac(md5)"}
# Every built-in (non `-evp`) throughput test of 1.x and 3.x, canonical: any other name came from `-evp`.
_BUILTIN = _AMBIGUOUS | _LEGACY_ONLY | {
    "des-cbc", "des-ede3", "idea-cbc", "seed-cbc", "rc2-cbc", "rc5-32/12-cbc", "bf-cbc", "cast-cbc",
    "aes-128-cbc", "aes-192-cbc", "aes-256-cbc", "aes-128-ige", "aes-192-ige", "aes-256-ige",
    "camellia-128-cbc", "camellia-192-cbc", "camellia-256-cbc", "evp", "kmac128", "kmac256",
}


def finish(state: State, *, threads: int | None, api: str | None, algorithm: str | None) -> ParsedLog:
    hints = state.hints or {}
    _resolve_pk_units(state)
    _name_kem_sig_rows(state)
    forks = _fork_count(state)
    if threads is None:
        threads = max(forks, hints.get("threads") or 0) or 1
    multi = forks > 0 or threads > 1
    _resolve_evp_rows(state, algorithm or hints.get("algorithm"))
    rows = _choose_rows(state, threads)
    version = state.build.version
    major = version_tuple(version) or ((3, 2, 0) if state.ops_format else None)  # 3.2+'s progress lines
    api_for = _api_argument_for(state, rows, algorithm if api else None)
    measurements: list[Measurement] = []
    progress = None if multi else state.progress  # counts are not attached to -multi records
    runs_read = {key: len(runs) for key, runs in progress.items()} if progress else {}
    api_cache: dict[tuple[str, str], str | None] = {}  # one decision per label, not per block size
    append = measurements.append
    for row in rows:
        algorithm, operation = row.algorithm, row.operation
        if operation is not None:  # public key: one way through openssl (`api` describes a throughput cell)
            row_api = None
        elif api and (api_for is None or algorithm == api_for):
            row_api = api
        else:
            key = (row.label, algorithm)
            if key in api_cache:  # (None is a decision too)
                row_api = api_cache[key]
            else:
                row_api = api_cache[key] = _api_for(row.label, algorithm, major, hints)
        reason: str | None
        if row.unsupported:
            status, reason = _zero_row_status(row, state, multi)
        elif row.error:
            status, reason = ERROR, row.error
        else:
            status, reason = OK, row.flag_reason
        count = seconds = None
        if progress:  # a progress line's count and CPU seconds, in run order
            runs = progress.get(("sym", algorithm, row.block_size) if operation is None else (
                ("pk",) + row.pk_key if row.pk_key is not None else ()))
            if runs:
                count, seconds = runs.pop(0)
        if operation is None:
            block_size, bytes_per_second, ops_per_second = row.block_size, row.value, None
        else:
            block_size, bytes_per_second, ops_per_second = None, None, row.value
        # Positional, in Measurement's field order: the hot loop of a parse, one call per figure
        # (test_speed.test_measurement_field_order pins that order).
        append(Measurement(algorithm, block_size, bytes_per_second, operation, ops_per_second, threads, row_api,
                           version, count, seconds, status, reason, 0, [row.flag] if row.flag else [], row.core))
    if progress:
        partial = _figures_from_progress(progress, runs_read, state, threads, api, api_for, major, hints)
        if partial:
            measurements += partial
            state.skipped.append(f"{len(partial)} figure(s) from progress lines only (no figure of openssl's table "
                                 f"read for them: the log ends before it, or a row could not be placed): "
                                 f"flagged {PARTIAL}")
    return _parsed_log(state, measurements)


def _api_argument_for(state: State, rows: list[Row], algorithm: str | None) -> str | None:
    """The algorithm the `api` argument describes (that of the cell); other rows in the same log keep the rule.
    None: it covers every row, as when the log names the algorithm differently (not a log cut before it)."""
    api_for = canonical_algorithm(algorithm) if algorithm else None
    if api_for and not any(row.algorithm == api_for for row in rows) and not any(
            key[0] == "sym" and key[1] == api_for for key in state.progress):
        return None
    return api_for


def _parsed_log(state: State, measurements: list[Measurement]) -> ParsedLog:
    """The log's records with its notes (what was skipped or ignored) and how openssl timed it."""
    skipped = list(state.skipped)
    if state.ignored:
        skipped.append(f"{len(state.ignored)} line(s) that are not openssl speed results ignored")
    if not measurements:
        skipped.append("no openssl speed results found")
    timing = "elapsed" if state.elapsed else "cpu" if state.progress else None  # progress lines: openssl's default
    return ParsedLog(measurements=measurements, openssl=state.build, skipped=skipped, timing=timing)


def _figures_from_progress(progress: dict[tuple[Any, ...], list[tuple[int, float]]], runs_read: dict[tuple[Any, ...], int],
                           state: State, threads: int, api: str | None, api_for: str | None,
                           major: tuple[Any, ...] | None, hints: dict[str, Any]) -> list[Measurement]:
    """The progress lines no table row took (the run was cut off before openssl printed its table):
    each is a figure as openssl computes it, count × block size / seconds (count / seconds for a
    public-key operation), flagged partial."""
    out = []
    for key, runs in progress.items():
        for n, (count, seconds) in enumerate(runs, start=runs_read[key] - len(runs)):
            if key[0] == "sym":
                algorithm, size, operation = key[1], key[2], None
                label = state.progress_labels.get(algorithm, algorithm)
                row_api = (api if api and (api_for is None or algorithm == api_for)  # (as finish: table rows)
                           else _api_for(label, algorithm, major, hints))
            else:
                algorithm, size, operation = _progress_algorithm(key[1:], n), 1, key[3]
                row_api = None
            value, error = _progress_figure(count * size, seconds, operation)
            m = Measurement(algorithm=algorithm, block_size=None if operation else size,
                            bytes_per_second=None if operation else value, operation=operation,
                            ops_per_second=value if operation else None, threads=threads, api=row_api,
                            openssl_version=state.build.version, count=count, seconds=seconds)
            if error:
                m.status, m.reason = ERROR, error
            else:
                m.flags, m.reason = [PARTIAL], ("no figure of openssl's table read for it (the log ends before the "
                                                "table, or its row could not be placed): the figure is its "
                                                "progress line's count / CPU seconds" + ("" if operation else " × block size"))
            out.append(m)
    return out


def _progress_figure(amount: int, seconds: float, operation: str | None) -> tuple[float | None, str | None]:
    if amount < 0:
        return None, f"{operation or 'the test'} failed (openssl counted {amount})"
    if seconds <= 0:
        return None, f"openssl counted {amount} in {seconds:.2f}s (the measured time was 0)"
    if amount == 0:
        return None, "not measured (openssl counted 0)"
    return amount / seconds, None


def _progress_algorithm(key: tuple[Any, ...], nth: int) -> str:
    """The canonical name of a public-key progress key (family, bits, op); `nth` is its run number:
    progress lines give an elliptic curve's bits only, and openssl runs its curves in list order."""
    family, bits, _op = key
    if bits is None:  # KEM / signature / ML-KEM: named already
        return str(family)
    if family in ("rsa", "dsa", "ffdh"):
        return f"{family}{bits}"
    if family == "eddsa":
        return {253: "ed25519", 456: "ed448"}.get(bits, f"eddsa{bits}")
    if family == "sm2":
        return "sm2"
    curves = [curve for curve_bits, curve in EC_CURVES if curve_bits == bits]
    return curve_algorithm(family, curves[min(nth, len(curves) - 1)]) if curves else f"{family}{bits}bits"


def _zero_row_status(row: Row, state: State, multi: bool) -> tuple[str, str]:
    """A row of 0.00: the build left the test out, unless openssl shows it ran (then it failed)."""
    if row.algorithm in state.failed_tests:
        return UNSUPPORTED, f"openssl could not run it ('{row.label} error!'; it printed 0.00 for every block size)"
    if ("sym", row.algorithm, row.block_size) in state.progress:
        return ERROR, "not measured (openssl ran the test but printed 0.00)"
    if multi and state.children:
        return ERROR, "not measured (openssl printed 0.00: no -multi child reported a figure)"
    return UNSUPPORTED, row.unsupported or ""


def _name_kem_sig_rows(state: State) -> None:
    """`+F9:INDEX:…` / `+F10:INDEX:…`: INDEX is the place in the build's whole KEM/signature list,
    the tests run in that order, so the n-th smallest INDEX is the n-th name the progress lines
    (+R15..+R20) announced. Children's lines that lost their frame do not count."""
    for kind, table, names in (("+F9:", "kem", state.kem_names), ("+F10:", "sig", state.sig_names)):
        rows = [row for row in state.rows if row.label.startswith(kind) and row.child != ORPHAN]
        if not rows:
            continue
        indexes = sorted({row.pk_key[1] for row in rows if row.pk_key is not None})
        named = dict(zip(indexes, names))
        if len(indexes) > len(names):
            state.skipped.append(f"{len(indexes) - len(names)} {kind[:-1]} result(s) without a name "
                                 f"(no progress line announced it): skipped")
        for row in rows:
            name = named.get(row.pk_key[1]) if row.pk_key is not None else None
            if name is None:
                row.child = ORPHAN  # (not counted in the orphans' note: said above)
                continue
            row.algorithm = row.label = kem_sig_name(name, table)
            row.pk_key = (row.algorithm, None, row.operation)
    state.rows = [row for row in state.rows if not row.label.startswith(("+F9:", "+F10:"))]


def _fork_count(state: State) -> int:
    """How many -multi children openssl forked: the highest child number seen, plus one."""
    numbers = state.forked | state.children
    return max(max(numbers) + 1, len(numbers)) if numbers else 0


def _choose_rows(state: State, forks: int) -> list[Row]:
    """The parent's figures: openssl's own -multi summary. Per cell, the children's sum only where
    the summary has no figure (the log was cut, or openssl left it out), flagged partial-children."""
    if not state.children and not state.orphans:  # (children's rows come from `Got:` lines only)
        return state.rows
    if state.orphans:
        state.skipped.append(f"{state.orphans} line(s) of -multi children cut apart by other output "
                             f"(no 'Got: … from N' around them): not read")
    parent: dict[tuple[Any, ...], Row] = {}
    readings: dict[tuple[Any, ...], dict[int, Row]] = {}
    for row in state.rows:
        cell = (row.algorithm, row.block_size, row.operation, row.core)
        if row.child is None:
            parent[cell] = row  # the last one: openssl prints its summary after everything else
        elif row.child != ORPHAN:
            readings.setdefault(cell, {})[row.child] = row
    chosen = []
    missing: dict[tuple[Any, ...], str] = {}  # cell -> why the summary's own figure is not used
    for cell, row in parent.items():
        read = [child.value for child in readings.get(cell, {}).values() if child.value is not None]
        if read and (row.value is None or row.value < 0.5 * sum(read)):
            if row.value is None:  # (a figure below half the children's sum was a child's, not the sum)
                missing[cell] = f"openssl's -multi summary has no figure ({row.error or row.unsupported})"
            continue
        chosen.append(row)
        readings.pop(cell, None)
    summed = [_children_sum(children, forks, missing.get(cell)) for cell, children in readings.items()]
    if summed:
        sizes = sorted(len(children) for children in readings.values())
        counts = f"{sizes[0]}" if sizes[0] == sizes[-1] else f"{sizes[0]} to {sizes[-1]}"
        state.skipped.append(f"openssl's -multi summary is missing for {len(summed)} figure(s): the sum of "
                             f"{counts} of {max(forks, sizes[-1])} children's figures each (flagged {PARTIAL_CHILDREN})")
    return chosen + summed


def _children_sum(children: dict[int, Row], forks: int, why: str | None) -> Row:
    first = next(iter(children.values()))
    values = [row.value for row in children.values() if row.value is not None]
    row = Row(label=first.label, algorithm=first.algorithm, block_size=first.block_size, operation=first.operation,
              pk_key=first.pk_key)
    why = why or "openssl's -multi summary is missing"
    if not values:
        row.error = f"not measured ({why} and no child has a figure)"
        return row
    row.value = sum(values)
    row.flag = PARTIAL_CHILDREN
    row.flag_reason = f"{why}: the sum of {len(values)} of {max(forks, len(children))} children's figures"
    return row


def _resolve_evp_rows(state: State, hinted: str | None) -> None:
    """1.1.1 and 3.0 ≤ 3.0.9 label the -multi summary row `evp`: its name is the one the children give."""
    if not any(row.algorithm == "evp" for row in state.rows):
        return
    parent = {row.algorithm for row in state.rows if row.child is None and row.operation is None}
    from_children = {row.algorithm for row in state.rows if row.child is not None and row.child != ORPHAN
                     and row.operation is None}
    candidates = sorted(from_children - parent - {"evp"})
    name = candidates[0] if len(candidates) == 1 else (canonical_algorithm(hinted) if hinted else None)
    if name is None:
        state.skipped.append("the -multi summary row 'evp' does not say which cipher it measured")
        return
    for row in state.rows:
        if row.algorithm == "evp":
            row.algorithm = name


def _api_for(label: str, algorithm: str, version: tuple[Any, ...] | None, hints: dict[str, Any]) -> str | None:
    if label == "evp" or label != label.lower():  # upper-case letters: 3.x EVP name
        return "evp"
    if " " in label or (algorithm in _LEGACY_ONLY and (version is None or version < (3,))):
        return "legacy"
    if hints:
        if hints.get("api") == "evp" and hints.get("algorithm") == algorithm:
            return "evp"
        if algorithm in hints.get("algorithms", ()):
            return "legacy"
    if algorithm in _AMBIGUOUS:
        return None
    if algorithm not in _BUILTIN:
        return "evp"  # no built-in test has this name (aes-128-gcm, chacha20-poly1305 …)
    if version is None:
        return None
    if version >= (3,):
        return "evp" if algorithm.startswith(("hmac(", "cmac(")) else "legacy"
    return "evp"


def _resolve_pk_units(state: State) -> None:
    """+F2/+F3/+F4 print seconds/op up to 1.1.0 and ops/s from 1.1.1: decide, then add them."""
    if not state.pk_seconds_lines:
        return
    old = old_pk_format(state)
    if old is None:
        old = _multi_summary_format(state.pk_seconds_lines)
    for family, name, bits, values, child in state.pk_seconds_lines:
        line_old = old
        if line_old is None:
            first, second = number(values[0]), number(values[1]) if len(values) > 1 else None
            line_old = _guess_seconds(family, bits, first, second, state)
        read = figure_from_seconds if line_old else figure
        for op, token in zip(("sign", "verify"), values):
            add_pk(state, name, op, read(token, op), (family, bits, op), child)


def _multi_summary_format(lines: list[Any]) -> bool | None:
    """A `-multi` parent line against its children's: their sum is ops/s (1.1.1+), their
    `1 / (1/a + 1/b …)` seconds/op (≤1.1.0). None without a parent line and two children."""
    groups: dict[tuple[Any, ...], tuple[list[Any], list[Any]]] = {}
    for family, _name, bits, values, child in lines:
        parents, children = groups.setdefault((family, bits), ([], []))
        first = number(values[0])
        if first and first > 0:
            (parents if child is None else children).append(first)
    for parents, children in groups.values():
        if len(parents) == 1 and len(children) >= 2:
            total = sum(children)
            harmonic = 1.0 / sum(1.0 / value for value in children)
            return abs(math.log(parents[0] / harmonic)) < abs(math.log(parents[0] / total))
    return None


def _guess_seconds(family: str, bits: int, sign: float | None, verify: float | None, state: State) -> bool:
    """Unknown version: compare with the progress lines, else use what the numbers look like."""
    runs = state.progress.get(("pk", family, bits, "sign"))
    if runs and sign and sign > 0:
        count, secs = runs[0]
        if secs > 0 and count > 0:
            # On a log scale: ops/s is near the rate (N times it for a -multi sum), seconds/op near 1/rate.
            rate = count / secs
            return abs(math.log(sign * rate)) < abs(math.log(sign / rate))
    if family == "rsa" and sign and verify:
        return sign > verify  # signing is the slow one: the larger figure is seconds
    values = [v for v in (sign, verify) if v]
    return bool(values) and max(values) < 1.0
