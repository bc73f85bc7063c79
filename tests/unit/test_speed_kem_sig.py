"""3.2+ KEM and signature tables, 3.5's ML-KEM / ML-DSA / SLH-DSA rows, LibreSSL's ML-KEM table (issue 12,
class 2), and public-key tables pasted with no header block at all (class 3). Human and `-mr` forms."""
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.model import OK, PARTIAL_CHILDREN
from orchestrator.parse.console import parse_console
from orchestrator.parse.speed import parse_speed

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"


def load(name: str) -> str:
    return (DATA / name).read_text()


def cells(text: str) -> dict:
    return {(m.algorithm, m.operation): m for m in parse_speed(text).measurements if m.operation}


@pytest.mark.parametrize("name", ["openssl-3.3.2-aarch64-constructed-rsa2048-kem-sig.txt",
                                  "openssl-3.3.2-aarch64-constructed-mr-rsa2048-kem-sig.txt"])
def test_3_2_and_3_3_kem_and_signature_tables(name):
    """`openssl speed rsa2048 ECP-256 X25519` in 3.3 (3.2 prints the same): rsa2048 in all three tables."""
    got = cells(load(name))
    assert set(got) == {("rsa2048", op) for op in ("sign", "verify", "encrypt", "decrypt")} | {
        (kem, op) for kem in ("ecp-256", "rsa2048-kem", "x25519-kem") for op in ("keygen", "encaps", "decaps")} | {
        ("rsa2048-sig", op) for op in ("keygen", "sign", "verify")}
    assert got[("ecp-256", "encaps")].ops_per_second == pytest.approx(52000 / 10.00, rel=1e-4)
    assert (got[("x25519-kem", "decaps")].count, got[("x25519-kem", "decaps")].seconds) == (299000, 9.99)
    assert got[("rsa2048-sig", "verify")].ops_per_second == pytest.approx(760200 / 10.00, rel=1e-4)
    assert got[("rsa2048-kem", "keygen")].count == 40 and got[("rsa2048", "sign")].count == 19130
    assert all(m.status == OK for m in got.values())


@pytest.mark.parametrize("name", ["libressl-4.3.0-constructed-rsa-ecdsa-mlkem.txt",
                                  "libressl-4.3.0-constructed-mr-rsa-ecdsa-mlkem.txt"])
def test_libressl_ml_kem_table_and_seconds_per_op(name):
    got = cells(load(name))
    for bits, counts in ((768, (121000, 98000, 135000)), (1024, (80100, 67000, 90500))):
        for op, count in zip(("keygen", "encaps", "decaps"), counts):
            m = got[(f"ml-kem-{bits}", op)]
            assert m.count == count and m.status == OK
            assert m.ops_per_second == pytest.approx(count / m.seconds, rel=1e-3)
    # -mr has no version block: LibreSSL's +F2/+F4 stay seconds/op (1.0.x), the ML-KEM line says so
    assert got[("rsa2048", "sign")].ops_per_second == pytest.approx(1520 / 9.98, rel=1e-3)
    assert got[("ecdsap256", "verify")].ops_per_second == pytest.approx(31000 / 9.99, rel=1e-3)
    assert parse_speed(load(name)).skipped == []


def test_libressl_multi_ml_kem_summary_prints_inf_so_the_children_are_summed():
    """LibreSSL's do_multi does not know the children's `+F6` lines: its ML-KEM row reads inf."""
    got = cells(load("libressl-4.3.0-constructed-multi2-mlkem768.txt"))
    keygen = got[("ml-kem-768", "keygen")]
    assert keygen.ops_per_second == pytest.approx(12100.0 + 11737.0)
    assert keygen.flags == [PARTIAL_CHILDREN] and keygen.threads == 2
    assert "'inf'" in keygen.reason and "2 of 2 children" in keygen.reason


def test_3_5_real_multi64_names_every_kem_and_signature_row():
    got = cells((DATA / "many-forks" / "openssl-3.5.9-x86_64-multi64-mr.txt").read_text())
    assert set(got) == {("ml-kem-768", op) for op in ("keygen", "encaps", "decaps")} | {
        ("ml-dsa-65", op) for op in ("keygen", "sign", "verify")}
    assert got[("ml-dsa-65", "verify")].ops_per_second == 15952.981632


@pytest.mark.parametrize("label, name", [("ML-KEM-768", "ml-kem-768"), ("mlkem768", "ml-kem-768"),
                                         ("mlkem 768", "ml-kem-768"), ("mldsa65", "ml-dsa-65"),
                                         ("SLH-DSA-SHA2-128s", "slh-dsa-sha2-128s"), ("X25519MLKEM768", "x25519mlkem768")])
def test_one_spelling_of_post_quantum_names(label, name):
    from orchestrator.parse.names import canonical_algorithm
    assert canonical_algorithm(label) == name


def table_only(name: str) -> str:
    """The tables of a log, as pasted alone: no version block, no progress lines."""
    keep = ("sign", "op ", "keygen", "rsa", "dsa", "mlkem", " ")
    lines = [line for line in load(name).splitlines()
             if line.startswith(keep) and not line.startswith(("Doing", "options", "compiler"))]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", ["libressl-4.3.0-constructed-multi4-rsa-table-alone.txt",
                                  "openssl-1.0.2u-mips-constructed-legacy-pk.txt",
                                  "openssl-1.1.1w-x86_64-pk.txt", "openssl-3.0.22-x86_64-pk.txt",
                                  "openssl-3.3.2-aarch64-constructed-rsa2048-kem-sig.txt",
                                  "openssl-3.5.9-x86_64-kem-sig.txt"])
def test_a_public_key_table_pasted_alone_is_read(name, tmp_path, capsys):
    text = table_only(name)
    assert "version" not in text and "Doing" not in text and "/s" in text
    full = {cell: m.ops_per_second for cell, m in cells(load(name)).items()}
    alone = {(m.algorithm, m.operation): m.ops_per_second for m in parse_console(text).measurements}
    assert alone and alone == {cell: full[cell] for cell in alone}
    path = tmp_path / "table.txt"
    path.write_text(text)
    assert main(["parse", str(path)]) == 0
    assert "verify/s" in capsys.readouterr().out
