"""Target: the evidence conditions.sh gathers costs < 0.3 s of wall time per cell and < 5 s per host.

Measures on this machine, interleaved (direct, wrapped, direct, wrapped ...):
  - `openssl speed -seconds 1 -bytes 1024 -evp aes-128-gcm` run directly vs through
    `conditions.sh cell FILE --` (quick snapshots before/after + the sampler): the extra seconds per cell;
  - one full snapshot (what a host pays twice per run).
Prints the measured seconds and ratios to the targets (< 1.0 meets them). Never asserts.
The machine may be shared: the wrapper cost is the difference of medians of interleaved runs.
"""
from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "playbooks" / "files" / "conditions.sh"
ROUNDS = 5
CELL_TARGET = 0.3  # seconds of wrapper overhead per cell
SNAPSHOT_TARGET = 5.0  # seconds for both full snapshots of a host
COMMAND = ["openssl", "speed", "-seconds", "1", "-bytes", "1024", "-evp", "aes-128-gcm"]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    if not shutil.which("openssl"):
        print("openssl not found: nothing to measure")
        return
    shell = shutil.which("busybox")
    shell_cmd = [shell, "ash"] if shell else ["sh"]
    direct, wrapped, snaps = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        evidence = str(Path(tmp) / "cell.cond")
        for _ in range(ROUNDS):
            direct.append(timed(COMMAND))
            wrapped.append(timed([*shell_cmd, str(SCRIPT), "cell", evidence, "--", *COMMAND]))
            snaps.append(timed([*shell_cmd, str(SCRIPT), "snapshot", "bench"]))
    extra = statistics.median(wrapped) - statistics.median(direct)
    snapshot = statistics.median(snaps)
    print(f"shell: {' '.join(shell_cmd)}; {ROUNDS} interleaved rounds")
    print(f"direct cell  median {statistics.median(direct):.3f} s")
    print(f"wrapped cell median {statistics.median(wrapped):.3f} s -> overhead {extra:.3f} s per cell "
          f"(ratio to {CELL_TARGET} s target: {extra / CELL_TARGET:.2f})")
    print(f"full snapshot median {snapshot:.3f} s -> two per host {2 * snapshot:.3f} s "
          f"(ratio to {SNAPSHOT_TARGET} s target: {2 * snapshot / SNAPSHOT_TARGET:.2f})")


if __name__ == "__main__":
    main()
