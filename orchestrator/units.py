"""Units in one place: bytes/s -> MB/s and Mbit/s (decimal: 1 MB = 10^6 bytes, 1 Mbit = 10^6 bits), and the
helpers that format figures, durations and dates for people (tables, diff, reports, progress, plans, history).

`openssl speed` prints "1000s of bytes per second"; network links are sold in Mbit/s. Decimal units keep
both comparable: 125 MB/s is exactly 1000 Mbit/s.
"""
from __future__ import annotations

import datetime as _dt
import math

MB = 1_000_000  # bytes
UNITS = ("MB/s", "Mbit/s")
UNIT_NOTE = "MB/s = 10^6 bytes/s; Mbit/s = 10^6 bits/s"
BITS = "bit/s"  # a figure counted in bits per second (a tunnel's), shown in Mbit/s


def mbytes(bytes_per_second: float) -> float:
    return bytes_per_second / MB


def mbits(bytes_per_second: float) -> float:
    return bytes_per_second * 8 / MB


def convert(bytes_per_second: float, unit: str) -> float:
    """bytes/s in the unit a table shows ("MB/s" or "Mbit/s")."""
    if unit == "MB/s":
        return mbytes(bytes_per_second)
    if unit == "Mbit/s":
        return mbits(bytes_per_second)
    raise ValueError(f"unknown unit {unit!r}; expected one of {UNITS}")


def fmt_number(value: float) -> str:
    """Three significant figures, no exponent, thousands separated: 0.0123, 1.23, 12.3, 123, 12,345."""
    if value != value:  # NaN: openssl printed "nan" for a zero-time cell
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf"
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def fmt_throughput(bytes_per_second: float) -> str:
    """'31.4 MB/s (251 Mbit/s)'."""
    return f"{fmt_number(mbytes(bytes_per_second))} MB/s ({fmt_number(mbits(bytes_per_second))} Mbit/s)"


def fmt_mhz(mhz: float) -> str:
    """'1,500 MHz'."""
    return f"{fmt_number(mhz)} MHz"


def fmt_per_mhz(bytes_per_second_per_mhz: float | None) -> str:
    """Throughput per MHz of clock: '10.0 kB/s' (bytes/s per MHz in); '-' when the clock is unknown."""
    return "-" if bytes_per_second_per_mhz is None else f"{fmt_number(bytes_per_second_per_mhz / 1e3)} kB/s"


def fmt_rate(value: float, unit: str = "B/s") -> str:
    """A figure in the unit its kind shows (kinds.Kind.unit_of): '31.4 MB/s' for throughput (bytes/s in),
    '3,344 ops/s' for public-key rows, '234 Mbit/s' for tunnels (bits/s in: a link's unit)."""
    if unit == "B/s":
        return f"{fmt_number(mbytes(value))} MB/s"
    if unit == BITS:
        return f"{fmt_number(value / MB)} Mbit/s"
    return f"{fmt_number(value)} ops/s"


def fmt_value(value: float | None, unit: str, spread: float | None = None) -> str:
    """A median with its spread: '31.4 MB/s ± 2%', '3,344 ops/s ± 1%'; '-' when there is none."""
    if value is None:
        return "-"
    text = fmt_rate(value, unit)
    if spread is not None:
        text += f" ± {spread:.0f}%" if spread < 1000 else " ± >999%"
    return text


def fmt_delta(pct: float | None) -> str:
    """A change in percent with its sign: '-18.0%', '+2.5%'; '-' when there is none."""
    return "-" if pct is None else f"{pct:+.1f}%"


def fmt_p(p: float | None) -> str:
    """A p-value as benchstat prints it: 'p=0.003', 'p<0.001' below that; '' when there is none."""
    if p is None:
        return ""
    return "p<0.001" if p < 0.0005 else f"p={p:.3f}"


def format_eta(seconds: float) -> str:
    """'5s', '8m36s', '2h01m' (rounded up)."""
    seconds = int(math.ceil(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _parsed(iso: str) -> _dt.datetime | None:
    """An ISO 8601 time as stored (run.created: '2026-01-01T12:00:00+00:00'), in UTC; None when it is not one."""
    try:
        when = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return None
    return when.astimezone(_dt.timezone.utc) if when.tzinfo else when


def fmt_date(iso: str) -> str:
    """'2026-01-01' (UTC) of a stored time; the text as is when it is not an ISO time."""
    when = _parsed(iso)
    return when.strftime("%Y-%m-%d") if when else iso


def fmt_time(iso: str) -> str:
    """'2026-01-01 12:00' (UTC, to the minute) of a stored time; the text as is when it is not an ISO time."""
    when = _parsed(iso)
    return when.strftime("%Y-%m-%d %H:%M") if when else iso


def count(n: int, noun: str, nouns: str | None = None) -> str:
    """`n` and the noun in the number it takes: "1 run", "2 runs", "1 firmware version" (`nouns`: an irregular
    plural)."""
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"
