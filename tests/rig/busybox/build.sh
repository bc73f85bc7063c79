#!/bin/sh
# Build a dynamically linked BusyBox from a rig config (see README.md in this directory).
#   build.sh CONFIG SRC_DIR OUT
# CONFIG: one of the *.config files here; SRC_DIR: an unpacked Debian bookworm busybox 1.35.0
# source tree (`apt-get source busybox`, Debian's patches applied); OUT: where the binary goes.
# The configs are complete for 1.35.0, so `make oldconfig` must not change a symbol; the script
# stops if it does (another BusyBox version, or a hand-edited config).
set -eu
[ $# -eq 3 ] || { echo "usage: $0 CONFIG SRC_DIR OUT" >&2; exit 2; }
config=$1 src=$2 out=$3
{ [ -f "$src/Makefile" ] && [ -f "$src/Config.in" ]; } || { echo "$0: $src is not a BusyBox source tree" >&2; exit 2; }
cp "$config" "$src/.config"
yes "" | make -C "$src" oldconfig >/dev/null
changed=$(diff "$config" "$src/.config" | grep -E '^[<>] (# )?CONFIG_' || true)
if [ -n "$changed" ]; then
    printf '%s\n%s\n' "$0: make oldconfig changed symbols of $config:" "$changed" >&2
    exit 1
fi
make -C "$src" -j2 busybox
cp "$src/busybox" "$out"
