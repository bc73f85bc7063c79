"""openssl's printed numbers: a rate, or why a figure is not one (failed, not measured, timed at 0)."""
from __future__ import annotations

import re

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


# The last figure of a whole line, by the line's format (apps/speed.c): a public-key row's rate `%8.1f`
# (after its seconds/op columns); `-mr`: `+F:…:%.2f`, `+F2…+F10:…:%f`, `+R:…:%f`, `+R1…+R20:…:%.2f`.
# (Throughput values end with `k`, seconds and progress lines with `s`: a cut leaves a token without it.)
_PK_RATE = re.compile(r"-?\d+\.\d")
_SECONDS = re.compile(r"\d\.\d+s\s")
_MR_LAST = {"+F": re.compile(r"-?\d+\.\d\d"), "+Fn": re.compile(r"-?\d+\.\d{6}"),
            "+R": re.compile(r"-?\d+\.\d{6}"), "+Rn": re.compile(r"-?\d+\.\d\d")}


def uncut(line: str) -> str:
    """The last line of a log cut off in the middle of it, less what the cut may have shortened.

    A cut leaves a shorter number that reads as a figure (`66580.8` -> `6`, `1933858.13k` -> `1933858.1`,
    `from 12` -> `from 1`); openssl prints each figure with its fixed decimals or its unit, so a last
    number without them was cut: that number goes (a whole `-multi`/`-mr` line whose last number is a
    child, a block size or a count: the line goes). A line that ends with a word or a unit is whole."""
    line = line.rstrip()
    if not line or not (line[-1].isdigit() or line[-1] in ".-"):
        return line
    if " from " in line or line.startswith(("Got:", "Forked child")):
        return ""  # `from 1` may have been `from 12`
    if line[0] == "+":
        tag = line.split(":", 1)[0]  # `+F`, `+F2`, `+R`, `+R15`, `+H`, `+DT` …
        pattern = _MR_LAST.get(tag[:2] + "n" if tag[2:].isdigit() else tag)
        head, _, last = line.rpartition(":")
        if pattern is None:
            return ""  # `+H`, `+DT`, `+DTP`: sizes, counts and seconds of a test
        if pattern.fullmatch(last):
            return line
        return head if tag[1] == "F" else ""  # (a `+R` line's count is nothing without its seconds)
    head, last = line.rsplit(None, 1) if " " in line or "\t" in line else ("", line)
    if _PK_RATE.fullmatch(last) and not line.startswith("Doing ") and (
            _SECONDS.search(line) or all(map(_PK_RATE.fullmatch, head.split()))):
        return line  # a public-key row (its seconds/op columns), or the rates a mail client wrapped: whole
    return head.rstrip()
