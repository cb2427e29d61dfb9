//! The host registers translated code pins, shared by the entry
//! trampoline (which loads them) and the lowering (which addresses
//! through them): x28 the guest state, x27 the [`super::context::JitContext`],
//! x26 the chain budget. x0-x17, x19-x25 and v0-v7, v16-v31 are for the
//! lowering (its fixed operands, temporaries and the register allocator's
//! pools, see `lower/alloc.rs`); x18 (the platform register) is never
//! touched.
//!
//! No guest register is pinned to a host register: the guest state
//! struct is the home of every guest register while translated code runs
//! (each IR `set` stores to it where it stands in the block; `rip` is
//! the exception, written only at exits and before helper calls), and
//! host registers hold only IR temporaries. Code that rebuilds the guest
//! state at a fault (signal delivery) reads the registers from the state
//! struct, never from the host signal context.

/// Register holding the `*mut GuestState` in translated code.
pub const STATE_REG: u8 = 28;
/// Register holding the `*mut JitContext` in translated code.
pub const CTX_REG: u8 = 27;
/// Register counting the chained transitions left.
pub const BUDGET_REG: u8 = 26;
