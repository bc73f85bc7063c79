"""Target: sslbench's measured OpenVPN AES-256-GCM figure is within x0.8-1.25 of the same tunnel run by hand.

On this machine (root, ip netns, openvpn, iperf3), interleaved: a hand-run tunnel, `sslbench run --tunnels openvpn`
on localhost, a hand-run tunnel again, ROUNDS times; the medians compared. The hand run is written here without tunnel.sh: two namespaces joined by a
veth pair (198.18.0.0/30), OpenVPN 2.6 with TLS (EC certificates, --peer-fingerprint), --disable-dco, AES-256-GCM,
the same socket buffers, and iperf3 -J for the same seconds, 1 stream forward. Prints both figures in Mbit/s and
sslbench's over the hand runs' median (1.0: the same). Never asserts: the machine may be shared.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SSLBENCH = str(Path(sys.executable).parent / "sslbench")
SECONDS = 5
ROUNDS = 2  # sslbench runs, each between two hand runs
SOCKBUF = "1048576"  # tunnel.sh's
A, B = "sb-bench-hand-a", "sb-bench-hand-b"


def sh(*cmd: str, check: bool = True) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120).stdout


def cert(tmp: Path, side: str) -> str:
    sh("openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(tmp / f"{side}.pem"))
    sh("openssl", "req", "-new", "-x509", "-key", str(tmp / f"{side}.pem"), "-out", str(tmp / f"{side}.crt"),
       "-days", "2", "-subj", f"/CN={side}")
    return sh("openssl", "x509", "-in", str(tmp / f"{side}.crt"), "-noout", "-fingerprint", "-sha256"
              ).strip().split("=", 1)[1]


def openvpn(tmp: Path, ns: str, side: str, local: str, remote: str, tun: tuple[str, str], fp: str,
            role: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, "openvpn", "--dev", "hand", "--dev-type", "tun", "--proto", "udp", "--local",
         local, "--remote", remote, "--ifconfig", *tun, f"--{role}", "--dh", "none", "--cert", str(tmp / f"{side}.crt"),
         "--key", str(tmp / f"{side}.pem"), "--peer-fingerprint", fp, "--data-ciphers", "AES-256-GCM", "--cipher",
         "AES-256-GCM", "--disable-dco", "--sndbuf", SOCKBUF, "--rcvbuf", SOCKBUF, "--verb", "3"],
        stdout=open(tmp / f"{side}.out", "wb"), stderr=subprocess.STDOUT)


def by_hand() -> float:
    """One hand-run tunnel's receiver rate, bits/s."""
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        try:
            for ns in (A, B):
                sh("ip", "netns", "add", ns)
            sh("ip", "netns", "exec", A, "ip", "link", "add", "v", "type", "veth", "peer", "name", "v", "netns", B)
            for ns, addr in ((A, "198.18.0.1/30"), (B, "198.18.0.2/30")):
                sh("ip", "netns", "exec", ns, "ip", "addr", "add", addr, "dev", "v")
                sh("ip", "netns", "exec", ns, "ip", "link", "set", "v", "up")
                sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            fa, fb = cert(tmp, "a"), cert(tmp, "b")
            procs.append(openvpn(tmp, A, "a", "198.18.0.1", "198.18.0.2", ("198.19.0.1", "198.19.0.2"), fb,
                                 "tls-server"))
            procs.append(openvpn(tmp, B, "b", "198.18.0.2", "198.18.0.1", ("198.19.0.2", "198.19.0.1"), fa,
                                 "tls-client"))
            deadline = time.time() + 30
            while time.time() < deadline and not all(
                    "Initialization Sequence Completed" in (tmp / f"{s}.out").read_text(errors="replace")
                    for s in "ab"):
                time.sleep(0.5)
            procs.append(subprocess.Popen(["ip", "netns", "exec", A, "iperf3", "-s", "-1", "-B", "198.19.0.1"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(1)
            out = sh("ip", "netns", "exec", B, "iperf3", "-c", "198.19.0.1", "-t", str(SECONDS), "-J", check=False)
            return float(json.loads(out)["end"]["sum_received"]["bits_per_second"])
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=30)
            for ns in (A, B):
                sh("ip", "netns", "del", ns, check=False)


def by_sslbench() -> float | None:
    """sslbench's AES-256-GCM figure, 1 stream forward, bits/s."""
    from orchestrator import store

    with tempfile.TemporaryDirectory() as scratch:
        inventory = Path(scratch) / "hosts.yml"
        inventory.write_text(json.dumps({"all": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
        subprocess.run([SSLBENCH, "run", "-i", str(inventory), "--algorithms", "sha256", "--sizes", "16",
                        "--threads", "1", "--api", "evp", "--seconds", str(SECONDS), "--idle-wait", "0",
                        "--tunnels", "openvpn", "--results", f"{scratch}/results"], capture_output=True, timeout=900)
        [run_dir] = store.list_runs(Path(scratch) / "results")
        for m in store.load_run(run_dir).hosts[0].measurements:
            if (m.algorithm, m.operation, m.threads, m.status) == ("openvpn-aes-256-gcm", "forward", 1, "ok"):
                return (m.bytes_per_second or 0) * 8
    return None


def main() -> None:
    if os.geteuid() != 0 or any(shutil.which(t) is None for t in ("ip", "openvpn", "iperf3", "openssl")):
        print("needs root, ip netns, openvpn, iperf3 and openssl: nothing to measure")
        return
    # interleaved, so that a load that comes and goes on a shared machine falls on both sides
    hand, ours = [by_hand()], []
    for _ in range(ROUNDS):
        figure = by_sslbench()
        if figure is not None:
            ours.append(figure)
        hand.append(by_hand())
    print(f"OpenVPN AES-256-GCM, 1 stream forward, {SECONDS} s: by hand "
          f"{', '.join(f'{h / 1e6:.0f}' for h in hand)} Mbit/s (median {statistics.median(hand) / 1e6:.0f})")
    if not ours:
        print("sslbench: no figure (see its run's tunnel-openvpn-aes-256-gcm.log)")
        return
    ratio = statistics.median(ours) / statistics.median(hand)
    print(f"sslbench: {', '.join(f'{o / 1e6:.0f}' for o in ours)} Mbit/s; median sslbench / median by hand = "
          f"{ratio:.2f} (target 0.8-1.25)")

if __name__ == "__main__":
    main()
