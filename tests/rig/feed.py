"""Builds the test rig's OpenWrt package feed: real .ipk archives around real Debian binaries.

An .ipk (as OpenWrt's ipkg-build writes it) is a gzip'd tar holding ./debian-binary,
./control.tar.gz and ./data.tar.gz; a feed is a directory of them plus Packages and Packages.gz.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Ipk:
    name: str
    version: str
    arch: str
    description: str
    depends: list[str] = field(default_factory=list)
    section: str = "libs"
    license: str = "Apache-2.0"
    # path on the target (absolute) -> file on this machine whose bytes go there
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def filename(self) -> str:
        return f"{self.name}_{self.version}_{self.arch}.ipk"


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = 0  # reproducible archives: the feed's checksums only change with the binaries
    tar.addfile(info, io.BytesIO(data))


def _add_dir(tar: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    tar.addfile(info)


def _targz(fill) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
            fill(tar)
    return buf.getvalue()


def control_text(pkg: Ipk, installed_size: int) -> str:
    lines = [f"Package: {pkg.name}", f"Version: {pkg.version}"]
    if pkg.depends:
        lines.append("Depends: " + ", ".join(pkg.depends))
    lines += [
        f"License: {pkg.license}",
        f"Section: {pkg.section}",
        f"Architecture: {pkg.arch}",
        f"Installed-Size: {installed_size}",
        f"Description: {pkg.description}",
    ]
    return "\n".join(lines) + "\n"


def build_ipk(pkg: Ipk, out_dir: Path) -> str:
    """Write pkg's .ipk into out_dir; return its paragraph for the feed's Packages index."""
    payload = {dest: src.read_bytes() for dest, src in sorted(pkg.files.items())}
    installed_size = sum(len(b) for b in payload.values())

    def fill_data(tar: tarfile.TarFile) -> None:
        dirs: set[str] = set()
        for dest, data in payload.items():
            parts = dest.strip("/").split("/")
            for i in range(1, len(parts)):
                d = "./" + "/".join(parts[:i]) + "/"
                if d not in dirs:
                    dirs.add(d)
                    _add_dir(tar, d)
            mode = 0o755 if dest.startswith(("/usr/bin/", "/bin/", "/usr/sbin/")) else 0o644
            _add_bytes(tar, "./" + dest.strip("/"), data, mode)

    control = control_text(pkg, installed_size)
    data_tgz = _targz(fill_data)
    control_tgz = _targz(lambda tar: _add_bytes(tar, "./control", control.encode()))

    def fill_outer(tar: tarfile.TarFile) -> None:
        _add_bytes(tar, "./debian-binary", b"2.0\n")
        _add_bytes(tar, "./data.tar.gz", data_tgz)
        _add_bytes(tar, "./control.tar.gz", control_tgz)

    ipk = _targz(fill_outer)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / pkg.filename).write_bytes(ipk)
    return (
        control
        + f"Filename: {pkg.filename}\nSize: {len(ipk)}\n"
        + f"SHA256sum: {hashlib.sha256(ipk).hexdigest()}\n"
    )


def write_feed(packages: list[Ipk], out_dir: Path) -> None:
    """Build every package into out_dir and write its Packages and Packages.gz index."""
    out_dir.mkdir(parents=True, exist_ok=True)
    index = "\n".join(build_ipk(p, out_dir) for p in packages)
    (out_dir / "Packages").write_text(index)
    with gzip.GzipFile(out_dir / "Packages.gz", "wb", mtime=0) as gz:
        gz.write(index.encode())
