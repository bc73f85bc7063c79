"""The one table of how `openssl speed` measures, and from which version on it measures differently.

A figure is a rate `openssl speed` timed; what it timed is decided by the `openssl` *program* (apps/speed.c), not
by libcrypto. When the program changes its loop, a figure moves without the library getting slower or faster: the
ruler changed (openssl/openssl#27513, #28063, openwrt/openwrt#18929, all closed "not a bug"). So every cell carries
the **method** it was measured with (`method_id`), derived from the program's version (the `openssl version` line;
the library's version when the program's is not recorded, e.g. an imported `openssl speed` log, whose `version:`
line is libcrypto's), and diff / trend / CI verdicts call a step between two methods "method changed", never a
regression or an improvement (`compare`).

`CHANGES` is the data, one row per change of what is timed, per kind of cell, with the first release of each
branch that carries it and its sources; `KINDS` says which cells are of which kind. Pure data and lookups, like
platforms.py; docs/methods.md explains each row.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Mapping

# Kinds of cells: what `openssl speed` runs for them.
AEAD = "aead"  # block-cipher AEAD modes through -evp: GCM, CCM, OCB, SIV, GCM-SIV (apps/speed.c tests the mode)
CIPHER = "cipher"  # every other cipher (CBC, CTR, ChaCha20-Poly1305 too: speed.c does not treat it as an AE mode)
DIGEST = "digest"  # digests and MACs (sha256, md5, hmac ...)
PK = "pk"  # RSA, DSA, ECDSA, ECDH, EdDSA, X25519 rows
KEM_SIG = "kem-sig"  # 3.2+'s generic KEM and signature tables (rsa2048-kem, ml-kem-768, ml-dsa-65 ...)

_AEAD_MODE = re.compile(r"-(gcm|ccm|ocb|siv|gcm-siv)$")
_DIGESTS = re.compile(r"^(md[245]|mdc2|sha\d*|sha3-\d+|sha512-\d+|shake\d+|blake2[bs]\d*|rmd160|ripemd160|whirlpool"
                      r"|sm3|hmac.*|cmac.*|ghash|kmac\d+|poly1305)$")
_KEM_SIG = re.compile(r"(-kem|-sig)$|^(ml-kem|ml-dsa|slh-dsa|x25519mlkem|secp\d+r1mlkem|x448mlkem|mlkem|mldsa)")


def kind_of(algorithm: str, operation: str | None) -> str:
    """The kind of a cell (AEAD, CIPHER, DIGEST, PK, KEM_SIG) from its canonical algorithm name."""
    if operation is not None:
        return KEM_SIG if _KEM_SIG.search(algorithm) else PK
    if _AEAD_MODE.search(algorithm):
        return AEAD
    if _DIGESTS.match(algorithm):
        return DIGEST
    return CIPHER


@dataclass(frozen=True)
class Change:
    """One change of what `openssl speed` times for one kind of cell (and api), and where it happened."""

    id: str
    kinds: tuple[str, ...]
    apis: tuple[str | None, ...]  # the cells' api it concerns ("evp", "legacy"; None: a log that cannot tell)
    first: Mapping[str, str]  # release branch ("3.0") -> first release carrying it; a newer branch carries it
    before: str  # what it timed before, as a phrase after "openssl speed times ..."
    after: str  # what it times from `first` on
    libressl: bool  # LibreSSL's apps/openssl/speed.c carries it
    comparable: str  # where both sides can still be compared the same way, or what comes closest
    sources: tuple[str, ...]
    changes_figures: bool = True  # False: recorded for completeness, what is timed stays the same
    exempt: tuple[str, ...] = ()  # algorithms of these kinds it does not concern


# Releases of 11 Feb 2025 (NEWS.md "Major changes between OpenSSL 3.0.15 and OpenSSL 3.0.16 [11 Feb 2025]", and
# each branch's CHANGES.md); 3.4.0 (22 Oct 2024) came out before the change was merged (Nov 2024).
_AEAD_FIRST = {"3.0": "3.0.16", "3.1": "3.1.8", "3.2": "3.2.4", "3.3": "3.3.3", "3.4": "3.4.1", "3.5": "3.5.0"}

CHANGES: tuple[Change, ...] = (
    Change(
        "aead-per-message", (AEAD,), ("evp", None), _AEAD_FIRST,
        before="AEAD modes (GCM, OCB, SIV) as one stream: one EVP_EncryptUpdate per block on a context set up "
               "once, no tag per block",
        after="AEAD modes (GCM, CCM, OCB, SIV, GCM-SIV) per message: IV length, key and IV set, the block "
              "encrypted, finalised and its tag computed for every block",
        libressl=False,
        comparable="no option of a newer openssl reproduces the stream loop; the per-message cost shrinks with the "
                   "block size (openssl/openssl#27513: -87.7 % at 16 B, about -10 % at 16384 B on one x86 box), so "
                   "even 16384-byte figures are not the same ruler; `openssl speed -evp CIPHER -aead` (1.1.1+) times "
                   "a TLS-like message (13-byte AAD, payload, tag) on both sides and comes closest, though the newer "
                   "loop also sets the key per message: compare -aead figures of both firmwares with that in mind",
        sources=("openssl/openssl PR #25823 (master, commit 607a46d0), backports #25887 (3.3), #25896 (3.2), "
                 "#25907 (3.1 and 3.0; 3.0.x commit 336b86f0 'apps/speed.c: Fix the benchmarking for AEAD ciphers')",
                 "openssl/openssl#28063 (git log openssl-3.0.15..openssl-3.0.16 -- apps/speed.c)",
                 "openssl/openssl#27513 (3.3.1 -> 3.4.1, closed: 'the measurement was changed not the "
                 "implementation')", "openwrt/openwrt#18929 (openssl-util 3.0.15 vs 3.0.16 over libopenssl 3.0.16)",
                 "NEWS.md: 3.0.16, 3.1.8, 3.2.4, 3.3.3, 3.4.1 released 11 Feb 2025"),
    ),
    Change(
        "evp-iv-at-init", (CIPHER,), ("evp",), _AEAD_FIRST,
        before="other ciphers through -evp on a context initialised without an IV",
        after="other ciphers through -evp on a context initialised with an IV; the timed loop is the same",
        libressl=False,
        comparable="the timed loop (EVP_EncryptUpdate per block) did not change: comparable",
        sources=("openssl/openssl commit 4836c042 'speed: Pass IV to EVP_CipherInit_ex for -evp runs with "
                 "non-AEAD ciphers' (3.0.16; listed in openssl/openssl#28063)",),
        changes_figures=False,
    ),
    Change(
        "legacy-via-evp", (CIPHER, DIGEST), ("legacy",), {"3.0": "3.0.0"},
        before="legacy cipher and digest names (no -evp) through the low-level functions (AES_cbc_encrypt, "
               "SHA256 ...), which on 1.x skip AES-NI/ARMv8 code paths EVP uses",
        after="legacy names through EVP (EVP_Cipher / EVP_Digest), the same implementations -evp uses",
        libressl=False,
        comparable="-evp figures compare across 1.x and 3.x; legacy-name figures do not",
        sources=("openssl/openssl PR #14228 'speed: Always use the EVP APIs for speed measurements' (3.0.0)",
                 "openssl/openssl#17813 (1.1.1 `speed aes` without -evp does not use AES-NI)",
                 "LibreSSL apps/openssl/speed.c: AES_cbc_encrypt, Camellia_cbc_encrypt ... for legacy names"),
    ),
    Change(
        "pk-via-evp-pkey", (PK,), ("evp", "legacy", None), {"3.0": "3.0.0"},
        before="RSA, DSA, ECDSA and ECDH through the low-level calls (RSA_sign, ECDSA_sign, ECDH_compute_key)",
        after="RSA, DSA, ECDSA and ECDH through EVP_PKEY (sign, verify, derive contexts set up once)",
        libressl=False,
        comparable="the big-number work dominates: figures stay close, but the call path differs; compare with care",
        sources=("openssl/openssl PR #14228 (3.0.0), openssl/openssl#11052",),
        exempt=("ed25519", "ed448", "x25519", "x448"),  # EVP_PKEY (EVP_DigestSign, derive) since they came, 1.1.1
    ),
)

# No change found in apps/speed.c's history for these; kept as rows so the table says so instead of staying silent.
UNCHANGED = (
    ("-multi", "N forked children each run the loop; the parent adds their `+F` figures: the same from 1.0.x to 3.5 "
               "and in LibreSSL (apps/speed.c do_multi)"),
    ("timer", "user CPU time of the process by default, wall clock with -elapsed: in every version; a cell timed "
              "one way is never compared with one timed the other way (sslbench runs always use -elapsed)"),
    ("seconds", "3 s per symmetric cell and 10 s per public-key operation by default in every version (-seconds "
                "from 1.1.1); figures are rates, so a different duration is the same ruler"),
    (KEM_SIG, "the generic KEM/signature tables exist from 3.2.0 on; their rows are cells of their own "
              "(rsa2048-kem, ml-kem-768), never compared with the RSA/EC rows"),
)


@functools.cache
def version_tuple(version: str) -> tuple[int, int, int, str] | None:
    """(3, 0, 16, '') of "3.0.16", (1, 1, 1, 'w') of "1.1.1w"; None for LibreSSL or an unreadable version."""
    match = re.match(r"(?:OpenSSL\s+)?(\d+)\.(\d+)\.(\d+)([a-z]*)", version.strip())
    if match is None or version.strip().lower().startswith("libressl"):
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3)), match.group(4)


def carries(change: Change, version: str | None) -> bool | None:
    """Whether `openssl speed` of this version measures the changed way (None: the version is unknown)."""
    if not version:
        return None
    if version.strip().lower().startswith("libressl"):
        return change.libressl
    parsed = version_tuple(version)
    if parsed is None:
        return None
    major, minor = parsed[0], parsed[1]
    firsts = sorted((version_tuple(v) or (0, 0, 0, ""), v) for v in change.first.values())
    branch = change.first.get(f"{major}.{minor}")
    if branch is not None:
        return parsed >= (version_tuple(branch) or parsed)
    oldest, newest = firsts[0][0], firsts[-1][0]
    if (major, minor) < oldest[:2]:
        return False
    return (major, minor) > newest[:2] or None  # a branch between known ones that the table misses: unknown


@functools.cache
def method_id(algorithm: str, api: str | None, operation: str | None, version: str | None,
              timer: str | None = None) -> str:
    """The method a cell was measured with: its kind, the changes its `openssl speed` carries, and the timer.

    e.g. "aead+aead-per-message@elapsed", "cipher@cpu", "digest+legacy-via-evp". A change not known for this
    version ("?") never makes two cells differ by itself.
    """
    kind = kind_of(algorithm, operation)
    parts = [kind]
    for change in CHANGES:
        if (not change.changes_figures or kind not in change.kinds or api not in change.apis
                or algorithm in change.exempt):
            continue
        carried = carries(change, version)
        if carried is None:
            parts.append(f"?{change.id}")
        elif carried:
            parts.append(change.id)
    return "+".join(parts) + (f"@{timer}" if timer in ("elapsed", "cpu") else "")


def _split(method: str) -> tuple[str, frozenset[str], frozenset[str], str | None]:
    body, _, timer = method.partition("@")
    kind, *changes = body.split("+")
    known = frozenset(c for c in changes if not c.startswith("?"))
    unknown = frozenset(c[1:] for c in changes if c.startswith("?"))
    return kind, known, unknown, timer or None


@dataclass(frozen=True)
class MethodChange:
    """Two sides measured differently: the cause (a Change, or the timer) and the sentence that says so."""

    cause: str  # a Change id, or "timer"
    sentence: str
    comparable: str  # what can still be compared, and how


_BY_ID = {change.id: change for change in CHANGES}


def compare(old: Mapping[str, str | None], new: Mapping[str, str | None]) -> MethodChange | None:
    """Whether two sides of a cell were measured differently. Each side maps its method ids to the `openssl`
    version that measured with it (Cell.methods); None when every difference is unknown rather than known."""
    if not old or not new or set(old) == set(new):
        return None
    for a, version_a in sorted(old.items()):
        for b, version_b in sorted(new.items()):
            kind_a, known_a, unknown_a, timer_a = _split(a)
            kind_b, known_b, unknown_b, timer_b = _split(b)
            differ = (known_a ^ known_b) - unknown_a - unknown_b
            for change_id in sorted(differ):
                change = _BY_ID[change_id]
                newer, older = (version_b, version_a) if change_id in known_b else (version_a, version_b)
                return MethodChange(change_id, boundary_sentence(change, newer, older), change.comparable)
            if timer_a and timer_b and timer_a != timer_b:
                return MethodChange("timer", f"one side timed by {_timer(timer_a)}, the other by {_timer(timer_b)}; "
                                             "not comparable", "measure both sides with -elapsed (sslbench run does)")
    return None


def _timer(timer: str) -> str:
    return "wall clock (-elapsed)" if timer == "elapsed" else "CPU time (openssl's default)"


def boundary_sentence(change: Change, newer: str | None, older: str | None) -> str:
    """"openssl speed times AEAD modes (…) per message … from 3.0.16 on; not comparable with 3.0.15"."""
    first = _first_for(change, newer)
    since = f" from {first} on" if first else ""
    older_said = f"; not comparable with {_said(older)}" if older else "; not comparable with the older side"
    newer_said = f" (here {_said(newer)})" if newer and first and _said(newer) != first else ""
    return f"openssl speed times {change.after}{since}{newer_said}{older_said}"


def _said(version: str) -> str:
    return version if version.lower().startswith("libressl") else version.removeprefix("OpenSSL ").strip()


def _first_for(change: Change, version: str | None) -> str | None:
    parsed = version_tuple(version) if version else None
    if parsed is None:
        return None
    return change.first.get(f"{parsed[0]}.{parsed[1]}") or min(
        change.first.values(), key=lambda v: version_tuple(v) or (0, 0, 0, ""))


def speed_version(program: str | None, library: str | None, measured: str | None) -> tuple[str | None, bool]:
    """The version whose apps/speed.c measured: the program's; else the library's, or the one the log printed
    (speed prints libcrypto's version), with True: assumed, the program's own was not recorded."""
    if program:
        return program, False
    return (library or measured), bool(library or measured)
