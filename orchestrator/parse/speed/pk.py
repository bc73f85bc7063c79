"""Public-key figures, whichever line holds them: how each test is named and keyed.

A public-key figure is keyed (family, bits, operation) - (name, None, operation) for KEM / signature
tests - so that a table row, an `-mr` line and a progress line of the same test meet (resolve.py).
"""
from __future__ import annotations

import functools
import re
from typing import Any

from orchestrator.parse.names import canonical_algorithm
from orchestrator.parse.speed.state import Row, State

# Elliptic curves in the order `openssl speed` numbers them (the `+F4`/`+F5` index) and runs them:
# (bits, curve); index 16+ differ: 1.0.x stops at 15, 1.1.0 has X25519 at 16, 1.1.1+ brainpool first.
EC_CURVES = [
    (160, "secp160r1"), (192, "nistp192"), (224, "nistp224"), (256, "nistp256"), (384, "nistp384"),
    (521, "nistp521"), (163, "nistk163"), (233, "nistk233"), (283, "nistk283"), (409, "nistk409"),
    (571, "nistk571"), (163, "nistb163"), (233, "nistb233"), (283, "nistb283"), (409, "nistb409"),
    (571, "nistb571"), (256, "brainpoolP256r1"), (256, "brainpoolP256t1"), (384, "brainpoolP384r1"),
    (384, "brainpoolP384t1"), (512, "brainpoolP512r1"), (512, "brainpoolP512t1"), (253, "X25519"),
    (448, "X448"),
]
LIBRESSL_EC_CURVES = [(224, "nistp224"), (256, "nistp256"), (384, "nistp384"), (521, "nistp521")]

KEM_SIG_OPS = {"kem": ("keygen", "encaps", "decaps"), "sig": ("keygen", "sign", "verify")}
LIBRESSL_MLKEM_OPS = {"keygen": "keygen", "encap": "encaps", "decap": "decaps"}  # LibreSSL's words -> ours

# Names the classic tables also use: 3.2+ runs `rsa2048` again through the generic KEM and
# signature APIs, so those rows are told apart as `rsa2048-kem` / `rsa2048-sig`.
CLASSIC_PK = re.compile(r"(?:rsa|dsa|ffdh)\d+|ecdsa\S+|ecdh\S+|x25519|x448|ed25519|ed448|sm2")


def curve_by_index(index: int, bits: int, table: list[tuple[int, str]]) -> str:
    for curves in (table, LIBRESSL_EC_CURVES):  # an index that does not fit OpenSSL's list is LibreSSL's
        if 0 <= index < len(curves) and curves[index][0] == bits:
            return curves[index][1]
    matches = [curve for curve_bits, curve in table if curve_bits == bits]
    return matches[0] if len(matches) == 1 else f"{bits}bits"


def kem_sig_name(name: str, table: str) -> str:
    canonical = canonical_algorithm(name)
    return f"{canonical}-{table}" if CLASSIC_PK.fullmatch(canonical) else canonical


def add_pk(state: State, algorithm: str, op: str, read: tuple[float | None, str | None], key: tuple[Any, ...],
           child: int | None) -> None:
    """One public-key figure: `read` is (rate, None) or (None, why there is no rate), from numbers.figure."""
    value, error = read
    state.rows.append(Row(label=algorithm, algorithm=algorithm, value=value, operation=op, child=child, pk_key=key,
                          error=error))


@functools.lru_cache(maxsize=64)  # a handful of version strings, asked once per log
def version_tuple(version: str | None) -> tuple[Any, ...] | None:
    if not version or version.startswith("LibreSSL"):
        return None
    numbers = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    return tuple(int(n) for n in numbers.groups()) if numbers else None


def old_pk_format(state: State) -> bool | None:
    """True for ≤1.1.0 (`+F2..+F5` in seconds/op), False for 1.1.1+, None when unknown.

    apps/speed.c: up to 1.1.0 the results are `d / count` (seconds/op), +F5 prints `seconds:ops/s`,
    and `-multi` combines the children as `1 / (1/a + 1/b)`; from 1.1.1 they are `count / d` (ops/s),
    +F5 prints `ops/s:seconds` and `-multi` sums the children, in `-mr` and human output alike.
    `-mr` output has no version block (3.x, 1.1.x): then the lines themselves decide.
    """
    if state.build.version and state.build.version.startswith("LibreSSL"):
        return True  # LibreSSL's speed.c kept 1.0.x's seconds/op
    version = version_tuple(state.build.version)
    if version is not None:
        return version < (1, 1, 1)
    if state.ops_format:
        return False
    return state.mr_old_format
