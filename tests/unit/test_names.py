"""Canonical algorithm names and `openssl speed` command-line hints."""
import pytest

from orchestrator.parse.names import canonical_algorithm, speed_command_hints


@pytest.mark.parametrize("label, expected", [
    ("aes-256 cbc", "aes-256-cbc"),
    ("AES-128-GCM", "aes-128-gcm"),
    ("ChaCha20-Poly1305", "chacha20-poly1305"),
    ("blowfish cbc", "bf-cbc"),
    ("blowfish", "bf-cbc"),  # 3.x built-in test label
    ("aes-512 cbc", "aes-512-cbc"),  # as an odd build reports it
    ("des ede3", "des-ede3"),
    ("des cbc", "des-cbc"),
    ("rc5-32/12 cbc", "rc5-32/12-cbc"),
    ("camellia-128 cbc", "camellia-128-cbc"),
    ("seed cbc", "seed-cbc"),
    ("aes-128 ige", "aes-128-ige"),
    ("ghash", "ghash"),
    ("sha256", "sha256"),
    ("SHA2-256", "sha256"),
    ("md5", "md5"),
    ("hmac(md5)", "hmac(md5)"),
    ("rsa 2048 bits", "rsa2048"),
    ("rsa  15360 bits", "rsa15360"),
    ("dsa 2048 bits", "dsa2048"),
    ("256 bits ecdsa (nistp256)", "ecdsap256"),
    ("256 bit ecdsa (nistp256)", "ecdsap256"),  # 1.0.x says "bit"
    ("571 bits ecdsa (nistb571)", "ecdsab571"),
    ("256 bits ecdsa (brainpoolP256r1)", "ecdsabrp256r1"),
    ("253 bits EdDSA (Ed25519)", "ed25519"),
    ("456 bits EdDSA (Ed448)", "ed448"),
    ("256 bits ecdh (nistp256)", "ecdhp256"),
    ("253 bits ecdh (X25519)", "x25519"),
    ("X25519", "x25519"),
    ("ecdhx25519", "x25519"),  # the command-line name
    ("ecdsap256", "ecdsap256"),
    ("2048 bits ffdh", "ffdh2048"),
    ("ML-KEM-768", "ml-kem-768"),
    ("  aes-128-gcm  ", "aes-128-gcm"),
    ("", ""),
])
def test_canonical_algorithm(label, expected):
    assert canonical_algorithm(label) == expected


def test_hints_read_multi_evp_behind_a_prompt():
    hints = speed_command_hints("root@OpenWrt:~# openssl speed -multi 4 -seconds 2 -evp AES-256-GCM 2>&1")
    assert hints["api"] == "evp"
    assert hints["threads"] == 4
    assert hints["algorithm"] == "aes-256-gcm"
    assert hints["algorithms"] == ["aes-256-gcm"]
    assert hints["seconds"] == 2
    assert hints["mr"] is False


def test_hints_for_named_algorithms_are_legacy():
    hints = speed_command_hints("taskset -c 0 openssl speed -mr -bytes 1400 aes-128-cbc sha256 rsa2048")
    assert hints["api"] == "legacy"
    assert hints["algorithms"] == ["aes-128-cbc", "sha256", "rsa2048"]
    assert hints["algorithm"] is None  # several were named
    assert hints["bytes"] == 1400
    assert hints["mr"] is True
    assert hints["threads"] is None


def test_hints_evp_plus_named_lists_both():
    hints = speed_command_hints("openssl speed -evp aes-128-gcm sha256")
    assert hints["algorithm"] == "aes-128-gcm"
    assert hints["algorithms"] == ["aes-128-gcm", "sha256"]


def test_hints_without_a_speed_command_are_empty():
    hints = speed_command_hints("cat /proc/cpuinfo")
    assert hints["api"] is None and hints["algorithms"] == [] and hints["threads"] is None


def test_hints_survive_a_missing_option_value():
    hints = speed_command_hints("openssl speed -multi")
    assert hints["threads"] is None
    assert speed_command_hints("openssl speed -multi x")["threads"] is None


def test_hints_flags_do_not_swallow_the_next_name():
    hints = speed_command_hints("/usr/bin/openssl speed -elapsed -kem-algorithms -provider default ML-KEM-768")
    assert hints["algorithms"] == ["ml-kem-768"]
    assert hints["api"] == "legacy"
