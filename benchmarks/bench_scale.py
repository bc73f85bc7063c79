"""What a run of N hosts costs the controller: sslbench against plain Ansible doing the same cell, side by side.

Builds the scale fleet (tests/rig/scale.py: N cheap loopback routers sharing one read-only BusyBox+dropbear root,
each with its own /tmp and host key; needs root and `make rig-up` or `rig.py build` once), then for each N runs,
alternating, `sslbench run` with a one-cell matrix and `ansible all -f N -m raw -a 'openssl speed ...'`, and
prints per N: wall time, controller CPU (the command and all its children: ansible-playbook, its forks, ssh),
peak PSS of that process tree, and the ratios sslbench / plain Ansible measured in the same run. The "floor" is
the cell itself (its -seconds). Targets (issue 15): CPU per host within 1.5x of plain Ansible's, wall within 1.2x
and under floor + 10 s; CPU-seconds per host per benchmark minute <= 0.2 (`--seconds 30` shows the waiting cost).

Run: `make benchmark` or `.venv/bin/python benchmarks/bench_scale.py [--hosts 1,16,64] [--seconds 1] [--rounds 2]`.
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

ROOT = Path(__file__).resolve().parent.parent
SCALE = ROOT / "tests" / "rig" / "scale.py"
INVENTORY = ROOT / "tests" / "rig" / "state" / "scale-inventory.yml"
BIN = Path(sys.executable).parent
ALGORITHM, SIZE = "aes-128-gcm", 1024


def tree_pss_kb(pid: int) -> int:
    """PSS of a process and all its descendants (kB), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def measure(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall seconds, CPU seconds of the command's whole process tree, peak PSS (MB) sampled every 0.5 s."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_pss_kb(proc.pid))
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.monotonic() - start
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0,):
        sys.exit(f"{' '.join(cmd[:3])} ... failed ({proc.returncode}): {err[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "pss_mb": peak[0] / 1024}


def sslbench(hosts: int, seconds: int, results: Path) -> list[str]:
    return [str(BIN / "sslbench"), "run", "-i", str(INVENTORY), "--algorithms", ALGORITHM, "--sizes", str(SIZE),
            "--threads", "1", "--api", "evp", "--seconds", str(seconds), "--idle-wait", "0", "--results", str(results)]


def plain_ansible(hosts: int, seconds: int) -> list[str]:
    cell = f"openssl speed -elapsed -seconds {seconds} -bytes {SIZE} -evp {ALGORITHM}"
    return [str(BIN / "ansible"), "all", "-i", str(INVENTORY), "-f", str(hosts), "-m", "raw", "-a", cell]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="1,16,64", help="fleet sizes, comma-separated (default 1,16,64)")
    parser.add_argument("--seconds", type=int, default=1, help="the cell's -seconds (default 1)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs of each side per size (default 2)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_scale.py builds loopback hosts (mounts, chroot): run it as root")
    env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="True", ANSIBLE_NOCOLOR="1")
    print(f"# one cell ({ALGORITHM} {SIZE} B, -seconds {args.seconds}) per host; median of {args.rounds} alternating "
          f"runs; controller = the command and all its children\n")
    print(f"{'hosts':>5} {'side':<8} {'wall s':>7} {'CPU s':>7} {'PSS MB':>7} {'CPU/host':>8} {'PSS/host':>8}")
    ratios = []
    try:
        for hosts in [int(h) for h in args.hosts.split(",")]:
            subprocess.run([sys.executable, str(SCALE), "up", str(hosts)], check=True, stdout=subprocess.DEVNULL)
            runs: dict[str, list[dict[str, float]]] = {"sslbench": [], "ansible": []}
            with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
                for r in range(args.rounds):
                    runs["sslbench"].append(measure(sslbench(hosts, args.seconds, Path(tmp) / f"r{r}"), env))
                    runs["ansible"].append(measure(plain_ansible(hosts, args.seconds), env))
            med = {side: {k: statistics.median(m[k] for m in ms) for k in ms[0]} for side, ms in runs.items()}
            for side, m in med.items():
                print(f"{hosts:>5} {side:<8} {m['wall']:>7.1f} {m['cpu']:>7.1f} {m['pss_mb']:>7.0f} "
                      f"{m['cpu'] / hosts:>8.3f} {m['pss_mb'] / hosts:>8.1f}")
            s, a = med["sslbench"], med["ansible"]
            per_minute = s["cpu"] / hosts / max(args.seconds / 60, 1e-9)
            ratios.append((hosts, s["cpu"] / a["cpu"], s["wall"] / a["wall"], s["wall"] - args.seconds, per_minute))
    finally:
        subprocess.run([sys.executable, str(SCALE), "down"], stdout=subprocess.DEVNULL)
    print("\nhosts  CPU sslbench/ansible (target <= 1.5)  wall sslbench/ansible (<= 1.2)  wall - floor s (<= 10)"
          "  CPU-s per host per benchmark minute (<= 0.2, meaningful with --seconds 30+)")
    for hosts, cpu_ratio, wall_ratio, over_floor, per_minute in ratios:
        print(f"{hosts:>5}  {cpu_ratio:>35.2f}  {wall_ratio:>29.2f}  {over_floor:>22.1f}  {per_minute:>10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
