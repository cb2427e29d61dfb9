//! The [`Jit`]: the code cache, the entry trampoline, the table of
//! compiled blocks and the links between them. Only on aarch64 hosts,
//! since it runs the code it compiles; the lowering it drives
//! ([`super::lower`]) builds everywhere.

use std::sync::atomic::Ordering;

use rustc_hash::FxHashMap;

use aarchx_ir::cond::Helper;
use aarchx_ir::{GuestState, Region};

use super::cache::CodeCache;
use super::chain::StubTable;
use super::context::JitContext;
use super::entry::Trampoline;
use super::exit::{self, JitExit, StubId};
use super::ibtc::{Ibtc, NO_ENTRIES};
use super::journal::{self, JournalEntry};
use super::leaf::LeafRoutines;
use super::lower::{self, Decline, NanRules};
use super::perf_map::PerfMap;
use super::run_counts::RunCounts;
use super::CompileOptions;
use crate::thread::{register_cut, CutRegistration, Fixup};
use crate::translate::Shape;

/// Size of the code cache mapping. Every branch inside it (block to
/// block, block to trampoline) is within the ±128 MiB reach of `b`.
pub const CACHE_SIZE: usize = 64 << 20;

/// How many chained block-to-block transitions a run may take before it
/// returns to Rust (see [`Jit::set_chain_budget`]).
pub const DEFAULT_CHAIN_BUDGET: u64 = 1 << 16;

/// Why the JIT could not start.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    #[error("cannot map the code cache: {0}")]
    Map(#[source] std::io::Error),
    #[error("cannot assemble the entry trampoline: {0}")]
    Trampoline(String),
    #[error("too many threads: every JIT context slot for code changes is taken")]
    Threads,
}

/// A compiled block: an index into the JIT's block table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockId(pub u32);

/// A live compiled block.
#[derive(Debug)]
struct BlockInfo {
    /// Guest address of the region's entry.
    guest: u64,
    /// Host address of its code.
    code: usize,
    /// Guest byte ranges `[start, end)` its instructions came from.
    ranges: Vec<(u64, u64)>,
    /// Its exit stubs (global indices).
    stubs: std::ops::Range<u32>,
    /// Stubs of other blocks linked into this one.
    incoming: Vec<StubId>,
    options: CompileOptions,
}

/// The arm64 backend: code cache, trampoline, compiled blocks and links.
pub struct Jit {
    cache: CodeCache,
    trampoline: Trampoline,
    leaf: LeafRoutines,
    /// Where the cache's first block goes (after the trampoline and the
    /// leaf routines); `reset`
    /// rewinds to it.
    blocks_start: usize,
    blocks: Vec<Option<BlockInfo>>,
    by_addr: FxHashMap<(u64, CompileOptions), BlockId>,
    pub(super) stubs: StubTable,
    /// Lets other threads empty `ctx.ibtc` when they make code writable;
    /// dropped before `ctx`.
    cut: CutRegistration,
    ctx: Box<JitContext>,
    ibtc: Ibtc,
    chain_budget: u64,
    /// Every bare acquire/release access in the cache, in address order
    /// (code is placed in increasing order), for the SIGBUS handler (see
    /// `lower/mem.rs`).
    fixups: Vec<Fixup>,
    /// `AARCHX_PERF_MAP`'s file, if asked for.
    perf_map: Option<PerfMap>,
    /// How its float code gets x86's NaNs (the trampoline's FPCR too).
    nan_rules: NanRules,
    /// The run counters of its quick blocks, and how many runs each
    /// starts with (see [`super::run_counts`]).
    counts: RunCounts,
    tier_up: u32,
    /// Time the last [`Jit::compile`] spent on value analysis and register
    /// allocation.
    last_allocation: std::time::Duration,
}

impl Jit {
    /// Maps the code cache and generates the entry trampoline, for float
    /// code under `nan_rules`.
    pub fn new(nan_rules: NanRules) -> Result<Jit, JitError> {
        let mut cache = CodeCache::new(CACHE_SIZE).map_err(JitError::Map)?;
        let trampoline = Trampoline::generate(&mut cache, nan_rules).map_err(JitError::Trampoline)?;
        let leaf = LeafRoutines::generate(&mut cache).map_err(JitError::Trampoline)?;
        let blocks_start = cache.next_addr();
        let ctx = Box::new(JitContext::new());
        let mut ibtc = Ibtc::new();
        ctx.ibtc.store(ibtc.as_mut_ptr() as usize, Ordering::SeqCst);
        let cut = register_cut(&ctx.ibtc, NO_ENTRIES.as_ptr() as usize).ok_or(JitError::Threads)?;
        Ok(Jit {
            cache,
            trampoline,
            leaf,
            blocks_start,
            blocks: Vec::new(),
            by_addr: FxHashMap::default(),
            stubs: StubTable::default(),
            cut,
            ctx,
            ibtc,
            chain_budget: DEFAULT_CHAIN_BUDGET,
            fixups: Vec::new(),
            perf_map: PerfMap::from_env(),
            nan_rules,
            counts: RunCounts::default(),
            tier_up: 0,
            last_allocation: std::time::Duration::ZERO,
        })
    }

    /// The host address range of the code cache, which guest mappings must
    /// not overlap.
    pub fn cache_range(&self) -> std::ops::Range<usize> {
        self.cache.range()
    }

    /// Bytes of block code in the cache since the last [`Jit::reset`]
    /// (the trampoline not counted).
    pub fn code_bytes(&self) -> usize {
        self.cache.next_addr() - self.blocks_start
    }

    /// Time the last [`Jit::compile`] spent on value analysis and register
    /// allocation (zero when it declined before allocating).
    pub fn last_allocation_time(&self) -> std::time::Duration {
        self.last_allocation
    }

    /// Sets how many chained transitions one [`Jit::run`] may take before
    /// returning to Rust (at least 1).
    pub fn set_chain_budget(&mut self, budget: u64) {
        self.chain_budget = budget.max(1);
    }

    /// Sets how many runs a quick block other blocks may branch to takes
    /// before its tier-up exit (the decode pass's `tier_up`; 0, the
    /// default, leaves at every run).
    pub fn set_tier_up(&mut self, runs: u32) {
        self.tier_up = runs;
    }

    /// Translates `region`. The block is registered under `region.entry`
    /// and `options` for [`Jit::lookup_with`] (replacing, and unlinking,
    /// any block already there); a superblock also replaces the quick
    /// block of its address. A quick block other blocks may branch to
    /// counts its runs (see [`super::run_counts`]).
    pub fn compile(&mut self, region: &Region, options: CompileOptions, reads_flags: bool) -> Result<BlockId, Decline> {
        self.last_allocation = std::time::Duration::ZERO;
        let at = self.cache.next_addr();
        let first_stub = self.stubs.next_id();
        let run_count = (options.shape == Shape::Quick && options.linkable()).then(|| self.counts.add(self.tier_up));
        let lowered = lower::lower(
            region,
            at,
            self.trampoline.exit_addr(),
            &self.leaf,
            first_stub,
            options,
            reads_flags,
            self.nan_rules,
            run_count,
        )?;
        self.last_allocation = lowered.allocation;
        let start = self.cache.push(at, &lowered.code).ok_or(Decline::CacheFull)?;
        let code = start + lowered.entry;
        if let Some(map) = &mut self.perf_map {
            map.record(start, region.entry, &lowered);
        }
        self.fixups.extend(lowered.fixups.iter().map(|&(at, fixup)| {
            let (at, fixup) = (start + at as usize, start + fixup as usize);
            Fixup { at, fixup, branch: super::chain::branch(at, fixup) }
        }));
        if tracing::enabled!(target: "aarchx::jit::code", tracing::Level::TRACE) {
            // The words, for `objdump -b binary -m aarch64` (docs/codegen.md).
            let words: Vec<String> = lowered
                .code
                .chunks(4)
                .map(|w| format!("{:08x}", u32::from_le_bytes(w.try_into().unwrap_or([0; 4]))))
                .collect();
            tracing::trace!(target: "aarchx::jit::code", guest = format_args!("{:#x}", region.entry), host = format_args!("{code:#x}"), "arm64 code {}", words.join(" "));
        }
        let id = BlockId(self.blocks.len() as u32);
        let stubs = self.stubs.add(start, &lowered.stubs);
        let quick = CompileOptions { shape: Shape::Quick, ..options };
        let replaced = [Some(options), (options.shape == Shape::Superblock).then_some(quick)];
        for key in replaced.into_iter().flatten() {
            if let Some(old) = self.by_addr.get(&(region.entry, key)).copied() {
                self.drop_block(old);
            }
        }
        self.by_addr.insert((region.entry, options), id);
        self.blocks.push(Some(BlockInfo {
            guest: region.entry,
            code,
            ranges: region.guest_ranges(),
            stubs,
            incoming: Vec::new(),
            options,
        }));
        Ok(id)
    }

    /// The registered block other blocks may branch to for guest address
    /// `addr`: its superblock, else its quick translation (neither
    /// journaled nor dispatched).
    pub fn lookup(&self, addr: u64) -> Option<BlockId> {
        let superblock = CompileOptions::default();
        let quick = CompileOptions { shape: Shape::Quick, ..superblock };
        self.lookup_with(addr, superblock).or_else(|| self.lookup_with(addr, quick))
    }

    /// The registered block for guest address `addr` compiled with
    /// `options`.
    pub fn lookup_with(&self, addr: u64, options: CompileOptions) -> Option<BlockId> {
        self.by_addr.get(&(addr, options)).copied()
    }

    /// Records `block` (entered by the dispatcher at its guest address) in
    /// the indirect branch target cache, so translated code's indirect
    /// branches to that address reach it directly. Dead blocks and those
    /// not [`CompileOptions::linkable`] are not recorded.
    pub fn note_entry(&mut self, block: BlockId) {
        if let Some(info) = self.block(block).filter(|b| b.options.linkable()) {
            self.ibtc.insert(info.guest, info.code);
        }
    }

    /// Host address of a live block's code (for tests and profiling).
    pub fn code_addr(&self, block: BlockId) -> Option<usize> {
        self.block(block).map(|b| b.code)
    }

    fn block(&self, block: BlockId) -> Option<&BlockInfo> {
        self.blocks.get(block.0 as usize).and_then(Option::as_ref)
    }

    /// Runs `block` on `state` until it (or a block chained from it)
    /// exits or traps. `helpers` performs the IR's `call`s.
    ///
    /// # Safety
    ///
    /// The translated code loads and stores guest memory at guest
    /// addresses as host addresses: every address the region (and any
    /// region chained from it) accesses must be mapped for that access and
    /// must not be memory that Rust code holds references into.
    ///
    /// # Panics
    ///
    /// If `block` is not live (invalidated or from before a `reset`).
    pub unsafe fn run(
        &mut self,
        block: BlockId,
        state: &mut GuestState,
        helpers: &mut dyn FnMut(Helper, &mut GuestState),
    ) -> JitExit {
        let info = self.block(block).expect("running a live block");
        let (code, journal) = (info.code, info.options.journal);
        if journal {
            self.ctx.journal_reset();
        }
        let mut helpers: &mut dyn FnMut(Helper, &mut GuestState) = helpers;
        self.ctx.set_helpers(&mut helpers);
        self.ctx.budget = self.chain_budget;
        // A signal during the last run, or another thread making code
        // writable, may have left it pointing at the empty table
        // (`crate::signals`, `crate::thread::cut_every_run`); such a
        // change since the dispatcher last settled (before its look-up)
        // empties it for this run.
        self.ctx.ibtc.store(self.ibtc.as_mut_ptr() as usize, Ordering::SeqCst);
        if crate::thread::current().code_changed() {
            self.ctx.ibtc.store(NO_ENTRIES.as_ptr() as usize, Ordering::SeqCst);
        }
        // SAFETY: `code` is the entry of a block this JIT generated for the
        // trampoline's contract; the context outlives the call and its
        // helper pointer refers to `helpers`, alive until the call returns;
        // the caller upholds the guest-memory contract above.
        let raw =
            unsafe { self.trampoline.enter(state, &mut self.ctx, code, &self.fixups, &self.leaf, self.cut.slot()) };
        self.ctx.clear_helpers();
        exit::decode(raw)
    }

    /// Links `stub` (reported by a run) straight to `target`, whose guest
    /// entry must be the stub's target address. Returns whether the link
    /// was made: stubs of dead or journaled blocks, and targets that are
    /// not [`CompileOptions::linkable`], dead or for another address, are
    /// left alone.
    pub fn link(&mut self, stub: StubId, target: BlockId) -> bool {
        let Some(info) = self.block(target) else { return false };
        if !info.options.linkable() {
            return false;
        }
        let (guest, code) = (info.guest, info.code);
        if !self.stubs.link(&mut self.cache, stub, guest, code, target) {
            return false;
        }
        if let Some(Some(t)) = self.blocks.get_mut(target.0 as usize) {
            t.incoming.push(stub);
        }
        true
    }

    /// Drops every block translated from guest bytes overlapping
    /// `[start, start + len)`: unlinks the branches into it and forgets
    /// it. Its code memory is not reused until [`Jit::reset`].
    pub fn invalidate(&mut self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        let hit: Vec<BlockId> = self
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.as_ref().map(|b| (i, b)))
            .filter(|(_, b)| b.ranges.iter().any(|&(s, e)| s < end && start < e))
            .map(|(i, _)| BlockId(i as u32))
            .collect();
        for id in hit {
            self.drop_block(id);
        }
    }

    /// Forgets every block and rewinds the code cache.
    pub fn reset(&mut self) {
        self.ibtc.clear();
        self.blocks.clear();
        self.by_addr.clear();
        self.stubs = StubTable::default();
        self.fixups.clear();
        self.counts.clear();
        self.cache.rewind(self.blocks_start);
    }

    fn drop_block(&mut self, id: BlockId) {
        let Some(info) = self.blocks.get_mut(id.0 as usize).and_then(Option::take) else { return };
        self.ibtc.clear();
        for stub in info.incoming {
            self.stubs.unlink(&mut self.cache, stub);
        }
        for stub in info.stubs.clone() {
            let stub = StubId(stub);
            if let Some(target) = self.stubs.linked_target(stub) {
                if let Some(Some(t)) = self.blocks.get_mut(target.0 as usize) {
                    t.incoming.retain(|s| *s != stub);
                }
            }
            self.stubs.kill(&mut self.cache, stub);
        }
        let key = (info.guest, info.options);
        if self.by_addr.get(&key) == Some(&id) {
            self.by_addr.remove(&key);
        }
    }

    /// The stores journaled by the last run of a journaled block, oldest
    /// first.
    pub fn journal(&self) -> &[JournalEntry] {
        self.ctx.journal()
    }

    /// Undoes the journaled stores of the last run (newest first) and
    /// empties the journal.
    ///
    /// # Safety
    ///
    /// The journaled addresses must still be mapped writable and not be
    /// memory Rust code holds references into: the same contract as the
    /// [`Jit::run`] that recorded them.
    pub unsafe fn rollback(&mut self) {
        // SAFETY: forwarded from this function's contract.
        unsafe { journal::rollback(self.ctx.journal()) };
        self.ctx.journal_reset();
    }
}
