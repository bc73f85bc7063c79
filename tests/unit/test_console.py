"""parse_console on real captured sessions (tests/data/console) and real logs (tests/data/speed)."""
import random
from pathlib import Path

import pytest

from orchestrator.parse.console import parse_console
from orchestrator.parse.speed import parse_speed

DATA = Path(__file__).resolve().parent.parent / "data"
SESSION = (DATA / "console" / "debian12-x86_64-openssl-3.0.19-session.txt").read_text()


def read(name: str) -> str:
    return (DATA / name).read_text()


def cells(log):
    return {(m.algorithm, m.api, m.threads, m.block_size, m.operation): m.value for m in log.measurements}


def test_real_session_measurements_use_the_command_line_hints():
    log = parse_console(SESSION)
    got = cells(log)
    # `openssl speed -seconds 1 -evp aes-256-gcm -multi 2`: the summary row, 2 threads, evp
    assert got[("aes-256-gcm", "evp", 2, 16, None)] == 42508.51 * 1000
    assert got[("aes-256-gcm", "evp", 2, 16384, None)] == 2579021.82 * 1000
    assert sorted(k[3] for k in got if k[0] == "aes-256-gcm") == [16, 64, 256, 1024, 8192, 16384]
    # `-bytes 1024 -evp chacha20-poly1305`: one column
    assert [k for k in got if k[0] == "chacha20-poly1305"] == [("chacha20-poly1305", "evp", 1, 1024, None)]
    assert got[("chacha20-poly1305", "evp", 1, 1024, None)] == 3084271.13 * 1000
    # `sha256 rsa2048`: a throughput row and a public-key row
    assert len([k for k in got if k[0] == "sha256"]) == 6
    assert {k[4] for k in got if k[0] == "rsa2048"} == {"sign", "verify"}
    assert all(m.openssl_version == "3.0.19" for m in log.measurements)


def test_real_session_facts_and_the_failed_command_is_reported():
    log = parse_console(SESSION)
    assert (log.cpu.model, log.cpu.arch, log.cpu.logical_cpus) == ("AMD EPYC", "x86", 2)
    assert "aes" in log.cpu.crypto and "sha_ni" in log.cpu.crypto
    assert (log.os.family, log.os.version, log.os.machine) == ("debian", "12", "x86_64")
    assert log.openssl.version == "3.0.19"
    assert log.openssl.cpuinfo and log.openssl.cpuinfo.startswith("OPENSSL_ia32cap=")
    assert any("Unknown algorithm chacha20-poly1305" in note for note in log.skipped)
    assert all("-bytes 1024 chacha20-poly1305 sha256" in note for note in log.skipped)  # only the bad command


@pytest.mark.parametrize("mangle", [
    lambda t: t.replace("\n", "\n\n"),          # doubled by a copy from a web page
    lambda t: t.replace("\n", "\r\n"),          # saved on Windows
    lambda t: "\x1b[01;32m" + t.replace("root@vm", "\x1b[01;32mroot@vm\x1b[00m"),  # colour prompts
])
def test_doubled_newlines_crlf_and_colours_change_nothing(mangle):
    original, mangled = parse_console(SESSION), parse_console(mangle(SESSION))
    assert cells(mangled) == cells(original)
    assert mangled.cpu == original.cpu
    assert mangled.os == original.os
    assert mangled.openssl == original.openssl


def test_lost_newlines_keep_facts_and_measurements():
    original, flat = parse_console(SESSION), parse_console(SESSION.replace("\n", " "))
    assert (flat.cpu.model, flat.cpu.logical_cpus, flat.cpu.crypto) == (
        original.cpu.model, original.cpu.logical_cpus, original.cpu.crypto)
    assert (flat.os.family, flat.os.version, flat.os.kernel) == (original.os.family, original.os.version, original.os.kernel)
    assert flat.openssl.version == "3.0.19"
    want, got = cells(original), cells(flat)
    assert got.keys() == want.keys()  # throughput and the rsa2048 sign/verify row
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-6)


@pytest.mark.parametrize("path", sorted((DATA / "speed").glob("*.txt")), ids=lambda p: p.name)
def test_bare_speed_logs_pass_through_to_parse_speed(path):
    text = path.read_text()
    assert cells(parse_console(text)) == cells(parse_speed(text))
    log = parse_console(text)
    assert log.measurements or log.skipped  # results, or what openssl complained about


def test_openwrt_session_with_opkg_noise_and_a_multi_log():
    speed = read("speed/openssl-1.1.1w-armv7l-qemu-multi2-chacha20-poly1305.txt")
    session = (
        "root@OpenWrt:~# opkg update\n"
        "Downloading https://downloads.openwrt.org/releases/22.03.5/packages/Packages.gz\n"
        "Updated list of available packages in /var/opkg-lists/openwrt_core\n"
        "root@OpenWrt:~# opkg install openssl-util\n"
        "Installing openssl-util (1.1.1w-1) to root...\n"
        "Configuring openssl-util.\n"
        "root@OpenWrt:~# openssl speed -multi 2 -evp chacha20-poly1305\n" + speed +
        "root@OpenWrt:~# cat /proc/cpuinfo\n" + read("facts/cpuinfo-mips-74kc-ar9344-wndr3700v4.txt") +
        "root@OpenWrt:~# cat /etc/openwrt_release\n" + read("facts/openwrt_release-18.06.1-ar71xx.txt") +
        "root@OpenWrt:~# "
    )
    log = parse_console(session)
    got = cells(log)
    assert {k[:3] for k in got} == {("chacha20-poly1305", "evp", 2)}
    assert got[("chacha20-poly1305", "evp", 2, 16, None)] == 82660.08 * 1000  # the 1.1.1 `evp` summary row
    assert (log.cpu.model, log.cpu.system_type) == ("MIPS 74Kc V4.12", "Atheros AR9344 rev 2")
    assert (log.os.family, log.os.version, log.os.revision) == ("openwrt", "18.06.1", "r7258-5eb055306f")
    assert log.openssl.version == "1.1.1w"
    assert not log.skipped


@pytest.mark.parametrize(
    "name, family, machine, model",
    [
        ("console/openwrt-18.06-gl-usb150-mips24kc-session.txt", "openwrt", "mips", "MIPS 24Kc V7.4"),
        ("console/dockerpi-raspbian-buster-armv6-session.txt", "raspbian", "armv6l", "ARM1176"),
        ("console/raspbian-pi4-armv7l-uname-cpuinfo-session.txt", "unknown", "armv7l", "Cortex-A72"),
        ("console/centos-7.6-os-release-redhat-release-session.txt", "centos", None, None),
        ("console/ddwrt-v3.0-r44715-ssh-login-banner.txt", "ddwrt", None, None),
    ],
)
def test_real_facts_sessions(name, family, machine, model):
    log = parse_console(read(name))
    assert (log.os.family, log.os.machine, log.cpu.model) == (family, machine, model)
    assert log.measurements == []
    assert log.skipped == []


def test_centos_session_version_from_redhat_release_and_kernel_from_uname_r():
    log = parse_console(read("console/centos-7.6-os-release-redhat-release-session.txt"))
    assert (log.os.version, log.os.kernel, log.os.name) == ("7.6.1810", "3.10.0-957.el7.x86_64", "CentOS Linux 7 (Core)")


def test_sbc_bench_excerpt_without_command():
    log = parse_console(read("console/sbc-bench-radxa-zero-openssl-1.1.1w-aes-cbc.txt"))
    assert {m.algorithm for m in log.measurements} == {"aes-128-cbc", "aes-192-cbc", "aes-256-cbc"}
    assert log.openssl.version == "1.1.1w"


@pytest.mark.parametrize("prompt", ["[root@host ~]# ", "pi@raspberrypi:~ $ ", "bash-4.2$ ", "$ ", "# ",
                                    "weid:~ jd$ ", "root@OpenWrt:/tmp# ", "user@host ~ $ ",
                                    "PS C:\\Users\\me> ", "C:\\> "])
def test_prompt_styles(prompt):
    uname = read("facts/uname-rock5b-aarch64.txt")
    log = parse_console(f"{prompt}uname -a\n{uname}{prompt}cat /proc/cpuinfo\n"
                        + read("facts/cpuinfo-aarch64-rock5b-rk3588.txt") + prompt)
    assert (log.os.kernel, log.os.machine) == ("5.10.110-34-rockchip-gca15bbe36e6c", "aarch64")
    assert log.cpu.logical_cpus == 8


@pytest.mark.parametrize("marker", ["==> {} <==", "@@ {}"])
def test_detect_step_section_markers(marker):
    text = "\n".join([
        marker.format("/etc/os-release"), read("facts/os-release-raspbian-11.txt"),
        marker.format("/proc/cpuinfo"), read("facts/cpuinfo-armv7-pi4-32bit-kernel.txt"),
        marker.format("uname -a"), read("facts/uname-raspbian-11-armv7l.txt"),
    ])
    log = parse_console(text)
    assert (log.os.family, log.os.version, log.os.kernel) == ("raspbian", "11", "6.1.21-v7+")
    assert (log.cpu.model, log.cpu.logical_cpus) == ("Cortex-A72", 4)


def test_real_head_output_with_file_headers_as_the_detect_step_prints_it():
    log = parse_console(read("console/detect-head-markers-debian12-x86_64.txt"))
    assert (log.cpu.model, log.cpu.logical_cpus) == ("AMD EPYC", 2)
    assert (log.os.family, log.os.version, log.os.kernel) == ("debian", "12", "6.18.44-fc-v1098")
    assert log.openssl.version == "3.0.19" and log.openssl.platform == "debian-amd64"
    assert log.measurements == [] and log.skipped == []


def test_marker_files_decide_the_family_when_nothing_else_does():
    assert parse_console("==> /etc/alpine-release <==\n3.18.4\n").os.family == "alpine"
    assert parse_console("==> /etc/debian_version <==\n12.5\n").os.family == "debian"


def test_facts_commands_that_failed_are_reported():
    log = parse_console("root@OpenWrt:~# cat /proc/cpuinfo\ncat: can't open '/proc/cpuinfo': No such file or directory\n"
                        "root@OpenWrt:~# cat /etc/os-release\ncat: can't open '/etc/os-release': No such file or directory\n")
    assert log.skipped == [
        "`cat /proc/cpuinfo`: no cpuinfo fields in its output (cat: can't open '/proc/cpuinfo': No such file or directory)",
        "`cat /etc/os-release`: no KEY=value lines in its output (cat: can't open '/etc/os-release': No such file or directory)",
    ]
    assert log.cpu.model is None and log.os.family is None


def test_facts_are_recognised_without_their_command():
    text = read("facts/os-release-debian-12.txt") + "\n" + read("facts/cpuinfo-x86_64-amd-epyc-2cpu.txt")
    log = parse_console(text)
    assert (log.os.family, log.cpu.model) == ("debian", "AMD EPYC")


def test_a_session_quoted_in_a_forum_post_keeps_its_facts():
    # "> " before every line hides the prompts: the whole text is one speed segment, whose non-speed lines
    # (unquoted by the speed parser) still give the facts.
    text = (DATA / "speed" / "openssl-1.1.1w-armv7l-constructed-console-openwrt.txt").read_text()
    plain, quoted = parse_console(text), parse_console("\n".join("> " + line for line in text.split("\n")))
    assert (quoted.cpu.model, quoted.cpu.logical_cpus, quoted.os.kernel) == ("Cortex-A7", 1, "5.15.167")
    assert (quoted.cpu.model, quoted.os.kernel) == (plain.cpu.model, plain.os.kernel)
    assert cells(quoted) == cells(plain)


def test_lscpu_is_not_mistaken_for_cpuinfo():
    log = parse_console("Architecture: aarch64\nModel name: Cortex-A53\nFlags: fp asimd evtstrm aes pmull\n")
    assert log.cpu.model is None and log.cpu.arch is None


@pytest.mark.parametrize("text", ["", "\n\n\n", "hello\nworld\n", "$ \n# \n", "\x00\xff" * 50, "+F:x:y:z\n",
                                  "type 16 bytes\naes-128-cbc 1k 2k\n", "root@x:~# openssl speed\n"])
def test_nonsense_never_raises(text):
    log = parse_console(text)
    assert log.measurements == [] or all(m.algorithm for m in log.measurements)


def test_random_cuts_of_a_real_session_never_raise():
    rng = random.Random(7)
    for _ in range(150):
        start = rng.randrange(len(SESSION))
        piece = SESSION[start:start + rng.randrange(1, 3000)]
        if rng.random() < 0.3:
            piece = piece.replace("\n", " ")
        assert parse_console(piece).errors == [], piece  # no reader's exception caught by the safety net


# ----------------------------------------------------------------------------- every sample reads fully
# A regression once made parse_console find nothing in the sbc-bench report (rows ending in ` (Cortex-A53)`):
# each sample's exact count of records and some exact figures, so that can never pass silently again.
# The shared samples (/work/shared/samples) are copied byte for byte into tests/data/speed.

SHARED = Path("/work/shared/samples")
SAMPLES = {
    "speed/openssl-1.1.1w-armv7l-qemu-evp-aes-128-gcm.txt": (6, {
        ("aes-128-gcm", "evp", 1, 16, None): 12630540.0, ("aes-128-gcm", "evp", 1, 16384, None): 30703620.0}),
    "speed/openssl-1.1.1w-armv7l-qemu-multi2-chacha20-poly1305.txt": (6, {
        ("chacha20-poly1305", "evp", 2, 16, None): 82660080.0,
        ("chacha20-poly1305", "evp", 2, 16384, None): 343769090.0}),
    "speed/openssl-3.0.19-x86_64-evp-aes-128-gcm.txt": (6, {
        ("aes-128-gcm", "evp", 1, 16, None): 39975100.0, ("aes-128-gcm", "evp", 1, 16384, None): 3333105580.0}),
    "speed/openssl-3.0.19-x86_64-mr-chacha20-poly1305.txt": (6, {
        ("chacha20-poly1305", "evp", 1, 16, None): 247182695.38,
        ("chacha20-poly1305", "evp", 1, 16384, None): 3603096935.06}),
    "speed/openssl-3.0.19-x86_64-multi2-aes-256-gcm.txt": (6, {
        ("aes-256-gcm", "evp", 2, 16, None): 46152430.0, ("aes-256-gcm", "evp", 2, 16384, None): 4550770690.0}),
    "speed/openssl-3.0.19-x86_64-sha256-rsa2048.txt": (8, {
        ("sha256", None, 1, 16, None): 88021140.0, ("rsa2048", None, 1, None, "verify"): 49422.9}),
    # sbc-bench: one row per CPU cluster, the core in Measurement.cpu (see parse/speed/tables.py
    # read_labelled_row); the summary's quoted copies of the rows add nothing.
    "console/sbc-bench-armsom-sige5-full-report.txt": (12, {
        ("aes-256-cbc", "legacy", 1, 16, None, "Cortex-A53"): 146626410.0,
        ("aes-256-cbc", "legacy", 1, 16384, None, "Cortex-A53"): 1008697340.0,
        ("aes-256-cbc", "legacy", 1, 16, None, "Cortex-A72"): 360550090.0,
        ("aes-256-cbc", "legacy", 1, 16384, None, "Cortex-A72"): 1329293990.0}),
    "console/sbc-bench-radxa-zero-openssl-1.1.1w-aes-cbc.txt": (36, {
        ("aes-128-cbc", "evp", 1, 16, None): 116163840.0, ("aes-256-cbc", "evp", 1, 16384, None): 838762500.0}),
    # 30 throughput rows x 6 sizes + 7 RSA x 2 + 3 DSA x 2 + 22 ECDSA x 2 + 24 ECDH + 2 EdDSA x 2
    "speed/full-runs/openssl-1.1.1w-x86_64-all-algorithms.txt": (272, {
        ("md4", None, 1, 16, None): 109834450.0, ("rand", "legacy", 1, 16384, None): 5229462830.0,
        ("rsa15360", None, 1, None, "verify"): 1006.2, ("ecdhbrp512t1", None, 1, None, "op"): 849.0,
        ("ed448", None, 1, None, "verify"): 1876.5}),
    "speed/full-runs/openssl-3.5.9-x86_64-all-algorithms.txt": (342, {
        ("md5", None, 1, 16, None): 75032100.0, ("slh-dsa-shake-256f", None, 1, None, "verify"): 296.2}),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_reads_fully(name):
    count, expected = SAMPLES[name]
    log = parse_console(read(name))
    assert len(log.measurements) == count
    got: dict[tuple, list] = {}  # a key can have several records (sbc-bench runs each row twice)
    for m in log.measurements:
        key = (m.algorithm, m.api, m.threads, m.block_size, m.operation)
        got.setdefault(key + ((m.cpu,) if m.cpu else ()), []).append(m.value)
    assert {key: value for key, value in expected.items() if value in got.get(key, [])} == expected
    assert not [note for note in log.skipped if "values for" in note] and log.errors == []


@pytest.mark.skipif(not SHARED.is_dir(), reason="no /work/shared/samples on this machine")
@pytest.mark.parametrize("path", sorted(SHARED.glob("*")) if SHARED.is_dir() else [], ids=lambda p: p.name)
def test_every_shared_sample_is_covered(path):
    """A sample added to the shared folder must be copied here and given its expectations above."""
    assert f"speed/{path.name}" in SAMPLES
    assert (DATA / "speed" / path.name).read_bytes() == path.read_bytes()


def test_sbc_bench_cluster_rows_alone_and_quoted_summary_alone():
    report = read("console/sbc-bench-armsom-sige5-full-report.txt")
    lines = report.splitlines()
    table = "\n".join(lines[lines.index("Executing benchmark on each cluster individually"):][:6])
    def by_core(log):
        return {(m.cpu, m.algorithm, m.block_size): (m.value, m.api) for m in log.measurements}

    full = by_core(parse_console(report))
    assert len(full) == 12 and {key[0] for key in full} == {"Cortex-A53", "Cortex-A72"}
    assert by_core(parse_console(table)) == full
    summary = report[report.index("### Performance baseline"):report.index("### Storage devices")]
    quoted = by_core(parse_console(summary))  # no header, no version: api unknown, the same figures
    assert {k: v[0] for k, v in quoted.items()} == {k: v[0] for k, v in full.items()}


def test_markdown_heading_is_not_a_root_prompt():
    """`# ArmSoM Sige5` (sbc-bench's Markdown summary) is a title; `# openssl speed …` is a command."""
    row = "aes-128-cbc     116163.84k   370622.42k   792904.70k  1159008.60k  1338616.49k  1352876.03k"
    text = f"OpenSSL 1.1.1w, built on 11 Sep 2023\ntype 16 bytes 64 bytes 256 bytes 1024 bytes 8192 bytes 16384 bytes\n{row}\n"
    log = parse_console(text + "\n# ArmSoM Sige5\n\n* `" + row + "`\n")
    assert len(log.measurements) == 6 and {m.openssl_version for m in log.measurements} == {"1.1.1w"}
    log = parse_console("# openssl speed -seconds 1 aes-128-cbc\n" + text)
    assert {m.api for m in log.measurements} == {"legacy"}  # the command line was read
