"""Many logs at once (`sslbench parse` / `import` of a directory of saved logs): `parse_console` on every core.

`map_in_workers` runs any per-log function that way; `parse_many` is it for `parse_console`, the ParsedLogs
rebuilt here. `chunks_in_workers` hands each worker whole chunks and yields each chunk's one result in order as
soon as it is there (`sslbench parse --json` reads, parses and writes a chunk's JSON in a worker, and this
process writes it out while the workers go on).

Parsing is pure CPU work on independent texts, so a batch is cut into chunks that worker processes parse
side by side while this process waits for them. Two costs decide the shape:
- a worker pool costs a fork and a round trip per chunk: batches smaller than MIN_LOGS_PER_WORKER per worker
  are parsed in this process;
- results come back as plain values (tuples of each dataclass's fields in order, strings) serialised by
  marshal, the cheapest serialisation here: its format is this interpreter's own, and the workers are its forks.
The cyclic garbage collector is paused during a batch (see orchestrator.gcpause).
"""
from __future__ import annotations

import marshal
import multiprocessing
import operator
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import fields
from typing import Any

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
    return [_from_plain(item) for item in map_in_workers(_parsed_plain, texts, jobs)]


def map_in_workers(function: Callable[[Any], Any], items: Sequence[Any], jobs: int | None = None) -> list[Any]:
    """`[function(item) for item in items]`, in forked worker processes on up to `jobs` CPUs (default: all) when
    the batch is large. `function` is a module-level function; what it returns goes through marshal (tuples,
    lists, strings, numbers, None)."""
    jobs = min(jobs or default_jobs(), len(items) // MIN_LOGS_PER_WORKER)
    with gcpause.paused():
        if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
            try:
                return _in_workers(function, items, jobs)
            # A worker killed (out of memory), no processes or no POSIX semaphores (some containers): go on here.
            except (BrokenProcessPool, OSError, ImportError, NotImplementedError):
                pass
        return [function(item) for item in items]


def chunks_in_workers(function: Callable[[Sequence[Any]], Any], items: Sequence[Any],
                      jobs: int | None = None) -> Iterator[Any]:
    """`function(chunk)` for consecutive chunks of `items`, yielded in order, each as soon as it and those before
    it are done: in forked worker processes on up to `jobs` CPUs (default: all) when the batch is large, else
    over the whole batch here. `function` is a module-level function; what it returns goes through marshal. A
    worker lost (killed, out of memory) loses nothing: the chunks not yet yielded are done here."""
    jobs = min(jobs or default_jobs(), len(items) // MIN_LOGS_PER_WORKER)
    with gcpause.paused():
        if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            if items:
                yield function(items)
            return
        size = -(-len(items) // (jobs * CHUNKS_PER_WORKER))
        chunks = [items[start:start + size] for start in range(0, len(items), size)]
        done = 0
        try:
            with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                for part in pool.map(_run_chunk_whole, [function] * len(chunks), chunks):
                    done += 1
                    yield marshal.loads(part)
        # A worker killed (out of memory), no processes or no POSIX semaphores (some containers): go on here.
        except (BrokenProcessPool, OSError, ImportError, NotImplementedError):
            for chunk in chunks[done:]:
                yield function(chunk)


def _run_chunk_whole(function: Callable[[Sequence[Any]], Any], items: Sequence[Any]) -> bytes:  # in a worker
    return marshal.dumps(function(items))


def _in_workers(function: Callable[[Any], Any], items: Sequence[Any], jobs: int) -> list[Any]:
    size = -(-len(items) // (jobs * CHUNKS_PER_WORKER))
    chunks = [items[start:start + size] for start in range(0, len(items), size)]
    # fork: the workers start with this process's modules already imported (no re-import per worker).
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        parts = pool.map(_run_chunk, [function] * len(chunks), chunks)
        return [result for part in parts for result in marshal.loads(part)]


def _run_chunk(function: Callable[[Any], Any], items: Sequence[Any]) -> bytes:  # in a worker (forked, GC paused)
    return marshal.dumps([function(item) for item in items])


def _parsed_plain(text: str) -> tuple[Any, ...]:
    log = parse_console(text)
    return ([_MEASUREMENT_AS_TUPLE(m) for m in log.measurements],
            _CPU_AS_TUPLE(log.cpu), _OS_AS_TUPLE(log.os), _BUILD_AS_TUPLE(log.openssl), log.skipped, log.timing, log.errors)


def _from_plain(item: tuple[Any, ...]) -> ParsedLog:
    rows, cpu, os_facts, openssl, skipped, timing, errors = item
    return ParsedLog(measurements=[Measurement(*row) for row in rows], cpu=CpuFacts(*cpu), os=OsFacts(*os_facts),
                     openssl=OpenSSLBuild(*openssl), skipped=skipped, timing=timing,
                     errors=errors)
