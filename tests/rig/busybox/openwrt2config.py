#!/usr/bin/env python3
"""Translate OpenWrt's package/utils/busybox/Config-defaults.in into BusyBox .config lines.

Rule (see README.md): every `config BUSYBOX_DEFAULT_X` becomes CONFIG_X, with its first applicable
`default`: bool y -> `CONFIG_X=y`, bool n -> `# CONFIG_X is not set`, string -> `CONFIG_X="..."`,
int -> `CONFIG_X=N`. A conditional `default V if SYM` applies when SYM is in --assume (the OpenWrt
symbols true for the build we model, e.g. IPV6); otherwise the next default is used.

Then each --set SYM=VAL (the rig's documented overrides and mappings, see README.md) replaces or
adds CONFIG_SYM; VAL `n` writes `# CONFIG_SYM is not set`.

usage: openwrt2config.py Config-defaults.in [--assume SYM ...] [--set SYM=VAL ...] > partial.config
"""
import re
import sys


def translate(text, assume):
    out, name, kind, value = [], None, None, None

    def flush():
        if name is None:
            return
        if kind == "bool":
            out.append(f"CONFIG_{name}=y" if value == "y" else f"# CONFIG_{name} is not set")
        else:  # string (kept quoted as written) or int
            out.append(f"CONFIG_{name}={value}")

    for line in text.splitlines():
        m = re.match(r"^config BUSYBOX_DEFAULT_(\w+)$", line)
        if m:
            flush()
            name, kind, value = m.group(1), None, None
            continue
        s = line.strip()
        if s in ("bool", "string", "int", "hex"):
            kind = s
            continue
        m = re.match(r"^default (.+?)(?: if (\w+))?$", s)
        if m and value is None:
            if m.group(2) is None or m.group(2) in assume:
                value = m.group(1)
            continue
        if s and not s.startswith("default"):
            raise SystemExit(f"unexpected line: {line!r}")
    flush()
    return out


def apply_sets(lines, sets):
    out = list(lines)
    for item in sets:
        sym, val = item.split("=", 1)
        new = f"# CONFIG_{sym} is not set" if val == "n" else f"CONFIG_{sym}={val}"
        hit = [i for i, l in enumerate(out)
               if l == f"# CONFIG_{sym} is not set" or l.startswith(f"CONFIG_{sym}=")]
        if hit:
            out[hit[0]] = new
        else:
            out.append(new)
    return out


if __name__ == "__main__":
    args, assume, sets, mode = sys.argv[2:], set(), [], None
    for a in args:
        if a in ("--assume", "--set"):
            mode = a
        elif mode == "--assume":
            assume.add(a)
        elif mode == "--set":
            sets.append(a)
        else:
            raise SystemExit(__doc__)
    lines = translate(open(sys.argv[1]).read(), assume)
    print("\n".join(apply_sets(lines, sets)))
