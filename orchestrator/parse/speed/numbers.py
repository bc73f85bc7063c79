"""openssl's printed numbers: a rate, or why a figure is not one (failed, not measured, timed at 0)."""
from __future__ import annotations

# One number as `openssl speed` prints it (also inf/nan when the measured time was 0).
NUM = r"(?:-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|-?inf|-?nan)"
INFINITY = float("inf")


def number(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return None if value != value or value in (INFINITY, -INFINITY) else value


def is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def figure(token: str, operation: str | None, printed: str | None = None) -> tuple[float | None, str | None]:
    """(rate, None) for a figure openssl measured; (None, why) for one it printed without measuring.

    apps/speed.c prints what it computed, whatever it was: a failed operation counts -1 (`-0.1` for
    a verify that failed over 10 s), a test that never ran 0 (`0.00`), one timed at 0 s inf or nan."""
    printed = (printed or token).strip()
    try:
        value = float(token)
    except ValueError:
        return None, f"openssl printed {printed!r}, not a number"
    if 0.0 < value < INFINITY:
        return value, None
    if value != value or value in (INFINITY, -INFINITY):
        return None, f"openssl printed {printed!r} (the measured time was 0)"
    if value < 0:
        return None, f"{operation or 'the test'} failed (openssl printed {printed!r})"
    return None, f"not measured (openssl printed {printed!r})"


def figure_from_seconds(token: str, operation: str) -> tuple[float | None, str | None]:
    """The rate of a seconds/op figure (`-mr` up to 1.1.0), or why there is none."""
    seconds, error = figure(token, operation)
    return (None, error) if seconds is None else (1.0 / seconds, None)


def int_or_none(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def all_zero(values: list[str]) -> str | None:
    """A full `openssl speed` run prints 0.00 in every column for what the build left out (md2, idea …)."""
    if all(v.strip().rstrip("kK") in ("0.00", "0", "0.0") for v in values):
        return "not in this OpenSSL build (openssl printed 0.00 for every block size)"
    return None
