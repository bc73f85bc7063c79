"""The measured cell: one key for "the same figure", a host's measurements grouped, medians, the best cluster."""
from orchestrator.analysis import cells
from orchestrator.analysis.cells import Key
from orchestrator.evidence import validity
from orchestrator.model import SPEED, HostResult, Measurement, Run


def tp(value, *, block=1024, threads=1, cpu=None, api="evp", **extra):
    return Measurement("aes-256-gcm", block_size=block, bytes_per_second=value, threads=threads, api=api, cpu=cpu,
                       **extra)


def test_key_of_a_measurement_names_every_field():
    key = cells.key_of(tp(1.0, cpu="Cortex-A76"))
    assert key == Key("aes-256-gcm", "evp", None, 1, 1024, "Cortex-A76")
    assert (key.algorithm, key.api, key.operation, key.threads, key.block_size, key.cpu, key.kind,
            key.implementation) == tuple(key) == cells.key_of(tp(1.0, cpu="Cortex-A76"))
    assert (key.kind, key.implementation) == (SPEED, None)
    sign = cells.key_of(Measurement("rsa2048", operation="sign", ops_per_second=100.0))
    assert sign == Key("rsa2048", None, "sign", 1, None) and sign.cpu is None


def test_host_cells_keep_each_cluster_apart_and_pool_repeats():
    result = HostResult("board", measurements=[
        tp(900.0, cpu="Cortex-A76"), tp(910.0, cpu="Cortex-A76", repeat=1),
        tp(400.0, cpu="Cortex-A55"), tp(2000.0, threads=8),
        tp(None, block=16384, status="unsupported", reason="no"),
    ])
    grouped = cells.host_cells(result)
    big = Key("aes-256-gcm", "evp", None, 1, 1024, "Cortex-A76")
    assert grouped[big].samples == [900.0, 910.0]
    assert all(type(key) is Key for key in grouped)  # named keys, though built from plain tuples
    assert grouped[Key("aes-256-gcm", "evp", None, 1, 16384)].flags == {"unsupported"}
    assert cells.medians(grouped) == {big: 905.0, Key("aes-256-gcm", "evp", None, 1, 1024, "Cortex-A55"): 400.0,
                                      Key("aes-256-gcm", "evp", None, 8, 1024): 2000.0}


def test_best_core_quotes_the_best_cluster_under_a_key_without_cpu():
    values = {Key("aes-256-gcm", "evp", None, 1, 1024, "Cortex-A76"): 900.0,
              Key("aes-256-gcm", "evp", None, 1, 1024, "Cortex-A55"): 400.0,
              Key("aes-256-gcm", "evp", None, 8, 1024): 2000.0}
    assert cells.best_core(values) == {Key("aes-256-gcm", "evp", None, 1, 1024): 900.0,
                                       Key("aes-256-gcm", "evp", None, 8, 1024): 2000.0}


def test_carried_flags_and_a_short_progress_line():
    result = HostResult("box", flags=["throttled", "cores-offline"], measurements=[
        tp(1.0, flags=["hot", "some-note"]), tp(1.0, block=16, seconds=2.1), tp(1.0, block=64, seconds=2.99)])
    grouped = cells.host_cells(result, busy_below=validity.busy_below(3.0))  # 2.1 s of CPU on a 3 s cell: busy
    assert grouped[Key("aes-256-gcm", "evp", None, 1, 1024)].flags == {"throttled", "cores-offline", "hot"}
    assert grouped[Key("aes-256-gcm", "evp", None, 1, 16)].flags == {"throttled", "cores-offline", "busy"}
    assert "busy" not in grouped[Key("aes-256-gcm", "evp", None, 1, 64)].flags


def test_requested_seconds_from_the_run_matrix():
    assert cells.requested_seconds(Run("r", "t", matrix={"seconds": 3})) == 3.0
    assert cells.requested_seconds(Run("r", "t", matrix={"seconds": None})) is None
    assert cells.requested_seconds(Run("r", "t", matrix={})) is None


def test_sort_key_orders_public_key_rows_and_clusters():
    keys = [Key("a", "evp", None, 1, 16384), Key("a", "evp", None, 1, 16, "LITTLE"), Key("a", "evp", None, 1, 16),
            Key("a", None, "sign", 1, None)]
    assert sorted(keys, key=cells.sort_key) == [keys[3], keys[2], keys[1], keys[0]]


def test_a_flat_record_has_its_measurements_key():
    from orchestrator.render import tables

    m = tp(1.0, cpu="Cortex-A55", threads=1)
    [record] = tables.records([HostResult("board", measurements=[m])])
    assert cells.record_key(record) == cells.key_of(m) and type(cells.record_key(record)) is Key
