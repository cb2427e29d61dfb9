//! The executors' interface: the machine around guest state they run on
//! (guest memory and runtime helpers: [`Machine`]) and what every executor
//! returns ([`RegionExit`]). The interpreter and verify mode are generic
//! over the machine, so verify can journal stores and the oracle tests can
//! run on a test buffer.

use aarchx_ir::cond::Helper;
use aarchx_ir::{ExitKind, GuestState, TrapKind, Type};

/// How a region was left: the contract of the interpreter, the JIT and
/// [`crate::engine::Engine::execute`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionExit {
    /// Left through `exit`/`exit_indirect`; state.rip already holds the target.
    Jump { kind: ExitKind },
    /// A `trap`: state.rip holds the faulting instruction's address.
    Trap { kind: TrapKind },
    /// A guest memory access faulted. From the interpreter, and from the
    /// engine while the guest handles memory faults, the state is the one
    /// before the faulting instruction (rip is its address); straight from
    /// JIT code it is not exact (the engine then replays the region).
    Fault { fault: GuestFault },
}

/// A synchronous fault of a guest memory access: the host signal
/// (SIGSEGV or SIGBUS, the same numbers on x86-64 and arm64), its
/// `si_code` and the faulting address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuestFault {
    pub sig: i32,
    pub code: i32,
    pub addr: u64,
}

/// Guest memory and runtime services, as an executor needs them.
pub trait Machine {
    /// Loads a value of `ty` (its raw bits, zero-extended) from guest address `addr`.
    fn load(&mut self, addr: u64, ty: Type) -> u128;
    /// Stores the low bits of `bits` as a `ty` at guest address `addr`.
    fn store(&mut self, addr: u64, ty: Type, bits: u128);
    /// Replaces the `ty` at guest address `addr` with `new` if it holds
    /// `expected`; returns what it held. Guest memory makes this one
    /// atomic operation, so other threads' accesses cannot come between
    /// the load and the store; a machine no other thread sees may load and
    /// store, as this default does.
    fn cas(&mut self, addr: u64, ty: Type, expected: u128, new: u128) -> u128 {
        let old = self.load(addr, ty);
        if old == expected {
            self.store(addr, ty, new);
        }
        old
    }
    /// Runs a runtime helper on the guest state.
    fn helper(&mut self, helper: Helper, state: &mut GuestState);
}
