#!/bin/sh
# sslbench conditions: the evidence that makes a benchmark figure trustworthy.
#
# Plain POSIX sh for BusyBox ash, dash and bash: no arrays, no [[ ]], no +=, no here-strings,
# no awk/sed/tr (not every router has them).  Only `cat`, `sleep`, `date` and shell builtins.
#
# Usage:
#   conditions.sh [snapshot [LABEL]]     full snapshot: clocks, governors, time_in_state, thermal,
#                                        offline cores, swap, get_throttled, /proc/crypto, topology
#   conditions.sh before | after         the same, labelled before / after (after without the sections a run
#                                        cannot change: topology, tools, kernel crypto, OpenSSL engines/providers)
#   conditions.sh quick [LABEL]          only what changes during a run (per-cell before/after)
#   conditions.sh idle-wait MAX_SECONDS LOAD [QUIET_SECONDS [SAMPLE_SECONDS [CPU_LIMIT]]]
#                                        wait until the host is idle, bounded by MAX_SECONDS
#   conditions.sh cell EVIDENCE_FILE -- COMMAND [ARGS...]
#                                        run COMMAND (stdout/stderr untouched), write a quick snapshot
#                                        before and after it, the CPU it really ran on and the CPU it
#                                        used to EVIDENCE_FILE ("-" = stdout, after the command); exits
#                                        with COMMAND's status
#
# Output is line-based between `@@ begin sslbench-<kind> 1 LABEL` and `@@ end sslbench-<kind>`,
# one `@@ SECTION [NAME]` line per section; a file the host lacks gives a `note:` line instead.
# orchestrator/evidence/conditions.py reads it.  SSLBENCH_SYSROOT (tests) prefixes /proc and /sys
# for the snapshot files; process-related reads (/proc/PID/stat) always use the real /proc.
# Sourcing it with SSLBENCH_CONDITIONS_LIB=1 only defines the functions.

SYSROOT=${SSLBENCH_SYSROOT:-}
CPU_SYS=$SYSROOT/sys/devices/system/cpu

note() {
    echo "note: $*"
}

# print "KEY VALUE" from a one-line file, or a note when the host lacks it
show() {
    if [ -r "$2" ] && IFS= read -r _v < "$2" 2>/dev/null; then
        echo "$1 $_v"
    elif [ -r "$2" ]; then
        # a file whose read fails (EINVAL/EIO on some drivers) or is empty
        _v=$(cat "$2" 2>/dev/null)
        if [ -n "$_v" ]; then echo "$1 $_v"; else note "unreadable ${2#"$SYSROOT"}"; fi
    else
        note "no ${2#"$SYSROOT"}"
    fi
}

NL='
'

# FILE's lines on stdout, read by the shell and printed by one printf (a builtin in dash and BusyBox ash, and it
# leaves backslashes alone, which dash's echo does not): no process for a small file. bash reads it in one pass
# (see each_line).
print_file() {
    _text=
    if [ -n "${BASH_VERSION:-}" ]; then
        # shellcheck disable=SC3045  # read -d: bash only, in its own branch
        { IFS= read -r -d '' _text; :; } < "$1" || return 1  # 1 only when it cannot be opened
        case $_text in *"$NL" | "") ;; *) _text=$_text$NL ;; esac
    else
        while IFS= read -r _l || [ -n "$_l" ]; do
            _text="$_text$_l$NL"
        done < "$1" || return 1
    fi
    printf '%s' "$_text"
}

# Calls EACH with every line of a /proc FILE that changes while it is read (a process's status, /proc/stat, the
# refcnt lines of /proc/crypto), until EACH returns 1; empty lines may be left out. /proc writes a file anew
# whenever its reader seeks, and bash's `read` seeks back after each line: line by line, the file could change
# between two lines and come out with a line cut or lost (1 read in 200 of a busy process's status, on a loaded
# machine). So bash takes it in one `read -d` (up to STOP, a character none of the wanted lines has; the whole
# file without one) and splits it in one pass; dash and BusyBox ash read byte by byte, never seeking.
each_line() {
    [ -r "$1" ] || return 1
    if [ -z "${BASH_VERSION:-}" ]; then
        while IFS= read -r _el_line || [ -n "$_el_line" ]; do "$3" "$_el_line" || break; done < "$1"
        return 0
    fi
    # shellcheck disable=SC3045  # read -d: bash only (the other shells returned above)
    IFS= read -r -d "$2" _el_text < "$1"  # status 1 at the end of the file: not an error
    _el_each=$3
    set -f
    IFS=$NL
    # shellcheck disable=SC2086
    set -- $_el_text
    unset IFS  # this script never sets IFS for more than one command: back to the default
    set +f
    for _el_line do
        "$_el_each" "$_el_line" || break
    done
}

# copy a whole file, or a note (no process for the small /proc and /sys files of a snapshot, which a router's
# slow fork would make the dearest part of it)
dump() {
    if [ -r "$1" ]; then
        print_file "$1" 2>/dev/null || note "unreadable ${1#"$SYSROOT"}"
    else
        note "no ${1#"$SYSROOT"}${2:+ ($2)}"
    fi
}

# the wall clock in full snapshots; a quick one (around each cell) has the uptime only: no `date` process
sec_time() {
    echo "@@ time"
    [ -n "$1" ] || echo "epoch $(date +%s 2>/dev/null)"
    show uptime "$SYSROOT/proc/uptime"
}

sec_loadavg() {
    echo "@@ loadavg"
    show loadavg "$SYSROOT/proc/loadavg"
}

# only the cpu lines of /proc/stat: enough for CPU use over an interval
sec_stat() {
    echo "@@ stat"
    # the cpu lines come first, then "intr"
    each_line "$SYSROOT/proc/stat" i cpu_line || note "no /proc/stat"
}

cpu_line() {
    case $1 in
        cpu*) echo "$1" ;;
        *) return 1 ;;
    esac
}

sec_cpus() {
    echo "@@ cpus"
    for _f in online offline present possible; do
        if [ -r "$CPU_SYS/$_f" ]; then
            IFS= read -r _v < "$CPU_SYS/$_f" || _v=
            echo "$_f $_v"  # offline is usually an empty line: that is information too
        else
            note "no /sys/devices/system/cpu/$_f"
        fi
    done
}

# one cpufreq directory: policyN (kernel >= 4.3) or cpuN/cpufreq (older kernels)
policy_dir() {
    _d=$1
    _name=$2
    _quick=$3
    echo "@@ cpufreq $_name"
    if [ -z "$_quick" ]; then
        for _f in affected_cpus scaling_driver scaling_available_governors \
            cpuinfo_min_freq cpuinfo_max_freq scaling_min_freq; do
            show "$_f" "$_d/$_f"
        done
    fi
    # scaling_max_freq drops when a thermal cap bites: read it every time
    for _f in related_cpus scaling_max_freq scaling_governor scaling_cur_freq; do
        show "$_f" "$_d/$_f"
    done
    if [ -r "$_d/stats/time_in_state" ]; then
        echo "@@ time_in_state $_name"
        cat "$_d/stats/time_in_state" 2>/dev/null || note "unreadable ${_d#"$SYSROOT"}/stats/time_in_state"
    else
        note "no ${_d#"$SYSROOT"}/stats/time_in_state (kernel without CONFIG_CPU_FREQ_STAT)"
    fi
}

sec_cpufreq() {
    _quick=$1
    _found=
    for _d in "$CPU_SYS"/cpufreq/policy*; do
        [ -d "$_d" ] || continue
        _found=1
        policy_dir "$_d" "${_d##*/}" "$_quick"
    done
    if [ -z "$_found" ]; then
        for _d in "$CPU_SYS"/cpu[0-9]*/cpufreq; do
            [ -d "$_d" ] || continue
            _found=1
            _c=${_d%/cpufreq}
            policy_dir "$_d" "${_c##*/}" "$_quick"
        done
    fi
    [ -n "$_found" ] || note "no /sys/devices/system/cpu/cpufreq policies (no cpufreq driver: clock unknown)"
}

sec_thermal() {
    _found=
    for _z in "$SYSROOT"/sys/class/thermal/thermal_zone*; do
        [ -d "$_z" ] || continue
        _found=1
        echo "@@ thermal ${_z##*/}"
        show type "$_z/type"
        show temp "$_z/temp"
    done
    [ -n "$_found" ] || note "no /sys/class/thermal zones (temperature unknown)"
}

sec_topology() {
    _found=
    for _c in "$CPU_SYS"/cpu[0-9]*; do
        [ -d "$_c" ] || continue
        _found=1
        echo "@@ topology ${_c##*/}"
        for _f in topology/physical_package_id topology/cluster_id topology/core_id cpu_capacity online; do
            # cpu0 often has no `online` file, and only ARM has cpu_capacity: no note for those
            [ -r "$_c/$_f" ] && show "${_f#topology/}" "$_c/$_f"
        done
    done
    [ -n "$_found" ] || note "no /sys/devices/system/cpu/cpuN (no sysfs: topology unknown)"
    # Intel hybrids list their P-cores and E-cores per PMU: the core type x86's /proc/cpuinfo lacks
    for _t in cpu_core cpu_atom; do
        [ -r "$SYSROOT/sys/devices/$_t/cpus" ] && echo "@@ hybrid" && show "$_t" "$SYSROOT/sys/devices/$_t/cpus"
    done
}

sec_swap() {
    echo "@@ meminfo"
    each_line "$SYSROOT/proc/meminfo" "" memory_line || note "no /proc/meminfo"
    echo "@@ swaps"
    dump "$SYSROOT/proc/swaps"
}

memory_line() {
    case $1 in
        MemTotal:* | MemAvailable:* | SwapTotal:* | SwapFree:*) echo "$1" ;;
    esac
}

# Raspberry Pi firmware's throttling bits; absent everywhere else
sec_throttled() {
    if command -v vcgencmd >/dev/null 2>&1; then
        echo "@@ throttled"
        vcgencmd get_throttled 2>&1 || note "vcgencmd get_throttled failed"
    else
        note "no vcgencmd (not a Raspberry Pi firmware)"
    fi
}

sec_tools() {
    echo "@@ tools"
    for _t in taskset nproc; do
        _p=$(command -v "$_t" 2>/dev/null)
        if [ -n "$_p" ]; then echo "$_t $_p"; else note "no $_t"; fi
    done
}

# /proc/crypto entries a TLS/VPN cipher could use: which driver (and so which hardware) wins
sec_crypto() {
    if [ ! -r "$SYSROOT/proc/crypto" ]; then
        note "no /proc/crypto"
        return
    fi
    echo "@@ crypto"
    _name='' _driver='' _prio='' _type='' _module=''
    each_line "$SYSROOT/proc/crypto" "" crypto_line
    crypto_entry
}

crypto_line() {
    # "name         : cbc(aes)" -> $1 key, $2 ":", $3 value (values are one word)
    set -f
    # shellcheck disable=SC2086
    set -- $1
    set +f
    case ${1:-} in
        name) crypto_entry; _name=${3:-} ;;  # an entry starts with its name
        driver) _driver=${3:-} ;;
        priority) _prio=${3:-} ;;
        type) _type=${3:-} ;;
        module) _module=${3:-} ;;
    esac
}

# the entry read so far, if a TLS/VPN cipher could use it; then none
crypto_entry() {
    case $_name in
        *aes* | *gcm* | *sha* | *chacha* | *poly1305* | *ghash*)
            echo "name=$_name driver=$_driver priority=$_prio type=$_type module=$_module" ;;
    esac
    _name='' _driver='' _prio='' _type='' _module=''
}

# engines (devcrypto/afalg offload on routers) and providers of the OpenSSL that runs the matrix:
# SSLBENCH_OPENSSL names it, else the one in PATH
sec_openssl() {
    _ossl=${SSLBENCH_OPENSSL:-$(command -v openssl 2>/dev/null)}
    if [ -z "$_ossl" ]; then
        note "no openssl (engines and providers unknown)"
        return
    fi
    echo "@@ openssl_engines $_ossl"
    "$_ossl" engine -t </dev/null 2>&1 || note "openssl engine -t failed"
    echo "@@ openssl_providers $_ossl"
    # 1.x has no providers: its "unknown command" goes into the note, not the section
    if _out=$("$_ossl" list -providers </dev/null 2>&1); then
        echo "$_out"
    else
        note "openssl list -providers failed (OpenSSL before 3.0)"
    fi
}

snapshot() {
    _label=${1:-snapshot}
    _quick=$2
    echo "@@ begin sslbench-conditions 1 $_label"
    sec_time "$_quick"
    sec_loadavg
    sec_stat
    sec_cpufreq "$_quick"
    sec_thermal
    sec_throttled
    if [ -z "$_quick" ]; then
        sec_cpus
        # what the run cannot change is read once, before it (the controller reads these from `before` only):
        # `after` skips two openssl starts and the /proc/crypto walk, the costliest parts on a router
        [ "$_label" = after ] || sec_topology
        sec_swap
        if [ "$_label" != after ]; then
            sec_tools
            sec_crypto
            sec_openssl
        fi
    fi
    echo "@@ end sslbench-conditions"
}

# "0.25" -> 25 (hundredths), integer arithmetic only
hundredths() {
    _i=${1%%.*}
    case $1 in
        *.*) _f=${1#*.} ;;
        *) _f= ;;
    esac
    _f=${_f}00
    _f=${_f%"${_f#??}"}  # first two digits
    [ -n "$_i" ] || _i=0
    # strip leading zeros so the shell does not read octal (no string-length expansion: its brace-hash opens a Jinja comment)
    while :; do case $_f in 0?*) _f=${_f#0} ;; *) break ;; esac; done
    while :; do case $_i in 0?*) _i=${_i#0} ;; *) break ;; esac; done
    echo $((_i * 100 + _f))
}

# sets STAT_BUSY STAT_TOTAL NCPU from /proc/stat (jiffies; busy = all but idle and iowait)
read_stat() {
    STAT_BUSY=0 STAT_TOTAL=0 NCPU=0
    each_line "$SYSROOT/proc/stat" i add_stat_line
}

add_stat_line() {
    # shellcheck disable=SC2086
    set -- $1  # name user nice system idle iowait irq softirq steal ...
    case ${1:-} in
        cpu) STAT_BUSY=$((${2:-0} + ${3:-0} + ${4:-0} + ${7:-0} + ${8:-0} + ${9:-0}))  # a field an old kernel lacks: 0
             STAT_TOTAL=$((STAT_BUSY + ${5:-0} + ${6:-0})) ;;
        cpu*) NCPU=$((NCPU + 1)) ;;
        *) return 1 ;;
    esac
}

load1_hundredths() {
    LOAD1=
    [ -r "$SYSROOT/proc/loadavg" ] || return 1
    IFS=' ' read -r _l1 _rest < "$SYSROOT/proc/loadavg"
    LOAD1=$(hundredths "$_l1")
}

# Idle when the 1-minute load is under LOAD *and* the last sample was quiet (a hog started a
# moment ago has not raised the load yet), or when CPU use stayed under CPU_LIMIT cores for
# QUIET_SECONDS.  Gives up after MAX_SECONDS and says so: the run goes on, flagged busy.
idle_wait() {
    _max=${1:-300}
    _load=$(hundredths "${2:-0.3}")
    _quiet_need=${3:-30}
    _sample=${4:-5}
    _limit=$(hundredths "${5:-0.25}")
    echo "@@ begin sslbench-idle 1 gate"
    echo "params max=$_max load=${2:-0.3} quiet=$_quiet_need sample=$_sample cpu_limit=${5:-0.25}"
    if [ "$_max" -le 0 ]; then
        echo "idle skipped waited=0 reason=disabled"
        echo "@@ end sslbench-idle"
        return 0
    fi
    _waited=0 _quiet=0 _verdict=
    if ! read_stat; then
        note "no /proc/stat: cannot measure CPU use, judging by load only"
    fi
    _pb=$STAT_BUSY _pt=$STAT_TOTAL
    while :; do
        sleep "$_sample"
        _waited=$((_waited + _sample))
        read_stat
        _db=$((STAT_BUSY - _pb)) _dt=$((STAT_TOTAL - _pt))
        _pb=$STAT_BUSY _pt=$STAT_TOTAL
        # CPU use in hundredths of a core: busy share of all jiffies x number of CPUs
        if [ "$_dt" -gt 0 ]; then
            _cores=$((_db * NCPU * 100 / _dt))
        else
            _cores=0
        fi
        load1_hundredths
        echo "sample waited=$_waited load1=${LOAD1:-?} cpu_centicores=$_cores"
        if [ "$_cores" -le "$_limit" ]; then
            _quiet=$((_quiet + _sample))
        else
            _quiet=0
        fi
        if [ -n "$LOAD1" ] && [ "$LOAD1" -lt "$_load" ] && [ "$_cores" -le "$_limit" ]; then
            _verdict="idle yes waited=$_waited reason=load"
        elif [ "$_quiet" -ge "$_quiet_need" ]; then
            _verdict="idle yes waited=$_waited reason=quiet"
        elif [ "$_waited" -ge "$_max" ]; then
            _verdict="idle no waited=$_waited reason=timeout"
        fi
        [ -z "$_verdict" ] || break
    done
    echo "$_verdict"
    echo "@@ end sslbench-idle"
}

# "pid (comm) S ppid ..." -> sets PS_COMM PS_UTIME PS_STIME PS_CPU (field 39 `processor`)
read_pid_stat() {
    PS_CPU=
    IFS= read -r _s < "/proc/$1/stat" 2>/dev/null || return 1
    _rest=${_s##*) }  # comm may hold spaces and parentheses: cut at the last ") "
    PS_COMM=${_s#*(}
    PS_COMM=${PS_COMM%) *}
    # shellcheck disable=SC2086
    set -- $_rest  # field 3 (state) is now $1
    [ $# -ge 37 ] || return 1
    shift 11
    PS_UTIME=$1 PS_STIME=$2
    shift 25
    PS_CPU=$1
}

# which CPUs the kernel lets the process use (the taskset mask as it really is)
allowed_cpus() {
    each_line "/proc/$1/status" "" allowed_line
}

allowed_line() {
    case $1 in
        Cpus_allowed_list:*) echo "allowed ${1#*:	}"; return 1 ;;
    esac
}

sampler() {
    # the parent's cleanup trap must not delay our own end: die at once when told to (a hang-up only where the
    # runner does not ignore it: see run_cell)
    trap - INT TERM
    [ -n "${SSLBENCH_NO_HUP:-}" ] || trap - HUP
    _pid=$1
    _n=0
    while read_pid_stat "$_pid"; do
        _up=
        IFS=' ' read -r _up _rest < /proc/uptime 2>/dev/null
        echo "sample $_up $PS_CPU $PS_UTIME $PS_STIME $PS_COMM"
        _n=$((_n + 1))
        # the mask once the command has exec'd (taskset sets it before exec)
        [ "$_n" = 2 ] && allowed_cpus "$_pid"
        # no inherited descriptors: a sleep outliving us must not hold the caller's pipe open
        # shellcheck disable=SC2217  # stdin closed on purpose, as said above
        sleep 1 </dev/null >/dev/null 2>&1
    done
}

# CHILDREN_CPU: this shell's children CPU (cutime cstime, clock ticks), which covers COMMAND and all it forked.
# Its pid from /proc/self (in a subshell, the runner's cells, $$ is the parent's); its stat read by a forked
# subshell (no exec): QEMU's user mode fakes what a process reads of its own stat, with zero times.
children_cpu() {
    CHILDREN_CPU=
    IFS=' ' read -r _me _rest < /proc/self/stat || return 1
    CHILDREN_CPU=$(cpu_of_children "$_me")
}

cpu_of_children() {
    IFS= read -r _s < "/proc/$1/stat" || return 1
    # shellcheck disable=SC2086
    set -- ${_s##*) }
    shift 13
    echo "$1 $2"
}

run_cell() {
    _out=$1
    shift
    [ "$1" = "--" ] && shift
    if [ "$_out" = "-" ]; then
        # the command's own stdout comes first; our evidence follows after it finished
        _buf=${TMPDIR:-/tmp}/sslbench-cell.$$
    else
        _buf=$_out
    fi
    : > "$_buf" || return 125
    snapshot cell-before quick >> "$_buf"
    children_cpu
    {
        echo "@@ begin sslbench-cell 1 run"
        echo "command $*"
        echo "children_before $CHILDREN_CPU"
        IFS=' ' read -r _up _rest < /proc/uptime
        echo "uptime_before $_up"
    } >> "$_buf"
    _cmd='' _smp=''
    # stopped (Ctrl-C, TERM from the controller): take the benchmark down with us, leave no
    # openssl burning the host's CPU (a background job ignores SIGINT in a script). Not on a hang-up where
    # SSLBENCH_NO_HUP says the runner ignores it (run.sh runs cells in its own subshells, which could trap a
    # signal their shell ignores: the SSH session that launched the run ending must not stop a cell).
    trap 'kill $_cmd $_smp 2>/dev/null; exit 143' INT TERM
    [ -n "${SSLBENCH_NO_HUP:-}" ] || trap 'kill $_cmd $_smp 2>/dev/null; exit 143' HUP
    "$@" &
    _cmd=$!
    sampler "$_cmd" >> "$_buf" &
    _smp=$!
    wait "$_cmd"
    _rc=$?
    IFS=' ' read -r _up _rest < /proc/uptime
    kill "$_smp" 2>/dev/null
    wait "$_smp" 2>/dev/null
    trap - INT TERM
    [ -n "${SSLBENCH_NO_HUP:-}" ] || trap - HUP
    children_cpu
    {
        echo "pid $_cmd"
        echo "uptime_after $_up"
        echo "children_after $CHILDREN_CPU"
        echo "exit $_rc"
        echo "@@ end sslbench-cell"
    } >> "$_buf"
    snapshot cell-after quick >> "$_buf"
    if [ "$_buf" != "$_out" ]; then
        cat "$_buf"
        rm -f "$_buf"
    fi
    return "$_rc"
}

conditions_main() {
    _mode=${1:-snapshot}
    [ $# -gt 0 ] && shift
    case $_mode in
        snapshot) snapshot "${1:-snapshot}" ;;
        before | after) snapshot "$_mode" ;;  # `conditions.sh before` = `conditions.sh snapshot before`
        quick) snapshot "${1:-quick}" quick ;;
        idle-wait) idle_wait "$@" ;;
        cell)
            if [ $# -lt 3 ]; then
                echo "usage: conditions.sh cell EVIDENCE_FILE -- COMMAND [ARGS...]" >&2
                return 2
            fi
            run_cell "$@"
            ;;
        *)
            echo "usage: conditions.sh [snapshot [LABEL] | before | after | quick [LABEL] |" \
                "idle-wait MAX LOAD [QUIET [SAMPLE [CPU_LIMIT]]] | cell FILE -- CMD...]" >&2
            return 2
            ;;
    esac
}

if [ -z "${SSLBENCH_CONDITIONS_LIB:-}" ]; then
    conditions_main "$@"
    exit $?
fi
