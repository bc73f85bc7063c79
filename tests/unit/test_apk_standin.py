"""The rig's apk stand-in (tests/rig/fixtures/openwrt/apk) under dash, bash and BusyBox ash, on a root of its own
(`--root`, as apk's), against a repository built by tests/rig/apkrepo.py and served on loopback: apk-tools 3's words
and exit codes for update, add, an unknown package, an unreachable repository and an untrusted index. The rig's
integration tests (tests/integration/test_openwrt_apk.py) run it on openwrt3 itself."""
from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import tarfile
import threading
import urllib.request
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RIG = ROOT / "tests" / "rig"
sys.path.insert(0, str(RIG))
import apkrepo  # noqa: E402  (the rig's repository builder)

APK = RIG / "fixtures" / "openwrt" / "apk"
ARCH = "aarch64_cortex-a53"
BUSYBOX = shutil.which("busybox")
SHELLS = [[s] for s in (shutil.which("dash"), shutil.which("bash")) if s] + ([[BUSYBOX, "ash"]] if BUSYBOX else [])
SHELL_IDS = [" ".join([Path(s[0]).name, *s[1:]]) for s in SHELLS]
pytestmark = pytest.mark.skipif(not BUSYBOX or not shutil.which("openssl"),
                                reason="needs busybox (its wget) and openssl (to sign the repository)")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (the base class's name)
        pass


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """base (openssl-util, libopenssl3), core (libatomic1), untrusted/base signed by a key no root has; served."""
    top = tmp_path_factory.mktemp("apkrepo")
    www, keys = top / "www", top / "keys"
    keys.mkdir()
    for key in ("trusted", "stranger"):
        apkrepo.make_key(keys / f"{key}.priv", keys / f"{key}.rsa.pub")
    payload = top / "openssl"
    payload.write_bytes(b"#!/bin/sh\necho 'OpenSSL 3.0.20 (stand-in payload)'\n")
    base = [apkrepo.ApkPackage("libopenssl3", "3.0.20-r1", ARCH, "OpenSSL libraries", ["libc", "libatomic1"],
                               files={"/usr/lib/libcrypto.so.3": payload}),
            apkrepo.ApkPackage("openssl-util", "3.0.20-r1", ARCH, "OpenSSL command line tool", ["libc", "libopenssl3"],
                               files={"/usr/bin/openssl": payload})]
    core = [apkrepo.ApkPackage("libatomic1", "12.2.0-r4", ARCH, "libatomic", ["libc"],
                               files={"/lib/libatomic.so.1": payload})]
    apkrepo.write_repo(base, "OpenWrt 25.12.5", www / "base", keys / "trusted.priv", "trusted.rsa.pub")
    apkrepo.write_repo(core, "OpenWrt 25.12.5", www / "core", keys / "trusted.priv", "trusted.rsa.pub")
    apkrepo.write_repo(base, "OpenWrt 25.12.5", www / "untrusted", keys / "stranger.priv", "stranger.rsa.pub")
    handler = functools.partial(QuietHandler, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    yield {"url": url, "key": keys / "trusted.rsa.pub", "core": f"{url}/core/APKINDEX.tar.gz",
           "base": f"{url}/base/APKINDEX.tar.gz", "untrusted": f"{url}/untrusted/APKINDEX.tar.gz"}
    server.shutdown()


@pytest.fixture
def router(tmp_path, repository):
    """A root as openwrt3's: arch, the trusted key, the firmware's database, repositories core and base."""
    root = tmp_path / "root"
    (root / "etc/apk/keys").mkdir(parents=True)
    (root / "etc/apk/repositories.d").mkdir()
    (root / "lib/apk/db").mkdir(parents=True)
    (root / "etc/apk/arch").write_text(f"{ARCH}\n")
    shutil.copyfile(repository["key"], root / "etc/apk/keys/trusted.rsa.pub")
    (root / "lib/apk/db/installed").write_text(f"P:libc\nV:2.36-r9\nA:{ARCH}\nS:0\nI:0\nT:libc\nL:GPL-2.0\n\n")
    (root / "etc/apk/world").write_text("base-files\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "wget").symlink_to(BUSYBOX)  # BusyBox answers as the applet it is called by

    def repositories(*urls: str) -> None:
        (root / "etc/apk/repositories.d/distfeeds.list").write_text("".join(f"{u}\n" for u in urls))

    repositories(repository["core"], repository["base"])
    return root, bindir, repositories


def apk(shell: list[str], router, *args: str) -> subprocess.CompletedProcess:
    root, bindir, _ = router
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "TMPDIR": str(root.parent)}
    return subprocess.run([*shell, str(APK), "--root", str(root), *args], capture_output=True, text=True, env=env,
                          timeout=60)


def state(router) -> tuple[str, str]:
    root = router[0]
    return (root / "etc/apk/world").read_text(), (root / "lib/apk/db/installed").read_text()


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_update_then_add_installs_with_dependencies_first(shell, router, repository):
    update = apk(shell, router, "update")
    assert update.returncode == 0, update.stderr
    assert update.stdout == (f"OpenWrt 25.12.5 [{repository['core']}]\nOpenWrt 25.12.5 [{repository['base']}]\n"
                             "OK: 3 distinct packages available\n")
    add = apk(shell, router, "add", "openssl-util")
    assert add.returncode == 0, add.stderr
    assert add.stdout.splitlines() == ["(1/3) Installing libatomic1 (12.2.0-r4)",
                                       "(2/3) Installing libopenssl3 (3.0.20-r1)",
                                       "(3/3) Installing openssl-util (3.0.20-r1)", "OK: 153 B in 4 packages"]
    root = router[0]
    assert (root / "usr/bin/openssl").read_bytes().startswith(b"#!/bin/sh")
    assert (root / "etc/apk/world").read_text() == "base-files\nopenssl-util\n"
    again = apk(shell, router, "add", "openssl-util")
    assert (again.returncode, again.stdout) == (0, "OK: 153 B in 4 packages\n")
    assert apk(shell, router, "info", "-e", "openssl-util").returncode == 0
    removed = apk(shell, router, "del", "openssl-util")
    assert removed.stdout.startswith("(1/1) Purging openssl-util (3.0.20-r1)\n")
    assert not (root / "usr/bin/openssl").exists() and "openssl-util" not in (root / "etc/apk/world").read_text()


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_unknown_package(shell, router):
    assert apk(shell, router, "update").returncode == 0
    before = state(router)
    result = apk(shell, router, "add", "openssl-utilx")
    assert result.returncode == 1
    assert result.stderr == ("ERROR: unable to select packages:\n  openssl-utilx (no such package):\n"
                             "    required by: world[openssl-utilx]\n")
    assert state(router) == before


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_unreachable_repository(shell, router, repository):
    dead = "http://127.0.0.1:9/base/APKINDEX.tar.gz"  # the discard port: nothing listens
    router[2](dead)
    result = apk(shell, router, "update")
    assert result.returncode == 1
    assert result.stderr == f"ERROR: wget: exited with error 4\nWARNING: updating and opening {dead}: Network unreachable\n"
    assert result.stdout == "1 unavailable, 0 stale; 0 distinct packages available\n"


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_index_signed_with_an_unknown_key(shell, router, repository):
    router[2](repository["core"], repository["untrusted"])
    before = state(router)
    result = apk(shell, router, "update")
    assert result.returncode == 1
    assert result.stderr == f"WARNING: updating and opening {repository['untrusted']}: UNTRUSTED signature\n"
    assert result.stdout.endswith("1 unavailable, 0 stale; 1 distinct packages available\n")
    assert apk(shell, router, "add", "openssl-util").returncode == 1
    assert state(router) == before


def test_the_indexes_carry_real_rsa_signatures_of_what_follows_them(repository, tmp_path):
    """What the stand-in trusts by its key's name is a real signature: openssl verifies the index with the trusted
    key and refuses the stranger's index with it (first gzip member: the signature's tar; the rest: what it signs)."""
    for which, trusted in (("base", True), ("untrusted", False)):
        blob = urllib.request.urlopen(repository[which], timeout=10).read()
        stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
        signature_tar, signed = stream.decompress(blob), stream.unused_data
        header = tarfile.TarInfo.frombuf(signature_tar[:512], "utf-8", "surrogateescape")
        assert header.name == f".SIGN.RSA.{'trusted' if trusted else 'stranger'}.rsa.pub"
        (tmp_path / "signature").write_bytes(signature_tar[512:512 + header.size])
        (tmp_path / "signed").write_bytes(signed)
        verify = subprocess.run(["openssl", "dgst", "-sha1", "-verify", str(repository["key"]), "-signature",
                                 str(tmp_path / "signature"), str(tmp_path / "signed")], capture_output=True, text=True)
        assert (verify.returncode == 0) == trusted, verify.stdout + verify.stderr
