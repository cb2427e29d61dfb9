#!/usr/bin/env python3
"""bench/plugin_cost.py: owns the measurement of the plugin boundary's
translation cost (Python 3 stdlib only).

Translates every block of every static guest program (guest/expect.txt,
built in guest/build/static) under policies that differ only in one pass
or in where the passes come from:

  (a) builtins  decode, dead-flags, dce, memory-order (all built in);
  (b) +native   the same plus the `noop` example plugin as a native .so;
  (c) +wasm     the same plus `noop` built for wasm32 (when the wasm32
                build works; else the row says so);
  (d) the four passes of (a) loaded from plugins/builtin (a native .so
      built from the same source), so four crossings a region.

Each guest runs --reps times per policy with AARCHX_STATS=1, the policies
taking turns within each repetition; aarchx prints
`regions=` and `translate_ns=` (the time spent in the pass pipeline, see
host/src/run.rs) at exit, summed over every aarchx process of a run (fork
and exec). Per guest the median translate_ns of the reps is taken; the
table gives the totals over all guests, ns per region, and the difference
from (a) per region and crossing (one per plugin pass and region): for
the no-op passes that is the boundary alone (encoding the region, the
call, decoding the result and verifying it); for (d) it also includes
whatever the real passes cost more on the far side (their input is
decoded from the encoding, their output encoded again).

The backend is the interpreter, so it runs on any host; translation does
not depend on the backend. Prints a Markdown table; docs/benchmarks.md
("Plugin boundary") has the figures and the command.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "build", "plugin_cost")
PLUGIN_TARGET = os.path.join(ROOT, "target", "plugin-tests")
BUILTIN_PASSES = ["decode", "dead-flags", "dce", "memory-order"]


def cargo_env():
    env = dict(os.environ)
    env.setdefault("RUSTC", "/usr/bin/rustc")
    return env


def build_native(package, lib):
    """A release build of plugin crate `package`: its .so, or exits."""
    cmd = ["cargo", "build", "--quiet", "--release", "-p", package, "--target-dir", PLUGIN_TARGET]
    r = subprocess.run(cmd, cwd=ROOT, env=cargo_env(), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("building %s failed:\n%s" % (package, r.stderr))
    return os.path.join(PLUGIN_TARGET, "release", "lib%s.so" % lib)


def build_wasm_noop():
    """The noop example for wasm32 (as host/tests/wasm_plugins.rs builds
    it), or None and why not."""
    env = cargo_env()
    cmd = ["cargo", "build", "--quiet", "--release", "--target", "wasm32-unknown-unknown",
           "-p", "aarchx-example-noop", "--target-dir", PLUGIN_TARGET]
    libdir = subprocess.run([env["RUSTC"], "--print", "target-libdir", "--target", "wasm32-unknown-unknown"],
                            capture_output=True, text=True).stdout.strip()
    if not (libdir and os.path.isdir(libdir) and any(f.startswith("libcore-") for f in os.listdir(libdir))):
        cmd.append("-Zbuild-std=core,alloc")
        env["RUSTC_BOOTSTRAP"] = "1"
    if "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER" not in env and shutil.which("wasm-ld-19"):
        env["CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER"] = "wasm-ld-19"
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    path = os.path.join(PLUGIN_TARGET, "wasm32-unknown-unknown", "release", "aarchx_example_noop.wasm")
    if r.returncode != 0 or not os.path.exists(path):
        return None, "the wasm32 build of plugins/examples/noop failed"
    return path, None


def write_policy(name, plugin, extra_pass=None):
    """The four built-in passes, plus `extra_pass` (a transform pass, put
    before memory-order), with `plugin` loaded."""
    os.makedirs(OUT, exist_ok=True)
    passes = ['(name: "%s")' % p for p in BUILTIN_PASSES]
    plugins = '(path: "%s")' % plugin if plugin else ""
    if extra_pass:
        passes.insert(3, '(name: "%s")' % extra_pass)
    text = "(\n  backend: Interp,\n  plugins: [%s],\n  passes: [%s],\n)\n" % (plugins, ", ".join(passes))
    path = os.path.join(OUT, name + ".ron")
    with open(path, "w") as f:
        f.write(text)
    return path


def guests():
    """(program path, args) of every static guest in guest/expect.txt."""
    out = []
    with open(os.path.join(ROOT, "guest", "expect.txt")) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            path = os.path.join(ROOT, "guest", "build", "static", words[0])
            if os.path.exists(path):
                out.append((path, words[1:]))
    return out


STATS = re.compile(r"^aarchx-stats: (.*)$", re.M)


def translate_once(aarchx, policy, program, args):
    """Summed regions and translate_ns of one run (all its processes), or
    None when it printed no stats (a guest killed by a signal outside the
    dispatcher's view) or ran for more than a minute."""
    env = dict(os.environ, AARCHX_STATS="1")
    try:
        r = subprocess.run([aarchx, "--policy", policy, program] + args, env=env, cwd=OUT,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    except subprocess.TimeoutExpired:
        return None
    lines = STATS.findall(r.stderr.decode(errors="replace"))
    if not lines:
        return None
    regions = ns = 0
    for line in lines:
        kv = dict(w.split("=", 1) for w in line.split())
        regions += int(kv["regions"])
        ns += int(kv["translate_ns"])
    return regions, ns


def measure(aarchx, configs, progs, reps):
    """{config name: {program: (median regions, median translate_ns)}}.
    The policies take turns within each repetition, so a change in the
    machine's load hits them alike. A guest that prints no stats or runs
    over a minute under any policy is left out of all."""
    out = {name: {} for name, _ in configs}
    for program, args in progs:
        runs = {name: [] for name, _ in configs}
        failed = False
        for _ in range(reps):
            for name, policy in configs:
                got = translate_once(aarchx, policy, program, args)
                failed = failed or got is None
                runs[name].append(got)
            if failed:
                break
        if failed:
            continue
        for name, _ in configs:
            # A few guests (fork and wait races) translate a few regions
            # more or fewer from run to run: medians of both.
            rs = runs[name]
            out[name][program] = (statistics.median(r for r, _ in rs), statistics.median(ns for _, ns in rs))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aarchx", default=os.path.join(ROOT, "target", "release", "aarchx"),
                    help="the aarchx binary (default: the release host build)")
    ap.add_argument("--reps", type=int, default=5, help="runs per guest and policy; the median counts (default 5)")
    ap.add_argument("--no-wasm", action="store_true", help="leave out the WASM column")
    opts = ap.parse_args()

    # A copy, so a rebuild of the shared target directory during the run
    # cannot change the binary between policies.
    os.makedirs(OUT, exist_ok=True)
    aarchx = os.path.join(OUT, "aarchx")
    shutil.copy2(opts.aarchx, aarchx)
    progs = guests()
    if not progs:
        sys.exit("no guest programs in guest/build/static: run `make -C guest`")
    native = build_native("aarchx-example-noop", "aarchx_example_noop")
    builtin_so = build_native("aarchx-builtin-plugin", "aarchx_builtin_plugin")
    configs = [
        ("builtins", write_policy("builtins", None)),
        ("+native noop", write_policy("native", native, "noop")),
    ]
    wasm_note = "left out (--no-wasm)"
    if not opts.no_wasm:
        wasm, wasm_note = build_wasm_noop()
        if wasm:
            policy = write_policy("wasm", wasm, "noop")
            if translate_once(aarchx, policy, *progs[0]):
                configs.append(("+wasm noop", policy))
            else:
                wasm_note = "this aarchx does not run WASM plugins (built without the `wasm` feature?)"
    # The same four passes from plugins/builtin: four crossings a region.
    configs.append(("builtins from plugins/builtin", write_policy("plugin-builtins", builtin_so)))

    measured = measure(aarchx, configs, progs, opts.reps)
    results = [(name, measured[name]) for name, _ in configs]
    # Only guests measured under every policy count.
    common = set.intersection(*(set(m) for _, m in results))
    if not common:
        sys.exit("no guest printed stats under every policy")
    rows = []
    for name, m in results:
        regions = sum(m[p][0] for p in common)
        ns = sum(m[p][1] for p in common)
        rows.append((name, regions, ns, ns / regions))
    base = rows[0][3]

    left_out = sorted(os.path.basename(p) for p, _ in progs if p not in common)
    print("%d of %d static guests, %d runs each, median translate_ns per guest; backend Interp" % (
        len(common), len(progs), opts.reps))
    if left_out:
        print("left out (no stats line or over a minute under some policy): %s" % ", ".join(left_out))
    print()
    print("| policy | regions | translate ms | ns / region | difference per region and crossing |")
    print("|---|---:|---:|---:|---:|")
    for name, regions, ns, per in rows:
        crossings = 4 if name.startswith("builtins from") else 1
        delta = "-" if name == "builtins" else "%+.0f ns" % ((per - base) / crossings)
        print("| %s | %.0f | %.2f | %.0f | %s |" % (name, regions, ns / 1e6, per, delta))
    if not any(r[0].startswith("+wasm") for r in rows):
        print("| +wasm noop | | | | pending: %s |" % wasm_note)


if __name__ == "__main__":
    main()
