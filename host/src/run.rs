//! The dispatcher: loads the guest, then loops — look up the region for the
//! guest's rip in the translation cache (translating it on a miss), execute
//! it, and handle how it exited (next region, system call, guest fault).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::rc::Rc;

use aarchx_ir::{ExitKind, GuestState, Region};

use crate::engine::{Engine, EngineError};
use crate::interp::{self, RegionExit};
use crate::loader::rootfs::{Rootfs, RootfsError};
use crate::loader::{self, LoadError};
use crate::mem::GuestMemory;
use crate::plugin::{PluginError, Registry};
use crate::policy::{Policy, PolicyError};
use crate::syscall::{self, Process, SyscallOutcome, SYSCALL_LEN};
use crate::translate::{PassFailure, Pipeline, TranslateError, Variant};
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
    regions: HashMap<(u64, Variant), (Rc<Region>, Vec<(u64, u64)>)>,
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
    lookups: Option<HashMap<u64, u64>>,
    /// Guest instructions translated so far, kept only for the stats line:
    /// one translated again (in another superblock, or after its code
    /// changed) counts in `retranslated`.
    seen: Option<std::collections::HashSet<u64>>,
    retranslated: u64,
}

impl Cache {
    /// The `variant` translation of the code at `rip`, translated on a
    /// miss.
    fn get_or_translate(
        &mut self,
        rip: u64,
        variant: Variant,
        pipeline: &mut Pipeline,
        mem: &GuestMemory,
    ) -> Result<Rc<Region>, TranslateError> {
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
        if let Some((r, _)) = self.regions.get(&(rip, variant)) {
            return Ok(r.clone());
        }
        let started = std::time::Instant::now();
        let region = Rc::new(pipeline.translate(rip, mem, executions, variant)?);
        self.translate_ns += started.elapsed().as_nanos();
        self.translated += 1;
        self.guest_insns += region.guest_insns().count() as u64;
        if let (Some(seen), Variant::Policy) = (&mut self.seen, variant) {
            self.retranslated += region.guest_insns().filter(|(a, _)| !seen.insert(*a)).count() as u64;
        }
        self.ir_insts += region.blocks.iter().map(|b| b.insts.len() as u64).sum::<u64>();
        tracing::trace!(entry = format_args!("{rip:#x}"), "translated region\n{}", aarchx_ir::print::print(&region));
        if self.held_insts + region.insts.len() > crate::bounds::REGION_INSTS {
            tracing::debug!(regions = self.regions.len(), insts = self.held_insts, "region cache full: flushed");
            self.regions = HashMap::new();
            self.held_insts = 0;
            self.flushes += 1;
        }
        self.held_insts += region.insts.len();
        self.regions.insert((rip, variant), (region.clone(), region.guest_ranges()));
        Ok(region)
    }

    /// Drops every region with an instruction in `[start, start + len)`
    /// (a superblock's instructions may lie far from its entry).
    fn invalidate(&mut self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        let held = &mut self.held_insts;
        self.regions.retain(|_, (region, ranges)| {
            let keep = !ranges.iter().any(|&(s, e)| s < end && start < e);
            if !keep {
                *held -= region.insts.len();
            }
            keep
        });
    }
}

/// Runs `program` with `args` under `policy`, with its files from `root`;
/// the guest's argv[0] is `argv0`, by default `program` as given. Returns
/// the guest's exit status. A guest killed by a signal kills this process
/// with that signal and does not return.
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
    let mut pipeline = Pipeline::new(&passes, policy.translation_config(), policy.region_hook.clone(), on_failure)?;
    let mut engine = Engine::new(policy)?;
    let mut verifier = policy.verify.map(Verifier::new);
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
    let mut state = loaded.initial_state();
    let mut process = Process::new(loaded, root.clone());
    let mut cache = Cache {
        lookups: pipeline.has_region_hook().then(HashMap::new),
        seen: stats_wanted().then(Default::default),
        ..Cache::default()
    };
    loop {
        process.deliver_signals(&mut state);
        let rip = state.rip;
        // While MXCSR unmasks an exception, regions run their reference
        // translation (see `exact_float_traps`).
        let variant = if exact_float_traps(&state) { Variant::Reference } else { Variant::Policy };
        let region = cache.get_or_translate(rip, variant, &mut pipeline, &process.mem)?;
        tracing::trace!(target: "aarchx::exec", "{rip:#x}");
        // The state to replay a faulting region from: kept only while the
        // guest handles memory faults (a 576-byte copy per dispatch).
        let entry = process.catches_memory_faults().then_some(state);
        let due = verifier.as_mut().is_some_and(|v| v.due(&region));
        let exit = match verifier.as_mut().filter(|_| due) {
            Some(v) => {
                let reference = cache.get_or_translate(rip, Variant::Reference, &mut pipeline, &process.mem)?;
                v.check(&mut engine, &region, &reference, &mut state, &mut process)
            }
            None => engine.execute(&region, &mut state, &mut process),
        };
        let mut exit = exit.inspect_err(|_| report_summary(verifier.as_ref(), &engine, &mut pipeline, &cache))?;
        if let (RegionExit::Fault { from_jit: true, .. }, Some(entry)) = (&exit, entry) {
            // Not exact from the JIT: the interpreter replays the region
            // (run journaled, so alone and with its stores undone: see
            // `Engine::execute`) and stops at the fault; the JIT counted
            // that part already (instrumentation).
            state = entry;
            exit = crate::counters::muted(|| interp::run_region(&region, &mut state, &mut process.mem));
        }
        let fatal = match exit {
            // A signal came first: its handler runs, then the system call.
            RegionExit::Jump { kind: ExitKind::Syscall } if process.signal_before_syscall() => {
                state.rip -= SYSCALL_LEN;
                None
            }
            RegionExit::Jump { kind: ExitKind::Syscall } => match syscall::syscall(&mut process, &mut state) {
                SyscallOutcome::Continue => None,
                SyscallOutcome::Exit(status) => {
                    report_summary(verifier.as_ref(), &engine, &mut pipeline, &cache);
                    return Ok(status as u8);
                }
                SyscallOutcome::CodeChanged { start, len } => {
                    cache.invalidate(start, len);
                    engine.invalidate(start, len);
                    if let Some(v) = &mut verifier {
                        v.invalidate(start, len);
                    }
                    None
                }
            },
            RegionExit::Jump { .. } => None,
            RegionExit::Trap { kind } => process.trap(&mut state, kind),
            RegionExit::Fault { fault, .. } => process.fault(&mut state, fault),
        };
        if let Some(sig) = fatal {
            report_summary(verifier.as_ref(), &engine, &mut pipeline, &cache);
            crate::signals::die_with(sig);
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
fn report_summary(verifier: Option<&Verifier>, engine: &Engine, pipeline: &mut Pipeline, cache: &Cache) {
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
    if let Some(time) = engine.lowering_time() {
        stats.push_str(&format!(" ns.jit-lowering={}", time.as_nanos()));
    }
    if cache.seen.is_some() {
        stats.push_str(&format!(" retranslated_insns={}", cache.retranslated));
    }
    tracing::debug!("translation totals: {stats}");
    if stats_wanted() {
        eprintln!("aarchx-stats: {stats}");
    }
}

/// Whether `AARCHX_STATS` asks for the stats line.
fn stats_wanted() -> bool {
    std::env::var_os("AARCHX_STATS").is_some_and(|v| !v.is_empty())
}
