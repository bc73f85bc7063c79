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
from dataclasses import dataclass, field
from typing import Mapping

# How long `openssl speed` times a cell where the program has no -seconds (apps/speed.c): planning (run/matrix.py)
# and judging a cell's run time (evidence/validity.py) both need them.
FIXED_SECONDS = 3  # speed.c SECONDS: symmetric cells, per block size
FIXED_PUBKEY_SECONDS = 10  # speed.c RSA_SECONDS / ECDSA_SECONDS ...: per public-key operation

# Kinds of cells: what `openssl speed` runs for them.
AEAD = "aead"  # block-cipher AEAD modes through -evp: GCM, CCM, OCB, SIV, GCM-SIV (apps/speed.c tests the mode)
CIPHER = "cipher"  # every other cipher (CBC, CTR; ChaCha20-Poly1305 too: without -aead speed.c times it as a stream)
DIGEST = "digest"  # digests and MACs (sha256, md5, hmac ...)
PK = "pk"  # RSA, DSA, ECDSA, ECDH, EdDSA, X25519 rows
KEM_SIG = "kem-sig"  # 3.2+'s generic KEM and signature tables (rsa2048-kem, ml-kem-768, ml-dsa-65 ...)

_AEAD_MODE = re.compile(r"-(gcm|ccm|ocb|siv|gcm-siv)$")
_DIGESTS = re.compile(r"^(md[245]|mdc2|sha\d*|sha3-\d+|sha512-\d+|shake\d+|blake2[bs]\d*|rmd160|ripemd160|whirlpool"
                      r"|sm3|hmac.*|cmac.*|ghash|kmac\d+|poly1305)$")
# Ciphers with EVP_CIPH_FLAG_AEAD_CIPHER, the ones `-aead` accepts (1.1.1+): the AEAD modes, ChaCha20-Poly1305 and
# the stitched AES-CBC-HMAC-SHA ciphers. Whether a cell of one of them was measured with -aead changes what is timed.
_AEAD_FLAGGED = re.compile(r"-(gcm|ccm|ocb|siv|gcm-siv)$|^chacha20-poly1305$|^aes-\d+-cbc-hmac-sha(1|256)$")
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


def aead_flagged(algorithm: str) -> bool:
    """Whether `openssl speed -aead` accepts this cipher (it has EVP_CIPH_FLAG_AEAD_CIPHER)."""
    return _AEAD_FLAGGED.search(algorithm) is not None


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
    only: str = ""  # a regex: the algorithms of these kinds it concerns ("": all of them)
    operations: tuple[str, ...] = ()  # the public-key operations it concerns (empty: all)
    # Branch -> the first release that *may* carry it, where the exact release is not confirmed: cells measured
    # from there up to `first` are "method may have changed" against either side, never judged.
    uncertain: Mapping[str, str] = field(default_factory=dict)
    aead_flag: bool | None = None  # True: concerns only cells measured with -aead; False: only cells without
    maybe: str = ""  # why a cell may or may not carry it (said when that decides the comparison)
    # False: a side that may carry it against one that does not is taken as equal, as an unknown version is (an
    # unknown -aead use against a known plain cell); against a side that carries it, it still "may have changed"
    # a Change id: only where the side without it carries (or may carry) that one, e.g. the -aead loop only
    # against a cell that may have been run with -aead (at 3.0.16+ the -aead loop of ChaCha20-Poly1305 is the plain
    # one, so against a known plain cell nothing changed)
    maybe_vs_absent: bool | str = True
    # Branch -> how `first` was checked in OpenSSL's repository: the branch's commit and the release tags that do and
    # do not contain it (`git tag --contains`). Empty: taken from the sources (release notes, PRs), not from the tags.
    checked: Mapping[str, str] = field(default_factory=dict)


# Releases of 11 Feb 2025 (NEWS.md "Major changes between OpenSSL 3.0.15 and OpenSSL 3.0.16 [11 Feb 2025]", and
# each branch's CHANGES.md); 3.4.0 (22 Oct 2024) came out before the change was merged (Nov 2024).
_AEAD_FIRST = {"3.0": "3.0.16", "3.1": "3.1.8", "3.2": "3.2.4", "3.3": "3.3.3", "3.4": "3.4.1", "3.5": "3.5.0"}

_PR_25823 = ("openssl/openssl PR #25823 'Fix EVP aead interface for bench-marking ccm, gcm, ocb, and siv, where "
             "decryption fails' (master, commit 607a46d0), backports #25887 (3.3), #25896 (3.2), #25907 (3.1 and 3.0; "
             "3.0.x commit 336b86f0 'apps/speed.c: Fix the benchmarking for AEAD ciphers')")
_AEAD_LOOPS = ("apps/speed.c of 1.1.1 and 3.0.0-3.0.15: -evp picks EVP_Update_loop_aead when -aead is given and the "
               "cipher has EVP_CIPH_FLAG_AEAD_CIPHER (ChaCha20-Poly1305 too), EVP_Update_loop_ccm for CCM, else "
               "EVP_Update_loop; from 3.0.16 on the per-message loop is for the GCM, CCM, OCB, SIV, GCM-SIV modes only "
               "and -aead only swaps the block lengths (2, 31, 136, 1024, 8192, 16384)")

CHANGES: tuple[Change, ...] = (
    Change(
        "aead-per-message", (AEAD,), ("evp", None), _AEAD_FIRST,
        before="AEAD modes without -aead: GCM, OCB, SIV as one stream (one EVP_EncryptUpdate per block on a context "
               "set up once, no tag per block), CCM with the length re-set and one update per block (no key set, no "
               "tag); with -aead, 13-byte AAD, payload and tag per block on a context keyed once",
        after="AEAD modes (GCM, CCM, OCB, SIV, GCM-SIV) per message: IV length, key and IV set, the block "
              "encrypted, finalised and its tag computed for every block (with or without -aead)",
        libressl=False,
        comparable="no option of a newer openssl reproduces the older loops; the per-message cost shrinks with the "
                   "block size (openssl/openssl#27513: -87.7 % at 16 B, about -10 % at 16384 B on one x86 box), so "
                   "even 16384-byte figures are not the same ruler; -aead is no way around it: it changed too "
                   "(the newer loop sets the key for every message) and is a ruler of its own",
        sources=(_PR_25823, _AEAD_LOOPS,
                 "openssl/openssl#28063 (git log openssl-3.0.15..openssl-3.0.16 -- apps/speed.c)",
                 "openssl/openssl#27513 (3.3.1 -> 3.4.1, closed: 'the measurement was changed not the "
                 "implementation'; its bisection to 607a46d0, a PR opened after 3.4.0, is why 3.4.1 is the first 3.4)",
                 "openwrt/openwrt#18929 (openssl-util 3.0.15 vs 3.0.16 over libopenssl 3.0.16)",
                 "NEWS.md: 3.0.16, 3.1.8, 3.2.4, 3.3.3, 3.4.1 released 11 Feb 2025"),
    ),
    Change(
        "with-aead", (AEAD, CIPHER), ("evp", None), {"1.1": "1.1.1"},
        before="a cipher through -evp without -aead (block lengths 16 ... 16384)",
        after="a cipher through -evp with -aead (block lengths 2, 31, 136, 1024, 8192, 16384; before 3.0.16 a "
              "TLS-like message per block: 13-byte AAD, payload, tag)",
        libressl=False,
        comparable="-aead figures compare only with -aead figures of the same loop (see aead-per-message, "
                   "aead-flag-loop)",
        sources=(_AEAD_LOOPS, "speed(1) of 1.1.1 and later: -aead"),
        only=_AEAD_FLAGGED.pattern, aead_flag=True,
        maybe="the log does not say whether `openssl speed` ran with -aead", maybe_vs_absent=False,
    ),
    Change(
        "aead-flag-loop", (CIPHER,), ("evp", None), _AEAD_FIRST,
        before="ChaCha20-Poly1305 (and AES-CBC-HMAC-SHA) with -aead: 13-byte AAD, payload and tag per block on a "
               "context keyed once (EVP_Update_loop_aead)",
        after="ChaCha20-Poly1305 (and AES-CBC-HMAC-SHA) with -aead as one stream, one EVP_EncryptUpdate per block "
              "(-aead only picks the block lengths)",
        libressl=False,
        comparable="without -aead ChaCha20-Poly1305 is the same stream loop in every version: compare those",
        sources=(_PR_25823, _AEAD_LOOPS),
        only=r"^chacha20-poly1305$|^aes-\d+-cbc-hmac-sha(1|256)$", aead_flag=True,
        maybe="the log does not say whether `openssl speed` ran with -aead, which decides it",
        maybe_vs_absent="with-aead",
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
                 "LibreSSL apps/openssl/speed.c: AES_cbc_encrypt, Camellia_cbc_encrypt ... for legacy names; its "
                 "legacy names aes-128-gcm, aes-256-gcm, chacha20-poly1305 go through EVP_AEAD and seal each "
                 "message with its tag (libressl commit 66989767, Sep 2015): another ruler than -evp"),
        checked={"3.0": "f3ccfc76fe (ciphers) and a89cd8d87c (digests) of PR #14228 are in tag openssl-3.0.0 "
                        "(from 3.0.0-alpha13), in no 1.x tag"},
    ),
    Change(
        "pk-via-evp-pkey", (PK,), ("evp", "legacy", None), {"3.0": "3.0.0"},
        before="RSA, DSA and ECDSA through the low-level calls (RSA_sign, DSA_sign, ECDSA_sign)",
        after="RSA, DSA and ECDSA through EVP_PKEY (sign and verify contexts set up once)",
        libressl=False,
        comparable="the big-number work dominates: figures stay close, but the call path differs; compare with care",
        sources=("openssl/openssl PR #14228 (3.0.0), openssl/openssl#11052",),
        only=r"^(rsa|dsa|ecdsa)",
        checked={"3.0": "f3ccfc76fe of PR #14228 is in tag openssl-3.0.0 (from 3.0.0-alpha13), in no 1.x tag"},
    ),
    Change(
        "ecdh-via-evp-derive", (PK,), ("evp", "legacy", None), {"1.1": "1.1.1"},
        before="ECDH through ECDH_compute_key (with a KDF1_SHA1 step for fields of 192 bits and less)",
        after="ECDH through EVP_PKEY_derive on a context set up once",
        libressl=False,
        comparable="the point multiplication dominates: figures stay close, but the call path differs (and "
                   "small fields lost the KDF step); compare with care",
        sources=("apps/speed.c of 1.1.1: ECDH_EVP_derive_key_loop (EVP_PKEY_derive); of 1.1.0: ECDH_compute_key "
                 "with KDF1_SHA1 for fields <= 192 bits",
                 "LibreSSL apps/openssl/speed.c: ECDH_compute_key (never EVP_PKEY_derive)"),
        only=r"^ecdh",
    ),
    Change(
        "eddsa-sign-init", (PK,), ("evp", "legacy", None), {"3.0": "3.0.10", "3.1": "3.1.2", "3.2": "3.2.0"},
        before="Ed25519/Ed448 signing as EVP_DigestSign alone in the loop (the context initialised once)",
        after="Ed25519/Ed448 signing with EVP_DigestSignInit before every EVP_DigestSign",
        libressl=False,
        comparable="verify did not change; sign figures of both sides are not the same ruler",
        sources=("openssl/openssl PR #21491 'speed: Fix a memory leak and EdDSA measurments', commit 'speed: Fix "
                 "execution of EdDSA measurement' on each branch: 2fb42a7b76 (3.0), cb80e6bf3d (3.1), 0c85bcbaea "
                 "(master, before 3.2)",
                 "releases: 3.0.9 / 3.1.1 (30 May 2023) without it; 3.0.10 / 3.1.2 (1 Aug 2023) and 3.2.0 with it"),
        only=r"^ed(25519|448)$", operations=("sign",),
        checked={"3.0": "2fb42a7b76 is in tag openssl-3.0.10, not in openssl-3.0.9",
                 "3.1": "cb80e6bf3d is in tag openssl-3.1.2, not in openssl-3.1.1",
                 "3.2": "0c85bcbaea is in tag openssl-3.2.0 (and its alphas); 3.2 had no release before it"},
    ),
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


def _state(change: Change, version: str | None) -> bool | None | str:
    """carries(), or "maybe" for a version within the range the change is known to have happened in."""
    parsed = version_tuple(version) if version else None
    if parsed is not None:
        start = change.uncertain.get(f"{parsed[0]}.{parsed[1]}")
        first = change.first.get(f"{parsed[0]}.{parsed[1]}")
        if start and first and (version_tuple(start) or parsed) <= parsed < (version_tuple(first) or parsed):
            return "maybe"
    return carries(change, version)


@functools.cache
def method_id(algorithm: str, api: str | None, operation: str | None, version: str | None,
              timer: str | None = None, aead: bool | None = False) -> str:
    """The method a cell was measured with: its kind, the changes its `openssl speed` carries, and the timer.

    e.g. "aead+aead-per-message@elapsed", "cipher@cpu", "digest+legacy-via-evp". A change not known for this
    version ("?") never makes two cells differ by itself; one the cell may or may not carry ("~": the release is
    unconfirmed, or `aead`, whether -aead was given, is None: unknown) makes it differ from both kinds of side
    as "method may have changed".
    """
    kind = kind_of(algorithm, operation)
    parts = [kind]
    for change in CHANGES:
        if (not change.changes_figures or kind not in change.kinds or api not in change.apis
                or algorithm in change.exempt or (change.only and not re.search(change.only, algorithm))
                or (change.operations and operation not in change.operations)):
            continue
        if change.aead_flag is not None and aead is not None and aead != change.aead_flag:
            continue
        carried = _state(change, version)
        if carried is None:
            parts.append(f"?{change.id}")
        elif carried == "maybe" or (carried and change.aead_flag is not None and aead is None):
            parts.append(f"~{change.id}")
        elif carried:
            parts.append(change.id)
    return "+".join(parts) + (f"@{timer}" if timer in ("elapsed", "cpu") else "")


def _split(method: str) -> tuple[str, frozenset[str], frozenset[str], frozenset[str], str | None]:
    body, _, timer = method.partition("@")
    kind, *changes = body.split("+")
    known = frozenset(c for c in changes if c[:1] not in ("?", "~"))
    unknown = frozenset(c[1:] for c in changes if c.startswith("?"))
    maybe = frozenset(c[1:] for c in changes if c.startswith("~"))
    return kind, known, unknown, maybe, timer or None


@dataclass(frozen=True)
class MethodChange:
    """Two sides measured differently: the cause (a Change, or the timer) and the sentence that says so."""

    cause: str  # a Change id, or "timer"
    sentence: str
    comparable: str  # what can still be compared, and how
    maybe: bool = False  # the sides may or may not have been measured differently: not judged either way


_BY_ID = {change.id: change for change in CHANGES}


def compare(old: Mapping[str, str | None], new: Mapping[str, str | None]) -> MethodChange | None:
    """Whether two sides of a cell were measured differently. Each side maps its method ids to the `openssl`
    version that measured with it (Cell.methods); None when every difference is unknown rather than known.
    A side that may or may not carry a change the other side does (or does not) carry: MethodChange(maybe=True)."""
    if not old or not new or set(old) == set(new):
        return None
    for a, version_a in sorted(old.items()):
        for b, version_b in sorted(new.items()):
            kind_a, known_a, unknown_a, maybe_a, timer_a = _split(a)
            kind_b, known_b, unknown_b, maybe_b, timer_b = _split(b)
            differ = (known_a ^ known_b) - unknown_a - unknown_b - maybe_a - maybe_b
            for change in (c for c in CHANGES if c.id in differ):
                change_id = change.id
                newer, older = (version_b, version_a) if change_id in known_b else (version_a, version_b)
                return MethodChange(change_id, boundary_sentence(change, newer, older), change.comparable)
            if timer_a and timer_b and timer_a != timer_b:
                return MethodChange("timer", f"one side timed by {_timer(timer_a)}, the other by {_timer(timer_b)}; "
                                             "not comparable", "measure both sides with -elapsed (sslbench run does)")
            maybe_differ = {c for c in (maybe_a ^ maybe_b) - unknown_a - unknown_b
                            if _maybe_counts(_BY_ID[c], known_a | maybe_a, known_b | maybe_b)}
            for change in (c for c in CHANGES if c.id in maybe_differ):  # the table's order: -aead before its loop
                change_id = change.id
                newer, older = (version_b, version_a) if change_id in maybe_b | known_b else (version_a, version_b)
                return MethodChange(change_id, maybe_sentence(change, newer, older), change.comparable, maybe=True)
    return None


def _maybe_counts(change: Change, side_a: frozenset[str], side_b: frozenset[str]) -> bool:
    """Whether one side that may carry `change` against the other makes them "may have changed"."""
    absent = side_b if change.id in side_a else side_a  # the side without it (neither known nor maybe)
    if change.id in absent or change.maybe_vs_absent is True:
        return True
    return bool(change.maybe_vs_absent) and str(change.maybe_vs_absent) in absent


def maybe_sentence(change: Change, newer: str | None, older: str | None) -> str:
    """"the method may have changed: openssl speed times … from 3.0.16 on; <why unsure>; not judged"."""
    sides = f" ({_said(older)} / {_said(newer)})" if older and newer else ""
    if change.id == "with-aead":
        return (f"the method may have changed{sides}: with -aead openssl speed times {change.after}, without it "
                f"{change.before}; {change.maybe}; not judged")
    first = _first_for(change, newer)
    since = f" from {first} on" if first else ""
    return f"the method may have changed{sides}: openssl speed times {change.after}{since}; {change.maybe}; not judged"


def _timer(timer: str) -> str:
    return "wall clock (-elapsed)" if timer == "elapsed" else "CPU time (openssl's default)"


def boundary_sentence(change: Change, newer: str | None, older: str | None) -> str:
    """"openssl speed times AEAD modes (…) per message … from 3.0.16 on; not comparable with 3.0.15"."""
    if change.id == "with-aead":
        return f"one side measured with -aead: {change.after}; the other {change.before}; not comparable"
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
