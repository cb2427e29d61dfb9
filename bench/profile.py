#!/usr/bin/env python3
"""bench/profile.py: owns the translation-cost profile (Python 3 stdlib only).

Runs one command under an aarch64 aarchx build in qemu-aarch64 with the
instruction-count plugin in block mode (bench/build/libinsncount.so,
`make -C bench plugin`), which counts the arm64 instructions executed per
QEMU translation block, and attributes each block to the aarchx function
holding its first instruction (the build's symbol table, `nm`; the build
is static and not position-independent, so addresses need no base).
Blocks outside aarchx's own code are the translated guest code (the JIT's
code cache). Prints a markdown table of the functions with the largest
shares, for docs/benchmarks.md ("Where translation goes"):

    python3 bench/profile.py --aarchx AARCH64_AARCHX [--top 30] [-- COMMAND...]

COMMAND defaults to `/usr/bin/python3 -c pass`, the costliest start-up of
bench/cold.py.
"""

import argparse
import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_COMMAND = ["/usr/bin/python3", "-c", "pass"]


def symbols(binary):
    """Sorted (start, end, name) of the binary's functions, names demangled
    without Rust's hash suffix."""
    out = subprocess.run(["nm", "--defined-only", "-S", "-C", binary], capture_output=True, text=True, check=True)
    funcs = []
    for line in out.stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) != 4 or parts[2] not in "tTwW":
            continue
        start, size = int(parts[0], 16), int(parts[1], 16)
        if size == 0:
            continue
        funcs.append((start, start + size, re.sub(r"::h[0-9a-f]{16}$", "", parts[3])))
    funcs.sort()
    return funcs


def blocks(qemu, plugin, aarchx, command):
    """(total arm64 instructions, [(block address, instructions executed)])."""
    with tempfile.NamedTemporaryFile(suffix=".blocks") as out:
        proc = subprocess.run(
            [qemu, "-plugin", f"{plugin},mode=blocks,top=1000000000,out={out.name}", aarchx, *command],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        if proc.returncode != 0:
            sys.exit(f"profile.py: {' '.join(command)} under {aarchx} exited with {proc.returncode}:\n{proc.stderr}")
        text = open(out.name).read()
    total = int(re.search(r"^insns (\d+)", text, re.M).group(1))
    found = [(int(a, 16), int(t)) for a, t in re.findall(r"^block 0x([0-9a-f]+) .* total (\d+)$", text, re.M)]
    return total, found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aarchx", required=True, help="an aarch64 aarchx build (static, with its symbol table)")
    ap.add_argument("--top", type=int, default=30, help="functions to list (default 30)")
    ap.add_argument("--plugin", default=os.path.join(HERE, "build", "libinsncount.so"))
    ap.add_argument("--qemu", default="qemu-aarch64")
    ap.add_argument("command", nargs="*", help="the guest command (default: python3 -c pass)")
    args = ap.parse_args()
    if not os.path.exists(args.plugin):
        sys.exit(f"profile.py: no plugin at {args.plugin}: run `make -C bench plugin`")
    command = args.command or DEFAULT_COMMAND
    funcs = symbols(args.aarchx)
    starts = [f[0] for f in funcs]
    print(f"profile.py: running {' '.join(command)} under {args.aarchx}", file=sys.stderr)
    total, found = blocks(args.qemu, args.plugin, args.aarchx, command)
    by_func = collections.Counter()
    for addr, insns in found:
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < funcs[i][1]:
            by_func[funcs[i][2]] += insns
        else:
            by_func["(translated guest code and other unnamed code)"] += insns
    counted = sum(by_func.values())
    print(f"`{' '.join(command)}`: {total / 1e9:.2f} G arm64 instructions "
          f"({counted / 1e9:.2f} G attributed to blocks)\n")
    print("| share | arm64 insns (M) | function |")
    print("|---:|---:|---|")
    for name, insns in by_func.most_common(args.top):
        print(f"| {100 * insns / total:.1f}% | {insns / 1e6:.1f} | `{name}` |")


if __name__ == "__main__":
    main()
