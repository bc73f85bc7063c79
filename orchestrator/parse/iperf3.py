"""iperf3's output, JSON (`-J`) or plain text, client or server side (3.x), into typed results: one `Iperf3Result`
per test in the text (several runs saved one after the other read apart).

Rates are bits per second as iperf3 prints them (decimal units: `Mbits/sec` is 10^6). The sender's and the
receiver's rate are both kept: the receiver's is what went through (the figure sslbench stores); a plain text
server prints only its own side, so the other stays None. Pure: text in, data out; never raises.

Real outputs of each form are in tests/data/iperf3/ (its README says how they were made).
"""
from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass, field

from orchestrator.model import FORWARD, REVERSE, TUNNEL, Measurement, ParsedLog

JSON = "json"
TEXT = "text"


class Side(enum.Enum):
    """Whose output it is: the client's (`-c`) or the server's (`-s`)."""

    CLIENT = "client"
    SERVER = "server"


@dataclass(frozen=True)
class Iperf3Result:
    """One iperf3 test as one side printed it. `reverse`: the server sent (`-R`); `streams`: parallel streams (`-P`);
    `duration_seconds`: the receiver's measured interval (else the sender's, else the requested `-t`);
    `retransmits`: the sender's TCP retransmits (None where the output does not tell: a receiving text server)."""

    form: str  # JSON or TEXT
    side: Side | None = None
    version: str | None = None
    protocol: str | None = None
    reverse: bool | None = None
    streams: int | None = None
    duration_seconds: float | None = None
    sender_bits_per_second: float | None = None
    receiver_bits_per_second: float | None = None
    retransmits: int | None = None
    cpu_local_percent: float | None = None
    cpu_remote_percent: float | None = None
    error: str | None = None

    @property
    def receiver_bytes_per_second(self) -> float | None:
        return None if self.receiver_bits_per_second is None else self.receiver_bits_per_second / 8

    @property
    def sender_bytes_per_second(self) -> float | None:
        return None if self.sender_bits_per_second is None else self.sender_bits_per_second / 8


def parse_iperf3(text: str) -> list[Iperf3Result]:
    """Every test in `text`: its JSON objects where it holds some, else its plain text."""
    try:
        found = parse_json(text)
        return found if found else parse_text(text)
    except Exception:  # never raises: a parser bug must not cost the user the run
        return []


# --- JSON --------------------------------------------------------------------------------------------------------

def _objects(text: str) -> list[dict[str, object]]:
    """The top-level JSON objects in `text` (one per `-J` run; runs saved one after the other, text around them)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, object]] = []
    at = text.find("{")
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict) and ("start" in value or "end" in value or "error" in value):
            found.append(value)
        at = text.find("{", end)
    return found


def _dict(value: object, key: str) -> dict[str, object]:
    got = value.get(key) if isinstance(value, dict) else None
    return got if isinstance(got, dict) else {}


def _number(value: object, key: str) -> float | None:
    got = value.get(key) if isinstance(value, dict) else None
    return float(got) if isinstance(got, (int, float)) and not isinstance(got, bool) else None


def _int(value: object, key: str) -> int | None:
    got = _number(value, key)
    return int(got) if got is not None else None


def _version(value: object) -> str | None:
    """`iperf 3.12` -> `3.12`."""
    if not isinstance(value, str):
        return None
    match = re.search(r"\b(\d+\.\d+(?:\.\d+)?)", value)
    return match.group(1) if match else None


def parse_json(text: str) -> list[Iperf3Result]:
    """Every `-J` object in `text`, as a result (an object with iperf3's `error` is a result with that error)."""
    try:
        return [_from_json(obj) for obj in _objects(text)]
    except Exception:
        return []


def _from_json(obj: dict[str, object]) -> Iperf3Result:
    start, end = _dict(obj, "start"), _dict(obj, "end")
    test = _dict(start, "test_start")
    sent, received = _dict(end, "sum_sent"), _dict(end, "sum_received")
    cpu = _dict(end, "cpu_utilization_percent")
    reverse = _int(test, "reverse")
    # a server's start has `accepted_connection`, a client's `connecting_to`
    side = Side.SERVER if "accepted_connection" in start else Side.CLIENT if "connecting_to" in start else None
    duration = _number(received, "seconds") or _number(sent, "seconds") or _number(test, "duration")
    protocol = test.get("protocol")
    error = obj.get("error")
    sender, receiver = _number(sent, "bits_per_second"), _number(received, "bits_per_second")
    remote_cpu = _number(cpu, "remote_total")
    if side is Side.SERVER:
        # a server knows only its own end: the other end's sum is zeros, not a figure
        if reverse == 0 and not _number(sent, "bytes"):
            sender = None
        if reverse and not _number(received, "bytes"):
            receiver = None
        remote_cpu = None
    return Iperf3Result(
        form=JSON, side=side, version=_version(start.get("version")),
        protocol=protocol if isinstance(protocol, str) else None,
        reverse=None if reverse is None else reverse != 0, streams=_int(test, "num_streams"),
        duration_seconds=duration, sender_bits_per_second=sender,
        receiver_bits_per_second=receiver, retransmits=_int(sent, "retransmits"),
        cpu_local_percent=_number(cpu, "host_total"), cpu_remote_percent=remote_cpu,
        error=error if isinstance(error, str) else None)


# --- plain text --------------------------------------------------------------------------------------------------

_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
# `[SUM]   0.00-2.01   sec   936 MBytes  3.90 Gbits/sec   93             sender`
_SUMMARY = re.compile(r"^\[\s*(?P<id>\d+|SUM)\]\s+(?P<start>[\d.]+)-\s*(?P<end>[\d.]+)\s+sec\s+[\d.]+\s+\w?Bytes\s+"
                      r"(?P<rate>[\d.]+)\s+(?P<unit>[KMGT]?)bits/sec\s+(?:(?P<retr>\d+)\s+)?(?P<role>sender|receiver)")
_CONNECTED = re.compile(r"^\[\s*(\d+)\]\s+local\s+\S+\s+port\s+\d+\s+connected to")
_STARTS = re.compile(r"^(?:Connecting to host |Server listening on )")
_ERROR = re.compile(r"^iperf3: (?:error - )?(.*)$")
_VERSION = re.compile(r"^iperf (\d+\.\d+(?:\.\d+)?)")


@dataclass
class _Test:
    """What one text test said, as it is read."""

    side: Side | None = None
    reverse: bool | None = None
    version: str | None = None
    streams: set[str] = field(default_factory=set)
    rates: dict[tuple[str, str], tuple[float, float, int | None]] = field(default_factory=dict)
    error: str | None = None


def parse_text(text: str) -> list[Iperf3Result]:
    """Every test in iperf3's plain text: a client's from `Connecting to host`, a server's from `Server listening
    on` (the ends of the test, both sides' summary lines, are read; interval lines are not)."""
    try:
        return [_from_text(test) for test in _text_tests(text) if test.rates or test.error]
    except Exception:
        return []


def _text_tests(text: str) -> list[_Test]:
    tests: list[_Test] = []
    current = _Test()
    version: str | None = None
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if _VERSION.match(line):
            version = _VERSION.match(line).group(1)  # type: ignore[union-attr]
        if _STARTS.match(line):
            if current.rates or current.error:
                tests.append(current)
            current = _Test(side=Side.CLIENT if line.startswith("Connecting") else Side.SERVER, version=version)
            continue
        _read_line(current, line)
    if current.rates or current.error:
        tests.append(current)
    return tests


def _read_line(test: _Test, line: str) -> None:
    if line.startswith("Reverse mode"):
        test.reverse = True
    connected = _CONNECTED.match(line)
    if connected:
        test.streams.add(connected.group(1))
    error = _ERROR.match(line)
    if error:
        test.error = error.group(1).strip()
    summary = _SUMMARY.match(line)
    if summary:
        rate = float(summary["rate"]) * _UNITS[summary["unit"]]
        seconds = float(summary["end"]) - float(summary["start"])
        retr = int(summary["retr"]) if summary["retr"] is not None else None
        test.rates[(summary["id"], summary["role"])] = (rate, seconds, retr)


def _role(test: _Test, role: str) -> tuple[float, float, int | None] | None:
    """The test's figure for one role: the [SUM] line when there are several streams, else the one stream's."""
    if ("SUM", role) in test.rates:
        return test.rates[("SUM", role)]
    mine = [value for (stream, got), value in test.rates.items() if got == role]
    return mine[0] if len(mine) == 1 else None


def _from_text(test: _Test) -> Iperf3Result:
    sender, receiver = _role(test, "sender"), _role(test, "receiver")
    reverse = test.reverse
    if reverse is None and test.side is Side.SERVER and (sender or receiver):
        reverse = sender is not None and receiver is None  # a text server prints only its own side
    elif reverse is None and test.side is Side.CLIENT:
        reverse = False
    duration = receiver[1] if receiver else sender[1] if sender else None
    return Iperf3Result(
        form=TEXT, side=test.side, version=test.version, protocol=None, reverse=reverse,
        streams=len(test.streams) or None, duration_seconds=duration,
        sender_bits_per_second=sender[0] if sender else None,
        receiver_bits_per_second=receiver[0] if receiver else None,
        retransmits=sender[2] if sender else None, error=test.error)


def tunnel_log(text: str, tunnel: str, implementation: str | None = None) -> ParsedLog:
    """A saved iperf3 log (`sslbench import --tunnel NAME[:IMPLEMENTATION]`) as the tunnel measurements it holds: one
    per test with the receiver's rate, forward or reverse (-R), its streams as threads. The client's outputs are
    read where the log has any (a server's of the same test would count it twice), else the servers'; an iperf3
    error is noted in `skipped`."""
    results = parse_iperf3(text)
    chosen = [r for r in results if r.side is not Side.SERVER] if any(r.side is not Side.SERVER for r in results) \
        else results
    log = ParsedLog()
    for result in chosen:
        if result.error or result.receiver_bits_per_second is None:
            log.skipped.append(f"iperf3: {result.error or 'a test without the receiver rate'}")
            continue
        log.measurements.append(Measurement(
            algorithm=tunnel, operation=REVERSE if result.reverse else FORWARD, threads=result.streams or 1,
            bytes_per_second=result.receiver_bits_per_second / 8, seconds=result.duration_seconds, kind=TUNNEL,
            implementation=implementation))
    return log
