# sslbench on-host runner: POSIX sh for BusyBox ash (no arrays, no [[ ]], no +=).
# It lives in its own work dir (/tmp/sslbench.<run-id>) next to cells.txt (`id<TAB>openssl args` per line).
#   sh run.sh start OPENSSL   run every cell in the background, detached from the SSH session
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

run_cells() {
    openssl_bin=$1
    echo $$ > pid
    mkdir -p logs shipped
    total=$(grep -c . cells.txt)
    k=0
    child=
    trap 'if [ -n "$child" ]; then kill_tree "$child"; fi; echo "stopped" >> progress; exit 143' TERM INT HUP
    [ -f conditions.sh ] && sh ./conditions.sh before > conditions-before.txt 2>&1
    tab=$(printf '\t')
    while IFS="$tab" read -r id args; do
        [ -n "$id" ] || continue
        k=$((k + 1))
        echo "start $k $total $id" >> progress
        # $args is unquoted on purpose: space-separated words the controller checked against [A-Za-z0-9._-].
        # shellcheck disable=SC2086
        "$openssl_bin" $args > "run-$id.log" 2>&1 &
        child=$!
        echo "$child" > child.pid
        wait "$child"
        rc=$?
        child=
        mv "run-$id.log" "logs/$id.log"
        echo "done $k $total $id $rc" >> progress
    done < cells.txt
    [ -f conditions.sh ] && sh ./conditions.sh after > conditions-after.txt 2>&1
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
    start) run_cells "$2" ;;
    poll) poll ;;
    stop) stop ;;
    *) echo "usage: run.sh start OPENSSL | poll | stop" >&2; exit 2 ;;
esac
