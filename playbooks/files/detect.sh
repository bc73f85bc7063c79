# sslbench detect: print the files and command outputs the controller parses, each after a
# `@@sslbench:<name>` marker line. POSIX sh for BusyBox ash; every probe is optional.
echo ""  # a login shell's start-up text without a newline must not glue onto the first marker
show_file() {
    if [ -r "$1" ]; then
        echo "@@sslbench:$1"
        cat "$1" 2>/dev/null
    fi
}
# The lists come from the controller (orchestrator/run/platforms.py), set before this script by the detect task.
for f in ${SSLBENCH_RELEASE_FILES:-}; do
    show_file "$f"
done
echo "@@sslbench:uname -a"
uname -a 2>/dev/null
echo "@@sslbench:/proc/cpuinfo"
cat /proc/cpuinfo 2>/dev/null
# (without nproc, the controller counts the processors in /proc/cpuinfo)
if command -v nproc >/dev/null 2>&1; then
    echo "@@sslbench:nproc"
    nproc 2>/dev/null
fi
if command -v nvram >/dev/null 2>&1; then
    echo "@@sslbench:nvram get os_version"
    nvram get os_version 2>/dev/null
fi
echo "@@sslbench:openssl"
ssl=$(command -v openssl 2>/dev/null)
if [ -z "$ssl" ]; then
    for candidate in /usr/bin/openssl /usr/sbin/openssl /opt/bin/openssl /usr/local/bin/openssl; do
        if [ -x "$candidate" ]; then
            ssl=$candidate
            break
        fi
    done
fi
echo "$ssl"
if [ -n "$ssl" ]; then
    echo "@@sslbench:openssl version -a"
    "$ssl" version -a 2>&1
fi
echo "@@sslbench:package managers"
for pm in ${SSLBENCH_PACKAGE_MANAGERS:-}; do
    case $pm in
        /*) [ -x "$pm" ] && echo "$pm" ;;
        *) command -v "$pm" >/dev/null 2>&1 && echo "$pm" ;;
    esac
done
# what the measured tunnels need (playbooks/files/tunnel.sh): the tools, and an ip that has netns (BusyBox's has not)
echo "@@sslbench:tunnel tools"
for tool in ip iperf3 openvpn wg wireguard-go; do
    command -v "$tool" >/dev/null 2>&1 && echo "$tool"
done
ip netns list >/dev/null 2>&1 && echo "ip-netns"
# CPU clusters (big.LITTLE) in conditions.sh's format, so the controller can pin single-thread cells.
echo "@@sslbench:cpu clusters"
sys=${SSLBENCH_SYSROOT:-}/sys/devices/system/cpu  # SYSROOT: a fake tree in tests
# `value KEY FILE`: "KEY <its first line>" when readable; read, not $(cat): no process per sysfs file
value() {
    if [ -r "$2" ] && { IFS= read -r _v < "$2" || [ -n "$_v" ]; } 2>/dev/null; then echo "$1 $_v"; fi
}
[ -r "$sys/online" ] && echo "@@ cpus" && value online "$sys/online"
# a policy dir per cluster, or (older kernels) a cpufreq dir per CPU; globs, not `ls`: no process
dirs=
for d in "$sys"/cpufreq/policy[0-9]*; do [ -d "$d" ] && dirs="$dirs $d"; done
if [ -z "$dirs" ]; then
    for d in "$sys"/cpu[0-9]*/cpufreq; do [ -d "$d" ] && dirs="$dirs $d"; done
fi
for d in $dirs; do
    name=${d%/cpufreq}
    echo "@@ cpufreq ${name##*/}"
    for f in cpuinfo_max_freq related_cpus affected_cpus; do
        value "$f" "$d/$f"
    done
done
for c in "$sys"/cpu[0-9]*; do
    [ -d "$c" ] || continue
    echo "@@ topology ${c##*/}"
    for f in topology/physical_package_id topology/cluster_id cpu_capacity online; do
        value "${f#topology/}" "$c/$f"
    done
done
for t in cpu_core cpu_atom; do  # Intel hybrids: P-cores and E-cores
    [ -r "${SSLBENCH_SYSROOT:-}/sys/devices/$t/cpus" ] && echo "@@ hybrid" && value "$t" "${SSLBENCH_SYSROOT:-}/sys/devices/$t/cpus"
done
echo "@@ tools"
command -v taskset >/dev/null 2>&1 && echo "taskset $(command -v taskset)"
echo "@@sslbench:tmp free kb"
# df's fourth number after its header (a long device name wraps the line: the words are joined first)
df -k /tmp 2>/dev/null | {
    read -r _header
    _words=
    while read -r _l; do _words="$_words $_l"; done
    # shellcheck disable=SC2086
    set -- $_words
    echo "${4:-}"
}
echo "@@sslbench:end"
