"""The rig's .ipk builder writes what opkg reads: gzip'd tar of debian-binary, control.tar.gz, data.tar.gz."""
import gzip
import hashlib
import io
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import feed  # noqa: E402


def members(blob: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        return {m.name: (tar.extractfile(m).read() if m.isfile() else b"") for m in tar.getmembers()}


def test_ipk_layout_control_and_index(tmp_path):
    payload = tmp_path / "tool"
    payload.write_bytes(b"\x7fELF pretend binary")
    pkg = feed.Ipk("demo-util", "1.2.3-1", "mipsel_24kc", "A demo.", depends=["libc", "libdemo"],
                   section="utils", files={"/usr/bin/demo": payload})
    paragraph = feed.build_ipk(pkg, tmp_path / "out")

    ipk = (tmp_path / "out" / "demo-util_1.2.3-1_mipsel_24kc.ipk").read_bytes()
    outer = members(ipk)
    assert list(outer) == ["./debian-binary", "./data.tar.gz", "./control.tar.gz"]
    assert outer["./debian-binary"] == b"2.0\n"
    control = members(outer["./control.tar.gz"])["./control"].decode()
    assert "Package: demo-util\nVersion: 1.2.3-1\nDepends: libc, libdemo\n" in control
    assert f"Installed-Size: {len(payload.read_bytes())}\n" in control
    data = members(outer["./data.tar.gz"])
    assert data["./usr/bin/demo"] == payload.read_bytes()
    assert "./usr/bin" in data  # parent directories are in the archive, as ipkg-build writes them

    assert paragraph.startswith(control)
    assert f"Size: {len(ipk)}\n" in paragraph
    assert f"SHA256sum: {hashlib.sha256(ipk).hexdigest()}\n" in paragraph


def test_feed_index_lists_every_package_and_is_gzipped(tmp_path):
    src = tmp_path / "lib"
    src.write_bytes(b"lib")
    pkgs = [feed.Ipk(n, "1-1", "all", "x", files={f"/usr/lib/{n}.so": src}) for n in ("liba", "libb")]
    feed.write_feed(pkgs, tmp_path / "feed")
    index = (tmp_path / "feed" / "Packages").read_text()
    assert index.count("Package: ") == 2 and "Filename: libb_1-1_all.ipk" in index
    assert gzip.decompress((tmp_path / "feed" / "Packages.gz").read_bytes()).decode() == index
    # Paragraphs are separated by one blank line, as opkg's parser expects.
    assert "\n\nPackage: libb\n" in index
