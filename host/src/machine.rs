//! The executors' view of the machine around guest state: guest memory and
//! runtime helpers. The interpreter and verify mode are generic over it, so
//! verify can journal stores and the oracle tests can run on a test buffer.

use aarchx_ir::cond::Helper;
use aarchx_ir::{GuestState, Type};

/// Guest memory and runtime services, as an executor needs them.
pub trait Machine {
    /// Loads a value of `ty` (its raw bits, zero-extended) from guest address `addr`.
    fn load(&mut self, addr: u64, ty: Type) -> u128;
    /// Stores the low bits of `bits` as a `ty` at guest address `addr`.
    fn store(&mut self, addr: u64, ty: Type, bits: u128);
    /// Runs a runtime helper on the guest state.
    fn helper(&mut self, helper: Helper, state: &mut GuestState);
}
