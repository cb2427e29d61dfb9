#!/bin/sh
# bench/native/compare.sh [AARCHX...]: builds guest/c/libm_values.c for x86-64 and
# (static) aarch64, runs the x86-64 build natively with glibc's FMA variants
# (this CPU's default) and with its SSE2 ones (GLIBC_TUNABLES), the aarch64
# build under qemu-aarch64, and, given a command prefix AARCHX (an aarch64
# aarchx runs under qemu-aarch64), the x86-64 build under it too (with
# `--policy policies/v3.ron` its guest gets the FMA variants, at the default
# V1 the SSE2 ones: compare it with that column); prints one row per
# function: for each run against the x86 FMA run, R = identical results,
# q = identical but for NaN bits, - = different, then E and F when errno and
# the exception flags are identical. docs/native.md has the table.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/../build/native}
mkdir -p "$out"
flags="-O2 -fno-builtin -ffp-contract=off -Wall -Wextra"
src=$here/../../guest/c/libm_values.c
gcc $flags -o "$out/libm_values" "$src" -lm
aarch64-linux-gnu-gcc $flags -static -o "$out/libm_values_arm64" "$src" -lm
"$out/libm_values" > "$out/x86-fma.txt"
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX,-FMA4 "$out/libm_values" > "$out/x86-sse2.txt"
qemu-aarch64 "$out/libm_values_arm64" > "$out/arm64.txt"
runs="$out/x86-sse2.txt $out/arm64.txt"
if [ $# -gt 0 ]; then
    case "$(head -c 20 "$1" | od -An -tx1 | tr -d ' \n')" in
        7f454c46*b700*) set -- qemu-aarch64 "$@" ;;
    esac
    "$@" "$out/libm_values" > "$out/aarchx.txt"
    runs="$runs $out/aarchx.txt"
fi
python3 - "$out/x86-fma.txt" $runs <<'PY'
import sys
def load(path):
    return {f[0]: dict(kv.split("=") for kv in f[2:]) for f in (l.split() for l in open(path))}
ref, *others = [load(p) for p in sys.argv[1:]]
print("%-11s" % "function", " ".join("%-9s" % p.rsplit("/", 1)[-1][:-4] for p in sys.argv[2:]))
for name, r in ref.items():
    cells = []
    for o in others:
        o = o[name]
        assert o["in"] == r["in"], f"{name}: the inputs differ"
        res = "R" if o["res"] == r["res"] else "q" if o["resq"] == r["resq"] else "-"
        cells.append(res + ("E" if o["errno"] == r["errno"] else "-") + ("F" if o["fe"] == r["fe"] else "-"))
    print("%-11s" % name, " ".join("%-9s" % c for c in cells))
PY
