"""Read `openssl speed` output of any OpenSSL version (1.0.x … 3.5, LibreSSL) into records.

What is read (see tests/data/speed/README.md for a real or constructed sample of each), and where:
- lines.py: the lines, normalised (CRLF, quoting, newlines a copy lost put back);
- build.py: the version block (`OpenSSL 1.0.2u …`, `version: 3.0.19`, `built on:`, `options:` …);
- tables.py: human tables: throughput (`type 16 bytes …`, `-bytes N`, `-aead`, the headerless `-multi N`
  summary, sbc-bench's per-cluster rows) and public-key (RSA 2/4 operations, DSA, ECDSA, ECDH, EdDSA, SM2,
  FFDH, 3.2+ KEM and signature tables, LibreSSL's ML-KEM table);
- wrapped.py: table and `Got:` lines hard-wrapped by a mail client;
- mr.py: `-mr` lines (`+H`, `+F`, `+F2`…`+F10`, `+DT`/`+R`, `+DTP`/`+Rn`) and `-multi` children's `Got:` lines;
- progress.py: progress lines (`Doing …: N X's in Ts`, `… ops in Ts`) and openssl's failure messages;
- pk.py: how public-key figures are named and keyed; numbers.py: openssl's printed numbers;
- state.py: what the readers share; resolve.py: the end, when units, names, the -multi figure, the API
  and the counts are decided.
This module reads each line with the reader of its format.

Text is taken as it comes: CRLF, lost or doubled newlines, prompts and other commands mixed in.
Nothing raises; what could not be read is described in `ParsedLog.skipped`.
"""
from __future__ import annotations

from orchestrator.model import OpenSSLBuild, ParsedLog
from orchestrator.parse.names import speed_command_hints
from orchestrator.parse.speed.build import BUILD_FIRST, BUILD_PREFIXES, read_build_line
from orchestrator.parse.speed.lines import ends_cut, lines_of
from orchestrator.parse.speed.mr import read_child, read_forked, read_mr
from orchestrator.parse.speed.progress import ERROR_LINE, continues_progress, read_error, read_progress
from orchestrator.parse.speed.resolve import finish
from orchestrator.parse.speed.state import State
from orchestrator.parse.speed.tables import (
    HEADER,
    PK_HEADER_FIRST,
    ROW_END,
    is_pk_header,
    read_header,
    read_labelled_row,
    read_pk_header,
    read_pk_rows,
    read_rows,
    split_trailing_row,
)
from orchestrator.parse.speed.wrapped import end_of_wrapped, join_wrapped, keep_pk_row_start


# What openssl prints (not with -mr) when -elapsed is given: its figures are by wall clock, not user CPU time.
ELAPSED_SAID = "You have chosen to measure elapsed time"


def parse_speed(text: str, *, threads: int | None = None, api: str | None = None,
                algorithm: str | None = None) -> ParsedLog:
    """Every measurement in one `openssl speed` output, plus the OpenSSL build it names.

    `threads`, `api` and `algorithm` are what the caller knows about the command (e.g. from
    `speed_command_hints`); an `openssl speed …` command line inside the text is read too.

    threads: the `threads` argument, else the number of `-multi` children the log shows, else 1.

    api rule ("evp", "legacy" or None):
    - the `api` argument, when given, is used for the throughput records of `algorithm` (for
      every throughput record when `algorithm` is not given or no row has that name);
    - the `-multi` summary row `evp`, and labels with upper-case letters (3.x prints
      `EVP_CIPHER_get0_name`, `AES-128-GCM`) are "evp";
    - labels with a space (`aes-256 cbc`, 1.x low-level API) and 1.x-only tests (ghash, rand,
      hmac(md5)) are "legacy";
    - the command line in the log decides the rest: the `-evp` name is "evp", names given
      without `-evp` are "legacy";
    - a name no built-in test has (`aes-128-gcm`, `chacha20-poly1305`) can only come from `-evp`;
    - otherwise the version decides: in 3.x a lower-case built-in name (`aes-128-cbc`) is the
      built-in (non `-evp`) test, "legacy" (3.x runs it through EVP internally, but it is the
      test `openssl speed aes-128-cbc` selects); in 1.x a dashed name only comes from `-evp`;
    - digests (`sha256`, `md5` …) print the same label with and without `-evp`: None.
    Public-key records get None: openssl has one way to run each, and `api` (or the `-evp`/legacy
    of a command line such as `-evp aes-128-gcm rsa2048`) describes the throughput records only.

    The `-multi` summary row labelled `evp` (1.1.1, 3.0 ≤ 3.0.9) takes its real name from the
    children's `+F` lines, else from `algorithm` or the command line; when the summary is
    missing the children's figures are summed.  Counts and seconds are not attached to
    `-multi` records (each child measured its own share).
    """
    return parse_speed_and_rest(text, threads=threads, api=api, algorithm=algorithm,
                                cut=isinstance(text, str) and ends_cut(text))[0]


def parse_speed_and_rest(text: str, *, threads: int | None = None, api: str | None = None,
                         algorithm: str | None = None, cut: bool = False) -> tuple[ParsedLog, list[str]]:
    """parse_speed, plus the lines that are not `openssl speed` output (where a console session's
    facts can be: the facts parsers then read those few lines, not the whole text again). `cut`: `text`
    ends where its log was cut off in the middle of a line (lines.ends_cut of the whole log)."""
    state = State()
    errors: list[str] = []  # a reader's bug, never a note on the log (ParsedLog.errors)
    for line in lines_of(text, cut):
        try:
            if line.__class__ is not str:  # a line that ended in an elision marker (lines.Elided)
                state.elided = True
                _read_line(str(line), state)
                state.elided = False
                continue
            _read_line(line, state)
        except Exception as exc:  # a reader's bug must never lose the rest of the log: recorded as one
            errors.append(f"internal error reading {line[:60]!r}: {type(exc).__name__}: {exc}")
    try:
        end_of_wrapped(state)
        log = finish(state, threads=threads, api=api, algorithm=algorithm)
    except Exception as exc:  # same net for the resolution step: keep the build facts at least
        log = ParsedLog(openssl=state.build, skipped=list(state.skipped))
        errors.append(f"internal error resolving the results: {type(exc).__name__}: {exc}")
    log.errors.extend(errors)
    return log, state.ignored


def parse_openssl_build(text: str) -> OpenSSLBuild:
    """The OpenSSL build described by `openssl version -a` output or the block `openssl speed` prints."""
    build = OpenSSLBuild()
    for line in lines_of(text):
        read_build_line(line, build)
    if (build.program_version is None and build.version_line and not build.version_line.startswith("version:")
            and (build.platform is not None or not (build.options or build.compiler))):
        # `openssl version` (one line) or `openssl version -a` (it prints "platform:") without "(Library: …)": 1.x
        # (or LibreSSL) whose program and library agree. The block 1.x `openssl speed` prints (version, built on,
        # options, compiler; no platform) names libcrypto only: the program's version stays unknown there, and
        # methods/cells take libcrypto's as an assumption (methods.speed_version).
        build.program_version = build.version
    return build


def _read_line(line: str, state: State) -> None:
    """One line to the reader of its format. The first character decides before any prefix test (most
    lines are tested once); where formats could overlap, the order decides: a line that continues the
    last one (a progress result, a wrapped row) first, rows before openssl's error messages."""
    if state.pending_progress is not None and continues_progress(line, state):
        return
    if state.wrapped is not None:
        joined = join_wrapped(line, state)
        if joined is None:
            return
        line = joined
    header_words = state.pk_header_words  # (a public-key header wrapped in two: the words of the first line)
    if header_words is not None:
        state.pk_header_words = None
    first = line[0]  # dispatch on the first character before any prefix test (speed)
    if first == "+":
        read_mr(line, state, child=None)
    elif first == "D" and line.startswith("Doing "):
        read_progress(line, state)
    elif first == "G" and line.startswith("Got:"):
        read_child(line, state)
    elif first == "F" and line.startswith("Forked child"):
        read_forked(line, state)
    elif first in BUILD_FIRST and line.startswith(BUILD_PREFIXES):
        if line[-1] in "kK":  # (a glued -multi summary row ends with a `k` value)
            line = split_trailing_row(line, state)
        read_build_line(line, state.build)
        state.seen_block = True
    elif first == "t" and line.startswith("type") and HEADER.match(line):
        read_header(line, state)
    elif first == "T" and line.startswith("The 'numbers'"):
        pass
    elif first == "Y" and line.startswith(ELAPSED_SAID):
        state.elapsed = True
    elif first in PK_HEADER_FIRST and is_pk_header(line):
        read_pk_header(line, header_words, state)
    elif first.isdigit() or line[:3] in ("rsa", "dsa", "mlk") or state.pk_table:
        if not read_pk_rows(line, state) and not keep_pk_row_start(line, state) and not read_rows(line, state):
            _ignore(line, state)
    elif "speed" in line and "openssl" in line:
        _read_command(line, state)
    elif line[-1] in ROW_END and read_rows(line, state):
        pass  # (rows before the error test: most lines that get this far are rows)
    elif (line[-1] == ")" or line[-1] == "`") and read_labelled_row(line, state):
        pass
    elif (":" in line or "Child" in line or "nknown" in line or "error!" in line) and ERROR_LINE.search(line):
        read_error(line, state)
    else:
        _ignore(line, state)


def _read_command(line: str, state: State) -> None:
    """`openssl speed -multi 4 -evp aes-128-gcm` typed in the log: what it asks for (threads, API, names)."""
    hints = speed_command_hints(line)
    if "-elapsed" in line.split():
        state.elapsed = True
    if hints["algorithms"] or hints["threads"] or hints["api"] or hints["mr"]:
        state.hints = hints
    else:
        _ignore(line, state)


def _ignore(line: str, state: State) -> None:
    state.ignored.append(line)
