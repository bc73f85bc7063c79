"""Measuring methods (orchestrator/methods.py) against the published logs of their boundaries (tests/data/methods,
sources in its README), and a planted store: a method change named and never failing CI, a real -20 % under one
method failing it (exit 3), a drift in the newest runs of a young firmware flagged and failing it."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from orchestrator import cli, methods, store
from orchestrator.analysis import identity
from orchestrator.analysis.cells import host_cells
from orchestrator.model import HostResult, Measurement, OpenSSLBuild, OsFacts, Run
from orchestrator.parse import parse_console, parse_openssl_build

DATA = Path(__file__).resolve().parents[1] / "data" / "methods"
OLD_LOG = DATA / "openssl-27513-ubuntu-24.10-openssl-3.3.1.txt"
NEW_LOG = DATA / "openssl-27513-ubuntu-25.04-openssl-3.4.1.txt"
NOISE = (1.0, 1.004, 0.996, 1.002, 0.998)  # five nightly samples around each published figure


# ---- both versions ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, program, library", [
    ("OpenSSL 3.0.16 11 Feb 2025 (Library: OpenSSL 3.0.15 3 Sep 2024)", "3.0.16", "3.0.15"),  # apps/version.c 3.x
    ("OpenSSL 3.0.20 7 Apr 2026 (Library: OpenSSL 3.0.20 7 Apr 2026)", "3.0.20", "3.0.20"),  # tests/data/detect
    ("OpenSSL 3.0.15, built on 3 Sep 2024 (Library: OpenSSL 3.0.15 3 Sep 2024)", "3.0.15", "3.0.15"),  # sbc-bench
    ("OpenSSL 1.0.1u  22 Sep 2016 (Library: OpenSSL 1.0.1t  3 May 2016)", "1.0.1u", "1.0.1t"),  # 1.0.x mismatch
    ("OpenSSL 1.1.1w  11 Sep 2023", "1.1.1w", "1.1.1w"),  # 1.x prints the library only where it differs
    ("LibreSSL 3.8.2", "LibreSSL 3.8.2", "LibreSSL 3.8.2"),
])
def test_openssl_version_gives_program_and_library(line, program, library):
    build = parse_openssl_build(line + "\nbuilt on: Tue Sep  3 12:00:00 2024 UTC\n")
    assert (build.program_version, build.library_version) == (program, library)
    assert build.versions_differ == (program != library)


def test_speed_output_gives_the_library_version_only():
    """`openssl speed` prints OpenSSL_version(): libcrypto's; the program's stays unknown."""
    log = parse_console("version: 3.0.16\nbuilt on: x\noptions: bn(64,64)\n"
                        "type             16 bytes     64 bytes    256 bytes   1024 bytes   8192 bytes  16384 bytes\n"
                        "AES-256-GCM     98618.55k   394476.50k  1390938.11k  3727418.37k  9646120.96k 10924725.59k\n")
    assert (log.openssl.program_version, log.openssl.library_version) == (None, "3.0.16")


def test_openwrt_18929_program_over_another_library_is_labelled_and_measured_by_the_program():
    """openssl-util 3.0.15 over libopenssl 3.0.16 (the report's text): the label says both, the method is 3.0.15's."""
    report = (DATA / "openwrt-18929-report.txt").read_text()
    assert "Using the same libopenssl 3.0.16" in report and "openssl 3.0.15 test speed is normal" in report
    fast = HostResult("owrt", os=OsFacts("openwrt", "OpenWrt", "24.10.1"),
                      openssl=parse_openssl_build("OpenSSL 3.0.15 3 Sep 2024 (Library: OpenSSL 3.0.16 11 Feb 2025)"),
                      measurements=[Measurement("aes-256-gcm", 16, 1e8, api="evp", openssl_version="3.0.16")])
    slow = HostResult("owrt", os=OsFacts("openwrt", "OpenWrt", "24.10.1"),
                      openssl=parse_openssl_build("OpenSSL 3.0.16 11 Feb 2025 (Library: OpenSSL 3.0.16 11 Feb 2025)"),
                      measurements=[Measurement("aes-256-gcm", 16, 1e7, api="evp", openssl_version="3.0.16")])
    assert identity.firmware_label(fast) == "OpenWrt 24.10.1 · OpenSSL 3.0.15 (libcrypto 3.0.16)"
    (old,), (new,) = host_cells(fast, timer="elapsed").values(), host_cells(slow, timer="elapsed").values()
    change = methods.compare(old.methods, new.methods)
    assert change is not None and change.cause == "aead-per-message"
    assert change.sentence.endswith("from 3.0.16 on; not comparable with 3.0.15")


# ---- the table --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("before, first", [("3.0.15", "3.0.16"), ("3.1.7", "3.1.8"), ("3.2.3", "3.2.4"),
                                           ("3.3.2", "3.3.3"), ("3.4.0", "3.4.1")])
def test_aead_change_first_carried_per_branch(before, first):
    (aead,) = [c for c in methods.CHANGES if c.id == "aead-per-message"]
    assert methods.carries(aead, before) is False and methods.carries(aead, first) is True
    assert methods.carries(aead, "3.5.0") and methods.carries(aead, "3.6.1") and not methods.carries(aead, "1.1.1w")
    assert methods.carries(aead, "LibreSSL 4.3.0") is False  # its speed.c keeps the stream loop
    assert methods.carries(aead, None) is None


def test_28063_git_log_holds_the_commits_the_table_cites_for_3_0_16():
    log = (DATA / "openssl-28063-git-log-3.0.15..3.0.16-apps-speed.c.txt").read_text()
    by_id = {c.id: c for c in methods.CHANGES}
    assert "336b86f0" in " ".join(by_id["aead-per-message"].sources) and "commit 336b86f0" in log
    assert "4836c042" in " ".join(by_id["evp-iv-at-init"].sources) and "commit 4836c042" in log
    assert not by_id["evp-iv-at-init"].changes_figures  # the timed loop stayed: -evp CBC stays comparable
    assert methods.method_id("aes-128-cbc", "evp", None, "3.0.15") == methods.method_id("aes-128-cbc", "evp", None, "3.0.16")


@pytest.mark.parametrize("algorithm, api, operation, kind", [
    ("aes-256-gcm", "evp", None, methods.AEAD), ("aes-128-ccm", "evp", None, methods.AEAD),
    ("chacha20-poly1305", "evp", None, methods.CIPHER),  # speed.c tests the mode: ChaCha20-Poly1305 is not one
    ("aes-128-cbc", "legacy", None, methods.CIPHER), ("sha256", "evp", None, methods.DIGEST),
    ("rsa2048", None, "sign", methods.PK), ("ml-kem-768", None, "encaps", methods.KEM_SIG),
    ("rsa2048-kem", None, "encaps", methods.KEM_SIG)])
def test_kinds(algorithm, api, operation, kind):
    assert methods.kind_of(algorithm, operation) == kind


def test_other_boundaries():
    def same(cell: tuple[str, str | None, str | None], a: str, b: str, timer_a: str | None = None,
             timer_b: str | None = None) -> bool:
        return methods.compare({methods.method_id(*cell, a, timer_a): a}, {methods.method_id(*cell, b, timer_b): b}) is None

    assert not same(("aes-128-cbc", "legacy", None), "1.1.1w", "3.0.0")  # legacy names through EVP from 3.0
    assert same(("aes-128-cbc", "evp", None), "1.1.1w", "3.0.0")
    assert not same(("rsa2048", None, "sign"), "1.1.1w", "3.0.2")
    assert same(("ed25519", None, "sign"), "1.1.1w", "3.0.2")  # EVP_PKEY from the start
    assert same(("chacha20-poly1305", "evp", None), "3.0.15", "3.0.16")
    assert not same(("sha256", "evp", None), "3.0.2", "3.0.2", "cpu", "elapsed")  # the timer
    assert same(("sha256", "evp", None), "3.0.2", "3.0.2", None, "elapsed")  # unknown timer: cannot tell


# ---- a planted store ---------------------------------------------------------------------------------------

def _published(path: Path) -> list[Measurement]:
    return [m for m in parse_console(path.read_text()).measurements if m.algorithm == "aes-256-gcm"]


def _save(root: Path, day: int, result: HostResult) -> None:
    run_id = f"202605{day:02d}T000000Z-{day:04x}"
    store.save_run(store.new_run_dir(root, run_id),
                   Run(run_id, f"2026-05-{day:02d}T00:00:00+00:00", matrix={"timing": "elapsed"}, hosts=[result]))


def _night(host: str, os_facts: OsFacts, version: str, figures: list[Measurement], factor: float) -> HostResult:
    build = OpenSSLBuild(version=version, program_version=version, library_version=version)
    ms = [Measurement(m.algorithm, m.block_size, (m.bytes_per_second or 0) * factor * f, api="evp",
                      openssl_version=version, repeat=r) for m in figures for r, f in enumerate(NOISE[:4])]
    return HostResult(host, os=os_facts, openssl=build, measurements=ms)


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """ubuntu: five nights under 24.10 (OpenSSL 3.3.1), five under 25.04 (3.4.1), the figures of #27513.
    kernel: five nights each of two kernels under one OpenSSL 3.3.1, the newer 20 % slower.
    nightly: six nights of OpenWrt 23.05.4, then five of 23.05.5 whose last two are 12 % slower."""
    old, new = _published(OLD_LOG), _published(NEW_LOG)
    day = 1
    for release, version, figures in (("24.10", "3.3.1", old), ("25.04", "3.4.1", new)):
        for night in range(5):
            _save(tmp_path, day, _night("ubuntu", OsFacts("ubuntu", "Ubuntu", release), version, figures, NOISE[night]))
            day += 1
    for kernel, level in (("6.8.0-31", 1.0), ("6.8.0-45", 0.8)):
        for night in range(5):
            _save(tmp_path, day, _night("kernel", OsFacts("ubuntu", "Ubuntu", "24.10", kernel=kernel), "3.3.1", old,
                                        level * NOISE[night]))
            day += 1
    for release, levels in (("23.05.4", [1.0] * 6), ("23.05.5", [1.0, 1.0, 1.0, 0.88, 0.88])):
        for night, level in enumerate(levels):
            _save(tmp_path, day, _night("nightly", OsFacts("openwrt", "OpenWrt", release), "3.0.15", old,
                                        level * NOISE[night % 5]))
            day += 1
    return tmp_path


def test_method_change_is_named_and_never_fails_ci(planted, capsys, golden):
    code = cli.main(["diff", "--host", "ubuntu", "--by", "firmware", "--fail-on-regression", "5",
                     "--results", str(planted)])
    out = capsys.readouterr().out
    golden("diff-method-changed-27513.txt", out)
    assert code == 0
    assert "from 3.4.1 on; not comparable with 3.3.1" in out
    assert "6 cell(s) set aside, not judged: measuring method changed" in out
    assert "-aead" in out  # the closest comparison is offered


def test_method_change_is_skipped_in_junit_with_its_reason(planted, capsys, golden):
    code = cli.main(["diff", "--host", "ubuntu", "--by", "firmware", "--fail-on-regression", "5", "--format", "junit",
                     "--results", str(planted)])
    xml = capsys.readouterr().out
    golden("diff-method-changed-27513.junit.xml", xml)
    assert code == 0
    skipped = [s.get("message", "") for s in ET.fromstring(xml).iter("skipped")]
    assert len(skipped) == 6 and all("from 3.4.1 on; not comparable with 3.3.1" in s for s in skipped)


def test_method_change_in_trend_is_not_a_step(planted, capsys, golden):
    code = cli.main(["trend", "ubuntu", "--fail-on-regression", "5", "--results", str(planted)])
    out = capsys.readouterr().out
    golden("trend-method-changed-27513.txt", out)
    assert code == 0
    assert "no step between firmware versions" in out and "measuring method changed" in out


def test_a_real_drop_under_one_method_still_fails(planted, capsys):
    assert cli.main(["diff", "--host", "kernel", "--by", "firmware", "--fail-on-regression", "5",
                     "--results", str(planted)]) == 3
    assert "6 significant regression(s) worse than -5%" in capsys.readouterr().out
    assert cli.main(["trend", "kernel", "--fail-on-regression", "5", "--results", str(planted)]) == 3


def test_newest_runs_drift_of_a_young_firmware_is_flagged_and_fails(planted, capsys, golden):
    code = cli.main(["trend", "nightly", "--fail-on-regression", "5", "--results", str(planted)])
    out = capsys.readouterr().out
    golden("trend-newest-runs-drift.txt", out)
    assert code == 3
    assert "against the host's stable history: 6 runs of earlier firmware" in out
    assert "2 runs until" in out
    cli.main(["trend", "nightly", "--fail-on-regression", "5", "--format", "junit", "--results", str(planted)])
    xml = capsys.readouterr().out
    golden("trend-newest-runs-drift.junit.xml", xml)
    (failure,) = ET.fromstring(xml).iter("failure")
    assert "against the host's stable history, worse than -5%" in failure.get("message", "")


# ---- what the line rate predicts -----------------------------------------------------------------------------

def test_kernel_paths_from_a_real_proc_crypto_snapshot():
    """rk3576 (tests/data/conditions): the kernel's gcm(aes) is gcm-aes-ce at priority 300; nothing for WireGuard's
    chacha20/poly1305 was loaded, which is said rather than guessed."""
    from orchestrator.analysis import insights
    from orchestrator.evidence.conditions import parse_conditions

    snapshot = parse_conditions((DATA.parent / "conditions" / "rk3576-before.txt").read_text())
    paths = {p.path: p.said for p in insights.kernel_paths(HostResult("rk", conditions={"before": snapshot}))}
    assert paths["kernel IPsec AES-GCM"] == "gcm(aes): gcm-aes-ce (priority 300)"
    assert paths["WireGuard"].startswith("not in /proc/crypto")
    assert insights.kernel_paths(HostResult("no-evidence")) == []


# ---- a real program over another libcrypto -----------------------------------------------------------------

MIX = DATA / "openssl-3.0.22-program-over-libcrypto-3.0.20.session.txt"


def test_real_program_over_another_libcrypto_imports_with_both_versions(tmp_path, capsys):
    """Debian 12's openssl 3.0.22 binary over a bookworm libcrypto.so.3 of 3.0.20 (how it was made: the README):
    `openssl version` names both, `openssl speed` only the library; history, hosts and diff show both."""
    from orchestrator.commands.hosts import _openssl_said

    assert cli.main(["import", str(MIX), "--host", "mix", "--results", str(tmp_path)]) == 0
    (run,) = store.load_all(tmp_path)
    build = run.hosts[0].openssl
    assert (build.program_version, build.library_version) == ("3.0.22", "3.0.20")
    assert _openssl_said(build) == "3.0.22 (libcrypto 3.0.20)"
    capsys.readouterr()
    assert cli.main(["history", "mix", "--results", str(tmp_path)]) == 0
    assert "OpenSSL 3.0.22 (libcrypto 3.0.20)" in capsys.readouterr().out
    (cell,) = host_cells(run.hosts[0], timer="elapsed").values()
    assert cell.methods == {methods.method_id("aes-256-gcm", "evp", None, "3.0.22", "elapsed"): "3.0.22"}


def test_diff_of_two_runs_names_the_openssl_versions_where_they_changed(tmp_path, capsys):
    old = HostResult("owrt", openssl=parse_openssl_build("OpenSSL 3.0.15 3 Sep 2024 (Library: OpenSSL 3.0.16 11 Feb 2025)"),
                     measurements=[Measurement("aes-256-gcm", 16, 1e8, api="evp")])
    new = HostResult("owrt", openssl=parse_openssl_build("OpenSSL 3.0.16 11 Feb 2025 (Library: OpenSSL 3.0.16 11 Feb 2025)"),
                     measurements=[Measurement("aes-256-gcm", 16, 1e7, api="evp")])
    for day, result in ((1, old), (2, new)):
        _save(tmp_path, day, result)
    capsys.readouterr()
    assert cli.main(["diff", "20260501T000000Z-0001", "20260502T000000Z-0002", "--results", str(tmp_path),
                     "--fail-on-regression", "5"]) == 0
    out = capsys.readouterr().out
    assert "owrt: OpenSSL 3.0.15 (libcrypto 3.0.16) → 3.0.16" in out
    assert "from 3.0.16 on; not comparable with 3.0.15" in out


def test_site_host_page_says_the_method_changed(tmp_path):
    """The #27513 upgrade alone, published: the host's page lists the boundary under its own heading."""
    old, new = _published(OLD_LOG), _published(NEW_LOG)
    for day, (release, version, figures) in enumerate((("24.10", "3.3.1", old), ("25.04", "3.4.1", new)), start=1):
        _save(tmp_path / "results", day, _night("ubuntu", OsFacts("ubuntu", "Ubuntu", release), version, figures, 1.0))
    assert cli.main(["publish", str(tmp_path / "results"), "-o", str(tmp_path / "site")]) == 0
    pages = "".join(page.read_text() for page in (tmp_path / "site").rglob("*.html"))
    assert "Measuring method changed" in pages
    assert "6 cell(s) at Ubuntu 24.10 → Ubuntu 25.04: openssl speed times AEAD modes" in pages


def test_report_of_the_two_runs_names_the_method_change_and_plots_no_bar_for_it(tmp_path):
    from orchestrator.render import report

    old, new = _published(OLD_LOG), _published(NEW_LOG)
    runs = [Run(f"2026050{day}T000000Z-000{day}", f"2026-05-0{day}T00:00:00+00:00", matrix={"timing": "elapsed"},
                hosts=[_night("ubuntu", OsFacts("ubuntu", "Ubuntu", release), version, figures, 1.0)])
            for day, (release, version, figures) in ((1, ("24.10", "3.3.1", old)), (2, ("25.04", "3.4.1", new)))]
    text = report.render_html(runs, tmp_path / "r.html", links=[100, 1000]).read_text(encoding="utf-8")
    assert "6 cell(s) marked `method`: measuring method changed" in text.replace("&#x27;", "'").replace("&#96;", "`")
    assert "from 3.4.1 on; not comparable with 3.3.1" in text
    assert "Change 20260501T000000Z-0001" not in text  # every row is `method`: no bar chart of them


def test_run_json_round_trips_both_versions_and_old_files_load_without_them():
    build = parse_openssl_build("OpenSSL 3.0.16 11 Feb 2025 (Library: OpenSSL 3.0.15 3 Sep 2024)")
    run = Run("r", "2026-05-01T00:00:00+00:00", hosts=[HostResult("h", openssl=build)])
    again = Run.from_dict(run.to_dict()).hosts[0].openssl
    assert (again.program_version, again.library_version) == ("3.0.16", "3.0.15")
    old = {"schema": 3, "run_id": "r", "created": "2026-01-01T00:00:00+00:00",
           "hosts": [{"host": "h", "openssl": {"version": "3.0.13", "version_line": "OpenSSL 3.0.13 30 Jan 2024"}}]}
    loaded = Run.from_dict(old).hosts[0].openssl
    assert (loaded.version, loaded.program_version, loaded.library_version) == ("3.0.13", None, None)
    assert not loaded.versions_differ and loaded.versions_said() == "3.0.13"


# ---- reviewed against apps/speed.c: -aead, ECDH, EdDSA, the 1.x speed block ---------------------------------

def _compare(cell: tuple[str, str | None, str | None], a: str, b: str, aead_a: bool | None = False,
             aead_b: bool | None = False) -> methods.MethodChange | None:
    return methods.compare({methods.method_id(*cell, a, "elapsed", aead_a): a},
                           {methods.method_id(*cell, b, "elapsed", aead_b): b})


def test_chacha20_poly1305_changed_at_3_0_16_only_with_aead():
    """Before #25823 -aead picked EVP_Update_loop_aead for every EVP_CIPH_FLAG_AEAD_CIPHER cipher, ChaCha20-Poly1305
    too; after it only the AEAD modes get a per-message loop and -aead only swaps the block lengths."""
    chacha = ("chacha20-poly1305", "evp", None)
    assert _compare(chacha, "3.0.15", "3.0.16") is None  # without -aead: the same stream loop
    changed = _compare(chacha, "3.0.15", "3.0.16", True, True)
    assert changed is not None and changed.cause == "aead-flag-loop" and not changed.maybe
    assert _compare(chacha, "3.3.1", "3.4.1", True, True) is not None
    assert _compare(chacha, "3.0.16", "3.5.0", True, True) is None
    gcm = _compare(("aes-256-gcm", "evp", None), "3.0.15", "3.0.16", True, True)  # -aead GCM: key set per message
    assert gcm is not None and gcm.cause == "aead-per-message"


def test_unknown_aead_use_is_flagged_may_have_changed_across_the_boundary_never_judged():
    chacha = ("chacha20-poly1305", "evp", None)
    maybe = _compare(chacha, "3.0.15", "3.0.16", None, None)
    assert maybe is not None and maybe.maybe and maybe.cause == "aead-flag-loop"
    assert "may have changed" in maybe.sentence and "-aead" in maybe.sentence
    assert _compare(chacha, "3.0.16", "3.0.17", None, None) is None  # the same side of the boundary: same method
    assert _compare(("aes-256-cbc", "evp", None), "3.0.15", "3.0.16", None, None) is None  # not AEAD-flagged
    # an unknown -aead use against a known plain cell of one ruler is taken as plain (as an unknown version is);
    # against a known -aead cell it may have changed
    assert _compare(chacha, "3.0.16", "3.0.16", False, None) is None
    mixed = _compare(chacha, "3.0.16", "3.0.16", True, None)
    assert mixed is not None and mixed.maybe and mixed.cause == "with-aead"
    across = _compare(("aes-256-gcm", "evp", None), "3.0.15", "3.0.16", None, False)
    assert across is not None and across.cause == "aead-per-message" and not across.maybe
    known = _compare(chacha, "3.0.16", "3.0.16", False, True)  # -aead is a ruler of its own
    assert known is not None and known.cause == "with-aead" and not known.maybe


def _imported(sizes: tuple[int, ...], version: str = "3.0.15") -> HostResult:
    return HostResult("h", openssl=OpenSSLBuild(version=version), measurements=[
        Measurement("chacha20-poly1305", size, 1e8, api="evp") for size in sizes])


def test_aead_use_is_read_from_the_run_or_the_block_lengths():
    """sslbench's own runs never pass -aead; an imported log says it by its block lengths (2, 31, 136 only with
    -aead, 16, 64, 256 only without); a log of 1024-byte cells alone cannot tell."""
    from orchestrator.analysis.cells import run_aead

    assert run_aead(Run("r", "2026-05-01T00:00:00+00:00")) is False
    assert run_aead(Run("r", "2026-05-01T00:00:00+00:00", source="import")) is None

    def ids(result: HostResult, aead: bool | None) -> set[str]:
        return {m for cell in host_cells(result, aead=aead).values() for m in cell.methods}
    assert ids(_imported((2, 31, 136, 1024)), None) == {"cipher+with-aead"}
    assert ids(_imported((16, 64, 256, 1024)), None) == {"cipher"}
    assert ids(_imported((1024,)), None) == {"cipher+~with-aead"}
    assert ids(_imported((1024,), "3.0.16"), None) == {"cipher+~with-aead+~aead-flag-loop"}
    assert ids(_imported((1024,)), False) == {"cipher"}


def test_ecdh_moved_to_evp_pkey_derive_in_1_1_1_and_never_in_libressl():
    ecdh = ("ecdhp256", None, "op")
    changed = _compare(ecdh, "1.1.0l", "1.1.1w")
    assert changed is not None and changed.cause == "ecdh-via-evp-derive"
    assert _compare(ecdh, "1.1.1w", "3.0.0") is None
    libressl = _compare(ecdh, "LibreSSL 3.8.2", "1.1.1w")
    assert libressl is not None and libressl.cause == "ecdh-via-evp-derive"
    for cell in (("rsa2048", None, "sign"), ("ecdsap256", None, "sign"), ("dsa2048", None, "verify")):
        assert _compare(cell, "1.1.0l", "1.1.1w") is None
        pk = _compare(cell, "1.1.1w", "3.0.0")
        assert pk is not None and pk.cause == "pk-via-evp-pkey"


def test_eddsa_sign_changed_at_3_0_10_and_3_1_2_as_the_release_tags_say():
    """openssl/openssl#21491: EVP_DigestSignInit before every sign. Its commits are in the tags openssl-3.0.10
    (2fb42a7b76), openssl-3.1.2 (cb80e6bf3d) and openssl-3.2.0 (0c85bcbaea), not in 3.0.9 or 3.1.1: a cell of 3.0.9
    against 3.0.10 changed, one of 3.0.10 against 3.0.11 did not, and neither is hedged."""
    sign = ("ed25519", None, "sign")
    for a, b in (("3.0.9", "3.0.10"), ("3.0.9", "3.0.11"), ("3.1.1", "3.1.2"), ("3.1.1", "3.2.0")):
        changed = _compare(sign, a, b)
        assert changed is not None and changed.cause == "eddsa-sign-init" and not changed.maybe, (a, b)
    for a, b in (("3.0.10", "3.0.11"), ("3.1.2", "3.1.3"), ("3.0.10", "3.2.0"), ("3.0.8", "3.0.9")):
        assert _compare(sign, a, b) is None, (a, b)
    assert _compare(("ed448", None, "sign"), "3.1.1", "3.2.0") is not None
    assert _compare(sign, "1.1.1w", "3.0.9") is None  # EVP_DigestSign in a loop in both
    assert _compare(("ed25519", None, "verify"), "3.0.9", "3.0.11") is None


def test_each_checked_release_is_the_first_the_row_names():
    """A row's `checked` note names, per branch, the tag its `first` was checked against: the two never disagree."""
    for change in methods.CHANGES:
        for branch, note in change.checked.items():
            tag = re.escape(f"openssl-{change.first[branch]}")
            assert re.search(rf"\btag {tag}\b(?![.-])", note.split(",")[0]), (change.id, branch, note)
    eddsa = next(c for c in methods.CHANGES if c.id == "eddsa-sign-init")
    assert set(eddsa.checked) == set(eddsa.first) and not eddsa.uncertain


def test_a_1_x_speed_block_leaves_the_program_version_unknown():
    """1.x `openssl speed` prints OpenSSL_version() (libcrypto's), built on, options, compiler: no platform line."""
    speed_block = ("OpenSSL 1.1.1w  11 Sep 2023\nbuilt on: Mon Sep 11 00:00:00 2023 UTC\n"
                   "options:bn(64,64) rc4(16x,int) des(int) aes(partial) blowfish(ptr)\ncompiler: gcc -O3\n")
    build = parse_openssl_build(speed_block)
    assert (build.program_version, build.library_version) == (None, "1.1.1w")
    version_a = ("OpenSSL 1.1.1w  11 Sep 2023\nbuilt on: Mon Sep 11 00:00:00 2023 UTC\nplatform: linux-x86_64\n"
                 "options:  bn(64,64)\ncompiler: gcc -O3\nOPENSSLDIR: \"/usr/lib/ssl\"\n")
    assert parse_openssl_build(version_a).program_version == "1.1.1w"
    assert parse_openssl_build("OpenSSL 1.1.1w  11 Sep 2023").program_version == "1.1.1w"


def test_docs_say_what_the_review_of_apps_speed_c_found():
    text = (Path(__file__).resolve().parents[2] / "docs" / "methods.md").read_text()
    assert "comes closest" not in text  # -aead changed at the same boundary: no way around it
    assert "Fix EVP aead interface for bench-marking ccm, gcm, ocb, and siv, where decryption fails" in text
    assert "EVP_Update_loop_ccm" in text and "66989767" in text and "#21491" in text
    assert "ECDH_EVP_derive_key_loop" in text
    sources = " ".join(s for c in methods.CHANGES for s in c.sources)
    assert "66989767" in sources and "#21491" in sources and "607a46d0" in sources
