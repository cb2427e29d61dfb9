// bench/plugin/loop.S: owns the plugin's self-check program (aarch64, no libc):
// 1 + 2*1000 + 3 = 2004 instructions executed, exactly.  Also the harness's
// "trivial aarch64 program" for qemu-aarch64's own peak RSS.
    .global _start
_start:
    mov x1, #1000
1:  subs x1, x1, #1
    b.ne 1b
    mov x0, #0
    mov x8, #93     // exit
    svc #0
