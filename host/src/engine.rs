//! The executors behind one interface: the IR interpreter everywhere, and
//! on aarch64 hosts the JIT, which falls back to the interpreter for any
//! region it declines and for every region while MXCSR is not the
//! default, and, in verify mode, checks itself against it.

#[cfg(target_arch = "aarch64")]
use std::collections::HashSet;

use aarchx_ir::{GuestState, Region};

use crate::interp::{self, RegionExit};
use crate::policy::{Backend, Policy};
use crate::syscall::Process;
#[cfg(target_arch = "aarch64")]
use crate::verify::Verifier;

/// MXCSR's control bits (masks, rounding, FTZ, DAZ), which translated
/// code runs under only when they are `GuestState::MXCSR_DEFAULT`'s.
#[cfg(target_arch = "aarch64")]
const MXCSR_CONTROL: u32 = 0xffc0;

/// How translated regions are executed.
pub enum Engine {
    Interp,
    #[cfg(target_arch = "aarch64")]
    Jit {
        jit: crate::jit::Jit,
        declined: HashSet<u64>,
        verifier: Option<Verifier>,
    },
}

/// Why the engine could not be set up or a check failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot set up the JIT: {0}")]
    Setup(String),
    #[error("{0}")]
    Mismatch(String),
}

impl Engine {
    /// The engine the policy asks for, as far as this host has it.
    pub fn new(policy: &Policy) -> Result<Engine, EngineError> {
        match policy.backend {
            Backend::Interp => Ok(Engine::Interp),
            #[cfg(target_arch = "aarch64")]
            Backend::Jit => Ok(Engine::Jit {
                jit: crate::jit::Jit::new().map_err(|e| EngineError::Setup(e.to_string()))?,
                declined: HashSet::new(),
                verifier: policy.verify.map(Verifier::new),
            }),
            #[cfg(not(target_arch = "aarch64"))]
            Backend::Jit => {
                tracing::info!("the arm64 JIT needs an aarch64 host; running the IR interpreter");
                Ok(Engine::Interp)
            }
        }
    }

    /// Runs `region` (translated for `state.rip`) once, or on the JIT, as far
    /// as chained blocks take it. While the guest handles SIGSEGV or
    /// SIGBUS, a JIT run is one region and, when it faults, leaves memory
    /// as it found it, so the dispatcher can replay it on the interpreter.
    pub fn execute(
        &mut self,
        region: &Region,
        state: &mut GuestState,
        process: &mut Process,
    ) -> Result<RegionExit, EngineError> {
        match self {
            Engine::Interp => Ok(interp::run_region(region, state, &mut process.mem)),
            // Translated code runs under the default MXCSR only (its float
            // ops round to nearest, never flush nor trap; see `Opcode::
            // uses_mxcsr`): MXCSR changes only at an `exit fenv` or in the
            // runtime (signal frames), both of which come back here.
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { .. } if state.mxcsr & MXCSR_CONTROL != GuestState::MXCSR_DEFAULT => {
                Ok(interp::run_region(region, state, &mut process.mem))
            }
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { jit, declined, verifier } => {
                if let Some(v) = verifier {
                    if let Some(exit) = v.maybe_check(jit, region, state, process)? {
                        return Ok(exit);
                    }
                }
                run_jit(jit, declined, region, state, process)
            }
        }
    }

    /// Guest code in `[start, start + len)` changed: drop its host code.
    #[cfg_attr(not(target_arch = "aarch64"), allow(unused_variables, reason = "only the JIT keeps host code"))]
    pub fn invalidate(&mut self, start: u64, len: u64) {
        match self {
            Engine::Interp => {}
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { jit, declined, verifier } => {
                jit.invalidate(start, len);
                declined.retain(|a| !(start..start.saturating_add(len)).contains(a));
                if let Some(v) = verifier {
                    v.invalidate(start, len);
                }
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

    /// The verify-mode summary line, if verify mode is on.
    pub fn summary(&self) -> Option<String> {
        match self {
            Engine::Interp => None,
            #[cfg(target_arch = "aarch64")]
            Engine::Jit { verifier, .. } => verifier.as_ref().map(Verifier::summary),
        }
    }
}

/// Whether `region` calls a runtime helper that may write guest memory
/// (the x87 unit's): such stores are not in the JIT's journal.
#[cfg(target_arch = "aarch64")]
fn helpers_store(region: &Region) -> bool {
    use aarchx_ir::cond::Helper;
    region.insts.iter().any(|d| {
        d.op == aarchx_ir::Opcode::Call && !matches!(Helper::from_u16(d.aux), Some(Helper::Cpuid | Helper::Rdtsc))
    })
}

#[cfg(target_arch = "aarch64")]
fn run_jit(
    jit: &mut crate::jit::Jit,
    declined: &mut HashSet<u64>,
    region: &Region,
    state: &mut GuestState,
    process: &mut Process,
) -> Result<RegionExit, EngineError> {
    use crate::jit::{CompileOptions, Decline};
    use crate::machine::Machine;

    let rip = state.rip;
    // While the guest handles memory faults, a faulting run is replayed on
    // the interpreter from the region's entry (see `run.rs`): its stores
    // are journaled so that they can be undone first, and a region whose
    // runtime helpers store (not journaled) is interpreted.
    let exact = process.catches_memory_faults();
    let options = CompileOptions { journal: exact };
    let block = match jit.lookup_with(rip, options) {
        Some(b) => b,
        None if declined.contains(&rip) || (exact && helpers_store(region)) => {
            return Ok(interp::run_region(region, state, &mut process.mem))
        }
        None => {
            // Whether a `probe_indirect` may leave for this block without
            // writing the flags (see `crate::jit::ibtc::FLAGS_DEAD_BIT`).
            let reads_flags = aarchx_passes::dead_flags::reads_status_flags(&process.mem, rip);
            let compiled = match jit.compile(region, options, reads_flags) {
                Err(Decline::CacheFull) => {
                    jit.reset();
                    jit.compile(region, options, reads_flags)
                }
                other => other,
            };
            match compiled {
                Ok(b) => b,
                Err(why) => {
                    tracing::debug!(rip = format_args!("{rip:#x}"), ?why, "JIT declined the region; interpreting it");
                    declined.insert(rip);
                    return Ok(interp::run_region(region, state, &mut process.mem));
                }
            }
        }
    };
    jit.note_entry(block);
    let mem = &mut process.mem;
    // SAFETY: the block was compiled from guest code of this process; every
    // address it touches is a guest address, identity-mapped, and no Rust
    // reference into guest memory is alive across the call.
    let out = unsafe { jit.run(block, state, &mut |h, s| mem.helper(h, s)) };
    if exact && matches!(out.exit, RegionExit::Fault { .. }) {
        // The faulting store's own entry may name memory that cannot be
        // written: `undo` skips it.
        crate::signal::probe::undo(jit.journal());
    }
    if let Some(stub) = out.chain {
        if let Some(target) = jit.lookup(state.rip) {
            jit.link(stub, target);
        }
    }
    Ok(out.exit)
}
