#!/usr/bin/env python3
"""bench/run.py: owns the benchmark harness of aarchx (Python 3 stdlib only).

Runs the fifteen kernels of bench/kernels/xbench.c natively and under every
engine (aarchx with each --policy, QEMU's own x86-64 user emulator built for
arm64, any --peer), with the first seed's method:

  * calibrate a SIZE per kernel, so the slowest engine's run at SIZE takes
    about --target-seconds under qemu-aarch64;
  * run at SIZE and at SIZE/2 and take the difference, so start-up and
    translation drop out;
  * every engine's output must equal the native run's byte for byte, or the
    kernel fails for that engine (it does not score);
  * wall time: --reps repetitions (default 5) of the pair, median difference;
  * arm64 instructions executed: counted once per size with the TCG plugin
    bench/build/libinsncount.so (deterministic, so one run is exact), divided
    by the x86-64 instructions of the same difference counted natively with
    valgrind --tool=callgrind (exact; `perf stat -e instructions:u` is not
    supported on this machine's virtual CPU).

Writes the table to stdout, into docs/benchmarks.md between the markers
<!-- bench:begin --> and <!-- bench:end -->, the plot to docs/benchmarks.svg,
and the raw figures to bench/build/results.json. `python3 bench/run.py -h`
lists the options; docs/benchmarks.md describes the method and the figures.

With --builds, the kernels are measured as each of several builds
(bench/Makefile: gcc -O2, gcc -O3, clang -O2, gcc -O2 PIE), the same way;
the table then has a column set per build and the geomeans per build and
over all of them, and goes into docs/benchmarks.md between
<!-- builds:begin --> and <!-- builds:end --> (the main table and the plot
stay as they are), the raw figures to bench/build/results-builds.json.
"""

import argparse
import datetime
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from progress import Progress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
BUILD = os.path.join(BENCH, "build")

KERNELS = [
    ("icall", "indirect calls through a table"),
    ("jtab", "a switch compiled to a jump table"),
    ("depchain", "a dependent chain of arithmetic"),
    ("brmiss", "unpredictable branches"),
    ("memcpy", "copies of random small sizes"),
    ("str", "strlen and strcmp on short strings"),
    ("hash", "multiply-shift hashing"),
    ("idiv", "integer division"),
    ("fpsse", "scalar SSE floating point"),
    ("fpvec", "packed single-precision arithmetic"),
    ("chase", "pointer chasing through a shuffled list"),
    ("qsort", "sorting with a comparator"),
    ("leafcall", "a tight loop of small function calls"),
    ("mixed", "struct updates, branches and small loops"),
    ("vm", "a bytecode interpreter loop"),
]
# The AVX2/FMA microbenchmarks (the first seed's VEX section): only the
# gcc-O2-v3 build has them (`--kernels avx` names them all).
AVX_KERNELS = [
    ("avx-memclr", "clearing 32 MB with vmovdqu"),
    ("avx-indexbyte", "the index of a byte (vpcmpeqb, vpmovmskb, tzcnt)"),
    ("avx-memeq", "memory equality (vpxor, vptest)"),
    ("avx-int32", "an int32 loop (vpmulld, vpsrld, vpaddd)"),
    ("avx-saxpy", "saxpy with AVX2 and FMA"),
    ("avx-nbody", "nbody with scalar AVX doubles, no FMA"),
    ("avx-nbody-fma", "nbody with scalar AVX doubles and FMA"),
    ("avx-mandel", "mandelbrot, 8 points at once (AVX, FMA)"),
]
WHAT = dict(KERNELS + AVX_KERNELS)
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"
# The kernel builds of bench/Makefile (--builds); the first is the main table's.
BUILDS = [
    ("gcc-O2", "gcc -O2, non-PIE"),
    ("gcc-O3", "gcc -O3, non-PIE"),
    ("clang-O2", "clang -O2, non-PIE"),
    ("gcc-O2-pie", "gcc -O2, static PIE"),
    ("gcc-O2-v3", "gcc -O2 -march=x86-64-v3 (needs a cpu_level: V3 policy)"),
]
BUILDS_BEGIN = "<!-- builds:begin -->"
BUILDS_END = "<!-- builds:end -->"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# aarchx's debug line at exit (host/src/run.rs), read when it is there.
TOTALS = re.compile(r"translation totals.*?regions=(\d+).*?guest_insns=(\d+)(?:.*?ir_insts=(\d+))?")
# What a future aarchx may print with AARCHX_STATS=1 (see docs/benchmarks.md).
STATS = re.compile(r"^aarchx-stats: (.*)$", re.M)


# The status line on a terminal (bench/progress.py); log lines print above it.
PROGRESS = Progress(1, "runs")


def log(msg):
    PROGRESS.log(msg)


def xbench_of(build):
    """A build's static kernel program (bench/Makefile): the main table's
    gcc-O2 stays at bench/build/static/xbench, the others are under
    bench/build/BUILD/."""
    return os.path.join(BUILD, *([] if build == BUILDS[0][0] else [build]), "static", "xbench")


def is_aarch64_elf(path):
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return False
    return len(h) == 20 and h[:4] == b"\x7fELF" and int.from_bytes(h[18:20], "little") == 183


class Engine:
    """One column: a command prefix placed before `xbench KERNEL SIZE`."""

    def __init__(self, name, prefix, kind, under_qemu, policy=None, sets=()):
        self.name = name          # column label
        self.prefix = prefix      # list of words
        self.kind = kind          # "aarchx" or "peer"
        self.under_qemu = under_qemu
        self.policy = policy
        self.sets = list(sets)


class Runner:
    def __init__(self, args, prog):
        self.args = args
        self.prog = prog          # the kernel program measured (one build's xbench)
        self.tmp = tempfile.mkdtemp(prefix="aarchx-bench-")

    def run(self, argv, env=None, rss=False):
        """Runs argv; returns (stdout bytes, stderr bytes, rc, seconds, maxrss KiB or None).

        With rss, argv runs under /usr/bin/time -f %M: a child's ru_maxrss
        starts from the RSS of the process that forked it (Linux keeps the
        high-water mark across exec), so Python's own would hide a small
        kernel's; /usr/bin/time's floor is about 1 MiB.
        """
        rss_file = None
        if rss and TIME:
            rss_file = os.path.join(self.tmp, "rss")
            argv = [TIME, "-f", "%M", "-o", rss_file] + list(argv)
        # stderr goes to a file (it can be long), stdout (one line) through a pipe;
        # the child is reaped with wait4 for its own rusage (peak RSS).
        with tempfile.TemporaryFile(dir=self.tmp) as errf:
            t0 = time.perf_counter()
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf,
                                 stdin=subprocess.DEVNULL, env=env)
            out = p.stdout.read()
            _, status, ru = os.wait4(p.pid, 0)
            dt = time.perf_counter() - t0
            if self.args.clock == "cpu":
                # wait4's rusage covers the child and the children it reaped.
                dt = ru.ru_utime + ru.ru_stime
            p.returncode = os.waitstatus_to_exitcode(status)
            p.stdout.close()
            errf.seek(0)
            err = errf.read()
        maxrss = None
        if rss_file:
            try:
                with open(rss_file) as f:
                    maxrss = int(f.read().split()[-1])
            except (OSError, ValueError, IndexError):
                pass
            # /usr/bin/time reports a signal death as "Command terminated by signal N" and exits 0-ish.
            if p.returncode == 0 and b"Command terminated by signal" in err:
                p.returncode = -1
        return out, err, p.returncode, dt, maxrss

    def xbench(self, kernel, size):
        return [self.prog, kernel, str(size)]

    def engine_argv(self, eng, kernel, size, count_file=None):
        words = list(eng.prefix)
        if eng.under_qemu:
            q = [self.args.qemu]
            if count_file:
                q += ["-plugin", "%s,out=%s" % (self.args.plugin, count_file), "-d", "plugin"]
            words = q + words
        return words + self.xbench(kernel, size)

    def engine_env(self, eng, counting):
        env = dict(os.environ)
        if eng.kind == "aarchx":
            # The persistent translation cache (docs/cache.md) is on by
            # default: the SIZE/2 run would take from it what the SIZE run
            # translated, and the difference would hold the translation.
            env["AARCHX_CACHE"] = "off"
        if eng.kind == "aarchx" and counting:
            env["AARCHX_LOG"] = "aarchx::run=debug"
            env["AARCHX_STATS"] = "1"
        return env

    def count(self, eng, kernel, size):
        """One counted run: (stdout, rc, arm64 insns, stats dict, stderr text)."""
        cf = os.path.join(self.tmp, "count")
        if os.path.exists(cf):
            os.unlink(cf)
        out, err, rc, _, _ = self.run(self.engine_argv(eng, kernel, size, cf), self.engine_env(eng, True))
        insns = None
        try:
            with open(cf) as f:
                for line in f:
                    if line.startswith("insns "):
                        insns = int(line.split()[1])
        except OSError:
            pass
        text = ANSI.sub("", err.decode("utf-8", "replace"))
        stats = {}
        m = TOTALS.search(text)
        if m:
            stats["regions"] = int(m.group(1))
            stats["guest_insns"] = int(m.group(2))
            if m.group(3):
                stats["ir_insts"] = int(m.group(3))
        for sm in STATS.finditer(text):
            for kv in sm.group(1).split():
                if "=" in kv:
                    k, v = kv.split("=", 1)
                    try:
                        stats[k] = float(v) if "." in v else int(v)
                    except ValueError:
                        stats[k] = v
        return out, rc, insns, stats, text

    def timed(self, eng, kernel, size, rss=False):
        out, err, rc, dt, rss = self.run(self.engine_argv(eng, kernel, size), self.engine_env(eng, False), rss)
        return out, rc, dt, rss, err

    def callgrind(self, kernel, size):
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + self.xbench(kernel, size)
        out, err, rc, _, _ = self.run(cmd)
        m = re.search(rb"Collected : (\d+)", err)
        if rc != 0 or not m:
            raise SystemExit("callgrind failed on %s %d:\n%s" % (kernel, size, err.decode(errors="replace")[-2000:]))
        return out, int(m.group(1))


def median(xs):
    return statistics.median(xs) if xs else None


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def calibrate(r, eng, kernel, target, fixed):
    """An even SIZE such that this engine's run at SIZE takes about `target` s."""
    if kernel in fixed:
        return fixed[kernel]
    best = None
    s = r.args.start_size
    while True:
        _, rc1, t1, _, _ = r.timed(eng, kernel, s)
        _, rc2, t2, _, _ = r.timed(eng, kernel, 2 * s)
        if rc1 != 0 or rc2 != 0:
            log("  calibrate %s %s: exit status %d/%d, sized without it" % (kernel, eng.name, rc1, rc2))
            break
        # Grow until the difference is well above timing noise (or the run is long).
        if t2 - t1 < max(0.15, target / 4) and t2 < target and 4 * s <= r.args.max_size:
            s *= 2 if t2 > target / 4 else 4
            continue
        per = max(t2 - t1, 1e-6) / s
        start = max(t1 - per * s, 0.0)
        best = int(max(target - start, target / 4) / per)
        log("  calibrate %s %s: start-up %.3f s, %.3g us/unit -> SIZE %d" % (kernel, eng.name, start, per * 1e6, best))
        break
    if best is None:
        best = r.args.start_size * 8
    best = max(2, min(best, r.args.max_size))
    # Round to two significant digits, even.
    mag = 10 ** max(0, int(math.log10(best)) - 1)
    best = max(2, (best // mag) * mag)
    return best - (best % 2)


def measure(r, args, k, allx, fixed, tag, who):
    """One kernel of the program r.prog under every engine, by the method of
    the module's doc: its sizes, x86-64 instructions per unit and, per
    engine, the output check, arm64 instructions, times and RSS. tag and who
    name the kernel in the log and on the status line."""
    log("%s: calibrating" % tag)
    PROGRESS.status("%s: calibrating SIZE under each engine" % who)
    sizes = {e.name: calibrate(r, e, k, args.target_seconds, fixed) for e in allx}
    res = {"sizes": sizes, "engines": {}}
    ref = {}

    def native(size):
        """The native run's (stdout, exit status) at size: the reference output."""
        if size not in ref:
            out, _, rc, _, rss = r.run(r.xbench(k, size), rss=True)
            ref[size] = (out, rc)
            res.setdefault("native_rss_kib", rss)
        return ref[size]

    # x86-64 instructions per unit of SIZE, from the smallest engine SIZE (callgrind is slow).
    sref = min(sizes.values())
    PROGRESS.status("%s: counting x86-64 instructions (callgrind)" % who)
    native(sref)
    cg_full_out, x_full = r.callgrind(k, sref)
    cg_half_out, x_half = r.callgrind(k, sref // 2)
    res["x86_size"] = sref
    res["x86_insns"] = x_full - x_half
    res["x86_per_unit"] = (x_full - x_half) / (sref - sref // 2)
    if cg_full_out != native(sref)[0] or cg_half_out != native(sref // 2)[0]:
        log("  warning: callgrind run's output differs from the native run")
    log("%s: x86-64 instructions per unit %.3f (SIZE %d); SIZE per engine %s" % (
        tag, res["x86_per_unit"], sref, ", ".join("%s %d" % kv for kv in sizes.items())))
    for eng in allx:
        size = sizes[eng.name]
        half = size // 2
        units = size - half
        e = {"ok": True, "why": "", "size": size}
        counts = {}
        for s in (size, half):
            PROGRESS.status("%s under %s: %s SIZE %d" % (who, eng.name, "counting" if eng.under_qemu else "running", s))
            if eng.under_qemu:
                out, rc, insns, stats, errtext = r.count(eng, k, s)
            else:
                out, rc, _, _, err = r.timed(eng, k, s)
                insns, stats, errtext = None, {}, err.decode(errors="replace")
            if (out, rc) != native(s):
                e["ok"] = False
                e["why"] = "SIZE %d: exit %d, output %r (native %r) %s" % (
                    s, rc, out[:80], native(s)[0][:80], errtext.strip()[-300:])
            counts[s] = (insns, stats)
        if e["ok"] and eng.under_qemu and counts[size][0] is not None and counts[half][0] is not None:
            e["arm64_insns"] = counts[size][0] - counts[half][0]
            e["arm64_per_unit"] = e["arm64_insns"] / units
            e["arm64_per_x86"] = e["arm64_per_unit"] / res["x86_per_unit"] if res["x86_per_unit"] > 0 else None
            e["stats_full"] = counts[size][1]
            e["stats_half"] = counts[half][1]
            if translation_mark(e):
                log("  %s %s: %s regions translated at SIZE, %s at SIZE/2: translation is inside the difference" % (
                    who, eng.name, e["stats_full"]["regions"], e["stats_half"]["regions"]))
        if e["ok"]:
            # Timed at --time-scale times the counted SIZE: the
            # difference must stand well above the timing noise.
            tsize = size * args.time_scale
            thalf = tsize // 2
            e["time_size"] = tsize
            diffs, rss = [], []
            for rep in range(args.reps):
                PROGRESS.status("%s under %s: timing, repetition %d/%d" % (who, eng.name, rep + 1, args.reps))
                o1, rc1, t1, m1, _ = r.timed(eng, k, tsize, rss=True)
                o2, rc2, t2, _, _ = r.timed(eng, k, thalf)
                if (o1, rc1) != native(tsize) or (o2, rc2) != native(thalf):
                    e["ok"] = False
                    e["why"] = "a timed run's output differed from native"
                    break
                diffs.append(t1 - t2)
                if m1:
                    rss.append(m1)
            e["seconds"] = median(diffs)
            e["seconds_all"] = diffs
            e["seconds_per_unit"] = e["seconds"] / (tsize - thalf) if e["seconds"] is not None else None
            e["rss_kib"] = max(rss) if rss else None
        res["engines"][eng.name] = e
        if e["ok"]:
            log("%s %s: ok at SIZE %d, arm64/x86 %s, %.3f s for the difference, peak RSS %s MiB" % (
                tag, eng.name, size, fmt_ratio(e.get("arm64_per_x86")), e["seconds"],
                "%.1f" % (e["rss_kib"] / 1024) if e.get("rss_kib") else "?"))
        else:
            log("%s %s: FAILED: %s" % (tag, eng.name, e["why"]))
        PROGRESS.advance()
    return res


def fmt_ratio(x):
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    return "%.2fx" % x if x < 100 else "%.0fx" % x


def profile(args, xbench, fixed, policies):
    """--profile KERNEL: bench/profile.py --guest on one kernel run of the
    program xbench (--xbench, or the one --builds build), at the
    SIZE --size gives, else the one the last results.json measured it at
    (the largest of its engines), else 1000000; under the one --policy
    given, else aarchx's default policy."""
    k = args.profile
    size = fixed.get(k)
    if size is None and os.path.exists(args.json):
        with open(args.json) as f:
            data = json.load(f)
        # A --builds run's figures: the first build's.
        per_kernel = data.get("results") or next(iter(data.get("builds", {}).values()), {})
        sizes = per_kernel.get(k, {}).get("sizes", {})
        size = max(sizes.values()) if sizes else None
    size = size or 1000000
    if len(policies) > 1:
        raise SystemExit("--profile takes one --policy")
    env = dict(os.environ)
    if policies:
        env["AARCHX_POLICY"] = os.path.abspath(policies[0])
    return subprocess.call([sys.executable, os.path.join(BENCH, "profile.py"), "--aarchx", args.aarchx,
                            "--qemu", args.qemu, "--plugin", args.plugin, "--guest", "--top", str(args.top),
                            "--", xbench, k, str(size)], env=env)


def build_engines(args):
    engines = []
    aarchx = args.aarchx
    if args.snapshot and os.path.exists(aarchx):
        snapdir = os.path.join(BUILD, "run")
        os.makedirs(snapdir, exist_ok=True)
        snap = os.path.join(snapdir, "aarchx")
        shutil.copy2(aarchx, snap)
        aarchx = snap
    help_text = ""
    try:
        cmd = ([args.qemu] if is_aarch64_elf(aarchx) else []) + [aarchx, "--help"]
        help_text = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        pass
    has_set = "--set" in help_text
    if (args.set or args.variant) and not has_set:
        log("note: this aarchx has no --set option; --set overrides and --variant columns are skipped")
    under = is_aarch64_elf(aarchx)
    for pol in args.policy:
        src = pol if os.path.isabs(pol) else os.path.join(ROOT, pol)
        name = os.path.splitext(os.path.basename(pol))[0]
        if args.snapshot:
            dst = os.path.join(BUILD, "run", "policy-" + os.path.basename(pol))
            shutil.copy2(src, dst)
            src = dst
        prefix = [aarchx, "--policy", src]
        sets = args.set if has_set else []
        for s in sets:
            prefix += ["--set", s]
        engines.append(Engine(name, prefix, "aarchx", under, policy=pol, sets=sets))
    if has_set:
        for v in args.variant:
            name, pol, kvs = v.split(":", 2)
            src = pol if os.path.isabs(pol) else os.path.join(ROOT, pol)
            prefix = [aarchx, "--policy", src]
            sets = list(args.set) + [kv for kv in kvs.split(",") if kv]
            for s in sets:
                prefix += ["--set", s]
            engines.append(Engine(name, prefix, "aarchx", under, policy=pol, sets=sets))
    peers = []
    qpeer = os.path.join(BUILD, "peer", "usr", "bin", "qemu-x86_64-static")
    if not args.no_qemu_peer:
        if os.path.exists(qpeer):
            peers.append(Engine("qemu", [qpeer], "peer", True))
        else:
            log("note: %s missing (cargo xtask bench downloads it); no QEMU peer" % os.path.relpath(qpeer, ROOT))
    for p in args.peer:
        name, cmd = p.split("=", 1)
        words = shlex.split(cmd)
        peers.append(Engine(name, words, "peer", is_aarch64_elf(words[0])))
    return engines, peers


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--xbench",
                    help="the kernel program (default bench/build/static/xbench, the gcc-O2 build)")
    ap.add_argument("--builds", metavar="B1,B2,...",
                    help="measure the kernels as each of these builds of bench/Makefile (%s, or all: all but "
                         "gcc-O2-v3, which needs --policy policies/v3.ron); "
                         "default gcc-O2 alone, the main table. Any other set gives the per-build table "
                         "(docs/benchmarks.md between the builds markers)" % ", ".join(b for b, _ in BUILDS))
    ap.add_argument("--aarchx", default=os.path.join(ROOT, "target", "aarch64-unknown-linux-gnu", "release", "aarchx"),
                    help="aarchx binary (an aarch64 binary runs under qemu-aarch64)")
    ap.add_argument("--qemu", default=shutil.which("qemu-aarch64") or "qemu-aarch64")
    ap.add_argument("--plugin", default=os.path.join(BUILD, "libinsncount.so"))
    ap.add_argument("--policy", action="append", default=[],
                    help="a policy column (repeat; default policies/plain.ron and policies/ordered.ron)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="policy override passed to every aarchx column as `--set KEY=VALUE` "
                         "(skipped with a note while aarchx has no --set)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:POLICY:KEY=V,...",
                    help="an extra aarchx column: POLICY with --set overrides (needs aarchx --set)")
    ap.add_argument("--peer", action="append", default=[], metavar="NAME=CMD",
                    help="another engine, as a command prefix (an aarch64 ELF runs under qemu-aarch64 and is counted)")
    ap.add_argument("--no-qemu-peer", action="store_true", help="leave out QEMU's x86-64 emulator")
    ap.add_argument("--kernels", default=",".join(k for k, _ in KERNELS),
                    help="comma-separated subset (default the fifteen; `avx` names the AVX2/FMA "
                         "microbenchmarks, which only --builds gcc-O2-v3 has)")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                    help="time measured: user+system CPU seconds of the run (default; robust on a shared "
                         "machine) or wall-clock seconds")
    ap.add_argument("--reps", type=int, default=5, help="timed repetitions per engine (default 5)")
    ap.add_argument("--target-seconds", type=float, default=1.0,
                    help="calibration target for the slowest engine's run at SIZE (default 1.0)")
    ap.add_argument("--size", action="append", default=[], metavar="KERNEL=N", help="fix a kernel's SIZE")
    ap.add_argument("--time-scale", type=int, default=1, metavar="N",
                    help="time the runs at N times each kernel's SIZE (the instruction counts stay at SIZE): "
                         "a fixed --size small enough for the counting plugin leaves a time difference "
                         "near the timing noise")
    ap.add_argument("--start-size", type=int, default=4096)
    ap.add_argument("--max-size", type=int, default=1 << 34)
    ap.add_argument("--no-snapshot", dest="snapshot", action="store_false",
                    help="run aarchx and the policies in place instead of copies taken at start")
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "benchmarks.svg"))
    ap.add_argument("--json", help="the raw figures (default bench/build/results.json, "
                                   "with --builds bench/build/results-builds.json)")
    ap.add_argument("--no-doc", action="store_true", help="print only; leave docs/ alone")
    ap.add_argument("--note", default="", help="a sentence to put under the table (e.g. reduced sizes)")
    ap.add_argument("--profile", metavar="KERNEL",
                    help="measure nothing: print where KERNEL's arm64 instructions go, by guest instruction "
                         "and pattern (bench/profile.py --guest; SIZE from --size, else the last results.json)")
    ap.add_argument("--top", type=int, default=20, help="rows of the --profile tables (default 20)")
    ap.add_argument("--from-json", metavar="FILE",
                    help="measure nothing: render the table, doc and plot again from a results.json")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            data = json.load(f)
        meta = data["meta"]
        # A --builds run keeps each build's results under "builds".
        by_build = data["builds"] if "builds" in data else {BUILDS[0][0]: data["results"]}
        engs = [Engine(e["name"], e["prefix"], e["kind"], e["counted"], e.get("policy"), e.get("sets", ()))
                for e in meta["engines"]]
        return output(args, by_build, [e for e in engs if e.kind == "aarchx"],
                      [e for e in engs if e.kind != "aarchx"], list(next(iter(by_build.values()))), meta)
    # `all`: the builds any policy runs (gcc-O2-v3 needs a V3 one: name it).
    names = ([b for b, _ in BUILDS if b != "gcc-O2-v3"] if args.builds == "all"
             else [b for b in (args.builds or BUILDS[0][0]).split(",") if b])
    for b in names:
        if b not in dict(BUILDS):
            raise SystemExit("unknown build %s (known: %s)" % (b, ", ".join(b for b, _ in BUILDS)))
    if args.xbench and args.builds:
        raise SystemExit("--xbench and --builds exclude each other")
    # (build, kernel program) pairs; several builds, or one other than gcc-O2, make the per-build table.
    builds = [(b, args.xbench or xbench_of(b)) for b in names]
    several = names != [BUILDS[0][0]]
    if args.json is None:
        args.json = os.path.join(BUILD, "results-builds.json" if several else "results.json")
    given_policies = list(args.policy)
    if not args.policy:
        args.policy = ["policies/plain.ron", "policies/ordered.ron"]
    fixed = {}
    for s in args.size:
        k, v = s.split("=", 1)
        fixed[k] = int(v)
    kernels = [x for k in args.kernels.split(",") if k
               for x in ([a for a, _ in AVX_KERNELS] if k == "avx" else [k])]
    for k in kernels + ([args.profile] if args.profile else []):
        if k not in WHAT:
            raise SystemExit("unknown kernel %s" % k)
    avx = [k for k in kernels + ([args.profile] if args.profile else []) if k in dict(AVX_KERNELS)]
    if avx and any(b != "gcc-O2-v3" for b, _ in builds):
        raise SystemExit("%s: only the gcc-O2-v3 build has the AVX kernels (--builds gcc-O2-v3 "
                         "--policy policies/v3.ron)" % ", ".join(avx))
    if args.profile:
        if len(builds) > 1:
            raise SystemExit("--profile takes one build")
        return profile(args, builds[0][1], fixed, given_policies)
    for path, what in [(x, "kernels (make -C bench)") for _, x in builds] + [(args.plugin, "plugin (make -C bench plugin)")]:
        if not os.path.exists(path):
            raise SystemExit("%s missing: build the %s, or run `cargo xtask bench`" % (path, what))

    argstr = " ".join(shlex.quote(a) for a in sys.argv[1:])
    command = "python3 bench/run.py " + argstr
    if os.environ.get("AARCHX_BENCH_VIA_XTASK"):
        command = "./x bench %s   (set-up and builds, then: %s)" % (argstr, command)
    r = Runner(args, builds[0][1])
    engines, peers = build_engines(args)
    allx = engines + peers
    counted = [e for e in allx if e.under_qemu]

    # qemu-aarch64's own peak RSS on a trivial aarch64 program: the floor under every qemu figure.
    qemu_floor = None
    true_a64 = os.path.join(BUILD, "true-aarch64")
    if os.path.exists(true_a64):
        _, _, _, _, qemu_floor = r.run([args.qemu, true_a64], rss=True)

    t_start = time.time()
    global PROGRESS
    PROGRESS = Progress(len(builds) * len(kernels) * len(allx), "kernel runs")
    by_build = {}
    for b, prog in builds:
        r.prog = prog
        results = by_build[b] = {}
        for ki, k in enumerate(kernels, 1):
            who = ("%s %s" % (b, k)) if several else k
            results[k] = measure(r, args, k, allx, fixed, "[%d/%d] %s" % (ki, len(kernels), who), who)
    PROGRESS.close()
    elapsed = time.time() - t_start

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "reps": args.reps,
        "time_scale": args.time_scale,
        "clock": args.clock,
        "target_seconds": args.target_seconds,
        "aarchx_commit": git_describe(),
        "engines": [{"name": e.name, "kind": e.kind, "prefix": [os.path.relpath(w, ROOT) if os.path.isabs(w) else w for w in e.prefix],
                     "counted": e.under_qemu, "policy": e.policy, "sets": e.sets} for e in allx],
        "qemu_floor_rss_kib": qemu_floor,
        "elapsed_seconds": round(elapsed),
        "note": args.note,
    }
    if several:
        meta["builds"] = {b: os.path.relpath(prog, ROOT) for b, prog in builds}
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"meta": meta, **({"builds": by_build} if several else {"results": by_build[builds[0][0]]})},
                  f, indent=1, default=str)
    return output(args, by_build, engines, peers, kernels, meta)


def output(args, by_build, engines, peers, kernels, meta):
    """Prints the table and writes the doc (and, for the main table, the
    plot); a --builds run (meta names its builds) gives the per-build table
    between the builds markers. 1 when any engine failed a kernel."""
    raw = "" if args.from_json else " (raw figures: %s)" % os.path.relpath(args.json, ROOT)
    if "builds" in meta:
        md = render_builds(by_build, engines, peers, kernels, meta)
        print(md)
        if not args.no_doc:
            write_doc(args.doc, md, BUILDS_BEGIN, BUILDS_END, "## Kernels built several ways")
            log("wrote %s%s" % (os.path.relpath(args.doc, ROOT), raw))
    else:
        results = next(iter(by_build.values()))
        md = render(results, engines, peers, kernels, meta)
        print(md)
        if not args.no_doc:
            write_doc(args.doc, md)
            write_svg(args.svg, results, engines, peers, kernels, meta)
            log("wrote %s and %s%s" % (os.path.relpath(args.doc, ROOT), os.path.relpath(args.svg, ROOT), raw))
    failed = [(k, n) for results in by_build.values() for k in kernels
              for n, e in results[k]["engines"].items() if not e["ok"]]
    return 1 if failed else 0


def git_describe():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except OSError:
        return "unknown"


def translation_mark(ee):
    """`*` when an aarchx column's SIZE and SIZE/2 runs translated different numbers of regions."""
    full, half = ee.get("stats_full") or {}, ee.get("stats_half") or {}
    if "regions" in full and "regions" in half and full["regions"] != half["regions"]:
        return "*"
    return ""


def ratio_columns(res, engines, peers):
    """The ratio table's figures for one kernel (one build): (header, value,
    mark) per column, the value a number, a word (FAIL, noise) or None.
    arm64 instructions per x86-64 instruction of every counted engine, then
    per peer each aarchx column's time, and for a counted peer its
    instructions, as a ratio to the peer's."""
    counted_peers = [p for p in peers if p.under_qemu]
    cols = []
    for e in engines + counted_peers:
        ee = res["engines"][e.name]
        cols.append(("%s arm64/x86" % e.name, ee.get("arm64_per_x86") if ee["ok"] else "FAIL", translation_mark(ee)))
    for p in peers:
        pe = res["engines"][p.name]
        for e in engines:
            ee = res["engines"][e.name]
            if not ee["ok"]:
                v = "FAIL"
            elif not pe["ok"]:
                v = "peer FAIL"
            elif ee.get("seconds_per_unit") is None or pe.get("seconds_per_unit") is None:
                v = None
            elif ee["seconds_per_unit"] <= 0 or pe["seconds_per_unit"] <= 0:
                # The SIZE run took no longer than the SIZE/2 one: the
                # difference is below the timing noise, not a speed.
                v = "noise"
            else:
                v = ee["seconds_per_unit"] / pe["seconds_per_unit"]
            cols.append(("%s time vs %s" % (e.name, p.name), v, ""))
        if p in counted_peers:
            for e in engines:
                ee = res["engines"][e.name]
                if ee["ok"] and pe["ok"] and ee.get("arm64_per_unit") and pe.get("arm64_per_unit"):
                    v = ee["arm64_per_unit"] / pe["arm64_per_unit"]
                else:
                    v = "FAIL" if not ee["ok"] else None
                cols.append(("%s insns vs %s" % (e.name, p.name), v, ""))
    return cols


def number(v):
    """v when it is a figure (for the geomeans), else None."""
    return v if isinstance(v, (int, float)) else None


def render_head(meta):
    """The lines every table starts with: when, which aarchx, the command, the note."""
    L = []
    L.append("Run %s, aarchx at %s, %d repetitions, calibration target %.1f s, whole run %d s%s." % (
        meta["date"], meta["aarchx_commit"], meta["reps"], meta["target_seconds"], meta["elapsed_seconds"],
        ", times (and peak memory) at %d times SIZE" % meta["time_scale"] if meta.get("time_scale", 1) > 1 else ""))
    L.append("")
    L.append("    " + meta["command"])
    L.append("")
    if meta["note"]:
        L.append(meta["note"])
        L.append("")
    return L


def ratio_legend(meta):
    return ("arm64 instructions executed per x86-64 instruction (the difference of the SIZE and SIZE/2 runs; "
            "lower is better, about 1.0 is the limit), and %s time under qemu-aarch64 as a ratio to each peer "
            "(median of the repetitions; lower is better: under 1.00x aarchx is faster). "
            "FAIL: output differed from the native run. noise: the SIZE run took no longer than the SIZE/2 run, "
            "so the time difference is below the timing noise (a larger --target-seconds or more --reps helps). "
            "A ratio marked *: aarchx translated a different number of regions in the SIZE and SIZE/2 runs, "
            "so translation work is inside the difference (a larger SIZE usually removes it)." % (
                "CPU (user+system)" if meta["clock"] == "cpu" else "wall"))


def failure_lines(fails):
    """The failures list under a table: (what, engine, why) triples."""
    if not fails:
        return []
    L = ["Failures:", ""]
    for what, n, why in fails:
        L.append("- %s under %s: %s" % (what, n, why.replace("|", "\\|").replace("\n", " ")))
    L.append("")
    return L


def render_builds(by_build, engines, peers, kernels, meta):
    """The --builds table: per kernel, a column set per build (its x86-64
    instructions per unit and the ratio table's figures), each column's
    geomean, then the geomean of each figure per build and over all builds
    and kernels."""
    builds = list(by_build)
    L = render_head(meta)
    L.append("The builds (bench/Makefile, each static, no library calls in the timed loops): %s." % "; ".join(
        "`%s` %s (`%s`)" % (b, dict(BUILDS).get(b, ""), meta["builds"][b]) for b in builds))
    L.append("")
    L.append("Per build: x86-64 instructions executed per unit of SIZE (callgrind), and " + ratio_legend(meta))
    L.append("")
    names = [h for h, _, _ in ratio_columns(by_build[builds[0]][kernels[0]], engines, peers)]
    hdr = ["Kernel"]
    for b in builds:
        hdr += ["%s x86/unit" % b] + ["%s %s" % (b, h) for h in names]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "|".join(["---"] + ["---:"] * (len(hdr) - 1)) + "|")
    vals = {(b, h): [] for b in builds for h in names}
    for k in kernels:
        row = ["`%s`" % k]
        for b in builds:
            res = by_build[b][k]
            row.append("%.2f" % res["x86_per_unit"])
            for h, v, mark in ratio_columns(res, engines, peers):
                vals[(b, h)].append(number(v))
                row.append(fmt_ratio(v) + mark)
        L.append("| " + " | ".join(row) + " |")
    gm = ["**geomean**"]
    for b in builds:
        gm += [""] + [fmt_ratio(geomean(vals[(b, h)])) for h in names]
    L.append("| " + " | ".join(gm) + " |")
    L.append("")
    L.append("Geometric means per build and over all builds and kernels (a FAIL counts in none):")
    L.append("")
    L.append("| Figure | " + " | ".join("`%s`" % b for b in builds) + " | all builds |")
    L.append("|---|" + "---:|" * (len(builds) + 1))
    for h in names:
        L.append("| %s | %s | **%s** |" % (h, " | ".join(fmt_ratio(geomean(vals[(b, h)])) for b in builds),
                                          fmt_ratio(geomean([v for b in builds for v in vals[(b, h)]]))))
    L.append("")
    L += failure_lines([("`%s` built `%s`" % (k, b), n, e["why"]) for b in builds for k in kernels
                        for n, e in by_build[b][k]["engines"].items() if not e["ok"]])
    return "\n".join(L).rstrip("\n")


def render(results, engines, peers, kernels, meta):
    L = render_head(meta)
    # Table 1: instruction ratios and time ratios.
    L.append(ratio_legend(meta))
    L.append("")
    hdr = ["Kernel", "What it does"] + [h for h, _, _ in ratio_columns(results[kernels[0]], engines, peers)]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "|".join(["---"] * 2 + ["---:"] * (len(hdr) - 2)) + "|")
    nfixed = 2
    cols = {h: [] for h in hdr}
    for k in kernels:
        row = ["`%s`" % k, WHAT[k]]
        for h, v, mark in ratio_columns(results[k], engines, peers):
            cols[h].append(number(v))
            row.append(fmt_ratio(v) + mark)
        L.append("| " + " | ".join(row) + " |")
    gm = ["**geomean**", ""] + [fmt_ratio(geomean(cols[h])) for h in hdr[nfixed:]]
    L.append("| " + " | ".join(gm) + " |")
    L.append("")
    # Table 2: translation cost and memory.
    L.append("Translation and memory, at SIZE: aarchx regions translated and guest x86-64 instructions translated "
             "(from aarchx's exit line at `AARCHX_LOG=aarchx::run=debug`; code bytes and translation time need "
             "aarchx to report them, see below); peak resident memory in MiB of the whole process tree "
             "(for the engines under qemu-aarch64 this includes qemu's own, whose floor on a trivial aarch64 "
             "program is %s MiB).  Native: the x86-64 kernel run directly." % (
                 "%.1f" % (meta["qemu_floor_rss_kib"] / 1024) if meta["qemu_floor_rss_kib"] else "?"))
    L.append("")
    h2 = ["Kernel", "x86 insns/unit", "native RSS"]
    # Code bytes and translation time: only once aarchx reports them (AARCHX_STATS=1).
    extra = any("code_bytes" in results[k]["engines"][e.name].get("stats_full", {}) for k in kernels for e in engines)
    for e in engines:
        h2 += ["%s SIZE" % e.name, "%s regions" % e.name, "%s guest insns" % e.name]
        if extra:
            h2 += ["%s code bytes/guest insn" % e.name, "%s translate us/guest insn" % e.name]
        h2 += ["%s RSS" % e.name]
    for p in peers:
        h2 += ["%s SIZE" % p.name, "%s RSS" % p.name]
    L.append("| " + " | ".join(h2) + " |")
    L.append("|" + "|".join(["---"] + ["---:"] * (len(h2) - 1)) + "|")
    for k in kernels:
        res = results[k]
        row = ["`%s`" % k, "%.2f" % res["x86_per_unit"],
               "%.1f" % (res["native_rss_kib"] / 1024) if res.get("native_rss_kib") else "n/a"]
        for e in engines:
            ee = res["engines"][e.name]
            st = ee.get("stats_full", {})
            row.append(str(ee["size"]))
            row.append(str(st.get("regions", "n/a")))
            row.append(str(st.get("guest_insns", "n/a")))
            if extra:
                gi = st.get("guest_insns")
                cb, tn = st.get("code_bytes"), st.get("translate_ns")
                row.append("%.1f" % (cb / gi) if cb and gi else "n/a")
                row.append("%.2f" % (tn / 1000.0 / gi) if tn and gi else "n/a")
            row.append("%.1f" % (ee["rss_kib"] / 1024) if ee.get("rss_kib") else "n/a")
        for p in peers:
            pe = res["engines"][p.name]
            row.append(str(pe["size"]))
            row.append("%.1f" % (pe["rss_kib"] / 1024) if pe.get("rss_kib") else "n/a")
        L.append("| " + " | ".join(row) + " |")
    L.append("")
    L += failure_lines([("`%s`" % k, n, e["why"]) for k in kernels for n, e in results[k]["engines"].items() if not e["ok"]])
    L.append("![arm64 instructions per x86-64 instruction](benchmarks.svg)")
    return "\n".join(L)


def write_doc(path, md, begin=BEGIN, end=END, heading="## Results"):
    """md between the markers begin and end of the doc at path (after the
    doc, under heading, when they are not there yet)."""
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    block = "%s\n%s\n%s" % (begin, md, end)
    if begin in text and end in text:
        a = text.index(begin)
        b = text.index(end) + len(end)
        text = text[:a] + block + text[b:]
    else:
        text = (text.rstrip() + "\n\n" if text else "# Benchmarks\n\n") + heading + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


def write_svg(path, results, engines, peers, kernels, meta):
    """Grouped bars, log scale: arm64 instructions per x86-64 instruction per kernel and engine."""
    series = [e for e in engines + peers if e.under_qemu]
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
    W, H = 1000, 460
    left, right, top, bottom = 60, 20, 50, 90
    pw, ph = W - left - right, H - top - bottom
    vals = [results[k]["engines"][e.name].get("arm64_per_x86") for k in kernels for e in series]
    vals = [v for v in vals if v]
    hi = 10 ** math.ceil(math.log10(max(vals + [10])))
    lo = 0.5

    def y(v):
        v = min(max(v, lo), hi)
        return top + ph - ph * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
         '<!-- docs/benchmarks.svg: written by bench/run.py (the plot of docs/benchmarks.md); do not edit -->',
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="15" text-anchor="middle">arm64 instructions per x86-64 instruction '
         '(log scale, lower is better), %s</text>' % (W // 2, meta["date"])]
    t = 1.0
    while t <= hi:
        for m in (1, 2, 5):
            v = t * m
            if lo <= v <= hi:
                yy = y(v)
                s.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>' % (
                    left, W - right, yy, yy, "#888" if v == 1 else "#e5e5e5"))
                s.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (left - 5, yy + 4, v))
        t *= 10
    gw = pw / max(len(kernels), 1)
    bw = gw * 0.8 / max(len(series), 1)
    for i, k in enumerate(kernels):
        x0 = left + i * gw + gw * 0.1
        for j, e in enumerate(series):
            ee = results[k]["engines"][e.name]
            v = ee.get("arm64_per_x86")
            x = x0 + j * bw
            if not ee["ok"]:
                s.append('<text x="%.1f" y="%.1f" font-size="9" fill="red">X</text>' % (x, top + ph - 3))
                continue
            if v:
                s.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %.2f</title></rect>' % (
                    x, y(v), bw - 1, top + ph - y(v), colours[j % len(colours)], k, e.name, v))
        s.append('<text x="%.1f" y="%d" text-anchor="end" transform="rotate(-40 %.1f %d)">%s</text>' % (
            x0 + gw * 0.4, top + ph + 15, x0 + gw * 0.4, top + ph + 15, k))
    for j, e in enumerate(series):
        lx = left + j * 150
        s.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, H - 22, colours[j % len(colours)]))
        s.append('<text x="%d" y="%d">%s</text>' % (lx + 16, H - 12, e.name))
    s.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")


if __name__ == "__main__":
    sys.exit(main())
