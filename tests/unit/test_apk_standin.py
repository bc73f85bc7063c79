"""The rig's apk stand-in (tests/rig/fixtures/openwrt/apk) under dash, bash and BusyBox ash, on a root of its own
(`--root`, as apk's), against a repository built by tests/rig/apkrepo.py and served on loopback: apk-tools 3's words
and exit codes for update, add, an unknown package, an unreachable repository and an untrusted index. The rig's
integration tests (tests/integration/test_openwrt_apk.py) run it on openwrt3 itself."""
from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import struct
import subprocess
import sys
import threading
import urllib.request
import zlib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RIG = ROOT / "tests" / "rig"
sys.path.insert(0, str(RIG))
import apkrepo  # noqa: E402  (the rig's repository builder)

APK = RIG / "fixtures" / "openwrt" / "apk"
ARCH = "aarch64_cortex-a53"
BUSYBOX = shutil.which("busybox")
# "openwrt": BusyBox ash with nothing on PATH but the applets OpenWrt's BusyBox configuration enables (the rig's
# tests/rig/busybox/openwrt-25.12.config, the apk release), so the stand-in cannot lean on a tool a router lacks
# (od, xxd, base64...)
OPENWRT = "openwrt"
SHELLS = [[s] for s in (shutil.which("dash"), shutil.which("bash")) if s] + (
    [[BUSYBOX, "ash"], [OPENWRT]] if BUSYBOX else [])
SHELL_IDS = [" ".join([Path(s[0]).name, *s[1:]]) for s in SHELLS]


def openwrt_applets(into: Path) -> None:
    """Links to BusyBox for each applet both OpenWrt's configuration enables and this BusyBox has."""
    assert BUSYBOX
    have = set(subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True, check=True).stdout.split())
    config = (RIG / "busybox" / "openwrt-25.12.config").read_text()
    enabled = {line[7:-2].lower().replace("_", "-") for line in config.splitlines()
               if line.startswith("CONFIG_") and line.endswith("=y")}
    enabled |= {name.replace("-", "") for name in enabled}
    for applet in sorted(have & enabled):
        (into / applet).symlink_to(BUSYBOX)
PAYLOAD = b"#!/bin/sh\necho 'OpenSSL 3.0.20 (stand-in payload)'\n"
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
        apkrepo.make_key(keys / f"{key}.key", keys / f"{key}.pem")
    payload = top / "openssl"
    payload.write_bytes(PAYLOAD)
    base = [apkrepo.ApkPackage("libopenssl3", "3.0.20-r1", ARCH, "OpenSSL libraries", ["libc", "libatomic1"],
                               files={"/usr/lib/libcrypto.so.3": payload}),
            apkrepo.ApkPackage("openssl-util", "3.0.20-r1", ARCH, "OpenSSL command line tool", ["libc", "libopenssl3"],
                               files={"/usr/bin/openssl": payload})]
    core = [apkrepo.ApkPackage("libatomic1", "12.2.0-r4", ARCH, "libatomic", ["libc"],
                               files={"/lib/libatomic.so.1": payload})]
    apkrepo.write_repo(base, "OpenWrt 25.12.5", www / "base", keys / "trusted.key", keys / "trusted.pem")
    apkrepo.write_repo(core, "OpenWrt 25.12.5", www / "core", keys / "trusted.key", keys / "trusted.pem")
    apkrepo.write_repo(base, "OpenWrt 25.12.5", www / "untrusted", keys / "stranger.key", keys / "stranger.pem")
    handler = functools.partial(QuietHandler, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    yield {"url": url, "www": www, "key": keys / "trusted.pem", "stranger": keys / "stranger.pem",
           "core": f"{url}/core/packages.adb", "base": f"{url}/base/packages.adb",
           "untrusted": f"{url}/untrusted/packages.adb"}
    server.shutdown()


@pytest.fixture
def router(tmp_path, repository):
    """A root as openwrt3's: arch, the trusted key, the firmware's database, repositories core and base."""
    root = tmp_path / "root"
    (root / "etc/apk/keys").mkdir(parents=True)
    (root / "etc/apk/repositories.d").mkdir()
    (root / "lib/apk/db").mkdir(parents=True)
    (root / "etc/apk/arch").write_text(f"{ARCH}\n")
    shutil.copyfile(repository["key"], root / "etc/apk/keys/trusted.pem")
    (root / "lib/apk/db/installed").write_text(f"P:libc\nV:2.36-r9\nA:{ARCH}\nS:0\nI:0\nT:libc\nL:GPL-2.0\n\n")
    (root / "etc/apk/world").write_text("base-files\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "wget").symlink_to(BUSYBOX)  # BusyBox answers as the applet it is called by
    (tmp_path / "openwrt-bin").mkdir()
    openwrt_applets(tmp_path / "openwrt-bin")

    def repositories(*urls: str) -> None:
        (root / "etc/apk/repositories.d/distfeeds.list").write_text("".join(f"{u}\n" for u in urls))

    repositories(repository["core"], repository["base"])
    return root, bindir, repositories


def apk(shell: list[str], router, *args: str) -> subprocess.CompletedProcess:
    root, bindir, _ = router
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "TMPDIR": str(root.parent)}
    if shell == [OPENWRT]:
        shell, env["PATH"] = [str(BUSYBOX), "ash"], f"{bindir}:{root.parent / 'openwrt-bin'}"
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
                                       "(3/3) Installing openssl-util (3.0.20-r1)", "OK: 214 B in 4 packages"]
    root = router[0]
    assert (root / "usr/bin/openssl").read_bytes().startswith(b"#!/bin/sh")
    assert (root / "etc/apk/world").read_text() == "base-files\nopenssl-util\n"
    again = apk(shell, router, "add", "openssl-util")
    assert (again.returncode, again.stdout) == (0, "OK: 214 B in 4 packages\n")
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
    dead = "http://127.0.0.1:9/base/packages.adb"  # the discard port: nothing listens
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


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_the_installed_files_are_the_packages_contents(shell, router, repository):
    assert apk(shell, router, "add", "openssl-util").returncode == 0
    root = router[0]
    assert (root / "usr/bin/openssl").read_bytes() == PAYLOAD
    assert (root / "usr/bin/openssl").stat().st_mode & 0o777 == 0o755
    assert (root / "lib/apk/packages/openssl-util.list").read_text() == "/usr/bin/openssl\n"


def serve_broken(repository, name: str, blob: bytes) -> str:
    (repository["www"] / "broken").mkdir(exist_ok=True)
    (repository["www"] / "broken" / name).write_bytes(blob)
    return f"{repository['url']}/broken/{name}"


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
@pytest.mark.parametrize(("damage", "words"), [
    ("truncated", "unexpected end of file"),  # io.c: a short read is APKE_EOF
    ("not-adb", "file format is invalid or inconsistent"),  # not "ADB": read as v2, which is not gzip either
    ("v2-index", "file format is invalid or inconsistent"),  # a .adb repository may not be v2 (database.c)
    ("zstd", "ADB compression not supported"),
])
def test_a_broken_index_is_refused_in_apks_words(shell, router, repository, damage, words):
    good = (repository["www"] / "base" / "packages.adb").read_bytes()
    blob = {"truncated": good[:len(good) // 2], "not-adb": b"<html>404</html>\n",
            "v2-index": zlib.compress(b"APKINDEX"), "zstd": b"ADBc\x02\x00" + good[4:]}[damage]
    url = serve_broken(repository, f"{damage}.adb", blob)
    router[2](url)
    before = state(router)
    result = apk(shell, router, "update")
    assert (result.returncode, result.stderr) == (1, f"WARNING: updating and opening {url}: {words}\n")
    assert result.stdout == "1 unavailable, 0 stale; 0 distinct packages available\n"
    assert state(router) == before


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_a_package_not_matching_its_index_entry_is_not_installed(shell, router, repository, tmp_path):
    """The index's hashes is SHA-256 of the package's ADB block: a package built again (another unique id, same
    name and version) does not match, and apk refuses it (ADB integrity error), installing nothing."""
    www = tmp_path / "www"
    shutil.copytree(repository["www"] / "core", www / "core")
    key = repository["key"].with_suffix(".key")
    other = apkrepo.ApkPackage("libatomic1", "12.2.0-r4", ARCH, "libatomic, built again", ["libc"],
                               files={"/lib/libatomic.so.1": repository["key"]})
    apkrepo.build_apk(other, www / "core", key, repository["key"])
    handler = functools.partial(QuietHandler, directory=str(www))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        router[2](f"http://127.0.0.1:{server.server_address[1]}/core/packages.adb")
        result = apk(shell, router, "add", "libatomic1")
    finally:
        server.shutdown()
    assert result.returncode == 1
    assert "ERROR: libatomic1-12.2.0-r4: ADB integrity error\n" in result.stderr
    assert not (router[0] / "lib/libatomic.so.1").exists()


# --- the repository's files against the format, read by a decoder of this test's own ------------------------------
# Written from apk-tools v3.0.3 doc/apk-v3.5.scd (tags, blocks, SIG), the schemas' field ids and kinds from
# src/apk_adb.h / src/apk_adb.c: independent of tests/rig/apkrepo.py, whose constants it does not use.

STRING, INT, HEX = "string", "int", "hexblob"
DEPENDENCY = {1: ("name", STRING), 2: ("version", STRING), 3: ("match", INT)}
PKGINFO = {1: ("name", STRING), 2: ("version", STRING), 3: ("hashes", HEX), 4: ("description", STRING),
           5: ("arch", STRING), 6: ("license", STRING), 7: ("origin", STRING), 8: ("maintainer", STRING),
           9: ("url", STRING), 10: ("repo-commit", HEX), 11: ("build-time", INT), 12: ("installed-size", INT),
           13: ("file-size", INT), 14: ("provider-priority", INT), 15: ("depends", [DEPENDENCY]),
           16: ("provides", [DEPENDENCY]), 17: ("replaces", [DEPENDENCY]), 18: ("install-if", [DEPENDENCY]),
           19: ("recommends", [DEPENDENCY]), 20: ("layer", INT), 21: ("tags", [STRING])}
ACL = {1: ("mode", INT), 2: ("user", STRING), 3: ("group", STRING), 4: ("xattrs", [HEX])}
FILE = {1: ("name", STRING), 2: ("acl", ACL), 3: ("size", INT), 4: ("mtime", INT), 5: ("hash", HEX),
        6: ("target", HEX)}
DIR = {1: ("name", STRING), 2: ("acl", ACL), 3: ("files", [FILE])}
PACKAGE = {1: ("info", PKGINFO), 2: ("paths", [DIR]), 3: ("scripts", {}), 4: ("triggers", [STRING]),
           5: ("replaces-priority", INT)}
INDEX = {1: ("description", STRING), 2: ("packages", [PKGINFO]), 3: ("pkgname-spec", STRING)}


class Decoded:
    def __init__(self, raw: bytes) -> None:
        assert raw[:4] == b"ADBd", "OpenWrt's files are deflate-compressed: ADBd + raw deflate"
        inflate = zlib.decompressobj(-15)
        stream = inflate.decompress(raw[4:])
        assert inflate.eof and not inflate.unused_data
        assert stream[:4] == b"ADB."
        self.schema = stream[4:8]
        self.blocks: list[tuple[int, bytes]] = []
        pos = 8
        while pos < len(stream):
            (word,) = struct.unpack_from("<I", stream, pos)
            kind, size = word >> 30, word & 0x3FFFFFFF
            self.blocks.append((kind, stream[pos + 4:pos + size]))
            padded = size + -size % 8
            assert stream[pos + size:pos + padded] == b"\0" * (padded - size)
            pos += padded
        assert pos == len(stream)
        kinds = [k for k, _ in self.blocks]
        assert kinds[0] == 0 and kinds.count(0) == 1, kinds  # one ADB block first
        assert kinds == sorted(kinds) and 3 not in kinds, kinds  # then SIG, then DATA, no DATAX
        self.adb = self.blocks[0][1]
        assert self.adb[0] == 0 and self.adb[1] == 0  # compat version, version

    def word(self, at: int) -> int:
        return int(struct.unpack_from("<I", self.adb, at)[0])

    def value(self, tag: int, kind: Any) -> Any:
        t, v = tag >> 28, tag & 0x0FFFFFFF
        if tag == 0:
            return None
        if kind == INT:
            assert t in (1, 2, 3), hex(tag)
            return v if t == 1 else int(struct.unpack_from("<I" if t == 2 else "<Q", self.adb, v)[0])
        if kind in (STRING, HEX):
            assert t in (8, 9, 10), hex(tag)
            width = {8: 1, 9: 2, 10: 4}[t]
            assert v % width == 0, "a blob is aligned to its length field"
            length = int.from_bytes(self.adb[v:v + width], "little")
            data = self.adb[v + width:v + width + length]
            assert len(data) == length
            return data.decode() if kind == STRING else data.hex()
        assert v % 4 == 0, "objects and arrays are aligned to 4"
        n = self.word(v)
        slots = [self.word(v + 4 * i) for i in range(1, n)]
        if isinstance(kind, list):
            assert t == 0xD, hex(tag)
            return [self.value(s, kind[0]) for s in slots]
        assert t == 0xE, hex(tag)
        assert len(slots) <= len(kind) and (not slots or slots[-1] != 0), "unknown field ids; trailing NULL slots"
        return {kind[i + 1][0]: self.value(s, kind[i + 1][1]) for i, s in enumerate(slots) if s}

    def root(self, kind: dict) -> Any:
        return self.value(self.word(4), kind)

    def verify(self, public_key: Path, tmp: Path) -> bool:
        """Every SIG block: version 0, SHA-512 (4), the key's id; signature over schema + header + SHA-512(ADB)."""
        der = subprocess.run(["openssl", "pkey", "-pubin", "-in", str(public_key), "-outform", "DER"],
                             capture_output=True, check=True).stdout
        point = der[-65:]  # P-256 SubjectPublicKeyInfo ends with the uncompressed point
        assert point[0] == 4
        ok = []
        for kind, sig in self.blocks:
            if kind != 1:
                continue
            assert sig[0] == 0 and sig[1] == 4
            if sig[2:18] != hashlib.sha512(point).digest()[:16]:
                ok.append(False)
                continue
            (tmp / "message").write_bytes(self.schema + sig[:18] + hashlib.sha512(self.adb).digest())
            (tmp / "signature").write_bytes(sig[18:])
            verify = subprocess.run(["openssl", "dgst", "-sha512", "-verify", str(public_key), "-signature",
                                     str(tmp / "signature"), str(tmp / "message")], capture_output=True)
            ok.append(verify.returncode == 0)
        return any(ok)


def test_packages_adb_is_an_indx_adb_as_the_spec_reads_it(repository, tmp_path):
    raw = (repository["www"] / "base" / "packages.adb").read_bytes()
    index = Decoded(raw)
    assert index.schema == b"indx" and [k for k, _ in index.blocks] == [0, 1]
    root = index.root(INDEX)
    assert root["description"] == "OpenWrt 25.12.5"
    names = [p["name"] for p in root["packages"]]
    assert names == ["libopenssl3", "openssl-util"] == sorted(names)
    util = root["packages"][1]
    assert util["version"] == "3.0.20-r1" and util["arch"] == ARCH and util["license"] == "Apache-2.0"
    assert util["url"] == "https://www.openssl.org/" and util["description"] == "OpenSSL command line tool"
    assert [d["name"] for d in util["depends"]] == ["libc", "libopenssl3"]
    package = (repository["www"] / "base" / "openssl-util-3.0.20-r1.apk").read_bytes()
    assert util["file-size"] == len(package)
    assert util["hashes"] == hashlib.sha256(Decoded(package).adb).hexdigest()  # mkndx: the package's identity
    assert util["installed-size"] == len(PAYLOAD) + len("/usr/bin/openssl\n")
    assert index.verify(repository["key"], tmp_path)
    assert not index.verify(repository["stranger"], tmp_path)
    stranger = Decoded((repository["www"] / "untrusted" / "packages.adb").read_bytes())
    assert stranger.verify(repository["stranger"], tmp_path) and not stranger.verify(repository["key"], tmp_path)


def test_a_package_is_a_pckg_adb_with_its_files_in_data_blocks(repository, tmp_path):
    package = Decoded((repository["www"] / "base" / "openssl-util-3.0.20-r1.apk").read_bytes())
    assert package.schema == b"pckg" and package.verify(repository["key"], tmp_path)
    root = package.root(PACKAGE)
    info = root["info"]
    assert (info["name"], info["version"], info["arch"]) == ("openssl-util", "3.0.20-r1", ARCH)
    assert "file-size" not in info and len(info["hashes"]) == 40  # the 20-byte unique id
    uid_at = package.adb.index(bytes.fromhex(info["hashes"]))
    zeroed = package.adb[:uid_at] + bytes(20) + package.adb[uid_at + 20:]
    assert info["hashes"] == hashlib.sha256(zeroed).hexdigest()[:40]
    dirs = [d.get("name", "") for d in root["paths"]]
    # every directory is an entry, the root too (mkpkg's default --compat 3.0.0_pre1; its name, empty, is NULL)
    assert dirs == ["", "lib", "lib/apk", "lib/apk/packages", "usr", "usr/bin"]
    files = [(p, f, d.get("name", ""), e) for p, d in enumerate(root["paths"], 1) for f, e in enumerate(d.get("files", []), 1)]
    assert [(d, e["name"], e["acl"]["mode"], e["size"]) for _, _, d, e in files] == [
        ("lib/apk/packages", "openssl-util.list", 0o644, 17), ("usr/bin", "openssl", 0o755, len(PAYLOAD))]
    data = [b for k, b in package.blocks if k == 2]
    assert len(data) == 2
    for (p, f, _, entry), block in zip(files, data):
        assert struct.unpack_from("<II", block) == (p, f)
        assert hashlib.sha256(block[8:]).hexdigest() == entry["hash"] and len(block) - 8 == entry["size"]
    assert data[1][8:] == PAYLOAD
