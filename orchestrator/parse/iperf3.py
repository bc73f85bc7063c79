"""iperf3's output, JSON (`-J`) or plain text, client or server side (3.x), into typed results: one `Iperf3Result`
per test in the text (several runs saved one after the other read apart).

Rates are bits per second as iperf3 prints them (decimal units: `Mbits/sec` is 10^6; `-f M`'s `MBytes/sec` is
2^20 bytes), scaled exactly from the printed number. The sender's and the
receiver's rate are both kept: the receiver's is what went through (the figure sslbench stores); a plain text
server prints only its own side, so the other stays None. Pure: text in, data out; never raises.

Real outputs of each form are in tests/data/iperf3/ (its README says how they were made).
"""
from __future__ import annotations

import enum
import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal

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
    problem: str | None = None  # why the figure is not one, where the output says (and iperf3 did not)

    @property
    def receiver_bytes_per_second(self) -> float | None:
        return None if self.receiver_bits_per_second is None else self.receiver_bits_per_second / 8

    @property
    def sender_bytes_per_second(self) -> float | None:
        return None if self.sender_bits_per_second is None else self.sender_bits_per_second / 8


def parse_iperf3(text: str) -> list[Iperf3Result]:
    """Every test in `text`: its JSON objects where it holds some, else its plain text."""
    try:
        found = parse_json(text) or (parse_json(_unquoted(text)) if ">" in text else [])
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

_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}
# `[SUM]   0.00-2.01   sec   936 MBytes  3.90 Gbits/sec   93             sender`; `-f M` prints `4225 MBytes/sec`;
# a UDP summary has jitter and lost datagrams where TCP has the retransmits
_SUMMARY = re.compile(
    r"^\[\s*(?P<id>\d+|SUM)\]\s+(?P<start>[\d.]+)-\s*(?P<end>[\d.]+)\s+sec\s+[\d.]+\s+\w?Bytes\s+"
    r"(?P<rate>[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?i:inf|nan)))\s+(?P<unit>[KMGT]?)(?P<kind>bits|Bytes)/sec"
    r"\s+(?:(?P<retr>\d+)\s+|(?P<udp>[\d.]+\s+ms\s+\S+\s+(?:\([^)]*\)\s+)?))?(?P<role>sender|receiver)")
_CONNECTED = re.compile(r"^\[\s*(\d+)\]\s+local\s+\S+\s+port\s+\d+\s+connected to")
_STARTS = re.compile(r"^(?:Connecting to host |Server listening on |Accepted connection from )")
_SERVER_OUTPUT = "Server output:"  # `--get-server-output`: the other side's text follows the client's
_HEADER = re.compile(r"^\[ ID\]\s+Interval\b")
_BIDIR = re.compile(r"^\[\s*(?:\d+|ID|SUM)\]\[(?:Role|[TR]X-[CS])\]")  # `--bidir`: `[ ID][Role]`, `[  5][TX-C]`
_COMMAND = re.compile(r"(?:^|[\s$#>])iperf3\s+(?P<args>(?:.*\s)?-(?:[cs]|-client|-server)(?:[\s=].*)?)$")
_ERROR = re.compile(r"^iperf3: (?:error - )?(.*)$")
_VERSION = re.compile(r"^iperf (\d+\.\d+(?:\.\d+)?)")
# a quoted paste (e-mail, forum, Markdown: `> `, `>>`, `> > `) loses its marks, as parse/console.py does for openssl
_QUOTE_MARKS = re.compile(r"\n[ \t]*>[> \t]*")


def _unquoted(text: str) -> str:
    """`text` with its lines' quote marks and carriage returns gone."""
    return _QUOTE_MARKS.sub("\n", "\n" + text.replace("\r\n", "\n").replace("\r", "\n"))[1:]


@dataclass
class _Test:
    """What one text test said, as it is read. `local_sends`: its interval table had the sender's columns
    (`Retr  Cwnd`) or the receiver's (no `Retr`); `parallel`: `-P` of the command line pasted with it."""

    side: Side | None = None
    reverse: bool | None = None
    version: str | None = None
    streams: set[str] = field(default_factory=set)
    parallel: int | None = None
    udp: bool = False
    bidir: bool = False
    local_sends: bool | None = None
    rates: dict[tuple[str, str], tuple[float, float, int | None]] = field(default_factory=dict)
    error: str | None = None

    @property
    def found(self) -> bool:
        """It has read a test's end: the next start line starts another."""
        return bool(self.rates or self.error)

    @property
    def begun(self) -> bool:
        """It has read more than the command line pasted before it."""
        return self.found or bool(self.streams) or self.local_sends is not None


def parse_text(text: str) -> list[Iperf3Result]:
    """Every test in iperf3's plain text: one starts at `Connecting to host`, `Server listening on`, `Server
    output:`, an `iperf3 -c|-s` command line, or a new interval table after a finished summary (runs pasted one
    after the other without the lines between them). Both sides' summary lines are read; interval lines are not."""
    try:
        return [_from_text(test) for test in _text_tests(text) if test.found or test.udp or test.bidir]
    except Exception:
        return []


def _text_tests(text: str) -> list[_Test]:
    tests: list[_Test] = []
    current = _Test()
    version: str | None = None
    for raw in _unquoted(text).split("\n"):
        line = raw.strip()
        if _VERSION.match(line):
            version = current.version = _VERSION.match(line).group(1)  # type: ignore[union-attr]
        following = _begins(current, line, version)
        if following is not current:
            if current.found or current.udp or current.bidir:  # still one to refuse, even cut before its summary
                tests.append(current)
            current = following
        _read_line(current, line)
    if current.found or current.udp or current.bidir:
        tests.append(current)
    return tests


def _begins(current: _Test, line: str, version: str | None) -> _Test:
    """The test `line` belongs to: `current`, or a new one where the line starts one (`Connecting to host` after
    the command line pasted before it, or `Accepted connection` after `Server listening`, says more of the same)."""
    if line.startswith(_SERVER_OUTPUT):
        return _Test(side=Side.SERVER, version=version)
    if _STARTS.match(line):
        test = _Test(version=version) if current.begun else current
        test.side = Side.CLIENT if line.startswith("Connecting") else Side.SERVER
        return test
    command = _COMMAND.search(line)
    if command:  # a command always starts afresh: the one before it, without output, says nothing of this one
        test = _Test(version=version)
        _read_command(test, command["args"].split())
        return test
    if (_HEADER.match(line) or _CONNECTED.match(line)) and current.rates:  # after a finished summary: the next run
        return _Test(side=current.side, version=version)
    return current


def _read_command(test: _Test, args: list[str]) -> None:
    for index, arg in enumerate(args):
        if arg in ("-c", "--client", "-s", "--server") or arg.startswith(("--client=", "--server=")):
            test.side = Side.SERVER if arg.startswith(("-s", "--server")) else Side.CLIENT
        elif arg in ("-R", "--reverse"):
            test.reverse = True
        elif arg in ("-u", "--udp"):
            test.udp = True
        elif arg == "--bidir":
            test.bidir = True
        elif arg in ("-P", "--parallel") and index + 1 < len(args) and args[index + 1].isdigit():
            test.parallel = int(args[index + 1])
        elif re.fullmatch(r"(?:-P|--parallel=)\d+", arg):
            test.parallel = int(re.sub(r"\D", "", arg))


def _read_line(test: _Test, line: str) -> None:
    if line.startswith("Reverse mode"):
        test.reverse = True
    if _BIDIR.match(line):
        test.bidir = True
        test.udp = test.udp or "Jitter" in line or " ms " in line
    if _HEADER.match(line):
        test.udp = test.udp or "Jitter" in line or "Datagrams" in line
        if "Cwnd" in line:
            test.local_sends = True
        elif "Retr" not in line and not test.rates and test.local_sends is None:
            test.local_sends = False
    connected = _CONNECTED.match(line)
    if connected:
        test.streams.add(connected.group(1))
    error = _ERROR.match(line)
    if error:
        test.error = error.group(1).strip()
    summary = _SUMMARY.match(line)
    if summary:
        rate = _bits(summary["rate"], summary["unit"], summary["kind"])
        seconds = float(summary["end"]) - float(summary["start"])
        retr = int(summary["retr"]) if summary["retr"] is not None else None
        test.udp = test.udp or summary["udp"] is not None
        test.rates[(summary["id"], summary["role"])] = (rate, seconds, retr)


def _bits(rate: str, prefix: str, kind: str) -> float:
    """bits/s from the printed number and unit, scaled exactly (`4.14 Gbits/sec` is 4140000000, not 4139999999.99…):
    bits are decimal (Mbits = 10^6), bytes binary (iperf3's `-f M` MBytes = 2^20), as iperf3's units.c prints them."""
    number = Decimal(rate)
    if kind == "Bytes":
        return float(number * 8 * 1024 ** _POWERS[prefix])
    return float(number * 1000 ** _POWERS[prefix])


def _role(test: _Test, role: str) -> tuple[float, float, int | None] | None:
    """The test's figure for one role: the [SUM] line when there are several streams, else the one stream's."""
    if ("SUM", role) in test.rates:
        return test.rates[("SUM", role)]
    mine = [value for (stream, got), value in test.rates.items() if got == role]
    return mine[0] if len(mine) == 1 else None


def _streams(test: _Test) -> int | None:
    """`connected to` lines, else the summary's stream ids, else the pasted command's `-P` (1 without it, where no
    [SUM] line says there were several). None: unknown."""
    ids = {stream for stream, _ in test.rates if stream != "SUM"}
    several = any(stream == "SUM" for stream, _ in test.rates)
    if test.streams:
        return len(test.streams)
    if ids and (len(ids) > 1 or not several):
        return len(ids)
    return test.parallel or (None if several else 1 if test.rates else None)


def _reverse(test: _Test, sender: tuple[float, float, int | None] | None,
             receiver: tuple[float, float, int | None] | None) -> bool | None:
    """-R: said (`Reverse mode`, the command's `-R`), else which side this one was: a server that sent (its table
    has `Retr  Cwnd`, or its sender line the retransmits) or a client that received. A paste that does not say
    whose it is is read as the client's, the usual paste."""
    if test.reverse:
        return True
    sends = test.local_sends
    if sends is False and not (sender and sender[2] is not None):
        sends = None  # a table without `Retr` is also a sender's where the system has none (Windows, macOS)
    if sends is not None:
        return sends if test.side is Side.SERVER else not sends
    if test.side is Side.SERVER:
        if sender is None and receiver is None:
            return None
        return sender is not None and (sender[2] is not None or receiver is None)
    return False


def _from_text(test: _Test) -> Iperf3Result:
    sender, receiver = _role(test, "sender"), _role(test, "receiver")
    duration = receiver[1] if receiver else sender[1] if sender else None
    streams = _streams(test)
    problem = "a --bidir test: both ways at once, neither forward nor reverse" if test.bidir else \
        None if streams or not test.rates else "several streams ([SUM]) but not how many"
    return Iperf3Result(
        form=TEXT, side=test.side, version=test.version, protocol="UDP" if test.udp else None,
        reverse=_reverse(test, sender, receiver), streams=streams, duration_seconds=duration,
        sender_bits_per_second=sender[0] if sender else None,
        receiver_bits_per_second=receiver[0] if receiver else None,
        retransmits=sender[2] if sender else None, error=test.error, problem=problem)


def tunnel_log(text: str, tunnel: str, implementation: str | None = None) -> ParsedLog:
    """A saved iperf3 log (`sslbench import --tunnel NAME[:IMPLEMENTATION]`) as the tunnel measurements it holds: one
    per test with the receiver's rate, forward or reverse (-R), its streams as threads. The client's outputs are
    read where the log has any (a server's of the same test would count it twice), else the servers'; a test that
    is no figure (iperf3's error, UDP, a rate of zero) is noted in `skipped` with why."""
    results = parse_iperf3(text)
    chosen = [r for r in results if r.side is not Side.SERVER] if any(r.side is not Side.SERVER for r in results) \
        else results
    log = ParsedLog()
    for result in chosen:
        why = refusal(result)
        if why is not None or result.receiver_bits_per_second is None:
            log.skipped.append(f"iperf3: {why}")
            continue
        log.measurements.append(Measurement(
            algorithm=tunnel, operation=REVERSE if result.reverse else FORWARD, threads=result.streams or 1,
            bytes_per_second=result.receiver_bits_per_second / 8, seconds=result.duration_seconds, kind=TUNNEL,
            implementation=implementation))
    return log


def refusal(result: Iperf3Result) -> str | None:
    """Why `result` is no tunnel figure, or None where it is one."""
    rate = result.receiver_bits_per_second
    if result.error:
        return result.error
    if (result.protocol or "").upper() == "UDP":
        return "a UDP test: not a TCP tunnel measurement"
    if result.problem:
        return result.problem
    if rate is None:
        return "a test without the receiver rate"
    if not math.isfinite(rate) or rate <= 0:
        return f"the receiver's rate is {rate:g} bits/sec: nothing measured"
    if result.reverse is None:
        return "a test whose direction (forward or -R) the output does not say"
    return None
