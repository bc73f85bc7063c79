"""Known routers (issue 31): summary entries (a published table row or a few figures) read through the same functions
as `sslbench import --reference --entry/--figure`, shown by `report --against known --view line-rate` beside a
user's OpenWrt host and on the site's comparison pages, with their sources and what they cannot tell."""
from __future__ import annotations

import html
import re
import tomllib
from pathlib import Path

import pytest

from orchestrator import cli, reference, store
from orchestrator.analysis.cells import Key, key_of

KNOWN = reference.KNOWN_DIR
SPEED = Path(__file__).resolve().parents[1] / "data" / "speed"
# Real openssl binaries under qemu-user (tests/data/speed/README.md): the rig's openwrt1 is a MIPS MT7621 router
# with OpenSSL 3.0, openwrt2 an ARM IPQ4019 router with 1.1.1.
OPENWRT1 = [SPEED / "openssl-3.0.20-mipsel-qemu-evp-chacha20-poly1305.txt",
            SPEED / "openssl-3.0.20-mipsel-qemu-legacy-aes-128-cbc-pk.txt"]
OPENWRT2 = [SPEED / "openssl-1.1.1w-armv7l-qemu-evp-aes-128-gcm.txt",
            SPEED / "openssl-1.1.1w-armv7l-qemu-multi2-chacha20-poly1305.txt"]
ROUTER_MAP = "https://github.com/felix-fly/router-map/blob/016cdd866f5ab32e270117c95d81c8cc3c651deb/README.md"


def shipped_tables() -> dict[str, dict[str, object]]:
    return {t["id"]: t for t in tomllib.loads((KNOWN / "boards.toml").read_text(encoding="utf-8"))["board"]}


def entries() -> dict[str, reference.Board]:
    return {board.entry.id: board for board in reference.shipped()}


def test_at_least_ten_router_socs_mips_and_arm_each_with_a_source():
    read = entries()
    cpus = " ".join(b.entry.cpu for b in read.values())
    socs = ["MT7621", "IPQ8074", "IPQ8071A", "IPQ6000", "IPQ5018", "MT7622", "MT7981", "MT7986", "BCM4708", "BCM4908",
            "Armada 385", "Armada 388", "MT7623", "RK3328", "IPQ807x"]
    assert [soc for soc in socs if soc not in cpus] == []
    assert "MIPS 1004Kc" in cpus and "74kc" in cpus  # MIPS routers, beside the ARM ones
    summaries = [b for b in read.values() if b.entry.summary]
    assert len(summaries) >= 20
    for board in summaries:
        assert board.entry.source.startswith("https://github.com/"), board.entry.id
        assert board.entry.accuracy, board.entry.id  # what the source says of its own figures
    # the devices of the threads the issue names: the NanoPi R2S (a log) and v2ray's MT7621 (a table row)
    assert read["nanopi-r2s-openwrt"].entry.source.endswith("jayanta525/openwrt-nanopi-r2s/issues/2")
    assert read["mt7621-v2ray-2603"].entry.source == "https://github.com/v2ray/v2ray-core/issues/2603"


def test_figures_are_kept_as_published_and_only_placed_where_the_source_says_where():
    read = entries()
    k2p = read["phicomm-k2p-mt7621at-routermap"]
    assert [(f.value, f.label, f.block, f.threads) for f in k2p.entry.figures] == [
        ("7165", "AES单线程", None, 1), ("14623", "AES多线程", None, None)]  # MT7621: 4 processors, the row says x 2
    assert k2p.result.measurements == []  # no block size published: no cell
    ax1800 = read["xiaomi-ax1800-ipq6000-routermap"].entry.figures
    assert [(f.threads, f.bytes_per_second("k")) for f in ax1800] == [(1, 322654000.0), (4, 1268751000.0)]
    clearfog = read["clearfog-a1-armada388-sbcbench-sorted"].result.measurements
    assert [(key_of(m), m.bytes_per_second) for m in clearfog] == [(Key("aes-256-cbc", "evp", None, 1, 16384), 44080e3)]
    # a published row under its header is read by the log parser: the legacy name, every block
    v2ray = {m.block_size: m.bytes_per_second for m in read["mt7621-v2ray-2603"].result.measurements}
    assert v2ray == {16: 8271810.0, 64: 8993150.0, 256: 9169560.0, 1024: 9223820.0, 8192: 9212600.0,
                     16384: 9237090.0}
    assert {m.api for m in read["mt7621-v2ray-2603"].result.measurements} == {"legacy"}


def test_what_the_figures_cannot_tell_is_said():
    read = entries()
    assert reference.not_told(read["mt7621-v2ray-2603"].entry) == (
        "API unknown; -elapsed unknown; threads not stated; OpenSSL version unknown: method unknown")
    assert reference.not_told(read["phicomm-k2p-mt7621at-routermap"].entry) == (
        "API evp; not -elapsed (CPU time); threads not stated; block size not stated; "
        "OpenSSL version unknown: method unknown")
    assert reference.not_told(read["wrt32x-armada385-devcrypto-pr2821"].entry) == "API evp; -elapsed; OpenSSL 1.1.1d"


def test_a_shipped_summary_entry_imported_with_entry_gives_the_same_entry(tmp_path, capsys):
    """The user's path (--entry FILE.toml) and the shipped one read a [[board]] table the same way."""
    table = shipped_tables()["glinet-mt2500-mt7981b-routermap"]
    lines = [f"{key} = {_toml(value)}" for key, value in table.items() if key != "figure"]
    for figure in table["figure"]:  # type: ignore[union-attr]
        lines += ["[[figure]]"] + [f"{k} = {_toml(v)}" for k, v in figure.items()]
    path = tmp_path / "mt2500.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli.main(["import", "--reference", "--entry", str(path), "--results", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "stored reference 'glinet-mt2500-mt7981b-routermap' (GL.INET MT2500): 0 measurements (2 published" in out
    assert "2 figure(s) without a stated block size or threads are kept as published" in out
    run = reference.stored(tmp_path / "r")[0]
    assert run.matrix["reference"]["glinet-mt2500-mt7981b-routermap"] == entries()[
        "glinet-mt2500-mt7981b-routermap"].entry.to_dict()
    assert store.list_runs(tmp_path / "r") == []  # a reference, never a run


def _toml(value: object) -> str:
    return str(value) if isinstance(value, int) else '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def test_figures_of_a_published_row_give_the_cells_of_the_same_row_as_a_log(tmp_path, capsys):
    """--figure with the R2S reply's aes-128-gcm row, value as printed: the cells the log entry of that reply has."""
    row = {16: "73199.42k", 64: "220411.12k", 256: "435064.21k", 1024: "581664.88k", 8192: "641874.92k",
           16384: "646187.19k"}
    args = ["import", "--reference", "--host", "r2s-figures", "--board", "NanoPi R2S", "--cpu", "Rockchip RK3328",
            "--source", "https://github.com/jayanta525/openwrt-nanopi-r2s/issues/2", "--results", str(tmp_path)]
    for block, value in row.items():
        args += ["--figure", f"aes-128-gcm:{block}={value}"]
    assert cli.main(args) == 0
    assert "6 measurements (6 published figure(s), a summary, not a log)" in capsys.readouterr().out
    stored = {m.block_size: m.bytes_per_second for m in reference.stored(tmp_path)[0].hosts[0].measurements}
    log = {m.block_size: m.bytes_per_second for m in entries()["nanopi-r2s-openwrt"].result.measurements}
    assert stored == log and len(stored) == 6


@pytest.mark.parametrize("extra, message", [
    (["--figure", "aes-128-gcm=5"], "write ALGORITHM:BLOCK[:THREADS]=VALUE"),
    (["--figure", "aes-128-gcm:16384=fast"], "value 'fast' is not a number"),
    (["--figure", "aes-128-gcm:16384=-5k"], "not a positive figure"),
    (["--figure", "aes-128-gcm:0=5k"], "block '0' is not a positive whole number"),
    (["--figure", "aes-128-gcm:16384:two=5k"], "threads 'two' is not a positive whole number"),
    (["--figure", "aes-128-gcm:16384=5k", "--unit", "MB/s"], "unit 'MB/s' is not one of k, B/s"),
    (["--figure", "aes-128-gcm:16384=5k", str(KNOWN / "rpi5b-sbcbench.txt")], "give exactly one LOG, or --figure"),
])
def test_bad_figures_are_user_errors_and_nothing_is_stored(tmp_path, capsys, extra, message):
    args = ["import", "--reference", "--host", "x", "--source", "https://example.org/x", "--results", str(tmp_path)]
    assert cli.main(args + extra) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "reference").exists()


@pytest.mark.parametrize("text, message", [
    ('id = "a"\nboard = "b"\nsource = "https://e.org"\n', "needs its published figures"),
    ('id = "a"\nboard = "b"\nsource = "https://e.org"\nspeed = 3\n[[figure]]\nalgorithm = "x"\nvalue = "1k"\n',
     "unknown key(s) speed"),
    ('id = "a"\nboard = "b"\nsource = "https://e.org"\nkind = "blog"\n', "kind 'blog' is neither"),
    ('id = "a"\nboard = "b"\nsource = "https://e.org"\n[[figure]]\nalgorithm = "x"\nvalue = "1k"\nbytes = 3\n',
     "unknown key(s) bytes"),
    ('board = "b"\nsource = "https://e.org"\n[[figure]]\nalgorithm = "x"\nvalue = "1k"\n', "lacks id"),
    ('id = "a"\nboard = "b"\nsource = "https://e.org"\nkind = "log"\n', "a 'log' entry needs its LOG"),
    ("id = \n", "not a TOML entry file"),
])
def test_bad_entry_files_are_user_errors(tmp_path, capsys, text, message):
    path = tmp_path / "entry.toml"
    path.write_text(text, encoding="utf-8")
    assert cli.main(["import", "--reference", "--entry", str(path), "--results", str(tmp_path / "r")]) == 2
    assert message in capsys.readouterr().err
    assert reference.stored(tmp_path / "r") == []


def _openwrt_store(tmp_path: Path) -> Path:
    """The store of a user with two OpenWrt routers, imported from saved logs as `sslbench import` does."""
    results = tmp_path / "results"
    for host, logs in (("openwrt1", OPENWRT1), ("openwrt2", OPENWRT2)):
        assert cli.main(["import", *map(str, logs), "--host", host, "--results", str(results)]) == 0
    return results


def test_line_rate_view_shows_the_users_router_beside_router_socs_with_their_sources(tmp_path, capsys):
    results = _openwrt_store(tmp_path)
    capsys.readouterr()
    assert cli.main(["report", "--all", "--results", str(results), "--against", "known", "--view", "line-rate",
                     "--width", "0"]) == 0
    out = capsys.readouterr().out
    verdicts, known = out.split("VPN / TLS line rate")[1].split("Known boards beside them (reference)")
    assert re.search(r"^openwrt1 +crypto ceiling above 100 Mbit/s on 1 core \(chacha20-poly1305", verdicts, re.M)
    assert "routermap" not in verdicts  # no line-rate figure: listed below with what it published, not "unknown"
    rows = {line.split()[0]: line for line in known.splitlines() if line.strip()}
    for host, source in (("phicomm-k2p-mt7621at-routermap", ROUTER_MAP),
                         ("mt7621-v2ray-2603", "https://github.com/v2ray/v2ray-core/issues/2603"),
                         ("glinet-mt2500-mt7981b-routermap", ROUTER_MAP),
                         ("wrt32x-armada385-devcrypto-pr2821", "https://github.com/openwrt/openwrt/pull/2821"),
                         ("xiaomi-ipq807x-oem-robimarko92", "https://github.com/robimarko/openwrt/issues/92")):
        assert rows[host].rstrip().endswith(source), host
    assert "summary figures, not a log" in rows["mt7621-v2ray-2603"] and "method unknown" in rows["mt7621-v2ray-2603"]
    assert re.search(r"aes-128-gcm block not stated +57 +117 \(cores not stated\)", rows["phicomm-k2p-mt7621at-routermap"])
    assert re.search(r"aes-256-cbc 1024 B +74 +-", rows["mt7621-v2ray-2603"])  # 9223.82k at 1024 B: 73.8 Mbit/s
    assert "[partial]" in rows["wrt32x-armada385-devcrypto-pr2821"]  # read from progress lines only
    assert "your host" in rows["openwrt1"] and "your host" in rows["openwrt2"]
    order = list(rows)
    # fastest first: the user's MIPS router among its neighbours by figure, above the MT7621 rows
    assert order.index("openwrt1") < order.index("mt7621-v2ray-2603") < order.index("phicomm-k2p-mt7621at-routermap")


def test_comparison_pages_include_the_routers_marked_as_summary_figures_with_sources(tmp_path, capsys):
    results = _openwrt_store(tmp_path)
    site = tmp_path / "site"
    assert cli.main(["publish", str(results), "-o", str(site)]) == 0
    page = (site / "compare-aes-128-gcm.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "nanopi-r2s-openwrt (reference)" in text  # a log: its cells in the tables
    assert "xiaomi-ipq807x-oem-robimarko92 (reference)" in text
    assert "Published without block size or threads" in text
    k2p = "phicomm-k2p-mt7621at-routermap (reference: summary figures)"
    assert re.search(re.escape(k2p) + r" +AES单线程 +7165 +1 +unknown +7\.17 MB/s", text)
    assert re.search(re.escape(k2p) + r" +MT7621AT .*" + re.escape(ROUTER_MAP), text)  # its source, in the list
    assert "OpenSSL version unknown: method unknown" in text
    assert "数值并非完全精确，仅供参考" in text  # what the source says of its accuracy
    assert cli.main(["publish", str(results), "-o", str(tmp_path / "bare"), "--no-known"]) == 0
    assert "routermap" not in (tmp_path / "bare" / "compare-aes-128-gcm.html").read_text(encoding="utf-8")


def test_the_readme_lists_every_entry_with_its_source():
    readme = (KNOWN / "README.md").read_text(encoding="utf-8")
    for entry_id, table in shipped_tables().items():
        assert any(line.startswith(f"- `{entry_id}` ") and str(table["source"]) in line
                   for line in readme.splitlines()), entry_id


def test_the_default_report_says_which_known_boards_are_summary_figures(tmp_path, capsys):
    results = _openwrt_store(tmp_path)
    capsys.readouterr()
    assert cli.main(["report", "--all", "--results", str(results), "--against", "known", "--width", "0"]) == 0
    out = capsys.readouterr().out
    [note] = [line for line in out.splitlines() if line.startswith("note: ") and "summary figures" in line]
    assert "mt7621-v2ray-2603" in note and "clearfog-a1-armada388-sbcbench-sorted" in note
    assert "nanopi-r2s-openwrt" not in note  # a log
    assert re.search(r"clearfog-a1-armada388-sbcbench-sorted \(reference\) +44\.1\b", out)  # its cell, in MB/s
