"""Formatting figures and durations for people: one place (orchestrator.units)."""
from orchestrator import units


def test_fmt_rate_throughput_and_public_key():
    assert units.fmt_rate(20e6) == "20.0 MB/s"
    assert units.fmt_rate(3344.4, "ops/s") == "3,344 ops/s"


def test_fmt_value_with_spread_and_without_a_value():
    assert units.fmt_value(31.4e6, "B/s", 2.2) == "31.4 MB/s ± 2%"
    assert units.fmt_value(3344.4, "ops/s", 5000.0) == "3,344 ops/s ± >999%"
    assert units.fmt_value(31.4e6, "B/s") == "31.4 MB/s"
    assert units.fmt_value(None, "B/s", 1.0) == "-"


def test_format_eta():
    assert units.format_eta(5) == "5s"
    assert units.format_eta(4.2) == "5s"  # rounded up
    assert units.format_eta(516) == "8m36s"
    assert units.format_eta(7300) == "2h01m"


def test_dates_of_stored_times_in_utc():
    assert units.fmt_date("2026-03-01T23:30:00+00:00") == "2026-03-01"
    assert units.fmt_time("2026-03-01T23:30:59+00:00") == "2026-03-01 23:30"
    assert units.fmt_time("2026-03-02T01:30:00+02:00") == "2026-03-01 23:30"  # said in UTC
    assert units.fmt_time("2026-03-01T23:30:00Z") == "2026-03-01 23:30"
    assert units.fmt_date("yesterday") == "yesterday"  # a hand-written run.json: as written
