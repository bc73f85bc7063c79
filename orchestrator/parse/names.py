"""Canonical algorithm names, and what an `openssl speed` command line asks for.

Every OpenSSL version labels the same cipher differently: `aes-256 cbc` (1.x low-level API),
`aes-256-cbc` (3.x built-in test or 1.x `-evp`), `AES-256-CBC` (3.x `-evp`), `blowfish cbc`,
`rsa 2048 bits`, `256 bits ecdsa (nistp256)` ...  Records always carry one canonical spelling:
lower case, dashes between words, the names `openssl speed` itself accepts on its command line
(`aes-256-cbc`, `bf-cbc`, `rsa2048`, `ecdsap256`, `ecdhp256`, `ed25519`, `x25519`).
"""
from __future__ import annotations

import functools
import re
from typing import Any

# Labels whose canonical name is not just "lower case, spaces to dashes".
_ALIASES = {
    "blowfish": "bf-cbc",
    "blowfish-cbc": "bf-cbc",
    "bf": "bf-cbc",
    "cast": "cast-cbc",
    "cast5-cbc": "cast-cbc",
    "rmd160": "rmd160",
    "ripemd160": "rmd160",
    "ripemd-160": "rmd160",
    "sha2-256": "sha256",
    "sha2-224": "sha224",
    "sha2-384": "sha384",
    "sha2-512": "sha512",
    "sha2-512/224": "sha512-224",
    "sha2-512/256": "sha512-256",
    "sha-1": "sha1",
    "sha-256": "sha256",
    "sha-512": "sha512",
    "idea": "idea-cbc",
    "seed": "seed-cbc",
    "rc2": "rc2-cbc",
    "rc5": "rc5-32/12-cbc",
    "rc5-cbc": "rc5-32/12-cbc",
    "des": "des-cbc",
    "des-ede3-cbc": "des-ede3",
    "chacha20-poly1305": "chacha20-poly1305",
    "ecdhx25519": "x25519",  # command-line names of the X25519/X448 key exchange tests
    "ecdhx448": "x448",
}

# Curve names printed in brackets by the public-key tables -> the suffix `openssl speed` uses.
_CURVES = {
    "secp160r1": "p160",
    "nistp192": "p192",
    "nistp224": "p224",
    "nistp256": "p256",
    "nistp384": "p384",
    "nistp521": "p521",
    "prime256v1": "p256",
    "secp384r1": "p384",
    "secp521r1": "p521",
    "x25519": "x25519",
    "x448": "x448",
    "ed25519": "ed25519",
    "ed448": "ed448",
    "curvesm2": "sm2",
    "sm2": "sm2",
}

# Post-quantum names as each tool spells them: OpenSSL 3.5 `ML-KEM-768`, `ML-DSA-65`, `SLH-DSA-SHA2-128s`;
# LibreSSL `mlkem768` (table row `mlkem 768`); oqs-provider `mlkem768`, `mldsa65`. One spelling: FIPS 203-205's,
# lower case (`ml-kem-768`, `ml-dsa-65`, `slh-dsa-sha2-128s`). Hybrids stay as printed (`x25519mlkem768`).
_PQC = re.compile(r"^(ml|slh)-?(kem|dsa)-?(.+)$")
_RSA_DSA = re.compile(r"^(rsa|dsa)\s*(\d+)\s*bits?$")
_FFDH = re.compile(r"^(\d+)\s*bits?\s+ffdh$")
_CURVE_LABEL = re.compile(r"^(\d+)\s*-?\s*bits?\s+(ecdsa|ecdh|eddsa|sm2)\s*\(([^)]*)\)$")
_SPACES = re.compile(r"[\s_]+")


def curve_suffix(curve: str) -> str:
    """`nistp256` -> `p256`, `nistk163` -> `k163`, `brainpoolP256r1` -> `brp256r1`, `X25519` -> `x25519`."""
    name = curve.strip().lower()
    if name in _CURVES:
        return _CURVES[name]
    if name.startswith("nist") and len(name) > 4:
        return name[4:]
    if name.startswith("brainpoolp"):
        return "brp" + name[len("brainpoolp"):]
    return _SPACES.sub("-", name)


def curve_algorithm(family: str, curve: str) -> str:
    """The canonical name of an elliptic-curve test: (`ecdsa`, `nistp256`) -> `ecdsap256`.

    X25519/X448 key exchange and Ed25519/Ed448 signatures are named after the curve alone
    (`x25519`, `ed25519`), as users call them; SM2 is `sm2`.
    """
    suffix = curve_suffix(curve)
    if suffix in ("x25519", "x448", "ed25519", "ed448", "sm2"):
        return suffix
    return family.lower() + suffix


@functools.lru_cache(maxsize=4096)
def canonical_algorithm(label: str) -> str:
    """The canonical name of a table label, progress-line name or command-line name.

    >>> canonical_algorithm("aes-256 cbc"), canonical_algorithm("AES-128-GCM")
    ('aes-256-cbc', 'aes-128-gcm')
    >>> canonical_algorithm("blowfish cbc"), canonical_algorithm("rsa 2048 bits")
    ('bf-cbc', 'rsa2048')
    >>> canonical_algorithm("256 bits ecdsa (nistp256)"), canonical_algorithm("253 bits EdDSA (Ed25519)")
    ('ecdsap256', 'ed25519')
    >>> canonical_algorithm("ML-KEM-768"), canonical_algorithm("mlkem 768"), canonical_algorithm("mldsa65")
    ('ml-kem-768', 'ml-kem-768', 'ml-dsa-65')
    """
    text = " ".join(label.split()).strip().lower()
    if not text:
        return ""
    match = _RSA_DSA.match(text)
    if match:
        return match.group(1) + match.group(2)
    match = _CURVE_LABEL.match(text)
    if match:
        return curve_algorithm(match.group(2), match.group(3))
    match = _FFDH.match(text)
    if match:
        return "ffdh" + match.group(1)
    if text.startswith("(") and text.endswith(")"):  # "(X25519)" alone
        return curve_suffix(text[1:-1])
    dashed = _SPACES.sub("-", text)
    match = _PQC.match(dashed)
    if match:
        return f"{match.group(1)}-{match.group(2)}-{match.group(3).lstrip('-')}"
    if dashed in _ALIASES:
        return _ALIASES[dashed]
    if dashed.startswith("blowfish-"):
        return "bf-" + dashed[len("blowfish-"):]
    return dashed


# Options of `openssl speed` that take a value (so the value is not an algorithm name).
_VALUE_OPTIONS = {
    "-evp", "-hmac", "-cmac", "-multi", "-seconds", "-bytes", "-engine", "-misalign",
    "-async_jobs", "-primes", "-provider", "-provider-path", "-propquery", "-rand", "-writerand",
    "-config",
}
_SPEED_WORD = re.compile(r"(?:^|[\s;&|/])(?:openssl|openssl\.exe)\s+speed(?=\s|$)")


def speed_command_hints(cmdline: str) -> dict[str, Any]:
    """What an `openssl speed ...` command line asks for, as hints for `parse_speed`.

    Returns {"api", "threads", "algorithm", "algorithms", "seconds", "bytes", "mr"}:
    `api` is "evp" with `-evp`/`-aead`, "legacy" when algorithms are named without `-evp`,
    else None; `threads` is the `-multi` count (None without it); `algorithm` is the `-evp`
    name (canonical) or the single named algorithm; `algorithms` lists every named one.
    Anything before `openssl speed` (a shell prompt, `time`, `taskset -c 0`) is ignored.
    """
    hints: dict[str, Any] = {"api": None, "threads": None, "algorithm": None, "algorithms": [],
                   "seconds": None, "bytes": None, "mr": False}
    match = _SPEED_WORD.search(cmdline)
    if match is None:
        return hints
    words = cmdline[match.end():].split()
    evp_name = None
    named: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("2>&1", "|") or word.startswith((">", "|", ";", "&")):
            break  # redirections and pipes end the command
        value = words[i + 1] if i + 1 < len(words) else None
        if word in _VALUE_OPTIONS:
            i += 2
            if value is None:
                continue
            if word == "-evp":
                evp_name = canonical_algorithm(value)
            elif word == "-multi":
                hints["threads"] = _int_or_none(value)
            elif word == "-seconds":
                hints["seconds"] = _int_or_none(value)
            elif word == "-bytes":
                hints["bytes"] = _int_or_none(value)
            elif word in ("-hmac", "-cmac"):
                named.append(f"{word[1:]}({canonical_algorithm(value)})")
            continue
        if word == "-mr":
            hints["mr"] = True
        elif word == "-aead":
            hints["api"] = "evp"
        elif not word.startswith("-"):
            named.append(canonical_algorithm(word))
        i += 1
    if evp_name:
        hints["api"] = "evp"
        hints["algorithm"] = evp_name
        hints["algorithms"] = [evp_name] + named
    else:
        hints["algorithms"] = named
        if named:
            hints["api"] = hints["api"] or "legacy"
            if len(named) == 1:
                hints["algorithm"] = named[0]
    return hints


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
