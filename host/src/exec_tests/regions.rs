//! Whole regions: control flow over blocks, traps and exits, loads and
//! stores, atomics, helper calls, and the flag, xmm and control
//! registers through `get` and `set`.

use aarchx_ir::cond::Helper;
use aarchx_ir::{ExitKind, GuestState, Reg, TrapKind};

use super::{check, region, state_with, GuestMem, Outcome};
use crate::machine::RegionExit;

/// A byte that no fixture stores, to fill memory with so that the bytes a
/// region wrote can be told from those it left.
const UNTOUCHED: u8 = 0x5a;

/// Runs the region `text` from `state` on zeroed memory.
fn run(text: &str, state: &GuestState) -> Outcome {
    check(&region(text), state, &mut GuestMem::new())
}

/// rax = rcx + (rcx - 1) + ... + 1, counting rcx down to 0 around a
/// loop of blocks.
const SUM_LOOP: &str = "\
region 0x1000
block0:
  insn 0x1000, 3
  jump block1
block1:
  v0 = get rcx
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  brif v2, block3, block2
block2:
  insn 0x1003, 3
  v3 = get rax
  v4 = add.i64 v3, v0
  set rax, v4
  v5 = iconst.i64 0x1
  v6 = sub.i64 v0, v5
  set rcx, v6
  jump block1
block3:
  exit jump 0x2000
";

#[test]
fn counted_loop_over_blocks() {
    let out = run(SUM_LOOP, &state_with(&[("rcx", 5)]));
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Jump });
    assert_eq!(out.state.gpr[0], 15);
    assert_eq!(out.state.gpr[1], 0);
    assert_eq!(out.state.rip, 0x2000);
    // Again with a zero count: the scratch values of the last run do not leak.
    let out = run(SUM_LOOP, &state_with(&[("rax", 7)]));
    assert_eq!(out.state.gpr[0], 7);
}

/// `div rcx`-like guard: trap when rcx is 0, else store rax / rcx.
const GUARDED_DIV: &str = "\
region 0x1000
block0:
  insn 0x1000, 3
  v0 = get rcx
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  brif v2, block1, block2
block1:
  trap divzero 0x1000
block2:
  v3 = get rax
  v4 = udiv.i64 v3, v0
  set rax, v4
  exit jump 0x1003
";

#[test]
fn trap_leaves_rip_at_the_instruction() {
    let out = run(GUARDED_DIV, &state_with(&[("rax", 10), ("rcx", 0)]));
    assert_eq!(out.exit, RegionExit::Trap { kind: TrapKind::DivZero });
    assert_eq!(out.state.rip, 0x1000);
    assert_eq!(out.state.gpr[0], 10);
    let out = run(GUARDED_DIV, &state_with(&[("rax", 10), ("rcx", 3)]));
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Jump });
    assert_eq!((out.state.gpr[0], out.state.rip), (3, 0x1003));
}

#[test]
fn syscall_exit_leaves_rip_after_the_syscall() {
    let text = "\
region 0x1000
block0:
  insn 0x1000, 5
  v0 = iconst.i64 0x3c
  set rax, v0
  insn 0x1005, 2
  exit syscall 0x1007
";
    let out = run(text, &GuestState::default());
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Syscall });
    assert_eq!((out.state.gpr[0], out.state.rip), (60, 0x1007));
    let out = run("region 0x1000\nblock0:\n exit syscall 0x1002\n", &GuestState::default());
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Syscall });
}

#[test]
fn ret_is_an_indirect_exit_through_memory() {
    let text = "\
region 0x1000
block0:
  insn 0x1000, 1
  v0 = get rsp
  v1 = load.i64 v0
  v2 = iconst.i64 0x8
  v3 = add.i64 v0, v2
  set rsp, v3
  exit_indirect ret v1
";
    let mut mem = GuestMem::new();
    let mut bytes = mem.bytes();
    bytes[0x100..0x108].copy_from_slice(&[0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0]);
    mem.set_bytes(&bytes);
    let rsp = mem.base() + 0x100;
    let out = check(&region(text), &state_with(&[("rsp", rsp.into())]), &mut mem);
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Ret });
    assert_eq!((out.state.rip, out.state.gpr[4]), (0x1234_5678, rsp + 8));
}

#[test]
fn loads_and_stores_are_little_endian_and_sized() {
    let text = "\
region 0x1000
block0:
  v0 = get rdi
  v1 = get rax
  v2 = trunc.i32 v1
  store.i32 v0, v2
  v3 = load.i16 v0
  v4 = zext.i64 v3
  set rcx, v4
  v5 = get xmm0
  store.v128 ordered v0, v5
  v6 = iconst.i64 0xf
  v7 = add.i64 v0, v6
  v8 = load.i8 ordered v7
  v9 = zext.i64 v8
  set rdx, v9
  exit jump 0x0
";
    let mut mem = GuestMem::new();
    mem.set_bytes(&[UNTOUCHED; 4096]);
    let state = state_with(&[("rdi", mem.base().into()), ("rax", 0x1122_3344_5566_7788), ("xmm0", 0xab << 120)]);
    let out = check(&region(text), &state, &mut mem);
    assert_eq!(out.state.gpr[1], 0x7788);
    assert_eq!(out.state.gpr[2], 0xab);
    // Exactly the 16 bytes at rdi were written.
    assert_eq!(mem.read(0, 16), 0xab << 120);
    assert!(mem.bytes()[16..].iter().all(|b| *b == UNTOUCHED));
}

#[test]
fn atomics_return_the_old_value() {
    let text = "\
region 0x1000
block0:
  v0 = get rdi
  v1 = get rax
  v2 = trunc.i32 v1
  v3 = atomic_rmw.i32 add v0, v2
  v4 = zext.i64 v3
  set rcx, v4
  v5 = get rsi
  v6 = trunc.i32 v5
  v7 = atomic_rmw.i32 xchg v0, v6
  v8 = atomic_cas.i32 v0, v6, v2
  v9 = atomic_cas.i32 v0, v6, v6
  v10 = zext.i64 v9
  set rdx, v10
  v11 = load.i32 v0
  v12 = zext.i64 v11
  set rbx, v12
  v13 = zext.i64 v7
  set rsi, v13
  v14 = zext.i64 v8
  set r8, v14
  exit jump 0x0
";
    // [rdi] = 0xffff_ffff; add 2 -> 1 (wraps at 32 bits); xchg 9 -> 9;
    // cas 9 -> 2 succeeds; cas 9 -> 9 fails, seeing 2.
    let mut mem = GuestMem::new();
    let mut bytes = vec![UNTOUCHED; 4096];
    bytes[..4].fill(0xff);
    mem.set_bytes(&bytes);
    let state = state_with(&[("rdi", mem.base().into()), ("rax", 2), ("rsi", 9)]);
    let out = check(&region(text), &state, &mut mem);
    assert_eq!(out.state.gpr[1], 0xffff_ffff); // add's old value
    assert_eq!(out.state.gpr[6], 1); // xchg's
    assert_eq!(out.state.gpr[8], 9); // the successful cas's
    assert_eq!(out.state.gpr[2], 2); // the failed cas's
    assert_eq!(out.state.gpr[3], 2); // memory at the end
    assert!(mem.bytes()[4..].iter().all(|b| *b == UNTOUCHED)); // nothing past the i32
}

#[test]
fn memory_and_atomics() {
    let mut mem = GuestMem::new();
    let base = mem.base();
    let r = region(
        "region 0x1000\nblock0:\n\
         v0 = get rdi\n v1 = get rax\n v2 = trunc.i8 v1\n v3 = trunc.i16 v1\n v4 = trunc.i32 v1\n\
         store.i8 v0, v2\n v5 = iconst.i64 0x10\n v6 = add.i64 v0, v5\n store.i16 ordered v6, v3\n\
         v7 = iconst.i64 0x20\n v8 = add.i64 v0, v7\n store.i32 v8, v4\n v9 = iconst.i64 0x30\n v10 = add.i64 v0, v9\n\
         store.i64 ordered v10, v1\n v11 = get xmm0\n v12 = iconst.i64 0x40\n v13 = add.i64 v0, v12\n store.v128 v13, v11\n\
         v14 = load.i32 ordered v8\n v15 = zext.i64 v14\n set rbx, v15\n v16 = load.v128 ordered v13\n set xmm1, v16\n\
         v17 = load.i8 v0\n v18 = zext.i64 v17\n set rdx, v18\n\
         v19 = atomic_rmw.i64 add v10, v1\n set rsi, v19\n\
         v20 = atomic_rmw.i32 and v8, v4\n v21 = atomic_rmw.i16 xchg v6, v3\n v22 = zext.i64 v21\n set r8, v22\n\
         v23 = iconst.i32 0x0\n v24 = atomic_cas.i32 v8, v4, v23\n v25 = zext.i64 v24\n set r9, v25\n\
         v26 = atomic_cas.i32 v8, v4, v23\n v27 = zext.i64 v26\n set r10, v27\n\
         v28 = atomic_rmw.i8 or v0, v2\n v29 = atomic_rmw.i64 xor v10, v1\n\
         exit jump 0x2000\n",
    );
    let state = state_with(&[("rdi", u128::from(base)), ("rax", 0x1122_3344_5566_7788), ("xmm0", 0xabcd << 64)]);
    let out = check(&r, &state, &mut mem);
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Jump });
    assert_eq!(out.state.rip, 0x2000);
    assert_eq!(out.state.gpr[3], 0x5566_7788); // rbx: the i32 store read back
    assert_eq!(out.state.xmm[1], 0xabcd << 64);
    assert_eq!(out.state.gpr[2], 0x88); // rdx
    assert_eq!(out.state.gpr[6], 0x1122_3344_5566_7788); // rsi: old value of the add
    assert_eq!(out.state.gpr[8], 0x7788); // r8: old value of the xchg
    assert_eq!(out.state.gpr[9], 0x5566_7788); // r9: the cas found its expected value...
    assert_eq!(out.state.gpr[10], 0); // r10: ...and the second found the 0 it stored
    assert_eq!(mem.read(0, 1), 0x88);
    assert_eq!(mem.read(0x10, 2), 0x7788);
    assert_eq!(mem.read(0x20, 4), 0);
    // Added to itself (0x2244_6688_aacc_ef10), then xored with the original.
    assert_eq!(mem.read(0x30, 8), 0x3366_55cc_ffaa_9898);
    assert_eq!(mem.read(0x40, 16), 0xabcd << 64);
}

#[test]
fn helpers_run_on_the_state_at_their_instruction() {
    let text = "\
region 0x1000
block0:
  insn 0x1000, 2
  v0 = get rbx
  insn 0x1002, 2
  call cpuid
  set rcx, v0
  exit jump 0x1004
";
    let out = run(text, &state_with(&[("rbx", 0x55)]));
    assert_eq!(out.helpers, [(Helper::Cpuid, 0x1002)]);
    assert_eq!(out.state.get(Reg::RBX), 0x1234);
    assert_eq!(out.state.gpr[1], 0x55);
}

#[test]
fn xmm_registers_live_across_a_helper_call() {
    // The helper zeroes the V registers a call may clobber (see
    // `test_helper`): the guest's XMM registers, in host registers while
    // translated code runs, must come through whole.
    let text = "\
region 0x1000
block0:
  insn 0x1000, 2
  v0 = get xmm0
  v1 = get xmm9
  call rdtsc
  set xmm2, v0
  set xmm10, v1
  exit jump 0x1002
";
    let (x0, x9) = (0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128, 0x1111_2222_3333_4444_5555_6666_7777_8888u128);
    let out = run(text, &state_with(&[("xmm0", x0), ("xmm9", x9), ("xmm15", 7 << 100)]));
    assert_eq!((out.state.xmm[2], out.state.xmm[10]), (x0, x9));
    assert_eq!((out.state.xmm[0], out.state.xmm[9], out.state.xmm[15]), (x0, x9, 7 << 100));
}

#[test]
fn control_flow_traps_and_helpers() {
    let text = "region 0x1000\nblock0:\n\
         insn 0x1000, 2\n v0 = get rax\n v1 = iconst.i64 0x0\n v2 = icmp.i64 eq v0, v1\n brif v2, block1, block2\n\
         block1:\n insn 0x1002, 1\n trap divzero 0x1002\n\
         block2:\n insn 0x1003, 2\n call cpuid\n v3 = get rbx\n v4 = iconst.i64 0x1\n v8 = get rax\n v5 = sub.i64 v8, v4\n set rax, v5\n\
         v6 = icmp.i64 eq v5, v1\n brif v6, block3, block2\n\
         block3:\n insn 0x1005, 1\n v7 = get rcx\n exit_indirect ret v7\n";
    let trapped = run(text, &state_with(&[("rax", 0)]));
    assert_eq!(trapped.exit, RegionExit::Trap { kind: TrapKind::DivZero });
    assert_eq!(trapped.state.rip, 0x1002);
    let looped = run(text, &state_with(&[("rax", 3), ("rcx", 0x4444)]));
    assert_eq!(looped.exit, RegionExit::Jump { kind: ExitKind::Ret });
    assert_eq!(looped.state.rip, 0x4444);
    assert_eq!(looped.state.gpr[0], 0);
    assert_eq!(looped.state.gpr[3], 0x1234); // rbx, from the helper
                                             // The helper saw rip at its instruction each time round the loop.
    assert_eq!(looped.helpers.iter().map(|h| h.1).collect::<Vec<_>>(), [0x1003, 0x1003, 0x1003]);
}

#[test]
fn flags_and_xmm_registers_through_get_and_set() {
    let text = "\
region 0x1000
block0:
  v0 = get rax
  v1 = trunc.i8 v0
  v2 = parity.i8 v1
  set pf, v2
  v3 = iconst.i64 0x0
  v4 = icmp.i64 eq v0, v3
  set zf, v4
  v5 = get xmm1
  set xmm2, v5
  v6 = get mxcsr
  v7 = zext.i64 v6
  set rdx, v7
  exit jump 0x0
";
    let out = run(text, &state_with(&[("rax", 0x103), ("xmm1", u128::MAX - 1)]));
    assert_eq!(out.state.flags[..4], [0, 1, 0, 0]);
    assert_eq!(out.state.xmm[2], u128::MAX - 1);
    assert_eq!(out.state.gpr[2], 0x1f80);
}

#[test]
fn state_registers_and_flags() {
    let r = region(
        "region 0x1000\nblock0:\n\
         v0 = get cf\n v1 = get zf\n v2 = xor.i1 v0, v1\n set of, v2\n set sf, v0\n\
         v3 = get mxcsr\n v4 = zext.i64 v3\n set rax, v4\n v5 = get fpcw\n v6 = zext.i64 v5\n set rcx, v6\n\
         v7 = get fs_base\n set gs_base, v7\n v8 = iconst.i32 0x1f80\n v9 = iconst.i32 0x3f80\n set mxcsr, v9\n\
         v10 = iconst.i16 0x27f\n set fpcw, v10\n v11 = get r15\n set r14, v11\n v12 = get xmm15\n set xmm14, v12\n\
         exit jump 0x1000\n",
    );
    let mut state = state_with(&[("cf", 1), ("zf", 0), ("fs_base", 0x7000_0000), ("r15", 5), ("xmm15", 1 << 127)]);
    state.flags[3] = 0xfe; // a stray high bit in zf's byte reads as 0
    let out = check(&r, &state, &mut GuestMem::new());
    assert_eq!(out.state.flags[5], 1); // of = cf ^ zf
    assert_eq!(out.state.flags[4], 1); // sf = cf
    assert_eq!(out.state.gpr[0], 0x1f80);
    assert_eq!(out.state.gpr[1], 0x37f);
    assert_eq!(out.state.gs_base, 0x7000_0000);
    assert_eq!(out.state.mxcsr, 0x3f80);
    assert_eq!(out.state.fpcw, 0x27f);
    assert_eq!(out.state.gpr[14], 5);
    assert_eq!(out.state.xmm[14], 1 << 127);
}

#[test]
fn mmx_registers_are_parts_of_the_x87_registers() {
    // mm3 and fpexp3 are R3's significand and sign/exponent word; fptag
    // a byte of its own (fpsw's neighbour).
    let r = region(
        "region 0x1000\nblock0:\n\
         v0 = get mm3\n set rax, v0\n v1 = get fpexp3\n v2 = zext.i64 v1\n set rcx, v2\n\
         v3 = get fptag\n v4 = zext.i64 v3\n set rdx, v4\n\
         v5 = iconst.i64 0x1122334455667788\n set mm5, v5\n v6 = iconst.i16 0xffff\n set fpexp5, v6\n\
         v7 = iconst.i8 0x81\n set fptag, v7\n exit jump 0x1000\n",
    );
    let mut state = GuestState::default();
    state.st[3] = 0x4003_8000_0000_0000_0001;
    state.st[5] = 0x1234_5678_9abc_def0_1234;
    state.fptag = 0x5a;
    state.fpsw = 0x3800;
    let out = check(&r, &state, &mut GuestMem::new());
    assert_eq!(out.state.gpr[0], 0x8000_0000_0000_0001);
    assert_eq!(out.state.gpr[1], 0x4003);
    assert_eq!(out.state.gpr[2], 0x5a);
    assert_eq!(out.state.st[5], 0xffff_1122_3344_5566_7788);
    assert_eq!(out.state.st[3], state.st[3]);
    assert_eq!((out.state.fptag, out.state.fpsw), (0x81, 0x3800));
}
