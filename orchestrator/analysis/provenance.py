"""Where an imported figure came from: which saved log (its content's fingerprint) and when it was measured.

- **The same log is one measurement.** `fingerprint(text)`: SHA-256 of the log's text normalised the way copies
  of one log differ (line ends, trailing blanks, blank lines around it, a byte-order mark). `import` skips a log
  whose fingerprint is already stored for the same host or earlier on its own command line (`stored_logs`); the
  same published log kept as two different hosts' (a reference beside a board, tests) is two hosts' figures.
- **Stores written before that** may hold the same log several times: `distinct` keeps each imported
  measurement once per host (the same cell with the same figure, count and time is the same measurement), and
  says how many it dropped. Only imported runs: `sslbench run` measures afresh each time, and two of its
  repeats of a slow public-key cell can print the same figures honestly. Dropping a sample only ever costs a
  verdict (fewer samples), it never makes one.
- **When.** `import --date` sets the run's `created` (what trend, diff --by firmware and history order by) and
  marks it `matrix["date"] = "given"`. Without it a run's time is the time it was imported (`"import"`): a file's
  modification time is not used, since copying, downloading or checking out a log resets it, and a `built on:`
  line is when OpenSSL was compiled. `undated(run)` tells such runs, so trend and diff can say their order is
  import time.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
from pathlib import Path
from typing import Any, Iterable, NamedTuple, TypeVar

from orchestrator import journal, store
from orchestrator.analysis.cells import Key, key_of
from orchestrator.errors import UserError
from orchestrator.logfiles import read_text
from orchestrator.model import CpuFacts, HostResult, Measurement, OpenSSLBuild, OsFacts, ParsedLog, Run

IMPORT_PREFIX = "import-"  # stored copies of imported logs: <run>/<host>/import-NN-<name>
DATE_GIVEN = journal.DATE_GIVEN  # the store's journal tells backfills by it
DATE_IMPORT = "import"


def fingerprint(text: str) -> str:
    lines = [line.rstrip() for line in text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return hashlib.sha256("\n".join(lines).strip("\n").encode("utf-8", "surrogatepass")).hexdigest()


class StoredLog(NamedTuple):
    run_id: str
    host_dir: str
    name: str


def stored_logs(results_dir: Path | str) -> dict[str, list[StoredLog]]:
    """Fingerprint -> the stored copies of every log imported into the store (older stores too: the copies are
    hashed, not a field a newer version wrote)."""
    found: dict[str, list[StoredLog]] = {}
    root = Path(results_dir)
    if not root.is_dir():
        return found
    for path in sorted(root.glob(f"*/*/{IMPORT_PREFIX}*")):
        if path.parent.parent.name.startswith("."):
            continue  # a run left aside by an import that failed (store.aside_dir) is not in the store
        try:
            text = read_text(str(path))
        except (UserError, OSError):
            continue  # an unreadable copy matches nothing
        found.setdefault(fingerprint(text), []).append(StoredLog(path.parent.parent.name, path.parent.name, path.name))
    return found


def _stored_for(results_dir: Path | str, copy: StoredLog, host: str) -> bool:
    """Whether the stored copy is one of `host`'s logs (its run says whose; a run that cannot be read counts as
    the host's, so a log is never taken twice for want of knowing)."""
    try:
        run = store.load_run(Path(results_dir) / copy.run_id)
    except (UserError, OSError, ValueError):
        return True
    wanted = f"{copy.host_dir}/{copy.name}"
    return any(result.host == host and wanted in result.logs for result in run.hosts)


def new_logs(paths: list[Path], texts: list[str], results_dir: Path | str,
             host: str) -> tuple[list[Path], list[str], list[str]]:
    """The logs (paths, texts) neither already stored for `host` nor earlier on the command line; a note for
    each one left out, naming the copy it repeats."""
    stored = {digest: mine[0] for digest, copies in stored_logs(results_dir).items()
              if (mine := [copy for copy in copies if _stored_for(results_dir, copy, host)])}
    given: dict[str, Path] = {}
    kept_paths: list[Path] = []
    kept_texts: list[str] = []
    notes: list[str] = []
    for path, text in zip(paths, texts):
        digest = fingerprint(text)
        if digest in given:
            notes.append(f"{path}: skipped, a duplicate of {given[digest]} (same content)")
            continue
        copy = stored.get(digest)
        if copy is not None:
            notes.append(f"{path}: skipped, a duplicate of {copy.name} already stored in run {copy.run_id} "
                         f"(host directory {copy.host_dir})")
            continue
        given[digest] = path
        kept_paths.append(path)
        kept_texts.append(text)
    if not kept_paths:
        raise UserError("nothing to import, every log is already stored (the same log is one measurement, "
                        "not a repeat):\n  " + "\n  ".join(notes))
    return kept_paths, kept_texts, notes


def dating(date: str | None) -> tuple[str, dict[str, str]]:
    """The run's time (`--date`, else now) and what run.matrix records of it."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    created = parse_date(date) if date is not None else now
    return created, {"date": DATE_GIVEN if date is not None else DATE_IMPORT, "imported": now}


def parse_date(text: str, now: _dt.datetime | None = None) -> str:
    """An ISO 8601 date or date-time as the store writes times (UTC, whole seconds); no zone means UTC."""
    value = text.strip()
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UserError(f"--date '{text}' is not an ISO 8601 date or date-time (2025-03-01, 2025-03-01T14:30:00Z, "
                        "2025-03-01T14:30+02:00)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    try:
        when = when.astimezone(_dt.timezone.utc).replace(microsecond=0)
    except OverflowError:  # 0001-01-01T00:00:00+02:00 is before the first UTC time there is
        raise UserError(f"--date {text} is out of range: it is when the logs were measured") from None
    if when > (now or _dt.datetime.now(_dt.timezone.utc)):
        raise UserError(f"--date {text} is in the future: it is when the logs were measured")
    return when.isoformat()


def undated(run: Run) -> bool:
    """An imported run placed at the time it was imported, not when it was measured."""
    return run.source == "import" and (run.matrix or {}).get("date") != DATE_GIVEN


def _identity(host: str, m: Any) -> tuple[Any, ...]:
    return (host, m.algorithm, m.api, m.operation, m.threads, m.block_size, m.cpu, m.status, m.bytes_per_second,
            m.ops_per_second, m.count, m.seconds)


def distinct(pairs: Iterable[tuple[Run, HostResult]]) -> tuple[list[tuple[Run, HostResult]], int]:
    """The results with each imported measurement kept once (the first, in the given order); how many were
    dropped. A result left with no measurement is left out; results of measured runs pass unchanged."""
    seen: set[tuple[Any, ...]] = set()
    out: list[tuple[Run, HostResult]] = []
    dropped = 0
    for run, result in pairs:
        if run.source != "import":
            out.append((run, result))
            continue
        kept = []
        for m in result.measurements:
            identity = _identity(result.host, m)
            if identity in seen:
                dropped += 1
                continue
            seen.add(identity)
            kept.append(m)
        if len(kept) == len(result.measurements):
            out.append((run, result))
        elif kept:
            out.append((run, dataclasses.replace(result, measurements=kept)))
    return out, dropped


def duplicates_note(dropped: int) -> str:
    return (f"{dropped} imported measurement(s) counted once: the same log was imported more than once "
            "(by an sslbench before duplicates were refused); a repeat is a new measurement, not a copy")


def import_time_note(count: int, total: int) -> str:
    return (f"{count} of {total} runs were imported without --date: they are ordered by import time, not by when "
            "they were measured (to place one: remove its run directory, then `sslbench import … --date YYYY-MM-DD`)")


def merge(host: str, logs: list[ParsedLog], firmware: str | None) -> HostResult:
    """One HostResult from several logs: facts from the first log that has each one, repeats numbered per cell."""
    seen: dict[Key, int] = {}
    measurements: list[Measurement] = []
    for log in logs:
        for m in log.measurements:
            key = key_of(m)  # sbc-bench's per-cluster rows are cells of their own
            m.repeat = seen.get(key, 0)
            seen[key] = m.repeat + 1
            measurements.append(m)
    return HostResult(
        host=host,
        firmware=firmware.strip() if firmware and firmware.strip() else None,
        cpu=_first_facts(CpuFacts, [log.cpu for log in logs]),
        os=_first_facts(OsFacts, [log.os for log in logs]),
        openssl=_first_facts(OpenSSLBuild, [log.openssl for log in logs]),
        measurements=measurements,
    )


_Facts = TypeVar("_Facts", CpuFacts, OsFacts, OpenSSLBuild)


def _first_facts(cls: type[_Facts], facts: list[_Facts]) -> _Facts:
    """Field by field, the first log that knows it (one log may have cpuinfo, another `openssl version -a`)."""
    merged = cls()
    for name in merged.__dataclass_fields__:
        for item in facts:
            value = getattr(item, name)
            if value not in (None, [], ""):
                setattr(merged, name, value)
                break
    return merged
