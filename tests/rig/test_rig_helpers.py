"""Pure helpers of rig.py: reading this machine's apt sources."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rig  # noqa: E402

DEB822 = """Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
"""
NODESOURCE = """Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main
"""
ONE_LINE = """deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main
deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian/ bullseye main contrib
deb http://mirror.example/debian-security bullseye-security main
"""


def test_deb822_sources_give_mirror_and_security():
    assert rig.parse_debian_mirrors([NODESOURCE, DEB822]) == (
        "http://deb.debian.org/debian", "http://deb.debian.org/debian-security")


def test_one_line_sources_with_options_and_foreign_repos():
    assert rig.parse_debian_mirrors([ONE_LINE]) == (
        "http://mirror.example/debian", "http://mirror.example/debian-security")


def test_no_debian_source_gives_none():
    assert rig.parse_debian_mirrors([NODESOURCE]) == (None, None)
