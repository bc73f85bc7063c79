"""Matrix planning per OpenSSL version: capabilities, cells, unsupported cells with reasons, ETA."""
import pytest

from orchestrator.errors import UserError
from orchestrator.model import UNSUPPORTED
from orchestrator.run import matrix
from orchestrator.run.matrix import MatrixRequest, capabilities, plan_host


def plan(version, cpus=2, **request):
    return plan_host("h", MatrixRequest(**request), openssl_version=version, logical_cpus=cpus)


def by_id_part(p, text):
    return [c for c in p.cells if text in c.id]


@pytest.mark.parametrize("version, sizes, seconds, has_bytes", [
    ("OpenSSL 1.0.2u  20 Dec 2019", matrix.SIZES_OLD, False, False),
    ("1.1.0l", matrix.SIZES_NEW, False, False),
    ("OpenSSL 1.1.1w  11 Sep 2023", matrix.SIZES_NEW, True, True),
    ("3.0.19", matrix.SIZES_NEW, True, True),
    ("LibreSSL 3.8.2", matrix.SIZES_OLD, False, False),
])
def test_capabilities_per_version(version, sizes, seconds, has_bytes):
    caps = capabilities(version)
    assert caps.sizes == sizes
    assert caps.has_seconds is seconds
    assert caps.has_bytes is has_bytes


def test_libressl_is_not_mistaken_for_openssl_3():
    caps = capabilities("LibreSSL 3.8.2")
    assert caps.libressl and caps.label == "LibreSSL 3.8.2"


def test_rsa_has_four_operations_from_3_2():
    assert capabilities("3.0.19").rsa_operations == 2
    assert capabilities("3.2.1").rsa_operations == 4


def test_unknown_version_gets_the_modern_set():
    caps = capabilities(None)
    assert caps.version is None and caps.has_seconds


def test_openssl_3_default_matrix_evp_legacy_and_threads():
    p = plan("3.0.19", cpus=4, seconds=1)
    assert not p.unsupported
    ids = [c.id for c in p.cells]
    assert len(ids) == len(set(ids))
    # legacy only where a legacy name exists
    legacy = {c.algorithm for c in p.cells if c.api == "legacy"}
    assert legacy == {"aes-128-cbc", "aes-256-cbc", "sha256", "sha512"}
    evp = {c.algorithm for c in p.cells if c.api == "evp"}
    assert {"aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"} <= evp
    assert {c.threads for c in p.cells} == {1, 4}
    gcm4 = next(c for c in p.cells if c.algorithm == "aes-128-gcm" and c.threads == 4)
    # options before the algorithm name (1.1.0+ refuses `speed aes-128-gcm -multi 4`)
    assert gcm4.args == ["speed", "-mr", "-elapsed", "-seconds", "1", "-multi", "4", "-evp", "aes-128-gcm"]
    legacy_cbc = next(c for c in p.cells if c.algorithm == "aes-256-cbc" and c.api == "legacy" and c.threads == 1)
    assert legacy_cbc.args == ["speed", "-mr", "-elapsed", "-seconds", "1", "aes-256-cbc"]
    rsa = next(c for c in p.cells if c.algorithm == "rsa2048" and c.threads == 1)
    assert rsa.api is None and rsa.args == ["speed", "-mr", "-elapsed", "-seconds", "1", "rsa2048"] and rsa.seconds == 2


def test_one_cpu_host_does_not_run_multi_twice():
    p = plan("3.0.19", cpus=1)
    assert {c.threads for c in p.cells} == {1}
    assert not any("-multi" in c.args for c in p.cells)


def test_openssl_1_0_2_unsupported_cells_and_fixed_time():
    p = plan("OpenSSL 1.0.2u  20 Dec 2019", cpus=2, seconds=1)
    assert not any("-seconds" in c.args or "-bytes" in c.args for c in p.cells)
    assert all(c.args[1:3] == ["-mr", "-elapsed"] for c in p.cells)  # wall clock in every version
    assert p.cells and matrix.MatrixRequest().to_dict()["timing"] == "elapsed"
    assert not any(c.algorithm in ("chacha20-poly1305", "ed25519") for c in p.cells)
    unsupported = {(m.algorithm, m.threads) for m in p.unsupported}
    assert ("chacha20-poly1305", 1) in unsupported and ("ed25519", 2) in unsupported
    assert all(m.status == UNSUPPORTED and m.reason for m in p.unsupported)
    chacha = [m for m in p.unsupported if m.algorithm == "chacha20-poly1305"]
    assert sorted({m.block_size for m in chacha}) == list(matrix.SIZES_OLD)
    assert "1.1.0" in chacha[0].reason
    assert any("-seconds" in note for note in p.notes)
    gcm = next(c for c in p.cells if c.algorithm == "aes-128-gcm" and c.threads == 1)
    assert gcm.seconds == 3 * 5  # five sizes at the fixed 3 s
    rsa = next(c for c in p.cells if c.algorithm == "rsa2048" and c.threads == 1)
    assert rsa.seconds == 2 * 10  # sign + verify at the fixed 10 s


def test_openssl_1_1_0_has_chacha_but_no_ed25519_or_seconds():
    p = plan("1.1.0l", cpus=1, seconds=2)
    assert any(c.algorithm == "chacha20-poly1305" for c in p.cells)
    assert {m.algorithm for m in p.unsupported} == {"ed25519"}
    assert not any("-seconds" in c.args for c in p.cells)


def test_openssl_1_1_1_sizes_become_bytes_cells():
    p = plan("1.1.1w", cpus=1, sizes=(16, 16384), algorithms=("aes-128-gcm",), apis=("evp",), seconds=1)
    assert [c.args for c in p.cells] == [
        ["speed", "-mr", "-elapsed", "-seconds", "1", "-bytes", "16", "-evp", "aes-128-gcm"],
        ["speed", "-mr", "-elapsed", "-seconds", "1", "-bytes", "16384", "-evp", "aes-128-gcm"],
    ]
    assert [c.sizes for c in p.cells] == [(16,), (16384,)]
    assert p.eta_seconds == 2


def test_old_openssl_filters_sizes_and_marks_missing_ones():
    p = plan("1.0.2k", cpus=1, sizes=(1024, 16384), algorithms=("aes-128-cbc",), apis=("evp",))
    assert len(p.cells) == 1 and p.cells[0].sizes == (1024,)
    assert p.cells[0].seconds == 3 * 5  # the whole fixed table runs; only 1024 is kept
    assert [(m.block_size, m.status) for m in p.unsupported] == [(16384, UNSUPPORTED)]
    assert "-bytes" in p.unsupported[0].reason


def test_libressl_plan():
    p = plan("LibreSSL 3.8.2", cpus=2)
    assert {m.algorithm for m in p.unsupported} == {"chacha20-poly1305", "ed25519"}
    assert not any("-seconds" in c.args for c in p.cells)


def test_repeat_runs_every_cell_again_but_records_unsupported_once():
    p1 = plan("1.0.2u", cpus=1, algorithms=("aes-128-gcm", "ed25519"), apis=("evp",))
    p3 = plan("1.0.2u", cpus=1, algorithms=("aes-128-gcm", "ed25519"), apis=("evp",), repeat=3)
    assert len(p3.cells) == 3 * len(p1.cells)
    assert sorted(c.repeat for c in p3.cells) == [0, 1, 2]
    assert len(p3.unsupported) == len(p1.unsupported) == 1
    assert p3.eta_seconds == 3 * p1.eta_seconds


def test_cells_text_is_tab_separated_and_safe():
    p = plan("3.0.19", cpus=2, algorithms=("sha256",), seconds=1)
    text = matrix.cells_text(p.cells)
    lines = text.splitlines()
    assert len(lines) == len(p.cells)
    for line, cell in zip(lines, p.cells):
        ident, pin, args = line.split("\t")
        assert ident == cell.id and pin == "-" and args.split(" ") == cell.args
        assert all(matrix.SAFE_TOKEN.match(token) for token in [ident, *cell.args])


@pytest.mark.parametrize("bad", ["aes;rm -rf /", "$(reboot)", "sha256`id`", "a b", "../x", "-evp"])
def test_request_refuses_algorithm_names_with_shell_metacharacters(bad):
    with pytest.raises(UserError):
        matrix.parse_request(algorithms=bad)


def test_cell_builder_refuses_unsafe_tokens_even_without_parse_request():
    with pytest.raises(UserError):
        plan_host("h", MatrixRequest(algorithms=("x;reboot",)), openssl_version="3.0.0", logical_cpus=1)


@pytest.mark.parametrize("kwargs", [dict(sizes="16,abc"), dict(threads="1,many"), dict(apis="evp,fast"),
                                    dict(seconds=0), dict(repeat=0), dict(sizes="0")])
def test_request_errors_say_what_is_allowed(kwargs):
    with pytest.raises(UserError):
        matrix.parse_request(**kwargs)


@pytest.mark.parametrize("option, kwargs", [("--algorithms", dict(algorithms="")), ("--sizes", dict(sizes=" , ")),
                                            ("--threads", dict(threads="")), ("--api", dict(apis=","))])
def test_an_empty_option_is_refused_not_taken_for_the_default(option, kwargs):
    """`--algorithms "$ALGS"` with ALGS unset ran the whole default matrix, quietly."""
    with pytest.raises(UserError, match=f"^{option} is empty"):
        matrix.parse_request(**kwargs)


def test_request_parsing():
    req = matrix.parse_request("AES-128-GCM, sha256", "16,1024", "1,all,3", "evp", 2, 4)
    assert req.algorithms == ("aes-128-gcm", "sha256")
    assert req.sizes == (16, 1024) and req.threads == ("1", "all", "3") and req.apis == ("evp",)
    assert req.seconds == 2 and req.repeat == 4
    assert matrix.resolve_threads(req.threads, 3) == [1, 3]


BIG_LITTLE = [(7, "Cortex-A72"), (3, "Cortex-A53")]


def test_big_little_single_thread_cells_run_once_per_cluster_and_multi_on_all_cores():
    p = plan_host("h", MatrixRequest(algorithms=("aes-128-gcm", "ed25519"), sizes=(1024,), seconds=1),
                  openssl_version="3.0.19", logical_cpus=8, pins=BIG_LITTLE)
    single = [c for c in p.cells if c.threads == 1]
    assert sorted((c.algorithm, c.pin, c.cpu) for c in single) == [
        ("aes-128-gcm", 3, "Cortex-A53"), ("aes-128-gcm", 7, "Cortex-A72"),
        ("ed25519", 3, "Cortex-A53"), ("ed25519", 7, "Cortex-A72")]
    multi = [c for c in p.cells if c.threads == 8]
    assert len(multi) == 2 and all(c.pin is None and c.cpu is None and "-multi" in c.args for c in multi)
    assert len({c.id for c in p.cells}) == len(p.cells) and any(c.id.endswith("-c7-r0") for c in single)
    # the ETA counts every pinned run
    unpinned = plan_host("h", MatrixRequest(algorithms=("aes-128-gcm", "ed25519"), sizes=(1024,), seconds=1),
                         openssl_version="3.0.19", logical_cpus=8)
    assert p.eta_seconds == unpinned.eta_seconds + sum(c.seconds for c in unpinned.cells if c.threads == 1)
    lines = matrix.cells_text(p.cells).splitlines()
    assert {line.split("\t")[1] for line in lines} == {"7", "3", "-"}


def test_pin_targets_must_be_cpu_numbers():
    with pytest.raises(UserError):
        plan_host("h", MatrixRequest(), openssl_version="3.0.0", logical_cpus=2, pins=[("7;reboot", "x")])
