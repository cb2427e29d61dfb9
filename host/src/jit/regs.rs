//! The host registers translated code pins, shared by the entry
//! trampoline (which loads them) and the lowering (which addresses
//! through them): x28 the guest state, x27 the [`super::context::JitContext`],
//! x26 the chain budget. x0-x17 and v0-v7, v16-v31 are scratch; x18 (the
//! platform register) is never touched.

/// Register holding the `*mut GuestState` in translated code.
pub const STATE_REG: u8 = 28;
/// Register holding the `*mut JitContext` in translated code.
pub const CTX_REG: u8 = 27;
/// Register counting the chained transitions left.
pub const BUDGET_REG: u8 = 26;
