#!/usr/bin/env python3
"""The loopback test fleet: build (cached), start, stop and describe it.

    rig.py build         only build what the cache lacks (a running fleet goes on)
    rig.py up            build what is missing, reset every host to its pristine state, start it all,
                         write tests/rig/inventory.yml (+ state/known_hosts, state/ssh_config)
    rig.py down          stop every server, unmount everything (the builds stay cached)
    rig.py status        one line per host; exit 0 only when every host answers SSH
    rig.py stop HOST / start HOST      stop or start one host's SSH server (fault tests)
    rig.py feed-down / feed-up         make the OpenWrt package feed unreachable / reachable again

Needs root and Debian's packages (tests/rig/packages.txt). See tests/rig/README.md.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import feed as feedlib  # noqa: E402  (sibling module; rig.py runs as a script)
import apkrepo  # noqa: E402  (sibling module: the OpenWrt 25.x apk repository)

RIG_DIR = Path(__file__).resolve().parent
FIXTURES = RIG_DIR / "fixtures"
STATE = RIG_DIR / "state"  # git-ignored: known_hosts, ssh_config, written by `up`
INVENTORY = RIG_DIR / "inventory.yml"
CACHE = Path(os.environ.get("SSLBENCH_RIG_CACHE", "/srv/sslbench-rig"))
RUN = Path("/run/sslbench-rig")  # pid files and server logs of the running fleet
KEYS = CACHE / "keys"
LOGS = CACHE / "logs"

FEED_ADDRESS, FEED_PORT = "127.0.0.20", 2280
# OpenWrt release -> (package arch, target, Debian suite and arch whose binaries stand in): openwrt1 is a MIPS
# router (MT7621) with 23.05's OpenSSL 3.0; openwrt2 an IPQ4019 ARM router on 19.07 with OpenSSL 1.1.1
# (Debian has no bullseye mipsel any more, and 19.07 shipped 1.1.1).
OPENWRT = {"23.05.5": ("mipsel_24kc", "ramips/mt7621", "bookworm", "mipsel"),
           "19.07.10": ("arm_cortex-a7_neon-vfpv4", "ipq40xx/generic", "bullseye", "armhf")}
DEBIAN_TRIPLET = {"mipsel": "mipsel-linux-gnu", "armhf": "arm-linux-gnueabihf"}
# OpenWrt 25.x: apk instead of opkg. openwrt3 is a MediaTek Filogic (MT7981/7986, Cortex-A53) router, the
# target of the real 25.12.5 release files in fixtures/openwrt/25.12.5; Debian bookworm's arm64 OpenSSL 3.0
# stands in for 25.12's own build. Its repository is served beside the opkg feed, on a port of its own.
OPENWRT_APK = {"25.12.5": ("aarch64_cortex-a53", "mediatek/filogic", "bookworm", "arm64")}
DEBIAN_TRIPLET["arm64"] = "aarch64-linux-gnu"
APK_REPO_PORT = 2281
# public keys (ECDSA P-256 PEM, as OpenWrt's apk keys): the trusted one; one the host lacks. Private: NAME.key
APK_KEY, APK_STRANGER_KEY = "sslbench-rig.pem", "stranger.pem"
CENTOS_REPO = "/var/cache/sslbench-repo"  # inside the centos host
QEMU_ARCHES = ("arm", "aarch64", "mipsel")
BUSYBOX_DIR = RIG_DIR / "busybox"  # the firmwares' BusyBox configurations (see its README.md)
# The hosts behind the jump host live in a network namespace of their own, with its own loopback: from this
# machine's namespace nothing reaches them; jump1's sshd runs in there, started per connection from here.
HIDDEN_NETNS = "sslbench-rig-hidden"
SUDO_USER = "bench"  # debian1's login: not root, installs through sudo with a password


@dataclass(frozen=True)
class Host:
    name: str
    family: str
    address: str
    port: int
    server: str  # "openssh" (this machine's sshd, ChrootDirectory) or "dropbear" (chrooted)
    base: str  # the cached root file system it runs on
    readonly: bool = False  # read-only root with a tmpfs /tmp (DD-WRT)
    release: str = ""  # the firmware release it is dressed as (OpenWrt)
    user: str = "root"  # the SSH login
    behind: str = ""  # reachable only through this jump host (ProxyJump)
    in_inventory: bool = True  # jump1 is infrastructure (a bastion), not a box to benchmark
    hostname: str = ""  # the host's own host name (uname -n), in a UTS namespace of its own; "": this machine's


HOSTS = [
    Host("raspbian1", "raspbian", "127.0.0.21", 2221, "openssh", "raspbian"),
    Host("armbian1", "armbian", "127.0.0.22", 2222, "openssh", "armbian"),
    Host("openwrt1", "openwrt", "127.0.0.23", 2223, "dropbear", "openwrt-23.05", release="23.05.5"),
    Host("ddwrt1", "ddwrt", "127.0.0.24", 2224, "dropbear", "ddwrt", readonly=True),
    Host("centos1", "centos", "127.0.0.25", 2225, "openssh", "centos"),
    Host("debian1", "debian", "127.0.0.26", 2226, "dropbear", "debian", user=SUDO_USER),
    Host("openwrt2", "openwrt", "127.0.0.27", 2227, "dropbear", "openwrt-19.07", release="19.07.10"),
    # OpenWrt 25.x (apk); 127.0.0.30-32 belong to the site workers and another engineer's hosts
    Host("openwrt3", "openwrt", "127.0.0.35", 2235, "dropbear", "openwrt-25.12", release="25.12.5"),
    Host("jump1", "jump", "127.0.0.28", 2228, "jump", "", in_inventory=False),
    Host("ddwrt2", "ddwrt", "127.0.0.29", 2229, "dropbear", "ddwrt", readonly=True, behind="jump1"),
    # site workers (sslbench run --worker): this machine itself over SSH, not chrooted, where the project's venv
    # has ansible-runner; they reach the fleet as the controller would
    Host("worker1", "worker", "127.0.0.30", 2230, "worker", "", in_inventory=False),
    Host("worker2", "worker", "127.0.0.31", 2231, "worker", "", in_inventory=False),
]
# Hosts of their own kind, kept out of inventory.yml (their tests write an inventory for them): the run of the
# whole fleet and its expectations stay as they are.
# - tty1: debian1's kind (a user login, sudo with a password, dropbear) whose sudoers says `Defaults requiretty`,
#   as CentOS 7's and older RHEL's do: sudo runs only on a terminal. Its own copy of debian's root (debian-tty),
#   because personalize() writes a dropbear host's key into its base.
# - hostile1: a box that prints hostile text: its os-release NAME/PRETTY_NAME, /proc/cpuinfo model and host name
#   carry HTML, spreadsheet formulas and terminal escape sequences (tests/rig/fixtures/hostile/, HOSTILE_HOSTNAME).
#   This machine's sshd as for the openssh hosts, root by key, on debian's root (an overlay: nothing of it
#   reaches the base).
# (127.0.0.31 is worker2's, 127.0.0.35 another host's: these take .33 and .34.)
HOSTILE_HOSTNAME = "<script>h</script>@SUM(1)\x1b]0;host\x07\x1b[2J"
HOSTS += [
    Host("tty1", "debian", "127.0.0.33", 2233, "dropbear", "debian-tty", user=SUDO_USER, in_inventory=False),
    Host("hostile1", "hostile", "127.0.0.34", 2234, "openssh", "debian", in_inventory=False,
         hostname=HOSTILE_HOSTNAME),
]
HOSTS_BY_NAME = {h.name: h for h in HOSTS}
FAMILIES = ("raspbian", "armbian", "openwrt", "ddwrt", "centos", "debian")

# What each cached build is made of. Bump "version" when a builder changes: the digest of the
# recipe names the cache directory, so a changed recipe is rebuilt and the old build removed.
RECIPES: dict[str, dict] = {
    "raspbian": {"version": 2, "userland": ["armhf", "bullseye", "openssl,python3-minimal"]},
    "armbian": {"version": 2, "userland": ["arm64", "bookworm", ""]},
    # libssl3 is in the base already (as openssl-libs is on any CentOS 7): the repo has `openssl`.
    "centos": {"version": 3, "userland": ["amd64", "bookworm", "rpm"], "rpms": ["openssl"]},
    # a Debian box whose login is not root: sudo with a password, dropbear (it checks passwords inside its
    # chroot, so the user exists only there), no openssl
    "debian": {"version": 1, "userland": ["amd64", "bookworm", "sudo,dropbear-bin"]},
    "busybox-src": {"version": 1, "source": ["bookworm", "busybox"]},
    **{f"busybox-{name}": {"version": 1, "config": name}
       for name in ("openwrt-23.05", "openwrt-19.07", "openwrt-25.12", "ddwrt")},
    "openwrt-23.05": {"version": 2, "busybox": "openwrt-23.05", "release": "23.05.5", "debs": ["libc6", "libgcc-s1"]},
    "openwrt-19.07": {"version": 2, "busybox": "openwrt-19.07", "release": "19.07.10", "debs": ["libc6", "libgcc-s1"]},
    "ddwrt": {"version": 2, "busybox": "ddwrt", "debs": ["bullseye", "armhf", "openssl", "libssl1.1", "libc6",
                                                         "libgcc-s1"]},
    # the scale fleet's one shared root (tests/rig/scale.py): OpenWrt 23.05's BusyBox, dropbear and this machine's
    # own openssl (x86_64: cheap cells, so what a run of many hosts costs the controller shows)
    "scale": {"version": 1, "busybox": "openwrt-23.05"},
    # per OpenWrt release (OPENWRT): Debian's OpenSSL of that era (19.07 shipped 1.1.1, 23.05 3.0)
    "feed": {"version": 2, "releases": {"23.05.5": ["openssl", "libssl3", "libatomic1"],
                                        "19.07.10": ["openssl", "libssl1.1", "libatomic1"]}},
    # OpenWrt 25.x: no opkg, the apk stand-in; its repository of .apk around Debian's arm64 OpenSSL 3.0.
    # BusyBox: 25.12.5's own default applet set (busybox/README.md), which has setsid where 23.05 has none.
    "openwrt-25.12": {"version": 2, "busybox": "openwrt-25.12", "release": "25.12.5", "debs": ["libc6", "libgcc-s1"]},
    "apk-repo": {"version": 2, "releases": {"25.12.5": ["openssl", "libssl3", "libatomic1"]}},
}


# ---------------------------------------------------------------------------------------------
# small helpers

def log(msg: str) -> None:
    print(f"[rig {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(cmd: list[str], logfile: Path | None = None, **kw) -> subprocess.CompletedProcess:
    """Run cmd; on failure raise with the tail of its output (or of logfile)."""
    if logfile:
        logfile.parent.mkdir(parents=True, exist_ok=True)
        with open(logfile, "a") as out:
            out.write(f"$ {' '.join(cmd)}\n")
            out.flush()
            proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, text=True, **kw)
        if proc.returncode:
            tail = "".join(logfile.read_text(errors="replace").splitlines(True)[-20:])
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}); see {logfile}:\n{tail}")
        return proc
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc


def write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    path.write_text(text)
    path.chmod(mode)


def copy_fixture(rel: str, dest: Path, mode: int = 0o644) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or dest.exists():
        dest.unlink()
    shutil.copyfile(FIXTURES / rel, dest)
    dest.chmod(mode)


def port_answers(address: str, port: int, timeout: float = 1.0) -> bool:
    """True when an SSH (or HTTP) server accepts a connection there."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# this machine: packages, binfmt, the Debian mirror

def ensure_packages() -> None:
    wanted = [l.strip() for l in (RIG_DIR / "packages.txt").read_text().splitlines()
              if l.strip() and not l.startswith("#")]
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n", *wanted],
                         capture_output=True, text=True).stdout
    have = {l.split()[0] for l in out.splitlines() if l.endswith(" installed")}
    missing = [p for p in wanted if p not in have]
    if not missing:
        return
    log(f"installing with apt-get: {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["apt-get", "update", "-qq"], LOGS / "apt.log", env=env)
    run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], LOGS / "apt.log", env=env)


def ensure_binfmt() -> None:
    """Register qemu-user-static for the foreign architectures (as systemd-binfmt would)."""
    binfmt = Path("/proc/sys/fs/binfmt_misc")
    if not (binfmt / "register").exists():
        run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(binfmt)])
    for arch in QEMU_ARCHES:
        if not (binfmt / f"qemu-{arch}").exists():
            rule = [l for l in Path(f"/usr/lib/binfmt.d/qemu-{arch}.conf").read_text().splitlines()
                    if l and not l.startswith("#")][0]
            (binfmt / "register").write_text(rule)


def parse_debian_mirrors(texts: list[str]) -> tuple[str | None, str | None]:
    """(Debian mirror, security mirror) named in apt sources texts, one-line or deb822 format."""
    main, security = None, None
    for text in texts:
        for para in text.split("\n\n"):
            uris, suites = [], []
            for line in para.splitlines():
                line = line.strip()
                if line.startswith("URIs:"):
                    uris += line.split()[1:]
                elif line.startswith("Suites:"):
                    suites += line.split()[1:]
                elif line.startswith("deb "):
                    words = [w for w in line.split()[1:] if not w.startswith("[") and not w.endswith("]")]
                    if len(words) >= 2:
                        uris.append(words[0])
                        suites.append(words[1])
            for uri in uris:
                uri = uri.rstrip("/")
                if uri.endswith("/debian-security") and not security:
                    security = uri
                elif uri.endswith("/debian") and not main and any(
                        s.split("-")[0] in ("bookworm", "bullseye", "trixie") for s in suites):
                    main = uri
    return main, security


def debian_mirrors() -> tuple[str, str]:
    """The Debian mirror (and security mirror) this machine's apt uses."""
    files = [Path("/etc/apt/sources.list")] + sorted(Path("/etc/apt/sources.list.d").glob("*"))
    main, security = parse_debian_mirrors([f.read_text() for f in files if f.is_file()])
    main = main or "http://deb.debian.org/debian"
    return main, security or main.replace("/debian", "/debian-security")


def apt_sources(suite: str, updates: bool = True) -> str:
    """sources.list for suite on this machine's mirror (which may lack -security for some arches)."""
    main, security = debian_mirrors()
    text = f"# sslbench test rig: the Debian mirror this machine reaches.\ndeb {main} {suite} main\n"
    if updates:
        text += f"deb {main} {suite}-updates main\ndeb {security} {suite}-security main\n"
    return text


_apt_locks: dict[str, threading.Lock] = {}
_apt_locks_guard = threading.Lock()


def fetch_debs(suite: str, arch: str, names: list[str]) -> dict[str, Path]:
    """Download Debian packages of any architecture with a private apt state (signatures checked)."""
    key = f"{suite}-{arch}"
    with _apt_locks_guard:
        lock = _apt_locks.setdefault(key, threading.Lock())
    with lock:
        top = CACHE / "apt" / key
        for d in ("lists/partial", "cache/archives/partial", "debs"):
            (top / d).mkdir(parents=True, exist_ok=True)
        (top / "status").touch()
        write(top / "sources.list", apt_sources(suite, updates=False).replace("deb ", f"deb [arch={arch}] "))
        opts = [f"-oDir::Etc::SourceList={top}/sources.list", "-oDir::Etc::SourceParts=/dev/null",
                f"-oDir::State::Lists={top}/lists", f"-oDir::State::Status={top}/status",
                f"-oDir::Cache={top}/cache", f"-oAPT::Architecture={arch}",
                f"-oAPT::Architectures::={arch}", "-oAPT::Sandbox::User=root"]
        logf = LOGS / f"apt-{key}.log"
        run(["apt-get", *opts, "-qq", "update"], logf)
        for old in (top / "debs").glob("*.deb"):
            old.unlink()
        run(["apt-get", *opts, "-qq", "download", *names], logf, cwd=top / "debs")
        found = {}
        for name in names:
            hits = sorted((top / "debs").glob(f"{name}_*.deb"))
            if not hits:
                raise RuntimeError(f"apt-get download {name} ({key}) gave no .deb")
            found[name] = hits[-1]
        return found


def extract_debs(debs: list[Path], dest: Path) -> None:
    for deb in debs:
        run(["dpkg-deb", "-x", str(deb), str(dest)])


# ---------------------------------------------------------------------------------------------
# cached builds

def recipe_digest(name: str) -> str:
    main, _ = debian_mirrors()
    recipe = dict(RECIPES[name])
    if "config" in recipe:  # a BusyBox build changes with its configuration and build script
        recipe["files"] = [hashlib.sha256((BUSYBOX_DIR / f).read_bytes()).hexdigest()
                           for f in (f"{recipe['config']}.config", "build.sh")]
    if "busybox" in recipe:  # a root changes with the BusyBox it carries
        recipe["busybox_build"] = recipe_digest(f"busybox-{recipe['busybox']}")
    blob = json.dumps({"name": name, "recipe": recipe, "mirror": main}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def build_dir(name: str) -> Path:
    return CACHE / "builds" / f"{name}-{recipe_digest(name)}"


def bootstrap_userland(dest: Path, name: str) -> None:
    """A minimal Debian userland. mmdebstrap, not debootstrap: under qemu it takes ~60 % of the time
    (apt downloads in parallel; dpkg without fsync, which only matters if this machine crashes mid-build)."""
    arch, suite, include = RECIPES[name]["userland"]
    main, _ = debian_mirrors()
    cmd = ["mmdebstrap", "--variant=minbase", f"--architectures={arch}", "--dpkgopt=force-unsafe-io",
           "--aptopt=Acquire::Retries \"3\""]
    if include:
        cmd.append(f"--include={include}")
    run(cmd + [suite, str(dest), main], LOGS / f"{name}.log")
    # The mirror here has no bullseye-security for armhf: only the host that provisions with apt
    # (armbian, bookworm) lists -updates and -security.
    write(dest / "etc/apt/sources.list", apt_sources(suite, updates=(suite == "bookworm")))


def copy_with_libraries(binary: Path, dest: Path, target: str) -> None:
    """A binary of this machine into the root at `target`, with the shared libraries ldd names."""
    out = dest / target.lstrip("/")
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, out)
    for line in run(["ldd", str(binary)]).stdout.splitlines():
        parts = line.split()
        lib = parts[2] if "=>" in parts and len(parts) > 2 else parts[0]
        if lib.startswith("/"):
            lib_target = dest / lib.lstrip("/")
            lib_target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.realpath(lib), lib_target)


def busybox_root(dest: Path, shell: str, busybox: Path) -> None:
    """A root of the firmware's BusyBox (built from its configuration, dynamically linked: a command the
    firmware lacks is missing here too, whatever links exist) plus Debian's dropbear."""
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "usr/lib", "lib", "etc/dropbear", "root", "tmp",
              "proc", "dev", "sys"):
        (dest / d).mkdir(parents=True, exist_ok=True)
    (dest / "tmp").chmod(0o1777)
    copy_with_libraries(busybox / "busybox", dest, "/bin/busybox")
    # One link per applet, where the firmware installs it (BusyBox's own busybox.links).
    for applet in (busybox / "busybox.links").read_text().split():
        link = dest / applet.lstrip("/")
        if applet != "/bin/busybox" and not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to("/bin/busybox")
    copy_with_libraries(Path("/usr/sbin/dropbear"), dest, "/usr/sbin/dropbear")
    write(dest / "etc/passwd", f"root:x:0:0:root:/root:{shell}\n"
          "daemon:*:1:1:daemon:/var:/bin/false\nnobody:*:65534:65534:nobody:/var:/bin/false\n")
    write(dest / "etc/shadow", "root:*:19000:0:99999:7:::\ndaemon:*:0:0:99999:7:::\n"
          "nobody:*:0:0:99999:7:::\n", 0o600)
    write(dest / "etc/group", "root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\n")
    write(dest / "etc/shells", f"{shell}\n")
    write(dest / "etc/hosts", "127.0.0.1 localhost\n")


def build_userland(dest: Path, name: str) -> None:
    bootstrap_userland(dest, name)


def build_armbian(dest: Path, name: str) -> None:
    bootstrap_userland(dest, name)
    if (dest / "usr/bin/openssl").exists():
        raise RuntimeError("armbian must start without openssl, but debootstrap installed it")


def build_debian(dest: Path, name: str) -> None:
    bootstrap_userland(dest, name)
    if (dest / "usr/bin/openssl").exists():
        raise RuntimeError("debian must start without openssl, but debootstrap installed it")
    # The login user; its password hash is set by personalize() (the password lives with the rig's keys).
    with open(dest / "etc/passwd", "a") as f:
        f.write(f"{SUDO_USER}:x:1000:1000:sslbench rig:/home/{SUDO_USER}:/bin/bash\n")
    with open(dest / "etc/group", "a") as f:
        f.write(f"{SUDO_USER}:x:1000:\n")
    group = (dest / "etc/group").read_text().replace("\nsudo:x:27:\n", f"\nsudo:x:27:{SUDO_USER}\n")
    write(dest / "etc/group", group)
    with open(dest / "etc/shadow", "a") as f:
        f.write(f"{SUDO_USER}:!:19000:0:99999:7:::\n")
    home = dest / "home" / SUDO_USER
    (home / ".ssh").mkdir(parents=True)
    os.chown(home, 1000, 1000)
    os.chown(home / ".ssh", 1000, 1000)
    (home / ".ssh").chmod(0o700)


def build_centos(dest: Path, name: str) -> None:
    bootstrap_userland(dest, name)
    # The package-manager path is yum (stand-in) over the real rpm; openssl is not installed yet.
    repo = dest / CENTOS_REPO.lstrip("/")
    repo.mkdir(parents=True)
    debs = fetch_debs("bookworm", "amd64", RECIPES["centos"]["rpms"])
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        for deb in debs.values():
            run(["alien", "--to-rpm", str(deb)], LOGS / "centos.log", cwd=tmp)
        index = []
        for rpm in sorted(Path(tmp).glob("*.rpm")):
            q = run(["rpm", "-qp", "--qf", "%{NAME} %{VERSION}-%{RELEASE} %{ARCH}", str(rpm)]).stdout.split()
            shutil.copy2(rpm, repo / rpm.name)
            index.append(" ".join(q + [rpm.name]))
    write(repo / "pkglist", "\n".join(index) + "\n")
    write(dest / "etc/yum.repos.d/sslbench-local.repo",
          "# sslbench test rig: a local repository of .rpm files converted by alien from Debian's packages.\n"
          f"[base]\nname=CentOS-7 - Base (sslbench test rig)\nbaseurl=file://{CENTOS_REPO}/\n"
          "gpgcheck=0\nenabled=1\n")
    run(["chroot", str(dest), "rpm", "--initdb"])
    # A CentOS box has no dpkg or apt: remove them so detection cannot take the Debian path.
    for pattern in ("usr/bin/apt*", "usr/bin/dpkg*", "etc/debian_version", "usr/bin/python3*"):
        for p in dest.glob(pattern):
            p.unlink()
    shutil.rmtree(dest / "etc/apt", ignore_errors=True)


def build_busybox_source(dest: Path, name: str) -> None:
    """Debian's BusyBox source (its patches applied), from the deb-src side of this machine's mirror."""
    suite, package = RECIPES[name]["source"]
    main, _ = debian_mirrors()
    top = CACHE / "apt" / f"src-{suite}"
    for d in ("lists/partial", "cache/archives/partial"):
        (top / d).mkdir(parents=True, exist_ok=True)
    (top / "status").touch()
    write(top / "sources.list", f"deb-src {main} {suite} main\n")
    opts = [f"-oDir::Etc::SourceList={top}/sources.list", "-oDir::Etc::SourceParts=/dev/null",
            f"-oDir::State::Lists={top}/lists", f"-oDir::State::Status={top}/status",
            f"-oDir::Cache={top}/cache", "-oAPT::Sandbox::User=root"]
    logf = LOGS / f"{name}.log"
    run(["apt-get", *opts, "-qq", "update"], logf)
    run(["apt-get", *opts, "-qq", "source", package], logf, cwd=dest)
    trees = [d for d in dest.iterdir() if d.is_dir() and (d / "Config.in").exists()]
    if len(trees) != 1:
        raise RuntimeError(f"apt-get source {package} gave no single BusyBox tree in {dest}")
    trees[0].rename(dest / "tree")


def build_busybox(dest: Path, name: str) -> None:
    """BusyBox built with one firmware's configuration (tests/rig/busybox), and where it installs each applet."""
    config = BUSYBOX_DIR / f"{RECIPES[name]['config']}.config"
    source = ensure_built("busybox-src") / "tree"
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(source, tree, symlinks=True)
        run(["sh", str(BUSYBOX_DIR / "build.sh"), str(config), str(tree), str(dest / "busybox")], LOGS / f"{name}.log")
        run(["make", "-C", str(tree), "busybox.links"], LOGS / f"{name}.log")
        shutil.copy2(tree / "busybox.links", dest / "busybox.links")


def build_openwrt(dest: Path, name: str) -> None:
    busybox_root(dest, "/bin/ash", ensure_built(f"busybox-{RECIPES[name]['busybox']}"))
    # OpenWrt keeps /var in RAM: /var -> /tmp.
    (dest / "var").symlink_to("tmp")
    # The C library of the target architecture is part of the firmware (here glibc, from Debian).
    arch, _target, suite, debian_arch = OPENWRT[RECIPES[name]["release"]]
    debs = fetch_debs(suite, debian_arch, RECIPES[name]["debs"])
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        extract_debs(list(debs.values()), Path(tmp))
        shutil.copytree(Path(tmp) / "lib", dest / "lib", symlinks=True, dirs_exist_ok=True)
    # STAND-IN: OpenWrt's `wget` is uclient-fetch, which no registry here has; Debian's busybox-static answers
    # as `wget` only (BusyBox picks the applet by the name it is called by), for the opkg stand-in.
    (dest / "usr/libexec").mkdir(parents=True, exist_ok=True)
    shutil.copy2("/bin/busybox", dest / "usr/libexec/wget-standin")
    (dest / "usr/bin/wget").unlink(missing_ok=True)
    (dest / "usr/bin/wget").symlink_to("/usr/libexec/wget-standin")
    status = []
    for pkg, version in (("base-files", "1565-r24106-10cc5fcd00"), ("busybox", "1.35.0-4"),
                         ("dropbear", "2022.83-1"), ("libc", "2.36-9"), ("libgcc1", "12.2.0-14"),
                         ("opkg", "2022-02-24-d038e5b6-2")):
        status.append(f"Package: {pkg}\nVersion: {version}\nStatus: install user installed\n"
                      f"Architecture: {arch}\nInstalled-Time: 1727000000\n")
    write(dest / "usr/lib/opkg/status", "\n".join(status) + "\n")
    (dest / "usr/lib/opkg/info").mkdir(parents=True, exist_ok=True)


def build_ddwrt(dest: Path, name: str) -> None:
    busybox_root(dest, "/bin/sh", ensure_built(f"busybox-{RECIPES[name]['busybox']}"))
    # DD-WRT keeps /var and root's home in RAM.
    (dest / "var").symlink_to("tmp/var")
    write(dest / "etc/passwd", "root:x:0:0:Root User,,,:/tmp/root:/bin/sh\n"
          "nobody:*:65534:65534:nobody:/var:/bin/false\n")
    # "In the firmware": OpenSSL 1.1.1 for armv7 from Debian bullseye (1.0.2: see README.md).
    suite, arch, *names = RECIPES[name]["debs"]
    debs = fetch_debs(suite, arch, names)
    extract_debs(list(debs.values()), dest)
    for junk in ("usr/share/doc", "usr/share/man", "usr/share/lintian", "usr/share/locale", "usr/lib/ssl/misc"):
        shutil.rmtree(dest / junk, ignore_errors=True)
    out = run(["chroot", str(dest), "/usr/bin/openssl", "version"]).stdout
    if not out.startswith("OpenSSL 1.1.1"):
        raise RuntimeError(f"ddwrt openssl: unexpected version {out!r}")


def build_scale(dest: Path, name: str) -> None:
    busybox_root(dest, "/bin/ash", ensure_built(f"busybox-{RECIPES[name]['busybox']}"))
    (dest / "var").symlink_to("tmp")
    copy_with_libraries(Path(shutil.which("openssl") or "/usr/bin/openssl"), dest, "/usr/bin/openssl")
    copy_fixture("scale/openwrt_release", dest / "etc/openwrt_release")
    # one root for every host, read-only: what differs per host (home, host key) is written into its /tmp
    write(dest / "etc/passwd", "root:x:0:0:root:/tmp/root:/bin/ash\nnobody:*:65534:65534:nobody:/var:/bin/false\n")


def feed_paths(release: str) -> tuple[str, str]:
    """(base, core) package directories of one OpenWrt release in the feed, as on downloads.openwrt.org."""
    arch, target, _suite, _debian_arch = OPENWRT[release]
    return f"releases/{release}/packages/{arch}/base", f"releases/{release}/targets/{target}/packages"


def build_feed(dest: Path, name: str) -> None:
    """The OpenWrt feeds: openssl-util and libopenssl .ipk around Debian's binaries of each release's era."""
    for release, debnames in RECIPES[name]["releases"].items():
        arch, _target, suite, debian_arch = OPENWRT[release]
        debs = fetch_debs(suite, debian_arch, debnames)
        soname = "3" if debnames[1] == "libssl3" else "1.1"
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            x = Path(tmp)
            extract_debs(list(debs.values()), x)
            version = debs["openssl"].name.split("_")[1].split("-")[0] + "-1"
            libdir = x / "usr/lib" / DEBIAN_TRIPLET[debian_arch]
            atomic = sorted(libdir.glob("libatomic.so.1*"))[-1]
            lib_package = f"libopenssl{soname}"
            base = [
                feedlib.Ipk(lib_package, version, arch,
                            "The OpenSSL Project is a collaborative effort to develop a robust, "
                            "commercial-grade, full-featured, and Open Source toolkit (libraries from Debian).",
                            depends=["libc", "libatomic1"],
                            files={f"/usr/lib/libcrypto.so.{soname}": libdir / f"libcrypto.so.{soname}",
                                   f"/usr/lib/libssl.so.{soname}": libdir / f"libssl.so.{soname}"}),
                feedlib.Ipk("openssl-util", version, arch, f"OpenSSL command line tool (Debian's {debian_arch} build).",
                            depends=["libc", lib_package], section="utils",
                            files={"/usr/bin/openssl": x / "usr/bin/openssl"}),
            ]
            core = [feedlib.Ipk("libatomic1", debs["libatomic1"].name.split("_")[1].split("-")[0] + "-4",
                                arch, "GCC support library (libatomic).", depends=["libc"],
                                license="GPL-3.0-with-GCC-exception", files={"/lib/libatomic.so.1": atomic})]
            base_path, core_path = feed_paths(release)
            feedlib.write_feed(base, dest / base_path)
            feedlib.write_feed(core, dest / core_path)


BUILDERS = {"raspbian": build_userland, "armbian": build_armbian, "centos": build_centos, "debian": build_debian,
            "busybox-src": build_busybox_source, "busybox-openwrt-23.05": build_busybox,
            "busybox-openwrt-19.07": build_busybox, "busybox-openwrt-25.12": build_busybox,
            "busybox-ddwrt": build_busybox,
            "openwrt-23.05": build_openwrt, "openwrt-19.07": build_openwrt, "ddwrt": build_ddwrt, "feed": build_feed,
            "scale": build_scale,
            # OpenWrt 25.x (apk): defined further down, in a block of their own
            "openwrt-25.12": lambda dest, name: build_openwrt_apk(dest, name),
            "apk-repo": lambda dest, name: build_apk_repo(dest, name)}


def build_copy(dest: Path, name: str) -> None:
    """A root of its own that is another build's copy (RECIPES[name]["copy"]): a host that must not share it."""
    source = ensure_built(RECIPES[name]["copy"])
    run(["cp", "-a", f"{source}/.", str(dest)])
    (dest / ".rig-complete").unlink(missing_ok=True)


# tty1's root: debian's, copied (bump "version" with debian's)
RECIPES["debian-tty"] = {"version": 1, "copy": "debian", "of": RECIPES["debian"]}
BUILDERS["debian-tty"] = build_copy
_build_locks = {name: threading.Lock() for name in BUILDERS}  # builds wait for the builds they use


def ensure_built(name: str) -> Path:
    """Build `name` unless the cache already has this recipe's build; drop other builds of it."""
    with _build_locks[name]:
        final = build_dir(name)
        if (final / ".rig-complete").exists():
            return final
        tmp = final.with_name(final.name + ".partial")
        if tmp.exists():
            umount_under(tmp)
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        tmp.chmod(0o755)
        start = time.monotonic()
        log(f"building {name} (first time or recipe changed; log: {LOGS / (name + '.log')})")
        BUILDERS[name](tmp, name)
        (tmp / ".rig-complete").write_text(json.dumps(RECIPES[name]) + "\n")
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
        log(f"built {name} in {time.monotonic() - start:.0f} s")
        return final


def build_all() -> dict[str, Path]:
    """Build what the cache lacks, in parallel (the qemu builds dominate: a few minutes)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(BUILDERS)) as pool:
        futures = {n: pool.submit(ensure_built, n) for n in BUILDERS}
        return {n: f.result() for n, f in futures.items()}


def drop_stale_builds(current: dict[str, Path]) -> None:
    """Remove builds of older or dropped recipes (only while the fleet is down: a running host may use one)."""
    keep = set(current.values())
    for old in (CACHE / "builds").iterdir():
        if old not in keep:
            umount_under(old)
            shutil.rmtree(old, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# OpenWrt 25.x: apk instead of opkg (openwrt3)

def apk_repo_paths(release: str) -> tuple[str, str]:
    """(base, core) repository directories of one OpenWrt 25.x release, as on downloads.openwrt.org."""
    arch, target, _suite, _debian_arch = OPENWRT_APK[release]
    return f"releases/{release}/packages/{arch}/base", f"releases/{release}/targets/{target}/packages"


def build_openwrt_apk(dest: Path, name: str) -> None:
    """An OpenWrt 25.x root: the firmware's BusyBox, dropbear, the target's C library, apk (stand-in), no opkg."""
    busybox_root(dest, "/bin/ash", ensure_built(f"busybox-{RECIPES[name]['busybox']}"))
    (dest / "var").symlink_to("tmp")  # OpenWrt keeps /var in RAM
    arch, _target, suite, debian_arch = OPENWRT_APK[RECIPES[name]["release"]]
    debs = fetch_debs(suite, debian_arch, RECIPES[name]["debs"])
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        extract_debs(list(debs.values()), Path(tmp))
        shutil.copytree(Path(tmp) / "lib", dest / "lib", symlinks=True, dirs_exist_ok=True)
        shutil.copytree(Path(tmp) / "usr/lib", dest / "usr/lib", symlinks=True, dirs_exist_ok=True)
    # STAND-IN: OpenWrt's `wget` (uclient-fetch), which apk runs to download, as on openwrt1
    (dest / "usr/libexec").mkdir(parents=True, exist_ok=True)
    shutil.copy2("/bin/busybox", dest / "usr/libexec/wget-standin")
    (dest / "usr/bin/wget").unlink(missing_ok=True)
    (dest / "usr/bin/wget").symlink_to("/usr/libexec/wget-standin")
    if (dest / "bin/opkg").exists() or (dest / "usr/bin/opkg").exists():
        raise RuntimeError("an OpenWrt 25.x root must have no opkg")
    # apk's database of what the firmware image installed (the versions of the binaries really there)
    status = []
    for pkg, version in (("base-files", "1669-r33051-f5dae5ece4"), ("busybox", "1.35.0-r4"),
                         ("dropbear", "2022.83-r1"), ("libc", "2.36-r9"), ("libgcc1", "12.2.0-r14"),
                         ("apk-mbedtls", "3.0.3-r1")):
        status.append(f"P:{pkg}\nV:{version}\nA:{arch}\nS:0\nI:0\nT:{pkg} (firmware)\nL:GPL-2.0\n")
    write(dest / "lib/apk/db/installed", "\n".join(status) + "\n")
    write(dest / "etc/apk/world", "apk-mbedtls\nbase-files\nbusybox\ndropbear\n")
    write(dest / "etc/apk/arch", f"{arch}\n")
    (dest / "etc/apk/keys").mkdir(parents=True, exist_ok=True)
    (dest / "etc/apk/repositories.d").mkdir(parents=True, exist_ok=True)


def build_apk_repo(dest: Path, name: str) -> None:
    """The apk repositories: openssl-util, libopenssl3 (base) and libatomic1 (core) as signed v3 .apk around
    Debian's binaries with a signed packages.adb; the same base repository signed with a key no host trusts (under
    untrusted/)."""
    keys, www = dest / "keys", dest / "www"
    keys.mkdir(parents=True)
    for key in (APK_KEY, APK_STRANGER_KEY):
        apkrepo.make_key(keys / key.replace(".pem", ".key"), keys / key)
    for release, debnames in RECIPES[name]["releases"].items():
        arch, _target, suite, debian_arch = OPENWRT_APK[release]
        debs = fetch_debs(suite, debian_arch, debnames)
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            x = Path(tmp)
            extract_debs(list(debs.values()), x)
            version = debs["openssl"].name.split("_")[1].split("-")[0] + "-r1"
            libdir = x / "usr/lib" / DEBIAN_TRIPLET[debian_arch]
            atomic = sorted(libdir.glob("libatomic.so.1*"))[-1]
            base = [
                apkrepo.ApkPackage("libopenssl3", version, arch, "The OpenSSL Project is a collaborative effort to "
                                   "develop a robust, commercial-grade, full-featured, and Open Source toolkit "
                                   "(libraries from Debian).", depends=["libc", "libatomic1"],
                                   files={"/usr/lib/libcrypto.so.3": libdir / "libcrypto.so.3",
                                          "/usr/lib/libssl.so.3": libdir / "libssl.so.3"}),
                apkrepo.ApkPackage("openssl-util", version, arch, f"OpenSSL command line tool (Debian's {debian_arch} "
                                   "build).", depends=["libc", "libopenssl3"],
                                   files={"/usr/bin/openssl": x / "usr/bin/openssl"}),
            ]
            core = [apkrepo.ApkPackage("libatomic1", debs["libatomic1"].name.split("_")[1].split("-")[0] + "-r4",
                                       arch, "GCC support library (libatomic).", depends=["libc"],
                                       license="GPL-3.0-with-GCC-exception", url="https://gcc.gnu.org/",
                                       files={"/lib/libatomic.so.1": atomic})]
            base_path, core_path = apk_repo_paths(release)
            description = f"OpenWrt {release} (sslbench test rig)"
            trusted = (keys / APK_KEY.replace(".pem", ".key"), keys / APK_KEY)
            apkrepo.write_repo(base, description, www / base_path, *trusted)
            apkrepo.write_repo(core, description, www / core_path, *trusted)
            apkrepo.write_repo(base, description, www / "untrusted" / base_path,
                               keys / APK_STRANGER_KEY.replace(".pem", ".key"), keys / APK_STRANGER_KEY)


def apk_repo_url(host: Host, which: str = "base", root: str = "") -> str:
    """The index URL of one of the host's repositories (root "untrusted/": the one signed by a stranger)."""
    base_path, core_path = apk_repo_paths(host.release)
    path = base_path if which == "base" else core_path
    return f"http://{FEED_ADDRESS}:{APK_REPO_PORT}/{root}{path}/packages.adb"


def openwrt_release_files(host: Host, base: Path) -> None:
    """What every OpenWrt release writes about itself: openwrt_release, os-release (linked from /etc), banner."""
    release = f"openwrt/{host.release}"
    copy_fixture(f"{release}/openwrt_release", base / "etc/openwrt_release")
    copy_fixture(f"{release}/os-release", base / "usr/lib/os-release")
    if not (base / "etc/os-release").is_symlink():
        (base / "etc/os-release").symlink_to("../usr/lib/os-release")
    copy_fixture(f"{release}/banner", base / "etc/banner")


def personalize_apk(host: Host, base: Path) -> None:
    openwrt_release_files(host, base)
    copy_fixture("openwrt/apk", base / "usr/bin/apk", 0o755)
    # OpenWrt 25.x: /etc/apk/repositories.d/distfeeds.list, one index URL a line
    write(base / "etc/apk/repositories.d/distfeeds.list",
          "# sslbench test rig: the repositories, served on loopback by `rig.py up` (README.md).\n"
          f"{apk_repo_url(host, 'core')}\n{apk_repo_url(host, 'base')}\n")
    shutil.copyfile(build_dir("apk-repo") / "keys" / APK_KEY, base / "etc/apk/keys" / APK_KEY)


def apk_repo_up() -> None:
    serve_directory("apk-repo", build_dir("apk-repo") / "www", APK_REPO_PORT, "the apk repository")


def apk_repo_down() -> None:
    stop_process("apk-repo")


# ---------------------------------------------------------------------------------------------
# mounts and keys

def mounts() -> list[str]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        points.append(line.split()[4].replace("\\040", " "))
    return points


def umount_under(path: Path) -> None:
    prefix = str(path)
    for point in sorted((m for m in mounts() if m == prefix or m.startswith(prefix + "/")),
                        key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def host_dir(host: Host) -> Path:
    return CACHE / "run" / host.name


def host_root(host: Host) -> Path:
    return host_dir(host) / "root"


def ensure_keys() -> None:
    KEYS.mkdir(parents=True, exist_ok=True)
    KEYS.chmod(0o700)
    client = KEYS / "client_ed25519"
    if not client.exists():
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sslbench-rig", "-f", str(client)])
    write(KEYS / "authorized_keys", (KEYS / "client_ed25519.pub").read_text(), 0o600)
    for name in ("sudo-password", "vault-password"):  # debian1's login/sudo password; the vault's
        if not (KEYS / name).exists():
            write(KEYS / name, secrets.token_urlsafe(18) + "\n", 0o600)
    for host in HOSTS:
        d = KEYS / host.name
        d.mkdir(exist_ok=True)
        if host.server in ("openssh", "jump", "worker") and not (d / "ssh_host_ed25519_key").exists():
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", host.name,
                 "-f", str(d / "ssh_host_ed25519_key")])
        if host.server == "dropbear" and not (d / "dropbear_ed25519_host_key").exists():
            run(["dropbearkey", "-t", "ed25519", "-f", str(d / "dropbear_ed25519_host_key")])


def sudo_password() -> str:
    return (KEYS / "sudo-password").read_text().strip()


def host_public_key(host: Host) -> str:
    d = KEYS / host.name
    if host.server in ("openssh", "jump", "worker"):
        text = (d / "ssh_host_ed25519_key.pub").read_text()
    else:
        text = run(["dropbearkey", "-y", "-f", str(d / "dropbear_ed25519_host_key")]).stdout
    line = next(l for l in text.splitlines() if l.startswith("ssh-"))
    return " ".join(line.split()[:2])


# What a real Raspberry Pi OS login prints on stdout before any command runs (a board banner), and a
# terminal title set by .bashrc: an escape sequence without a newline, which glues onto the next output.
STARTUP_JUNK = ("\n# sslbench test rig: start-up output, as board images and .bashrc title settings print it\n"
                "printf 'Raspberry Pi OS (sslbench test rig): start-up banner\\n'\n"
                "printf '\\033]0;%s@%s: %s\\007' \"$USER\" raspbian1 \"$PWD\"\n")


def personalize(host: Host, base: Path) -> None:
    """Write the per-host files into the (unmounted) base: release texts, stand-ins, keys."""
    fam = host.family
    if fam == "raspbian":
        copy_fixture("raspbian/os-release", base / "etc/os-release")
        copy_fixture("raspbian/os-release", base / "usr/lib/os-release")
        bashrc = base / "root/.bashrc"
        text = bashrc.read_text() if bashrc.exists() else ""
        if STARTUP_JUNK not in text:
            write(bashrc, text + STARTUP_JUNK)
    elif fam == "armbian":
        copy_fixture("armbian/os-release", base / "etc/os-release")
        copy_fixture("armbian/armbian-release", base / "etc/armbian-release")
        # DNS must work inside, so apt can reach the mirror when provisioning installs openssl.
        write(base / "etc/resolv.conf", Path("/etc/resolv.conf").read_text())
        write(base / "etc/apt/sources.list", apt_sources("bookworm"))
    elif fam == "debian":
        write(base / "etc/resolv.conf", Path("/etc/resolv.conf").read_text())
        write(base / "etc/apt/sources.list", apt_sources("bookworm"))
        # sudo looks up this machine's host name (the chroot shares it)
        write(base / "etc/hosts", f"127.0.0.1 localhost {socket.gethostname()}\n")
        hashed = run(["openssl", "passwd", "-6", "-stdin"], input=sudo_password() + "\n").stdout.strip()
        shadow = [f"{SUDO_USER}:{hashed}:19000:0:99999:7:::" if line.startswith(f"{SUDO_USER}:") else line
                  for line in (base / "etc/shadow").read_text().splitlines()]
        write(base / "etc/shadow", "\n".join(shadow) + "\n", 0o640)
        home = base / "home" / SUDO_USER / ".ssh"
        write(home / "authorized_keys", (KEYS / "authorized_keys").read_text(), 0o600)
        os.chown(home / "authorized_keys", 1000, 1000)
    elif fam == "centos":
        copy_fixture("centos/redhat-release", base / "etc/redhat-release")
        copy_fixture("centos/redhat-release", base / "etc/centos-release")
        copy_fixture("centos/os-release", base / "etc/os-release")
        copy_fixture("centos/os-release", base / "usr/lib/os-release")
        copy_fixture("centos/yum", base / "usr/bin/yum", 0o755)
    elif fam == "openwrt" and host.release in OPENWRT_APK:
        personalize_apk(host, base)
    elif fam == "openwrt":
        openwrt_release_files(host, base)
        copy_fixture("openwrt/opkg", base / "bin/opkg", 0o755)
        feeds = f"http://{FEED_ADDRESS}:{FEED_PORT}"
        base_path, core_path = feed_paths(host.release)
        write(base / "etc/opkg/distfeeds.conf",
              "# sslbench test rig: the feeds, served on loopback by `rig.py up`.\n"
              f"src/gz openwrt_core {feeds}/{core_path}\n"
              f"src/gz openwrt_base {feeds}/{base_path}\n")
        write(base / "etc/opkg.conf", "dest root /\ndest ram /tmp\nlists_dir ext /var/opkg-lists\n"
              "option overlay_root /overlay\noption check_signature\n")
    elif fam == "ddwrt":
        copy_fixture("ddwrt/nvram", base / "usr/sbin/nvram", 0o755)
    if host.server == "dropbear" and not host.readonly:  # DD-WRT's keys live in RAM (mount_host)
        key = base / "etc/dropbear/dropbear_ed25519_host_key"
        key.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(KEYS / host.name / "dropbear_ed25519_host_key", key)
        key.chmod(0o600)
        if host.user == "root":
            write(base / "root/.ssh/authorized_keys", (KEYS / "authorized_keys").read_text(), 0o600)
            (base / "root/.ssh").chmod(0o700)


def mount_host(host: Host, base: Path) -> None:
    """Mount the host's root afresh: an overlay on its cached base (or a read-only bind), with this machine's
    /sys read-only (cpufreq, topology and thermal code runs against a real x86 topology)."""
    d, root = host_dir(host), host_root(host)
    umount_under(d)
    for sub in ("upper", "work"):
        shutil.rmtree(d / sub, ignore_errors=True)
    for sub in ("root", "upper", "work"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    for p in (CACHE, CACHE / "run", d, root):
        p.chmod(0o755)  # sshd's ChrootDirectory wants root-owned, not group/world-writable parents
    if host.readonly:
        run(["mount", "--bind", str(base), str(root)])
        run(["mount", "-o", "remount,bind,ro", str(root)])
    else:
        run(["mount", "-t", "overlay", "overlay", "-o",
             f"lowerdir={base},upperdir={d / 'upper'},workdir={d / 'work'}", str(root)])
    run(["mount", "-t", "proc", "proc", str(root / "proc")])
    run(["mount", "--bind", "/dev", str(root / "dev")])
    run(["mount", "--bind", "/dev/pts", str(root / "dev/pts")])
    run(["mount", "--bind", "/sys", str(root / "sys")])
    run(["mount", "-o", "remount,bind,ro", str(root / "sys")])
    if host.family in ("openwrt", "ddwrt"):
        run(["mount", "-t", "tmpfs", "-o", "mode=1777,size=64m", "tmpfs", str(root / "tmp")])
    if host.family == "openwrt":
        (root / "tmp/run").mkdir(parents=True, exist_ok=True)
    if host.family == "ddwrt":
        # What DD-WRT's boot writes into RAM: /var, root's home with the key from nvram, the host key, the banner.
        (root / "tmp/var/run").mkdir(parents=True)
        home = root / "tmp/root/.ssh"
        home.mkdir(parents=True)
        home.chmod(0o700)
        (root / "tmp/root").chmod(0o700)
        write(home / "authorized_keys", (KEYS / "authorized_keys").read_text(), 0o600)
        key = root / "tmp/etc/dropbear/dropbear_ed25519_host_key"
        key.parent.mkdir(parents=True)
        shutil.copyfile(KEYS / host.name / "dropbear_ed25519_host_key", key)
        key.chmod(0o600)
        copy_fixture("ddwrt/loginprompt", root / "tmp/loginprompt")
    if host.name in AFTER_MOUNT:
        AFTER_MOUNT[host.name](host, root)


def requiretty(host: Host, root: Path) -> None:
    """tty1: sudo only on a terminal, as CentOS 7's /etc/sudoers says (in the host's overlay, not its base)."""
    write(root / "etc/sudoers.d/sslbench-requiretty", "# sslbench test rig: as CentOS 7's sudoers\nDefaults requiretty\n",
          0o440)


def hostile(host: Host, root: Path) -> None:
    """hostile1: its os-release and its /proc/cpuinfo (this machine's, the model names hostile) over the real
    ones; its host name is set where its sshd starts (start_host)."""
    for path in ("etc/os-release", "usr/lib/os-release"):
        (root / path).unlink(missing_ok=True)
        copy_fixture("hostile/os-release", root / path)
    model = (FIXTURES / "hostile/cpuinfo-model").read_text().rstrip("\n")
    cpuinfo = re.sub(r"(?m)^(model name\s*:).*$", lambda m: f"{m[1]} {model}", Path("/proc/cpuinfo").read_text())
    fake = host_dir(host) / "cpuinfo"
    write(fake, cpuinfo)
    run(["mount", "--bind", str(fake), str(root / "proc/cpuinfo")])


AFTER_MOUNT = {"tty1": requiretty, "hostile1": hostile}


# ---------------------------------------------------------------------------------------------
# processes

def pid_file(name: str) -> Path:
    return RUN / f"{name}.pid"


def running_pid(name: str) -> int | None:
    """The pid in name's pid file if that process is still the one the rig started."""
    try:
        pid = int(pid_file(name).read_text().split()[0])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (OSError, ValueError, IndexError):
        return None
    marker = pid_file(name).read_text().split(maxsplit=1)[1].strip()
    return pid if marker in cmdline else None


def spawn(name: str, cmd: list[str], marker: str) -> subprocess.Popen:
    RUN.mkdir(parents=True, exist_ok=True)
    logf = open(RUN / f"{name}.log", "a")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                            start_new_session=True)
    pid_file(name).write_text(f"{proc.pid} {marker}\n")
    return proc


def stop_process(name: str) -> None:
    pid = running_pid(name)
    if pid:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            if not Path(f"/proc/{pid}").exists() or running_pid(name) is None:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
    pid_file(name).unlink(missing_ok=True)


def kill_sessions_in(root: Path) -> None:
    """End what the host's SSH sessions left running inside its root (e.g. a benchmark)."""
    prefix = str(root)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            r = os.readlink(proc / "root")
        except OSError:
            continue
        if r == prefix or r.startswith(prefix + "/"):
            try:
                os.kill(int(proc.name), signal.SIGKILL)
            except OSError:
                pass


def key_login(host: Host) -> str:
    """The sshd_config lines every rig sshd shares: its own host key, and root logs in with the rig's key only."""
    return f"""HostKey {KEYS / host.name / 'ssh_host_ed25519_key'}
PidFile none
AuthorizedKeysFile {KEYS / 'authorized_keys'}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
"""


def sshd_config(host: Host) -> Path:
    conf = host_dir(host) / "sshd_config"
    write(conf, f"""# sslbench test rig: {host.name} ({host.family}), this machine's sshd chrooted into its root.
ListenAddress {host.address}:{host.port}
{key_login(host)}ChrootDirectory {host_root(host)}
PrintMotd no
PrintLastLog no
Subsystem sftp internal-sftp
""")
    return conf


def worker_config(host: Host) -> Path:
    conf = host_dir(host) / "sshd_config"
    write(conf, f"""# sslbench test rig: {host.name}, a site worker: this machine's sshd, not chrooted.
ListenAddress {host.address}:{host.port}
{key_login(host)}PrintMotd no
PrintLastLog no
""")
    return conf


def jump_config(host: Host) -> Path:
    """jump1: a bastion that only forwards to the hosts behind it (no shell), run per connection inside the
    hidden network namespace by socat listening here."""
    targets = " ".join(f"{h.address}:{h.port}" for h in HOSTS if h.behind == host.name)
    conf = host_dir(host) / "sshd_config"
    write(conf, f"""# sslbench test rig: {host.name}, a jump host; sshd -i in {HIDDEN_NETNS}, one per connection.
{key_login(host)}AllowTcpForwarding yes
PermitOpen {targets}
ForceCommand /bin/false
PermitTTY no
X11Forwarding no
""")
    return conf


def in_netns(host: Host, cmd: list[str]) -> list[str]:
    return ["ip", "netns", "exec", HIDDEN_NETNS, *cmd] if host.behind else cmd


def ensure_netns() -> None:
    if HIDDEN_NETNS not in run(["ip", "netns", "list"]).stdout.split():
        run(["ip", "netns", "add", HIDDEN_NETNS])
    run(["ip", "netns", "exec", HIDDEN_NETNS, "ip", "link", "set", "lo", "up"])


def start_host(host: Host) -> None:
    if running_pid(host.name):
        return
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    if host.server == "openssh":
        conf = sshd_config(host)
        proc = spawn(host.name, [*own_hostname(host), "/usr/sbin/sshd", "-D", "-e", "-f", str(conf)], str(conf))
    elif host.server == "worker":
        conf = worker_config(host)
        proc = spawn(host.name, ["/usr/sbin/sshd", "-D", "-e", "-f", str(conf)], str(conf))
    elif host.server == "jump":
        conf = jump_config(host)
        sshd = f"ip netns exec {HIDDEN_NETNS} /usr/sbin/sshd -i -e -f {conf}"
        proc = spawn(host.name, ["socat", f"TCP-LISTEN:{host.port},bind={host.address},reuseaddr,fork",
                                 f"EXEC:{sshd}"], f"TCP-LISTEN:{host.port},bind={host.address}")
    else:
        key = "/tmp/etc/dropbear/dropbear_ed25519_host_key" if host.readonly else "/etc/dropbear/dropbear_ed25519_host_key"
        cmd = ["chroot", str(host_root(host)), "/usr/sbin/dropbear", "-F", "-E", "-r", key,
               "-p", f"{host.address}:{host.port}", "-P", "/var/run/dropbear.pid"]
        # password logins only where the login is a user with a password (debian1); no root password login there
        cmd += ["-w"] if host.user != "root" else ["-s"]
        if host.family == "ddwrt":
            cmd += ["-b", "/tmp/loginprompt"]
        proc = spawn(host.name, in_netns(host, cmd), f"-p {host.address}:{host.port}")
    wait_for(host, proc)


def own_hostname(host: Host) -> list[str]:
    """The words that start a host's server in a UTS namespace of its own with its own host name (none for a
    host with this machine's): unshare execs, so the server keeps the pid that spawn() recorded."""
    if not host.hostname:
        return []
    set_name = "import os, socket, sys; socket.sethostname(sys.argv[1]); os.execv(sys.argv[2], sys.argv[2:])"
    return ["unshare", "--uts", sys.executable, "-c", set_name, host.hostname]


def stop_host(host: Host) -> None:
    stop_process(host.name)


def answers(host: Host) -> bool:
    """The host's SSH server accepts a connection (inside the hidden namespace for the hosts behind jump1)."""
    if not host.behind:
        return port_answers(host.address, host.port)
    probe = f"exec 3<>/dev/tcp/{host.address}/{host.port}"
    return subprocess.run(in_netns(host, ["bash", "-c", probe]), capture_output=True, timeout=5).returncode == 0


def wait_for(host: Host, proc: subprocess.Popen, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if answers(host):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    logf = RUN / f"{host.name}.log"
    logtail = logf.read_text(errors="replace")[-2000:] if logf.exists() else ""
    raise RuntimeError(f"{host.name} did not start listening on {host.address}:{host.port}:\n{logtail}")


def serve_directory(name: str, directory: Path, port: int, what: str) -> None:
    """A package repository the routers download from: plain HTTP on the feed's loopback address."""
    if running_pid(name):
        return
    proc = spawn(name, [sys.executable, "-m", "http.server", "--bind", FEED_ADDRESS, str(port),
                        "--directory", str(directory)], f"http.server --bind {FEED_ADDRESS} {port}")
    deadline = time.monotonic() + 15
    while not port_answers(FEED_ADDRESS, port):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start on {FEED_ADDRESS}:{port}")
        time.sleep(0.1)


def feed_up() -> None:
    serve_directory("feed", build_dir("feed"), FEED_PORT, "the feed")


def feed_down() -> None:
    stop_process("feed")


# ---------------------------------------------------------------------------------------------
# what the tests and sslbench read: inventory, known_hosts, ssh_config

TRANSFER = {  # dropbear has no sftp (and these boxes no scp): Ansible pipes files through dd
    "dropbear": {"ansible_ssh_transfer_method": "piped"},
}
GROUP_VARS = RIG_DIR / "group_vars"  # next to inventory.yml, so Ansible loads it (git-ignored)
VAULT_PASSWORD_FILE = STATE / "vault-pass"


def write_client_files() -> None:
    STATE.mkdir(exist_ok=True)
    known = STATE / "known_hosts"
    write(known, "".join(f"[{h.address}]:{h.port} {host_public_key(h)}\n" for h in HOSTS))
    key = KEYS / "client_ed25519"
    ssh_config = STATE / "ssh_config"
    write(ssh_config, "".join(
        f"Host {h.name}\n  HostName {h.address}\n  Port {h.port}\n  User {h.user}\n"
        f"  IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {known}\n"
        f"  StrictHostKeyChecking yes\n  BatchMode yes\n" + (f"  ProxyJump {h.behind}\n" if h.behind else "") + "\n"
        for h in HOSTS))
    lines = ["# Written by tests/rig/rig.py up: the loopback test fleet (see tests/rig/README.md).",
             "# Regenerated on every `up`; do not edit.", "all:", "  children:"]
    for fam in FAMILIES:
        lines += [f"    {fam}:", "      hosts:"]
        for h in (h for h in HOSTS if h.family == fam and h.in_inventory):
            ssh_args = f"-o UserKnownHostsFile={known} -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes"
            if h.behind:  # the hop reads its own options from the config file (command-line -o is not passed on)
                ssh_args = f"-F {ssh_config} -o ProxyJump={h.behind} {ssh_args}"
            hv = {"ansible_host": h.address, "ansible_port": h.port, "ansible_user": h.user,
                  "ansible_ssh_private_key_file": str(key), "ansible_ssh_common_args": ssh_args,
                  **TRANSFER.get(h.server, {})}
            if h.user != "root":
                hv["ansible_become"] = True  # its password comes from the vaulted group_vars/<family>/vault.yml
            lines.append(f"        {h.name}:")
            lines += [f"          {k}: {json.dumps(v)}" for k, v in hv.items()]
    write(INVENTORY, "\n".join(lines) + "\n")
    write_vault()
    # When the hosts were last reset: tests tell "provisioned since" from "built with".
    write(STATE / "fleet.json", json.dumps({"up_at": time.time(), "hosts": [h.__dict__ for h in HOSTS]}, indent=1))


def write_vault() -> None:
    """The sudo password of the hosts whose login is not root, in a vaulted group_vars file, as users keep it."""
    write(VAULT_PASSWORD_FILE, (KEYS / "vault-password").read_text(), 0o600)
    shutil.rmtree(GROUP_VARS, ignore_errors=True)
    for fam in sorted({h.family for h in HOSTS if h.user != "root"}):
        vault = GROUP_VARS / fam / "vault.yml"
        write(vault, f"ansible_become_password: {json.dumps(sudo_password())}\n", 0o600)
        run([str(Path(sys.executable).parent / "ansible-vault"), "encrypt", "--vault-password-file",
             str(VAULT_PASSWORD_FILE), str(vault)])


# ---------------------------------------------------------------------------------------------
# commands

def cmd_up(_args) -> int:
    if os.geteuid() != 0:
        print("rig.py up needs root (debootstrap, chroot, mounts).", file=sys.stderr)
        return 2
    start = time.monotonic()
    for d in (CACHE, LOGS, RUN):
        d.mkdir(parents=True, exist_ok=True)
    ensure_packages()
    ensure_binfmt()
    builds = build_all()  # while a running fleet (if any) goes on serving
    cmd_down(None, quiet=True)  # every `up` starts from the pristine builds
    drop_stale_builds(builds)
    ensure_keys()
    ensure_netns()
    feed_up()
    apk_repo_up()
    for host in HOSTS:
        if host.base:
            personalize(host, builds[host.base])
            mount_host(host, builds[host.base])
    for host in HOSTS:
        start_host(host)
    write_client_files()
    log(f"fleet up in {time.monotonic() - start:.0f} s; inventory: {INVENTORY}")
    return cmd_status(None)


def cmd_build(_args) -> int:
    if os.geteuid() != 0:
        print("rig.py build needs root (debootstrap, chroot).", file=sys.stderr)
        return 2
    for d in (CACHE, LOGS):
        d.mkdir(parents=True, exist_ok=True)
    ensure_packages()
    ensure_binfmt()
    build_all()
    return 0


def cmd_down(_args, quiet: bool = False) -> int:
    for host in HOSTS:
        stop_host(host)
        if host.base:
            kill_sessions_in(host_root(host))
    feed_down()
    apk_repo_down()
    umount_under(CACHE / "run")
    if HIDDEN_NETNS in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split():
        subprocess.run(["ip", "netns", "delete", HIDDEN_NETNS], capture_output=True)
    if not quiet:
        log("fleet down")
    return 0


def cmd_status(_args) -> int:
    ok = True
    for h in HOSTS:
        pid = running_pid(h.name)
        up = answers(h)
        ok &= up
        state = "up" if up else ("starting?" if pid else "down")
        where = f"behind {h.behind}" if h.behind else h.server
        print(f"{h.name:10} {h.family:9} {h.address}:{h.port:<5} {where:14} {state}")
    feed = "up" if port_answers(FEED_ADDRESS, FEED_PORT) else "down"
    print(f"{'feed':10} {'opkg':9} {FEED_ADDRESS}:{FEED_PORT:<5} {'http':14} {feed}")
    apk = "up" if port_answers(FEED_ADDRESS, APK_REPO_PORT) else "down"
    print(f"{'apk-repo':10} {'apk':9} {FEED_ADDRESS}:{APK_REPO_PORT:<5} {'http':14} {apk}")
    print(f"inventory: {INVENTORY if INVENTORY.exists() else '(none: run rig.py up)'}")
    return 0 if ok else 3


def kill_descendants(pid: int) -> None:
    """Every process below pid (a site worker's sessions: sshd children, ansible-runner, ssh)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    todo, found = [pid], []
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    for kid in found:
        try:
            os.kill(kid, signal.SIGKILL)
        except OSError:
            pass


def cmd_stop(args) -> int:
    host = HOSTS_BY_NAME[args.host]
    if args.sessions and host.server == "worker" and running_pid(host.name):  # the machine is gone, sessions too
        kill_descendants(running_pid(host.name))
    stop_host(host)
    if args.sessions and host.base:  # the box is gone, not only its SSH server
        kill_sessions_in(host_root(host))
    return 0


def cmd_start(args) -> int:
    start_host(HOSTS_BY_NAME[args.host])
    return 0


@contextlib.contextmanager
def exclusive():
    """One rig.py at a time changes the fleet (several engineers' `make test` may overlap)."""
    RUN.mkdir(parents=True, exist_ok=True)
    with open(RUN / "rig.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("another rig.py is changing the fleet; waiting for it")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("up").set_defaults(func=cmd_up)
    sub.add_parser("build").set_defaults(func=cmd_build)
    sub.add_parser("down").set_defaults(func=cmd_down)
    sub.add_parser("status").set_defaults(func=cmd_status)
    for name, func in (("stop", cmd_stop), ("start", cmd_start)):
        p = sub.add_parser(name)
        p.add_argument("host", choices=sorted(HOSTS_BY_NAME))
        p.set_defaults(func=func)
        if name == "stop":
            p.add_argument("--sessions", action="store_true", help="also end the host's open SSH sessions")
    sub.add_parser("feed-down").set_defaults(func=lambda a: feed_down() or 0)
    sub.add_parser("feed-up").set_defaults(func=lambda a: feed_up() or 0)
    sub.add_parser("apk-repo-down").set_defaults(func=lambda a: apk_repo_down() or 0)
    sub.add_parser("apk-repo-up").set_defaults(func=lambda a: apk_repo_up() or 0)
    return dispatch(parser.parse_args(argv), "rig.py")


def dispatch(args: argparse.Namespace, tool: str) -> int:
    """Run a subcommand of rig.py or scale.py: under the rig's lock unless it only reads (`status`); a
    RuntimeError is the one-line message of a failed step."""
    try:
        if args.command == "status":
            return args.func(args)
        with exclusive():
            return args.func(args)
    except RuntimeError as e:
        print(f"{tool} {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
