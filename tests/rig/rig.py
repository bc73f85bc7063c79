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

RIG_DIR = Path(__file__).resolve().parent
FIXTURES = RIG_DIR / "fixtures"
STATE = RIG_DIR / "state"  # git-ignored: known_hosts, ssh_config, written by `up`
INVENTORY = RIG_DIR / "inventory.yml"
CACHE = Path(os.environ.get("SSLBENCH_RIG_CACHE", "/srv/sslbench-rig"))
RUN = Path("/run/sslbench-rig")  # pid files and server logs of the running fleet
KEYS = CACHE / "keys"
LOGS = CACHE / "logs"

FEED_ADDRESS, FEED_PORT = "127.0.0.20", 2280
OPENWRT_RELEASE, OPENWRT_ARCH, OPENWRT_TARGET = "23.05.5", "mipsel_24kc", "ramips/mt7621"
FEED_BASE_PATH = f"releases/{OPENWRT_RELEASE}/packages/{OPENWRT_ARCH}/base"
FEED_CORE_PATH = f"releases/{OPENWRT_RELEASE}/targets/{OPENWRT_TARGET}/packages"
CENTOS_REPO = "/var/cache/sslbench-repo"  # inside the centos host
QEMU_ARCHES = ("arm", "aarch64", "mipsel")


@dataclass(frozen=True)
class Host:
    name: str
    family: str
    address: str
    port: int
    server: str  # "openssh" (this machine's sshd, ChrootDirectory) or "dropbear" (chrooted)
    base: str  # the cached root file system it runs on
    readonly: bool = False  # read-only root with a tmpfs /tmp (DD-WRT)


HOSTS = [
    Host("raspbian1", "raspbian", "127.0.0.21", 2221, "openssh", "raspbian"),
    Host("armbian1", "armbian", "127.0.0.22", 2222, "openssh", "armbian"),
    Host("openwrt1", "openwrt", "127.0.0.23", 2223, "dropbear", "openwrt"),
    Host("ddwrt1", "ddwrt", "127.0.0.24", 2224, "dropbear", "ddwrt", readonly=True),
    Host("centos1", "centos", "127.0.0.25", 2225, "openssh", "centos"),
]
HOSTS_BY_NAME = {h.name: h for h in HOSTS}

# What each cached build is made of. Bump "version" when a builder changes: the digest of the
# recipe names the cache directory, so a changed recipe is rebuilt and the old build removed.
RECIPES: dict[str, dict] = {
    "raspbian": {"version": 2, "userland": ["armhf", "bullseye", "openssl,python3-minimal"]},
    "armbian": {"version": 2, "userland": ["arm64", "bookworm", ""]},
    # libssl3 is in the base already (as openssl-libs is on any CentOS 7): the repo has `openssl`.
    "centos": {"version": 3, "userland": ["amd64", "bookworm", "rpm"], "rpms": ["openssl"]},
    "openwrt": {"version": 1, "debs": ["bookworm", "mipsel", "libc6", "libgcc-s1"]},
    "ddwrt": {"version": 1, "debs": ["bullseye", "armhf", "openssl", "libssl1.1", "libc6", "libgcc-s1"]},
    "feed": {"version": 1, "debs": ["bookworm", "mipsel", "openssl", "libssl3", "libatomic1"]},
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
    blob = json.dumps({"name": name, "recipe": RECIPES[name], "mirror": main}, sort_keys=True)
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


def busybox_root(dest: Path, shell: str) -> None:
    """A root of static BusyBox (Debian's busybox-static) plus Debian's dropbear and its libraries."""
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "usr/lib", "lib", "etc/dropbear", "root", "tmp",
              "proc", "dev", "sys"):
        (dest / d).mkdir(parents=True, exist_ok=True)
    (dest / "tmp").chmod(0o1777)
    shutil.copy2("/bin/busybox", dest / "bin/busybox")
    for applet in run(["/bin/busybox", "--list-full"]).stdout.split():
        link = dest / applet
        if applet != "bin/busybox" and not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to("/bin/busybox")
    shutil.copy2("/usr/sbin/dropbear", dest / "usr/sbin/dropbear")
    ldd = run(["ldd", "/usr/sbin/dropbear"]).stdout
    for line in ldd.splitlines():
        parts = line.split()
        lib = parts[2] if "=>" in parts and len(parts) > 2 else parts[0]
        if lib.startswith("/"):
            target = dest / lib.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.realpath(lib), target)
    write(dest / "etc/passwd", f"root:x:0:0:root:/root:{shell}\n"
          "daemon:*:1:1:daemon:/var:/bin/false\nnobody:*:65534:65534:nobody:/var:/bin/false\n")
    write(dest / "etc/shadow", "root:*:19000:0:99999:7:::\ndaemon:*:0:0:99999:7:::\n"
          "nobody:*:0:0:99999:7:::\n", 0o600)
    write(dest / "etc/group", "root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\n")
    write(dest / "etc/shells", f"{shell}\n")
    write(dest / "etc/hosts", "127.0.0.1 localhost\n")


def build_raspbian(dest: Path) -> None:
    bootstrap_userland(dest, "raspbian")


def build_armbian(dest: Path) -> None:
    bootstrap_userland(dest, "armbian")
    if (dest / "usr/bin/openssl").exists():
        raise RuntimeError("armbian must start without openssl, but debootstrap installed it")


def build_centos(dest: Path) -> None:
    bootstrap_userland(dest, "centos")
    # The package-manager path is yum (stand-in) over the real rpm; openssl is not installed yet.
    repo = dest / CENTOS_REPO.lstrip("/")
    repo.mkdir(parents=True)
    debs = fetch_debs("bookworm", "amd64", RECIPES["centos"]["rpms"])
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        for name, deb in debs.items():
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


def build_openwrt(dest: Path) -> None:
    busybox_root(dest, "/bin/ash")
    # OpenWrt keeps /var in RAM: /var -> /tmp.
    (dest / "var").symlink_to("tmp")
    # The C library of the target architecture is part of the firmware (here glibc, from Debian).
    debs = fetch_debs("bookworm", "mipsel", ["libc6", "libgcc-s1"])
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        extract_debs(list(debs.values()), Path(tmp))
        shutil.copytree(Path(tmp) / "lib", dest / "lib", symlinks=True, dirs_exist_ok=True)
    status = []
    for name, version in (("base-files", "1565-r24106-10cc5fcd00"), ("busybox", "1.35.0-4"),
                          ("dropbear", "2022.83-1"), ("libc", "2.36-9"), ("libgcc1", "12.2.0-14"),
                          ("opkg", "2022-02-24-d038e5b6-2")):
        status.append(f"Package: {name}\nVersion: {version}\nStatus: install user installed\n"
                      f"Architecture: {OPENWRT_ARCH}\nInstalled-Time: 1727000000\n")
    write(dest / "usr/lib/opkg/status", "\n".join(status) + "\n")
    (dest / "usr/lib/opkg/info").mkdir(parents=True, exist_ok=True)


def build_ddwrt(dest: Path) -> None:
    busybox_root(dest, "/bin/sh")
    # DD-WRT keeps /var and root's home in RAM.
    (dest / "var").symlink_to("tmp/var")
    write(dest / "etc/passwd", "root:x:0:0:Root User,,,:/tmp/root:/bin/sh\n"
          "nobody:*:65534:65534:nobody:/var:/bin/false\n")
    # "In the firmware": OpenSSL 1.1.1 for armv7 from Debian bullseye (1.0.2: see README.md).
    suite, arch, *names = RECIPES["ddwrt"]["debs"]
    debs = fetch_debs(suite, arch, names)
    extract_debs(list(debs.values()), dest)
    for junk in ("usr/share/doc", "usr/share/man", "usr/share/lintian", "usr/share/locale", "usr/lib/ssl/misc"):
        shutil.rmtree(dest / junk, ignore_errors=True)
    out = run(["chroot", str(dest), "/usr/bin/openssl", "version"]).stdout
    if not out.startswith("OpenSSL 1.1.1"):
        raise RuntimeError(f"ddwrt openssl: unexpected version {out!r}")


def build_feed(dest: Path) -> None:
    """The OpenWrt feed: openssl-util and libopenssl3 .ipk around Debian's mipsel binaries."""
    suite, arch, *names = RECIPES["feed"]["debs"]
    debs = fetch_debs(suite, arch, names)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        x = Path(tmp)
        extract_debs(list(debs.values()), x)
        version = debs["openssl"].name.split("_")[1].split("-")[0] + "-1"
        libdir = x / "usr/lib/mipsel-linux-gnu"
        atomic = sorted(libdir.glob("libatomic.so.1*"))[-1]
        base = [
            feedlib.Ipk("libopenssl3", version, OPENWRT_ARCH,
                        "The OpenSSL Project is a collaborative effort to develop a robust, "
                        "commercial-grade, full-featured, and Open Source toolkit (libraries from Debian).",
                        depends=["libc", "libatomic1"],
                        files={"/usr/lib/libcrypto.so.3": libdir / "libcrypto.so.3",
                               "/usr/lib/libssl.so.3": libdir / "libssl.so.3"}),
            feedlib.Ipk("openssl-util", version, OPENWRT_ARCH,
                        "OpenSSL command line tool (Debian's mipsel build).",
                        depends=["libc", "libopenssl3"], section="utils",
                        files={"/usr/bin/openssl": x / "usr/bin/openssl"}),
        ]
        core = [feedlib.Ipk("libatomic1", "12.2.0-4", OPENWRT_ARCH, "GCC support library (libatomic).",
                            depends=["libc"], license="GPL-3.0-with-GCC-exception",
                            files={"/lib/libatomic.so.1": atomic})]
        feedlib.write_feed(base, dest / FEED_BASE_PATH)
        feedlib.write_feed(core, dest / FEED_CORE_PATH)


BUILDERS = {"raspbian": build_raspbian, "armbian": build_armbian, "centos": build_centos,
            "openwrt": build_openwrt, "ddwrt": build_ddwrt, "feed": build_feed}


def ensure_built(name: str) -> Path:
    """Build `name` unless the cache already has this recipe's build; drop other builds of it."""
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
    BUILDERS[name](tmp)
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
    """Remove builds of older recipes (only while the fleet is down: a running host may use one)."""
    for name, final in current.items():
        for old in final.parent.glob(f"{name}-*"):
            if old != final:
                shutil.rmtree(old, ignore_errors=True)


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
    for host in HOSTS:
        d = KEYS / host.name
        d.mkdir(exist_ok=True)
        if host.server == "openssh" and not (d / "ssh_host_ed25519_key").exists():
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", host.name,
                 "-f", str(d / "ssh_host_ed25519_key")])
        if host.server == "dropbear" and not (d / "dropbear_ed25519_host_key").exists():
            run(["dropbearkey", "-t", "ed25519", "-f", str(d / "dropbear_ed25519_host_key")])


def host_public_key(host: Host) -> str:
    d = KEYS / host.name
    if host.server == "openssh":
        text = (d / "ssh_host_ed25519_key.pub").read_text()
    else:
        text = run(["dropbearkey", "-y", "-f", str(d / "dropbear_ed25519_host_key")]).stdout
    line = next(l for l in text.splitlines() if l.startswith("ssh-"))
    return " ".join(line.split()[:2])


def personalize(host: Host, base: Path) -> None:
    """Write the per-host files into the (unmounted) base: release texts, stand-ins, keys."""
    fam = host.family
    if fam == "raspbian":
        copy_fixture("raspbian/os-release", base / "etc/os-release")
        copy_fixture("raspbian/os-release", base / "usr/lib/os-release")
    elif fam == "armbian":
        copy_fixture("armbian/os-release", base / "etc/os-release")
        copy_fixture("armbian/armbian-release", base / "etc/armbian-release")
        # DNS must work inside, so apt can reach the mirror when provisioning installs openssl.
        write(base / "etc/resolv.conf", Path("/etc/resolv.conf").read_text())
        write(base / "etc/apt/sources.list", apt_sources("bookworm"))
    elif fam == "centos":
        copy_fixture("centos/redhat-release", base / "etc/redhat-release")
        copy_fixture("centos/redhat-release", base / "etc/centos-release")
        copy_fixture("centos/os-release", base / "etc/os-release")
        copy_fixture("centos/os-release", base / "usr/lib/os-release")
        copy_fixture("centos/yum", base / "usr/bin/yum", 0o755)
    elif fam == "openwrt":
        copy_fixture("openwrt/openwrt_release", base / "etc/openwrt_release")
        copy_fixture("openwrt/os-release", base / "usr/lib/os-release")
        if not (base / "etc/os-release").is_symlink():
            (base / "etc/os-release").symlink_to("../usr/lib/os-release")
        copy_fixture("openwrt/banner", base / "etc/banner")
        copy_fixture("openwrt/opkg", base / "bin/opkg", 0o755)
        feeds = f"http://{FEED_ADDRESS}:{FEED_PORT}"
        write(base / "etc/opkg/distfeeds.conf",
              "# sslbench test rig: the feeds, served on loopback by `rig.py up`.\n"
              f"src/gz openwrt_core {feeds}/{FEED_CORE_PATH}\n"
              f"src/gz openwrt_base {feeds}/{FEED_BASE_PATH}\n")
        write(base / "etc/opkg.conf", "dest root /\ndest ram /tmp\nlists_dir ext /var/opkg-lists\n"
              "option overlay_root /overlay\noption check_signature\n")
    elif fam == "ddwrt":
        copy_fixture("ddwrt/nvram", base / "usr/sbin/nvram", 0o755)
    if host.server == "dropbear":
        key = base / "etc/dropbear/dropbear_ed25519_host_key"
        key.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(KEYS / host.name / "dropbear_ed25519_host_key", key)
        key.chmod(0o600)
        if not host.readonly:
            write(base / "root/.ssh/authorized_keys", (KEYS / "authorized_keys").read_text(), 0o600)
            (base / "root/.ssh").chmod(0o700)


def mount_host(host: Host, base: Path) -> None:
    """Mount the host's root afresh: an overlay on its cached base (or a read-only bind)."""
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
    if host.family in ("openwrt", "ddwrt"):
        run(["mount", "-t", "tmpfs", "-o", "mode=1777,size=64m", "tmpfs", str(root / "tmp")])
    if host.family == "openwrt":
        (root / "tmp/run").mkdir(parents=True, exist_ok=True)
    if host.family == "ddwrt":
        # What DD-WRT's boot writes into RAM: /var, root's home with the key from nvram, the banner.
        (root / "tmp/var/run").mkdir(parents=True)
        home = root / "tmp/root/.ssh"
        home.mkdir(parents=True)
        home.chmod(0o700)
        (root / "tmp/root").chmod(0o700)
        write(home / "authorized_keys", (KEYS / "authorized_keys").read_text(), 0o600)
        copy_fixture("ddwrt/loginprompt", root / "tmp/loginprompt")


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


def sshd_config(host: Host) -> Path:
    conf = host_dir(host) / "sshd_config"
    write(conf, f"""# sslbench test rig: {host.name} ({host.family}), this machine's sshd chrooted into its root.
ListenAddress {host.address}:{host.port}
HostKey {KEYS / host.name / 'ssh_host_ed25519_key'}
PidFile none
AuthorizedKeysFile {KEYS / 'authorized_keys'}
ChrootDirectory {host_root(host)}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
Subsystem sftp internal-sftp
""")
    return conf


def start_host(host: Host) -> None:
    if running_pid(host.name):
        return
    if host.server == "openssh":
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        conf = sshd_config(host)
        proc = spawn(host.name, ["/usr/sbin/sshd", "-D", "-e", "-f", str(conf)], str(conf))
    else:
        cmd = ["chroot", str(host_root(host)), "/usr/sbin/dropbear", "-F", "-E", "-s",
               "-r", "/etc/dropbear/dropbear_ed25519_host_key",
               "-p", f"{host.address}:{host.port}", "-P", "/var/run/dropbear.pid"]
        if host.family == "ddwrt":
            cmd += ["-b", "/tmp/loginprompt"]
        proc = spawn(host.name, cmd, f"-p {host.address}:{host.port}")
    wait_for(host.name, host.address, host.port, proc)


def stop_host(host: Host) -> None:
    stop_process(host.name)


def wait_for(name: str, address: str, port: int, proc: subprocess.Popen, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if port_answers(address, port):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    logtail = (RUN / f"{name}.log").read_text(errors="replace")[-2000:] if (RUN / f"{name}.log").exists() else ""
    raise RuntimeError(f"{name} did not start listening on {address}:{port}:\n{logtail}")


def feed_up() -> None:
    if running_pid("feed"):
        return
    feed = build_dir("feed")
    proc = spawn("feed", [sys.executable, "-m", "http.server", "--bind", FEED_ADDRESS, str(FEED_PORT),
                          "--directory", str(feed)], f"http.server --bind {FEED_ADDRESS} {FEED_PORT}")
    wait_for("feed", FEED_ADDRESS, FEED_PORT, proc)


def feed_down() -> None:
    stop_process("feed")


# ---------------------------------------------------------------------------------------------
# what the tests and sslbench read: inventory, known_hosts, ssh_config

TRANSFER = {  # dropbear has no sftp (and these boxes no scp): Ansible pipes files through dd
    "dropbear": {"ansible_ssh_transfer_method": "piped"},
}


def write_client_files() -> None:
    STATE.mkdir(exist_ok=True)
    known = STATE / "known_hosts"
    write(known, "".join(f"[{h.address}]:{h.port} {host_public_key(h)}\n" for h in HOSTS))
    key = KEYS / "client_ed25519"
    ssh_config = "".join(
        f"Host {h.name}\n  HostName {h.address}\n  Port {h.port}\n  User root\n"
        f"  IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {known}\n"
        f"  StrictHostKeyChecking yes\n  BatchMode yes\n\n" for h in HOSTS)
    write(STATE / "ssh_config", ssh_config)
    lines = ["# Written by tests/rig/rig.py up: the loopback test fleet (see tests/rig/README.md).",
             "# Regenerated on every `up`; do not edit.", "all:", "  children:"]
    for fam in ("raspbian", "armbian", "openwrt", "ddwrt", "centos"):
        lines += [f"    {fam}:", "      hosts:"]
        for h in (h for h in HOSTS if h.family == fam):
            hv = {"ansible_host": h.address, "ansible_port": h.port, "ansible_user": "root",
                  "ansible_ssh_private_key_file": str(key),
                  "ansible_ssh_common_args": f"-o UserKnownHostsFile={known} -o StrictHostKeyChecking=yes"
                                             " -o IdentitiesOnly=yes",
                  **TRANSFER.get(h.server, {})}
            lines.append(f"        {h.name}:")
            lines += [f"          {k}: {json.dumps(v)}" for k, v in hv.items()]
    write(INVENTORY, "\n".join(lines) + "\n")
    # When the hosts were last reset: tests tell "provisioned since" from "built with".
    write(STATE / "fleet.json", json.dumps({"up_at": time.time(), "hosts": [h.__dict__ for h in HOSTS]}, indent=1))


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
    feed_up()
    for host in HOSTS:
        personalize(host, builds[host.base])
        mount_host(host, builds[host.base])
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
        kill_sessions_in(host_root(host))
    feed_down()
    umount_under(CACHE / "run")
    if not quiet:
        log("fleet down")
    return 0


def cmd_status(_args) -> int:
    ok = True
    for h in HOSTS:
        pid = running_pid(h.name)
        answers = port_answers(h.address, h.port)
        ok &= answers
        state = "up" if answers else ("starting?" if pid else "down")
        print(f"{h.name:10} {h.family:9} {h.address}:{h.port:<5} {h.server:9} {state}")
    feed = "up" if port_answers(FEED_ADDRESS, FEED_PORT) else "down"
    print(f"{'feed':10} {'opkg':9} {FEED_ADDRESS}:{FEED_PORT:<5} {'http':9} {feed}")
    print(f"inventory: {INVENTORY if INVENTORY.exists() else '(none: run rig.py up)'}")
    return 0 if ok else 3


def cmd_stop(args) -> int:
    host = HOSTS_BY_NAME[args.host]
    stop_host(host)
    if args.sessions:  # the box is gone, not only its SSH server
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
    args = parser.parse_args(argv)
    try:
        if args.command == "status":
            return args.func(args)
        with exclusive():
            return args.func(args)
    except RuntimeError as e:
        print(f"rig.py {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
