"""Saved console logs into a stored run (`sslbench import LOG… --host NAME`): every log read once and parsed, then,
under the store's lock, the ones already stored left out and the run written aside and renamed into the store."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from orchestrator import store
from orchestrator.analysis import provenance
from orchestrator.analysis.provenance import merge
from orchestrator.errors import UserError
from orchestrator.kinds.tunnel import IMPLEMENTATIONS, TUNNELS
from orchestrator.logfiles import read_log, say_errors
from orchestrator.model import ParsedLog, Run
from orchestrator.parse import iperf3
from orchestrator.parse.batch import parse_many


def parse_logs(paths: list[Path], texts: list[str], tunnel: str | None = None) -> list[ParsedLog]:
    """openssl speed logs (all at once, on every core), or, with `tunnel` (NAME[:IMPLEMENTATION]), iperf3's output
    through that tunnel."""
    name, _, implementation = tunnel_name(tunnel).partition(":") if tunnel is not None else ("", "", "")
    parsed = ([iperf3.tunnel_log(text, name, implementation or None) for text in texts] if tunnel is not None else
              parse_many(texts))
    what, program = ("iperf3 results", "iperf3") if tunnel is not None else ("openssl speed results", "openssl speed")
    for path, log in zip(paths, parsed):
        say_errors(str(path), log)
        if not log.measurements and tunnel is not None and log.skipped:  # the reason the parser already found
            raise UserError(f"{path}: no {what} found in it: {'; '.join(dict.fromkeys(log.skipped))}")
        if not log.measurements:
            raise UserError(f"{path}: no {what} found in it; is it the output of `{program}`?")
        for why in dict.fromkeys(log.skipped if tunnel is not None else []):  # a test left out is said, never quiet
            print(f"sslbench: warning: {path}: a test left out: {why}", file=sys.stderr)
    return parsed


def tunnel_name(tunnel: str) -> str:
    """`--tunnel NAME[:IMPLEMENTATION]` lower-cased, NAME and IMPLEMENTATION among those sslbench measures (a figure
    under a misspelt name would be a tunnel of its own)."""
    said = tunnel.lower()
    name, colon, implementation = said.partition(":")
    if name not in TUNNELS or (colon and implementation not in IMPLEMENTATIONS):
        raise UserError(f"--tunnel {tunnel!r}: NAME[:IMPLEMENTATION] with NAME one of {', '.join(TUNNELS)} and "
                        f"IMPLEMENTATION one of {', '.join(IMPLEMENTATIONS)}")
    # OpenVPN's tunnels are carried by OpenVPN's implementations (tun, dco), WireGuard by kernel or wireguard-go
    if colon and name.startswith("openvpn") != implementation.startswith("openvpn"):
        fits = [one for one in IMPLEMENTATIONS if one.startswith("openvpn") == name.startswith("openvpn")]
        raise UserError(f"--tunnel {tunnel!r}: {name} is carried by {' or '.join(fits)}, not {implementation}")
    return said


def import_logs(paths: list[Path], host: str, firmware: str | None = None,
                results_dir: Path | str = store.DEFAULT_RESULTS, date: str | None = None,
                skipped: list[str] | None = None, tunnel: str | None = None) -> Path:
    """Read and parse every log first (nothing is written when one is bad), then, under the store's lock, leave
    out logs already stored and write the run aside and rename it into the store: it is there whole or not at all,
    and two imports of one log at once store it once. Returns the run's directory. Logs already stored, or repeated
    on the command line, are left out with a sentence each in `skipped`."""
    if not host.strip():
        raise UserError("--host must name the host the logs come from")
    tunnel = None if tunnel is None else tunnel_name(tunnel)
    created, dating = provenance.dating(date)
    read = [read_log(path) for path in paths]  # each read once: "-", a pipe or a FIFO cannot be read again
    texts = [text for text, _ in read]
    logs = parse_logs(paths, texts, tunnel)
    skipped = skipped if skipped is not None else []
    with store.locked(results_dir):
        kept_paths, kept_texts, notes = provenance.new_logs(paths, texts, results_dir, host)
        skipped.extend(notes)
        kept_ids = {id(text) for text in kept_texts}  # the very texts kept: two equal ones are two objects
        kept = [i for i, text in enumerate(texts) if id(text) in kept_ids]
        aside, run_id = store.aside_dir(results_dir)
        try:
            run = _write_aside(aside, run_id, host, [(paths[i], read[i][1], logs[i]) for i in kept], firmware,
                               created, dating, date, tunnel)
            run_dir, clock_notes = store.put_in_place(aside, run_id, created, by_clock=date is None)
        except BaseException:
            shutil.rmtree(aside, ignore_errors=True)  # nothing half-made is left in the store
            raise
    for note in clock_notes:
        print(f"sslbench: warning: {note}", file=sys.stderr)
    assert run.run_id == run_dir.name
    return run_dir


def _write_aside(aside: Path, run_id: str, host: str, logs: list[tuple[Path, bytes, ParsedLog]],
                 firmware: str | None, created: str, dating: dict[str, str], date: str | None,
                 tunnel: str | None = None) -> Run:
    result = merge(host, [log for _, _, log in logs], firmware)
    timings = {log.timing for _, _, log in logs if log.timing}
    target = store.host_dir(aside, host)
    for index, (path, data, _) in enumerate(logs):
        name = "stdin" if str(path) == "-" else store.safe_name(path.name)
        copy = target / f"{provenance.IMPORT_PREFIX}{index:02d}-{name}"
        copy.write_bytes(data)  # the bytes as read: the log itself, not a second read of a pipe
        result.logs.append(str(copy.relative_to(aside)))
    paths = [path for path, _, _ in logs]
    command = ["sslbench", "import", *map(str, paths), "--host", host] + (["--firmware", firmware] if firmware else [])
    command += (["--date", date] if date is not None else []) + (["--tunnel", tunnel] if tunnel is not None else [])
    run = Run(run_id=run_id, created=created, command=command, hosts=[result], source="import",
              matrix={"imported_logs": [p.name for p in paths],
                      "timing": timings.pop() if len(timings) == 1 else "mixed" if timings else None, **dating})
    store.save_run(aside, run)
    return run
