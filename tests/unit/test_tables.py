"""Comparison tables from many hosts' records, rendered in all four formats."""
import csv
import dataclasses
import io
import json

import pytest

from orchestrator.errors import UserError
from orchestrator.model import HostResult, Measurement, OpenSSLBuild, Run
from orchestrator.render import tables
from orchestrator.units import fmt_number, fmt_throughput, mbits, mbytes


def tp(algorithm, size, bps, *, threads=1, api="evp", status="ok", repeat=0, flags=()):
    return Measurement(algorithm=algorithm, block_size=size, bytes_per_second=bps, threads=threads, api=api,
                       status=status, repeat=repeat, flags=list(flags), reason="no chacha in 1.0.2" if status != "ok" else None)


def pk(algorithm, op, ops):
    return Measurement(algorithm=algorithm, operation=op, ops_per_second=ops, api="legacy")


@pytest.fixture
def run():
    pi = HostResult(host="pi4", firmware="raspbian-11", openssl=OpenSSLBuild(version="1.1.1w"), measurements=[
        tp("aes-128-gcm", 16, 12_630_540.0), tp("aes-128-gcm", 16384, 30_703_620.0),
        tp("aes-128-gcm", 16384, 31_000_000.0, repeat=1), tp("aes-128-gcm", 16384, 29_000_000.0, repeat=2),
        tp("chacha20-poly1305", 16, 40_000_000.0),
        pk("rsa2048", "sign", 120.5), pk("rsa2048", "verify", 4000.0),
    ])
    router = HostResult(host="wrt", flags=["busy"], openssl=OpenSSLBuild(version="1.0.2u"), measurements=[
        tp("aes-128-gcm", 16, 5_000_000.0), tp("aes-128-gcm", 16384, 9_000_000.0),
        tp("chacha20-poly1305", 16, None, status="unsupported"),
        pk("rsa2048", "sign", 20.0),
    ])
    return Run(run_id="2026-12-02T18-00-00Z", created="2026-12-02T18:00:00Z", hosts=[pi, router])


def test_records_are_flat_and_tagged(run):
    rows = tables.records_from_runs([run])
    assert len(rows) == 11
    first = rows[0]
    assert set(first) == {f.name for f in dataclasses.fields(Measurement)} | {"run_id", "host", "firmware"}
    assert (first["run_id"], first["host"], first["firmware"], first["openssl_version"]) == (
        "2026-12-02T18-00-00Z", "pi4", "raspbian-11", "1.1.1w")
    assert [r["flags"] for r in rows if r["host"] == "wrt"][0] == ["busy"]  # host-wide flags reach each record
    json.dumps(rows)  # plain data


def test_throughput_by_host_medians_units_and_unsupported(run):
    headers, rows = tables.throughput_table(tables.records_from_runs([run]), by="host")
    assert headers == ["algorithm", "api", "threads", "host", "16 B MB/s", "16384 B MB/s", "flags"]
    assert rows == [
        ["aes-128-gcm", "evp", 1, "pi4", 12.63, 30.7, ""],   # median of 30.70, 31.0, 29.0 MB/s
        ["aes-128-gcm", "evp", 1, "wrt", 5.0, 9.0, "busy"],  # the router's host-wide flag
        ["chacha20-poly1305", "evp", 1, "pi4", 40.0, "", ""],
        ["chacha20-poly1305", "evp", 1, "wrt", "unsupported", "", "busy"],
    ]


def test_no_flags_column_when_nothing_is_flagged(run):
    run.hosts[1].flags = []
    headers, rows = tables.throughput_table(tables.records_from_runs([run]))
    assert "flags" not in headers and len(rows[0]) == len(headers)
    run.hosts[0].measurements[1].flags = ["throttled"]
    headers, rows = tables.throughput_table(tables.records_from_runs([run]))
    assert headers[-1] == "flags" and rows[0][-1] == "throttled" and rows[1][-1] == ""


def test_throughput_by_algorithm_in_mbit_and_both(run):
    records = tables.records_from_runs([run])
    headers, rows = tables.throughput_table(records, by="algorithm", unit="Mbit/s")
    assert headers[:4] == ["host", "algorithm", "api", "threads"]
    assert rows[0][:4] == ["pi4", "aes-128-gcm", "evp", 1]
    assert rows[0][4] == round(12_630_540 * 8 / 1e6, 2)
    headers, rows = tables.throughput_table(records, unit="both")
    assert headers[4:] == ["16 B MB/s", "16 B Mbit/s", "16384 B MB/s", "16384 B Mbit/s", "flags"]
    assert rows[1][4:] == [5.0, 40.0, 9.0, 72.0, "busy"]


def test_single_log_without_host_has_no_host_column(run):
    records = [dict(r, host=None) for r in tables.records(run.hosts[:1])]
    headers, _ = tables.throughput_table(records, unit_in_header=False)
    assert headers == ["algorithm", "api", "threads", "16 B", "16384 B"]


def test_public_key_table(run):
    headers, rows = tables.pk_table(tables.records_from_runs([run]), by="host")
    assert headers == ["algorithm", "api", "threads", "host", "sign/s", "verify/s", "flags"]
    assert rows == [["rsa2048", "legacy", 1, "pi4", 120.5, 4000.0, ""], ["rsa2048", "legacy", 1, "wrt", 20.0, "", "busy"]]


def test_render_all_four_formats(run):
    headers, rows = tables.throughput_table(tables.records_from_runs([run]), by="host")
    text = tables.render(headers, tables.display_rows(rows, "table"), "table")
    assert "unsupported" in text and "30.7" in text and "12.6" in text
    markdown = tables.render(headers, tables.display_rows(rows, "markdown"), "markdown")
    assert markdown.splitlines()[0].startswith("| algorithm") and "|--" in markdown.splitlines()[1].replace(" ", "")
    parsed_csv = list(csv.reader(io.StringIO(tables.render(headers, tables.display_rows(rows, "csv"), "csv"))))
    assert parsed_csv[0] == headers and parsed_csv[1][4] == "12.63"
    data = json.loads(tables.render(headers, tables.display_rows(rows, "json"), "json"))
    assert data[0]["16384 B MB/s"] == 30.7 and data[3]["16 B MB/s"] == "unsupported"


def test_bad_grouping_and_unit_are_user_errors(run):
    records = tables.records_from_runs([run])
    with pytest.raises(UserError):
        tables.throughput_table(records, by="color")
    with pytest.raises(UserError):
        tables.throughput_table(records, unit="MiB/s")


def test_units_are_decimal():
    assert mbytes(125_000_000) == 125.0
    assert mbits(125_000_000) == 1000.0
    assert [fmt_number(v) for v in (0, 0.01234, 1.234, 12.34, 123.4, 12345.6)] == [
        "0", "0.0123", "1.23", "12.3", "123", "12,346"]
    assert fmt_throughput(31_443_970) == "31.4 MB/s (252 Mbit/s)"


# What tabulate 0.10 printed for these with disable_numparse ("simple" for table, "github" for markdown), kept as
# the expected text when sslbench's own renderer replaced it: the layouts stay the same.
RENDERED = [
    (["host", "threads", "MB/s", "ok", "note"], [["pi4", 1, 12.63, True, None], ["  wrt ", 4, 9.0, False, "busy"]],
     "host    threads    MB/s    ok     note\n------  ---------  ------  -----  ------\npi4     1          12.63   True\n"
     "wrt     4          9.0     False  busy",
     "| host   | threads   | MB/s   | ok    | note   |\n|--------|-----------|--------|-------|--------|\n"
     "| pi4    | 1         | 12.63  | True  |        |\n| wrt    | 4         | 9.0    | False | busy   |"),
    # a failed host's reason over several lines; a row with nothing in it takes no line once any value has breaks
    (["host", "status", "reason"],
     [["wrt", "failed", "ssh: connect to host wrt\r\nConnection refused\n"], ["pi4", "ok", None], [None, "", "   "]],
     "host    status    reason\n------  --------  ------------------------\nwrt     failed    ssh: connect to host wrt\n"
     "                  Connection refused\npi4     ok",
     "| host   | status   | reason                   |\n|--------|----------|--------------------------|\n"
     "| wrt    | failed   | ssh: connect to host wrt |\n|        |          | Connection refused       |\n"
     "| pi4    | ok       |                          |"),
    (["block\nsize", "MB/s"], [[16, 1.5]],
     "block    MB/s\nsize\n-------  ------\n16       1.5",
     "| block   | MB/s   |\n| size    |        |\n|---------|--------|\n| 16      | 1.5    |"),
]


@pytest.mark.parametrize("headers, rows, table, markdown", RENDERED)
def test_text_and_markdown_layout(headers, rows, table, markdown):
    assert tables.render(headers, rows, "table") == table
    assert tables.render(headers, rows, "markdown") == markdown


def test_a_pipe_in_a_markdown_cell_is_escaped_so_the_row_keeps_its_columns():
    """A failure reason joins the host's lines with " | ": `run/report/hosts --format markdown` split it into
    cells of their own (the report page escaped it, the printed table did not)."""
    reason = "Ship the runner: cat: write error: No space left on device | exit code 1"
    text = tables.render(["host", "status", "reason"], [["a|b", "failed", reason]], "markdown")
    body = text.splitlines()[2]
    assert body.replace("\\|", "").count("|") == 4  # the borders of three cells only
    assert "a\\|b" in body and "No space left on device \\| exit code 1" in body
    assert tables.render(["host"], [["a|b"]], "table").splitlines()[2] == "a|b"  # plain tables as they were


def test_long_host_names_cut_alike_keep_the_end_that_tells_them_apart():
    """A fleet numbered at the end: cut at their end, router-…-01 and router-…-02 read as one host whose rows
    differ. Only then is the middle cut; a column whose cut values stay apart is cut at the end as before."""
    rows = [[f"datacenter-west-building-a-floor-3-rack-12-router-{n:02d}", "ok", "DD-WRT"] for n in (1, 2, 2)]
    text = tables.render(["host", "status", "os"], rows, "table", 40)
    hosts = [line.split()[0] for line in text.splitlines()[2:5]]
    assert len(set(hosts)) == 2 and hosts[0].endswith("router-01") and hosts[1].endswith("router-02"), text
    assert all(len(line) <= 40 for line in text.splitlines()) and "abbreviated host" in text
    apart = tables.render(["host", "os"], [["a-very-long-host-name-number-one", "x"], ["another-long-name-of-a-host",
                                                                                       "y"]], "table", 26)
    cut = [line.split()[0] for line in apart.splitlines()[2:4]]
    assert all(host.endswith("…") for host in cut) and cut[0].startswith("a-very-long") and cut[0] != cut[1], apart


def test_a_record_has_every_measurement_field_and_its_tags():
    """tables.Record types what tables.records makes: a Measurement's fields (a new field is a new key) and the
    host, run and firmware."""
    fields = {f.name for f in dataclasses.fields(Measurement)}
    assert set(tables.Record.__annotations__) == fields | {"run_id", "host", "firmware"}
    result = HostResult(host="router", measurements=[Measurement("sha256", 16, 1e6)])
    assert set(tables.records([result], run_id="r")[0]) == set(tables.Record.__annotations__)
