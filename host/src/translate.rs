//! The translation pipeline: runs the policy's passes, in order, over one
//! region of guest code, and checks the IR with the verifier (see
//! [`Pipeline::new`] for when).
//! A plugin pass that fails aborts the translation or, under its plugin's
//! `on_failure: Skip`, is left out for that region and counted. A built-in
//! pass that fails (an error, a panic, IR the verifier rejects) is a bug of
//! aarchx's: the region is translated by the reference pipeline instead,
//! with one warning line, or, under verify mode, the translation fails. A
//! Lua policy's `on_region` hook, asked once the decode-stage passes have
//! run, switches later passes off for that region; a pass the policy
//! marks `quick: false` is off for quick translations (the first tier).
//!
//! The *reference* translation of a region runs only the policy's
//! decode-stage passes (the lifter) and its lowering-stage passes (what
//! the backend's contract requires, such as memory order): the IR that
//! defines what the guest code does, against which verify mode checks the
//! optimised one.
//!
//! The `count` instructions a pass emits are renumbered to global counters
//! right after it (see [`crate::counters`]); when the guest ends,
//! [`Pipeline::finish`] hands each pass its counters' values and carries
//! out its report (stderr text, a file to write).

use std::sync::Arc;
use std::time::{Duration, Instant};

use aarchx_ir::verify::{verify, VerifyError};
use aarchx_ir::{ExitKind, Opcode, Region};
use aarchx_pass::{GuestCode, Pass, PassContext, PassError, Report, Stage, TranslationConfig};

use crate::counters::{CounterError, PassCounters};
use crate::panics::without_panicking;

use crate::plugin::{Plugin, PluginError};
use crate::policy::lua::{HookError, RegionFacts, RegionHook};
use crate::policy::{OnFailure, ValidatedPass};

/// A translation that went wrong: a pass failed or produced invalid IR.
/// Either is a bug in that pass, reported with the region's address.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    #[error("pass `{pass}` failed on the region at {entry:#x}: {error}")]
    Pass { pass: String, entry: u64, error: PassError },
    #[error("pass `{pass}` produced invalid IR for the region at {entry:#x}: {error}")]
    Invalid { pass: String, entry: u64, error: VerifyError },
    #[error("pass `{pass}` of plugin {plugin} failed on the region at {entry:#x}: {error}")]
    Plugin { pass: String, plugin: String, entry: u64, error: PassError },
    /// The policy's `on_region` hook failed or named a pass it cannot
    /// switch off.
    #[error("{0}")]
    Hook(#[from] HookError),
    #[error("pass `{pass}` instrumented the region at {entry:#x} wrongly: {error}")]
    Counters { pass: String, entry: u64, error: CounterError },
    #[error("pass `{pass}` panicked on the region at {entry:#x}: {message}")]
    Panic { pass: String, entry: u64, message: String },
}

impl TranslateError {
    /// The built-in pass that failed, if a built-in pass did (a plugin's
    /// failures follow its `on_failure`, the hook's are the policy's).
    fn builtin_pass(&self) -> Option<&str> {
        match self {
            TranslateError::Pass { pass, .. }
            | TranslateError::Invalid { pass, .. }
            | TranslateError::Counters { pass, .. }
            | TranslateError::Panic { pass, .. } => Some(pass),
            TranslateError::Plugin { .. } | TranslateError::Hook(_) => None,
        }
    }
}

/// Failing regions warned about one by one; past these only the total is
/// reported, at exit.
const FALLBACK_WARNINGS: u64 = 10;

/// Which translation of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Every pass of the policy.
    Policy,
    /// The decode and lowering stages only (see the module comment).
    Reference,
}

/// How a region was decoded. Under tiering (the decode pass's
/// `tier_up`, run by `crate::run`), a region is first translated `Quick`: no branch or call
/// followed, cheap to make, and run from the dispatcher only (never
/// chained to), which counts its runs; after `tier_up` runs it is
/// translated again as a `Superblock`, which replaces it. Code that runs a
/// few times (most of a program's start-up) is never translated twice
/// into overlapping superblocks; hot code gets them after a few runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Shape {
    Quick,
    #[default]
    Superblock,
}

/// What a built-in pass failing on a region does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassFailure {
    /// Warn and run the region's reference translation.
    Fallback,
    /// Fail the translation (verify mode: a test must see the bug).
    Fail,
}

/// One instantiated pass of the pipeline.
struct Step {
    name: String,
    stage: Stage,
    pass: Box<dyn Pass>,
    /// The plugin it comes from, if any.
    plugin: Option<Arc<Plugin>>,
    /// Whether it runs on quick translations too.
    quick: bool,
    /// Regions translated without it after it failed (under `Skip`).
    skipped: u64,
    /// The counters of its `count` instructions.
    counters: PassCounters,
    /// Time spent in its `run`.
    time: Duration,
}

/// The instantiated passes of a policy, ready to translate regions.
pub struct Pipeline {
    passes: Vec<Step>,
    config: TranslationConfig,
    /// Runs of a quick translation before its superblock (the built-in
    /// decode pass's `tier_up`; 0 with a plugin decode stage).
    tier_up: u32,
    check_each_pass: bool,
    /// Whether the verifier checks the finished region (see [`Pipeline::new`]).
    check_last: bool,
    hook: Option<RegionHook>,
    on_failure: PassFailure,
    /// Regions whose built-in pass failed and that run their reference
    /// translation instead.
    fell_back: u64,
    /// Time spent in the IR verifier.
    verify_time: Duration,
    /// Whether `finish` has run.
    finished: bool,
}

impl Pipeline {
    /// Creates every pass of the validated pipeline. The verifier runs after
    /// each pass in debug builds; after the last one when a plugin pass is
    /// in the pipeline (its IR is not aarchx's own), or under
    /// [`PassFailure::Fail`] (verify mode, `aarchx explain`, the tests'
    /// pipelines). A release run of built-in passes alone skips it: they
    /// are checked by those (the fuzzers, the codegen fixtures and verify
    /// mode run every pass with the verifier), and on the fast path it
    /// cost as much as a pass (docs/benchmarks.md, Cold code).
    /// A plugin pass's `create` may refuse its options. `hook` is the
    /// policy's `on_region`, if it has one.
    pub fn new(
        passes: &[ValidatedPass<'_>],
        config: TranslationConfig,
        hook: Option<RegionHook>,
        on_failure: PassFailure,
    ) -> Result<Pipeline, PluginError> {
        let steps = passes
            .iter()
            .map(|p| {
                let plugin = p.info.plugin().cloned();
                let (name, stage) = (p.info.name.clone(), p.info.stage);
                let (counters, quick, time) = (PassCounters::default(), p.quick, Duration::ZERO);
                Ok(Step { name, stage, pass: p.instantiate()?, plugin, quick, skipped: 0, counters, time })
            })
            .collect::<Result<_, PluginError>>()?;
        let tier_up = passes
            .first()
            .filter(|p| p.info.name == aarchx_passes::decode::INFO.name && p.info.plugin().is_none())
            .map_or(0, |p| aarchx_passes::decode::tier_up(&p.options));
        Ok(Pipeline {
            passes: steps,
            config,
            tier_up,
            check_each_pass: cfg!(debug_assertions),
            check_last: on_failure == PassFailure::Fail || passes.iter().any(|p| p.info.plugin().is_some()),
            hook,
            on_failure,
            fell_back: 0,
            verify_time: Duration::ZERO,
            finished: false,
        })
    }

    /// Whether a region hook wants each region's execution count.
    /// The translation settings regions are made under.
    pub fn config(&self) -> &TranslationConfig {
        &self.config
    }

    /// Runs of a region's quick translation after which the runtime asks
    /// for its superblock; 0: superblocks from the first translation.
    pub fn tier_up(&self) -> u32 {
        self.tier_up
    }

    /// Translates from now on under `model` (`memory_model: Auto` when
    /// the guest starts a thread).
    pub fn set_memory_model(&mut self, model: aarchx_pass::MemoryModel) {
        self.config.memory_model = model;
    }

    pub fn has_region_hook(&self) -> bool {
        self.hook.is_some()
    }

    /// One line per plugin pass that was skipped on some regions, for the
    /// report at exit.
    pub fn summary(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .passes
            .iter()
            .filter(|s| s.skipped > 0)
            .map(|s| {
                let file = s.plugin.as_ref().map_or("", |p| p.file.as_str());
                format!(
                    "aarchx: plugin pass `{}` ({file}) failed on {} regions, translated without it",
                    s.name, s.skipped
                )
            })
            .collect();
        if self.fell_back > FALLBACK_WARNINGS {
            lines.push(format!(
                "aarchx: warning: {} regions ran their reference translation after a pass failed on them",
                self.fell_back
            ));
        }
        lines
    }

    /// Where translation time went: each pass by name (entries of one name
    /// summed), in pipeline order, then the IR verifier.
    pub fn times(&self) -> Vec<(String, Duration)> {
        let mut times: Vec<(String, Duration)> = Vec::new();
        for s in &self.passes {
            match times.iter_mut().find(|(n, _)| *n == s.name) {
                Some((_, t)) => *t += s.time,
                None => times.push((s.name.clone(), s.time)),
            }
        }
        times.push((String::from("ir-verifier"), self.verify_time));
        times
    }

    /// Translates the guest code at `entry` into IR, as `variant` asks,
    /// as a superblock or (`superblocks` false) a quick translation that
    /// follows no branch. `executions` is how often the dispatcher looked
    /// `entry` up before (for the region hook). A built-in pass that fails
    /// on the region gives its reference translation, with a warning on
    /// stderr, unless the pipeline was made with [`PassFailure::Fail`].
    pub fn translate(
        &mut self,
        entry: u64,
        code: &dyn GuestCode,
        executions: u64,
        variant: Variant,
        superblocks: bool,
    ) -> Result<Region, TranslateError> {
        self.config.superblocks = superblocks;
        match self.run_passes(entry, code, executions, variant, None) {
            Err(e) if variant == Variant::Policy && self.on_failure == PassFailure::Fallback && self.optional(&e) => {
                self.fell_back += 1;
                if self.fell_back <= FALLBACK_WARNINGS {
                    eprintln!("aarchx: warning: {e}; running its reference translation");
                }
                self.run_passes(entry, code, executions, Variant::Reference, None)
            }
            other => other,
        }
    }

    /// Translates the guest code at `entry` with every pass of the policy,
    /// handing `observe` each pass's name and the region after it (passes
    /// the region hook switched off are not shown), the IR verifier after
    /// each. No fallback: a pass that fails is the error (`aarchx explain`).
    pub fn translate_observed(
        &mut self,
        entry: u64,
        code: &dyn GuestCode,
        superblocks: bool,
        observe: &mut dyn FnMut(&str, &Region),
    ) -> Result<Region, TranslateError> {
        self.config.superblocks = superblocks;
        self.run_passes(entry, code, 0, Variant::Policy, Some(observe))
    }

    /// Whether the pass that failed with `e` is one the reference
    /// translation leaves out: a built-in pass after the decode stage.
    fn optional(&self, e: &TranslateError) -> bool {
        e.builtin_pass().is_some_and(|name| {
            self.passes.iter().any(|s| s.name == name && !matches!(s.stage, Stage::Decode | Stage::Lowering))
        })
    }

    /// Runs the passes `variant` takes over a new region at `entry`,
    /// showing `observe` the region after each one that ran.
    fn run_passes(
        &mut self,
        entry: u64,
        code: &dyn GuestCode,
        executions: u64,
        variant: Variant,
        mut observe: Option<&mut dyn FnMut(&str, &Region)>,
    ) -> Result<Region, TranslateError> {
        let mut region = Region::new(entry);
        let cx = PassContext { code, config: &self.config };
        let last = self.passes.len().saturating_sub(1);
        let mut off: Vec<bool> = Vec::new();
        // Whether passes marked `quick: false` are left out: in a quick
        // translation that leaves by a direct exit. One that does not is
        // final (the runtime keeps it as the superblock) and gets them all.
        let mut quick_only = false;
        for i in 0..self.passes.len() {
            let in_variant = match variant {
                Variant::Policy => true,
                Variant::Reference => matches!(self.passes[i].stage, Stage::Decode | Stage::Lowering),
            };
            if self.passes[i].stage != Stage::Decode && i > 0 && self.passes[i - 1].stage == Stage::Decode {
                quick_only = !self.config.superblocks && leaves_directly(&region);
                if variant == Variant::Policy {
                    off = self.passes_off(&region, executions)?;
                }
            }
            let step = &mut self.passes[i];
            let switched_off = off.get(i).copied().unwrap_or(false) || (!step.quick && quick_only);
            // Where the pass's own counts can be (see `PassCounters::remap`).
            let counts_from = if step.plugin.is_some() { 0 } else { region.insts.len() };
            let ran = if !in_variant {
                Ok(())
            } else if switched_off {
                tracing::trace!(pass = step.name, entry = format_args!("{entry:#x}"), "switched off for this region");
                Ok(())
            } else {
                let (pass, region) = (&mut step.pass, &mut region);
                let started = Instant::now();
                let ran = without_panicking(|| pass.run(&cx, region));
                step.time += started.elapsed();
                match ran {
                    Ok(result) => result,
                    Err(message) if step.plugin.is_none() => {
                        return Err(TranslateError::Panic { pass: step.name.clone(), entry, message })
                    }
                    Err(message) => Err(PassError(format!("panicked: {message}"))),
                }
            };
            if let Err(error) = ran {
                // A failed plugin pass leaves the region as it was.
                match &step.plugin {
                    None => return Err(TranslateError::Pass { pass: step.name.clone(), entry, error }),
                    Some(p) if p.on_failure == OnFailure::Skip => {
                        tracing::debug!(
                            pass = step.name,
                            entry = format_args!("{entry:#x}"),
                            "plugin pass skipped: {error}"
                        );
                        step.skipped += 1;
                    }
                    Some(p) => {
                        return Err(TranslateError::Plugin {
                            pass: step.name.clone(),
                            plugin: p.file.clone(),
                            entry,
                            error,
                        })
                    }
                }
            } else if in_variant && !switched_off {
                step.counters.remap(&mut region, counts_from).map_err(|error| TranslateError::Counters {
                    pass: step.name.clone(),
                    entry,
                    error,
                })?;
            }
            if self.check_each_pass || (self.check_last && i == last) || observe.is_some() {
                let started = Instant::now();
                let checked = verify(&region);
                self.verify_time += started.elapsed();
                checked.map_err(|error| TranslateError::Invalid { pass: self.passes[i].name.clone(), entry, error })?;
            }
            if let Some(observe) = observe.as_deref_mut().filter(|_| in_variant && !switched_off) {
                observe(&self.passes[i].name, &region);
            }
        }
        Ok(region)
    }

    /// Runs every pass's `finish` with its counters (once; later calls do
    /// nothing), writes the files the reports ask for and returns the lines
    /// for stderr: each report's text, and one line per pass whose finish
    /// failed or whose file could not be written.
    pub fn finish(&mut self) -> Vec<String> {
        if std::mem::replace(&mut self.finished, true) {
            return Vec::new();
        }
        let mut lines = Vec::new();
        for step in &mut self.passes {
            match step.pass.finish(&step.counters.values()) {
                Ok(report) => lines.extend(carry_out(&step.name, report)),
                Err(error) => lines.push(format!("aarchx: pass `{}` failed at exit: {error}", step.name)),
            }
        }
        lines
    }

    /// Asks the region hook, if any, which passes to leave out of `region`
    /// (decoded so far); one flag per pass. Only passes after the decode
    /// stage can be left out.
    fn passes_off(&self, region: &Region, executions: u64) -> Result<Vec<bool>, HookError> {
        let Some(hook) = &self.hook else { return Ok(Vec::new()) };
        let (mut insns, mut stop) = (0, region.entry);
        for (addr, len) in region.guest_insns() {
            insns += 1;
            stop = stop.max(addr + u64::from(len));
        }
        let facts = RegionFacts { start: region.entry, stop, insns, executions };
        let mut off = vec![false; self.passes.len()];
        for name in hook.passes_off(&facts)? {
            let found: Vec<usize> = (0..self.passes.len()).filter(|&i| self.passes[i].name == name).collect();
            if found.is_empty() {
                let names: Vec<String> = self.passes.iter().map(|s| format!("`{}`", s.name)).collect();
                return Err(hook.error(format!(
                    "on_region returned `{name}`, which is not a pass of this policy ({})",
                    names.join(", ")
                )));
            }
            for i in found {
                if self.passes[i].stage == Stage::Decode {
                    return Err(hook.error(format!(
                        "on_region returned `{name}`, a decode-stage pass; only later passes can be switched off"
                    )));
                }
                off[i] = true;
            }
        }
        Ok(off)
    }
}

/// Whether `region` leaves by a direct jump or call, which a superblock
/// would follow.
pub fn leaves_directly(region: &Region) -> bool {
    region.blocks.iter().filter_map(|b| b.insts.last()).any(|v| {
        let d = region.inst(*v);
        d.op == Opcode::Exit && matches!(ExitKind::from_u16(d.aux), Some(ExitKind::Jump | ExitKind::Call))
    })
}

/// Writes the file `report` asks for; returns its text's lines and, if the
/// file could not be written, a line saying so.
fn carry_out(pass: &str, report: Report) -> Vec<String> {
    let mut lines: Vec<String> = report.text.lines().map(String::from).collect();
    if let Some(file) = report.file {
        if let Err(e) = std::fs::write(&file.path, &file.bytes) {
            lines.push(format!("aarchx: pass `{pass}`: cannot write {}: {e}", file.path));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use aarchx_pass::{CpuLevel, MemoryModel, Options, PassInfo};

    use super::*;
    use crate::plugin::Registry;

    /// A built-in pass with a bug: it panics on every region.
    struct Panics;

    impl Pass for Panics {
        fn run(&mut self, _: &PassContext<'_>, _: &mut Region) -> Result<(), PassError> {
            panic!("a bug in a pass")
        }
    }

    static PANICS: PassInfo = PassInfo {
        name: "panics",
        stage: Stage::Transform,
        doc: "Panics.",
        options: &[],
        create: |_: &Options| Box::new(Panics),
    };

    /// `add rax, 1; ret` at 0x1000.
    struct Code;

    impl GuestCode for Code {
        fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
            read_at(&[0x48, 0x83, 0xc0, 0x01, 0xc3], addr, buf)
        }
    }

    /// `add rax, 1; jmp 0x1006` at 0x1000: a quick translation leaves by
    /// a direct jump.
    struct JumpCode;

    impl GuestCode for JumpCode {
        fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
            read_at(&[0x48, 0x83, 0xc0, 0x01, 0xeb, 0x00], addr, buf)
        }
    }

    /// Reads `code`, placed at 0x1000, from `addr` into `buf`.
    fn read_at(code: &[u8], addr: u64, buf: &mut [u8]) -> usize {
        let Some(src) = addr.checked_sub(0x1000).and_then(|o| code.get(o as usize..)) else { return 0 };
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        n
    }

    fn pipeline(passes: &str, on_failure: PassFailure) -> Pipeline {
        let registry = Registry::builtin(&[&aarchx_passes::decode::INFO, &PANICS, &aarchx_passes::memory_order::INFO]);
        let policy = crate::policy::parse(&format!("(passes: [{passes}])"), "t.ron").expect("parses");
        let passes = policy.validate(&registry).expect("validates");
        let config = TranslationConfig {
            memory_model: MemoryModel::Ordered,
            tso_vector: false,
            cpu_level: CpuLevel::V1,
            superblocks: true,
        };
        Pipeline::new(&passes, config, None, on_failure).expect("pipeline")
    }

    #[test]
    fn a_failing_builtin_pass_gives_the_reference_translation_or_fails_under_verify() {
        let passes = r#"(name: "decode"), (name: "panics"), (name: "memory-order")"#;
        let reference = pipeline(passes, PassFailure::Fallback).translate(0x1000, &Code, 0, Variant::Reference, true);
        let reference = reference.expect("the reference leaves `panics` out");
        // memory-order, a lowering pass, is part of the reference: the
        // ret's load is ordered.
        assert!(aarchx_ir::print::print(&reference).contains("load.i64 ordered"));
        let mut fallback = pipeline(passes, PassFailure::Fallback);
        assert_eq!(fallback.translate(0x1000, &Code, 0, Variant::Policy, true).expect("falls back"), reference);
        match pipeline(passes, PassFailure::Fail).translate(0x1000, &Code, 0, Variant::Policy, true) {
            Err(TranslateError::Panic { pass, entry: 0x1000, message }) => {
                assert_eq!((pass.as_str(), message.as_str()), ("panics", "a bug in a pass"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_pass_marked_quick_false_is_left_out_of_quick_translations_that_are_not_final() {
        let passes = r#"(name: "decode"), (name: "panics", quick: false), (name: "memory-order")"#;
        let mut p = pipeline(passes, PassFailure::Fail);
        let quick = p.translate(0x1000, &JumpCode, 0, Variant::Policy, false).expect("`panics` is left out");
        let reference = p.translate(0x1000, &JumpCode, 0, Variant::Reference, false).expect("the reference");
        assert_eq!(quick, reference);
        // The superblock, and a quick translation with no direct exit (the
        // runtime keeps it as the superblock), run it.
        for (code, superblock) in [(&JumpCode as &dyn GuestCode, true), (&Code, false)] {
            match p.translate(0x1000, code, 0, Variant::Policy, superblock) {
                Err(TranslateError::Panic { pass, .. }) => assert_eq!(pass, "panics"),
                other => panic!("`panics` did not run: {other:?}"),
            }
        }
    }
}
