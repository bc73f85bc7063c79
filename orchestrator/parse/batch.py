"""Many logs at once (`sslbench parse` / `import` of a directory of saved logs): `parse_console` on every core.

Parsing is pure CPU work on independent texts, so a batch is cut into chunks that worker processes parse
side by side (measured: a worker pool that this process also joins was slower, the shares ended uneven).
Two costs decide the shape:
- a worker pool costs a fork and a round trip per chunk: batches smaller than MIN_LOGS_PER_WORKER per worker
  are parsed in this process;
- results come back as plain tuples (each dataclass's fields in order) serialised by marshal: pickling the
  dataclasses themselves cost three times as much, and pickling the tuples about 12 % more parse-phase wall
  time than marshal (measured; marshal's format is this interpreter's own, and the workers are its forks).
The cyclic garbage collector is paused during a batch (see orchestrator.gcpause).
"""
from __future__ import annotations

import marshal
import multiprocessing
import operator
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import fields

from orchestrator import gcpause
from orchestrator.model import CpuFacts, Measurement, OpenSSLBuild, OsFacts, ParsedLog
from orchestrator.parse.console import parse_console

# Below this many logs per worker, forking and collecting cost more than a second core saves.
MIN_LOGS_PER_WORKER = 500
CHUNKS_PER_WORKER = 4  # a few chunks each, so that one slow chunk (a 60 KB report) does not leave a core idle

_MEASUREMENT_AS_TUPLE = operator.attrgetter(*(f.name for f in fields(Measurement)))
_CPU_AS_TUPLE = operator.attrgetter(*(f.name for f in fields(CpuFacts)))
_OS_AS_TUPLE = operator.attrgetter(*(f.name for f in fields(OsFacts)))
_BUILD_AS_TUPLE = operator.attrgetter(*(f.name for f in fields(OpenSSLBuild)))


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parse_many(texts: Sequence[str], jobs: int | None = None) -> list[ParsedLog]:
    """`parse_console` of every text, in order; on up to `jobs` CPUs (default: all) when the batch is large."""
    jobs = min(jobs or default_jobs(), len(texts) // MIN_LOGS_PER_WORKER)
    with gcpause.paused():
        if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
            try:
                return _parse_in_workers(texts, jobs)
            # A worker killed (out of memory), no processes or no POSIX semaphores (some containers): go on here.
            except (BrokenProcessPool, OSError, ImportError, NotImplementedError):
                pass
        return [parse_console(text) for text in texts]


def _parse_in_workers(texts: Sequence[str], jobs: int) -> list[ParsedLog]:
    size = -(-len(texts) // (jobs * CHUNKS_PER_WORKER))
    chunks = [texts[start:start + size] for start in range(0, len(texts), size)]
    # fork: the workers start with this process's modules already imported (no re-import per worker).
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        return [_from_plain(item) for part in pool.map(_parse_chunk, chunks) for item in marshal.loads(part)]


def _parse_chunk(texts: Sequence[str]) -> bytes:  # in a worker (forked with the collector paused)
    return marshal.dumps([_to_plain(parse_console(text)) for text in texts])


def _to_plain(log: ParsedLog) -> tuple:
    return ([_MEASUREMENT_AS_TUPLE(m) for m in log.measurements],
            _CPU_AS_TUPLE(log.cpu), _OS_AS_TUPLE(log.os), _BUILD_AS_TUPLE(log.openssl), log.skipped)


def _from_plain(item: tuple) -> ParsedLog:
    rows, cpu, os_facts, openssl, skipped = item
    return ParsedLog(measurements=[Measurement(*row) for row in rows], cpu=CpuFacts(*cpu), os=OsFacts(*os_facts),
                     openssl=OpenSSLBuild(*openssl), skipped=skipped)
