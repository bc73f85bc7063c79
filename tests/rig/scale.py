#!/usr/bin/env python3
"""The scale fleet: many cheap loopback routers for measuring what a run of N hosts costs the controller.

    scale.py up N        N hosts (1..1000) on 127.0.1.1 .. 127.0.1.254, then 127.0.2.1 ... (254 a /24), port 2222,
                         inventory state/scale-inventory.yml
                         (--nice-cells: their `openssl speed` at nice 19)
    scale.py down        stop them all, unmount
    scale.py status      how many answer

Every host is the same read-only root (rig.py's `scale` build: OpenWrt 23.05's BusyBox, dropbear, this machine's
x86_64 openssl, so cells are cheap and the controller's own cost shows), mounted once per host with its own tmpfs
/tmp (root's home and the host's own dropbear key live there, as on DD-WRT) and this machine's /proc, /dev, /sys.
Needs root and a built rig (`rig.py build`). Used by benchmarks/bench_scale.py and tests/integration/test_scale.py.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rig  # noqa: E402  (the rig's builds, keys, process helpers)

PORT = 2222
ROOTS = rig.CACHE / "scale"
KEYS = rig.KEYS / "scale"
INVENTORY = rig.STATE / "scale-inventory.yml"
KNOWN_HOSTS = rig.STATE / "scale-known_hosts"
NICE_OPENSSL = rig.CACHE / "scale-nice-openssl"  # up --nice-cells: bound over every host's openssl
MAX_HOSTS = 1000  # (a thousand boards: the fleet issue 39 measures)


def address(n: int) -> str:
    return f"127.0.{1 + (n - 1) // 254}.{1 + (n - 1) % 254}"


def name(n: int) -> str:
    return f"scale{n:03d}"


def host_key(n: int) -> Path:
    key = KEYS / f"{name(n)}_ed25519"
    if not key.exists():
        rig.run(["dropbearkey", "-t", "ed25519", "-f", str(key)])
    return key


def public_key(n: int) -> str:
    text = rig.run(["dropbearkey", "-y", "-f", str(host_key(n))]).stdout
    return " ".join(next(line for line in text.splitlines() if line.startswith("ssh-")).split()[:2])


# `up N --nice-cells`: bound over each host's openssl, so the cells (`openssl speed`) run at nice 19 and only fill
# the CPU that the controller and the hosts' other work leave, as on real boards, where the cells do not share the
# controller's cores. Every other openssl call runs as is (through this one more shell, as the cells do).
NICE_WRAPPER = """#!/bin/sh
case $1 in speed) exec nice -n 19 /tmp/openssl.real "$@" ;; esac
exec /tmp/openssl.real "$@"
"""


def start(n: int, base: Path, nice_cells: bool = False) -> None:
    """Mount host n's root (the shared build, read-only) with its own /tmp, and start its dropbear."""
    root = ROOTS / name(n)
    rig.umount_under(root)
    root.mkdir(parents=True, exist_ok=True)
    rig.run(["mount", "--bind", str(base), str(root)])
    rig.run(["mount", "-o", "remount,bind,ro", str(root)])
    rig.run(["mount", "-t", "proc", "proc", str(root / "proc")])
    rig.run(["mount", "--bind", "/dev", str(root / "dev")])
    rig.run(["mount", "--bind", "/dev/pts", str(root / "dev/pts")])
    rig.run(["mount", "--bind", "/sys", str(root / "sys")])
    rig.run(["mount", "-o", "remount,bind,ro", str(root / "sys")])
    rig.run(["mount", "-t", "tmpfs", "-o", "mode=1777,size=16m", "tmpfs", str(root / "tmp")])
    home = root / "tmp/root/.ssh"
    home.mkdir(parents=True)
    (root / "tmp/root").chmod(0o700)
    home.chmod(0o700)
    rig.write(home / "authorized_keys", (rig.KEYS / "authorized_keys").read_text(), 0o600)
    key = root / "tmp/dropbear_ed25519_host_key"
    shutil.copyfile(host_key(n), key)
    key.chmod(0o600)
    (root / "tmp/run").mkdir()
    if nice_cells:
        (root / "tmp/openssl.real").touch()
        rig.run(["mount", "--bind", str(base / "usr/bin/openssl"), str(root / "tmp/openssl.real")])
        rig.run(["mount", "--bind", str(NICE_OPENSSL), str(root / "usr/bin/openssl")])
    cmd = ["chroot", str(root), "/usr/sbin/dropbear", "-F", "-E", "-s", "-r", "/tmp/dropbear_ed25519_host_key",
           "-p", f"{address(n)}:{PORT}", "-P", "/tmp/run/dropbear.pid"]
    proc = rig.spawn(name(n), cmd, f"-p {address(n)}:{PORT}")
    deadline = time.monotonic() + 15
    while not rig.port_answers(address(n), PORT):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{name(n)} did not start on {address(n)}:{PORT}")
        time.sleep(0.05)


def running() -> list[int]:
    return sorted(int(p.stem[len("scale"):]) for p in rig.RUN.glob("scale[0-9]*.pid"))


def cmd_up(args: argparse.Namespace) -> int:
    count = args.count
    if not 1 <= count <= MAX_HOSTS:
        print(f"scale.py up: 1 to {MAX_HOSTS} hosts", file=sys.stderr)
        return 2
    cmd_down(args)
    rig.ensure_keys()
    base = rig.ensure_built("scale")
    KEYS.mkdir(parents=True, exist_ok=True)
    if args.nice_cells:
        rig.write(NICE_OPENSSL, NICE_WRAPPER, 0o755)
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda n: start(n, base, args.nice_cells), range(1, count + 1)))
    rig.write(KNOWN_HOSTS, "".join(f"[{address(n)}]:{PORT} {public_key(n)}\n" for n in range(1, count + 1)))
    ssh_args = f"-o UserKnownHostsFile={KNOWN_HOSTS} -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes"
    hosts = {name(n): {"ansible_host": address(n), "ansible_port": PORT, "ansible_user": "root",
                       "ansible_ssh_private_key_file": str(rig.KEYS / "client_ed25519"),
                       "ansible_ssh_common_args": ssh_args, "ansible_ssh_transfer_method": "piped"}
             for n in range(1, count + 1)}
    rig.write(INVENTORY, "# Written by tests/rig/scale.py up: the scale fleet.\n"
              + json.dumps({"all": {"children": {"scale": {"hosts": hosts}}}}, indent=1) + "\n")
    rig.log(f"scale fleet: {count} hosts up; inventory {INVENTORY}")
    return 0


def cmd_down(_args: argparse.Namespace | None = None) -> int:
    for n in running():
        rig.stop_process(name(n))
    if ROOTS.exists():
        for root in ROOTS.iterdir():
            rig.kill_sessions_in(root)
        rig.umount_under(ROOTS)
        shutil.rmtree(ROOTS, ignore_errors=True)
    return 0


def cmd_status(_args: argparse.Namespace) -> int:
    hosts = running()
    answering = sum(rig.port_answers(address(n), PORT) for n in hosts)
    print(f"scale fleet: {answering} of {len(hosts)} hosts answer")
    return 0 if hosts and answering == len(hosts) else 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up")
    up.add_argument("count", type=int)
    up.add_argument("--nice-cells", action="store_true", help="run every host's `openssl speed` at nice 19")
    up.set_defaults(func=cmd_up)
    sub.add_parser("down").set_defaults(func=cmd_down)
    sub.add_parser("status").set_defaults(func=cmd_status)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("scale.py needs root (mounts, chroot)", file=sys.stderr)
        return 2
    return rig.dispatch(args, "scale.py")


if __name__ == "__main__":
    sys.exit(main())
