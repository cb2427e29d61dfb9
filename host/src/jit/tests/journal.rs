//! Journal mode: stores are recorded with their old bytes and roll back.

use crate::exec_tests::{region, state_with, GuestMem};
use crate::jit::{CompileOptions, Jit};

#[test]
fn stores_are_recorded_and_rolled_back() {
    let mut mem = GuestMem::new();
    let pattern: Vec<u8> = (0..4096).map(|i| (i * 7 + 3) as u8).collect();
    mem.set_bytes(&pattern);
    let base = mem.base();
    let r = region(
        "region 0x1000\nblock0:\n v0 = get rdi\n v1 = get rax\n v2 = trunc.i8 v1\n store.i8 v0, v2\n\
         v3 = iconst.i64 0x8\n v4 = add.i64 v0, v3\n store.i64 ordered v4, v1\n v5 = get xmm0\n\
         v6 = iconst.i64 0x10\n v7 = add.i64 v0, v6\n store.v128 v7, v5\n v9 = trunc.i32 v1\n v8 = atomic_rmw.i32 add v4, v9\n\
         store.i8 v0, v2\n exit jump 0x1000\n",
    );
    let mut jit = Jit::new(crate::jit::NanRules::default()).expect("JIT starts");
    let b = jit.compile(&r, CompileOptions { journal: true, ..CompileOptions::default() }, true).expect("compiles");
    let mut state = state_with(&[("rdi", u128::from(base)), ("rax", 0x1122_3344_5566_7788), ("xmm0", u128::MAX)]);
    // SAFETY: the region stores into `mem` only.
    unsafe { jit.run(b, &mut state, &mut |_, _| {}) };
    let entries: Vec<(u64, u64)> = jit.journal().iter().map(|e| (e.addr - base, e.size)).collect();
    assert_eq!(entries, [(0, 1), (8, 8), (16, 16), (8, 4), (0, 1)]);
    assert_eq!(jit.journal()[0].old[0], pattern[0]);
    assert_eq!(jit.journal()[1].old[..8], pattern[8..16]);
    assert_eq!(jit.journal()[2].old[..], pattern[16..32]);
    // The later store to byte 0 saw the earlier one's value.
    assert_eq!(jit.journal()[4].old[0], 0x88);
    assert_eq!(mem.read(16, 16), u128::MAX);
    // SAFETY: the journal addresses `mem`.
    unsafe { jit.rollback() };
    assert!(mem.bytes() == pattern);
    assert!(jit.journal().is_empty());
}

#[test]
fn the_journal_grows() {
    let mut mem = GuestMem::new();
    let pattern: Vec<u8> = (0..4096).map(|i| (i * 13 + 1) as u8).collect();
    mem.set_bytes(&pattern);
    // 3000 stores of a counter, cycling over 2 KiB.
    let r = region(
        "region 0x1000\nblock0:\n v0 = get rdi\n v1 = iconst.i64 0xbb8\n jump block1\n\
         block1:\n v2 = get rcx\n v3 = iconst.i64 0x7ff\n v4 = and.i64 v2, v3\n v5 = add.i64 v0, v4\n\
         v6 = trunc.i16 v2\n store.i16 v5, v6\n v7 = iconst.i64 0x1\n v8 = add.i64 v2, v7\n set rcx, v8\n\
         v9 = icmp.i64 ult v8, v1\n brif v9, block1, block2\n\
         block2:\n exit jump 0x1000\n",
    );
    let mut jit = Jit::new(crate::jit::NanRules::default()).expect("JIT starts");
    let b = jit.compile(&r, CompileOptions { journal: true, ..CompileOptions::default() }, true).expect("compiles");
    let mut state = state_with(&[("rdi", u128::from(mem.base()))]);
    // SAFETY: the region stores into the first 2 KiB of `mem` only.
    unsafe { jit.run(b, &mut state, &mut |_, _| {}) };
    assert_eq!(state.gpr[1], 3000);
    assert_eq!(jit.journal().len(), 3000);
    assert!(mem.bytes() != pattern);
    // SAFETY: as above.
    unsafe { jit.rollback() };
    assert!(mem.bytes() == pattern);
}
