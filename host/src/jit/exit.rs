//! Exit codes: how translated code tells the dispatcher why it stopped.
//! A block leaves through the trampoline's exit sequence with a `u64` in
//! x0: bits 0-7 a tag (exit, trap, fault or tier-up), bits 8-23 the
//! [`ExitKind`] or [`TrapKind`], bits 32-63 the chainable stub's index
//! plus one (zero for none). The tier-up exit leaves a quick block that
//! has counted its runs (see [`super::run_counts`]) before anything of
//! it ran: `state.rip` is its entry, as after a jump there. `state.rip`
//! has already been written, except after a fault: a
//! guest memory access that faults in translated code comes back through
//! the exit sequence with the fault code, put in x0 by the host fault
//! handler (`crate::signals`, which records the fault in the thread's
//! context), and the state is then not exact.

use aarchx_ir::{ExitKind, TrapKind};

use crate::machine::RegionExit;

/// A chainable exit stub: a global index, reported in [`JitExit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StubId(pub u32);

/// What a run of translated code ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitExit {
    /// The region exit, as the interpreter reports it; `state.rip` holds
    /// the target or the faulting instruction.
    pub exit: RegionExit,
    /// Set when the run left through a direct `exit jump` or `exit call`
    /// that can be chained to its target with `Jit::link`. Also set
    /// (for an already linked stub) when the chain budget ran out.
    pub chain: Option<StubId>,
    /// The run reached a quick block whose runs are counted and left at
    /// its entry (`exit` is then a jump there): the region's superblock
    /// is due.
    pub tier_up: bool,
}

const TAG_EXIT: u64 = 0;
const TAG_TRAP: u64 = 1;
const TAG_FAULT: u64 = 2;
const TAG_TIER_UP: u64 = 3;

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

/// The code of a quick block's tier-up exit.
pub fn tier_up_code() -> u64 {
    TAG_TIER_UP
}

/// Splits an exit code into the region exit, the chainable stub and
/// whether it is the tier-up exit.
///
/// # Panics
///
/// On a code translated code cannot produce.
pub fn decode(code: u64) -> JitExit {
    let kind = ((code >> 8) & 0xffff) as u16;
    let chain = (code >> 32).checked_sub(1).map(|s| StubId(s as u32));
    let tier_up = code & 0xff == TAG_TIER_UP;
    let exit = match code & 0xff {
        TAG_EXIT => RegionExit::Jump { kind: ExitKind::from_u16(kind).expect("valid exit kind") },
        TAG_TIER_UP => RegionExit::Jump { kind: ExitKind::Jump },
        TAG_TRAP => RegionExit::Trap { kind: TrapKind::from_u16(kind).expect("valid trap kind") },
        TAG_FAULT => RegionExit::Fault {
            fault: crate::thread::current().take_fault().expect("a fault exit comes with a recorded fault"),
        },
        tag => panic!("bad exit tag {tag} in {code:#x}"),
    };
    JitExit { exit, chain, tier_up }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for kind in ExitKind::ALL {
            for stub in [None, Some(StubId(0)), Some(StubId(u32::MAX - 1))] {
                let exit = RegionExit::Jump { kind: *kind };
                assert_eq!(decode(exit_code(*kind, stub)), JitExit { exit, chain: stub, tier_up: false });
            }
        }
        for kind in TrapKind::ALL {
            let exit = RegionExit::Trap { kind: *kind };
            assert_eq!(decode(trap_code(*kind)), JitExit { exit, chain: None, tier_up: false });
        }
        let exit = RegionExit::Jump { kind: ExitKind::Jump };
        assert_eq!(decode(tier_up_code()), JitExit { exit, chain: None, tier_up: true });
    }
}
