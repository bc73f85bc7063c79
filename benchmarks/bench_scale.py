"""What a run of N hosts costs the controller: sslbench against plain Ansible doing the same cell, side by side.

Builds the scale fleet (tests/rig/scale.py: N cheap loopback routers sharing one read-only BusyBox+dropbear root,
each with its own /tmp and host key; needs root and `make rig-up` or `rig.py build` once), then for each N runs,
alternating, `sslbench run` with a one-cell matrix and `ansible all -f N -m raw -a 'openssl speed ...'`, and
prints per N: wall time, controller CPU (the command and all its children: ansible-playbook, its forks, ssh),
peak PSS of that process tree, and the ratios sslbench / plain Ansible measured in the same run. The "floor" is
the cell itself (its -seconds). At the largest size, when it is over sslbench's default --forks, both sides run at
that default too: how a fleet of a thousand would go (plain Ansible in waves of --forks hosts, sslbench launching
every host and then polling). "last cell" is when the last host's cell started, seconds after the command: on
this rig the hosts share the controller's cores, so a fleet's wall time is mostly the wait for that last start
(not slowed by the cells already running: `--nice-cells` changes it little). Targets (issue 15): CPU per host within 1.5x of plain Ansible's, wall
within 1.2x and under floor + 10 s; CPU-seconds per host per benchmark minute <= 0.2 (`--seconds 30` shows the
waiting cost). Issue 39: at 1,000 hosts and the default --forks (a fleet above 128 hosts runs at that only), peak
PSS within 1.2x of plain Ansible's and CPU within 1.0x; the last table prints each ratio and the cost per host.
Only this benchmark's own processes are counted or ended: the commands' trees, and the ssh masters whose control
sockets are in the directory it gives each command (TMPDIR, ANSIBLE_SSH_CONTROL_PATH_DIR).

Run: `make benchmark` or `.venv/bin/python benchmarks/bench_scale.py [--hosts 1,16,64,1000] [--seconds 1] [--rounds 2]
[--nice-cells]`.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from orchestrator.run.runner import DEFAULT_FORKS  # noqa: E402  (sslbench's: a fleet larger is run in passes)

ROOT = Path(__file__).resolve().parent.parent
SCALE = ROOT / "tests" / "rig" / "scale.py"
INVENTORY = ROOT / "tests" / "rig" / "state" / "scale-inventory.yml"
BIN = Path(sys.executable).parent
ALGORITHM, SIZE = "aes-128-gcm", 1024
# Up to this many hosts both sides also run with --forks / -f the fleet's size (a worker per host at once); a larger
# fleet runs at the default --forks only, as it would be run (1,000 Ansible workers would hold ~30 GB).
FORKS_AS_FLEET_MAX = 128


def controller_pss_kb(pid: int, own: str) -> int:
    """PSS (kB) of a command and all its descendants, plus the ssh ControlPersist masters it left running in the
    background (re-parented away from it; named after their control socket, which is under `own`, the directory
    this benchmark gave the command): what the controller holds for the fleet. Other users' processes on this
    shared machine (their ssh masters too) are not counted."""
    children: dict[int, list[int]] = {}
    masters: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, tail = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        child = int(stat.parent.name)
        children.setdefault(int(tail.split()[1]), []).append(child)
        if head.split("(", 1)[1] == "ssh" and own in _cmdline(child):
            masters.add(child)
    mine, todo = set(), [pid]
    while todo:
        current = todo.pop()
        mine.add(current)
        todo += children.get(current, [])
    total = 0
    for current in mine | masters:
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def end_ssh_masters(own: str) -> None:
    """No side starts with the other's (or its own earlier) SSH master connections still open: the ssh processes
    whose control socket is under `own` (this benchmark's directory), and no one else's."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if words and (words[0].endswith(b"ssh") or words[0].startswith(b"ssh:")) and any(
                own.encode() in w for w in words):
            try:
                os.kill(int(cmdline.parent.name), 9)
            except OSError:
                pass


def scale_up(hosts: int, nice_cells: bool) -> None:
    subprocess.run([sys.executable, str(SCALE), "up", str(hosts), *(["--nice-cells"] if nice_cells else [])],
                   check=True, stdout=subprocess.DEVNULL)


def uptime() -> float:
    """The clock the hosts' cells are stamped with (they share this machine's kernel)."""
    return float(Path("/proc/uptime").read_text().split()[0])


def measure(cmd: list[str], env: dict[str, str], own: Path,
            cell_starts: Callable[[str], list[float]] = lambda out: []) -> dict[str, float]:
    """Wall seconds, CPU seconds of the command's whole process tree, peak PSS (MB) sampled every 0.5 s, and when
    the last host's cell started (seconds after the command did; cell_starts reads the hosts' uptimes from what the
    command printed or stored): a fleet's wall time is mostly how long the last host waits for its cell."""
    end_ssh_masters(str(own.parent))  # the masters the runs before this one in the same directory left
    own.mkdir(parents=True, exist_ok=True)
    # every SSH master under `own`: sslbench's run dir (its temporary files) and plain Ansible's control path dir
    env = dict(env, TMPDIR=str(own), ANSIBLE_SSH_CONTROL_PATH_DIR=str(own / "cp"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, start_uptime = time.monotonic(), uptime()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], controller_pss_kb(proc.pid, str(own)))
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.monotonic() - start
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0,):
        sys.exit(f"{' '.join(cmd[:3])} ... failed ({proc.returncode}): {err[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    starts = cell_starts(out)
    return {"wall": wall, "cpu": cpu, "pss_mb": peak[0] / 1024,
            "last_cell": max(starts) - start_uptime if starts else float("nan")}


def sslbench(forks: int, seconds: int, results: Path) -> list[str]:
    # --forks as plain Ansible's -f (one worker per host at once when it is the fleet's size)
    return [str(BIN / "sslbench"), "run", "-i", str(INVENTORY), "--forks", str(forks), "--algorithms", ALGORITHM,
            "--sizes", str(SIZE), "--threads", "1", "--api", "evp", "--seconds", str(seconds), "--idle-wait", "0",
            "--results", str(results)]


def plain_ansible(forks: int, seconds: int) -> list[str]:
    # the cell's start stamped by the shell's own read and echo: no process more than the cell itself
    cell = (f"read up _ < /proc/uptime; echo cell-start $up; "
            f"openssl speed -elapsed -seconds {seconds} -bytes {SIZE} -evp {ALGORITHM}")
    return [str(BIN / "ansible"), "all", "-i", str(INVENTORY), "-f", str(forks), "-m", "raw", "-a", cell]


def plain_cell_starts(out: str) -> list[float]:
    return [float(line.split()[1]) for line in out.splitlines() if line.startswith("cell-start ")]


def sslbench_cell_starts(results: Path) -> Callable[[str], list[float]]:
    """Each cell's start as its evidence recorded it (conditions.sh: `uptime_before`), from the stored raw logs."""
    def read(_out: str) -> list[float]:
        return [float(line.split()[1]) for log in results.glob("*/*/0*.log")
                for line in log.read_text(errors="replace").splitlines() if line.startswith("uptime_before ")]
    return read


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="1,16,64,1000",
                        help="fleet sizes, comma-separated (default 1,16,64,1000; above 128 at the default --forks only)")
    parser.add_argument("--seconds", type=int, default=1, help="the cell's -seconds (default 1)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs of each side per size (default 2)")
    parser.add_argument("--long", type=int, default=30, metavar="SECONDS",
                        help="at the largest size, the same cell this long too: the controller's cost while cells run "
                             "(CPU-s per host per benchmark minute) is the difference (default 30; 0 = skip)")
    parser.add_argument("--nice-cells", action="store_true",
                        help="the hosts' cells (openssl speed) at nice 19, both sides: what the controller and the "
                             "hosts' other work cost when the cells do not compete with them, as on real boards")
    parser.add_argument("--reliability", type=int, default=0, metavar="N",
                        help="instead: N sslbench runs per size, and how many hosts were not ok in each")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_scale.py builds loopback hosts (mounts, chroot): run it as root")
    env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="True", ANSIBLE_NOCOLOR="1")
    if args.reliability:
        return reliability(args, env)
    print(f"# one cell ({ALGORITHM} {SIZE} B, -seconds {args.seconds}) per host; median of {args.rounds} alternating "
          f"runs; controller = the command and all its children, and the ssh masters it leaves"
          + ("; cells at nice 19" if args.nice_cells else "") + "\n")
    print(f"{'hosts':>5} {'side':<8} {'wall s':>7} {'CPU s':>7} {'PSS MB':>7} {'CPU/host':>8} {'PSS/host':>8} "
          f"{'last cell s':>11}")
    ratios: list[tuple[str, dict[str, float], dict[str, float], int]] = []
    sizes = [int(h) for h in args.hosts.split(",")]
    small = [h for h in sizes if h <= FORKS_AS_FLEET_MAX]
    waiting = None
    try:
        for hosts in sizes:
            scale_up(hosts, args.nice_cells)
            if hosts > FORKS_AS_FLEET_MAX:  # a thousand boards: at the default --forks, as users run it
                med = compare(hosts, args.seconds, args.rounds, env, forks=DEFAULT_FORKS)
                note = f"(-seconds {args.seconds}, forks {DEFAULT_FORKS})"
                for side, m in med.items():
                    print_row(hosts, side, m, note)
                ratios.append((f"{hosts}, -f {DEFAULT_FORKS}, {args.seconds} s", med["sslbench"], med["ansible"],
                               args.seconds))
                continue
            med = compare(hosts, args.seconds, args.rounds, env)
            for side, m in med.items():
                print_row(hosts, side, m)
            ratios.append((str(hosts), med["sslbench"], med["ansible"], args.seconds))
            if hosts == max(small) and args.long > args.seconds:
                long = compare(hosts, args.long, 1, env)
                minutes = (args.long - args.seconds) / 60
                waiting = (hosts, {side: (long[side]["cpu"] - med[side]["cpu"]) / hosts / minutes for side in med})
                for side, m in long.items():
                    print_row(hosts, side, m, f"(-seconds {args.long})")
                ratios.append((f"{hosts}, {args.long} s", long["sslbench"], long["ansible"], args.long))
            if hosts == max(sizes) and hosts > DEFAULT_FORKS:
                # how a fleet larger than --forks goes: both sides at the default forks, plain Ansible in waves,
                # sslbench launching every host and polling in passes
                for seconds in sorted({args.seconds, args.long} - {0}):
                    forked = compare(hosts, seconds, 1, env, forks=DEFAULT_FORKS)
                    for side, m in forked.items():
                        print_row(hosts, side, m, f"(-seconds {seconds}, forks {DEFAULT_FORKS})")
                    ratios.append((f"{hosts}, -f {DEFAULT_FORKS}, {seconds} s", forked["sslbench"], forked["ansible"],
                                   seconds))
    finally:
        subprocess.run([sys.executable, str(SCALE), "down"], stdout=subprocess.DEVNULL)
    print_ratios(ratios)
    if waiting:
        print(f"\nwhile cells run ({args.seconds} s -> {args.long} s cells, {waiting[0]} hosts): CPU-s per host per "
              f"benchmark minute: sslbench {waiting[1]['sslbench']:.3f} (target <= 0.2), plain Ansible "
              f"{waiting[1]['ansible']:.3f}")
    return 0


def print_ratios(ratios: list[tuple[str, dict[str, float], dict[str, float], int]]) -> None:
    """sslbench / plain Ansible, each pair measured in the same run. Targets: CPU within 1.5x and wall within 1.2x
    (issue 15); at a thousand hosts and the default --forks, PSS within 1.2x and CPU within 1.0x (issue 39)."""
    print(f"\n{'hosts':>24}  {'CPU ratio':>9}  {'wall ratio':>10}  {'PSS ratio':>9}  {'wall - floor s':>14}  "
          f"{'sslbench CPU-s, MB PSS per host':>31}  {'plain Ansible':>14}")
    for label, s, a, floor in ratios:
        print(f"{label:>24}  {s['cpu'] / a['cpu']:>9.2f}  {s['wall'] / a['wall']:>10.2f}  "
              f"{s['pss_mb'] / a['pss_mb']:>9.2f}  {s['wall'] - floor:>14.1f}  "
              f"{s['cpu'] / _hosts(label):>20.3f}, {s['pss_mb'] / _hosts(label):>8.2f}  "
              f"{a['cpu'] / _hosts(label):>6.3f}, {a['pss_mb'] / _hosts(label):>5.2f}")
    print("targets: CPU <= 1.5, wall <= 1.2, wall - floor <= 10 s (issue 15); at 1,000 hosts, -f 50: PSS <= 1.2, "
          "CPU <= 1.0 (issue 39)")


def _hosts(label: str) -> int:
    return int(label.split(",")[0])


def print_row(hosts: int, side: str, m: dict[str, float], note: str = "") -> None:
    print(f"{hosts:>5} {side:<8} {m['wall']:>7.1f} {m['cpu']:>7.1f} {m['pss_mb']:>7.0f} {m['cpu'] / hosts:>8.3f} "
          f"{m['pss_mb'] / hosts:>8.1f} {m['last_cell']:>11.1f}" + (f"   {note}" if note else ""))


def compare(hosts: int, seconds: int, rounds: int, env: dict[str, str],
            forks: int | None = None) -> dict[str, dict[str, float]]:
    """Median wall, CPU and peak PSS of each side over `rounds` alternating runs (forks: the fleet's size)."""
    runs: dict[str, list[dict[str, float]]] = {"sslbench": [], "ansible": []}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        try:
            for r in range(rounds):
                results = Path(tmp) / f"r{r}"
                runs["sslbench"].append(measure(sslbench(forks or hosts, seconds, results), env, Path(tmp) / f"s{r}",
                                                sslbench_cell_starts(results)))
                runs["ansible"].append(measure(plain_ansible(forks or hosts, seconds), env, Path(tmp) / f"a{r}",
                                               plain_cell_starts))
        finally:
            end_ssh_masters(tmp)
    return {side: {k: statistics.median(m[k] for m in ms) for k in ms[0]} for side, ms in runs.items()}


def reliability(args: argparse.Namespace, env: dict[str, str]) -> int:
    """Every host ok in N consecutive runs at the default --forks? Prints the hosts not ok per run (issue 15: none
    at 64 and 128)."""
    from orchestrator import store
    from orchestrator.model import HOST_OK

    lost_total = 0
    try:
        for hosts in [int(h) for h in args.hosts.split(",")]:
            scale_up(hosts, args.nice_cells)
            with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
                for r in range(args.reliability):
                    results = Path(tmp) / f"r{r}"
                    end_ssh_masters(tmp)
                    start = time.monotonic()
                    cmd = sslbench(DEFAULT_FORKS, args.seconds, results)  # as users run it: beyond 50 hosts,
                    subprocess.run(cmd, env=dict(env, TMPDIR=tmp), capture_output=True)  # launched, then polled
                    run = store.load_run(store.list_runs(results)[-1])
                    bad = [f"{h.host} {h.status}: {h.reason}" for h in run.hosts if h.status != HOST_OK]
                    lost_total += len(bad) + (hosts - len(run.hosts))
                    print(f"{hosts:>4} hosts, run {r + 1:>2}: {len(run.hosts) - len(bad)} ok, {len(bad)} not ok "
                          f"({time.monotonic() - start:.1f} s)" + ("".join(f"\n     {b}" for b in bad)))
    finally:
        subprocess.run([sys.executable, str(SCALE), "down"], stdout=subprocess.DEVNULL)
    print(f"hosts not ok over all runs: {lost_total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
