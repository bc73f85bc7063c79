"""playbooks/files/tunnel.sh's parts that need no namespace, in every POSIX shell here (dash, bash, BusyBox ash):
the readers of /proc, the certificate fingerprint, the iperf3 option probe, a host that cannot (no ip, BusyBox's ip
without netns) saying so as "not measurable", and cleanup: idempotent, killing what its pid file names and nothing
else. (Whole tunnels run in tests/integration/test_tunnels_localhost.py.)"""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.parse.tunnel import parse_tunnel

SCRIPT = Path(__file__).resolve().parents[2] / "playbooks" / "files" / "tunnel.sh"


def lib(shell: list[str], body: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`body` run with tunnel.sh's functions loaded (SSLBENCH_TUNNEL_LIB: sourced, nothing run)."""
    script = f"SSLBENCH_TUNNEL_LIB=1; . {SCRIPT}\n{body}\n"
    return subprocess.run([*shell, "-c", script], capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ["PATH"], **env})


def test_proc_readers(posix_shell):
    out = lib(posix_shell, 'proc_times $$; child_times; cpu_line; cores').stdout.split("\n")
    utime, stime = out[0].split()
    assert utime.isdigit() and stime.isdigit()
    assert all(w.isdigit() for w in out[1].split()) and len(out[1].split()) == 2
    assert out[2].split()[0] == "cpu" and len(out[2].split()) >= 8 and all(w.isdigit() for w in out[2].split()[1:])
    assert int(out[3]) == os.cpu_count()
    # a process whose name has spaces and parentheses: its fields are counted after the name
    assert lib(posix_shell, "proc_times 999999999").stdout.strip() == "- -"


def test_a_name_with_spaces_does_not_shift_the_fields(posix_shell, tmp_path):
    tricky = tmp_path / "a b) c"
    shutil.copy("/bin/sleep", tricky)
    proc = subprocess.Popen([str(tricky), "30"])
    try:
        time.sleep(0.2)
        got = lib(posix_shell, f"proc_times {proc.pid}").stdout.split()
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert got == fields[11:13]
    finally:
        proc.kill()
        proc.wait()


def test_fingerprint_and_iperf3_probe(posix_shell):
    out = lib(posix_shell, 'fingerprint "sha256 Fingerprint=AB:CD:EF"; fingerprint "SHA256 Fingerprint=01:02"\n'
                           'SB_IPERF3_HELP="  --idle-timeout  #  --rcv-timeout #"\n'
                           'iperf3_has --idle-timeout && echo idle; iperf3_has --snd-timeout || echo no-snd').stdout
    assert out.split() == ["AB:CD:EF", "01:02", "idle", "no-snd"]


def stripped_path(tmp_path: Path, tools: dict[str, str]) -> str:
    """A PATH of only these tools (name -> the real binary it is)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, target in tools.items():
        os.symlink(target, bin_dir / name)
    return str(bin_dir)


BASICS = ("mkdir", "tr", "rm", "sleep", "cat", "uname")


@pytest.mark.parametrize("ip", [None, "busybox"])
def test_a_host_without_ip_netns_says_so_per_tunnel(posix_shell, tmp_path, ip):
    if ip and not shutil.which("busybox"):
        pytest.skip("no busybox")
    tools = {name: shutil.which(name) for name in BASICS}
    if ip:
        tools["ip"] = shutil.which("busybox")  # BusyBox's ip applet: no netns, as on a stock OpenWrt
    path = stripped_path(tmp_path, tools)
    done = subprocess.run([*posix_shell, str(SCRIPT), "measure", str(tmp_path / "w"), "t", "wireguard", "1", "2"],
                          capture_output=True, text=True, timeout=60, env={"PATH": path})
    assert done.returncode == 0, done.stderr
    [m] = parse_tunnel(done.stdout).measurements
    # Debian's busybox-static ash runs its own applets without a link (a router's ash does not): its ip is found
    own_ip = subprocess.run([*posix_shell, "-c", "command -v ip"], env={"PATH": path}, capture_output=True).returncode
    reason = ("not measurable: no ip command" if ip is None and own_ip != 0 else
              "not measurable: no ip netns (OpenWrt: ip-full): BusyBox")
    assert m.reason.startswith(reason) and m.status == "unsupported"
    assert "\n" not in m.reason
    assert done.stdout.rstrip().endswith("@@ end")


def children(pid: int) -> list[str]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                found.append(stat.parent.name)
        except OSError:  # gone meanwhile
            continue
    return found


def test_cleanup_kills_what_its_pid_file_names_and_is_idempotent(posix_shell, tmp_path):
    (tmp_path / "tunnel").mkdir()
    ours = subprocess.Popen(["sh", "-c", "sleep 60 & wait"])  # a tree: the parent and its sleep
    other = subprocess.Popen(["sleep", "60"])  # not in the file: left alone
    try:
        time.sleep(0.2)
        (tmp_path / "tunnel" / "pids").write_text(f"openvpn-a {ours.pid}\niperf3-client 999999999\n")
        [kid] = children(ours.pid)
        for _ in range(2):
            done = subprocess.run([*posix_shell, str(SCRIPT), "cleanup", str(tmp_path)], capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0 and done.stderr == ""
        assert ours.wait(timeout=10) is not None
        stat = Path(f"/proc/{kid}/stat")
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"  # its child too
        assert other.poll() is None
        assert not (tmp_path / "tunnel" / "pids").exists()
        # a work dir without a tunnel, or none at all
        assert subprocess.run([*posix_shell, str(SCRIPT), "cleanup", str(tmp_path / "none")]).returncode == 0
    finally:
        for proc in (ours, other):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_usage(posix_shell):
    done = subprocess.run([*posix_shell, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage: tunnel.sh measure" in done.stderr
