"""The result store: run.json round trips, its compact forms (schema 2 to 4), and older files still loading."""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.errors import UserError
from orchestrator.model import (FORWARD, REVERSE, SCHEMA_VERSION, SPEED, TUNNEL, CpuFacts, HostResult,
                                 InstalledPackage, Measurement, OpenSSLBuild, OsFacts, ProcessCpu, Run, TunnelEvidence,
                                 TunnelMethod)

DATA = Path(__file__).resolve().parents[1] / "data" / "store"


def sample_run() -> Run:
    plain = Measurement("aes-256-gcm", 16, 123456780.0, api="evp", openssl_version="3.0.13", count=23148146,
                        seconds=3.0)
    odd = Measurement("aes-256-gcm", 16, 99e6, threads=4, api="evp", status="error", reason="killed", repeat=2,
                      flags=["busy", "hot"])
    pk = Measurement("rsa2048", operation="sign", ops_per_second=1234.5, count=12345, seconds=10.0)
    host = HostResult("router", firmware="23.05.4", cpu=CpuFacts(model="Cortex-A53", crypto=["aes"], logical_cpus=4),
                      os=OsFacts(family="openwrt"), openssl=OpenSSLBuild(version="3.0.13"),
                      measurements=[plain, odd, pk], flags=["throttled"], conditions={"before": {"load": [0.1]}},
                      logs=["router/a.log"])
    return Run(run_id="20260101T000000.000000Z-ab12", created="2026-01-01T00:00:00+00:00", command=["sslbench", "run"],
               matrix={"seconds": 3}, hosts=[host, HostResult("down", status="unreachable", reason="no route")])


def test_round_trip_keeps_every_field(tmp_path):
    run = sample_run()
    store.save_run(tmp_path, run)
    assert store.load_run(tmp_path) == run


def test_run_json_is_compact_one_host_per_line_with_measurements_as_rows(tmp_path):
    path = store.save_run(tmp_path, sample_run())
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 + 2  # head, one line per host, closing
    assert not any(line.startswith(" ") for line in lines)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema"] == SCHEMA_VERSION == 4
    host = data["hosts"][0]
    # openssl-speed rows only: the schema 3 header, through cpu (kind and implementation at their defaults, cut)
    assert host["measurement_fields"] == [f.name for f in dataclasses.fields(Measurement)][:15]
    assert host["measurement_fields"][-1] == "cpu"
    plain, odd, pk = host["measurements"]
    # Field order: algorithm block_size bytes_per_second operation ops_per_second threads api openssl_version
    # count seconds status reason repeat flags; the trailing defaults (ok, None, 0, []) are cut.
    assert plain == ["aes-256-gcm", 16, 123456780.0, None, None, 1, "evp", "3.0.13", 23148146, 3.0]
    assert odd == ["aes-256-gcm", 16, 99e6, None, None, 4, "evp", None, None, None, "error", "killed", 2,
                   ["busy", "hot"]]
    assert pk == ["rsa2048", None, None, "sign", 1234.5, 1, None, None, 12345, 10.0]


def test_rows_under_other_field_names_load_by_name(tmp_path):
    """A store written by another version (a field added, the order changed): rows are read by their header."""
    path = store.save_run(tmp_path, sample_run())
    data = json.loads(path.read_text(encoding="utf-8"))
    names = [f.name for f in dataclasses.fields(Measurement)]
    expected = sample_run().hosts[0].measurements
    data["hosts"][0]["measurement_fields"] = ["from_the_future", *reversed(names)]
    data["hosts"][0]["measurements"] = [[7, *(getattr(m, name) for name in reversed(names))] for m in expected]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert store.load_run(tmp_path).hosts[0].measurements == expected
    # Short rows under a foreign header: the missing trailing fields take the defaults.
    data["hosts"][0]["measurement_fields"] = [*names, "from_the_future"]
    data["hosts"][0]["measurements"] = [["sha256", 64, 1e6]]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert store.load_run(tmp_path).hosts[0].measurements == [Measurement("sha256", 64, 1e6)]


def test_schema_2_objects_without_defaults_still_load(tmp_path):
    data = {"schema": 2, "run_id": "r", "created": "2026-01-01T00:00:00+00:00",
            "hosts": [{"host": "h", "measurements": [
                {"algorithm": "aes-256-gcm", "block_size": 16, "bytes_per_second": 1e6, "api": "evp"},
                {"algorithm": "rsa2048", "operation": "sign", "ops_per_second": 10.5, "repeat": 1, "flags": ["hot"]}]}]}
    (tmp_path / store.RUN_FILE).write_text(json.dumps(data), encoding="utf-8")
    assert store.load_run(tmp_path).hosts[0].measurements == [
        Measurement("aes-256-gcm", 16, 1e6, api="evp"),
        Measurement("rsa2048", operation="sign", ops_per_second=10.5, repeat=1, flags=["hot"])]


def test_empty_run_writes_valid_json(tmp_path):
    run = Run(run_id="r", created="2026-01-01T00:00:00+00:00")
    store.save_run(tmp_path, run)
    assert store.load_run(tmp_path) == run


# A run.json as schema 1 wrote it (indented, every key of every record), cut down to one host and two records.
SCHEMA_1 = """{
  "schema": 1,
  "run_id": "20250101T000000Z-00aa",
  "created": "2025-01-01T00:00:00+00:00",
  "source": "import",
  "command": ["sslbench", "import"],
  "matrix": {},
  "hosts": [
    {
      "host": "old-box",
      "status": "ok",
      "reason": null,
      "firmware": "19.07",
      "cpu": {"model": "MIPS 24Kc", "arch": "mips", "logical_cpus": 1, "crypto": [], "cores": [],
              "system_type": null, "bogomips": 265.42},
      "os": {"family": "openwrt", "name": null, "version": "19.07.10", "revision": null, "kernel": null,
             "machine": null, "uname": null},
      "openssl": {"version": "1.1.1w", "version_line": null, "built_on": null, "options": null, "compiler": null,
                  "cpuinfo": null, "platform": null},
      "measurements": [
        {"algorithm": "aes-128-cbc", "block_size": 16, "bytes_per_second": 5120000.0, "operation": null,
         "ops_per_second": null, "threads": 1, "api": "evp", "openssl_version": "1.1.1w", "count": 3200000,
         "seconds": 2.99, "status": "ok", "reason": null, "repeat": 0, "flags": []},
        {"algorithm": "rsa2048", "block_size": null, "bytes_per_second": null, "operation": "verify",
         "ops_per_second": 310.5, "threads": 1, "api": null, "openssl_version": "1.1.1w", "count": null,
         "seconds": null, "status": "ok", "reason": null, "repeat": 1, "flags": ["busy"], "from_the_future": 1}
      ],
      "flags": [],
      "conditions": {},
      "logs": []
    }
  ]
}
"""


def test_schema_1_file_still_loads(tmp_path):
    (tmp_path / store.RUN_FILE).write_text(SCHEMA_1, encoding="utf-8")
    run = store.load_run(tmp_path)
    assert (run.schema, run.run_id, run.source) == (1, "20250101T000000Z-00aa", "import")
    (host,) = run.hosts
    assert (host.host, host.firmware, host.cpu.bogomips, host.os.version) == ("old-box", "19.07", 265.42, "19.07.10")
    aes, rsa = host.measurements
    assert aes == Measurement("aes-128-cbc", 16, 5120000.0, api="evp", openssl_version="1.1.1w", count=3200000,
                              seconds=2.99)
    assert rsa == Measurement("rsa2048", operation="verify", ops_per_second=310.5, openssl_version="1.1.1w",
                              repeat=1, flags=["busy"])  # the key this version does not know is dropped
    # Saved again, it is written in the current (compact) form and reads back the same.
    store.save_run(tmp_path, run)
    assert json.loads((tmp_path / store.RUN_FILE).read_text())["schema"] == SCHEMA_VERSION
    assert store.load_run(tmp_path).hosts == run.hosts


def test_newer_schema_is_refused_with_advice(tmp_path):
    (tmp_path / store.RUN_FILE).write_text(json.dumps({"schema": SCHEMA_VERSION + 1, "run_id": "x"}))
    with pytest.raises(UserError, match="newer sslbench"):
        store.load_run(tmp_path)


def test_measurement_to_dict_is_complete_and_rows_copy_lists():
    m = Measurement("sha256", 64, 1e6, flags=["busy"])
    full = m.to_dict()
    assert full["threads"] == 1 and full["status"] == "ok" and full["reason"] is None and len(full) > 10
    full["flags"].append("hot")
    m.to_row()[-1].append("hot")
    assert m.flags == ["busy"]  # copies, not the measurement's own list
    assert Measurement.from_dict(full) != m
    assert Measurement.from_dict(m.to_dict()) == m
    assert Measurement("sha256").to_row() == ["sha256"]
    # `sslbench parse --json` writes an openssl-speed figure as it did before schema 4: no kind, no implementation
    assert "kind" not in full and "implementation" not in full
    tunnel = Measurement("wireguard", bytes_per_second=2.9e7, operation=FORWARD, kind=TUNNEL, implementation="kernel")
    assert (tunnel.to_dict()["kind"], tunnel.to_dict()["implementation"]) == (TUNNEL, "kernel")
    assert Measurement.from_dict(tunnel.to_dict()) == tunnel


def test_runs_made_in_the_same_second_list_in_creation_order(tmp_path):
    made = [store.new_run_dir(tmp_path).name for _ in range(30)]  # well within one or two seconds
    for name in made:
        store.save_run(tmp_path / name, Run(run_id=name, created=store.utc_now()))
    assert re.fullmatch(r"\d{8}T\d{6}\.\d{6}Z-[0-9a-f]{4}", made[0])
    assert [p.name for p in store.list_runs(tmp_path)] == made
    assert store.resolve_run("latest", tmp_path).name == made[-1]


def test_whole_second_ids_of_older_stores_sort_by_time_among_new_ones(tmp_path):
    names = ["20260101T120000Z-ffff", "20260101T120000.000001Z-0000", "20260101T120000.5Z-aaaa",
             "20260101T120001Z-0000", "20260101T120001.250000Z-0000", "baseline"]
    for name in reversed(names):  # as a store written before the journal has them: ordered by their ids alone
        (tmp_path / name).mkdir()
        store.save_run(tmp_path / name, Run(run_id=name, created="2026-01-01T12:00:00+00:00"))
    assert [p.name for p in store.list_runs(tmp_path)] == names


def test_rows_of_an_older_version_missing_the_newest_fields_load_with_their_defaults(tmp_path):
    """Fields are only ever added last, so an older header is a prefix of ours: rows load positionally."""
    path = store.save_run(tmp_path, sample_run())
    data = json.loads(path.read_text(encoding="utf-8"))
    names = [f.name for f in dataclasses.fields(Measurement)]
    older = names[:-1]  # e.g. a store written before Measurement.cpu existed
    expected = sample_run().hosts[0].measurements
    data["hosts"][0]["measurement_fields"] = older
    data["hosts"][0]["measurements"] = [[getattr(m, name) for name in older] for m in expected]
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = store.load_run(tmp_path).hosts[0].measurements
    assert loaded == [dataclasses.replace(m, **{names[-1]: dataclasses.fields(Measurement)[-1].default})
                      for m in expected]


def test_a_run_at_work_is_read_with_its_finished_hosts_and_written_whole_at_the_end(tmp_path):
    from orchestrator.model import HostResult, Measurement, Run

    run_dir = store.new_run_dir(tmp_path)
    run = Run(run_id=run_dir.name, created="now", hosts=[HostResult("a"), HostResult("b")], complete=False)
    store.save_run(run_dir, run)
    done = HostResult("b", measurements=[Measurement("sha256", 16, 1e6)])
    store.save_host(run_dir, "b", done)
    store.save_host(run_dir, "c", HostResult("c", status="failed", reason="x"))
    (run_dir / "a").mkdir()
    (run_dir / "a" / store.HOST_FILE).write_text('{"host": "a", "measure')  # cut short by a crash
    loaded = store.load_run(run_dir)
    assert [(h.host, len(h.measurements), h.status) for h in loaded.hosts] == [("a", 0, "failed"), ("b", 1, "ok"),
                                                                                  ("c", 0, "failed")]
    assert loaded.hosts[0].reason == store.UNFINISHED and loaded.hosts[0].flags == ["incomplete"]
    # complete: run.json is the whole truth, host files are not read again
    loaded.complete = True
    loaded.hosts = loaded.hosts[:1]
    store.save_run(run_dir, loaded)
    assert [h.host for h in store.load_run(run_dir).hosts] == ["a"]


def test_a_run_killed_before_any_host_finished_lists_every_host_as_unfinished_in_every_format(tmp_path):
    """Ctrl-C twice (abort at once) or a killed controller: run.json as written after detect, no host.json. The
    report said `(no measurements)` and JSON `[]`, as if the hosts had measured nothing."""
    import json as json_module

    from orchestrator.render import tables
    from orchestrator.model import HostResult, Run

    run_dir = store.new_run_dir(tmp_path)
    store.save_run(run_dir, Run(run_id=run_dir.name, created="now", complete=False,
                                hosts=[HostResult("pi4"), HostResult("gone", status="unreachable", reason="refused")]))
    run = store.load_run(run_dir)
    for fmt in ("table", "markdown", "csv"):
        text = tables.render_runs([run], fmt)
        assert "pi4" in text and "did not finish" in text and "refused" in text, text
    records = json_module.loads(tables.render_runs([run], "json"))
    assert [(r["host"], r["status"]) for r in records] == [("pi4", "failed"), ("gone", "unreachable")]


def test_a_host_at_work_is_kept_cell_by_cell_and_read_back_as_unfinished(tmp_path):
    """The Collector saves a host after each cell that comes back: a run killed at once (a second Ctrl-C, kill -9)
    is read with those cells, the host failed as unfinished; its final save replaces that."""
    from orchestrator.model import HostResult, Measurement, Run

    run_dir = store.new_run_dir(tmp_path)
    store.save_run(run_dir, Run(run_id=run_dir.name, created="now", complete=False))
    at_work = HostResult("a", measurements=[Measurement("sha256", 16, 1e6)], flags=["busy"])
    store.save_unfinished_host(run_dir, "a", at_work)
    assert at_work.status == "ok" and at_work.flags == ["busy"]  # the live result is not touched
    [host] = store.load_run(run_dir).hosts
    assert (host.status, host.reason, host.flags) == ("failed", store.UNFINISHED, ["busy", "incomplete"])
    assert [m.algorithm for m in host.measurements] == ["sha256"]
    store.save_host(run_dir, "a", at_work)
    assert store.load_run(run_dir).hosts[0].status == "ok"


def test_run_json_says_why_a_run_stopped_early_and_only_then(tmp_path):
    from orchestrator.model import Run

    run_dir = store.new_run_dir(tmp_path)
    store.save_run(run_dir, Run(run_id=run_dir.name, created="now"))
    assert "interrupted" not in json.loads((run_dir / store.RUN_FILE).read_text())
    store.save_run(run_dir, Run(run_id=run_dir.name, created="now", interrupted="interrupted (Ctrl-C)"))
    assert store.load_run(run_dir).interrupted == "interrupted (Ctrl-C)"


def test_a_speed_only_run_writes_the_schema_3_bytes_but_for_its_schema_number(tmp_path):
    """tests/data/store/schema-3-speed was written by schema 3 (its README): loaded and saved by this version, each
    file is the same bytes but "schema":3 -> 4, and host.json (no schema number) is byte for byte the same."""
    old = DATA / "schema-3-speed"
    shutil.copytree(old, tmp_path / "run")
    run = store.load_run(tmp_path / "run")
    assert {m.kind for m in run.hosts[0].measurements} == {SPEED}
    store.save_run(tmp_path / "run", run)
    store.save_host(tmp_path / "run", "router", run.hosts[0])
    before = (old / store.RUN_FILE).read_text(encoding="utf-8")
    assert before.startswith('{"schema":3,')
    after = (tmp_path / "run" / store.RUN_FILE).read_text(encoding="utf-8")
    assert after == before.replace('"schema":3,', '"schema":4,', 1)
    host_json = (tmp_path / "run" / "router" / store.HOST_FILE).read_bytes()
    assert host_json == (old / "router" / store.HOST_FILE).read_bytes()


def tunnel_host() -> HostResult:
    """A host that measured kernel WireGuard both ways, and could not run OpenVPN DCO."""
    forward = Measurement("wireguard", bytes_per_second=29.25e6, operation=FORWARD, repeat=1, kind=TUNNEL,
                          implementation="kernel", flags=["busy"])
    reverse = Measurement("wireguard", bytes_per_second=28.5e6, operation=REVERSE, threads=2, kind=TUNNEL,
                          implementation="kernel")
    dco = Measurement("openvpn-aes-256-gcm", operation=FORWARD, status="unsupported", kind=TUNNEL,
                      implementation="openvpn-dco", reason="not measurable: no ovpn-dco module")
    return HostResult(
        "router", measurements=[Measurement("sha256", 64, 1e6), forward, reverse, dco],
        tunnels=[TunnelMethod("wireguard", "kernel", implementation_version="6.6.73", iperf3_version="3.16", mtu=1420,
                              veth_mtu=1500, duration_seconds=10.0, kernel="6.6.73")],
        tunnel_evidence=[TunnelEvidence("wireguard", "kernel", FORWARD, repeat=1, sender_bytes_per_second=29.5e6,
                                        retransmits=3, udp_rcvbuf_errors=0, udp_sndbuf_errors=0,
                                        cpu_seconds=[ProcessCpu("iperf3", 4.5), ProcessCpu("kworker", 2.25)],
                                        busy_fraction=0.31)],
        installed=[InstalledPackage("iperf3", "3.16-1", "apk"), InstalledPackage("kmod-wireguard", None, "apk")])


def test_tunnel_figures_methods_evidence_and_packages_round_trip(tmp_path):
    run = Run(run_id="r", created="2026-01-01T00:00:00+00:00", hosts=[tunnel_host(), HostResult("plain")])
    store.save_run(tmp_path, run)
    assert store.load_run(tmp_path) == run
    data = json.loads((tmp_path / store.RUN_FILE).read_text(encoding="utf-8"))
    tunnels, plain = data["hosts"]
    # the header names the schema 4 columns because rows hold them; a speed row is still cut after its figure
    assert tunnels["measurement_fields"][-2:] == ["kind", "implementation"]
    assert tunnels["measurements"][0] == ["sha256", 64, 1e6]
    assert tunnels["measurements"][2][-2:] == [TUNNEL, "kernel"]
    assert tunnels["tunnel_evidence"][0]["cpu_seconds"] == [{"name": "iperf3", "seconds": 4.5},
                                                            {"name": "kworker", "seconds": 2.25}]
    assert tunnels["installed"][1] == {"name": "kmod-wireguard", "version": None, "manager": "apk"}
    assert list(tunnels)[-3:] == ["tunnels", "tunnel_evidence", "installed"]
    assert not {"tunnels", "tunnel_evidence", "installed"} & set(plain)  # written only when non-empty
    assert plain["measurement_fields"][-1] == "cpu"
    store.save_host(tmp_path, "router", run.hosts[0])  # host.json, as a host finishes: the same records
    assert HostResult.from_dict(json.loads((tmp_path / "router" / store.HOST_FILE).read_text())) == run.hosts[0]


def test_schema_4_records_with_keys_from_the_future_still_load(tmp_path):
    run = Run(run_id="r", created="2026-01-01T00:00:00+00:00", hosts=[tunnel_host()])
    store.save_run(tmp_path, run)
    data = json.loads((tmp_path / store.RUN_FILE).read_text(encoding="utf-8"))
    data["hosts"][0]["tunnels"][0]["from_the_future"] = 1
    data["hosts"][0]["tunnel_evidence"][0]["cpu_seconds"][0]["pid"] = 42
    data["hosts"][0]["installed"][0]["arch"] = "aarch64_cortex-a53"
    (tmp_path / store.RUN_FILE).write_text(json.dumps(data), encoding="utf-8")
    assert store.load_run(tmp_path) == run
