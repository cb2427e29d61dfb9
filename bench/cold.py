#!/usr/bin/env python3
"""bench/cold.py: owns the cold-code measurement (Python 3 stdlib only).

Runs short commands that are mostly translation (an interpreter starting
up, a tool printing its version) under each given aarchx build, counting
the arm64 instructions qemu-aarch64 executes with the TCG plugin
bench/build/libinsncount.so (`make -C bench plugin`), and reads aarchx's
AARCHX_STATS line for what was translated. Each run starts with an empty
persistent cache of its own (XDG_CACHE_HOME in a temporary folder).
Prints a markdown table: per command and build, arm64 instructions (G),
regions, guest instructions translated and those translated more than
once; with two builds, the second's instructions as a ratio of the
first's. With --warm, each command runs twice per build on one cache
folder: the cold run, then the warm one that finds the first's
translations (docs/cache.md), and the table gives both and their ratio.
docs/benchmarks.md ("Cold code") has the figures and the commands that
made them.

    python3 bench/cold.py --aarchx OLD --aarchx NEW
    python3 bench/cold.py --warm --aarchx BUILD
    python3 bench/cold.py --curve 12 --aarchx BUILD

--curve N prints the coverage curve instead: N python3 start-ups on one
cache folder, run k importing k+1 standard modules, each with the share
of the guest instructions it needed that came from the cache.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from progress import Progress

HERE = os.path.dirname(os.path.abspath(__file__))

COMMANDS = [
    ["/usr/bin/python3", "-c", "pass"],
    ["/bin/bash", "-c", "true"],
    ["/usr/bin/perl", "-e", "1"],
    ["/usr/bin/sqlite3", ":memory:", "select(1)"],
    ["/usr/bin/git", "--version"],
    ["/bin/gzip", "--version"],
]
# Longer start-ups, with --more: {repo} and {script} are made first.
MORE = [
    ["/usr/bin/python3", "-c", "import json, re"],
    ["/usr/bin/git", "-C", "{repo}", "status"],
    ["/bin/bash", "{script}"],
]


def setup(work):
    """Makes the small git repository and the 100-line bash script MORE uses."""
    repo, script = os.path.join(work, "repo"), os.path.join(work, "script.sh")
    os.makedirs(repo)
    git = ["git", "-C", repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", repo], check=True)
    for i in range(20):
        with open(os.path.join(repo, f"file{i}.txt"), "w") as f:
            f.write(f"line {i}\n" * 50)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "files"], check=True)
    with open(os.path.join(repo, "file3.txt"), "a") as f:
        f.write("changed\n")
    lines = ["#!/bin/bash", "total=0"]
    for i in range(49):
        lines.append(f"for j in 1 2 3; do total=$((total + j * {i})); done")
        lines.append(f'name="item{i}"; [ "${{#name}}" -gt 3 ] && total=$((total + 1))')
    lines.append('echo "$total"')
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    return {"repo": repo, "script": script}


# The coverage curve (--curve): python3 runs that each import other
# modules, one after another on one cache.
CURVE_MODULES = [
    "json", "re", "csv", "decimal", "fractions", "statistics", "textwrap", "argparse",
    "datetime", "collections", "itertools", "random", "string", "struct", "base64", "hashlib",
]


def curve(qemu, aarchx, runs, work):
    """Runs `runs` python3 start-ups, run k importing the first k+1 of
    CURVE_MODULES in turn, on one cache folder, and prints per run the
    share of the guest instructions it needed that came from the cache."""
    cache = os.path.join(work, "cache-curve")
    print("| run | imports | regions translated | regions from the cache | guest insns from the cache |")
    print("|---:|---|---:|---:|---:|")
    for k in range(runs):
        mods = CURVE_MODULES[: k % len(CURVE_MODULES) + 1]
        env = dict(os.environ, AARCHX_STATS="1", XDG_CACHE_HOME=cache)
        env.pop("AARCHX_CACHE", None)
        proc = subprocess.run(
            [qemu, aarchx, "/usr/bin/python3", "-c", f"import {', '.join(mods)}"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        if proc.returncode != 0:
            sys.exit(f"cold.py: python3 importing {mods} exited with {proc.returncode}")
        line = next((l for l in proc.stderr.splitlines() if l.startswith("aarchx-stats:")), "")
        stats = {k: int(v) for k, v in re.findall(r"(\w[\w.-]*)=(\d+)", line)}
        fresh, cached = stats.get("guest_insns", 0), stats.get("cache_insns", 0)
        share = cached / max(1, fresh + cached)
        print(f"| {k} | {mods[-1]} (+{len(mods) - 1}) | {stats.get('regions', '?')} | {stats.get('cache_hits', '?')} | {100 * share:.1f}% |", flush=True)


def run(qemu, plugin, aarchx, command, cache):
    """(arm64 instructions, stats dict) of one run with the persistent
    cache in the folder `cache`."""
    with tempfile.NamedTemporaryFile(suffix=".count") as out:
        env = dict(os.environ, AARCHX_STATS="1", XDG_CACHE_HOME=cache)
        env.pop("AARCHX_CACHE", None)
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
    ap.add_argument("--warm", action="store_true", help="run each command cold then warm (one build)")
    ap.add_argument("--more", action="store_true", help="add python3 importing json and re, git status, a bash script")
    ap.add_argument("--curve", type=int, metavar="N", help="print the coverage curve of N python3 runs (one build) instead")
    ap.add_argument("--plugin", default=os.path.join(HERE, "build", "libinsncount.so"))
    ap.add_argument("--qemu", default="qemu-aarch64")
    args = ap.parse_args()
    if not os.path.exists(args.plugin):
        sys.exit(f"cold.py: no plugin at {args.plugin}: run `make -C bench plugin`")
    if args.warm and len(args.aarchx) != 1:
        sys.exit("cold.py: --warm takes one build")
    work = tempfile.mkdtemp(prefix="aarchx-cold-")
    if args.curve:
        curve(args.qemu, args.aarchx[0], args.curve, work)
        shutil.rmtree(work, ignore_errors=True)
        return
    commands = COMMANDS
    if args.more:
        made = setup(work)
        commands = COMMANDS + [[w.format(**made) for w in c] for c in MORE]
    if args.warm:
        head = "| command | cold: arm64 insns | regions translated | warm: arm64 insns | regions translated | regions from the cache | warm / cold |"
    else:
        head = "| command |" + "".join(f" build {i + 1}: arm64 insns | regions | guest insns | translated again |" for i in range(len(args.aarchx)))
        if len(args.aarchx) == 2:
            head += " 2 / 1 |"
    print(head)
    print("|---|" + "---:|" * (head.count("|") - 2))
    progress = Progress(len(commands) * len(args.aarchx) * (2 if args.warm else 1), "runs")
    for n, command in enumerate(commands):
        shown = " ".join(os.path.basename(w) if w.startswith(work) else w for w in command)
        row, counts = f"| `{shown}` |", []
        for i, aarchx in enumerate(args.aarchx):
            cache = os.path.join(work, f"cache-{n}-{i}")
            for warm in [False, True] if args.warm else [False]:
                progress.status(f"{shown} under build {i + 1}{' (warm)' if warm else ''}")
                insns, stats = run(args.qemu, args.plugin, aarchx, command, cache)
                progress.advance()
                counts.append(insns)
                if args.warm:
                    row += f" {insns / 1e9:.2f} G | {stats.get('regions', '?')} |"
                    if warm:
                        row += f" {stats.get('cache_hits', '?')} |"
                else:
                    row += f" {insns / 1e9:.2f} G | {stats.get('regions', '?')} | {stats.get('guest_insns', '?')} | {stats.get('retranslated_insns', '?')} |"
        if len(counts) == 2:
            row += f" {counts[1] / counts[0]:.2f} |"
        progress.log(row, sys.stdout)
    progress.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
