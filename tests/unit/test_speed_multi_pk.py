"""Public-key `-multi N` results of OpenSSL 3.0 (real runs of this machine's 3.0.22, tests/data/speed).

apps/speed.c: up to 1.1.0 the +F2..+F5 figures are seconds/op and `-multi` combines the children as
1/(1/a + 1/b); from 1.1.1 they are ops/s and `-multi` sums them. `-mr` prints no version block, so the
lines must tell the unit themselves. Each -multi figure is checked against a single-process run of the
same binary recorded next to it: N processes on this 2-core machine give 0.5x to 4x the single rate.
"""
from pathlib import Path

import pytest

from orchestrator.parse.speed import parse_speed

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"
PK = [("rsa2048", "sign"), ("rsa2048", "verify"), ("dsa2048", "sign"), ("dsa2048", "verify"),
      ("ecdsap256", "sign"), ("ecdsap256", "verify"), ("ecdhp256", "op"), ("ed25519", "sign"),
      ("ed25519", "verify")]


def load(name: str) -> str:
    return (DATA / name).read_text()


def ops(text: str) -> dict[tuple[str, str], float]:
    parsed = parse_speed(text)
    return {(m.algorithm, m.operation): m.ops_per_second for m in parsed.measurements if m.operation}


def threads(text: str) -> set[int]:
    return {m.threads for m in parse_speed(text).measurements}


def same_order_of_magnitude(multi: dict, single: dict) -> None:
    for key in single:
        assert 0.5 <= multi[key] / single[key] <= 4, (key, multi[key], single[key])


def test_mr_multi2_rsa2048_is_ops_per_second():
    """`openssl speed -seconds 1 -mr -multi 2 rsa2048`: the summary +F2 is the children's sum in ops/s."""
    text = load("openssl-3.0.22-x86_64-multi2-mr-rsa2048.txt")
    assert ops(text) == {("rsa2048", "sign"): 985.108911, ("rsa2048", "verify"): 37204.0}
    assert threads(text) == {2}
    same_order_of_magnitude(ops(text), {("rsa2048", "sign"): 1180.0, ("rsa2048", "verify"): 40327.777778})


def test_mr_multi4_rsa2048_is_ops_per_second():
    """Four children: the sum is 4x one child's progress rate, which once looked like seconds/op."""
    text = load("openssl-3.0.22-x86_64-multi4-mr-rsa2048.txt")
    assert ops(text) == {("rsa2048", "sign"): 1294.696116, ("rsa2048", "verify"): 55773.194175}
    assert threads(text) == {4}
    # without the children's `Got:` lines only the progress lines can tell the unit
    parent_only = "\n".join(line for line in text.splitlines() if not line.startswith("Got: "))
    assert ops(parent_only) == ops(text)


def test_mr_multi2_every_public_key_family_is_ops_per_second():
    """`-seconds 1 -mr -multi 2 rsa2048 dsa2048 ecdsap256 ecdhp256 ed25519` against the `-mr` single run."""
    single = ops(load("openssl-3.0.22-x86_64-mr-pk.txt"))
    assert single == {
        ("rsa2048", "sign"): 1180.0, ("rsa2048", "verify"): 40327.777778,
        ("dsa2048", "sign"): 2731.034483, ("dsa2048", "verify"): 3354.651163,
        ("ecdsap256", "sign"): 34979.069767, ("ecdsap256", "verify"): 12122.727273,
        ("ecdhp256", "op"): 16274.468085,
        ("ed25519", "sign"): 15204.597701, ("ed25519", "verify"): 6367.46988,
    }
    multi = ops(load("openssl-3.0.22-x86_64-multi2-mr-pk.txt"))
    assert multi == {
        ("rsa2048", "sign"): 1065.0, ("rsa2048", "verify"): 36204.0,
        ("dsa2048", "sign"): 2529.0, ("dsa2048", "verify"): 3002.0,
        ("ecdsap256", "sign"): 29119.0, ("ecdsap256", "verify"): 11398.0,
        ("ecdhp256", "op"): 15774.722772,
        ("ed25519", "sign"): 13326.0, ("ed25519", "verify"): 5920.0,
    }
    same_order_of_magnitude(multi, single)


@pytest.mark.parametrize("tags", [("+F2:",), ("+F3:",), ("+F4:",), ("+F2:", "+F3:", "+F4:")])
def test_mr_multi2_each_family_alone(tags):
    """The lines of one family only (as `-multi 2 ecdsap256` prints them): the children's sum decides."""
    text = load("openssl-3.0.22-x86_64-multi2-mr-pk.txt")
    kept = "\n".join(line for line in text.splitlines()
                     if line.startswith(("Forked", "+DTP", "+R")) or line.removeprefix("Got: ").startswith(tags))
    got = ops(kept)
    expected = ops(text)
    assert got and got == {key: expected[key] for key in got}
    stdout_only = "\n".join(line for line in kept.splitlines() if not line.startswith(("+DTP", "+R")))
    assert ops(stdout_only) == got


def test_human_multi2_table_against_the_single_run():
    """Without -mr the summary is the usual table (version block, sign/s columns)."""
    single = ops(load("openssl-3.0.22-x86_64-pk.txt"))
    assert single[("rsa2048", "sign")] == 1046.8 and single[("ed25519", "verify")] == 6558.2
    text = load("openssl-3.0.22-x86_64-multi2-pk.txt")
    multi = ops(text)
    assert multi == {
        ("rsa2048", "sign"): 939.0, ("rsa2048", "verify"): 29869.7,
        ("dsa2048", "sign"): 2127.0, ("dsa2048", "verify"): 1852.0,
        ("ecdsap256", "sign"): 27521.6, ("ecdsap256", "verify"): 9369.7,
        ("ecdhp256", "op"): 12763.0,
        ("ed25519", "sign"): 14544.3, ("ed25519", "verify"): 5000.0,
    }
    assert threads(text) == {2}
    same_order_of_magnitude(multi, single)


def test_single_mr_without_version_block():
    """The single -mr run (no version block, progress lines present) reads the same units."""
    parsed = parse_speed(load("openssl-3.0.22-x86_64-mr-pk.txt"))
    rsa = next(m for m in parsed.measurements if (m.algorithm, m.operation) == ("rsa2048", "sign"))
    assert (rsa.count, rsa.seconds, rsa.threads) == (1003, 0.85, 1)
    assert parsed.openssl.version is None


def test_1_1_0_mr_multi_seconds_per_op_combined_harmonically():
    """Constructed from the 1.1.0 apps/speed.c formats (no such binary here): children print
    `+F2:%u:%u:%f:%f` in seconds/op, the parent 1/(1/a + 1/b); `+F5` is `seconds:ops/s`."""
    text = "\n".join([
        "Forked child 0", "Forked child 1",
        "Got: +F2:2:2048:0.001000:0.000030 from 0",
        "Got: +F4:3:256:0.000100:0.000300 from 0",
        "Got: +F2:2:2048:0.001000:0.000030 from 1",
        "Got: +F4:3:256:0.000100:0.000300 from 1",
        "+F2:2:2048:0.000500:0.000015",
        "+F4:3:256:0.000050:0.000150",
    ])
    got = ops(text)
    assert got[("rsa2048", "sign")] == pytest.approx(2000.0)
    assert got[("rsa2048", "verify")] == pytest.approx(1 / 0.000015)
    assert got[("ecdsap256", "sign")] == pytest.approx(20000.0)
    # the ECDH line's order alone says seconds/op too (1.1.0 prints `seconds:ops/s`)
    got = ops("+F4:3:256:0.000100:0.000300\n+F5:3:256:0.000100:10000.000000\n")
    assert got[("ecdsap256", "sign")] == pytest.approx(10000.0)
    assert got[("ecdhp256", "op")] == 10000.0
