#!/bin/sh
# Makes this folder's iperf3 outputs (README.md): Debian's iperf3 between two network namespaces of our own joined
# by a veth pair (198.18.0.0/30, RFC 2544's benchmarking range), as root. Nothing outside the namespaces is touched.
set -u
out=${1:-.}
a=sb-iperf3-data-a b=sb-iperf3-data-b
ip netns add "$a" && ip netns add "$b" || exit 1
trap 'ip netns del "$a"; ip netns del "$b"' EXIT
ip netns exec "$a" ip link add v type veth peer name v netns "$b"
ip netns exec "$a" ip addr add 198.18.0.1/30 dev v
ip netns exec "$b" ip addr add 198.18.0.2/30 dev v
for ns in "$a" "$b"; do ip netns exec "$ns" ip link set lo up; ip netns exec "$ns" ip link set v up; done
# one test: NAME SERVER-OPTIONS -- CLIENT-OPTIONS
one() {
    name=$1 sopts=$2 copts=$3
    sname=server-${name%.*}.txt
    [ -z "$sopts" ] || sname=server-${name%.*}.json
    # shellcheck disable=SC2086
    ip netns exec "$a" iperf3 -s -1 -B 198.18.0.1 $sopts > "$out/$sname" 2>&1 &
    sleep 1
    # shellcheck disable=SC2086
    ip netns exec "$b" iperf3 -c 198.18.0.1 -t 2 $copts > "$out/client-$name" 2>&1
    wait
}
one forward-1.json "" "-J"
one reverse-1.json "" "-J -R"
one forward-2.json "" "-J -P 2"
one reverse-2.json "" "-J -R -P 2"
one forward-1.txt "" ""
one reverse-2.txt "" "-R -P 2"
one jsonserver-forward-1.json "-J" "-J"
ip netns exec "$b" iperf3 -c 198.18.0.1 -t 2 -J > "$out/client-refused.json" 2>&1
ip netns exec "$b" iperf3 -c 198.18.0.1 -t 2 > "$out/client-refused.txt" 2>&1
iperf3 --version > "$out/version.txt"
