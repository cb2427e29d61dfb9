#!/usr/bin/env python3
"""bench/throughput.py: owns the real-program throughput measurement
(Python 3 stdlib only).

The kernels' method (docs/benchmarks.md) applied to real programs: each
case runs at two sizes, SIZE and SIZE/2, natively under callgrind (x86-64
instructions, exact and repeatable) and under aarchx under qemu-aarch64
with the TCG plugin bench/build/libinsncount.so (`make -C bench plugin`);
the difference of the two runs is the work SIZE/2 more units cost, so
start-up and translation of code both sizes run drop out. Prints per case
arm64 instructions per x86-64 instruction of that difference, and checks
that aarchx's output equals the native run's at both sizes (a case whose
outputs differ is reported, not counted). Each case's input is made
first, natively, in a fresh folder ({n} in its commands is the size).
aarchx runs with the persistent cache off (AARCHX_CACHE=off), so the
SIZE/2 run cannot take what the SIZE run translated. The native run
masks the CPU features above x86-64's baseline from glibc
(GLIBC_TUNABLES, BASELINE), so its string and memory routines are the
ones glibc picks under aarchx's default `cpu_level: V1` (`--native-level
host` leaves them to valgrind's CPU).

    python3 bench/throughput.py --aarchx BUILD [--policy FILE] [--case NAME]...

A case is a command for one program (no shell: callgrind follows one
process) and the shell line that makes its input; CASES below.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

from progress import Progress

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (name, what, SIZE, input maker (sh, {n}), command ({n})). Inputs are
# deterministic: the two sizes are the same kind of data.
GEN_TEXT = "awk 'BEGIN {{ for (i = 0; i < {n}; i++) printf \"%d line %x of the text %d\\n\", i * 7919 % 10007, i * 31, i }}' > in"
CASES = [
    ("gzip-9", "gzip -9 of generated text", 40000, GEN_TEXT, ["/bin/gzip", "-9", "-c", "in"]),
    ("xz-6", "xz -6 of generated text", 20000, GEN_TEXT, ["/usr/bin/xz", "-6", "-c", "-T1", "in"]),
    # One thread: more would make aarchx's Auto memory model go ordered
    # and callgrind serialise them.
    ("sort", "sort of generated lines", 200000, GEN_TEXT, ["/usr/bin/sort", "--parallel=1", "in"]),
    ("sha256sum", "sha256sum of generated text", 200000, GEN_TEXT, ["/usr/bin/sha256sum", "in"]),
    ("python3-loop", "a pure-Python loop", 1000000, "true",
     ["/usr/bin/python3", "-c", "s = 0\nfor i in range({n}):\n    s = (s * 31 + i) % 1000003\nprint(s)"]),
    ("perl-regex", "a perl regex pass over generated text", 200000, GEN_TEXT,
     ["/usr/bin/perl", "-ne", "$c++ while /(\\d+) line ([0-9a-f]+)/g; END { print \"$c\\n\" }", "in"]),
    ("sqlite3", "sqlite3 inserting and aggregating rows", 100000, "true",
     ["/usr/bin/sqlite3", ":memory:",
      "create table t(a, b); with recursive n(i) as (select 1 union all select i + 1 from n where i < {n}) "
      "insert into t select i, i * 7919 % 10007 from n; select count(*), sum(b), max(a) from t where b % 3 = 1;"]),
]


# Both runs of a case see these: the interpreters' hash seeds fixed, so
# their work does not change from run to run.
FIXED_ENV = {"PYTHONHASHSEED": "0", "PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0", "LC_ALL": "C"}

# glibc's hardware capabilities above x86-64's baseline, masked for the
# native run at --native-level v1.
BASELINE = "glibc.cpu.hwcaps=" + ",".join(
    "-" + f for f in ["SSE3", "SSSE3", "SSE4_1", "SSE4_2", "POPCNT", "AVX", "AVX2", "BMI1", "BMI2", "LZCNT",
                      "MOVBE", "ERMS", "FSRM", "AVX512F", "AVX512BW", "AVX512VL", "RTM"])


def fill(words, n):
    return [w.replace("{n}", str(n)) for w in words]


def prepare(work, maker, n):
    """A fresh folder with the case's input of size n."""
    d = os.path.join(work, str(n))
    os.makedirs(d, exist_ok=True)
    subprocess.run(["sh", "-c", maker.format(n=n)], cwd=d, check=True)
    return d


def native(cmd, cwd, level):
    """(stdout, x86-64 instructions) of one run under callgrind."""
    with tempfile.NamedTemporaryFile(suffix=".out", dir=cwd, delete=False) as out:
        name = out.name
    env = dict(os.environ, **FIXED_ENV)
    if level == "v1":
        env["GLIBC_TUNABLES"] = BASELINE
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--log-file=" + name, *cmd],
        cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
    )
    with open(name) as f:
        log = f.read()
    os.unlink(name)
    m = re.search(r"Collected : (\d+)", log)
    if proc.returncode != 0 or not m:
        sys.exit(f"throughput.py: {' '.join(cmd)} failed natively under callgrind (exit {proc.returncode})")
    return proc.stdout, int(m.group(1))


def translated(args, cmd, cwd):
    """(stdout, arm64 instructions) of one run under aarchx and qemu."""
    with tempfile.NamedTemporaryFile(suffix=".count") as count:
        env = dict(os.environ, AARCHX_CACHE="off", **FIXED_ENV)
        policy = ["--policy", args.policy] if args.policy else []
        proc = subprocess.run(
            [args.qemu, "-plugin", f"{args.plugin},out={count.name}", "-d", "plugin", args.aarchx, *policy, *cmd],
            cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
        )
        text = open(count.name).read()
    m = re.search(r"^insns (\d+)", text, re.M)
    if not m:
        sys.exit(f"throughput.py: no count from the plugin for {' '.join(cmd)} (exit {proc.returncode})")
    return proc.stdout, int(m.group(1)), proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aarchx", required=True, help="an aarch64 aarchx build (runs under qemu-aarch64)")
    ap.add_argument("--policy", help="a policy file (default: aarchx's default)")
    ap.add_argument("--case", action="append", default=[], help="only this case (repeat); default all")
    ap.add_argument("--size", action="append", default=[], metavar="CASE=N", help="the case's SIZE")
    ap.add_argument("--native-level", choices=["v1", "host"], default="v1",
                    help="glibc's routines in the native run: the baseline ones (default) or valgrind's CPU's")
    ap.add_argument("--qemu", default="qemu-aarch64")
    ap.add_argument("--plugin", default=os.path.join(HERE, "build", "libinsncount.so"))
    args = ap.parse_args()
    sizes = dict(s.split("=", 1) for s in args.size)
    cases = [c for c in CASES if not args.case or c[0] in args.case]
    unknown = set(args.case) - {c[0] for c in CASES}
    if unknown:
        sys.exit(f"throughput.py: no case {', '.join(sorted(unknown))} (cases: {', '.join(c[0] for c in CASES)})")
    progress = Progress(4 * len(cases), "runs")
    rows = []
    with tempfile.TemporaryDirectory(prefix="aarchx-throughput-") as work:
        for name, what, size, maker, cmd in cases:
            size = int(sizes.get(name, size))
            counts = {}
            differs = False
            for n in (size, size // 2):
                d = prepare(os.path.join(work, name), maker, n)
                progress.status(f"{name} at {n}: natively under callgrind")
                out_n, x86 = native(fill(cmd, n), d, args.native_level)
                progress.advance()
                progress.status(f"{name} at {n}: under aarchx")
                out_a, arm, rc = translated(args, fill(cmd, n), d)
                progress.advance()
                differs |= out_a != out_n or rc != 0
                counts[n] = (x86, arm)
            (x1, a1), (x2, a2) = counts[size], counts[size // 2]
            ratio = (a1 - a2) / (x1 - x2) if x1 != x2 else float("nan")
            rows.append((name, what, size, x1 - x2, a1 - a2, ratio, differs))
            progress.log(f"{name}: {'OUTPUT DIFFERS' if differs else f'{ratio:.2f} arm64 per x86-64 instruction'}")
    progress.close()
    print("| case | what | SIZE | x86-64 insns (difference) | arm64 insns (difference) | arm64 / x86-64 |")
    print("|---|---|---:|---:|---:|---:|")
    for name, what, size, dx, da, ratio, differs in rows:
        shown = "output differs" if differs else f"{ratio:.2f}"
        print(f"| `{name}` | {what} | {size} | {dx / 1e6:.1f} M | {da / 1e6:.1f} M | {shown} |")


if __name__ == "__main__":
    main()
