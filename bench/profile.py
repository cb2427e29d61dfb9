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
bench/cold.py. The persistent translation cache is off unless AARCHX_CACHE
says otherwise (`AARCHX_CACHE=readwrite` with a filled XDG_CACHE_HOME
profiles a warm start), so a second profile of one command measures
translation again, not the cache.

With --guest it profiles the translated code instead: aarchx writes its
perf map (AARCHX_PERF_MAP, /tmp/perf-PID.map: each guest instruction's
arm64 code as a symbol), every arm64 instruction the plugin saw executed
inside the code cache is attributed to the guest instruction it was
translated from, and the tables list the guest instructions and the
instruction patterns (mnemonic and operand kinds: `add r64, m64`) that
cost the most arm64 instructions, with their executions and the arm64
instructions per execution. Guest instructions are disassembled with
objdump from the program file (a non-PIE executable; other addresses are
shown bare). `./x bench --profile KERNEL` runs it on a benchmark kernel:

    python3 bench/profile.py --aarchx AARCH64_AARCHX --guest -- bench/build/static/xbench hash 100000
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
    # A translation profile: the persistent cache off, unless the caller
    # asks for it (AARCHX_CACHE=readwrite and a filled XDG_CACHE_HOME
    # profile a warm start).
    env = dict(os.environ)
    env.setdefault("AARCHX_CACHE", "off")
    with tempfile.NamedTemporaryFile(suffix=".blocks") as out:
        proc = subprocess.run(
            [qemu, "-plugin", f"{plugin},mode=blocks,top=1000000000,out={out.name}", aarchx, *command],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
        )
        if proc.returncode != 0:
            sys.exit(f"profile.py: {' '.join(command)} under {aarchx} exited with {proc.returncode}:\n{proc.stderr}")
        text = open(out.name).read()
    total = int(re.search(r"^insns (\d+)", text, re.M).group(1))
    found = [(int(a, 16), int(t)) for a, t in re.findall(r"^block 0x([0-9a-f]+) .* total (\d+)$", text, re.M)]
    return total, found


def perf_map(path):
    """Sorted (start, end, name) spans of aarchx's perf map; a later line
    for the same start replaces an earlier one (code placed again after
    the cache was reset)."""
    spans = {}
    with open(path) as f:
        for line in f:
            start, size, name = line.rstrip("\n").split(" ", 2)
            spans[int(start, 16)] = (int(start, 16) + int(size, 16), name)
    return sorted((s, e, n) for s, (e, n) in spans.items())


def guest_disassembly(program):
    """{address: Intel-syntax text} of a non-PIE x86-64 executable (objdump);
    empty for anything else."""
    try:
        with open(program, "rb") as f:
            head = f.read(18)
    except OSError:
        return {}
    if head[:4] != b"\x7fELF" or int.from_bytes(head[16:18], "little") != 2:  # ET_EXEC
        return {}
    out = subprocess.run(["objdump", "-d", "-M", "intel", "--no-show-raw-insn", "-w", program],
                         capture_output=True, text=True)
    text = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m:
            text[int(m.group(1), 16)] = re.sub(r"\s+", " ", re.sub(r"\s*#.*$", "", m.group(2))).strip()
    return text


def pattern(text):
    """An instruction's shape: mnemonic and operand kinds (r64, r32, r16,
    r8, xmm, m64..., imm, rel), so `add rax, QWORD PTR [rbx+8]` and
    `add rcx, QWORD PTR [rsp+0x10]` are one pattern."""
    if not text:
        return "?"
    words = text.split(" ", 1)
    mnem, ops = words[0], (words[1] if len(words) > 1 else "")
    if mnem in ("rep", "repz", "repnz", "lock", "bnd", "notrack", "data16") and ops:
        inner = pattern(ops)
        return f"{mnem} {inner}"
    if mnem.startswith("j") or mnem in ("call", "jmp"):
        if re.match(r"^[0-9a-f]+ <", ops):
            return f"{mnem} rel"
    kinds = []
    for op in [o.strip() for o in re.split(r",(?![^\[]*\])", ops) if o.strip()]:
        size = re.match(r"^(BYTE|WORD|DWORD|QWORD|XMMWORD|YMMWORD|TBYTE|FWORD) PTR", op)
        if "[" in op:
            bits = {"BYTE": 8, "WORD": 16, "DWORD": 32, "QWORD": 64, "XMMWORD": 128, "YMMWORD": 256, "TBYTE": 80, "FWORD": 48}
            kinds.append("m%d" % bits[size.group(1)] if size else "m")
        elif re.fullmatch(r"[xy]mm\d+", op):
            kinds.append(op[:3])
        elif re.fullmatch(r"r(?:[abcd]x|si|di|sp|bp|ip|8|9|1[0-5])", op):
            kinds.append("r64")
        elif re.fullmatch(r"e(?:[abcd]x|si|di|sp|bp)|r(?:8|9|1[0-5])d", op):
            kinds.append("r32")
        elif re.fullmatch(r"(?:[abcd]x|si|di|sp|bp)|r(?:8|9|1[0-5])w", op):
            kinds.append("r16")
        elif re.fullmatch(r"[abcd][lh]|(?:si|di|sp|bp)l|r(?:8|9|1[0-5])b", op):
            kinds.append("r8")
        elif re.fullmatch(r"st(?:\(\d\))?", op):
            kinds.append("st")
        elif re.fullmatch(r"-?(?:0x)?[0-9a-f]+", op):
            kinds.append("imm")
        else:
            kinds.append(op)
    return (mnem + " " + ", ".join(kinds)).strip()


def guest_profile(args, command):
    """Runs `command` with the perf map and the block counts, prints the
    per-guest-instruction and per-pattern tables."""
    with tempfile.NamedTemporaryFile(suffix=".blocks") as out:
        env = dict(os.environ, AARCHX_PERF_MAP="1", AARCHX_CACHE="off")
        proc = subprocess.Popen(
            [args.qemu, "-plugin", f"{args.plugin},mode=blocks,top=1000000000,out={out.name}", args.aarchx, *command],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
        )
        _, err = proc.communicate()
        map_path = f"/tmp/perf-{proc.pid}.map"
        if proc.returncode not in (0, None) and not os.path.exists(map_path):
            sys.exit(f"profile.py: {' '.join(command)} exited with {proc.returncode} and left no perf map:\n{err}")
        text = open(out.name).read()
    total = int(re.search(r"^insns (\d+)", text, re.M).group(1))
    found = [(int(a, 16), int(n), int(x)) for a, n, x in
             re.findall(r"^block 0x([0-9a-f]+) insns (\d+) execs (\d+) total \d+$", text, re.M)]
    spans = perf_map(map_path)
    os.unlink(map_path)
    starts = [s for s, _, _ in spans]
    cost = collections.Counter()      # guest address -> arm64 instructions
    execs = collections.Counter()     # guest address -> executions (of its first arm64 instruction)
    runtime = entry = 0
    for vaddr, n, x in found:
        for i in range(n):
            pc = vaddr + 4 * i
            j = bisect.bisect_right(starts, pc) - 1
            if j < 0 or pc >= spans[j][1]:
                runtime += x
                continue
            name = spans[j][2]
            if name.startswith("x86 "):
                guest = int(name.split()[1], 16)
                cost[guest] += x
                if pc == spans[j][0]:
                    execs[guest] += x
            else:
                entry += x
    disasm = guest_disassembly(command[0])
    in_code = sum(cost.values()) + entry
    print(f"`{' '.join(command)}`: {total / 1e9:.3f} G arm64 instructions; translated code "
          f"{in_code / 1e9:.3f} G ({100 * in_code / max(1, total):.1f}%: guest instructions "
          f"{sum(cost.values()) / 1e9:.3f} G, region entries and out-of-line code {entry / 1e9:.3f} G); "
          f"aarchx itself {runtime / 1e9:.3f} G\n")
    print(f"The {args.top} guest instructions that cost the most arm64 instructions:\n")
    print("| share | arm64 insns (M) | executions (M) | arm64 / execution | address | instruction |")
    print("|---:|---:|---:|---:|---|---|")
    for guest, c in cost.most_common(args.top):
        x = execs[guest]
        per = f"{c / x:.1f}" if x else "?"
        print(f"| {100 * c / max(1, total):.1f}% | {c / 1e6:.1f} | {x / 1e6:.2f} | {per} | {guest:#x} | `{disasm.get(guest, '?')}` |")
    by_pattern, pat_execs, pat_sites = collections.Counter(), collections.Counter(), collections.Counter()
    for guest, c in cost.items():
        p = pattern(disasm.get(guest))
        by_pattern[p] += c
        pat_execs[p] += execs[guest]
        pat_sites[p] += 1
    print(f"\nThe {args.top} instruction patterns that cost the most:\n")
    print("| share | arm64 insns (M) | executions (M) | arm64 / execution | sites | pattern |")
    print("|---:|---:|---:|---:|---:|---|")
    for p, c in by_pattern.most_common(args.top):
        x = pat_execs[p]
        per = f"{c / x:.1f}" if x else "?"
        print(f"| {100 * c / max(1, total):.1f}% | {c / 1e6:.1f} | {x / 1e6:.2f} | {per} | {pat_sites[p]} | `{p}` |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aarchx", required=True, help="an aarch64 aarchx build (static, with its symbol table)")
    ap.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    ap.add_argument("--guest", action="store_true",
                    help="profile the translated code by guest instruction and pattern instead")
    ap.add_argument("--plugin", default=os.path.join(HERE, "build", "libinsncount.so"))
    ap.add_argument("--qemu", default="qemu-aarch64")
    ap.add_argument("command", nargs="*", help="the guest command (default: python3 -c pass)")
    args = ap.parse_args()
    if not os.path.exists(args.plugin):
        sys.exit(f"profile.py: no plugin at {args.plugin}: run `make -C bench plugin`")
    command = args.command or DEFAULT_COMMAND
    if args.guest:
        return guest_profile(args, command)
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
