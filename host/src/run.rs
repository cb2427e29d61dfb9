//! The dispatcher: loads the guest, then, on each guest thread's host
//! thread, loops: apply the code invalidations other threads made, look
//! up the region for the thread's rip in the shared translation cache
//! (translating it on a miss), execute it, and handle how it exited (next
//! region, system call, guest fault). A `clone` of a thread starts a host
//! thread running the same loop (`spawn`); see docs/threads.md.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use aarchx_ir::{ExitKind, GuestState, Region};
use aarchx_pass::MemoryModel;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::disk_cache::{fingerprint, DiskCache};
use crate::engine::{Engine, EngineError, Executed};
use crate::jit::NanRules;
use crate::loader::rootfs::{Rootfs, RootfsError};
use crate::loader::{self, LoadError};
use crate::machine::RegionExit;
use crate::mem::{GuestMemory, SharedMemory};
use crate::plugin::{PluginError, Registry};
use crate::policy::{Backend, MemoryModelSetting, Policy, PolicyError, VerifySettings};
use crate::syscall::{self, NewThread, Process, SyscallOutcome, SYSCALL_LEN};
use crate::translate::{leaves_directly, PassFailure, Pipeline, Shape, TranslateError, Variant};
use crate::verify::Verifier;

/// Why aarchx itself could not run the guest to completion.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Policy(#[from] PolicyError),
    #[error("{0}")]
    Rootfs(#[from] RootfsError),
    #[error("{0}")]
    Plugin(#[from] PluginError),
    #[error("{0}")]
    Load(#[from] LoadError),
    #[error("{0}")]
    Translate(#[from] TranslateError),
    #[error("{0}")]
    Engine(#[from] EngineError),
}

impl RunError {
    /// The documented exit status for this error (see `aarchx --help`).
    pub fn exit_status(&self) -> u8 {
        match self {
            RunError::Policy(_) | RunError::Rootfs(_) | RunError::Plugin(_) => 2,
            RunError::Load(e) => e.exit_status(),
            RunError::Translate(_) | RunError::Engine(EngineError::Setup(_)) => 4,
            RunError::Engine(EngineError::Mismatch(_)) => 3,
        }
    }
}

/// Translated regions by guest entry address and variant, and what
/// translating them produced and cost.
#[derive(Default)]
struct Cache {
    /// Each region with the guest byte ranges it depends on.
    regions: FxHashMap<(u64, Variant), Slot>,
    /// Quick translations replaced by their superblock (tiering).
    promoted: u64,
    /// IR instructions the regions hold, up to `bounds::REGION_INSTS`.
    held_insts: usize,
    /// Times the cache was flushed for being full.
    flushes: u64,
    translated: u64,
    guest_insns: u64,
    ir_insts: u64,
    translate_ns: u128,
    /// Dispatcher look-ups per guest address, kept only for a policy's
    /// region hook (its regions' execution counts).
    lookups: Option<FxHashMap<u64, u64>>,
    /// Guest instructions translated so far, kept only for the stats line:
    /// one translated again (in another superblock, or after its code
    /// changed) counts in `retranslated`.
    seen: Option<FxHashSet<u64>>,
    retranslated: u64,
}

/// The translations of one entry address in one variant, one per shape
/// (tiering: the quick one until the superblock replaces it): the
/// dispatcher finds both with one look-up.
#[derive(Default)]
struct Slot {
    quick: Option<Cached>,
    superblock: Option<Cached>,
}

impl Slot {
    fn get(&self, shape: Shape) -> Option<&Cached> {
        match shape {
            Shape::Quick => self.quick.as_ref(),
            Shape::Superblock => self.superblock.as_ref(),
        }
    }

    fn held(&self) -> impl Iterator<Item = &Cached> {
        self.quick.iter().chain(&self.superblock)
    }
}

/// A region as the dispatcher gets it.
struct Translated {
    region: Arc<Region>,
    /// Entered only from the dispatcher, never chained to: a
    /// self-checking region (see `crate::code_pages`). (A quick one is
    /// chained to and counts its own runs on the JIT, see
    /// `crate::jit::run_counts`.)
    dispatched: bool,
    shape: Shape,
}

/// A translated region in the cache.
struct Cached {
    region: Arc<Region>,
    /// The guest byte ranges it was translated from.
    ranges: Vec<(u64, u64)>,
    /// Those bytes as they were, when a range lies on a self-checking page
    /// (see `crate::code_pages`): compared before every run.
    bytes: Option<Vec<u8>>,
    /// A quick translation that a superblock would extend (it leaves by a
    /// direct jump or call): its runs from the dispatcher so far (the
    /// JIT's block also counts those it was chained to).
    runs: Option<u32>,
}

impl Cached {
    fn translated(&self, shape: Shape) -> Translated {
        Translated { region: self.region.clone(), dispatched: self.bytes.is_some(), shape }
    }

    /// Whether the region checks its bytes and they changed.
    fn stale(&self, mem: &GuestMemory) -> bool {
        let Some(bytes) = &self.bytes else { return false };
        code_bytes(&self.ranges, mem) != *bytes
    }
}

/// The guest code in `ranges`, concatenated.
fn code_bytes(ranges: &[(u64, u64)], mem: &GuestMemory) -> Vec<u8> {
    use aarchx_pass::GuestCode;
    let mut bytes = vec![0u8; ranges.iter().map(|(s, e)| (e - s) as usize).sum()];
    let mut at = 0;
    for &(s, e) in ranges {
        let n = (e - s) as usize;
        // Short when the code is no longer mapped executable: the bytes
        // left zero then differ, or the translation fails where the
        // region would have faulted.
        mem.read(s, &mut bytes[at..at + n]);
        at += n;
    }
    bytes
}

impl Cache {
    /// The `variant` translation of the code at `rip`, translated on a
    /// miss, in the `shape` asked for, or (`None`) as tiering has it:
    /// quick at first, the superblock after the quick one's `tier_up`
    /// runs. The guest pages a translation depends on are write-protected
    /// so that a store to them is seen (or, self-checking, its bytes are
    /// kept).
    fn get_or_translate(
        &mut self,
        rip: u64,
        variant: Variant,
        shape: Option<Shape>,
        pipeline: &mut Pipeline,
        mut disk: Option<&mut DiskCache>,
        mem: &mut GuestMemory,
    ) -> Result<Translated, TranslateError> {
        let executions = match (&mut self.lookups, variant) {
            (Some(l), Variant::Policy) => {
                if !l.contains_key(&rip) {
                    crate::bounds::make_room(l);
                }
                let n = l.entry(rip).or_default();
                *n += 1;
                *n - 1
            }
            _ => 0,
        };
        let tier_up = pipeline.tier_up();
        let slot = self.regions.get_mut(&(rip, variant));
        let shape = match (shape, slot) {
            (Some(shape), Some(slot)) => match slot.get(shape) {
                Some(c) => return Ok(c.translated(shape)),
                None => shape,
            },
            (Some(shape), None) => shape,
            (None, None) if tier_up == 0 => Shape::Superblock,
            (None, None) => Shape::Quick,
            (None, Some(slot)) => match (&slot.superblock, &mut slot.quick) {
                (Some(c), _) => return Ok(c.translated(Shape::Superblock)),
                (None, _) if tier_up == 0 => Shape::Superblock,
                (None, None) => Shape::Quick,
                (None, Some(c)) => {
                    let runs = c.runs.get_or_insert(0);
                    if *runs + 1 >= tier_up {
                        Shape::Superblock
                    } else {
                        *runs += 1;
                        return Ok(c.translated(Shape::Quick));
                    }
                }
            },
        };
        let model = pipeline.config().memory_model;
        let started = std::time::Instant::now();
        let on_disk = match (&mut disk, variant) {
            (Some(d), Variant::Policy) => d.load(mem.objects_mut(), rip, shape, model),
            _ => None,
        };
        let verifies = disk.as_ref().is_some_and(|d| d.verifies());
        // Taken only where a translation now would read the same: the code
        // still executable (a page made non-executable faults instead).
        let on_disk = on_disk.filter(|r| mem.executable(&r.guest_ranges()));
        let (region, ranges, bytes) = match on_disk {
            Some(region) if !verifies => {
                let ranges = region.guest_ranges();
                let bytes = mem.protect_code(&ranges).then(|| code_bytes(&ranges, mem));
                (Arc::new(region), ranges, bytes)
            }
            on_disk => {
                let (region, ranges, bytes, reads) = self.translate(rip, variant, shape, executions, pipeline, mem)?;
                let read: Vec<(u64, usize, usize)> =
                    reads.at.iter().zip(&reads.asked).map(|(&(a, _, got), &asked)| (a, asked, got)).collect();
                match (on_disk, &mut disk) {
                    (Some(loaded), Some(d)) => d.compare(mem.objects_mut(), rip, shape, model, &loaded, &region, &read),
                    (None, Some(d)) if variant == Variant::Policy => {
                        d.store(mem.objects_mut(), rip, shape, model, &region, &read)
                    }
                    _ => {}
                }
                (region, ranges, bytes)
            }
        };
        self.translate_ns += started.elapsed().as_nanos();
        // A quick translation that leaves by no direct jump or call is the
        // superblock too (nothing to follow): kept and compiled as one, so
        // that blocks chain to it and the indirect branch cache holds it.
        let shape = if shape == Shape::Quick && !leaves_directly(&region) { Shape::Superblock } else { shape };
        if shape == Shape::Superblock {
            if let Some(quick) = self.regions.get_mut(&(rip, variant)).and_then(|s| s.quick.take()) {
                self.held_insts -= quick.region.insts.len();
                self.promoted += 1;
            }
        }
        if self.held_insts + region.insts.len() > crate::bounds::REGION_INSTS {
            tracing::debug!(regions = self.regions.len(), insts = self.held_insts, "region cache full: flushed");
            self.regions = FxHashMap::default();
            self.held_insts = 0;
            self.flushes += 1;
        }
        self.held_insts += region.insts.len();
        let runs = (shape == Shape::Quick).then_some(1);
        let cached = Cached { region, ranges, bytes, runs };
        let translated = cached.translated(shape);
        let slot = self.regions.entry((rip, variant)).or_default();
        match shape {
            Shape::Quick => slot.quick = Some(cached),
            Shape::Superblock => slot.superblock = Some(cached),
        }
        Ok(translated)
    }

    /// Translates the code at `rip` (see [`Cache::get_or_translate`]) and
    /// counts it; returns the region with the ranges its instructions came
    /// from, their bytes when it checks them, and what it read.
    fn translate(
        &mut self,
        rip: u64,
        variant: Variant,
        shape: Shape,
        executions: u64,
        pipeline: &mut Pipeline,
        mem: &mut GuestMemory,
    ) -> Result<(Arc<Region>, Vec<(u64, u64)>, Option<Vec<u8>>, Reads), TranslateError> {
        // Another thread may store to the code while it is translated,
        // before its pages are protected (and the store seen): the bytes
        // read are compared once they are, and on a change the code is
        // translated again.
        let (mut region, ranges, bytes, reads) = loop {
            let code = Recorded::new(mem);
            let region = pipeline.translate(rip, &code, executions, variant, shape == Shape::Superblock)?;
            let reads = code.reads.into_inner();
            let ranges = region.guest_ranges();
            let bytes = mem.protect_code(&ranges).then(|| code_bytes(&ranges, mem));
            // Code on read-only pages (a program's text) cannot change.
            if !mem.writable_code(&ranges) || reads.unchanged(mem) {
                break (region, ranges, bytes, reads);
            }
            tracing::debug!(entry = format_args!("{rip:#x}"), "its code changed while it was translated: again");
        };
        // The passes leave what they dropped in the arena: the cache keeps
        // only what runs.
        region.compact();
        self.translated += 1;
        self.guest_insns += region.guest_insns().count() as u64;
        if let (Some(seen), Variant::Policy) = (&mut self.seen, variant) {
            self.retranslated += region.guest_insns().filter(|(a, _)| !seen.insert(*a)).count() as u64;
        }
        self.ir_insts += region.blocks.iter().map(|b| b.insts.len() as u64).sum::<u64>();
        tracing::trace!(
            entry = format_args!("{rip:#x}"),
            ?shape,
            "translated region\n{}",
            aarchx_ir::print::print(&region)
        );
        Ok((Arc::new(region), ranges, bytes, reads))
    }

    /// Drops every region with an instruction in `[start, start + len)`
    /// (a superblock's instructions may lie far from its entry).
    fn invalidate(&mut self, start: u64, len: u64) {
        let held = &mut self.held_insts;
        self.regions.retain(|_, slot| {
            for shape in [&mut slot.quick, &mut slot.superblock] {
                if shape.as_ref().is_some_and(|c| overlaps(&c.ranges, start, len)) {
                    *held -= shape.take().map_or(0, |c| c.region.insts.len());
                }
            }
            slot.quick.is_some() || slot.superblock.is_some()
        });
    }
}

/// Whether any of `ranges` (start, end) overlaps `[start, start + len)`.
fn overlaps(ranges: &[(u64, u64)], start: u64, len: u64) -> bool {
    let end = start.saturating_add(len);
    ranges.iter().any(|&(s, e)| s < end && start < e)
}

/// Guest code as a translation reads it, each read recorded.
struct Recorded<'m> {
    mem: &'m GuestMemory,
    reads: RefCell<Reads>,
}

/// Where a translation read guest code, and what it read there.
#[derive(Default)]
struct Reads {
    /// Address, and start and length in `bytes`.
    at: Vec<(u64, usize, usize)>,
    bytes: Vec<u8>,
    /// The length each read asked for (it may come short).
    asked: Vec<usize>,
}

impl<'m> Recorded<'m> {
    fn new(mem: &'m GuestMemory) -> Recorded<'m> {
        Recorded { mem, reads: RefCell::default() }
    }
}

impl aarchx_pass::GuestCode for Recorded<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let n = self.mem.read(addr, buf);
        let reads = &mut *self.reads.borrow_mut();
        reads.at.push((addr, reads.bytes.len(), n));
        reads.asked.push(buf.len());
        reads.bytes.extend_from_slice(&buf[..n]);
        n
    }

    /// Not recorded: the names come from the mapped files, and a GOT slot
    /// read for an IFUNC variant only says where a routine is called (a
    /// region kept without the routine is still right).
    fn function_at(&self, addr: u64) -> Option<String> {
        self.mem.function_at(addr)
    }
}

impl Reads {
    /// Whether guest memory still holds what was read.
    fn unchanged(&self, mem: &GuestMemory) -> bool {
        use aarchx_pass::GuestCode;
        const CHUNK: usize = 64;
        let mut now = [0u8; CHUNK];
        self.at.iter().all(|&(addr, start, len)| {
            let was = &self.bytes[start..start + len];
            was.chunks(CHUNK).enumerate().all(|(i, chunk)| {
                let now = &mut now[..chunk.len()];
                mem.read(addr + (i * CHUNK) as u64, now) == chunk.len() && now == chunk
            })
        })
    }
}

/// What the guest's threads share: the translation cache with the
/// pipeline that fills it, behind one lock (a miss takes it, so two
/// threads missing one address translate it once), the settings each
/// thread sets its own executor up from, the code invalidations every
/// thread's executor applies before its next region, and the count of
/// live guest threads (the last one out ends the process).
struct Shared {
    translator: Mutex<Translator>,
    backend: Backend,
    nan_rules: NanRules,
    /// The decode pass's `tier_up`, for each thread's JIT.
    tier_up: u32,
    verify: Option<VerifySettings>,
    /// The policy asked for `memory_model: Auto`: plain until the guest
    /// starts a thread or maps shared memory writable, ordered from then
    /// on.
    auto_memory_model: bool,
    invalidations: Invalidations,
    threads: AtomicUsize,
    /// The guest has mapped shared memory writable (seen at a look-up):
    /// another process may access it at the same time.
    memory_shared: AtomicBool,
}

/// The pipeline and the caches it fills.
struct Translator {
    pipeline: Pipeline,
    cache: Cache,
    /// The persistent cache, unless off.
    disk: Option<DiskCache>,
}

// SAFETY: a `Translator` is only reached through `Shared::translator`'s
// lock, so one thread at a time uses it, with the lock's acquire and
// release ordering its memory. What makes it `!Send` is the `Rc`s and
// `Cell`s of the Lua hook and the passes' boxed trait objects, none of
// which is handed out of the lock or tied to the thread that made it
// (no thread-local state; wasmtime stores and loaded libraries are `Send`).
unsafe impl Send for Translator {}

impl Shared {
    fn translator(&self) -> MutexGuard<'_, Translator> {
        self.translator.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The `variant` translation of the code at `rip`, in `shape` or as
    /// tiering has it (see [`Cache::get_or_translate`]). Code changes the
    /// memory map recorded are applied first, and a self-checking region
    /// whose bytes changed is invalidated and translated again. Also
    /// returns the count of invalidations the region is current after
    /// (see [`Invalidations::hit_since`]).
    fn region(
        &self,
        rip: u64,
        variant: Variant,
        shape: Option<Shape>,
        mem: &SharedMemory,
    ) -> Result<(Translated, u64), TranslateError> {
        let t = &mut *self.translator();
        let mem = &mut *mem.lock();
        if crate::code_pages::written_pending() {
            for (start, len) in mem.take_written_code() {
                t.cache.invalidate(start, len);
                self.invalidations.push(start, len);
            }
        }
        let stale = t
            .cache
            .regions
            .get(&(rip, variant))
            .and_then(|s| s.held().find(|c| c.stale(mem)))
            .map(|c| c.ranges.clone());
        for (start, end) in stale.into_iter().flatten() {
            tracing::trace!(rip = format_args!("{rip:#x}"), "self-checking region: its code changed");
            t.cache.invalidate(start, end - start);
            self.invalidations.push(start, end - start);
        }
        if mem.shares_writable() && !self.memory_shared.swap(true, Ordering::Relaxed) {
            self.go_ordered(t, "the guest mapped shared memory writable");
        }
        let translated = t.cache.get_or_translate(rip, variant, shape, &mut t.pipeline, t.disk.as_mut(), mem)?;
        // Invalidations are pushed under the translator's lock, held here.
        Ok((translated, self.invalidations.count()))
    }

    /// The guest starts a second thread: see [`Shared::go_ordered`].
    fn threads_start(&self) {
        self.go_ordered(&mut self.translator(), "the guest started a thread");
    }

    /// Under `memory_model: Auto`, once another thread or process may
    /// access memory at the same time (`why`): the code translated so far
    /// (plain) is dropped for good and everything from now on is
    /// translated ordered.
    fn go_ordered(&self, t: &mut Translator, why: &str) {
        if !self.auto_memory_model || t.pipeline.config().memory_model == MemoryModel::Ordered {
            return;
        }
        tracing::debug!("memory model: ordered from now on (memory_model: Auto, {why})");
        t.pipeline.set_memory_model(MemoryModel::Ordered);
        t.cache.invalidate(0, u64::MAX);
        self.invalidations.push(0, u64::MAX);
    }
}

/// The code ranges invalidated so far, for the executors of every thread
/// to apply: a log of the latest ones and how many there have been.
#[derive(Default)]
struct Invalidations {
    log: Mutex<VecDeque<(u64, u64)>>,
    count: AtomicU64,
}

impl Invalidations {
    /// The log keeps this many; a thread further behind drops everything.
    const KEPT: usize = 256;

    fn push(&self, start: u64, len: u64) {
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        if log.len() == Self::KEPT {
            log.pop_front();
        }
        log.push_back((start, len));
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// The number pushed so far.
    fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Whether a range pushed after the first `seen` overlaps the code
    /// `region` was translated from.
    fn hit_since(&self, seen: u64, region: &Region) -> bool {
        if self.count() == seen {
            return false;
        }
        let (pushed, _) = self.since(seen);
        let ranges = region.guest_ranges();
        pushed.iter().any(|&(start, len)| overlaps(&ranges, start, len))
    }

    /// The ranges pushed after the first `seen` (everything, when the log
    /// no longer holds them all), and the count they bring it to.
    fn since(&self, seen: u64) -> (Vec<(u64, u64)>, u64) {
        let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        let count = self.count();
        let behind = (count - seen) as usize;
        if behind > log.len() {
            return (vec![(0, u64::MAX)], count);
        }
        (log.iter().skip(log.len() - behind).copied().collect(), count)
    }
}

/// The stack of a guest thread's host thread: the dispatcher, the
/// translator and the interpreter run on it (the guest's own stack is
/// guest memory).
const THREAD_STACK: usize = 8 << 20;

/// Runs `program` with `args` under `policy`, with its files from `root`;
/// the guest's argv[0] is `argv0`, by default `program` as given. Returns
/// the guest's exit status. A guest killed by a signal kills this process
/// with that signal and does not return; a guest whose threads outlive
/// this one ends this process when the last of them exits.
pub fn run(
    policy: &Policy,
    root: &Rootfs,
    program: &Path,
    argv0: Option<&OsStr>,
    args: &[OsString],
) -> Result<u8, RunError> {
    let registry = Registry::with_plugins(aarchx_passes::BUILTIN, &policy.plugins, policy.base_dir())?;
    let passes = policy.validate(&registry)?;
    crate::cpuid::set_level(policy.cpu_level);
    // Under verify mode a pass's failure must fail the run, not be worked
    // around.
    let on_failure = if policy.verify.is_some() { PassFailure::Fail } else { PassFailure::Fallback };
    let pipeline = Pipeline::new(&passes, policy.translation_config(), policy.region_hook.clone(), on_failure)?;
    // A region hook's answers depend on the run: its translations are not
    // kept.
    let fingerprint =
        policy.region_hook.is_none().then(|| fingerprint::fingerprint(&passes, &policy.translation_config())).flatten();
    let disk = DiskCache::new(&policy.cache, fingerprint);
    let nan_rules = crate::engine::nan_rules(policy.afp);
    let tier_up = pipeline.tier_up();
    let engine = Engine::new(policy.backend, nan_rules, tier_up)?;
    let mut argv: Vec<OsString> = vec![argv0.unwrap_or(program.as_os_str()).to_owned()];
    argv.extend(args.iter().cloned());
    let envp: Vec<OsString> = std::env::vars_os()
        .map(|(mut kv, v)| {
            kv.push("=");
            kv.push(v);
            kv
        })
        .collect();
    let loaded = loader::load(program, &argv, &envp, root)?;
    let state = loaded.initial_state();
    let process = Process::new(loaded, root.clone());
    let cache = Cache {
        lookups: pipeline.has_region_hook().then(FxHashMap::default),
        seen: stats_wanted().then(Default::default),
        ..Cache::default()
    };
    let shared = Arc::new(Shared {
        translator: Mutex::new(Translator { pipeline, cache, disk }),
        backend: policy.backend,
        nan_rules,
        tier_up,
        verify: policy.verify,
        auto_memory_model: policy.memory_model == MemoryModelSetting::Auto,
        invalidations: Invalidations::default(),
        threads: AtomicUsize::new(1),
        memory_shared: AtomicBool::new(false),
    });
    match GuestThread::new(&shared, engine).run(state, process)? {
        Some(status) if shared.threads.load(Ordering::SeqCst) <= 1 => Ok(status as u8),
        // Other threads may be translating with the plugins this frame
        // owns: end the process without unwinding it.
        Some(status) => std::process::exit(status & 0xff),
        // This thread exited and others run on: the last ends the process.
        None => loop {
            std::thread::park();
        },
    }
}

/// One guest thread's dispatcher: its executor (each thread has its own
/// JIT), its verify state and how many invalidations it has applied.
struct GuestThread<'a> {
    shared: &'a Arc<Shared>,
    engine: Engine,
    verifier: Option<Verifier>,
    applied: u64,
}

impl<'a> GuestThread<'a> {
    fn new(shared: &'a Arc<Shared>, engine: Engine) -> GuestThread<'a> {
        GuestThread {
            shared,
            engine,
            verifier: shared.verify.map(Verifier::new),
            applied: shared.invalidations.count(),
        }
    }

    /// Runs the guest thread until it exits: `Some(status)` when the
    /// process ends with it (exit_group, or the last thread's exit),
    /// `None` when other threads run on.
    fn run(&mut self, mut state: GuestState, mut process: Process) -> Result<Option<i32>, RunError> {
        // The entry of a quick block that left by its tier-up exit: its
        // superblock is translated at the next look-up there.
        let mut promote = None;
        loop {
            // A code page made writable by another thread is recorded
            // written before the look-up (see `crate::thread`).
            crate::thread::current().settle_code_changes();
            self.catch_up();
            process.deliver_signals(&mut state);
            let rip = state.rip;
            // While MXCSR unmasks an exception, regions run their reference
            // translation (see `exact_float_traps`).
            let variant = if exact_float_traps(&state) { Variant::Reference } else { Variant::Policy };
            let shape = (promote.take() == Some(rip)).then_some(Shape::Superblock);
            let (Translated { region, dispatched, shape }, as_of) =
                self.shared.region(rip, variant, shape, &process.mem)?;
            // The look-up may have dropped a self-checking region's stale
            // code, from this thread's executor too.
            self.catch_up();
            // Another thread may have dropped the region since the look-up
            // (its page was written), and this thread's executor has
            // applied that: were the region compiled now, nothing would
            // drop its code from this thread's executor again, and a later
            // indirect branch could run it. It is looked up again.
            if self.shared.invalidations.hit_since(as_of, &region) {
                continue;
            }
            tracing::trace!(target: "aarchx::exec", "{rip:#x}");
            // Verify mode runs a region twice and undoes the first run's
            // stores, which other threads or processes would see or lose:
            // it checks only while the guest has one thread and shares no
            // writable memory.
            let alone =
                self.shared.threads.load(Ordering::SeqCst) == 1 && !self.shared.memory_shared.load(Ordering::Relaxed);
            let due = alone && self.verifier.as_mut().is_some_and(|v| v.due(&region));
            let exit = match self.verifier.as_mut().filter(|_| due) {
                Some(v) => {
                    let reference = self.shared.region(rip, Variant::Reference, Some(shape), &process.mem)?.0.region;
                    v.check(&mut self.engine, &region, shape, &reference, &mut state, &mut process).map(Executed::from)
                }
                None => Ok(self.engine.execute(&region, shape, dispatched, &mut state, &mut process)),
            };
            let Executed { exit, tier_up } = exit.inspect_err(|_| self.report())?;
            if tier_up {
                promote = Some(state.rip);
            }
            let fatal = match exit {
                // A signal came first: its handler runs, then the system call.
                RegionExit::Jump { kind: ExitKind::Syscall } if process.signal_before_syscall() => {
                    state.rip -= SYSCALL_LEN;
                    None
                }
                RegionExit::Jump { kind: ExitKind::Syscall } => match self.syscall(&mut process, &mut state) {
                    SyscallOutcome::Continue => None,
                    SyscallOutcome::Exit(status) => {
                        self.report();
                        return Ok(Some(status));
                    }
                    SyscallOutcome::ExitThread(status) => {
                        process.end_thread();
                        if self.shared.threads.fetch_sub(1, Ordering::SeqCst) == 1 {
                            self.report();
                            return Ok(Some(status));
                        }
                        return Ok(None);
                    }
                    SyscallOutcome::Spawn(thread) => {
                        state.gpr[0] = spawn(self.shared, *thread);
                        None
                    }
                },
                RegionExit::Jump { .. } => None,
                RegionExit::Trap { kind } => process.trap(&mut state, kind),
                RegionExit::Fault { fault } => process.fault(&mut state, fault),
            };
            if let Some(sig) = fatal {
                self.report();
                crate::signals::die_with(sig);
            }
        }
    }

    /// Applies the code invalidations made since the last time (by any
    /// thread) to this thread's executor and verify state.
    fn catch_up(&mut self) {
        if self.shared.invalidations.count() == self.applied {
            return;
        }
        let (ranges, count) = self.shared.invalidations.since(self.applied);
        for (start, len) in ranges {
            self.engine.invalidate(start, len);
            if let Some(v) = &mut self.verifier {
                v.invalidate(start, len);
            }
        }
        self.applied = count;
    }

    /// Performs the guest's system call. A fork copies the runtime's locks
    /// as the other threads hold them: the translator's is held across it,
    /// so that the child finds it free.
    fn syscall(&self, process: &mut Process, state: &mut GuestState) -> SyscallOutcome {
        if syscall::execs(state) {
            // The new program is another process of aarchx's: what this
            // one translated is kept first.
            if let Some(disk) = &mut self.shared.translator().disk {
                disk.flush();
            }
        }
        let _translator = syscall::forks(state).then(|| self.shared.translator());
        syscall::syscall(process, state)
    }

    /// Prints this thread's summary (see [`report_summary`]).
    fn report(&self) {
        let t = &mut *self.shared.translator();
        if let Some(disk) = &mut t.disk {
            disk.flush();
        }
        report_summary(self.verifier.as_ref(), &self.engine, &mut t.pipeline, &t.cache, t.disk.as_ref());
    }
}

/// Starts the guest thread `new` on a host thread of its own; returns its
/// thread id (the host's), or a negative errno as the guest's `clone`
/// result.
fn spawn(shared: &Arc<Shared>, new: NewThread) -> u64 {
    let NewThread { state, process, tid_at } = new;
    shared.threads_start();
    shared.threads.fetch_add(1, Ordering::SeqCst);
    let (sender, receiver) = std::sync::mpsc::channel();
    let thread_shared = Arc::clone(shared);
    // The host thread inherits this thread's signal mask, which is the
    // guest thread's: the new guest thread's, as clone gives it.
    let started = std::thread::Builder::new().name("guest".into()).stack_size(THREAD_STACK).spawn(move || {
        let tid = syscall::this_thread();
        for at in tid_at {
            // The kernel ignores a bad address here too.
            process.mem.lock().write_bytes(at, &(tid as u32).to_le_bytes()).ok();
        }
        sender.send(tid).ok();
        let ended = Engine::new(thread_shared.backend, thread_shared.nan_rules, thread_shared.tier_up)
            .map_err(RunError::from)
            .and_then(|engine| GuestThread::new(&thread_shared, engine).run(state, process));
        match ended {
            Ok(None) => {}
            Ok(Some(status)) => std::process::exit(status & 0xff),
            Err(e) => {
                eprintln!("aarchx: {e}");
                std::process::exit(i32::from(e.exit_status()));
            }
        }
    });
    match started.ok().and_then(|_| receiver.recv().ok()) {
        Some(tid) => tid,
        None => {
            shared.threads.fetch_sub(1, Ordering::SeqCst);
            (-i64::from(libc::EAGAIN)) as u64
        }
    }
}

/// Whether MXCSR unmasks an SSE exception, so a float op may trap: the
/// region then runs its reference translation (the lifter and the
/// lowering passes), whose IR writes every
/// instruction's registers before the next one starts, so the state a
/// trapping op leaves (its own writes put back) is exact. The optimising
/// passes may drop a register write that a later instruction overwrites,
/// which is right only when no float op between them can trap. MXCSR
/// changes only at an `exit fenv`, so it holds for the whole region.
fn exact_float_traps(state: &GuestState) -> bool {
    const MASKS: u32 = 0x1f80;
    state.mxcsr & MASKS != MASKS
}

/// Prints verify mode's totals, when it is on, the passes' reports at exit
/// (`Pass::finish`, once) and the plugin passes skipped after failures;
/// logs the translation totals at debug level and,
/// with `AARCHX_STATS` set, prints them as one `aarchx-stats:` line (what
/// the benchmark harness reads).
fn report_summary(
    verifier: Option<&Verifier>,
    engine: &Engine,
    pipeline: &mut Pipeline,
    cache: &Cache,
    disk: Option<&DiskCache>,
) {
    if let Some(v) = verifier {
        eprintln!("{}", v.summary());
    }
    for line in pipeline.finish() {
        eprintln!("{line}");
    }
    for line in pipeline.summary() {
        eprintln!("{line}");
    }
    let mut stats = format!(
        "regions={} guest_insns={} ir_insts={} translate_ns={} region_flushes={}",
        cache.translated, cache.guest_insns, cache.ir_insts, cache.translate_ns, cache.flushes
    );
    if let Some(bytes) = engine.code_bytes() {
        stats.push_str(&format!(" code_bytes={bytes}"));
    }
    for (name, time) in pipeline.times() {
        stats.push_str(&format!(" ns.{name}={}", time.as_nanos()));
    }
    stats.push_str(&format!(" interp_insns={}", crate::interp::insns_run()));
    if let Some(fenv) = engine.fenv_runs() {
        stats.push_str(&format!(" fenv_jit_runs={} fenv_interp_runs={}", fenv.jit, fenv.interp));
    }
    if let Some(t) = engine.lowering_times() {
        let emit = t.total.saturating_sub(t.entry_flags + t.allocation);
        stats.push_str(&format!(
            " ns.jit-lowering={} ns.jit-entry-flags={} ns.jit-alloc={} ns.jit-emit={}",
            t.total.as_nanos(),
            t.entry_flags.as_nanos(),
            t.allocation.as_nanos(),
            emit.as_nanos()
        ));
    }
    if cache.seen.is_some() {
        stats.push_str(&format!(" retranslated_insns={}", cache.retranslated));
    }
    stats.push_str(&format!(" promoted={}", cache.promoted));
    let d = disk.map(|d| d.stats).unwrap_or_default();
    stats.push_str(&format!(" cache_hits={} cache_insns={} cache_stored={}", d.hits, d.hit_insns, d.stored));
    for (name, time) in [("cache-load", d.load), ("cache-store", d.store), ("cache-write", d.write)] {
        stats.push_str(&format!(" ns.{name}={}", time.as_nanos()));
    }
    if disk.is_some_and(DiskCache::verifies) {
        stats.push_str(&format!(" cache_verified={} cache_mismatches={}", d.verified, d.mismatches));
    }
    let ordered = pipeline.config().memory_model == MemoryModel::Ordered;
    stats.push_str(&format!(" ordered={}", u8::from(ordered)));
    tracing::debug!("translation totals: {stats}");
    if stats_wanted() {
        eprintln!("aarchx-stats: {stats}");
    }
}

/// Whether `AARCHX_STATS` asks for the stats line.
fn stats_wanted() -> bool {
    std::env::var_os("AARCHX_STATS").is_some_and(|v| !v.is_empty())
}
