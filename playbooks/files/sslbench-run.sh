# sslbench on-host runner: POSIX sh for BusyBox ash (no arrays, no [[ ]], no +=).
# It lives in its own work dir (/tmp/sslbench.<run-id>.<host hash>) next to cells.txt (`id<TAB>pin<TAB>openssl args` per
# line; pin is the CPU taskset pins the cell to, or -) and conditions.sh (the evidence, docs/trust.md).
#   sh run.sh launch OPENSSL [IDLE_MAX [WAIT]]   (the launcher sources it: `set -- launch ...; . ./run.sh`)
#                             start the runner detached from this SSH session, and its lease's watchdog, and
#                             return at once, or with WAIT (seconds) once it ended or WAIT passed, printing what a
#                             poll prints (the work dir stays until the controller, with the logs, says `forget`)
#   sh run.sh start OPENSSL [IDLE_MAX]
#                             the runner itself (in the foreground; without setsid the launch runs it in a
#                             subshell instead): with conditions.sh, idle gate (at most IDLE_MAX s, 0 = none) and
#                             snapshot first, every cell through conditions.sh's `cell` (evidence appended to its
#                             log), snapshot after; logs/conditions-{idle,before,after}.log
#   sh run.sh poll [again]    print progress and ship up to ~12 KB of finished logs (dropbear cuts long outputs);
#                             with `again` (the last poll's answer was lost on the way), what earlier polls shipped
#                             goes again. A poll never removes the work dir: its answer may never be saved
#   sh run.sh forget          remove the work dir of a finished (or stranded) run whose every log was shipped,
#                             sent by the controller once it has saved them
#   sh run.sh stop            kill the runner and its openssl processes (Ctrl-C on the controller), and a measured
#                             tunnel's processes and namespaces (tunnel.sh cleanup)
#   sh run.sh renew           renew the lease only (a launch asked again, its runner found)
# The lease: the runner lives only as long as its controller wants it. Every command the controller sends with
# SSLBENCH_LEASE="SERIAL TTL GRACE" renews it (file `lease`: those and the step's session, SSLBENCH_SESSION, the
# `sh -s` that carries every step of the host where the controller keeps one open, with its start time). A watchdog
# (watch_lease) counts TTL seconds down from the last renewal, restarted while that session lives; once the session
# is gone at most GRACE are left (the controller died, or closed it: done with the host). At zero it stops the
# runner and its openssl and strands the work dir: only run.sh, the logs not known to be saved, `progress` and
# `stranded` stay, for the next run on the host to collect (`poll again`, then `forget`).
# Files: pid (the runner's pid), child.pid, progress, runner.out (what the runner itself printed: the host's
# words when it fails), evidence.txt (the running cell's), logs/<id>.log (finished cells not yet shipped, each
# between the markers a poll prints), shipped/<id>.log, lease (the last renewal: SERIAL TTL GRACE SESSION SINCE),
# stranded (the lease lapsed: the runner is gone, the logs wait for a controller).
# Every output starts with an empty line: a login shell's start-up text without a newline (a title escape, a
# banner) then ends on a line of its own instead of gluing onto the first marker.
MAX_SHIP=12000

# `sh DIR/run.sh CMD`: into its work dir. (The launcher sources it, already there: $0 is its shell then.)
case $0 in */run.sh) cd "${0%/*}" || exit 1 ;; esac

children_of() {
    # Child pids of $1 from /proc (no pgrep/ps on many routers); field 4 of stat is the parent pid.
    for stat in /proc/[0-9]*/stat; do
        read -r cpid _comm _state cppid _rest < "$stat" 2>/dev/null || continue
        [ "$cppid" = "$1" ] && echo "$cpid"
    done
}

# kill_tree SIGNAL PID: the process and all its descendants, children first.
kill_tree() {
    for kid in $(children_of "$2"); do
        kill_tree "$1" "$kid"
    done
    kill "-$1" "$2" 2>/dev/null
}

alive() {
    # Running, not a zombie waiting for its parent to reap it (kill -0 succeeds on zombies).
    [ -r "/proc/$1/stat" ] || return 1
    read -r _pid _comm pstate _rest < "/proc/$1/stat" 2>/dev/null || return 1
    [ "$pstate" != "Z" ]
}

# Run "$@" in the background and wait: sh defers a trap until a foreground command ends, so a
# stop (TERM) during a long step would wait for it.
step() {
    "$@" &
    child=$!
    echo "$child" > child.pid
    wait "$child"
    rc=$?
    child=
    return "$rc"
}

# Every log is written beside logs/ between the markers a poll prints around it (so a poll ships any number of
# logs with one cat, and one file may carry two), then moved in whole: a poll never ships half a file.
# log_begin ID FILE, log_end ID FILE: the markers of log ID in FILE.log; move_log FILE: into logs/
log_begin() {
    echo "@@sslbench-log $1" >> "$2.log"
}

log_end() {
    { echo ""; echo "@@sslbench-endlog $1"; } >> "$2.log"
}

move_log() {
    mv "$1.log" "logs/$1.log"
}

# conditions_log ID FILE ARGS...: log ID, a conditions.sh run, in FILE.log. The snapshot runs in a subshell of
# this runner (conditions.sh is sourced): no sh process, and no 500-line script read, per log.
conditions_log() {
    _id=$1 _log=$2
    shift 2
    log_begin "$_id" "$_log"
    step conditions_main "$@" >> "$_log.log" 2>&1
    log_end "$_id" "$_log"
}

LEASE_TICK=2  # seconds between two looks of the watchdog: one `sleep` per look, nothing else started

# started_at PID: sets STARTED to the process's start time (field 22 of its stat, after the name, which may hold
# spaces); fails when it is gone or a zombie. With the pid it names one process, even once the pid is reused.
started_at() {
    STARTED=
    read -r _stat < "/proc/$1/stat" 2>/dev/null || return 1
    set -f
    # shellcheck disable=SC2086  # the words of stat after the name, on purpose
    set -- ${_stat##*) }
    set +f
    [ "$1" != Z ] && [ $# -ge 20 ] || return 1
    STARTED=${20}
}

# renew_lease: the controller's SSLBENCH_LEASE ("SERIAL TTL GRACE") and the session it came over, in `lease`
renew_lease() {
    [ -n "${SSLBENCH_LEASE:-}" ] || return 0
    _session=${SSLBENCH_SESSION:--} _since=-
    if [ "$_session" != - ] && started_at "$_session"; then _since=$STARTED; else _session=-; fi
    echo "$SSLBENCH_LEASE $_session $_since" > lease 2>/dev/null || :
}

# The watchdog: a subshell of the launch holding none of the session's descriptors, HUP ignored (as the runner).
start_watchdog() {
    [ -f lease ] || return 0  # launched by hand, without a lease: nothing to watch
    # a subshell: dash keeps a copy of the descriptors a function call redirects, the session's among them
    # shellcheck disable=SC2217  # the session's descriptors closed on purpose
    ( watch_lease ) </dev/null >/dev/null 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
    echo $! > watchdog.pid
}

watch_lease() {
    _last='' _left=0 _held=''
    while [ -e run.sh ] && ! [ -e stranded ]; do
        _line=''
        read -r _line < lease 2>/dev/null
        set -f
        # shellcheck disable=SC2086  # SERIAL TTL GRACE SESSION SINCE
        set -- $_line
        set +f
        if [ $# -eq 5 ]; then  # (a lease being written reads empty: not a lapse)
            if [ "$_line" != "$_last" ]; then  # renewed: TTL from now, held by its session while it lives
                _last=$_line _left=$2 _held=$4
                [ "$4" = - ] && _held=''
            fi
            if [ -n "$_held" ] && started_at "$4" && [ "$STARTED" = "$5" ]; then
                _left=$2
            elif [ -n "$_held" ]; then  # the session is gone: at most GRACE more
                _held=''
                [ "$_left" -le "$3" ] || _left=$3
            fi
        fi
        if [ "$_left" -le 0 ]; then
            lapse
            return 0
        fi
        sleep "$LEASE_TICK"
        _left=$((_left - LEASE_TICK))
    done
}

# The lease lapsed: no controller wants this run any more. Its runner and openssl stop; what a controller may not
# have saved stays (the logs, finished cells only), what only this run needed goes.
lapse() {
    echo "lapsed" >> progress
    stop_runner
    rm -f conditions.sh tunnel.sh cells.txt evidence.txt runner.out child.pid pid waited lease progress.sent watchdog.pid \
        ./*.log
    set -- logs/* shipped/*
    for _log do
        if [ -f "$_log" ]; then
            : > stranded
            return 0
        fi
    done
    remove_work_dir  # nothing to collect: nothing stays
}

launch() {
    # HUP ignored before forking (and so in the runner: an ignored signal stays ignored across exec): a pty the
    # session may have hangs up as soon as this shell exits. OpenWrt's BusyBox has no nohup, and no setsid before
    # 25.12 (DD-WRT's has none either): without setsid the runner stays in this session, in the background, HUP
    # ignored, with none of the session's descriptors open. Its pid is written here at once (it writes its own
    # too): a runner that failed to start is found dead by the next poll, which ships what it said (runner.out).
    trap '' HUP
    renew_lease
    if ! [ "${3:-0}" -gt 0 ] 2>/dev/null; then
        start_runner "$1" "$2"
        start_watchdog
        echo "@@sslbench-state started"
        return 0
    fi
    # WAIT: a short matrix comes back in this same SSH exec, as soon as its runner ends. This shell waits for a
    # `sleep WAIT` of its own; a waiter subshell, the runner's parent, waits for the runner and then ends that
    # sleep. So the end is seen at once, no signal is trapped (BusyBox 1.38's ash spins in every later `read`
    # after a caught trap) and nothing of the wait is left behind. The waiter holds none of the session's
    # descriptors: a session that drops leaves the runner running, and the controller polls as usual.
    # shellcheck disable=SC2217  # the session's descriptors closed on purpose, as said above
    sleep "$3" </dev/null >/dev/null 2>&1 &
    sleeper=$!
    (
        start_runner "$1" "$2"
        wait "$runner"
        # not once this shell is gone (its pid may be another's), nor once a poll removed the work dir (it did
        # so after this shell wrote `waited` and was gone)
        [ -e waited ] || ! [ -e cells.txt ] || kill "$sleeper" 2>/dev/null
    ) </dev/null >/dev/null 2>&1 &
    start_watchdog
    echo "@@sslbench-state started"
    wait "$sleeper"
    : > waited
    poll
}

start_runner() {
    if command -v setsid >/dev/null 2>&1; then
        setsid sh ./run.sh start "$1" "$2" </dev/null >runner.out 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
    else
        # no setsid (OpenWrt's BusyBox): the runner is a subshell of this one, no sh to start and no script to
        # read again; its pid is the one written here
        # shellcheck disable=SC2030  # pid_written is for run_cells in this subshell only
        ( pid_written=1; run_cells "$1" "$2" ) </dev/null >runner.out 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
    fi
    runner=$!
    echo "$runner" > pid
}

run_cells() {
    openssl_bin=$1
    idle_max=${2:-60}
    # the launcher wrote our pid already (unless setsid forked): no process to write it again
    # shellcheck disable=SC2031  # set only in start_runner's subshell, the one this runs in then
    if [ -z "${pid_written:-}" ]; then
        read -r launched 2>/dev/null < pid
        [ "$launched" = $$ ] || { echo $$ > pid.new && mv pid.new pid; }
    fi
    { [ -d logs ] && [ -d shipped ]; } || mkdir -p logs shipped
    total=0
    while read -r _cell; do [ -n "$_cell" ] && total=$((total + 1)); done < cells.txt
    if [ -f tunnels.txt ]; then
        while read -r _cell; do [ -n "$_cell" ] && total=$((total + 1)); done < tunnels.txt
    fi
    k=0
    child=
    # not HUP: the launch ignored it (a hang-up of the SSH session that launched the run must not stop it), and
    # the cells, subshells of this runner, are told so (SSLBENCH_NO_HUP) since a subshell could trap it again
    trap 'if [ -n "$child" ]; then kill_tree TERM "$child"; fi; echo "stopped" >> progress; exit 143' TERM INT
    # shellcheck disable=SC2034  # read by conditions.sh (sourced below) in each cell
    SSLBENCH_NO_HUP=1
    cond=
    if [ -f conditions.sh ]; then
        cond=1
        # shellcheck disable=SC1091  # conditions.sh is linted on its own (tests/unit/test_shell_lint.py)
        SSLBENCH_CONDITIONS_LIB=1 . ./conditions.sh
        SSLBENCH_OPENSSL=$openssl_bin
        export SSLBENCH_OPENSSL
        # idle: 1-min load under 0.3 (or 30 s quiet), sampled every 2 s; quiet = other work under half a
        # core (stricter than validity.THRESHOLDS.background_cores; the controller's own polls cost
        # ~0.2-0.4 cores on localhost)
        # the progress view shows it as what the host is doing now
        [ "$idle_max" -gt 0 ] 2>/dev/null && echo "start 0 $total idle-gate" >> progress
        # the idle gate's log and the snapshot before travel in one file: one mv
        : > conditions-before.log
        conditions_log conditions-idle conditions-before idle-wait "$idle_max" 0.3 30 2 0.5
        conditions_log conditions-before conditions-before before
        move_log conditions-before
    fi
    tab=$(printf '\t')
    while IFS="$tab" read -r id pin args; do
        [ -n "$id" ] || continue
        k=$((k + 1))
        echo "start $k $total $id" >> progress
        # $args is unquoted on purpose: space-separated words the controller checked against [A-Za-z0-9._-].
        set -f
        # shellcheck disable=SC2086
        set -- "$openssl_bin" $args
        set +f
        # a hex mask rather than -c: BusyBox builds without TASKSET_FANCY take only the mask
        case $pin in
            [0-9] | [0-5][0-9] | 6[0-2]) set -- taskset "$(printf '%x' $((1 << pin)))" "$@" ;;
            [0-9]*) set -- taskset -c "$pin" "$@" ;;
        esac
        : > "$id.log"
        log_begin "$id" "$id"
        if [ -n "$cond" ]; then
            # in a subshell of this runner (conditions.sh is sourced); the evidence, written beside while openssl
            # prints, follows its output (one file for every cell, removed with the work dir)
            step conditions_main cell evidence.txt -- "$@" >> "$id.log" 2>&1
            rc=$?
            print_file evidence.txt >> "$id.log" 2>/dev/null  # (conditions.sh's: no cat per cell)
        else
            step "$@" >> "$id.log" 2>&1
            rc=$?
        fi
        log_end "$id" "$id"
        move_log "$id"
        echo "done $k $total $id $rc" >> progress
    done < cells.txt
    # the cells' "after" snapshot, before the tunnels: minutes of iperf3's heat and throttling are theirs, not the
    # cells' (each tunnel's log carries its own before and after)
    if [ -n "$cond" ]; then
        : > conditions-after.log
        conditions_log conditions-after conditions-after after
        move_log conditions-after
    fi
    [ -f tunnels.txt ] && run_tunnels "$openssl_bin"
    echo "finished $total" >> progress
}

# run_tunnels OPENSSL: the measured tunnels (tunnels.txt: `id<TAB>tunnel seconds streams repeats`, checked tokens),
# after the cells, each tunnel.sh's output a log of its own as a cell's; the namespaces are named by this work dir
run_tunnels() {
    SSLBENCH_OPENSSL=$1
    export SSLBENCH_OPENSSL
    tag=${PWD##*/sslbench.}
    while IFS="$tab" read -r id words; do
        [ -n "$id" ] || continue
        k=$((k + 1))
        echo "start $k $total $id" >> progress
        : > "$id.log"
        log_begin "$id" "$id"
        set -f
        # shellcheck disable=SC2086  # words: the controller's checked tokens
        step sh ./tunnel.sh measure "$PWD" "$tag" $words < /dev/null >> "$id.log" 2>&1
        rc=$?
        set +f
        log_end "$id" "$id"
        move_log "$id"
        echo "done $k $total $id $rc" >> progress
    done < tunnels.txt
}

ship_logs() {
    # Print finished logs up to MAX_SHIP bytes (at least one); returns 0 when some are left for the next poll.
    # One wc for every size, one cat and one mv for every log shipped: no process per log.
    set -- logs/*.log
    [ -f "$1" ] || return 1
    sent=0 moved='' left=1
    while read -r size log; do
        case $log in logs/*.log) ;; *) continue ;; esac  # wc's `total` line
        if [ "$sent" -gt 0 ] && [ $((sent + size)) -gt "$MAX_SHIP" ]; then
            left=0
            break
        fi
        moved="$moved $log"
        sent=$((sent + size))
    done <<SIZES
$(wc -c "$@")
SIZES
    # each log carries its own markers (log_begin, log_end): one cat for them all
    [ -n "$moved" ] || return 1
    # shellcheck disable=SC2086  # log names are the controller's [A-Za-z0-9._-] ids
    cat $moved
    # shellcheck disable=SC2086
    mv $moved shipped/
    return "$left"
}

# read_progress [SENT]: sets STATE (finished, stopped or running), LINES (how many progress lines there are)
# and, given SENT, NEW (the lines after the first SENT), reading the file once with the shell's own `read`: no
# grep, wc, head or tail.
read_progress() {
    STATE=running LINES=0 NEW='' LAPSED=''
    [ -f progress ] || return 0
    while IFS= read -r _line; do
        LINES=$((LINES + 1))
        case $_line in
            finished*) STATE=finished ;;
            stopped*) [ "$STATE" = finished ] || STATE=stopped ;;
            lapsed*) LAPSED=1 ;;
        esac
        [ -n "$1" ] && [ "$LINES" -gt "$1" ] && NEW="$NEW${NEW:+
}$_line"
    done < progress
}

poll() {
    # The state is read first: once `finished` is in the file every log is in logs/, so this poll
    # ships them all (or says pending); read after shipping, a log moved meanwhile would be lost.
    shown=0
    [ -f progress.sent ] && read -r shown < progress.sent
    read_progress "$shown"
    state=$STATE
    runner=
    [ -f pid ] && read -r runner < pid
    if [ "$state" = running ] && [ -n "$runner" ] && ! alive "$runner" && ! [ -e stranded ]; then
        # Gone: dead only if it did not write `finished` (or `stopped`) just before it exited. Look again.
        read_progress "$shown"
        state=$STATE
        [ "$state" = running ] && state=died
    fi
    # Only the progress lines no earlier poll printed: the whole file grows past what dropbear carries.
    echo "@@sslbench-progress"
    if [ "$LINES" -gt 0 ]; then
        [ -z "$NEW" ] || echo "$NEW"  # our own lines: no backslash for dash's echo to read
        echo "$LINES" > progress.sent
    fi
    if ship_logs; then
        state=pending
    fi
    if [ "$state" = died ]; then
        echo "@@sslbench-runner-output"
        tail -n 5 runner.out 2>/dev/null
    fi
    # its lease lapsed (no word from a controller): what is left to ship is shipped; nothing runs any more
    [ "$state" != pending ] && [ -n "$LAPSED" ] && state=stranded
    echo "@@sslbench-state $state"
}

# The controller lost the answer of the last poll: the logs it moved to shipped/ and the progress lines it counted
# as sent go again (the controller keeps the first copy of each log it gets).
resend() {
    set -- shipped/*.log
    [ -f "$1" ] && mv "$@" logs/
    echo 0 > progress.sent
}

forget() {
    # After a poll said `finished` and the controller has its output: the work dir goes (only then, so a poll
    # whose output was lost on the way can be asked again). Returns 0 when it is gone.
    read_progress
    set -- logs/*
    { [ "$STATE" = finished ] || [ -e stranded ]; } && ! [ -e "$1" ] || return 1
    remove_work_dir
}

remove_work_dir() {
    case $PWD in */sslbench.*) ;; *) return 1 ;; esac
    dir=$PWD
    cd / && rm -rf "$dir"
}

# The controller stops the run (Ctrl-C, a failed host): the watchdog goes too, so nothing of the run is left running.
# The dir is marked stranded: should the controller keep it (the results could not take its logs), the next run
# collects them; otherwise the cleanup ships them and removes it at once.
stop() {
    if [ -f watchdog.pid ]; then
        read -r _watchdog < watchdog.pid
        [ -z "$_watchdog" ] || kill_tree TERM "$_watchdog"
    fi
    stop_runner
    : > stranded
    echo "@@sslbench-state stopped"
}

stop_runner() {
    if [ -f pid ]; then
        runner=$(cat pid)
        kid=$(cat child.pid 2>/dev/null)
        kill -TERM "$runner" 2>/dev/null
        [ -n "$kid" ] && kill_tree TERM "$kid"
        kill_tree TERM "$runner"
        # Return only when they are gone (an emulated or busy box can take a moment); KILL after 5 s.
        tries=0
        while alive "$runner" || { [ -n "$kid" ] && alive "$kid"; }; do
            tries=$((tries + 1))
            if [ "$tries" -gt 5 ]; then
                [ -n "$kid" ] && kill_tree KILL "$kid"
                kill_tree KILL "$runner"
                break
            fi
            sleep 1
        done
    fi
    # a measured tunnel's processes and namespaces, whether or not its script could clean up after itself
    [ ! -f tunnel.sh ] || sh ./tunnel.sh cleanup "$PWD" >/dev/null 2>&1
}

echo ""
case "$1" in poll | forget | stop | renew) renew_lease ;; esac
case "$1" in
    launch) launch "$2" "$3" "$4" ;;
    start) run_cells "$2" "$3" ;;
    poll) [ "$2" != again ] || resend
          poll ;;
    forget) forget || : ;;  # a dir kept (logs not yet shipped) is not a failed step
    stop) stop ;;
    renew) ;;  # (done above)
    *) echo "usage: run.sh launch OPENSSL [IDLE_MAX [WAIT]] | start OPENSSL [IDLE_MAX] | poll [again] | forget | stop | renew" >&2
       exit 2 ;;
esac
