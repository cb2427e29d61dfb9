//! The executors behind one interface: the IR interpreter everywhere, and
//! on aarch64 hosts the JIT, which falls back to the interpreter for any
//! region it declines and for every region while MXCSR asks for what
//! arm64 cannot do exactly (see [`jit_runs_under`]), and runs a region
//! journaled for verify mode.

#[cfg(target_arch = "aarch64")]
use rustc_hash::FxHashSet;

use aarchx_ir::{GuestState, Region};

use crate::interp;
use crate::jit::NanRules;
use crate::machine::RegionExit;
use crate::mem::GuestAccess;
use crate::policy::{AfpSetting, Backend};
use crate::syscall::Process;
use crate::translate::Shape;
use crate::verify::Run;

/// Whether translated code runs under `mxcsr`: every exception masked
/// (an unmasked one traps exactly on the interpreter, see `run.rs`), any
/// rounding mode, and FTZ and DAZ both clear or both set. The entry
/// trampoline sets FPCR's rounding mode and FZ from it (`jit::entry`);
/// arm64's FZ flushes operands and results together, so FTZ alone or DAZ
/// alone stays on the interpreter.
pub fn jit_runs_under(mxcsr: u32) -> bool {
    const MASKS: u32 = 0x1f80;
    const DAZ: u32 = 1 << 6;
    const FTZ: u32 = 1 << 15;
    mxcsr & MASKS == MASKS && (mxcsr & DAZ == 0) == (mxcsr & FTZ == 0)
}

/// How many region executions each executor took while MXCSR's control
/// bits were not the default, for the stats line: what shows that
/// `-Ofast` and `fesetround` programs run translated code.
#[derive(Clone, Copy, Debug, Default)]
pub struct FenvRuns {
    /// Entries into translated code (a chained run counts once).
    pub jit: u64,
    /// Regions the interpreter ran.
    pub interp: u64,
}

impl FenvRuns {
    #[cfg(target_arch = "aarch64")]
    fn note(&mut self, mxcsr: u32, on_jit: bool) {
        if mxcsr & !GuestState::MXCSR_FLAGS != GuestState::MXCSR_DEFAULT {
            if on_jit {
                self.jit += 1;
            } else {
                self.interp += 1;
            }
        }
    }
}

/// What a run through [`Engine::execute`] ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Executed {
    pub exit: RegionExit,
    /// The run reached a quick translation's block that has used up its
    /// runs (see `crate::jit::run_counts`) and left at its entry, which
    /// `state.rip` holds: the dispatcher translates the superblock next.
    pub tier_up: bool,
}

impl From<RegionExit> for Executed {
    fn from(exit: RegionExit) -> Executed {
        Executed { exit, tier_up: false }
    }
}

/// How translated regions are executed.
pub enum Engine {
    Interp,
    #[cfg(target_arch = "aarch64")]
    Jit {
        jit: crate::jit::Jit,
        declined: FxHashSet<u64>,
        lowering: LoweringTimes,
        fenv: FenvRuns,
    },
}

/// Time spent lowering regions to arm64 (the stats line's `ns.jit-*`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LoweringTimes {
    /// All of it: the two below and the rest (the code's emission).
    pub total: std::time::Duration,
    /// Asking whether each region's entry reads the status flags.
    pub entry_flags: std::time::Duration,
    /// The value analysis and register allocation (`jit::lower::alloc`).
    pub allocation: std::time::Duration,
}

/// Why the engine could not be set up or a check failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot set up the JIT: {0}")]
    Setup(String),
    #[error("{0}")]
    Mismatch(String),
}

/// How the JIT's float code gets x86's NaN results under the policy's
/// `afp` on this host (logged; `afp: On` on a host that does not report
/// FEAT_AFP gets a warning, since NaN results are then arm64's). Decided
/// once per process: every thread's JIT uses the answer.
pub fn nan_rules(afp: AfpSetting) -> NanRules {
    let host = crate::jit::host::afp();
    let rules = if afp.enabled(host) { NanRules::Afp } else { NanRules::Checked };
    if rules == NanRules::Afp && !host {
        eprintln!(
            "aarchx: warning: afp: On, but this host does not report FEAT_AFP: float code runs without NaN checks and NaN results may differ from x86's"
        );
    }
    tracing::debug!(host_has_afp = host, policy = ?afp, ?rules, "float NaN rules");
    rules
}

impl Engine {
    /// The engine the policy asks for, as far as this host has it; a JIT
    /// lowers float code under `nan_rules` (see [`nan_rules`]) and gives
    /// quick blocks `tier_up` runs before their superblock.
    pub fn new(backend: Backend, nan_rules: NanRules, tier_up: u32) -> Result<Engine, EngineError> {
        match backend {
            Backend::Interp => Ok(Engine::Interp),
            #[cfg(target_arch = "aarch64")]
            Backend::Jit => {
                let mut jit = crate::jit::Jit::new(nan_rules).map_err(|e| EngineError::Setup(e.to_string()))?;
                jit.set_tier_up(tier_up);
                Ok(Engine::Jit {
                    jit,
                    declined: FxHashSet::default(),
                    lowering: LoweringTimes::default(),
                    fenv: FenvRuns::default(),
                })
            }
            #[cfg(not(target_arch = "aarch64"))]
            Backend::Jit => {
                let _ = (nan_rules, tier_up);
                tracing::info!("the arm64 JIT needs an aarch64 host; running the IR interpreter");
                Ok(Engine::Interp)
            }
        }
    }

    /// Runs `region` (translated for `state.rip`) once, or on the JIT, as far
    /// as chained blocks take it: the one place a region is run for the
    /// dispatcher. While the guest handles SIGSEGV or SIGBUS, the exit is
    /// exact: a JIT run is then one region, journaled, and when it faults
    /// its stores are undone and the interpreter replays the region from
    /// its entry, stopping at the faulting instruction with the state
    /// before it. A `dispatched` region (self-checking, see
    /// `crate::code_pages`, or a quick translation whose runs the
    /// dispatcher counts, see [`Shape`]) is entered only from here: no
    /// other block's code chains to it. `shape` is the region's.
    #[cfg_attr(not(target_arch = "aarch64"), allow(unused_variables, reason = "only the JIT asks the process"))]
    pub fn execute(
        &mut self,
        region: &Region,
        shape: Shape,
        dispatched: bool,
        state: &mut GuestState,
        process: &mut Process,
    ) -> Executed {
        match self {
            Engine::Interp => interp::run_region(region, state, &mut GuestAccess).into(),
            // MXCSR changes only at an `exit fenv` or in the runtime (signal
            // frames), both of which come back here before translated code
            // runs again, through the trampoline that sets FPCR from it.
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { fenv, .. } if !jit_runs_under(state.mxcsr) => {
                fenv.note(state.mxcsr, false);
                interp::run_region(region, state, &mut GuestAccess).into()
            }
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { jit, declined, lowering, fenv } => {
                let mxcsr = state.mxcsr;
                let (exit, on_jit) = run_jit(jit, declined, lowering, region, shape, dispatched, state, process);
                fenv.note(mxcsr, on_jit);
                exit
            }
        }
    }

    /// Guest code in `[start, start + len)` changed: drop its host code.
    #[cfg_attr(not(target_arch = "aarch64"), allow(unused_variables, reason = "only the JIT keeps host code"))]
    pub fn invalidate(&mut self, start: u64, len: u64) {
        match self {
            Engine::Interp => {}
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { jit, declined, .. } => {
                jit.invalidate(start, len);
                declined.retain(|a| !(start..start.saturating_add(len)).contains(a));
            }
        }
    }

    /// Bytes of arm64 code generated since the JIT's cache was last reset,
    /// when the JIT runs.
    pub fn code_bytes(&self) -> Option<usize> {
        match self {
            Engine::Interp => None,
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { jit, .. } => Some(jit.code_bytes()),
        }
    }

    /// Region executions under a non-default MXCSR, when the JIT runs.
    pub fn fenv_runs(&self) -> Option<FenvRuns> {
        match self {
            Engine::Interp => None,
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { fenv, .. } => Some(*fenv),
        }
    }

    /// Time spent lowering regions to arm64, when the JIT runs.
    pub fn lowering_times(&self) -> Option<LoweringTimes> {
        match self {
            Engine::Interp => None,
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { lowering, .. } => Some(*lowering),
        }
    }

    /// Runs `region` from `start` on the JIT with its stores journaled,
    /// then undoes them: what verify mode compares with the interpreter.
    #[cfg_attr(not(target_arch = "aarch64"), allow(unused_variables, reason = "only the JIT runs journaled"))]
    pub fn run_journaled(&mut self, region: &Region, shape: Shape, start: &GuestState) -> Journaled {
        match self {
            Engine::Interp => Journaled::NotRun,
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { jit, .. } => run_journaled(jit, region, shape, start),
        }
    }
}

/// What [`Engine::run_journaled`] did.
pub enum Journaled {
    /// The JIT ran the region: its result, memory already rolled back.
    Ran(Run),
    /// The run faulted: its state is not exact, its stores are undone, and
    /// its instrumentation counted the instructions up to the fault.
    Faulted,
    /// No JIT, the JIT declined the region, or MXCSR keeps translated code
    /// off (see [`jit_runs_under`]).
    NotRun,
}

#[cfg(target_arch = "aarch64")]
fn run_journaled(jit: &mut crate::jit::Jit, region: &Region, shape: Shape, start: &GuestState) -> Journaled {
    use crate::jit::CompileOptions;
    use crate::machine::Machine;
    use aarchx_ir::Type;

    if !jit_runs_under(start.mxcsr) {
        // As in `Engine::execute`.
        return Journaled::NotRun;
    }
    let journaled = CompileOptions { journal: true, dispatched: false, shape };
    let block = match jit.lookup_with(region.entry, journaled) {
        Some(b) => b,
        None => match jit.compile(region, journaled, true) {
            Ok(b) => b,
            Err(_) => return Journaled::NotRun,
        },
    };
    let mut state = *start;
    // SAFETY: as for any JIT run (see `run_jit`): guest addresses are
    // identity-mapped and no Rust reference into guest memory is alive.
    let out = unsafe { jit.run(block, &mut state, &mut |h, s| GuestAccess.helper(h, s)) };
    if matches!(out.exit, RegionExit::Fault { .. }) {
        // The faulting store's own entry may name memory that cannot be
        // written back: `undo` skips it.
        crate::jit::journal::undo(jit.journal());
        return Journaled::Faulted;
    }
    let mut stored = crate::verify::Stored::new();
    for e in jit.journal() {
        for i in 0..e.size.min(16) {
            stored.entry(e.addr.wrapping_add(i)).or_insert((e.old[i as usize], 0));
        }
    }
    for (addr, (_, new)) in stored.iter_mut() {
        *new = GuestAccess.load(*addr, Type::I8) as u8;
    }
    // SAFETY: rolls back exactly the stores the journaled run made, to
    // memory that was writable for them.
    unsafe { jit.rollback() };
    Journaled::Ran(Run { state, exit: out.exit, stored })
}

/// Whether `region` calls a runtime helper that may write guest memory
/// (the x87 unit's, memset's): such stores are not in the JIT's journal.
#[cfg(target_arch = "aarch64")]
fn helpers_store(region: &Region) -> bool {
    use aarchx_ir::cond::Helper;
    region.insts.iter().any(|d| d.op == aarchx_ir::Opcode::Call && Helper::from_u16(d.aux).is_none_or(Helper::stores))
}

/// Runs `region` on the JIT, or on the interpreter when the JIT declines
/// it: how it ended, and whether translated code ran.
#[cfg(target_arch = "aarch64")]
fn run_jit(
    jit: &mut crate::jit::Jit,
    declined: &mut FxHashSet<u64>,
    lowering: &mut LoweringTimes,
    region: &Region,
    shape: Shape,
    dispatched: bool,
    state: &mut GuestState,
    process: &mut Process,
) -> (Executed, bool) {
    use crate::jit::{CompileOptions, Decline};
    use crate::machine::Machine;

    let rip = state.rip;
    // While the guest handles memory faults, a faulting run is replayed
    // on the interpreter from the region's entry (below): its stores are
    // journaled so that they can be undone first, and a region whose
    // runtime helpers store (not journaled) is interpreted.
    let exact = process.catches_memory_faults();
    let options = CompileOptions { journal: exact, dispatched, shape };
    let block = match jit.lookup_with(rip, options) {
        Some(b) => b,
        None if declined.contains(&rip) || (exact && helpers_store(region)) => {
            return (interp::run_region(region, state, &mut GuestAccess).into(), false)
        }
        None => {
            // Whether a `probe_indirect` may leave for this block without
            // writing the flags (see `crate::jit::ibtc::FLAGS_DEAD_BIT`).
            let started = std::time::Instant::now();
            let reads_flags = aarchx_passes::dead_flags::reads_status_flags(region);
            lowering.entry_flags += started.elapsed();
            let mut compile = |jit: &mut crate::jit::Jit| {
                let compiled = jit.compile(region, options, reads_flags);
                lowering.allocation += jit.last_allocation_time();
                compiled
            };
            let compiled = match compile(jit) {
                Err(Decline::CacheFull) => {
                    jit.reset();
                    compile(jit)
                }
                other => other,
            };
            lowering.total += started.elapsed();
            match compiled {
                Ok(b) => b,
                Err(why) => {
                    tracing::debug!(rip = format_args!("{rip:#x}"), ?why, "JIT declined the region; interpreting it");
                    crate::bounds::make_room(declined);
                    declined.insert(rip);
                    return (interp::run_region(region, state, &mut GuestAccess).into(), false);
                }
            }
        }
    };
    jit.note_entry(block);
    let entry = exact.then_some(*state);
    // SAFETY: the block was compiled from guest code of this process; every
    // address it touches is a guest address, identity-mapped, and no Rust
    // reference into guest memory is alive across the call.
    let out = unsafe { jit.run(block, state, &mut |h, s| GuestAccess.helper(h, s)) };
    if let (RegionExit::Fault { .. }, Some(entry)) = (out.exit, entry) {
        // Not exact from the JIT: its stores are undone (the faulting
        // store's own entry may name memory that cannot be written:
        // `undo` skips it) and the interpreter replays the region from
        // its entry and stops at the fault; the JIT counted that part
        // already (instrumentation).
        crate::jit::journal::undo(jit.journal());
        *state = entry;
        return (crate::counters::muted(|| interp::run_region(region, state, &mut GuestAccess)).into(), true);
    }
    if let Some(stub) = out.chain {
        if let Some(target) = jit.lookup(state.rip) {
            jit.link(stub, target);
        }
    }
    (Executed { exit: out.exit, tier_up: out.tier_up }, true)
}
