"""Issue 31 against the loopback fleet: the rig's OpenWrt router (openwrt1: MT7621 with OpenSSL 3.0, BusyBox,
dropbear) measured by `sslbench run`, then shown by `report --against known --view line-rate` beside published
router figures with their sources, and on the site's comparison page beside them."""
from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.model import HOST_OK, OK

pytestmark = pytest.mark.rig

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
CELLS = ["--algorithms", "chacha20-poly1305,aes-256-cbc", "--sizes", "1024,16384", "--threads", "1", "--api", "evp",
         "--idle-wait", "0", "--seconds", "1"]


def test_the_rig_router_beside_published_router_socs(rig_inventory, openwrt_pristine, tmp_path):
    results = tmp_path / "results"
    run = subprocess.run([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", "openwrt1", *CELLS,
                          "--results", str(results)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    [run_dir] = store.list_runs(results)
    [host] = store.load_run(run_dir).hosts
    assert host.host == "openwrt1" and host.status == HOST_OK
    assert {m.algorithm for m in host.measurements if m.status == OK} == {"chacha20-poly1305", "aes-256-cbc"}

    report = subprocess.run([SSLBENCH, "report", "--results", str(results), "--against", "known", "--view",
                             "line-rate", "--width", "0"], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    verdicts, known = report.stdout.split("VPN / TLS line rate")[1].split("Known boards beside them (reference)")
    assert re.search(r"^openwrt1 +crypto ceiling (above|below) 100 Mbit/s", verdicts, re.M)
    rows = {line.split()[0]: line.rstrip() for line in known.splitlines() if line.strip()}
    assert "your host" in rows["openwrt1"]
    routers = {"mt7621-v2ray-2603": "https://github.com/v2ray/v2ray-core/issues/2603",
               "phicomm-k2p-mt7621at-routermap": "https://github.com/felix-fly/router-map/blob/",
               "wrt32x-armada385-devcrypto-pr2821": "https://github.com/openwrt/openwrt/pull/2821",
               "bpi-r2-mt7623-sbcbench-sorted": "https://github.com/ThomasKaiser/sbc-bench/blob/"}
    for name, source in routers.items():
        assert source in rows[name] and ("summary figures" in rows[name] or " log " in rows[name]), name

    site = tmp_path / "site"
    publish = subprocess.run([SSLBENCH, "publish", str(results), "-o", str(site)], capture_output=True, text=True,
                             timeout=300)
    assert publish.returncode == 0, publish.stderr
    page = html.unescape(re.sub(r"<[^>]+>", " ", (site / "compare-aes-256-cbc.html").read_text(encoding="utf-8")))
    assert "openwrt1" in page
    for name in ("mt7621-v2ray-2603 (reference: summary figures)", "bpi-r2-mt7623-sbcbench-sorted (reference: "
                 "summary figures)", "wrt32x-armada385-devcrypto-pr2821 (reference)"):
        assert name in page, name
    assert "https://github.com/v2ray/v2ray-core/issues/2603" in page
