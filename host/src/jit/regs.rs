//! The host registers translated code pins, shared by the entry
//! trampoline (which loads them) and the lowering (which addresses
//! through them): x28 the guest state, x27 the [`super::context::JitContext`],
//! x26 the chain budget, the guest GPRs of [`PINNED`] and the guest XMM
//! registers (in v8-v15 and v24-v31, see [`pinned_v`]). x0-x17, x30, the
//! callee-saved registers not pinned and v0-v7, v16-v23 are for the
//! lowering (its fixed operands, temporaries and the register allocator's
//! pools, see `lower/alloc.rs`); x18 (the platform register) is never
//! touched. The stack convention between the two is here too:
//! [`SPILL_AREA`].
//!
//! The guest GPRs of [`PINNED`] and the XMM registers live in host
//! registers while translated code runs, across chained and cache-linked blocks alike: the
//! trampoline loads them from the state struct on entry and stores them
//! back on the way out to Rust, so whenever Rust looks at the state
//! struct (the dispatcher, system calls, signal delivery, verify mode)
//! it holds every register. A helper `call` writes back the pinned
//! registers its helper reads or writes and reloads the ones it writes.
//! AAPCS64 keeps only the low halves of v8-v15 and nothing of v24-v31
//! across a call, so every call from translated code into Rust saves and
//! restores the pinned V registers around it (`Lowerer::call_ctx`). The
//! other guest registers, the flags and `rip` live in the state struct, each
//! IR `set` storing to it where it stands (`rip` only at exits and before
//! helper calls). A fault in translated code leaves through the
//! trampoline's fault exit, which does not store the pinned registers:
//! the engine replays the region from the state it saved before the
//! run, or the process dies of the signal.

use aarchx_ir::Reg;
use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{dynasm, DynasmApi, VecAssembler};

/// Register holding the `*mut GuestState` in translated code.
pub const STATE_REG: u8 = 28;
/// Register holding the `*mut JitContext` in translated code.
pub const CTX_REG: u8 = 27;
/// Register counting the chained transitions left.
pub const BUDGET_REG: u8 = 26;

/// Guest GPRs kept in host registers (guest register, host register),
/// the most used first. All are callee-saved in AAPCS64, so calls into
/// Rust preserve them; x29 is free because translated code keeps no
/// frame chain (the trampoline saves and restores it).
pub const PINNED: [(Reg, u8); 8] = [
    (Reg::RSP, 19),
    (Reg::RAX, 20),
    (Reg::RDI, 21),
    (Reg::RSI, 22),
    (Reg::RDX, 23),
    (Reg::RCX, 24),
    (Reg::RBX, 25),
    (Reg::RBP, 29),
];

/// The host V register of each guest XMM register, xmm0 first: xmm0-xmm7
/// in v8-v15, xmm8-xmm15 in v24-v31 (runs of four consecutive registers,
/// so `ld1`/`st1` move them four at a time, see [`transfer_pinned_v`]).
pub const PINNED_V_HOSTS: [u8; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];

/// The host V register guest XMM register `reg` is pinned to.
pub fn pinned_v(reg: Reg) -> Option<u8> {
    reg.as_xmm().map(|n| PINNED_V_HOSTS[n])
}

/// The host register guest register `reg` is pinned to, if it is.
pub fn pinned(reg: Reg) -> Option<u8> {
    PINNED.iter().find(|(g, _)| *g == reg).map(|&(_, h)| h)
}

/// Whether host register `x` holds a pinned guest register.
pub fn is_pinned_host(x: u8) -> bool {
    PINNED.iter().any(|&(_, h)| h == x)
}

/// Bytes of stack the trampoline reserves below its saved registers for
/// the value slots of translated blocks: a block whose slots fit uses
/// them at `[sp, #off]` without moving sp, so entering a region (chained
/// or not) and leaving it cost nothing. A multiple of 16.
pub const SPILL_AREA: u32 = 2048;

/// Emits the transfer of every pinned V register between the host
/// registers and 256 bytes at `X(base)`, in XMM order (xmm0 first, as in
/// the state struct), four registers per `ld1`/`st1`; `base` is left past
/// them.
pub fn transfer_pinned_v(ops: &mut VecAssembler<Aarch64Relocation>, load: bool, base: u8) {
    for run in PINNED_V_HOSTS.chunks(4) {
        let first = run[0];
        if load {
            dynasm!(ops; .arch aarch64; ld1 {V(first).D2 * 4}, [X(base)], #64);
        } else {
            dynasm!(ops; .arch aarch64; st1 {V(first).D2 * 4}, [X(base)], #64);
        }
    }
}
