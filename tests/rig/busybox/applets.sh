#!/bin/sh
# List the applets a BusyBox binary really runs, one per line (sorted).
#   applets.sh BUSYBOX SRC_DIR
# The rig's configs leave out the `busybox` applet (as OpenWrt and DD-WRT do), so `busybox --list`
# answers "--list: applet not found"; instead every applet name that SRC_DIR's BusyBox source
# knows is tried as `busybox NAME --help` (usage text, runs nothing) and kept unless BusyBox says
# "NAME: applet not found". Without the busybox applet, `busybox NAME` works only when the
# binary's own name starts with "busybox", so it is called through a symlink of that name.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUSYBOX SRC_DIR" >&2; exit 2; }
src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ln -s "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" "$tmp/busybox"
bb=$tmp/busybox
"$bb" true || { echo "$0: '$bb true' fails" >&2; exit 1; }
grep -rhoE --include='*.c' --exclude-dir=.pc '^//applet:(IF_[A-Z0-9_]+\([[:space:]]*)+APPLET[A-Z_]*\([^,]+' "$src" \
    | sed -E 's/.*APPLET[A-Z_]*\(//; s/[[:space:]]//g' | sort -u | while read -r name; do
    if ! "$bb" "$name" --help </dev/null 2>&1 | grep -qxF "$name: applet not found"; then
        echo "$name"
    fi
done
