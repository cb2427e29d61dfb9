//! Exit codes: how translated code tells the dispatcher why it stopped.
//! A block leaves through the trampoline's exit sequence with a `u64` in
//! x0: bits 0-7 a tag (exit or trap), bits 8-23 the [`ExitKind`] or
//! [`TrapKind`], bits 32-63 the chainable stub's index plus one (zero for
//! none). `state.rip` has already been written, except after a fault: a
//! guest memory access that faults in translated code comes back through
//! the exit sequence with the fault code, put in x0 by the host fault
//! handler (`crate::signals`, which records the fault in the thread's
//! context), and the state is then not exact.

use aarchx_ir::{ExitKind, TrapKind};

use crate::machine::RegionExit;

/// A chainable exit stub: a global index, reported in [`super::JitExit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StubId(pub u32);

const TAG_EXIT: u64 = 0;
const TAG_TRAP: u64 = 1;
const TAG_FAULT: u64 = 2;

/// The code of an `exit`/`exit_indirect` of `kind`, through `stub` if chainable.
pub fn exit_code(kind: ExitKind, stub: Option<StubId>) -> u64 {
    TAG_EXIT | (kind as u64) << 8 | stub.map_or(0, |s| u64::from(s.0) + 1) << 32
}

/// The code of a `trap` of `kind`.
pub fn trap_code(kind: TrapKind) -> u64 {
    TAG_TRAP | (kind as u64) << 8
}

/// The code the fault handler leaves with.
pub fn fault_code() -> u64 {
    TAG_FAULT
}

/// Splits an exit code into the region exit and the chainable stub.
///
/// # Panics
///
/// On a code translated code cannot produce.
pub fn decode(code: u64) -> (RegionExit, Option<StubId>) {
    let kind = ((code >> 8) & 0xffff) as u16;
    let stub = (code >> 32).checked_sub(1).map(|s| StubId(s as u32));
    let exit = match code & 0xff {
        TAG_EXIT => RegionExit::Jump { kind: ExitKind::from_u16(kind).expect("valid exit kind") },
        TAG_TRAP => RegionExit::Trap { kind: TrapKind::from_u16(kind).expect("valid trap kind") },
        TAG_FAULT => RegionExit::Fault {
            fault: crate::thread::current().take_fault().expect("a fault exit comes with a recorded fault"),
        },
        tag => panic!("bad exit tag {tag} in {code:#x}"),
    };
    (exit, stub)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for kind in ExitKind::ALL {
            for stub in [None, Some(StubId(0)), Some(StubId(u32::MAX - 1))] {
                assert_eq!(decode(exit_code(*kind, stub)), (RegionExit::Jump { kind: *kind }, stub));
            }
        }
        for kind in TrapKind::ALL {
            assert_eq!(decode(trap_code(*kind)), (RegionExit::Trap { kind: *kind }, None));
        }
    }
}
