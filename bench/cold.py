#!/usr/bin/env python3
"""bench/cold.py: owns the cold-code measurement (Python 3 stdlib only).

Runs short commands that are mostly translation (an interpreter starting
up, a tool printing its version) under each given aarchx build, counting
the arm64 instructions qemu-aarch64 executes with the TCG plugin
bench/build/libinsncount.so (`make -C bench plugin`), and reads aarchx's
AARCHX_STATS line for what was translated. Prints a markdown table: per
command and build, arm64 instructions (G), regions, guest instructions
translated and those translated more than once; with two builds, the
second's instructions as a ratio of the first's. docs/benchmarks.md
("Cold code") has the figures and the command that made them.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

COMMANDS = [
    ["/usr/bin/python3", "-c", "pass"],
    ["/bin/bash", "-c", "true"],
    ["/usr/bin/perl", "-e", "1"],
    ["/usr/bin/sqlite3", ":memory:", "select(1)"],
    ["/usr/bin/git", "--version"],
    ["/bin/gzip", "--version"],
]


def run(qemu, plugin, aarchx, command):
    """(arm64 instructions, stats dict) of one run."""
    with tempfile.NamedTemporaryFile(suffix=".count") as out:
        env = dict(os.environ, AARCHX_STATS="1")
        proc = subprocess.run(
            [qemu, "-plugin", f"{plugin},out={out.name}", aarchx, *command],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        if proc.returncode != 0:
            sys.exit(f"cold.py: {' '.join(command)} under {aarchx} exited with {proc.returncode}")
        insns = int(re.search(r"insns (\d+)", open(out.name).read()).group(1))
    stats = dict(re.findall(r"(\w[\w.-]*)=(\d+)", next((l for l in proc.stderr.splitlines() if l.startswith("aarchx-stats:")), "")))
    return insns, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aarchx", action="append", required=True, help="an aarch64 aarchx build (give one or two)")
    ap.add_argument("--plugin", default=os.path.join(HERE, "build", "libinsncount.so"))
    ap.add_argument("--qemu", default="qemu-aarch64")
    args = ap.parse_args()
    if not os.path.exists(args.plugin):
        sys.exit(f"cold.py: no plugin at {args.plugin}: run `make -C bench plugin`")
    head = "| command |" + "".join(f" build {i + 1}: arm64 insns | regions | guest insns | translated again |" for i in range(len(args.aarchx)))
    if len(args.aarchx) == 2:
        head += " 2 / 1 |"
    print(head)
    print("|---|" + "---:|" * (head.count("|") - 2))
    for command in COMMANDS:
        row, counts = f"| `{' '.join(command)}` |", []
        for i, aarchx in enumerate(args.aarchx):
            print(f"cold.py: {' '.join(command)} under build {i + 1}", file=sys.stderr)
            insns, stats = run(args.qemu, args.plugin, aarchx, command)
            counts.append(insns)
            row += f" {insns / 1e9:.2f} G | {stats.get('regions', '?')} | {stats.get('guest_insns', '?')} | {stats.get('retranslated_insns', '?')} |"
        if len(counts) == 2:
            row += f" {counts[1] / counts[0]:.2f} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
