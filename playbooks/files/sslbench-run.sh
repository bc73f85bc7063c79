# sslbench on-host runner: POSIX sh for BusyBox ash (no arrays, no [[ ]], no +=).
# It lives in its own work dir (/tmp/sslbench.<run-id>) next to cells.txt (`id<TAB>pin<TAB>openssl args` per
# line; pin is the CPU taskset pins the cell to, or -) and conditions.sh (the evidence, docs/trust.md).
#   sh run.sh start OPENSSL [IDLE_MAX]
#                             run every cell in the background, detached from the SSH session; with
#                             conditions.sh: idle gate (at most IDLE_MAX s, 0 = none) and snapshot first,
#                             every cell through `conditions.sh cell` (evidence appended to its log),
#                             snapshot after; logs/conditions-{idle,before,after}.log
#   sh run.sh poll            print progress and ship up to ~12 KB of finished logs (dropbear cuts long outputs)
#   sh run.sh stop            kill the runner and its openssl processes (Ctrl-C on the controller)
# Files: pid (runner pid, also its process group when setsid exists), child.pid, progress, logs/<id>.log
# (finished cells not yet shipped), shipped/<id>.log.
MAX_SHIP=12000

cd "$(dirname "$0")" || exit 1

children_of() {
    # Child pids of $1 from /proc (no pgrep/ps on many routers); field 4 of stat is the parent pid.
    for stat in /proc/[0-9]*/stat; do
        read -r cpid _comm _state cppid _rest < "$stat" 2>/dev/null || continue
        [ "$cppid" = "$1" ] && echo "$cpid"
    done
}

kill_tree() {
    for kid in $(children_of "$1"); do
        kill_tree "$kid"
    done
    kill -TERM "$1" 2>/dev/null
}

alive() {
    # Running, not a zombie waiting for its parent to reap it (kill -0 succeeds on zombies).
    [ -r "/proc/$1/stat" ] || return 1
    read -r _pid _comm pstate _rest < "/proc/$1/stat" 2>/dev/null || return 1
    [ "$pstate" != "Z" ]
}

kill_tree_hard() {
    for kid in $(children_of "$1"); do
        kill_tree_hard "$kid"
    done
    kill -KILL "$1" 2>/dev/null
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

# Write a conditions log beside logs/ and move it in whole: a poll never ships half a file.
conditions_log() {
    name=$1
    shift
    step sh ./conditions.sh "$@" > "$name.log" 2>&1
    mv "$name.log" "logs/$name.log"
}

run_cells() {
    openssl_bin=$1
    idle_max=${2:-60}
    echo $$ > pid
    mkdir -p logs shipped
    total=$(grep -c . cells.txt)
    k=0
    child=
    trap 'if [ -n "$child" ]; then kill_tree "$child"; fi; echo "stopped" >> progress; exit 143' TERM INT HUP
    cond=
    if [ -f conditions.sh ]; then
        cond=1
        SSLBENCH_OPENSSL=$openssl_bin
        export SSLBENCH_OPENSSL
        # idle: 1-min load under 0.3 (or 30 s quiet), sampled every 2 s; quiet = other work under half a
        # core (stricter than validity.THRESHOLDS.background_cores; the controller's own polls cost
        # ~0.2-0.4 cores on localhost)
        # the progress view shows it as what the host is doing now
        [ "$idle_max" -gt 0 ] 2>/dev/null && echo "start 0 $total idle-gate" >> progress
        conditions_log conditions-idle idle-wait "$idle_max" 0.3 30 2 0.5
        conditions_log conditions-before before
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
        if [ -n "$cond" ]; then
            step sh ./conditions.sh cell "cell-$id.txt" -- "$@" > "run-$id.log" 2>&1
            rc=$?
            cat "cell-$id.txt" >> "run-$id.log" 2>/dev/null
            rm -f "cell-$id.txt"
        else
            step "$@" > "run-$id.log" 2>&1
            rc=$?
        fi
        mv "run-$id.log" "logs/$id.log"
        echo "done $k $total $id $rc" >> progress
    done < cells.txt
    [ -n "$cond" ] && conditions_log conditions-after after
    echo "finished $total" >> progress
}

ship_logs() {
    # Print finished logs up to MAX_SHIP bytes (at least one); returns 0 when some are left for the next poll.
    sent=0
    for log in logs/*.log; do
        [ -f "$log" ] || continue
        size=$(wc -c < "$log")
        if [ "$sent" -gt 0 ] && [ $((sent + size)) -gt "$MAX_SHIP" ]; then
            return 0
        fi
        id=$(basename "$log" .log)
        echo "@@sslbench-log $id"
        cat "$log"
        echo ""
        echo "@@sslbench-endlog $id"
        mv "$log" shipped/
        sent=$((sent + size))
    done
    return 1
}

poll() {
    # The state is read first: once `finished` is in the file every log is in logs/, so this poll
    # ships them all (or says pending); read after shipping, a log moved meanwhile would be lost.
    state=running
    if grep -q '^finished' progress 2>/dev/null; then
        state=finished
    elif grep -q '^stopped' progress 2>/dev/null; then
        state=stopped
    elif [ -f pid ] && ! kill -0 "$(cat pid)" 2>/dev/null; then
        state=died
    fi
    # Only the progress lines no earlier poll printed: the whole file grows past what dropbear carries.
    echo "@@sslbench-progress"
    if [ -f progress ]; then
        lines=$(wc -l < progress)
        sent=$(cat progress.sent 2>/dev/null || echo 0)
        head -n "$lines" progress | tail -n "+$((sent + 1))"
        echo "$lines" > progress.sent
    fi
    if ship_logs; then
        state=pending
    fi
    echo "@@sslbench-state $state"
}

stop() {
    if [ -f pid ]; then
        runner=$(cat pid)
        kid=$(cat child.pid 2>/dev/null)
        kill -TERM "$runner" 2>/dev/null
        [ -n "$kid" ] && kill_tree "$kid"
        kill_tree "$runner"
        # Return only when they are gone (an emulated or busy box can take a moment); KILL after 5 s.
        tries=0
        while alive "$runner" || { [ -n "$kid" ] && alive "$kid"; }; do
            tries=$((tries + 1))
            if [ "$tries" -gt 5 ]; then
                [ -n "$kid" ] && kill_tree_hard "$kid"
                kill_tree_hard "$runner"
                break
            fi
            sleep 1
        done
    fi
    echo "@@sslbench-state stopped"
}

case "$1" in
    start) run_cells "$2" "$3" ;;
    poll) poll ;;
    stop) stop ;;
    *) echo "usage: run.sh start OPENSSL [IDLE_MAX] | poll | stop" >&2; exit 2 ;;
esac
