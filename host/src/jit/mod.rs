//! The arm64 backend: translates an IR [`Region`] into arm64 code in an
//! executable cache, runs it on a [`GuestState`], chains translated blocks
//! to each other, and journals guest stores for verify mode.
//!
//! # Using it
//!
//! ```text
//! let mut jit = Jit::new(NanRules::Checked)?;
//! loop {
//!     let block = match jit.lookup(state.rip) {
//!         Some(b) => b,
//!         None => match jit.compile(&region_at(state.rip), CompileOptions::default()) {
//!             Ok(b) => b,
//!             Err(decline) => { /* run the region in the interpreter */ continue }
//!         },
//!     };
//!     // SAFETY: guest memory is identity-mapped (see `Jit::run`).
//!     let out = unsafe { jit.run(block, &mut state, &mut |h, s| machine.helper(h, s)) };
//!     if let Some(stub) = out.chain {
//!         // The block left through a direct jump/call exit that may be
//!         // chained: once the target is compiled, link the two.
//!         if let Some(target) = jit.lookup(state.rip) { jit.link(stub, target); }
//!     }
//!     match out.exit { RegionExit::Jump { kind } => ..., RegionExit::Trap { kind } => ... }
//! }
//! ```
//!
//! `compile` returns a [`Decline`] naming the instruction it cannot lower;
//! the dispatcher then runs that region in the IR interpreter, so
//! correctness never depends on the backend's coverage. Code memory is a
//! bump allocator: [`Jit::reset`] drops every translation when
//! [`Decline::CacheFull`] comes back.
//!
//! # How translated code runs
//!
//! - [`entry`]: one trampoline, generated once at the start of the cache,
//!   saves the callee-saved registers (x19-x30, d8-d15), pins the guest
//!   state pointer in x28 and the [`context::JitContext`] in x27, loads the
//!   chain budget into x26 and branches to the block. Every block leaves
//!   through the trampoline's exit sequence with an exit code in x0
//!   ([`exit`] encodes it: exit or trap, its kind, the chainable stub).
//! - [`lower`]: the translation proper. Every IR value lives in a 16-byte
//!   stack slot of the block's frame; each op loads its operands into
//!   scratch registers, computes, and stores its result. Integers narrower
//!   than 64 bits are kept zero-extended, i1 as 0 or 1, exactly as the
//!   interpreter keeps them. Floats follow the x86 rules (NaN selection,
//!   `minss`/`maxss` order, integer indefinite) with slow paths in
//!   [`runtime`].
//! - [`chain`]: a direct `exit jump/call` is a patchable stub. The first
//!   time it runs it returns to Rust with its stub index; [`Jit::link`]
//!   then rewrites one aligned `b` in place to jump straight into the
//!   target block. Each block keeps the list of stubs linked into it so
//!   [`Jit::invalidate`] can unlink them. Every backward chained
//!   transition (and every indirect one) decrements a budget (x26); at
//!   zero the block returns to Rust, so a hot loop of chained blocks
//!   cannot starve pending work (signals, other threads' requests)
//!   forever (see [`chain`] for why backward ones suffice).
//! - [`run_counts`]: a quick translation (tiering) that other blocks may
//!   branch to counts its own runs in a word of its own and leaves with
//!   the tier-up exit when they are used up; compiling the region's
//!   superblock drops it, and the branches into it are linked again, to
//!   the superblock.
//! - [`journal`]: with [`CompileOptions::journal`], every guest store first
//!   records (address, size, old bytes), so verify mode can roll memory
//!   back after running the translated code and run the interpreter from
//!   the same state, and a fault can be replayed from the region's entry
//!   while the guest handles SIGSEGV or SIGBUS. Journaled blocks are never
//!   chained, so one run is one region.
//!
//! Architecture invariant: `unsafe` is confined to [`cache`] (the mapping,
//! copying code in, cache maintenance, patching), [`entry`] (calling into
//! generated code), [`runtime`] (the C-ABI helpers generated code calls)
//! and [`journal`] (rolling guest memory back); [`Jit::run`] and
//! [`Jit::rollback`] are `unsafe fn`s that forward the guest-memory
//! contract to the dispatcher. Generated code never runs off a block: a
//! region that is not well formed is declined ([`Decline::Malformed`]).
//!
//! Portability: [`lower`] and the contracts it shares with the runtime
//! ([`regs`], [`context`], [`exit`], [`journal`], [`runtime`]) build on
//! every host, so the codegen-count fixtures (`host/tests/codegen/`, see
//! `docs/codegen.md`) run on x86-64: dynasmrt's `VecAssembler` is
//! portable, and helpers are reached through x27 plus an offset, so the
//! bytes do not depend on where the helpers are. What executes or
//! patches code ([`Jit`], [`cache`], [`entry`], [`chain`], [`run_counts`]) is aarch64
//! only.
//!
//! What is deliberately absent, for later issues: an exact guest state at a faulting access (a fault in translated code
//! leaves the run through the trampoline's exit with a fault code, and the
//! engine replays the region on the interpreter: see
//! `docs/signals.md`); a budget check on a region's
//! internal back edges (only block-to-block chaining is bounded); true
//! atomicity of a misaligned locked access (done as a fenced plain
//! read-modify-write, see `lower/mem.rs`); and sharing one cache between
//! threads (a `Jit` holds raw pointers and is not `Send`: one per thread
//! until the threads work brings a patching protocol).

#[cfg(target_arch = "aarch64")]
mod backend;
#[cfg(target_arch = "aarch64")]
pub mod cache;
#[cfg(target_arch = "aarch64")]
pub mod chain;
#[cfg(target_arch = "aarch64")]
mod code_memory;
pub mod context;
#[cfg(target_arch = "aarch64")]
pub mod entry;
pub mod exit;
pub mod host;
pub mod ibtc;
pub mod journal;
pub mod leaf;
pub mod lower;
#[cfg(target_arch = "aarch64")]
pub mod perf_map;
pub mod regs;
#[cfg(target_arch = "aarch64")]
pub mod run_counts;
pub mod runtime;

#[cfg(all(test, target_arch = "aarch64"))]
mod tests;

#[cfg(target_arch = "aarch64")]
pub use backend::{BlockId, Jit, JitError, CACHE_SIZE, DEFAULT_CHAIN_BUDGET};
pub use exit::{JitExit, StubId};
pub use host::crypto_extension;
pub use journal::JournalEntry;
pub use lower::{Decline, NanRules};

use crate::translate::Shape;

/// How a region is compiled. Blocks are registered for lookup under
/// their guest address and their options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// Record every guest store in the journal before it happens (verify
    /// mode, and while the guest handles memory faults). Such a block is
    /// never chained.
    pub journal: bool,
    /// Entered only from the dispatcher: never linked to, never in the
    /// indirect branch target cache (a region on a self-checking code
    /// page compares its bytes before each run, see `crate::code_pages`).
    pub dispatched: bool,
    /// The region's shape: a quick translation and the superblock that
    /// replaces it are two blocks at one address.
    pub shape: Shape,
}

impl CompileOptions {
    /// Whether other blocks may branch to a block compiled so.
    pub fn linkable(self) -> bool {
        !self.journal && !self.dispatched
    }
}
