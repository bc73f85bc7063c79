"""Issue 38 item 7: every answer carries the flags of the figures it rests on, in every view and format.

The busy cells are made as a loaded machine makes them: openssl's progress line says it timed each figure for
less CPU than the run asked (`-seconds 3` run for 1.2 s), which only the read-time busy rule the tables use
(evidence.checks.busy_below) turns into a flag; nothing is stored as `busy` on the measurements. A second, clean
host checks that a figure without flags never gets one.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from orchestrator.analysis import insights
from orchestrator.model import BUSY, CpuFacts, HostResult, Measurement, Run
from orchestrator.render import report

BLOCKS = (16, 1024, 16384)
ANSWERS = ("line-rate", "crypto", "handshakes", "per-core", "all-core")
HEADINGS = ("VPN / TLS line rate", "Crypto instructions and the EVP path", "TLS handshakes per second", "Per core",
            "All cores", "All measurements", "Plots")


def measurements(seconds: float, mb: float) -> list[Measurement]:
    """aes-256-gcm and chacha20-poly1305 on 1 and 2 cores, aes-128-cbc evp and legacy, signs and a key exchange,
    each timed for `seconds` by openssl's progress line."""
    out = []
    for algorithm, scale in (("aes-256-gcm", 1.0), ("chacha20-poly1305", 0.7)):
        for threads in (1, 2):
            out += [Measurement(algorithm, block, mb * 1e6 * scale * threads, threads=threads, api="evp",
                                seconds=seconds) for block in BLOCKS]
    for api, scale in (("evp", 1.0), ("legacy", 0.5)):
        out += [Measurement("aes-128-cbc", block, mb * 1e6 * scale, api=api, seconds=seconds) for block in BLOCKS]
    out += [Measurement("rsa2048", operation="sign", ops_per_second=300.0, seconds=seconds),
            Measurement("ecdsap256", operation="sign", ops_per_second=5000.0, seconds=seconds),
            Measurement("x25519", operation="op", ops_per_second=9000.0, seconds=seconds)]
    return out


def host(name: str, seconds: float) -> HostResult:
    return HostResult(name, cpu=CpuFacts(model="Cortex-A72", arch="aarch64", logical_cpus=2, crypto=["aes"]),
                      measurements=measurements(seconds, 40.0))


@pytest.fixture
def runs() -> list[Run]:
    # a run that asked openssl for 3 s per cell: 1.2 s of CPU is busy, 2.95 s is not
    return [Run(run_id="20260105T090000.000000Z-a1f3", created="2026-01-05T09:00:00+00:00",
                matrix={"seconds": 3}, hosts=[host("loaded", 1.2), host("quiet", 2.95)])]


def test_the_stored_measurements_carry_no_flag(runs):
    """The flag comes from the read-time rule alone: an answer that ignored it would show none."""
    assert all(not m.flags for h in runs[0].hosts for m in h.measurements)


def test_every_answer_of_busy_cells_is_flagged_and_clean_ones_are_not(runs):
    loaded, quiet = (insights.run_insights(runs[0], h, [100, 1000]) for h in runs[0].hosts)
    assert loaded.line_rates and all(lr.flags == (BUSY,) for lr in loaded.line_rates)
    carries = loaded.line_rates[0]
    assert carries.verdict.startswith("crypto ceiling above 100 Mbit/s") and "flagged busy" in carries.verdict
    assert all(t.one_core_flags == (BUSY,) for t in loaded.throughput)
    assert all(t.all_cores_flags == (BUSY,) for t in loaded.throughput if t.all_cores is not None)
    assert loaded.evp_flags == (BUSY,) and loaded.evp_ratio == pytest.approx(2.0)
    assert loaded.handshakes and set(loaded.handshake_flags.values()) == {(BUSY,)}
    assert loaded.flags == (BUSY,)
    assert quiet.flags == () and not any("flagged" in lr.verdict for lr in quiet.line_rates)
    # without the run's rule (host_insights of the bare result) nothing says busy: the rule is what flags them
    assert insights.host_insights(runs[0].hosts[0]).flags == ()


def test_a_verdict_resting_on_both_figures_carries_both_flags():
    """"carries on 2 cores, not on 1 core" rests on the 1-core figure too: a busy 1-core cell flags it."""
    result = host("mixed", 2.95)
    for m in result.measurements:
        if m.threads == 1 and m.algorithm == "aes-256-gcm" and m.block_size == 1024:
            m.seconds = 1.0
    run = Run(run_id="r", created="2026-01-05T09:00:00+00:00", matrix={"seconds": 3}, hosts=[result])
    (rate,) = insights.run_insights(run, result, [500]).line_rates
    assert rate.cores_needed == 2 and rate.flags == (BUSY,) and "flagged busy" in rate.verdict


def _rows_of(text: str, host_name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(host_name)]


@pytest.mark.parametrize("view", ANSWERS)
def test_each_terminal_view_shows_the_flag_on_the_loaded_host_only(runs, view):
    text = report.render_text(runs, view)
    loaded, quiet = _rows_of(text, "loaded"), _rows_of(text, "quiet")
    assert loaded and quiet
    assert all(BUSY in line for line in loaded), (view, loaded)
    assert not any(BUSY in line for line in quiet), (view, quiet)


def _sections(page: str, heading: str) -> dict[str, str]:
    """Each section's text by its heading (a Markdown `## ` or an HTML <h2>)."""
    parts = re.split(heading, page)
    return {part.split("\n", 1)[0].split("<", 1)[0].strip(): part for part in parts[1:]}


@pytest.mark.parametrize("fmt, heading", [("html", r"<h2>"), ("markdown", r"\n## ")])
def test_every_section_of_the_page_says_busy(runs, tmp_path: Path, fmt, heading):
    page = report.render_page(runs, fmt, tmp_path / f"report.{fmt}").read_text(encoding="utf-8")
    sections = _sections(page, heading)
    for name in HEADINGS:
        found = [text for title, text in sections.items() if title.startswith(name)]
        if name == "Plots" and not found:
            continue  # written without the plots extra: its note says how to get them
        assert found and BUSY in found[0], (fmt, name, list(sections))
        assert "quiet" in found[0] or name == "Plots"
