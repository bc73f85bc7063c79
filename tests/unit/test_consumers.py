"""Issue 38: every output tried with the program a user feeds it to, as a user's pipeline does it: through stdout.

The store is hostile_store's (a bidi override in a host name, 0x01 and an escape sequence in a firmware label,
quotes and a backslash in another host, two runs of one time), made by `sslbench import` of real logs. The
programs are Debian's (tests/rig/packages.txt: prometheus, prometheus-node-exporter, influxdb, libxml2-utils) and
junitparser (PyPI, the test extra); each server is started here on 127.0.0.1 at a free port with its data in
tmp_path, and stopped by its PID. What each one reads back is checked against `report --format json`: every
series or point, its labels and its value, nothing lost, nothing altered.
"""
from __future__ import annotations

import json
import socket
import statistics
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import junitparser
import pytest
from prometheus_client.parser import text_string_to_metric_families

import hostile_store
from hostile_store import GATEWAY, sslbench
from orchestrator import store
from orchestrator.render.dashboards import PUBLIC_KEY, RUN_TIME, THROUGHPUT

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "junit" / "junit-10.xsd"
CELL = ("algorithm", "api", "operation", "threads", "block_size", "cpu_cluster")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_store.make(tmp_path_factory.mktemp("hostile") / "results")


def run_ids(results: Path) -> list[str]:
    return sorted((p.name for p in results.iterdir() if p.is_dir() and p.name != "reference"), key=store.run_order)


def report(results: Path, *args: str) -> bytes:
    return sslbench("report", *run_ids(results), "--results", str(results), *args).stdout


def expected(results: Path) -> dict[tuple[str, ...], tuple[float, str]]:
    """Every figure of every run from `report --format json`: (family, run, host, cell...) -> (median, flags)."""
    cells: dict[tuple[str, ...], list[float]] = {}
    flags: dict[tuple[str, ...], str] = {}
    for record in json.loads(report(results, "--format", "json")):
        if record["status"] != "ok":
            continue
        family = THROUGHPUT if record["operation"] is None else PUBLIC_KEY
        key = (family, record["run_id"], record["host"], record["algorithm"], record["api"] or "",
               record["operation"] or "", str(record["threads"]),
               "" if record["block_size"] is None else str(record["block_size"]), record["cpu"] or "")
        value = record["bytes_per_second"] if family == THROUGHPUT else record["ops_per_second"]
        cells.setdefault(key, []).append(value)
        flags[key] = ",".join(sorted(record["flags"]))
    assert cells and any(key[2] == GATEWAY for key in cells)
    return {key: (statistics.median(values), flags[key]) for key, values in cells.items()}


def key_of(family: str, labels: dict[str, str]) -> tuple[str, ...]:
    return (family, labels.get("run", ""), labels["host"], *(labels.get(name) or "" for name in CELL))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, data: bytes | None = None) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def serve(command: list[str], ready: str, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Start a server, wait until `ready` answers 2xx (30 s at most), and stop it by its PID afterwards."""
    with log.open("wb") as said:
        server = subprocess.Popen(command, stdout=said, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, log.read_text(errors="replace")
            try:
                if 200 <= get(ready)[0] < 300:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        yield server
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def check_figures(got: dict[tuple[str, ...], tuple[float, str]], want: dict[tuple[str, ...], tuple[float, str]],
                  per_run: bool) -> None:
    """Every expected figure came back with its value and flags, and nothing else did."""
    if not per_run:  # without --timestamps a host shows its newest run's figures, with no run label
        newest = {key[2]: key[1] for key in sorted(want, key=lambda k: store.run_order(k[1]))}
        want = {(k[0], "", *k[2:]): v for k, v in want.items() if newest[k[2]] == k[1]}
    assert got == want


# --- promtool and node_exporter's textfile collector -----------------------------------------------------------

def test_promtool_checks_the_metrics_of_stdout(results: Path) -> None:
    for extra in ((), ("--timestamps",)):
        text = report(results, "--format", "openmetrics", *extra)
        checked = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, timeout=60)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_node_exporter_reads_every_series_of_the_textfile(results: Path, tmp_path: Path) -> None:
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    (textfile / "sslbench.prom").write_bytes(sslbench("report", "--all", "--results", str(results), "--format",
                                                      "openmetrics").stdout)  # what `-o` writes: the same bytes
    port = free_port()
    command = ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
               "--collector.textfile", f"--collector.textfile.directory={textfile}"]
    for _ in serve(command, f"http://127.0.0.1:{port}/metrics", tmp_path / "node_exporter.log"):
        status, body = get(f"http://127.0.0.1:{port}/metrics")
    assert status == 200
    families = {f.name: f for f in text_string_to_metric_families(body.decode("utf-8"))}
    assert [s.value for s in families["node_textfile_scrape_error"].samples] == [0.0]
    got = {key_of(name, s.labels): (s.value, s.labels["flags"])
           for name in (THROUGHPUT, PUBLIC_KEY) for s in families[name].samples}
    check_figures(got, expected(results), per_run=False)
    assert {s.labels["host"] for s in families[RUN_TIME].samples} == {GATEWAY, hostile_store.ROUTER}


# --- Prometheus: a backfill of every run --------------------------------------------------------------------

def test_prometheus_backfill_keeps_every_run_with_its_labels_and_value(results: Path, tmp_path: Path) -> None:
    history = tmp_path / "history.om"
    history.write_bytes(report(results, "--format", "openmetrics", "--timestamps"))  # `> history.om`
    data = tmp_path / "data"
    made = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(history), str(data)],
                          capture_output=True, timeout=120)
    assert made.returncode == 0, made.stdout + made.stderr
    config = tmp_path / "prometheus.yml"
    config.write_text("global: {}\n")
    port = free_port()
    # a retention longer than the runs' age: the default 15 days deletes the blocks at start-up (docs/dashboards.md)
    command = ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={data}",
               "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{port}"]
    when = float(hostile_store.DATE_UNIX)
    query = urllib.parse.urlencode({"query": '{__name__=~"sslbench_.+"}', "time": str(when)})
    for _ in serve(command, f"http://127.0.0.1:{port}/-/ready", tmp_path / "prometheus.log"):
        status, body = get(f"http://127.0.0.1:{port}/api/v1/query?{query}")
    assert status == 200, body
    series = json.loads(body)["data"]["result"]
    got = {key_of(s["metric"]["__name__"], s["metric"]): (float(s["value"][1]), s["metric"].get("flags", ""))
           for s in series if s["metric"]["__name__"] != RUN_TIME}
    assert len(got) == len(series) - len(run_ids(results))  # a run time per run, no series twice
    check_figures(got, expected(results), per_run=True)
    for s in series:  # the labels come back exactly, the firmware's 0x01 and ESC too
        if s["metric"]["host"] == GATEWAY:
            assert s["metric"]["firmware"].startswith(hostile_store.FIRMWARE)


# --- InfluxDB 1.x --------------------------------------------------------------------------------------------

def influx_config(tmp_path: Path, http: int, rpc: int) -> Path:
    config = tmp_path / "influxdb.conf"
    config.write_text(f"""reporting-disabled = true
bind-address = "127.0.0.1:{rpc}"
[meta]
  dir = "{tmp_path}/meta"
[data]
  dir = "{tmp_path}/data"
  wal-dir = "{tmp_path}/wal"
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:{http}"
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
""")
    return config


def influx_points(base: str) -> dict[tuple[str, ...], tuple[float, str]]:
    out: dict[tuple[str, ...], tuple[float, str]] = {}
    for measurement, family, field in (("sslbench_throughput", THROUGHPUT, "bytes_per_second"),
                                       ("sslbench_public_key", PUBLIC_KEY, "ops_per_second")):
        query = urllib.parse.urlencode({"db": "sslbench", "epoch": "ns", "q": f"SELECT * FROM {measurement}"})
        status, body = get(f"{base}/query?{query}")
        assert status == 200, body
        for result in json.loads(body)["results"]:
            for series in result.get("series", []):
                for row in series["values"]:
                    point: dict[str, Any] = dict(zip(series["columns"], row))
                    assert point["time"] == hostile_store.DATE_UNIX * 1_000_000_000
                    labels = {k: "" if v is None else str(v) for k, v in point.items()}
                    key = key_of(family, labels)
                    assert key not in out, key
                    out[key] = (point[field], labels.get("flags", ""))
    return out


def test_influxdb_keeps_every_point_of_stdout_and_a_second_write_changes_nothing(results: Path,
                                                                                 tmp_path: Path) -> None:
    http, rpc = free_port(), free_port()
    base = f"http://127.0.0.1:{http}"
    lines = report(results, "--format", "influx")  # `| influx write`, over HTTP as the 1.x CLI does
    want = expected(results)
    assert len(lines.splitlines()) == len(want)
    command = ["influxd", "run", "-config", str(influx_config(tmp_path, http, rpc))]
    for _ in serve(command, f"{base}/ping", tmp_path / "influxd.log"):
        assert get(f"{base}/query", urllib.parse.urlencode({"q": "CREATE DATABASE sslbench"}).encode())[0] == 200
        for _attempt in range(2):
            status, body = get(f"{base}/write?db=sslbench&precision=ns", lines)
            assert status == 204, body
            check_figures(influx_points(base), want, per_run=True)
        query = urllib.parse.urlencode({"db": "sslbench", "q": 'SHOW TAG VALUES FROM sslbench_throughput WITH '
                                        'KEY IN ("host", "firmware")'})
        tags = {tuple(v) for r in json.loads(get(f"{base}/query?{query}")[1])["results"]
                for s in r["series"] for v in s["values"]}
    assert ("host", GATEWAY) in tags and ("firmware", hostile_store.FIRMWARE_LABEL_START) in {
        (k, v[:len(hostile_store.FIRMWARE_LABEL_START)]) for k, v in tags}


# --- JUnit: junitparser and the XSD ---------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["diff", "trend"])
def test_junit_of_stdout_reads_in_junitparser_and_against_the_schema(results: Path, command: str) -> None:
    gateway = [i for i in run_ids(results) if any(h.host == GATEWAY for h in store.load_run(results / i).hosts)]
    args = ("diff", *gateway) if command == "diff" else ("trend", GATEWAY)
    xml = sslbench(*args, "--results", str(results), "--format", "junit").stdout
    valid = subprocess.run(["xmllint", "--noout", "--schema", str(SCHEMA), "-"], input=xml, capture_output=True,
                           timeout=60)
    assert valid.returncode == 0, valid.stderr
    suites = junitparser.JUnitXml.fromstring(xml.decode("utf-8"))
    cases = [case for suite in suites for case in suite]
    assert cases and {case.classname for case in cases} == {GATEWAY}
    assert sum(suite.tests for suite in suites) == len(cases)
