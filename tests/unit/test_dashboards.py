"""`report --format openmetrics|influx`: read back with the parsers the formats' own projects ship in Python.

OpenMetrics / Prometheus text: prometheus_client's two parsers (`openmetrics.parser` and the classic `parser`, the
format node_exporter's textfile collector reads). Line protocol: InfluxData publishes no Python parser (its Python
client only writes), so `line-protocol-parser` (a C parser of the v2 line protocol, PyPI) reads it, and the escaping
is checked against the examples of InfluxData's line protocol reference as well.
"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from line_protocol_parser import parse_line
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as prometheus_families

import fleet_store
from orchestrator import stats
from orchestrator.analysis import cells, identity
from orchestrator.evidence import validity
from orchestrator.model import CpuFacts, HostResult, Measurement, OpenSSLBuild, OsFacts, Run
from orchestrator.render import dashboards
from orchestrator.render.dashboards import PUBLIC_KEY, RUN_TIME, THROUGHPUT

HOSTILE = 'gw "A"\\b\nc=d e,f'  # quotes, a backslash, a newline, =, space and comma


def expected(runs: list[Run], newest_only: bool = True) -> dict[tuple, tuple[str, float, float]]:
    """Every figure of the store, from the cells as tables read them: (family, host, cell) -> labels..., value."""
    out: dict[tuple, tuple[dict[str, str], float, float]] = {}
    for run in sorted(runs, key=dashboards.run_time):
        for result in run.hosts:
            for key, cell in cells.host_cells(result, validity.busy_below(cells.requested_seconds(run))).items():
                if not cell.samples:
                    continue
                labels = {"host": result.host, "board": result.cpu.system_type or result.cpu.model or "",
                          "firmware": identity.firmware_label(result),
                          "openssl_version": result.openssl.version or "", "algorithm": key.algorithm,
                          "api": key.api or "", "operation": key.operation or "", "threads": str(key.threads),
                          "block_size": "" if key.block_size is None else str(key.block_size),
                          "cpu_cluster": key.cpu or "", "flags": ",".join(sorted(cell.flags))}
                family = THROUGHPUT if key.operation is None else PUBLIC_KEY
                ident = (family, result.host, key) if newest_only else (family, result.host, key, run.run_id)
                out[ident] = (labels, stats.median(cell.samples), dashboards.run_time(run))
    return out


def samples_of(families, name: str) -> list:
    return [s for f in families if f.name == name for s in f.samples]


@pytest.mark.parametrize("parse", [openmetrics_families, prometheus_families], ids=["openmetrics", "prometheus"])
def test_every_figure_and_label_of_a_store_comes_back_from_the_official_parsers(parse):
    runs = fleet_store.fleet_runs()
    text = dashboards.openmetrics(runs)
    families = list(parse(text))
    assert {f.name for f in families} == {THROUGHPUT, PUBLIC_KEY, RUN_TIME}
    assert all(f.type == "gauge" for f in families)
    want = expected(runs)
    got = {}
    for name in (THROUGHPUT, PUBLIC_KEY):
        for sample in samples_of(families, name):
            labels = dict(sample.labels)
            assert sample.timestamp is None  # node_exporter's textfile collector drops a file with any
            got[(name, labels["host"], labels["algorithm"], labels["api"], labels["operation"], labels["threads"],
                 labels["block_size"], labels["cpu_cluster"])] = (labels, sample.value)
    assert len(got) == len(want) == sum(len(samples_of(families, n)) for n in (THROUGHPUT, PUBLIC_KEY))
    for (family, host, key), (labels, value, _when) in want.items():
        g_labels, g_value = got[(family, host, key.algorithm, key.api or "", key.operation or "", str(key.threads),
                                 "" if key.block_size is None else str(key.block_size), key.cpu or "")]
        assert g_labels == labels and g_value == value  # exactly: the shortest repr reads back to the same float
    # the pi4's newest run (4 repeats, a median of 4) is what is shown, its firmware of then; the throttled
    # January figures of the pi4 are not shown beside them
    pi4 = [dict(s.labels) for s in samples_of(families, THROUGHPUT) if dict(s.labels)["host"] == "pi4"]
    assert pi4 and all(labels["flags"] == "" for labels in pi4)
    # every host's run time, from its newest run
    times = {dict(s.labels)["host"]: s.value for s in samples_of(families, RUN_TIME)}
    assert times["pi4"] == dashboards.run_time(runs[-1]) and "r7000" in times  # r7000: January (March unreachable)


def test_the_textfile_collectors_rules_hold():
    """One label set per family (the Prometheus client refuses a family with mixed label names), no series twice
    (the textfile collector drops a file with duplicate series), no timestamps."""
    text = dashboards.openmetrics(fleet_store.fleet_runs())
    for family in prometheus_families(text):
        names = {tuple(sorted(s.labels)) for s in family.samples}
        assert len(names) == 1, family.name
        series = [tuple(sorted(s.labels.items())) for s in family.samples]
        assert len(series) == len(set(series)), family.name
    assert text.endswith("# EOF\n")


def test_with_timestamps_every_run_is_a_point_at_its_time_for_backfill():
    runs = fleet_store.fleet_runs()
    families = list(openmetrics_families(dashboards.openmetrics(runs, timestamps=True)))
    want = expected(runs, newest_only=False)
    points = samples_of(families, THROUGHPUT) + samples_of(families, PUBLIC_KEY)
    assert len(points) == len(want)
    for sample in points:
        assert float(sample.timestamp) in {dashboards.run_time(r) for r in runs}
    pi4_runs = {float(s.timestamp) for s in points if s.labels["host"] == "pi4"}
    assert len(pi4_runs) == 3  # January, March, and the repeats of the 11th
    for (family, host, key, run_id), (labels, value, when) in want.items():
        assert [s for s in samples_of(families, family) if s.labels == {**labels, "run": run_id}
                and s.value == value and float(s.timestamp) == when], (host, key, run_id)


def same_dated_runs() -> list[Run]:
    """Two runs of one host given one time (two logs imported with the same --date), with other figures."""
    first, second = hostile_run(), hostile_run()
    second.run_id = "20260101T000000.000000Z-bbbb"
    second.hosts[0].measurements = [Measurement("aes-256-gcm", 1024, 99.5, api="evp"),
                                    Measurement("rsa2048", operation="sign", ops_per_second=2.0),
                                    Measurement("sha256", 16, 7.0, api="legacy", cpu='cl "big"=1')]
    return [first, second]


def test_runs_of_the_same_time_stay_apart_in_backfill_and_line_protocol():
    """Issue 38: two imports with one --date became one point (InfluxDB kept 3 of 6, --timestamps one run's)."""
    runs = same_dated_runs()
    families = list(openmetrics_families(dashboards.openmetrics(runs, timestamps=True)))
    points = samples_of(families, THROUGHPUT) + samples_of(families, PUBLIC_KEY)
    assert len(points) == 6
    assert {(s.labels["run"], s.labels["algorithm"], s.value) for s in points} == {
        (run.run_id, m.algorithm, m.bytes_per_second if m.operation is None else m.ops_per_second)
        for run in runs for m in run.hosts[0].measurements}
    assert len({s.labels["run"] for s in samples_of(families, RUN_TIME)}) == 2
    lines = dashboards.influx(runs).splitlines()
    # InfluxDB keeps one point per series (measurement and tag set) and time: all six must differ there
    keys = {(parse_line(line)["measurement"], tuple(sorted(parse_line(line)["tags"].items())),
             parse_line(line)["time"]) for line in lines}
    assert len(lines) == len(keys) == 6
    assert dashboards.influx(runs) == dashboards.influx(list(reversed(runs)))  # the same points, written again


def hostile_run() -> Run:
    """A host name, firmware label and OpenSSL version with every character each format must escape."""
    result = HostResult(HOSTILE, firmware='fw "1.0"\\beta\nrc=1, 2', cpu=CpuFacts(model='Cortex "A53"\\x'),
                        os=OsFacts(family="openwrt"), openssl=OpenSSLBuild(version='3.0 "x",y=z\\'),
                        measurements=[Measurement("aes-256-gcm", 1024, 123456789.125, api="evp"),
                                      Measurement("rsa2048", operation="sign", ops_per_second=1e-3),
                                      Measurement("sha256", 16, 1e21, api="legacy", cpu='cl "big"=1')])
    return Run("20260101T000000.000000Z-aaaa", "2026-01-01T00:00:00+00:00", hosts=[result])


@pytest.mark.parametrize("parse", [openmetrics_families, prometheus_families], ids=["openmetrics", "prometheus"])
def test_hostile_label_values_are_escaped_and_come_back_unchanged(parse):
    families = list(parse(dashboards.openmetrics([hostile_run()])))
    samples = samples_of(families, THROUGHPUT) + samples_of(families, PUBLIC_KEY)
    assert len(samples) == 3
    for sample in samples:
        assert sample.labels["host"] == HOSTILE
        assert sample.labels["firmware"] == 'fw "1.0"\\beta\nrc=1, 2'
        assert sample.labels["openssl_version"] == '3.0 "x",y=z\\'
        assert sample.labels["board"] == 'Cortex "A53"\\x'
    values = {s.labels["algorithm"]: s.value for s in samples}
    assert values == {"aes-256-gcm": 123456789.125, "rsa2048": 1e-3, "sha256": 1e21}
    assert {s.labels["cpu_cluster"] for s in samples} == {"", 'cl "big"=1'}


def test_line_protocol_round_trips_every_figure_and_label():
    runs = fleet_store.fleet_runs()
    lines = dashboards.influx(runs).splitlines()
    want = expected(runs, newest_only=False)
    assert len(lines) == len(want)
    by_ident = {}
    for line in lines:
        point = parse_line(line)
        tags = point["tags"]
        by_ident[(point["measurement"], tags["host"], tags["algorithm"], tags.get("api", ""),
                  tags.get("operation", ""), tags["threads"], tags.get("block_size", ""), tags.get("cpu_cluster", ""),
                  tags["run"], point["time"])] = point
    for (family, host, key, run_id), (labels, value, when) in want.items():
        measurement, field = dashboards.INFLUX[family]
        point = by_ident[(measurement, host, key.algorithm, key.api or "", key.operation or "", str(key.threads),
                          "" if key.block_size is None else str(key.block_size), key.cpu or "", run_id,
                          int(when) * 1_000_000_000)]
        # line protocol has no empty tag
        assert point["tags"] == {k: v for k, v in {**labels, "run": run_id}.items() if v}
        assert point["fields"][field] == value and isinstance(point["fields"]["samples"], int)


def test_line_protocol_escapes_hostile_tags():
    lines = dashboards.influx([hostile_run()]).splitlines()
    assert len(lines) == 3 and all("\n" not in line for line in lines)
    for line in lines:
        point = parse_line(line)
        # a line feed cannot be carried in a tag: it comes back as the two characters backslash, n
        assert point["tags"]["host"] == HOSTILE.replace("\n", "\\n")
        assert point["tags"]["firmware"] == 'fw "1.0"\\beta\\nrc=1, 2'
        # a backslash line protocol cannot carry (last in the value) is the fullwidth one, never eating the space
        assert point["tags"]["openssl_version"] == '3.0 "x",y=z\uff3c'
        assert point["time"] == 1767225600 * 1_000_000_000
    fields = {parse_line(line)["tags"]["algorithm"]: parse_line(line)["fields"] for line in lines}
    assert fields["sha256"]["bytes_per_second"] == 1e21 and fields["rsa2048"]["ops_per_second"] == 1e-3


@pytest.mark.parametrize("raw, escaped", [
    # InfluxData's line protocol reference (v2), "Special characters" and its examples
    ("tag Value1", "tag\\ Value1"),
    ("tag,value", "tag\\,value"),
    ("a=b", "a\\=b"),
    ("🍭", "🍭"),
    ("C:\\path", "C:\\path"),  # a backslash before anything but , = or space is itself (InfluxDB's models/points.go)
])
def test_tag_escaping_follows_the_spec_examples(raw, escaped):
    assert dashboards._escape_key(raw) == escaped
    assert parse_line(f"m,t={escaped} f=1")["tags"]["t"] == raw


@pytest.mark.parametrize("raw, read_back", [("dir\\", "dir\uff3c"), ("a\\,b", "a\uff3c,b"), ("a\\ b", "a\uff3c b"),
                                            ("a\\=b", "a\uff3c=b"), ("a\\\nb", "a\\\\nb")])
def test_a_backslash_line_protocol_cannot_carry_never_ends_the_tag(raw, read_back):
    point = parse_line(f"m,t={dashboards._escape_key(raw)},u=v f=1")
    assert point["tags"] == {"t": read_back, "u": "v"}


def test_spec_measurement_example():
    """'my\\ Measurement fieldKey="string value"': a space in a measurement name is escaped, a comma too."""
    assert dashboards._escape_measurement("my Measurement") == "my\\ Measurement"
    assert parse_line('my\\ Measurement fieldKey="string value"')["measurement"] == "my Measurement"
    assert parse_line(f"{dashboards._escape_measurement('a,b c')} f=1")["measurement"] == "a,b c"


def test_numbers_read_back_exactly():
    for value in (0.0, 1.0, 16944352.0, 123456789.125, 1e21, 1e-3, 2.0 ** 53 + 2, math.pi):
        assert float(dashboards._number(value)) == value
        assert float(dashboards._number_field(value)) == value


def test_report_writes_the_file_a_collector_reads_in_one_piece(tmp_path):
    results = fleet_store.save(fleet_store.fleet_runs(), tmp_path / "results")
    out = tmp_path / "textfile" / "sslbench.prom"
    out.parent.mkdir()
    sslbench = str(Path(sys.executable).parent / "sslbench")
    done = subprocess.run([sslbench, "report", "--all", "--format", "openmetrics", "--results", str(results),
                           "-o", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert list(out.parent.iterdir()) == [out]  # no temporary file left beside it (.prom only is read)
    hosts = {s.labels["host"] for f in prometheus_families(out.read_text()) for s in f.samples}
    assert hosts == {"wrt3200", "pi4", "r7000", "rock5b", "apu2"}
    influx = subprocess.run([sslbench, "report", "--all", "--format", "influx", "--results", str(results)],
                            capture_output=True, text=True)
    assert influx.returncode == 0 and all(parse_line(line) for line in influx.stdout.splitlines())
    wrong = subprocess.run([sslbench, "report", "--format", "influx", "--timestamps", "--results", str(results)],
                           capture_output=True, text=True)
    assert wrong.returncode == 2 and "--timestamps is for --format openmetrics" in wrong.stderr


def test_no_runs_no_figures():
    assert dashboards.openmetrics([]) == "# EOF\n" and dashboards.influx([]) == ""
