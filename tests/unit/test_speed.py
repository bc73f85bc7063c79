"""parse_speed / parse_openssl_build on real and constructed `openssl speed` outputs (tests/data/speed)."""
from pathlib import Path

import pytest

from orchestrator.model import ERROR, OK
from orchestrator.parse.speed import parse_openssl_build, parse_speed

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"


def load(name: str) -> str:
    return (DATA / name).read_text()


def cells(parsed, algorithm=None):
    """{(algorithm, block_size or operation): measurement}"""
    out = {}
    for m in parsed.measurements:
        if algorithm is None or m.algorithm == algorithm:
            out[(m.algorithm, m.block_size if m.operation is None else m.operation)] = m
    return out


# ----------------------------------------------------------------------------- human tables


def test_1_1_1_evp_table_exact_numbers_counts_and_build():
    parsed = parse_speed(load("openssl-1.1.1w-armv7l-qemu-evp-aes-128-gcm.txt"))
    got = cells(parsed)
    assert [m.block_size for m in parsed.measurements] == [16, 64, 256, 1024, 8192, 16384]
    first = got[("aes-128-gcm", 16)]
    assert first.bytes_per_second == 12630540.0  # 12630.54k, ×1000 without extra rounding
    assert got[("aes-128-gcm", 16384)].bytes_per_second == 30703620.0
    assert (first.count, first.seconds) == (789409, 1.0)
    assert first.api == "evp" and first.threads == 1 and first.status == OK
    assert first.openssl_version == "1.1.1w"
    build = parsed.openssl
    assert build.version_line == "OpenSSL 1.1.1w  11 Sep 2023"
    assert build.built_on == "Wed Sep 13 19:21:33 2023 UTC"
    assert build.options == "bn(64,32) rc4(char) des(long) aes(partial) blowfish(ptr)"
    assert build.compiler.startswith("gcc -fPIC -pthread")
    assert parsed.skipped == []


def test_3_0_upper_case_evp_names_and_cpuinfo():
    parsed = parse_speed(load("openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"))
    got = cells(parsed)
    m = got[("aes-128-gcm", 1024)]
    assert m.bytes_per_second == 1590868230.0
    assert (m.count, m.seconds) == (963221, 0.62)
    assert m.api == "evp"
    assert parsed.openssl.version == "3.0.19"
    assert parsed.openssl.cpuinfo == "OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab"
    assert parsed.openssl.options == "bn(64,64)"


def test_stdout_only_log_has_no_counts():
    parsed = parse_speed(load("openssl-3.0.19-x86_64-evp-aes-128-gcm-stdout-only.txt"))
    assert len(parsed.measurements) == 6
    assert all(m.count is None and m.seconds is None for m in parsed.measurements)
    assert parsed.measurements[0].bytes_per_second == 41494980.0


@pytest.mark.parametrize("name, algorithm, value", [
    ("openssl-3.0.19-x86_64-bytes1400-aes-256-gcm.txt", "aes-256-gcm", 1447219200.0),
    ("openssl-1.1.1w-x86_64-bytes1400-aes-128-gcm.txt", "aes-128-gcm", 3762155930.0),
])
def test_custom_bytes_single_column(name, algorithm, value):
    parsed = parse_speed(load(name))
    assert [(m.algorithm, m.block_size, m.bytes_per_second) for m in parsed.measurements] == [(algorithm, 1400, value)]
    assert parsed.measurements[0].count is not None


def test_1_1_1_legacy_names_with_spaces():
    parsed = parse_speed(load("openssl-1.1.1w-x86_64-legacy-aes-128-cbc-sha256-md5-bf-des-ede3.txt"))
    got = cells(parsed)
    assert {m.algorithm for m in parsed.measurements} == {"aes-128-cbc", "sha256", "md5", "bf-cbc", "des-ede3"}
    cbc = got[("aes-128-cbc", 16)]
    assert cbc.bytes_per_second == 221409180.0 and cbc.api == "legacy"
    assert (cbc.count, cbc.seconds) == (12039124, 0.87)
    assert got[("bf-cbc", 64)].api == "legacy"
    assert got[("sha256", 16)].api is None  # `-evp sha256` prints the same label


def test_command_line_in_the_log_decides_digest_api():
    text = "$ openssl speed -seconds 1 sha256 md5\n" + load("openssl-1.1.1w-x86_64-legacy-aes-128-cbc-sha256-md5-bf-des-ede3.txt")
    got = cells(parse_speed(text))
    assert got[("sha256", 16)].api == "legacy"
    text = "$ openssl speed -evp sha256\n" + load("openssl-3.0.19-x86_64-evp-sha256.txt")
    assert cells(parse_speed(text))[("sha256", 16)].api == "evp"


def test_api_argument_wins():
    parsed = parse_speed(load("openssl-3.0.19-x86_64-evp-sha256.txt"), api="evp")
    assert {m.api for m in parsed.measurements} == {"evp"}


def test_3_0_lower_case_builtin_is_legacy():
    got = cells(parse_speed(load("openssl-3.0.19-x86_64-legacy-aes-128-cbc-sha256-md5.txt")))
    assert got[("aes-128-cbc", 16)].api == "legacy"
    assert got[("aes-128-cbc", 16)].bytes_per_second == 903928500.0
    assert got[("md5", 16384)].bytes_per_second == 752107520.0


def test_1_0_2_table_five_sizes_and_bit_singular_public_key_lines():
    parsed = parse_speed(load("openssl-1.0.2u-mips-constructed-legacy-pk.txt"))
    got = cells(parsed)
    sizes = sorted({m.block_size for m in parsed.measurements if m.operation is None})
    assert sizes == [16, 64, 256, 1024, 8192]
    aes = got[("aes-256-cbc", 8192)]
    assert aes.api == "legacy" and (aes.count, aes.seconds) == (548, 2.98)
    assert aes.bytes_per_second == 1506450.0  # "1506.45k"
    assert got[("bf-cbc", 16)].api == "legacy"
    rsa = got[("rsa2048", "sign")]
    assert (rsa.ops_per_second, rsa.count, rsa.seconds) == (8.1, 81, 9.99)
    assert got[("rsa2048", "verify")].ops_per_second == 289.4
    ec = got[("ecdsap256", "sign")]
    assert (ec.ops_per_second, ec.count) == (81.4, 813)
    assert (got[("ecdhp256", "op")].ops_per_second, got[("ecdhp256", "op")].count) == (29.0, 290)
    assert parsed.openssl.version == "1.0.2u"
    assert parsed.openssl.version_line == "OpenSSL 1.0.2u  20 Dec 2019"
    assert parsed.openssl.built_on == "reproducible build, date unspecified"
    assert parsed.openssl.options.startswith("bn(32,32) rc4(ptr,char)")


def test_1_0_1_plain_bytes_inf_and_nan():
    parsed = parse_speed(load("openssl-1.0.1e-i686-constructed-stdout-slow-inf-nan.txt"))
    got = cells(parsed)
    assert got[("md2", 16)].bytes_per_second == 8000.0  # printed without "k"
    assert got[("md2", 8192)].bytes_per_second == 10920.0
    inf = got[("rc5-32/12-cbc", 16)]
    assert inf.status == ERROR and inf.bytes_per_second is None and "inf" in inf.reason
    assert got[("rc5-32/12-cbc", 64)].bytes_per_second == 18836120.0
    assert got[("des-ede3", 16)].status == ERROR
    assert got[("hmac(md5)", 16)].api == "legacy"
    assert parsed.openssl.version == "1.0.1e"


def test_1_1_0_evp_and_legacy_rows_and_x25519():
    parsed = parse_speed(load("openssl-1.1.0l-aarch64-constructed-evp-legacy-pk.txt"))
    got = cells(parsed)
    assert got[("aes-128-gcm", 16384)].api == "evp"
    assert got[("aes-128-cbc", 16384)].api == "legacy"
    assert got[("aes-128-gcm", 16)].count == 6120000
    assert got[("x25519", "op")].ops_per_second == 4112.3
    assert got[("x25519", "op")].count == 41000


def test_3_2_ops_progress_and_four_column_rsa():
    got = cells(parse_speed(load("openssl-3.2.1-aarch64-constructed-evp-legacy-pk.txt")))
    assert got[("aes-256-gcm", 16)].api == "evp"
    assert got[("aes-256-gcm", 16)].count == 9100000
    assert got[("aes-128-cbc", 16)].api == "legacy"
    assert got[("aes-128-cbc", 16)].seconds == 3.0
    expected = {"sign": (1932.3, 19130), "verify": (77414.5, 764081), "encrypt": (74756.6, 739343),
                "decrypt": (1908.7, 18992)}
    for op, (rate, count) in expected.items():
        assert (got[("rsa2048", op)].ops_per_second, got[("rsa2048", op)].count) == (rate, count)
    assert got[("ed25519", "verify")].ops_per_second == 8116.2
    assert got[("ecdhp256", "op")].count == 170000


def test_3_5_kem_and_signature_tables():
    got = cells(parse_speed(load("openssl-3.5.0-x86_64-constructed-kem-sig.txt")))
    assert got[("ml-kem-768", "encaps")].ops_per_second == 28000.0
    assert got[("ml-kem-768", "encaps")].count == 280000
    assert got[("x25519mlkem768", "decaps")].ops_per_second == 5500.0
    assert got[("ml-dsa-65", "sign")].ops_per_second == 3907.8
    assert got[("ml-dsa-65", "sign")].count == 39000


@pytest.mark.parametrize("name", ["openssl-3.0.19-x86_64-pk.txt", "openssl-1.1.1w-x86_64-pk.txt"])
def test_public_key_tables_real(name):
    parsed = parse_speed(load(name))
    got = cells(parsed)
    assert set(got) == {("rsa2048", "sign"), ("rsa2048", "verify"), ("dsa2048", "sign"), ("dsa2048", "verify"),
                        ("ecdsap256", "sign"), ("ecdsap256", "verify"), ("ecdhp256", "op"), ("x25519", "op"),
                        ("ed25519", "sign"), ("ed25519", "verify")}
    assert all(m.count and m.seconds and m.block_size is None for m in parsed.measurements)
    if "1.1.1w" in name:
        assert (got[("rsa2048", "sign")].ops_per_second, got[("rsa2048", "sign")].count) == (1289.8, 1135)
        assert got[("x25519", "op")].ops_per_second == 29819.1


# ----------------------------------------------------------------------------- -mr


def test_mr_throughput_taken_as_is_with_counts():
    parsed = parse_speed(load("openssl-3.0.19-x86_64-mr-chacha20-poly1305.txt"))
    got = cells(parsed)
    m = got[("chacha20-poly1305", 16)]
    assert m.bytes_per_second == 247182695.38
    assert (m.count, m.seconds) == (10041797, 0.65)
    assert m.api == "evp"


@pytest.mark.parametrize("name, rsa_sign, ecdh", [
    ("openssl-3.0.19-x86_64-mr-evp-aes-128-gcm-pk.txt", 3153.0, 18431.313131),
    ("openssl-1.1.1w-x86_64-mr-chacha20-poly1305-pk.txt", 1670.27027, 18078.823529),
])
def test_mr_public_key_ops_per_second(name, rsa_sign, ecdh):
    got = cells(parse_speed(load(name)))
    assert got[("rsa2048", "sign")].ops_per_second == rsa_sign
    assert got[("ecdhp256", "op")].ops_per_second == ecdh
    assert got[("ed25519", "verify")].ops_per_second > 1000
    assert got[("ecdsap256", "sign")].count is not None


def test_mr_old_versions_print_seconds_per_op():
    got = cells(parse_speed(load("openssl-1.0.2u-mips-constructed-mr-aes-256-cbc-pk.txt")))
    assert got[("rsa2048", "sign")].ops_per_second == pytest.approx(81 / 9.99, rel=1e-5)
    assert got[("ecdsap256", "verify")].ops_per_second == pytest.approx(219 / 10.01, rel=1e-5)
    assert got[("ecdhp256", "op")].ops_per_second == 29.0
    assert got[("aes-256-cbc", 16)].bytes_per_second == 1364553.85
    assert got[("aes-256-cbc", 16)].api == "legacy"
    # no version and no progress lines: the numbers themselves tell seconds from ops/s
    got = cells(parse_speed(load("openssl-1.1.0l-aarch64-constructed-mr-pk-stdout.txt")))
    assert got[("rsa2048", "sign")].ops_per_second == pytest.approx(1021 / 9.98, rel=1e-4)  # "%f" kept 6 decimals of seconds
    assert got[("ecdsap256", "sign")].ops_per_second == pytest.approx(31000 / 9.99, rel=1e-3)
    assert got[("ecdhp256", "op")].ops_per_second == pytest.approx(13900 / 9.99, rel=1e-5)


def test_mr_3_2_rsa_four_operations_and_3_5_kem_names_from_progress():
    got = cells(parse_speed(load("openssl-3.2.1-aarch64-constructed-mr-rsa2048.txt")))
    assert got[("rsa2048", "encrypt")].ops_per_second == pytest.approx(739343 / 9.89, rel=1e-6)
    assert got[("rsa2048", "decrypt")].count == 18992
    got = cells(parse_speed(load("openssl-3.5.0-x86_64-constructed-mr-kem-sig.txt")))
    assert got[("ml-kem-768", "decaps")].ops_per_second == pytest.approx(350000 / 9.98, rel=1e-6)
    assert got[("ml-dsa-65", "sign")].count == 39000


# ----------------------------------------------------------------------------- -multi


def test_multi_1_1_1_evp_row_named_from_children():
    parsed = parse_speed(load("openssl-1.1.1w-armv7l-qemu-multi2-chacha20-poly1305.txt"))
    got = cells(parsed)
    m = got[("chacha20-poly1305", 16)]
    assert m.bytes_per_second == 82660080.0 and m.threads == 2 and m.api == "evp"
    assert m.count is None  # each child measured its own share
    assert len(parsed.measurements) == 6  # the children's rows are not repeated


def test_multi_evp_row_without_children_uses_the_hint():
    text = "\n".join(line for line in load("openssl-1.1.1w-x86_64-multi2-aes-256-gcm.txt").splitlines()
                     if not line.startswith("Got:"))
    parsed = parse_speed(text, threads=2, algorithm="aes-256-gcm")
    assert {m.algorithm for m in parsed.measurements} == {"aes-256-gcm"}
    assert cells(parsed)[("aes-256-gcm", 16)].bytes_per_second == 623351840.0
    unnamed = parse_speed(text, threads=2)
    assert {m.algorithm for m in unnamed.measurements} == {"evp"}
    assert any("evp" in note for note in unnamed.skipped)


def test_multi_summary_missing_sums_children():
    text = "\n".join(line for line in load("openssl-1.1.1w-x86_64-multi2-aes-256-gcm.txt").splitlines()
                     if not line.startswith("evp"))
    got = cells(parse_speed(text))
    assert got[("aes-256-gcm", 16)].bytes_per_second == pytest.approx(323087248.00 + 300264592.00)
    assert got[("aes-256-gcm", 16)].threads == 2


@pytest.mark.parametrize("name, algorithm, api, first", [
    ("openssl-3.0.19-x86_64-multi2-aes-256-gcm.txt", "aes-256-gcm", "evp", 46152430.0),
    ("openssl-1.1.1w-x86_64-multi2-legacy-aes-128-cbc.txt", "aes-128-cbc", "legacy", 229475390.0),
    ("openssl-3.0.19-x86_64-multi2-mr-aes-128-gcm.txt", "aes-128-gcm", "evp", 63270464.0),
    ("openssl-1.0.2u-mips-constructed-multi2-evp-aes-128-cbc.txt", "aes-128-cbc", "evp", 3253330.0),
])
def test_multi_summaries(name, algorithm, api, first):
    parsed = parse_speed(load(name))
    assert {m.algorithm for m in parsed.measurements} == {algorithm}
    assert {(m.threads, m.api) for m in parsed.measurements} == {(2, api)}
    assert parsed.measurements[0].bytes_per_second == first


def test_multi_public_key():
    got = cells(parse_speed(load("openssl-1.1.1w-x86_64-multi2-rsa2048.txt")))
    assert (got[("rsa2048", "sign")].ops_per_second, got[("rsa2048", "sign")].threads) == (991.1, 2)


def test_measurement_field_order():
    """resolve.finish builds each Measurement positionally (its hot loop): the order it writes them in."""
    import dataclasses

    from orchestrator.model import Measurement
    assert [f.name for f in dataclasses.fields(Measurement)] == [
        "algorithm", "block_size", "bytes_per_second", "operation", "ops_per_second", "threads", "api",
        "openssl_version", "count", "seconds", "status", "reason", "repeat", "flags", "cpu", "kind", "implementation"]
    m = parse_speed("The 'numbers' are in 1000s of bytes per second processed.\n"
                    "type             16 bytes\nAES-128-GCM      39733.66k\n", threads=3).measurements[0]
    assert (m.algorithm, m.block_size, m.bytes_per_second, m.operation, m.threads, m.api, m.status, m.repeat,
            m.flags, m.cpu) == ("aes-128-gcm", 16, 39733660.0, None, 3, "evp", OK, 0, [], None)


# ----------------------------------------------------------------------------- build block


def test_openssl_version_a_output():
    text = """OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)
built on: Fri Apr  3 12:29:32 2026 UTC
platform: debian-amd64
options:  bn(64,64)
compiler: gcc -fPIC -pthread -m64
OPENSSLDIR: "/usr/lib/ssl"
CPUINFO: OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab
"""
    build = parse_openssl_build(text)
    assert build.version == "3.0.19"
    assert build.version_line.startswith("OpenSSL 3.0.19 27 Jan 2026")
    assert build.platform == "debian-amd64"
    assert build.options == "bn(64,64)"
    assert build.compiler == "gcc -fPIC -pthread -m64"
    assert build.cpuinfo.startswith("OPENSSL_ia32cap=")


@pytest.mark.parametrize("text, field, expected", [
    ("version: 3.0.0\nbuilt on: built on: Thu Sep  9 2021 UTC\n", "built_on", "Thu Sep  9 2021 UTC"),
    ("LibreSSL 3.8.2\n", "version", "LibreSSL 3.8.2"),
    ("OpenSSL 1.0.2u  20 Dec 2019\n", "version", "1.0.2u"),
    ("OpenSSL 1.1.1w-fips  11 Sep 2023\n", "version", "1.1.1w"),
    ("CPUINFO: OPENSSL_armcap=0x987d\n", "cpuinfo", "OPENSSL_armcap=0x987d"),
    ("options:bn(64,32) rc4(char) des(long) aes(partial) blowfish(ptr) \n", "options",
     "bn(64,32) rc4(char) des(long) aes(partial) blowfish(ptr)"),
])
def test_build_lines(text, field, expected):
    assert getattr(parse_openssl_build(text), field) == expected


# ----------------------------------------------------------------------------- errors and notes


def test_openssl_errors_are_reported():
    parsed = parse_speed(load("openssl-1.1.1w-x86_64-error-options-after-algorithm.txt"))
    assert parsed.measurements == []
    assert any("Unknown algorithm -multi" in note for note in parsed.skipped)
    assert "no openssl speed results found" in parsed.skipped


def test_row_with_wrong_number_of_values_is_skipped_and_said():
    text = load("openssl-3.0.19-x86_64-evp-aes-128-gcm-stdout-only.txt").replace(
        "AES-128-GCM ", "AES-128-GCM 1.00k 2.00k\nAES-256-GCM ")
    parsed = parse_speed(text)
    assert {m.algorithm for m in parsed.measurements} == {"aes-256-gcm"}
    assert any("2 values" in note for note in parsed.skipped)


def test_api_argument_covers_only_the_named_algorithm():
    text = load("openssl-3.0.19-x86_64-legacy-aes-128-cbc-sha256-md5.txt")
    got = cells(parse_speed(text, api="evp", algorithm="sha256"))
    assert got[("sha256", 16)].api == "evp"
    assert got[("aes-128-cbc", 16)].api == "legacy"
    assert got[("md5", 16)].api is None
    got = cells(parse_speed(text, api="evp", algorithm="no-such-name"))
    assert {m.api for m in got.values()} == {"evp"}


def test_threads_from_the_command_line_name_the_evp_row():
    text = "\n".join(line for line in load("openssl-1.1.1w-x86_64-multi2-aes-256-gcm.txt").splitlines()
                     if not line.startswith(("Got:", "Forked")))
    parsed = parse_speed("# openssl speed -multi 2 -evp aes-256-gcm\n" + text)
    assert {(m.algorithm, m.threads, m.api) for m in parsed.measurements} == {("aes-256-gcm", 2, "evp")}


def test_child_output_glued_to_the_parent_lines():
    text = load("openssl-3.0.19-x86_64-multi2-aes-256-gcm.txt").replace("\nForked child 1", "Forked child 1")
    parsed = parse_speed(text)
    assert {m.threads for m in parsed.measurements} == {2}
    assert len(parsed.measurements) == 6


def test_3_5_real_public_key_run_also_measures_kem_and_signature_apis():
    got = cells(parse_speed(load("openssl-3.5.9-x86_64-pk.txt")))
    assert (got[("rsa2048", "encrypt")].ops_per_second, got[("rsa2048", "encrypt")].count) == (50767.3, 26399)
    assert (got[("rsa2048", "sign")].ops_per_second, got[("rsa2048-sig", "sign")].ops_per_second) == (3738.9, 3819.5)
    assert (got[("rsa2048-kem", "encaps")].ops_per_second, got[("rsa2048-kem", "encaps")].count) == (50795.0, 20318)
    assert got[("x25519", "op")].count == 13212


def test_3_5_real_kem_signature_tables():
    got = cells(parse_speed(load("openssl-3.5.9-x86_64-kem-sig.txt")))
    assert (got[("ml-kem-768", "decaps")].ops_per_second, got[("ml-kem-768", "decaps")].count) == (19683.7, 8464)
    assert (got[("ml-dsa-65", "sign")].ops_per_second, got[("ml-dsa-65", "sign")].seconds) == (972.7, 0.44)


def test_3_5_real_mr_kem_signature_lines_named_in_run_order():
    """+F9/+F10 indexes count the build's whole list (2, 13 …): names come from the progress lines."""
    got = cells(parse_speed(load("openssl-3.5.9-x86_64-mr-pk-kem-sig.txt")))
    assert got[("rsa2048-kem", "encaps")].ops_per_second == 48355.263158
    assert got[("ml-kem-768", "keygen")].ops_per_second == 18715.151515
    assert (got[("ml-dsa-65", "sign")].ops_per_second, got[("ml-dsa-65", "sign")].count) == (1002.5, 401)
    assert got[("rsa2048", "decrypt")].ops_per_second == 3359.375
    assert got[("ecdsap256", "verify")].count == 4901


def test_3_5_real_multi_kem_and_named_summary():
    got = cells(parse_speed(load("openssl-3.5.9-x86_64-multi2-ml-kem-768.txt")))
    assert (got[("ml-kem-768", "encaps")].ops_per_second, got[("ml-kem-768", "encaps")].threads) == (8852.2, 2)
    got = cells(parse_speed(load("openssl-3.5.9-x86_64-multi2-aes-256-gcm.txt")))
    assert (got[("aes-256-gcm", 16)].bytes_per_second, got[("aes-256-gcm", 16)].api) == (37575550.0, "evp")


def test_1_1_1_full_run_every_table():
    """`openssl speed -seconds 1` with no algorithm: every label 1.1.1 prints, all curves, 0.00 rows."""
    parsed = parse_speed(load("full-runs/openssl-1.1.1w-x86_64-all-algorithms.txt"))
    got = cells(parsed)
    throughput = {m.algorithm for m in parsed.measurements if m.operation is None}
    assert len(throughput) == 30 and len(parsed.measurements) == 30 * 6 + 14 + 6 + 44 + 24 + 4
    assert got[("camellia-128-cbc", 16)].bytes_per_second == 152864180.0  # label wider than %-13s
    assert got[("rc5-32/12-cbc", 64)].bytes_per_second is None
    assert got[("md2", 16)].status == "unsupported" and "0.00" in got[("md2", 16)].reason
    assert {got[("ghash", 16)].api, got[("rand", 16)].api, got[("aes-128-ige", 16)].api} == {"legacy"}
    assert got[("rsa15360", "sign")].ops_per_second == 4.3 and got[("rsa15360", "sign")].count == 2
    assert got[("ecdsabrp512t1", "verify")].ops_per_second == 1100.0
    assert got[("ecdsak283", "sign")].count == 1024  # second 283-bit curve keeps its own progress line
    assert got[("ecdsab283", "sign")].count == 1089
    assert got[("ecdhbrp256r1", "op")].ops_per_second == 3184.0
    assert got[("x448", "op")].ops_per_second == 2072.7
    assert got[("ed448", "verify")].count == 1839
    assert parsed.skipped == []


def test_3_5_full_run_every_table():
    parsed = parse_speed(load("full-runs/openssl-3.5.9-x86_64-all-algorithms.txt"))
    got = cells(parsed)
    assert parsed.skipped == [] and parsed.openssl.version == "3.5.9"
    assert all(m.count for m in parsed.measurements)  # every figure has its progress line
    assert got[("kmac128", 16)].api == "legacy" and got[("hmac(sha256)", 16)].api is None
    assert got[("rsa15360", "decrypt")].ops_per_second == 4.4
    assert (got[("sm2", "sign")].ops_per_second, got[("sm2", "sign")].count) == (2043.2, 899)
    assert got[("ffdh8192", "op")].ops_per_second == 147.1
    assert got[("slh-dsa-shake-256f", "sign")].ops_per_second == 8.2
    assert got[("x25519-kem", "encaps")].count is not None
    assert {"ml-kem-512", "x448mlkem1024", "ecp-384", "ml-dsa-87", "rsa512-sig"} <= {m.algorithm for m in parsed.measurements}


def test_3_0_aarch64_real_armcap_and_mixed_api():
    parsed = parse_speed(load("openssl-3.0.20-aarch64-qemu-evp-legacy-pk.txt"))
    got = cells(parsed)
    assert parsed.openssl.cpuinfo == "OPENSSL_armcap=0xfd" and parsed.openssl.version == "3.0.20"
    assert (got[("aes-128-gcm", 16)].bytes_per_second, got[("aes-128-gcm", 16)].api) == (1977650.0, "evp")
    assert (got[("aes-128-cbc", 16)].count, got[("aes-128-cbc", 16)].api) == (1251351, "legacy")
    assert (got[("rsa2048", "sign")].ops_per_second, got[("x25519", "op")].count) == (141.8, 4356)


def test_3_0_mipsel_real_router_class_output():
    parsed = parse_speed(load("openssl-3.0.20-mipsel-qemu-evp-chacha20-poly1305.txt"))
    got = cells(parsed)
    assert parsed.openssl.cpuinfo == "N/A" and parsed.openssl.options == "bn(64,32)"
    assert (got[("chacha20-poly1305", 16384)].bytes_per_second, got[("chacha20-poly1305", 16)].api) == (138899910.0, "evp")
    got = cells(parse_speed(load("openssl-3.0.20-mipsel-qemu-legacy-aes-128-cbc-pk.txt")))
    assert (got[("rsa2048", "sign")].ops_per_second, got[("ecdhp256", "op")].ops_per_second) == (48.0, 251.0)
    assert got[("aes-128-cbc", 8192)].api == "legacy" and got[("aes-128-cbc", 8192)].count is not None
