# sslbench measured tunnels: POSIX sh for BusyBox ash, dash and bash (no arrays, no [[ ]], no timeout, no nohup).
# Both ends of one tunnel on this host: two network namespaces of their own joined by a veth pair, addresses from
# 198.18.0.0/15 (RFC 2544's benchmarking range) that exist only inside them; the root namespace's links, routes
# and firewall are never touched. iperf3 (TCP) runs through the tunnel; this script only prints
# (orchestrator/parse/tunnel.py reads it).
#   sh tunnel.sh measure DIR TAG TUNNEL SECONDS STREAMS [REPEATS]
#       TUNNEL: wireguard | openvpn-aes-256-gcm | openvpn-chacha20-poly1305 | openvpn-dco-aes-256-gcm
#       DIR: the work dir (pids and keys go under DIR/tunnel); TAG: [0-9A-Za-z-], names the namespaces sb-TAG-a/-b
#       1 stream forward and reverse, then STREAMS streams both ways (when STREAMS > 1), REPEATS times
#   sh tunnel.sh cleanup DIR   kill every process DIR/tunnel/pids names, delete the namespaces DIR/tunnel/netns
#                              names (and the interfaces in them); idempotent
# Output: `@@ NAME [WORDS]` starts a section, `@@ end` ends the tunnel. A tunnel that cannot run here prints
# `@@ not-measurable WHY` (its openssl cells are not affected).
# CPU times are read in clock ticks (USER_HZ, 100 on every Linux port sslbench meets; `@@ hz` says which).

SB_VETH_A=198.18.0.1
SB_VETH_B=198.18.0.2
SB_TUN_A=198.19.0.1
SB_TUN_B=198.19.0.2
SB_PORT=5201
SB_SOCKBUF=1048576  # OpenVPN's --sndbuf/--rcvbuf: fixed, so two runs are the same method

say() { echo "@@ $*"; }

# first_line CMD...: the first line CMD prints (versions), nothing when it fails to start
first_line() {
    "$@" 2>&1 | while IFS= read -r _l; do echo "$_l"; break; done
}

# fingerprint OUTPUT-OF-x509-fingerprint: the hex after `=` (OpenSSL 1.0 says "SHA256 Fingerprint=", 3.x
# "sha256 Fingerprint=")
fingerprint() {
    echo "${1#*=}"
}

# iperf3_has OPTION: this iperf3's --help lists OPTION (3.x added --idle-timeout in 3.10, --rcv-timeout in 3.11)
iperf3_has() {
    case $SB_IPERF3_HELP in *"$1"*) return 0 ;; esac
    return 1
}

# proc_times PID: utime and stime (fields 14 and 15) of /proc/PID/stat; the name in field 2 may hold spaces,
# so the fields are counted after its closing parenthesis
proc_times() {
    _s=
    read -r _s 2>/dev/null < "/proc/$1/stat" || { echo "- -"; return 0; }
    _s=${_s##*) }
    # shellcheck disable=SC2086  # split into fields on purpose
    set -- $_s
    echo "${12:-0} ${13:-0}"
}

# child_times: cutime and cstime (fields 16, 17) of this shell: what the children it reaped used
child_times() {
    _s=
    read -r _s 2>/dev/null < /proc/self/stat || { echo "- -"; return 0; }
    _s=${_s##*) }
    # shellcheck disable=SC2086
    set -- $_s
    echo "${14:-0} ${15:-0}"
}

cpu_line() {
    while read -r _cpu _rest; do
        [ "$_cpu" = cpu ] && { echo "$_cpu $_rest"; return 0; }
    done < /proc/stat
}

udp_lines() {
    # shellcheck disable=SC2016  # expanded by the shell in the namespace
    ip netns exec "$1" sh -c 'while IFS= read -r l; do case $l in Udp:*) echo "$l" ;; esac; done < /proc/net/snmp'
}

# snapshot WHEN: /proc/stat, both namespaces' Udp counters, the tunnel processes' CPU ticks
snapshot() {
    say stat "$1"
    cpu_line
    say snmp "a $1"
    udp_lines "$SB_NS_A"
    say snmp "b $1"
    udp_lines "$SB_NS_B"
    say proc "$1"
    while read -r _name _pid; do
        echo "$_name $_pid $(proc_times "$_pid")"
    done < "$SB_T/tunnel.pids"
}

remember_pid() {
    echo "$1 $2" >> "$SB_T/pids"
}

# ns_run NS NAME CMD...: CMD in namespace NS, in the background, its pid remembered as NAME
ns_run() {
    _ns=$1 _name=$2
    shift 2
    ip netns exec "$_ns" "$@" > "$SB_T/$_name.out" 2>&1 &
    remember_pid "$_name" $!
    echo "$_name $!" >> "$SB_T/tunnel.pids"
}

cores() {
    _n=0
    while read -r _k _rest; do
        case $_k in processor) _n=$((_n + 1)) ;; esac
    done < /proc/cpuinfo
    [ "$_n" -gt 0 ] || _n=1
    echo "$_n"
}

# cannot WHY: the tunnel is not measurable here; what was set up goes
cannot() {
    # on one line: the words of a tool's error (a usage text, say) are the reason
    say not-measurable "$(printf '%s' "$*" | tr '\n\t' '  ')"
    cleanup_dir "$SB_DIR"
    say end
    exit 0
}

prerequisites() {
    if ! [ -r /proc/stat ] || ! [ -e /proc/self/ns/net ]; then
        cannot "no /proc mounted (a chroot needs its own /proc for ip netns)"
    fi
    root_is_mount_point || cannot "/ is not a mount point (a chroot: ip netns exec makes / a slave mount, which needs one; bind-mount the chroot onto itself)"
    [ -d /sys ] || cannot "no /sys to mount sysfs on (ip netns exec needs it)"
    command -v ip >/dev/null 2>&1 || cannot "no ip command"
    _err=$(ip netns list 2>&1) || cannot "no ip netns (OpenWrt: ip-full): $(first_line ip netns list)"
    command -v iperf3 >/dev/null 2>&1 || cannot "no iperf3"
    case $SB_TUNNEL in
        wireguard) command -v wg >/dev/null 2>&1 || cannot "no wg (wireguard-tools)" ;;
        openvpn-dco-*) [ -d /sys/module/ovpn_dco_v2 ] || [ -d /sys/module/ovpn ] || cannot "no ovpn-dco" ;;
    esac
    case $SB_TUNNEL in
        wireguard) ;;
        openvpn-*) command -v openvpn >/dev/null 2>&1 || cannot "no openvpn"
                   command -v "$SB_OPENSSL" >/dev/null 2>&1 || cannot "no openssl to make the certificates" ;;
        *) cannot "unknown tunnel $SB_TUNNEL" ;;
    esac
}

# root_is_mount_point: / is one of /proc/self/mountinfo's mount points (field 5); without mountinfo, assumed
root_is_mount_point() {
    [ -r /proc/self/mountinfo ] || return 0
    while read -r _id _parent _dev _root _point _rest; do
        [ "$_point" = / ] && return 0
    done < /proc/self/mountinfo
    return 1
}

make_namespaces() {
    # written before they exist: a cleanup at any moment after this deletes what there is
    echo "$SB_NS_A $SB_NS_B" >> "$SB_T/netns"
    _err=$(ip netns add "$SB_NS_A" 2>&1 && ip netns add "$SB_NS_B" 2>&1) || cannot "ip netns add: $_err"
    _err=$(ip netns exec "$SB_NS_A" true 2>&1) || cannot "ip netns exec: $_err (in a chroot: /proc and /sys mounted, / a mount point)"
    _err=$(ip netns exec "$SB_NS_A" ip link add sbv type veth peer name sbv netns "$SB_NS_B" 2>&1) \
        || cannot "no veth: $_err"
    ip netns exec "$SB_NS_A" ip addr add "$SB_VETH_A/30" dev sbv
    ip netns exec "$SB_NS_B" ip addr add "$SB_VETH_B/30" dev sbv
    for _ns in "$SB_NS_A" "$SB_NS_B"; do
        ip netns exec "$_ns" ip link set lo up
        ip netns exec "$_ns" ip link set sbv up
    done
}

wg_keys() {
    _umask=$(umask)
    umask 077
    if ! { wg genkey > "$SB_T/a.key" && wg genkey > "$SB_T/b.key"; }; then cannot "wg genkey failed"; fi
    umask "$_umask"
    if ! { wg pubkey < "$SB_T/a.key" > "$SB_T/a.pub" && wg pubkey < "$SB_T/b.key" > "$SB_T/b.pub"; }; then
        cannot "wg pubkey failed"
    fi
}

# wg_end SIDE NS IF ADDR PEER-ADDR PEER-SIDE PEER-ENDPOINT
wg_end() {
    read -r _peer < "$SB_T/$6.pub"
    ip netns exec "$2" wg set "$3" private-key "$SB_T/$1.key" listen-port 51820 \
        peer "$_peer" allowed-ips "$5/32" endpoint "$7:51820" || cannot "wg set failed"
    ip netns exec "$2" ip addr add "$4/24" dev "$3"
    ip netns exec "$2" ip link set "$3" up
}

wireguard_up() {
    wg_keys
    # kernel WireGuard where the kernel has it (a module loads on demand where allowed), else wireguard-go
    if ip netns exec "$SB_NS_A" ip link add "$SB_WG_A" type wireguard 2>/dev/null \
        && ip netns exec "$SB_NS_B" ip link add "$SB_WG_B" type wireguard 2>/dev/null; then
        say implementation "kernel $(uname -r)"
    elif command -v wireguard-go >/dev/null 2>&1; then
        [ -c /dev/net/tun ] || cannot "no /dev/net/tun for wireguard-go"
        ip netns exec "$SB_NS_A" ip link del "$SB_WG_A" 2>/dev/null
        say implementation "wireguard-go $(wg_go_version)"
        # -f: in the foreground, a child of this script whose pid is known (its UAPI socket is named by the
        # interface, in /var/run/wireguard: the names carry this run's tag)
        ns_run "$SB_NS_A" wireguard-go-a env WG_PROCESS_FOREGROUND=1 wireguard-go -f "$SB_WG_A"
        ns_run "$SB_NS_B" wireguard-go-b env WG_PROCESS_FOREGROUND=1 wireguard-go -f "$SB_WG_B"
        if ! { wait_for_link "$SB_NS_A" "$SB_WG_A" && wait_for_link "$SB_NS_B" "$SB_WG_B"; }; then
            cannot "wireguard-go did not create its interface: $(tail -n 2 "$SB_T/wireguard-go-a.out" 2>/dev/null)"
        fi
    else
        cannot "no wireguard in the kernel and no wireguard-go"
    fi
    wg_end a "$SB_NS_A" "$SB_WG_A" "$SB_TUN_A" "$SB_TUN_B" b "$SB_VETH_B"
    wg_end b "$SB_NS_B" "$SB_WG_B" "$SB_TUN_B" "$SB_TUN_A" a "$SB_VETH_A"
    SB_TUN_IF=$SB_WG_A
    [ -n "${SB_SIDE_A:-}" ] || SB_SIDE_A=wireguard-go-a
}

wg_go_version() {
    _v=$(first_line wireguard-go --version)
    _v=${_v#wireguard-go v}
    echo "${_v%% *}"
}

# wait_for_link NS IF: up to 10 s for IF to appear in NS
wait_for_link() {
    _i=0
    while [ "$_i" -lt 20 ]; do
        ip netns exec "$1" ip link show "$2" >/dev/null 2>&1 && return 0
        _i=$((_i + 1))
        sleep 0.5 2>/dev/null || sleep 1
    done
    return 1
}

ovpn_cert() {
    "$SB_OPENSSL" ecparam -name prime256v1 -genkey -noout -out "$SB_T/$1.pem" 2>/dev/null \
        && "$SB_OPENSSL" req -new -x509 -key "$SB_T/$1.pem" -out "$SB_T/$1.crt" -days 2 -subj "/CN=sslbench-$1" \
            2>/dev/null || return 1
    fingerprint "$("$SB_OPENSSL" x509 -in "$SB_T/$1.crt" -noout -fingerprint -sha256)"
}

# ovpn_end SIDE NS LOCAL REMOTE TUN-LOCAL TUN-REMOTE PEER-FINGERPRINT ROLE
ovpn_end() {
    ns_run "$2" "openvpn-$1" openvpn --dev sbo --dev-type tun --proto udp --local "$3" --lport 1194 \
        --remote "$4" --rport 1194 --ifconfig "$5" "$6" --"$8" --dh none --cert "$SB_T/$1.crt" \
        --key "$SB_T/$1.pem" --peer-fingerprint "$7" --data-ciphers "$SB_CIPHER" --cipher "$SB_CIPHER" \
        $SB_DCO --sndbuf "$SB_SOCKBUF" --rcvbuf "$SB_SOCKBUF" --verb 3 --ping 1 --ping-exit 30
}

openvpn_up() {
    case $SB_TUNNEL in
        *aes-256-gcm) SB_CIPHER=AES-256-GCM ;;
        *chacha20-poly1305) SB_CIPHER=CHACHA20-POLY1305 ;;
        *) cannot "unknown tunnel $SB_TUNNEL" ;;
    esac
    [ -c /dev/net/tun ] || cannot "no /dev/net/tun"
    _ver=$(first_line openvpn --version)
    _ver=${_ver#OpenVPN }
    # TLS with --peer-fingerprint (no CA to make, no --secret, which 2.6 deprecates) and --disable-dco: 2.6 on
    case ${_ver%% *} in
        2.[0-5].* | 2.[0-5] | 1.*) cannot "openvpn ${_ver%% *} has no --peer-fingerprint (OpenVPN 2.6 or later)" ;;
    esac
    SB_DCO=--disable-dco
    case $SB_TUNNEL in
        openvpn-dco-*) SB_DCO= ; say implementation "openvpn-dco ${_ver%% *}" ;;
        *) say implementation "openvpn-tun ${_ver%% *}" ;;
    esac
    if ! { _fa=$(ovpn_cert a) && _fb=$(ovpn_cert b); }; then
        cannot "openssl could not make an EC (prime256v1) certificate"
    fi
    say sockbuf "$SB_SOCKBUF"
    ovpn_end a "$SB_NS_A" "$SB_VETH_A" "$SB_VETH_B" "$SB_TUN_A" "$SB_TUN_B" "$_fb" tls-server
    ovpn_end b "$SB_NS_B" "$SB_VETH_B" "$SB_VETH_A" "$SB_TUN_B" "$SB_TUN_A" "$_fa" tls-client
    SB_TUN_IF=sbo SB_SIDE_A=openvpn-a
}

# tunnel_ready: up to 30 s for the tunnel to come up: OpenVPN's TLS done on both ends (its log says so); WireGuard
# handshakes on the first packet, so a ping crosses it where there is ping (a box without one goes on: iperf3
# connects through the handshake)
tunnel_ready() {
    _i=0
    while [ "$_i" -lt 30 ]; do
        case $SB_TUNNEL in
            openvpn-*) grep -q "Initialization Sequence Completed" "$SB_T/openvpn-a.out" 2>/dev/null \
                           && grep -q "Initialization Sequence Completed" "$SB_T/openvpn-b.out" 2>/dev/null \
                           && return 0 ;;
            *) command -v ping >/dev/null 2>&1 || return 0
               ip netns exec "$SB_NS_B" ping -c 1 -W 1 "$SB_TUN_A" >/dev/null 2>&1 && return 0 ;;
        esac
        _i=$((_i + 1))
        for _p in $(pids_of tunnel.pids); do alive "$_p" || return 1; done
        sleep 1
    done
    return 1
}

mtu_of() {
    _m=$(ip netns exec "$1" ip link show "$2" 2>/dev/null)
    _m=${_m#* mtu }
    echo "${_m%% *}"
}

alive() {
    [ -r "/proc/$1/stat" ] || return 1
    read -r _pid _comm _state _rest 2>/dev/null < "/proc/$1/stat" || return 1
    [ "$_state" != Z ]
}

pids_of() {
    [ -f "$SB_T/$1" ] || return 0
    while read -r _name _pid; do echo "$_pid"; done < "$SB_T/$1"
}

# iperf3_run NAME CMD...: CMD (an iperf3) in a shell of its own in the namespace that then prints the CPU ticks it
# used (cutime/cstime once reaped: exact, and nothing to race its exit)
iperf3_side() {
    _ns=$1 _name=$2
    shift 2
    # shellcheck disable=SC2016  # expanded by the shell in the namespace
    ip netns exec "$_ns" sh -c '"$@" & echo "$!" > "$SB_PIDFILE"; wait "$!"; rc=$?
        read -r s < /proc/self/stat; s=${s##*) }; set -- $s; echo "@@ iperf3-cpu ${14} ${15} $rc"' \
        sh "$@" > "$SB_T/$_name.out" 2>&1 &
    remember_pid "$_name" $!
}

measure_once() {
    # $1 direction, $2 streams
    # -i 0: no interval reports (the sums at the end are what is read; a shorter log ships in fewer polls)
    _client="-c $SB_TUN_A -t $SB_SECONDS -J -i 0 -P $2"
    [ "$1" = reverse ] && _client="$_client -R"
    _server="-s -1 -i 0 -B $SB_TUN_A -p $SB_PORT"
    # the server ends after one test, and on its own when the client never comes or stops sending
    iperf3_has --idle-timeout && _server="$_server --idle-timeout $((SB_SECONDS + 30))"
    iperf3_has --rcv-timeout && _server="$_server --rcv-timeout 10000"
    iperf3_has --connect-timeout && _client="$_client --connect-timeout 5000"
    iperf3_has --snd-timeout && _client="$_client --snd-timeout 10000"
    say run "$1 $2"
    # shellcheck disable=SC2086  # option words built above
    SB_PIDFILE=$SB_T/iperf3-server.pid iperf3_side "$SB_NS_A" iperf3-server iperf3 $_server
    sleep 1
    # the snapshots bound the client's run alone: the server's start is not the test
    snapshot before
    # shellcheck disable=SC2086
    SB_PIDFILE=$SB_T/iperf3-client.pid iperf3_side "$SB_NS_B" iperf3-client iperf3 -p "$SB_PORT" $_client
    wait $!
    snapshot after
    # the server ends with the test (-1); its idle timeout bounds a test that never came
    _w=0
    while read -r _p 2>/dev/null < "$SB_T/iperf3-server.pid" && alive "$_p" && [ "$_w" -lt 5 ]; do
        sleep 1; _w=$((_w + 1))
    done
    kill_pids iperf3-server.pid TERM
    say iperf3 client
    cat "$SB_T/iperf3-client.out"
    say iperf3 server
    cat "$SB_T/iperf3-server.out"
}

kill_pids() {
    [ -f "$SB_T/$1" ] || return 0
    while read -r _a _b; do
        _p=${_b:-$_a}
        kill "-$2" "$_p" 2>/dev/null
    done < "$SB_T/$1"
}

header() {
    say tunnel "$SB_TUNNEL"
    say kernel "$(uname -r)"
    say hz 100
    say cores "$SB_CORES"
    say seconds "$SB_SECONDS"
    SB_IPERF3_HELP=$(iperf3 --help 2>&1)
    command -v iperf3 >/dev/null 2>&1 && say iperf3-version "$(first_line iperf3 --version)"
}

measure() {
    SB_DIR=$1 SB_TAG=$2 SB_TUNNEL=$3 SB_SECONDS=$4 SB_STREAMS=$5 SB_REPEATS=${6:-1}
    SB_T=$SB_DIR/tunnel
    SB_NS_A=sb-$SB_TAG-a SB_NS_B=sb-$SB_TAG-b
    # wireguard-go's UAPI socket is named by the interface in the one /var/run/wireguard: the interfaces carry
    # the tag's end (the host's hash) and this script's pid, within the 15 characters of an interface name
    _end=${SB_TAG#"${SB_TAG%??????}"}
    SB_WG_A=wg$_end$(($$ % 100000))a SB_WG_B=wg$_end$(($$ % 100000))b
    SB_OPENSSL=${SSLBENCH_OPENSSL:-openssl}
    SB_CORES=$(cores)
    mkdir -p "$SB_T" || { say not-measurable "cannot write $SB_T"; say end; exit 0; }
    : > "$SB_T/tunnel.pids"
    trap 'cleanup_dir "$SB_DIR"; echo "@@ stopped"; exit 143' TERM INT HUP
    header
    prerequisites
    make_namespaces
    case $SB_TUNNEL in
        wireguard) wireguard_up ;;
        openvpn-*) openvpn_up ;;
    esac
    tunnel_ready || cannot "the tunnel did not come up: $(tail -n 3 "$SB_T/$SB_SIDE_A.out" 2>/dev/null)"
    say mtu "tunnel $(mtu_of "$SB_NS_A" "$SB_TUN_IF")"
    say mtu "veth $(mtu_of "$SB_NS_A" sbv)"
    _r=1
    while [ "$_r" -le "$SB_REPEATS" ]; do
        say repeat "$_r"
        measure_once forward 1
        measure_once reverse 1
        if [ "$SB_STREAMS" -gt 1 ]; then
            measure_once forward "$SB_STREAMS"
            measure_once reverse "$SB_STREAMS"
        fi
        _r=$((_r + 1))
    done
    cleanup_dir "$SB_DIR"
    say end
}

# cleanup_dir DIR: every process DIR/tunnel/pids names (TERM, KILL after 5 s), then the namespaces (the veth pair
# and the tunnel interfaces inside them go with them); no error when there is nothing left
cleanup_dir() {
    _t=$1/tunnel
    [ -d "$_t" ] || return 0
    if [ -f "$_t/pids" ]; then
        while read -r _name _pid; do
            kill_tree "$_pid" TERM
        done < "$_t/pids"
        _w=0
        while [ "$_w" -lt 5 ]; do
            _left=
            while read -r _name _pid; do alive "$_pid" && _left=1; done < "$_t/pids"
            [ -n "$_left" ] || break
            sleep 1; _w=$((_w + 1))
        done
        while read -r _name _pid; do kill_tree "$_pid" KILL; done < "$_t/pids"
        rm -f "$_t/pids"
    fi
    if [ -f "$_t/netns" ]; then
        while read -r _a _b; do
            for _ns in $_a $_b; do
                ip netns del "$_ns" 2>/dev/null
            done
        done < "$_t/netns"
        rm -f "$_t/netns"
    fi
    rm -f "$_t"/*.key "$_t"/*.pem
}

kill_tree() {
    # children first, from /proc (no pgrep on many routers); only processes that are still ours: a pid file can
    # outlive its process, so a pid is killed only while alive
    alive "$1" || return 0
    for _st in /proc/[0-9]*/stat; do
        read -r _cp _cc _cs _cpp _r 2>/dev/null < "$_st" || continue
        [ "$_cpp" = "$1" ] && kill_tree "$_cp" "$2"
    done
    kill "-$2" "$1" 2>/dev/null
}

[ -n "${SSLBENCH_TUNNEL_LIB:-}" ] && return 0 2>/dev/null
echo ""
case $1 in
    measure) shift; measure "$@" ;;
    cleanup) cleanup_dir "$2" ;;
    *) echo "usage: tunnel.sh measure DIR TAG TUNNEL SECONDS STREAMS [REPEATS] | cleanup DIR" >&2; exit 2 ;;
esac
