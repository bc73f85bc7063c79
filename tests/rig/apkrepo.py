"""Builds the test rig's apk repository (OpenWrt 25.x) in apk-tools 3's own formats, around real Debian binaries,
for the apk stand-in (tests/rig/fixtures/openwrt/apk): v3 packages (.apk) and a v3 index (packages.adb), as
OpenWrt 25.12 serves them.

Written from the format as apk-tools v3.0.3 (alpinelinux/apk-tools, tag v3.0.3, f724dcd2) defines it; read, not
copied: doc/apk-v3.5.scd (wire format, blocks), src/adb.h and src/adb.c (value tags, block header and alignment,
adb_w_raw alignment of each value, object/array slot 0 = number of slots, trailing NULL slots dropped, SIG block
layout adb_sign_v0 and what it signs: adb_digest_v0_signature), src/apk_adb.h and src/apk_adb.c (schemas "indx",
"pckg" and their field ids; arrays that apk sorts), src/adb_comp.c and src/io_gunzip.c ("ADBd" + raw deflate is
apk's default compression), src/app_mkpkg.c (package layout: every directory an entry, root included, under the
default --compat 3.0.0_pre1; the 20-byte unique id; DATA blocks of path/file index + contents),
src/app_mkndx.c (index entry = the package's info + hashes = SHA-256 of its ADB block + file-size),
src/crypto_openssl.c and src/crypto_mbedtls.c (key id = first 16 bytes of SHA-512 of the public key's bits).
OpenWrt's side (include/package-pack.mk, openwrt/openwrt 7fbdb3b7): `apk mkpkg --info name:/version:/description:/
arch:/license:/origin:/url:/maintainer:/depends: --files DIR --output NAME-VERSION.apk --sign KEY`, no
--compression (so deflate); packages carry /lib/apk/packages/NAME.list. The index: `apk mkndx --sign KEY --output
packages.adb *.apk` (package/Makefile of OpenWrt's main branch, as quoted in public build notes; the file at 25.12
was not readable here), keys made by `openssl ecparam -name prime256v1 -genkey` (ECDSA P-256), which apk signs
with SHA-512 (EVP_DigestSign).
Not written, as the stand-in does not run them: the post-install/pre-deinstall scripts OpenWrt adds.
"""
from __future__ import annotations

import hashlib
import struct
import subprocess
import zlib
from dataclasses import dataclass, field
from pathlib import Path

# value tags (adb.h): high 4 bits type, low 28 bits value or offset into the ADB block
T_SPECIAL, T_INT, T_INT32, T_INT64 = 0x0, 0x1, 0x2, 0x3
T_BLOB8, T_BLOB16, T_BLOB32, T_ARRAY, T_OBJECT = 0x8, 0x9, 0xA, 0xD, 0xE
NULL = 0
# blocks: 2 bits of type over 30 bits of size (header included), each padded to 8 bytes
BLOCK_ADB, BLOCK_SIG, BLOCK_DATA = 0, 1, 2
SCHEMA_INDEX, SCHEMA_PACKAGE = b"indx", b"pckg"
DIGEST_SHA512 = 4  # apk_crypto.h: APK_DIGEST_SHA512

# field ids (apk_adb.h)
PI_NAME, PI_VERSION, PI_HASHES, PI_DESCRIPTION, PI_ARCH, PI_LICENSE, PI_ORIGIN, PI_MAINTAINER, PI_URL = range(1, 10)
PI_INSTALLED_SIZE, PI_FILE_SIZE, PI_DEPENDS = 0x0C, 0x0D, 0x0F
DEP_NAME = 1
ACL_MODE, ACL_USER, ACL_GROUP = 1, 2, 3
FI_NAME, FI_ACL, FI_SIZE, FI_MTIME, FI_HASHES = 1, 2, 3, 4, 5
DI_NAME, DI_ACL, DI_FILES = 1, 2, 3
PKG_PKGINFO, PKG_PATHS = 1, 2
NDX_DESCRIPTION, NDX_PACKAGES = 1, 2


def tag(kind: int, value: int) -> int:
    assert 0 <= value < 1 << 28
    return kind << 28 | value


class Adb:
    """One ADB block being written: an 8-byte header (compat version 0, version 0, reserved, root), then values,
    each at the alignment apk gives it (blob: its length field's size; ints, objects, arrays: 4)."""

    def __init__(self) -> None:
        self.buf = bytearray(8)

    def _put(self, data: bytes, align: int) -> int:
        self.buf += b"\0" * (-len(self.buf) % align)
        offset = len(self.buf)
        self.buf += data
        return offset

    def blob(self, data: bytes) -> int:
        if not data:
            return NULL
        if len(data) > 0xFFFF:
            return tag(T_BLOB32, self._put(struct.pack("<I", len(data)) + data, 4))
        if len(data) > 0xFF:
            return tag(T_BLOB16, self._put(struct.pack("<H", len(data)) + data, 2))
        return tag(T_BLOB8, self._put(bytes([len(data)]) + data, 1))

    def text(self, s: str) -> int:
        return self.blob(s.encode())

    def integer(self, n: int) -> int:
        if n >= 1 << 32:
            return tag(T_INT64, self._put(struct.pack("<Q", n), 4))
        if n >= 1 << 28:
            return tag(T_INT32, self._put(struct.pack("<I", n), 4))
        return tag(T_INT, n)

    def _slots(self, kind: int, slots: list[int]) -> int:
        while slots and slots[-1] == NULL:
            slots = slots[:-1]
        if not slots:
            return NULL
        return tag(kind, self._put(struct.pack(f"<{len(slots) + 1}I", len(slots) + 1, *slots), 4))

    def obj(self, fields: dict[int, int]) -> int:
        """An object from {field id: value}."""
        return self._slots(T_OBJECT, [fields.get(i, NULL) for i in range(1, max(fields, default=0) + 1)])

    def arr(self, items: list[int]) -> int:
        return self._slots(T_ARRAY, [v for v in items if v != NULL])

    def finish(self, root: int) -> bytes:
        self.buf[4:8] = struct.pack("<I", root)
        return bytes(self.buf)


def block(kind: int, payload: bytes) -> bytes:
    raw = 4 + len(payload)
    assert raw < 1 << 30
    return struct.pack("<I", kind << 30 | raw) + payload + b"\0" * (-raw % 8)


def make_key(private_key: Path, public_key: Path) -> None:
    """An ECDSA P-256 key pair (PEM), as OpenWrt makes its apk build key."""
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(private_key)],
                   capture_output=True, check=True)
    subprocess.run(["openssl", "ec", "-in", str(private_key), "-pubout", "-out", str(public_key)],
                   capture_output=True, check=True)


def _der(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of contents, end of contents) of the DER element at pos."""
    kind, length, pos = data[pos], data[pos + 1], pos + 2
    if length & 0x80:
        n = length & 0x7F
        length, pos = int.from_bytes(data[pos:pos + n], "big"), pos + n
    return kind, pos, pos + length


def key_id(public_key: Path) -> bytes:
    """apk's key id: SHA-512 of the public key's bits (the SubjectPublicKeyInfo's BIT STRING without its
    unused-bits byte: what i2d_PublicKey / mbedtls_pk_write_pubkey give), first 16 bytes."""
    der = subprocess.run(["openssl", "pkey", "-pubin", "-in", str(public_key), "-outform", "DER"],
                         capture_output=True, check=True).stdout
    _, start, _ = _der(der, 0)  # SubjectPublicKeyInfo
    _, _, after_algorithm = _der(der, start)
    kind, bits, end = _der(der, after_algorithm)
    assert kind == 0x03 and der[bits] == 0
    return hashlib.sha512(der[bits + 1:end]).digest()[:16]


def signature_block(schema: bytes, adb: bytes, private_key: Path, public_key: Path) -> bytes:
    """SIG block (adb_sign_v0: version 0, hash SHA-512, key id, signature) over schema, the v0 header and
    SHA-512(ADB block), signed with SHA-512 as apk's EVP_DigestSign does."""
    header = bytes([0, DIGEST_SHA512]) + key_id(public_key)
    signed = schema + header + hashlib.sha512(adb).digest()
    signature = subprocess.run(["openssl", "dgst", "-sha512", "-sign", str(private_key)], input=signed,
                               capture_output=True, check=True).stdout
    return block(BLOCK_SIG, header + signature)


def compress(stream: bytes) -> bytes:
    """apk's default compression: "ADBd" then the stream as raw deflate."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    return b"ADBd" + z.compress(stream) + z.flush()


@dataclass
class ApkPackage:
    name: str
    version: str
    arch: str
    description: str
    depends: list[str] = field(default_factory=list)
    license: str = "Apache-2.0"
    url: str = "https://www.openssl.org/"
    origin: str = ""
    maintainer: str = ""
    files: dict[str, Path] = field(default_factory=dict)  # absolute path on the target -> file here

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}.apk"  # apk's default pkgname-spec ${name}-${version}.apk


@dataclass
class BuiltPackage:
    package: ApkPackage
    identity: bytes  # SHA-256 of the package's ADB block: the index's "hashes"
    file_size: int
    installed_size: int


EXEC_DIRS = ("usr/bin/", "bin/", "usr/sbin/", "sbin/")


def _info_fields(w: Adb, pkg: ApkPackage, installed_size: int, hashes: int) -> dict[int, int]:
    deps = [w.obj({DEP_NAME: w.text(d)}) for d in sorted(set(pkg.depends))]  # apk sorts dependencies by name
    return {PI_NAME: w.text(pkg.name), PI_VERSION: w.text(pkg.version), PI_HASHES: hashes,
            PI_DESCRIPTION: w.text(pkg.description), PI_ARCH: w.text(pkg.arch), PI_LICENSE: w.text(pkg.license),
            PI_ORIGIN: w.text(pkg.origin), PI_MAINTAINER: w.text(pkg.maintainer), PI_URL: w.text(pkg.url),
            PI_INSTALLED_SIZE: w.integer(installed_size), PI_DEPENDS: w.arr(deps)}


def build_apk(pkg: ApkPackage, out_dir: Path, private_key: Path, public_key: Path) -> BuiltPackage:
    """Write pkg's v3 .apk into out_dir, laid out as `apk mkpkg` lays out OpenWrt's packages."""
    payload = {dest.strip("/"): src.read_bytes() for dest, src in pkg.files.items()}
    listing = "".join(f"/{p}\n" for p in sorted(payload))
    payload[f"lib/apk/packages/{pkg.name}.list"] = listing.encode()
    dirs: dict[str, list[str]] = {"": []}
    for path in payload:
        parts = path.split("/")
        for i in range(1, len(parts)):
            dirs.setdefault("/".join(parts[:i]), [])
        dirs["/".join(parts[:-1])].append(parts[-1])
    installed_size = sum(len(b) for b in payload.values()) or 1

    w = Adb()
    root_acl = {ACL_MODE: w.integer(0o755), ACL_USER: w.text("root"), ACL_GROUP: w.text("root")}
    order: list[tuple[str, list[str]]] = sorted((d, sorted(names)) for d, names in dirs.items())
    paths = []
    for dirname, names in order:
        files = []
        for name in names:
            path = f"{dirname}/{name}" if dirname else name
            blob = payload[path]
            mode = 0o755 if path.startswith(EXEC_DIRS) else 0o644
            files.append(w.obj({FI_NAME: w.text(name),
                                FI_ACL: w.obj({ACL_MODE: w.integer(mode), ACL_USER: w.text("root"),
                                               ACL_GROUP: w.text("root")}),
                                FI_SIZE: w.integer(len(blob)), FI_MTIME: w.integer(0),
                                FI_HASHES: w.blob(hashlib.sha256(blob).digest())}))
        paths.append(w.obj({DI_NAME: w.text(dirname), DI_ACL: w.obj(root_acl), DI_FILES: w.arr(files)}))
    # the unique id: 20 bytes written as zeros, then filled with SHA-256 of the whole block (app_mkpkg.c)
    uid = w.blob(b"\0" * 20)
    info = w.obj(_info_fields(w, pkg, installed_size, uid))
    adb = bytearray(w.finish(w.obj({PKG_PKGINFO: info, PKG_PATHS: w.arr(paths)})))
    uid_at = (uid & 0x0FFFFFFF) + 1
    adb[uid_at:uid_at + 20] = hashlib.sha256(adb).digest()[:20]

    stream = b"ADB." + SCHEMA_PACKAGE + block(BLOCK_ADB, bytes(adb))
    stream += signature_block(SCHEMA_PACKAGE, bytes(adb), private_key, public_key)
    for path_idx, (dirname, names) in enumerate(order, start=1):
        for file_idx, name in enumerate(names, start=1):
            blob = payload[f"{dirname}/{name}" if dirname else name]
            if blob:
                stream += block(BLOCK_DATA, struct.pack("<II", path_idx, file_idx) + blob)
    apk = compress(stream)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / pkg.filename).write_bytes(apk)
    return BuiltPackage(pkg, hashlib.sha256(adb).digest(), len(apk), installed_size)


def write_index(built: list[BuiltPackage], description: str, out_dir: Path, private_key: Path,
                public_key: Path) -> Path:
    """packages.adb of the built packages, signed, compressed as `apk mkndx` writes it."""
    w = Adb()
    entries = []
    for b in sorted(built, key=lambda b: (b.package.name, b.package.version)):  # apk sorts by name first
        fields = _info_fields(w, b.package, b.installed_size, w.blob(b.identity))
        fields[PI_FILE_SIZE] = w.integer(b.file_size)
        entries.append(w.obj(fields))
    adb = w.finish(w.obj({NDX_DESCRIPTION: w.text(description), NDX_PACKAGES: w.arr(entries)}))
    stream = (b"ADB." + SCHEMA_INDEX + block(BLOCK_ADB, adb)
              + signature_block(SCHEMA_INDEX, adb, private_key, public_key))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "packages.adb"
    path.write_bytes(compress(stream))
    return path


def write_repo(packages: list[ApkPackage], description: str, out_dir: Path, private_key: Path,
               public_key: Path) -> Path:
    """Every package's .apk and the signed packages.adb, in out_dir."""
    return write_index([build_apk(p, out_dir, private_key, public_key) for p in packages], description, out_dir,
                       private_key, public_key)
