//! Chaining: blocks linked to each other run without returning to Rust,
//! the chain budget bounds how long they do, invalidation unlinks.

use aarchx_ir::{ExitKind, GuestState};

use crate::exec_tests::region;
use crate::jit::exit::StubId;
use crate::jit::{CompileOptions, Jit};
use crate::machine::RegionExit;

/// rcx -= 1, rax += 1, then on to 0x2000.
const A: &str = "region 0x1000\nblock0:\n insn 0x1000, 4\n v0 = get rcx\n v1 = iconst.i64 0x1\n v2 = sub.i64 v0, v1\n\
                 set rcx, v2\n v3 = get rax\n v4 = add.i64 v3, v1\n set rax, v4\n exit jump 0x2000\n";
/// Back to 0x1000 while rcx is not zero, else out to 0x3000.
const B: &str =
    "region 0x2000\nblock0:\n insn 0x2000, 4\n v0 = get rcx\n v1 = iconst.i64 0x0\n v2 = icmp.i64 eq v0, v1\n\
                 brif v2, block1, block2\nblock1:\n exit jump 0x3000\nblock2:\n exit call 0x1000\n";
/// A block that loops to itself: rcx -= 1 until zero, then out to 0x3000.
const SELF: &str =
    "region 0x4000\nblock0:\n insn 0x4000, 4\n v0 = get rcx\n v1 = iconst.i64 0x1\n v2 = sub.i64 v0, v1\n\
                    set rcx, v2\n v3 = iconst.i64 0x0\n v4 = icmp.i64 eq v2, v3\n brif v4, block1, block2\n\
                    block1:\n exit jump 0x3000\nblock2:\n exit jump 0x4000\n";

fn jit_with(texts: &[&str]) -> Jit {
    let mut jit = Jit::new(crate::jit::NanRules::default()).expect("JIT starts");
    for t in texts {
        jit.compile(&region(t), CompileOptions::default(), true).expect("compiles");
    }
    jit
}

/// The dispatcher loop from `state.rip` until 0x3000, linking every
/// chainable exit whose target is compiled. Returns how many times
/// translated code returned to Rust.
fn dispatch(jit: &mut Jit, state: &mut GuestState) -> usize {
    let mut returns = 0;
    while state.rip != 0x3000 {
        let block = jit.lookup(state.rip).expect("target compiled");
        // SAFETY: these regions touch no memory.
        let out = unsafe { jit.run(block, state, &mut |_, _| {}) };
        returns += 1;
        assert!(matches!(out.exit, RegionExit::Jump { kind: ExitKind::Jump | ExitKind::Call }));
        if let Some(stub) = out.chain {
            if let Some(target) = jit.lookup(state.rip) {
                jit.link(stub, target);
            }
        }
        assert!(returns < 100_000, "runaway dispatch");
    }
    returns
}

#[test]
fn two_blocks_chain_to_each_other() {
    let mut jit = jit_with(&[A, B]);
    let mut state = GuestState { rip: 0x1000, ..GuestState::default() };
    state.gpr[1] = 1000;
    let returns = dispatch(&mut jit, &mut state);
    assert_eq!(state.gpr[0], 1000);
    assert_eq!(state.gpr[1], 0);
    assert_eq!(state.rip, 0x3000);
    // A's first exit, B's first exit, then the whole loop chained until
    // B leaves for the unknown 0x3000.
    assert_eq!(returns, 3);
    // A's stub, then B's two: the first (to 0x3000) unlinked.
    assert!(jit.stubs.is_linked(StubId(0)));
    assert!(!jit.stubs.is_linked(StubId(1)));
    assert!(jit.stubs.is_linked(StubId(2)));

    // Again, everything linked already: one return.
    state.rip = 0x1000;
    state.gpr[1] = 50;
    assert_eq!(dispatch(&mut jit, &mut state), 1);
    assert_eq!(state.gpr[0], 1050);
}

#[test]
fn the_budget_returns_to_rust() {
    let mut jit = jit_with(&[A, B]);
    jit.set_chain_budget(10);
    let mut state = GuestState { rip: 0x1000, ..GuestState::default() };
    state.gpr[1] = 100;
    let returns = dispatch(&mut jit, &mut state);
    assert_eq!(state.gpr[0], 100);
    // 199 transitions; only the 99 backward ones (B to A) count, at most
    // 10 per run.
    assert!(returns >= 10, "{returns} returns");
    assert!(returns <= 15, "{returns} returns");
}

#[test]
fn a_self_loop_chains_and_yields() {
    let mut jit = jit_with(&[SELF]);
    jit.set_chain_budget(1000);
    let mut state = GuestState { rip: 0x4000, ..GuestState::default() };
    state.gpr[1] = 100_000;
    let returns = dispatch(&mut jit, &mut state);
    assert_eq!(state.gpr[1], 0);
    assert!((100..=102).contains(&returns), "{returns} returns");
}

#[test]
fn invalidation_unlinks() {
    let mut jit = jit_with(&[A, B]);
    let mut state = GuestState { rip: 0x1000, ..GuestState::default() };
    state.gpr[1] = 10;
    assert_eq!(dispatch(&mut jit, &mut state), 3);

    // Dropping B unlinks A's exit into it: A now returns to Rust.
    jit.invalidate(0x2002, 1);
    assert!(jit.lookup(0x2000).is_none());
    assert!(jit.lookup(0x1000).is_some());
    state.rip = 0x1000;
    state.gpr[1] = 10;
    let a = jit.lookup(0x1000).expect("A is live");
    // SAFETY: no memory access.
    let out = unsafe { jit.run(a, &mut state, &mut |_, _| {}) };
    assert_eq!(state.rip, 0x2000);
    assert!(out.chain.is_some());

    // Compiled again, B is linked again and the loop finishes.
    jit.compile(&region(B), CompileOptions::default(), true).expect("compiles");
    let returns = dispatch(&mut jit, &mut state);
    assert_eq!(state.gpr[1], 0);
    assert_eq!(state.gpr[0], 20);
    assert!(returns <= 3, "{returns} returns");

    // A range that covers nothing compiled changes nothing.
    jit.invalidate(0x9000, 0x100);
    assert!(jit.lookup(0x1000).is_some() && jit.lookup(0x2000).is_some());
}

#[test]
fn journaled_blocks_are_not_chained() {
    let mut jit = Jit::new(crate::jit::NanRules::default()).expect("JIT starts");
    let a =
        jit.compile(&region(A), CompileOptions { journal: true, ..CompileOptions::default() }, true).expect("compiles");
    jit.compile(&region(B), CompileOptions::default(), true).expect("compiles");
    assert!(jit.lookup(0x1000).is_none());
    assert_eq!(
        jit.lookup_with(0x1000, CompileOptions { journal: true, ..CompileOptions::default() }),
        Some(a),
        "registered as journaled"
    );
    let mut state = GuestState { rip: 0x1000, ..GuestState::default() };
    state.gpr[1] = 3;
    // SAFETY: no memory access.
    let out = unsafe { jit.run(a, &mut state, &mut |_, _| {}) };
    assert_eq!(out.chain, None);
    assert_eq!(state.rip, 0x2000);
}

#[test]
fn reset_forgets_everything() {
    let mut jit = jit_with(&[A, B]);
    jit.reset();
    assert!(jit.lookup(0x1000).is_none());
    jit.compile(&region(A), CompileOptions::default(), true).expect("compiles");
    jit.compile(&region(B), CompileOptions::default(), true).expect("compiles");
    let mut state = GuestState { rip: 0x1000, ..GuestState::default() };
    state.gpr[1] = 7;
    dispatch(&mut jit, &mut state);
    assert_eq!(state.gpr[0], 7);
}

#[test]
fn malformed_regions_are_declined() {
    use aarchx_ir::Region;
    let mut jit = Jit::new(crate::jit::NanRules::default()).expect("JIT starts");
    assert_eq!(jit.compile(&Region::new(0x1000), CompileOptions::default(), true), Err(crate::jit::Decline::Malformed));
    let mut r = region(A);
    r.blocks[0].insts.pop();
    assert_eq!(jit.compile(&r, CompileOptions::default(), true), Err(crate::jit::Decline::Malformed));
}

#[test]
fn quick_blocks_chain_count_their_runs_and_give_way_to_their_superblock() {
    use crate::translate::Shape;
    let quick = CompileOptions { shape: Shape::Quick, ..CompileOptions::default() };
    let mut jit = Jit::new(crate::jit::NanRules::default()).expect("JIT starts");
    jit.set_tier_up(5);
    for t in [A, B] {
        jit.compile(&region(t), quick, true).expect("compiles");
    }
    let mut state = GuestState { rip: 0x1000, ..GuestState::default() };
    state.gpr[1] = 100;
    // (rip, rax) at each tier-up exit.
    let mut tier_ups = Vec::new();
    let mut returns = 0;
    while state.rip != 0x3000 {
        let block = jit.lookup(state.rip).expect("target compiled");
        // SAFETY: these regions touch no memory.
        let out = unsafe { jit.run(block, &mut state, &mut |_, _| {}) };
        returns += 1;
        if out.tier_up {
            assert_eq!(out.chain, None);
            tier_ups.push((state.rip, state.gpr[0]));
            let text = if state.rip == 0x1000 { A } else { B };
            jit.compile(&region(text), CompileOptions::default(), true).expect("compiles");
            assert_eq!(jit.lookup_with(state.rip, quick), None, "the superblock replaced the quick block");
            continue;
        }
        if let Some(stub) = out.chain {
            if let Some(target) = jit.lookup(state.rip) {
                jit.link(stub, target);
            }
        }
        assert!(returns < 1000, "runaway dispatch");
    }
    // A and B each ran five times (four of them chained) before their
    // sixth entry left, nothing of it run: A after rax reached 5, B once
    // A's superblock had run once more.
    assert_eq!(tier_ups, vec![(0x1000, 5), (0x2000, 6)]);
    assert_eq!((state.gpr[0], state.gpr[1]), (100, 0));
    // The quick blocks' first exits, the two tier-ups, the superblocks'
    // first exits (their links to the other are new), the way out.
    assert!(returns <= 8, "{returns} returns");
}
