"""parse_cpuinfo on real /proc/cpuinfo texts (tests/data/facts, sources in its README)."""
from pathlib import Path

import pytest

from orchestrator.parse.cpuinfo import ARM_PARTS, parse_cpuinfo

FACTS = Path(__file__).resolve().parent.parent / "data" / "facts"


def cpuinfo(name: str):
    return parse_cpuinfo((FACTS / name).read_text())


def test_x86_this_machine_model_count_and_crypto_flags():
    cpu = cpuinfo("cpuinfo-x86_64-amd-epyc-2cpu.txt")
    assert cpu.arch == "x86"
    assert cpu.model == "AMD EPYC"
    assert cpu.logical_cpus == 2
    assert cpu.crypto == ["aes", "pclmulqdq", "sha_ni", "avx2", "vaes", "vpclmulqdq"]
    assert cpu.bogomips == 5192.28
    assert cpu.cores == []
    assert cpu.system_type is None  # x86 `model : 17` is a number, not a board name


def test_arm64_big_little_rk3588_cores_per_cpu_and_crypto():
    cpu = cpuinfo("cpuinfo-aarch64-rock5b-rk3588.txt")
    assert cpu.arch == "arm"
    assert cpu.logical_cpus == 8
    assert cpu.cores == ["Cortex-A55"] * 4 + ["Cortex-A76"] * 4
    assert cpu.model == "4x Cortex-A55 + 4x Cortex-A76"
    assert cpu.crypto == ["aes", "pmull", "sha1", "sha2", "asimd"]
    assert cpu.bogomips == 48.0


def test_armv7_kernel_on_cortex_a72_has_neon_but_no_aes():
    cpu = cpuinfo("cpuinfo-armv7-pi4-32bit-kernel.txt")
    assert (cpu.arch, cpu.model, cpu.logical_cpus) == ("arm", "Cortex-A72", 4)
    assert cpu.crypto == ["neon"]
    assert cpu.system_type == "BCM2711"


def test_armv6_old_kernel_without_processor_numbers_counts_one_cpu():
    cpu = cpuinfo("cpuinfo-armv6-pi-model-b-old-kernel.txt")
    assert cpu.arch == "arm"
    assert cpu.logical_cpus == 1
    assert cpu.cores == ["ARM1176"]
    assert cpu.model == "ARM1176"
    assert cpu.system_type == "BCM2708"
    assert cpu.crypto == []


@pytest.mark.parametrize(
    "name, model, system_type, bogomips",
    [
        ("cpuinfo-mips-24kc-ar9330-gl-usb150.txt", "MIPS 24Kc V7.4", "Atheros AR9330 rev 1", 265.42),
        ("cpuinfo-mips-74kc-ar9344-wndr3700v4.txt", "MIPS 74Kc V4.12", "Atheros AR9344 rev 2", 278.93),
    ],
)
def test_mips_cpu_model_system_type_bogomips(name, model, system_type, bogomips):
    cpu = cpuinfo(name)
    assert (cpu.arch, cpu.model, cpu.system_type, cpu.bogomips, cpu.logical_cpus) == (
        "mips", model, system_type, bogomips, 1)
    assert cpu.crypto == []


def test_crlf_and_unknown_parts_do_not_break_parsing():
    text = (FACTS / "cpuinfo-aarch64-rock5b-rk3588.txt").read_text().replace("0xd0b", "0xfff").replace("\n", "\r\n")
    cpu = parse_cpuinfo(text)
    assert cpu.logical_cpus == 8
    assert cpu.cores == ["Cortex-A55"] * 4  # unknown parts are left out, not guessed
    assert cpu.model == "Cortex-A55"


def test_non_arm_implementer_is_not_mapped_with_arm_part_table():
    text = "processor\t: 0\nFeatures\t: fp asimd aes\nCPU implementer\t: 0x51\nCPU part\t: 0xd03\n"
    assert parse_cpuinfo(text).cores == []  # Qualcomm 0xd03 is not ARM's Cortex-A53


def test_core_name_table_covers_the_documented_parts():
    expected = {0xD03: "Cortex-A53", 0xD04: "Cortex-A35", 0xD05: "Cortex-A55", 0xD07: "Cortex-A57",
                0xD08: "Cortex-A72", 0xD09: "Cortex-A73", 0xD0A: "Cortex-A75", 0xD0B: "Cortex-A76",
                0xD0C: "Neoverse-N1", 0xD0D: "Cortex-A77", 0xD41: "Cortex-A78", 0xD44: "Cortex-X1",
                0xD46: "Cortex-A510", 0xD47: "Cortex-A710", 0xD48: "Cortex-X2", 0xD4D: "Cortex-A715",
                0xD4E: "Cortex-X3", 0xB76: "ARM1176", 0xC07: "Cortex-A7", 0xC08: "Cortex-A8",
                0xC09: "Cortex-A9", 0xC0F: "Cortex-A15", 0xC0D: "Cortex-A17", 0xC0E: "Cortex-A17"}
    assert {part: ARM_PARTS[part] for part in expected} == expected


@pytest.mark.parametrize("text", ["", "hello world\n", "\x00\x01binary", "processor : x\n", ":::\n"])
def test_garbage_gives_empty_facts_not_an_exception(text):
    cpu = parse_cpuinfo(text)
    assert cpu.logical_cpus is None
    assert cpu.crypto == []
