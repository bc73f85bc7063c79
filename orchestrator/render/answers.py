"""The report's answers (analysis/insights.py and tunnel_answers.py laid out): the line rate (openssl's crypto
ceiling, the measured tunnels beside their prediction), crypto instructions, handshakes, per core and all cores,
and the known boards beside a user's line rate with the published measured tunnels of their SoCs. Every answer
shows the flags of the figures it rests on: a verdict in its text (insights.LineRate.verdict), a table in a last
"flags" column where any row has one.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

from orchestrator import reference
from orchestrator.analysis import insights, tunnel_answers
from orchestrator.analysis.cells import Cell, Key
from orchestrator.model import FORWARD, LINE_BLOCKS, REFERENCE, HostResult, Run
from orchestrator.render import tables
from orchestrator.render.model import Block, Heading, Note, Table
from orchestrator.units import fmt_mhz, fmt_per_mhz, fmt_throughput, mbits


class Shown(Protocol):
    """A host of a run as a report shows it (report.Series): the label every table gives it, its run, its result
    and its cells (every kind, grouped under the run's busy rule)."""

    label: str
    run: Run
    result: HostResult
    cells: dict[Key, Cell]


Found = Sequence[tuple[Shown, insights.HostInsights]]


def _with_flags(headers: list[str], rows: list[list[Any]], flags: Sequence[insights.Flags],
                drop: Sequence[str] = ()) -> Table:
    """An answers table with a last "flags" column, the flags of the figures each row rests on, where any row has
    one (a table of clean figures stays as it was)."""
    if not any(flags):
        return Table(headers, rows, drop)
    return Table(headers + ["flags"], [row + [" ".join(f)] for row, f in zip(rows, flags)], drop)


def line_rate(found: Found, links: Sequence[int]) -> list[Block]:
    blocks: list[Block] = [
        Heading("VPN / TLS line rate"),
        Note("Crypto ceilings, not line rates: the faster of aes-256-gcm and chacha20-poly1305 at the smallest "
             "block of 1024-16384 bytes (VPN-sized packets), crypto only; packet handling, copies and the "
             "scheduler come on top, and a measured tunnel can be ten times slower. It bounds the data paths that "
             f"run OpenSSL in user space: {insights.OPENSSL_PATHS}. Only a measured tunnel (sslbench run "
             "--tunnels wireguard,openvpn) says a host carries a link."),
        # a verdict says the flags of its figures (LineRate.verdict); a known board without a line-rate figure is
        # listed with what it published (_known_boards)
        Table(["host"] + [f"{link} Mbit/s" for link in links],
              [[s.label] + [lr.verdict for lr in ins.line_rates] for s, ins in found
               if s.run.source != REFERENCE or any(lr.carried is not None for lr in ins.line_rates)])]
    kernel = [(s, ins) for s, ins in found if ins.kernel_paths]
    if kernel:  # the paths openssl speed did not measure: what the kernel would use, from /proc/crypto
        paths = [p.path for p in kernel[0][1].kernel_paths]
        blocks += [
            Note("WireGuard and kernel IPsec do not use OpenSSL: they run the kernel's own crypto, which "
                 "`openssl speed` did not measure (the figures above do not predict them). The kernel's preferred "
                 "implementation (highest priority in /proc/crypto, before the run):"),
            Table(["host"] + paths, [[s.label] + [p.said for p in ins.kernel_paths] for s, ins in kernel])]
    return blocks + measured_tunnels(found, links)


def measured_tunnels(found: Found, links: Sequence[int]) -> list[Block]:
    """Each host's measured tunnels beside the openssl prediction, measured / predicted, and the verdict per link
    from the measured figure (tunnel_answers)."""
    rows: list[list[Any]] = []
    imported = False
    for s, _ in found:
        for answer in tunnel_answers.host_tunnels(s.result, s.cells, links):
            imported = imported or not answer.figure.own
            ratio = f"{answer.ratio:.2f}" if answer.ratio is not None else "-"
            predicted = answer.prediction.said if answer.prediction else "no openssl figure of an AEAD"
            rows.append([s.label, answer.figure.said, predicted, ratio] + answer.verdicts)
    if not rows:
        return []
    return [Heading("Measured tunnels", 3),
            Note("Measured: iperf3 through the tunnel between two network namespaces of the host, both ends on "
                 "the board (the receiver's throughput, the median of the repeats): the whole data path"
                 + ("; a figure from an imported iperf3 log says so: where its ends were is not recorded"
                    if imported else "") + ". Predicted: "
                 "openssl speed of the tunnel's cipher at the smallest block of 1024-16384 bytes, one core for one "
                 "stream, all cores for several. The verdicts are the measured figure's."),
            Table(["host", "measured", "predicted (crypto ceiling)", "measured / predicted"]
                  + [f"{link} Mbit/s" for link in links], rows, ["predicted (crypto ceiling)"])]


def known_boards(runs: Sequence[Run]) -> list[Block]:
    """Beside the user's line rates, the figure each known board (orchestrator/reference) published that comes
    closest to them, with its source, and whether it is a log or a summary figure and what it cannot tell."""
    rows: list[tuple[float, list[Any]]] = []
    labels = tables.host_labels(runs)
    published = reference.load_tunnels()
    for run in runs:
        entries = reference.entries_of(run)
        for result in run.hosts:
            entry = entries.get(result.host) if entries else {}  # {}: the user's own host, measured
            # the user's host under its run's busy rule, as every table shows it
            found = reference.quote(entry, result, insights.grouped(run, result)) if entry is not None else None
            if entry is None or found is None:
                continue
            rank = found.one_core or found.all_cores or 0.0
            one = f"{mbits(found.one_core):,.0f}" if found.one_core else "-"
            every = "-"
            if found.all_cores:
                every = f"{mbits(found.all_cores):,.0f} ({found.cores} cores)" if found.cores else \
                    f"{mbits(found.all_cores):,.0f} (cores not stated)"
            if not entries:
                rows.append((rank, [labels[run.run_id, result.host], result.cpu.model or "", "your host",
                                    found.text, one, every, *_tunnel_beside(result, published), "",
                                    f"run {run.run_id}"]))
                continue
            kind = "summary figures, not a log" if entry.get("kind") == reference.FIGURES else "log"
            soc = reference.of_cpu(str(entry.get("cpu", "")), published)
            rows.append((rank, [labels[run.run_id, result.host], str(entry.get("cpu", "")), kind, found.text, one,
                                every, reference.published_range(soc) or "-", reference.sources(soc),
                                reference.not_told(entry), str(entry.get("source", ""))]))
    if not any(row[2] != "your host" for _, row in rows):
        return []
    rows.sort(key=lambda row: -row[0])  # fastest first: where the user's host sits among them
    blocks: list[Block] = [
        Heading("Known boards beside them (reference)", 3),
        Note("Published figures of known boards and routers, fastest first, to find a neighbour of your host: "
             "the figure closest to a line rate each one published (aes-256-gcm or chacha20-poly1305, else "
             "aes-128-gcm, else another cipher; the smallest block of 1024-16384 bytes, else the largest), in "
             "Mbit/s. Not a verdict: other ciphers, other OpenSSL versions and ways of measuring. \"Summary "
             "figures\" are a published table row or ranking, not a log; a figure without its block size or "
             "threads is shown as published and is no cell of the tables. Beside each prediction, the tunnel "
             "its SoC carried where one was measured and published (a range over the published rows, with their "
             "source), or a host's own measured tunnel."),
        Table(["known board", "CPU", "entry", "figure", "1 core Mbit/s", "all cores Mbit/s",
               "tunnel measured", "tunnel source", "cannot tell", "source"], [row for _, row in rows],
              ["cannot tell", "tunnel source", "CPU", "entry"])]
    return blocks + ranked_tunnels(runs, published)


def _tunnel_beside(result: HostResult, published: Sequence[reference.PublishedTunnel]) -> list[str]:
    """A user's host's own measured WireGuard beside its prediction, else the published range of its SoC (by its
    system type or model) and its source; "-" when neither."""
    own = [f for f in tunnel_answers.tunnel_figures(result) if f.tunnel == "wireguard" and f.mbit is not None]
    if own:
        return ["; ".join(f.said for f in own), "measured here"]
    soc = reference.of_cpu(f"{result.cpu.system_type or ''} {result.cpu.model or ''}", published)
    if soc:
        return [f"not measured here; its SoC: {reference.published_range(soc)}", reference.sources(soc)]
    return ["-", ""]


def ranked_tunnels(runs: Sequence[Run], published: Sequence[reference.PublishedTunnel]) -> list[Block]:
    """The user's measured WireGuard (1 stream, forward: as the published rows were measured) ranked among the
    published rows of known/tunnels.toml, fastest first."""
    labels = tables.host_labels(runs)
    rows: list[tuple[float, list[Any]]] = []
    left_out = []
    for run in runs:
        if run.source == REFERENCE:
            continue
        for result in run.hosts:
            for f in tunnel_answers.tunnel_figures(result):
                if f.tunnel != "wireguard" or f.mbit is None:
                    continue
                if (f.streams, f.direction) != (1, FORWARD):
                    left_out.append(f"{labels[run.run_id, result.host]}: {f.said}")
                    continue
                rows.append((f.mbit, [labels[run.run_id, result.host] + " (yours)", result.cpu.model or "",
                                      f.name, f"{f.mbit:,.0f}", f.how + insights.flagged(f.flags), f"run {run.run_id}"]))
    if not rows:
        return []
    for row in published:
        if row.tunnel == "wireguard":
            how = f"{row.how}, one end in the root namespace" + (f"; {row.note}" if row.note else "")
            rows.append((row.mbit, [row.device, f"{row.soc} · {row.system}", f"WireGuard ({row.implementation})",
                                    f"{row.mbit:,.4g}" if row.mbit < 100 else f"{row.mbit:,.0f}", how, row.source]))
    rows.sort(key=lambda item: -item[0])
    table = [[str(rank)] + row for rank, (_, row) in enumerate(rows, 1)]
    blocks: list[Block] = [
        Heading("Measured WireGuard beside known boards (reference)", 3),
        Note("Your hosts' measured WireGuard (1 stream, forward) ranked among the tunnels others measured and "
             "published for the known boards' SoCs, fastest first, in Mbit/s: the data path of the board "
             "itself, not openssl speed (yours as its `how` says: both ends on the board, or an imported iperf3 "
             "log that does not say). The published rows are one run each (wg-bench: one end in the root "
             "namespace, no repeats, no CPU accounting), yours the median of your repeats."),
        Table(["rank", "board", "SoC / CPU · system", "tunnel", "Mbit/s", "how", "source"], table,
              ["SoC / CPU · system", "how"])]
    if left_out:
        blocks.append(Note("Not ranked (measured otherwise than the published rows): " + "; ".join(left_out) + "."))
    return blocks


def crypto(found: Found) -> list[Block]:
    return [Heading("Crypto instructions and the EVP path"),
            _with_flags(["host", "crypto instructions", "EVP / legacy (aes-cbc)", "verdict"],
                        [[s.label, " ".join(ins.crypto_instructions) or "none reported",
                          f"{ins.evp_ratio:.1f}x" if ins.evp_ratio is not None else "-", ins.evp_verdict]
                         for s, ins in found], [ins.evp_flags for _, ins in found])]


def handshakes(found: Found) -> list[Block]:
    names = sorted({name for _, ins in found for name in ins.handshakes})
    blocks: list[Block] = [Heading("TLS handshakes per second")]
    if names:
        blocks.append(_with_flags(["host"] + names, [[s.label] + [
            f"{ins.handshakes[n]:,.0f}" if n in ins.handshakes else "-" for n in names] for s, ins in found],
            [insights.union(*ins.handshake_flags.values()) for _, ins in found]))
        notes = sorted({note for _, ins in found for note in ins.handshake_notes})
        if notes:
            blocks.append(Note(" ".join(notes)))
    else:
        blocks.append(Note("No rsa2048 / ecdsap256 sign measurements."))
    return blocks


def _quoted(ins: insights.HostInsights) -> list[insights.Throughput]:
    """The throughput rows the per-core and all-core tables quote: 1024 bytes (VPN packets) and the largest block."""
    largest = {(t.algorithm, t.api): t.block_size for t in ins.throughput}  # blocks come ascending
    return [t for t in ins.throughput if t.block_size in (LINE_BLOCKS[0], largest[t.algorithm, t.api])]


def per_core(found: Found) -> list[Block]:
    quoted = [t for _, ins in found for t in _quoted(ins) if t.one_core is not None]
    rows = [[s.label, t.algorithm, t.api or "", t.block_size, fmt_throughput(t.one_core),
             f"{fmt_mhz(ins.mhz)} ({ins.mhz_source})" if ins.mhz else "unknown",
             fmt_per_mhz(ins.per_mhz(t.one_core))]
            for s, ins in found for t in _quoted(ins) if t.one_core is not None]
    blocks: list[Block] = [Heading("Per core")]
    if not rows:
        return blocks + [Note("No single-thread throughput measurements.")]
    return blocks + [
        _with_flags(["host", "algorithm", "api", "block", "1 core", "clock", "1 core per MHz"], rows,
                    [t.one_core_flags for t in quoted], ["clock", "api"]),
        Note("1 core: on a big.LITTLE board, a core of its fastest cluster. Per MHz: one core's throughput divided by "
             "the clock it ran at, so boards at different clocks compare fairly (same core type: same figure).")]


def all_cores(found: Found) -> list[Block]:
    quoted = [t for _, ins in found for t in _quoted(ins) if t.all_cores is not None]
    rows = [[s.label, t.algorithm, t.api or "", t.block_size, fmt_throughput(t.all_cores), t.cores,
             fmt_throughput(t.per_core) if t.per_core is not None else "-"]
            for s, ins in found for t in _quoted(ins) if t.all_cores is not None]
    blocks: list[Block] = [Heading("All cores")]
    if not rows:
        return blocks + [Note("No all-core measurements (sslbench run --threads 1,all).")]
    return blocks + [
        _with_flags(["host", "algorithm", "api", "block", "all cores", "cores", "per core (all / N)"], rows,
                    [t.all_cores_flags for t in quoted], ["per core (all / N)", "api"]),
        Note("All cores: openssl speed -multi N over every logical CPU; per core = all cores / N, against the 1-core "
             "figure it shows how well the board scales.")]
