"""insights (the user's questions) and the HTML / Markdown reports built from crafted runs."""
from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import pytest

from orchestrator.analysis import insights
from orchestrator.model import CpuFacts, HostResult, Measurement, OsFacts, Run
from orchestrator.render import report

BLOCKS = (16, 64, 256, 1024, 8192, 16384)


def aead_rows(algorithm, mbytes_at_16k, threads=1, api="evp", repeats=1):
    """Throughput rising with block size up to `mbytes_at_16k` MB/s at 16384 bytes."""
    out = []
    for block in BLOCKS:
        base = mbytes_at_16k * 1e6 * min(1.0, (block / 16384) ** 0.1)
        for r in range(repeats):
            out.append(Measurement(algorithm, block, base * (1 + 0.001 * r), threads=threads, api=api, repeat=r))
    return out


def host(name, gcm_mb, cores=4, aes=True, legacy_ratio=8.0, repeats=1, scale=1.0):
    ms = aead_rows("aes-256-gcm", gcm_mb * scale, repeats=repeats)
    ms += aead_rows("aes-256-gcm", gcm_mb * cores * 0.95 * scale, threads=cores, repeats=repeats)
    ms += aead_rows("chacha20-poly1305", gcm_mb * 0.6 * scale, repeats=repeats)
    ms += aead_rows("aes-128-cbc", 80 * scale, api="evp")
    ms += aead_rows("aes-128-cbc", 80 * scale / legacy_ratio, api="legacy")
    ms += [Measurement("rsa2048", operation="sign", ops_per_second=400.0 * scale),
           Measurement("rsa2048", operation="verify", ops_per_second=15000.0 * scale),
           Measurement("ecdsap256", operation="sign", ops_per_second=9000.0 * scale),
           Measurement("x25519", operation="op", ops_per_second=12000.0 * scale),
           Measurement("chacha20", 1024, status="unsupported", reason="not in 1.0.2")]
    return HostResult(name, cpu=CpuFacts(model="Cortex-A53", arch="arm", logical_cpus=cores,
                                         crypto=["aes", "pmull", "sha2"] if aes else []),
                      os=OsFacts(family="openwrt", name="OpenWrt", version="23.05.3"), measurements=ms)


def run(run_id, hosts):
    return Run(run_id=run_id, created="2026-01-01T00:00:00+00:00", hosts=hosts)


# ---- insights ------------------------------------------------------------------------------------------

def test_per_core_and_all_core_throughput():
    ins = insights.host_insights(host("r", 20.0, cores=4))
    gcm = next(t for t in ins.throughput if t.algorithm == "aes-256-gcm" and t.block_size == 16384)
    assert gcm.one_core == pytest.approx(20e6)
    assert gcm.all_cores == pytest.approx(76e6) and gcm.cores == 4
    assert gcm.per_core == pytest.approx(19e6)


def test_line_rate_verdicts_one_core_all_cores_and_never():
    # aes-256-gcm at 1024 B: 20 MB/s * (1/16)^0.1 = 15.16 MB/s = 121 Mbit/s on 1 core, x3.8 on 4 cores = 461.
    ins = insights.host_insights(host("r", 20.0, cores=4), links=[100, 400, 1000])
    one, four, never = ins.line_rates
    assert one.carried and one.cores_needed == 1
    assert one.verdict.startswith("crypto ceiling above 100 Mbit/s on 1 core (aes-256-gcm")
    assert four.carried and four.cores_needed == 4 and "on 4 cores" in four.verdict
    assert never.carried is False and never.verdict.startswith("crypto ceiling below 1000 Mbit/s (best 461 Mbit/s")


def test_line_rate_unknown_without_aead():
    result = HostResult("x", measurements=[Measurement("sha256", 1024, 1e9)])
    (rate,) = insights.host_insights(result, links=[100]).line_rates
    assert rate.carried is None and "unknown" in rate.verdict


def test_evp_uses_aes_instructions_or_not():
    fast = insights.host_insights(host("a", 20.0, aes=True, legacy_ratio=8.0))
    assert fast.evp_ratio == pytest.approx(8.0) and "uses hardware" in fast.evp_verdict
    unused = insights.host_insights(host("b", 20.0, aes=True, legacy_ratio=1.1))
    assert "does not seem to use them" in unused.evp_verdict
    none = insights.host_insights(host("c", 20.0, aes=False, legacy_ratio=1.0))
    assert none.evp_verdict.startswith("the CPU reports no AES instructions")


def test_handshakes_combine_sign_and_key_exchange():
    shakes = insights.host_insights(host("r", 20.0)).handshakes
    assert shakes["RSA-2048 handshakes/s (1 core)"] == pytest.approx(1 / (1 / 400 + 1 / 12000))
    assert shakes["ECDSA-P256 handshakes/s (1 core)"] == pytest.approx(1 / (1 / 9000 + 1 / 12000))


def test_parse_links():
    assert insights.parse_links("100,1000") == [100, 1000]
    with pytest.raises(Exception, match="--link"):
        insights.parse_links("fast")


# ---- reports -------------------------------------------------------------------------------------------

class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_self_contained_with_tables_and_png_plots(tmp_path):
    runs = [run("20260101T000000Z-aaaa", [host("router", 20.0, repeats=4), host("pi", 60.0, repeats=4)]),
            run("20260201T000000Z-bbbb", [host("router", 20.0, repeats=4, scale=0.8)])]
    out = report.render_html(runs, tmp_path / "r.html", links=[100, 1000])
    page = Collect()
    page.feed(out.read_text(encoding="utf-8"))
    tags = [t for t, _ in page.tags]
    assert tags.count("table") >= 6
    images = [a["src"] for t, a in page.tags if t == "img"]
    # per host-run block plots (3), one bar chart per throughput algorithm (3), one diff plot
    assert len(images) == 7
    for src in images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert not any(a.get("href") or (t == "script") for t, a in page.tags)  # nothing external
    text = " ".join(page.text)
    assert "crypto ceiling above 100 Mbit/s on 1 core" in text
    assert "router @ 20260201T000000Z-bbbb" in text
    assert "Diff: 20260101T000000Z-aaaa → 20260201T000000Z-bbbb" in text
    assert re.search(r"-20\.0%", text)  # the slower second run of router, significant with 4+4 repeats


def test_markdown_links_png_files_next_to_it(tmp_path):
    out = report.render_markdown([run("only", [host("router", 20.0)])], tmp_path / "sub" / "report.md")
    text = out.read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert links and all((out.parent / name).read_bytes()[:4] == b"\x89PNG" for name in links)
    assert "| host" in text and "crypto ceiling above 100 Mbit/s on 1 core" in text
    assert "Diff:" not in text  # one run: nothing to diff


def test_report_of_hosts_without_results(tmp_path):
    empty = run("x", [HostResult("down", status="unreachable", reason="ssh: timeout")])
    text = report.render_markdown([empty], tmp_path / "e.md").read_text()
    assert "## Hosts that failed" in text and "No host has any measurement" in text
    failed = text.split("## Hosts that failed")[1]
    assert [c.strip() for c in failed.split("| down ")[1].split("|")[1:4]] == ["x", "unreachable", "ssh: timeout"]


def test_openssl_capability_bits_from_cpuinfo_line():
    # This machine's OpenSSL 3.0.19 (tests/data/speed): AES-NI is bit 57 of the first word.
    assert insights.openssl_aes_capability("OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab") is True
    assert insights.openssl_aes_capability("OPENSSL_ia32cap=0xfdfa3203078bffff:0x0") is False  # ~0x200000000000000
    assert insights.openssl_aes_capability("OPENSSL_armcap=0x3d") is True  # NEON, AES, SHA1, SHA256, PMULL
    assert insights.openssl_aes_capability("OPENSSL_armcap=0x1") is False  # NEON only
    assert insights.openssl_aes_capability(None) is None


def test_evp_verdict_on_openssl_3_uses_capability_bits_not_the_ratio():
    from orchestrator.model import OpenSSLBuild

    result = host("x", 20.0, aes=True, legacy_ratio=1.0)
    result.openssl = OpenSSLBuild(version="3.0.19")
    assert "cannot tell on OpenSSL 3.x" in insights.host_insights(result).evp_verdict
    result.openssl = OpenSSLBuild(version="3.0.19", cpuinfo="OPENSSL_ia32cap=0xfffa3203078bffff:0x0")
    assert "capability bits say it uses them" in insights.host_insights(result).evp_verdict
    result.openssl = OpenSSLBuild(version="3.0.19", cpuinfo="OPENSSL_ia32cap=0xfdfa3203078bffff:0x0")
    assert "does not use them" in insights.host_insights(result).evp_verdict


def test_many_hosts_one_row_per_host_and_fastest_bars_only(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "MAX_HOST_COLUMNS", 2)
    monkeypatch.setattr(report, "MAX_BAR_HOSTS", 2)
    monkeypatch.setattr(report, "MAX_SERIES_PLOTS", 1)
    hosts = [HostResult(f"h{i}", measurements=aead_rows("aes-256-gcm", 10.0 * (i + 1))) for i in range(4)]
    blocks = report.build([run("r", hosts)])
    table = next(b for i, b in enumerate(blocks) if isinstance(b, report.Table)
                 and isinstance(blocks[i - 1], report.Heading) and blocks[i - 1].text.startswith("All measurements"))
    assert table.columns[0] == "host" and len(table.rows) == 4 * len(BLOCKS)
    titles = [b.title for b in blocks if isinstance(b, report.Figure)]
    assert titles == ["h0: throughput vs block size", "aes-256-gcm across hosts (the 2 fastest of 4)"]


def test_cli_report_html_and_markdown_pages(tmp_path, capsys):
    from orchestrator import cli, store

    run_dir = store.new_run_dir(tmp_path / "results", "20260101T000000Z-aaaa")
    store.save_run(run_dir, run(run_dir.name, [host("router", 20.0)]))
    results = str(tmp_path / "results")
    page = tmp_path / "out" / "report.html"
    assert cli.main(["report", "--results", results, "--format", "html", "-o", str(page), "--link", "50,500"]) == 0
    assert capsys.readouterr().out.strip() == str(page)
    text = page.read_text(encoding="utf-8")
    assert "crypto ceiling above 50 Mbit/s on 1 core" in text and "<th>500 Mbit/s</th>" in text
    markdown = tmp_path / "out" / "report.md"
    assert cli.main(["report", run_dir.name, "--results", results, "--format", "markdown", "-o", str(markdown)]) == 0
    assert (tmp_path / "out" / "report-blocks-router.png").exists()
    assert cli.main(["report", "--results", results, "--format", "html"]) == 2
    assert "-o FILE" in capsys.readouterr().err


# ---- big.LITTLE and per-MHz ---------------------------------------------------------------------------------

def test_one_core_is_the_best_cluster_of_a_pinned_big_little_host():
    r = host("sige5", 20.0, cores=8)
    # the same cell pinned to each cluster: the A72 cluster twice as fast as the A53 one
    r.measurements = [m for m in r.measurements if not (m.algorithm == "aes-256-gcm" and m.threads == 1)]
    r.measurements += [Measurement("aes-256-gcm", 16384, 40e6, api="evp", cpu="Cortex-A72"),
                       Measurement("aes-256-gcm", 16384, 20e6, api="evp", cpu="Cortex-A53")]
    gcm = next(t for t in insights.host_insights(r).throughput
               if t.algorithm == "aes-256-gcm" and t.block_size == 16384)
    assert gcm.one_core == pytest.approx(40e6)  # not the blend (30e6) of the two clusters


def test_per_mhz_uses_the_clock_measured_during_the_cells():
    r = host("pi4", 20.0, cores=4)
    assert insights.host_insights(r).mhz is None  # no cpufreq evidence: no per-MHz figure
    r.conditions = {"cells": {"c1": {"facts": {"clock_khz": {"policy0": 1500000}}},
                              "c2": {"facts": {"clock_khz": {"policy0": 1300000}}}}}
    ins = insights.host_insights(r)
    assert (ins.mhz, ins.mhz_source) == (1400.0, "measured")
    assert ins.per_mhz(20e6) == pytest.approx(20e6 / 1400)
    r.conditions = {"verdict": {"facts": {"clocks": {"policy0": {"top_khz": 1800000}}}}}
    assert (insights.host_insights(r).mhz, insights.host_insights(r).mhz_source) == (1800.0, "cpufreq maximum")


def test_report_per_core_table_has_clock_and_per_mhz_columns(tmp_path):
    r = host("pi4", 20.0, cores=4)
    r.conditions = {"cells": {"c1": {"facts": {"clock_khz": {"policy0": 2000000}}}}}
    text = report.render_markdown([run("r1", [r, host("old-pc", 50.0)])], tmp_path / "r.md").read_text()
    assert "| clock" in text and "1 core per MHz" in text
    assert "2,000 MHz (measured)" in text
    # aes-256-gcm at 16384 B: 20 MB/s on one core at 2000 MHz = 10.0 kB/s per MHz
    assert "10.0 kB/s" in text
    assert "unknown" in text  # old-pc has no clock evidence


def test_report_tables_keep_each_cluster_of_a_pinned_host_apart(tmp_path):
    r = host("sige5", 20.0, cores=8)
    r.measurements += [Measurement("sha256", 16384, 900e6, api="evp", cpu="Cortex-A72"),
                       Measurement("sha256", 16384, 400e6, api="evp", cpu="Cortex-A53")]
    text = report.render_markdown([run("r1", [r])], tmp_path / "r.md").read_text()
    assert "| 1 Cortex-A72" in text and "| 1 Cortex-A53" in text
    assert "900 MB/s" in text and "400 MB/s" in text  # each cluster's own figure, not their median (650)


# --- `sslbench report` / the table `sslbench run` prints: every host, failed ones with their reason --------------

def fleet_run():
    big_little = HostResult(host="rock5b", measurements=[
        Measurement("aes-128-gcm", 1024, 1.5e9, threads=1, api="evp", cpu="Cortex-A76"),
        Measurement("aes-128-gcm", 1024, 0.5e9, threads=1, api="evp", cpu="Cortex-A55"),
        Measurement("aes-128-gcm", 1024, 6.1e9, threads=8, api="evp"),
        Measurement("ed25519", None, None, threads=1, operation="sign", ops_per_second=2345.6, cpu="Cortex-A76")])
    cut = HostResult(host="router", status="failed", reason="bench: 2 of 3 cells did not finish",
                     measurements=[Measurement("aes-128-gcm", 1024, 2.0e7, threads=1, api="evp")])
    gone = HostResult(host="ddwrt", status="unreachable", reason="detect: ssh: connect to host 10.0.0.9 port 22: "
                                                                "No route to host")
    return run("20261203-120000", [big_little, cut, gone])


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_report_lists_every_host_failed_ones_with_status_and_reason(fmt, golden):
    from orchestrator.render.tables import render_runs

    golden(f"report-fleet-with-failures.{fmt}", render_runs([fleet_run()], fmt) + "\n")


def test_report_json_rows_tell_pinned_clusters_apart():
    import json

    from orchestrator.render.tables import render_runs

    rows = json.loads(render_runs([fleet_run()], "json"))
    assert {r["cpu"] for r in rows if r["host"] == "rock5b" and r["threads"] == 1} == {"Cortex-A76", "Cortex-A55"}
    assert [(r["host"], r["status"], r["reason"]) for r in rows if r["algorithm"] is None] == [
        ("router", "failed", "bench: 2 of 3 cells did not finish"),
        ("ddwrt", "unreachable", "detect: ssh: connect to host 10.0.0.9 port 22: No route to host")]
