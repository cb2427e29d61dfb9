//! The translation pipeline: runs the policy's passes, in order, over one
//! region of guest code, and checks the IR with the verifier after each.
//! A plugin pass that fails aborts the translation or, under its plugin's
//! `on_failure: Skip`, is left out for that region and counted. A Lua
//! policy's `on_region` hook, asked once the decode-stage passes have run,
//! switches later passes off for that region.
//!
//! The `count` instructions a pass emits are renumbered to global counters
//! right after it (see [`crate::counters`]); when the guest ends,
//! [`Pipeline::finish`] hands each pass its counters' values and carries
//! out its report (stderr text, a file to write).

use std::sync::Arc;

use aarchx_ir::verify::{verify, VerifyError};
use aarchx_ir::Region;
use aarchx_pass::{GuestCode, Pass, PassContext, PassError, Report, Stage, TranslationConfig};

use crate::counters::{CounterError, PassCounters};

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
}

/// One instantiated pass of the pipeline.
struct Step {
    name: String,
    stage: Stage,
    pass: Box<dyn Pass>,
    /// The plugin it comes from, if any.
    plugin: Option<Arc<Plugin>>,
    /// Regions translated without it after it failed (under `Skip`).
    skipped: u64,
    /// The counters of its `count` instructions.
    counters: PassCounters,
}

/// The instantiated passes of a policy, ready to translate regions.
pub struct Pipeline {
    passes: Vec<Step>,
    config: TranslationConfig,
    check_each_pass: bool,
    hook: Option<RegionHook>,
    /// Whether `finish` has run.
    finished: bool,
}

impl Pipeline {
    /// Creates every pass of the validated pipeline. The verifier runs after
    /// each pass in debug builds, and after the last one always.
    /// A plugin pass's `create` may refuse its options. `hook` is the
    /// policy's `on_region`, if it has one.
    pub fn new(
        passes: &[ValidatedPass<'_>],
        config: TranslationConfig,
        hook: Option<RegionHook>,
    ) -> Result<Pipeline, PluginError> {
        let steps = passes
            .iter()
            .map(|p| {
                let plugin = p.info.plugin().cloned();
                let (name, stage) = (p.info.name.clone(), p.info.stage);
                let counters = PassCounters::default();
                Ok(Step { name, stage, pass: p.instantiate()?, plugin, skipped: 0, counters })
            })
            .collect::<Result<_, PluginError>>()?;
        Ok(Pipeline { passes: steps, config, check_each_pass: cfg!(debug_assertions), hook, finished: false })
    }

    /// Whether a region hook wants each region's execution count.
    pub fn has_region_hook(&self) -> bool {
        self.hook.is_some()
    }

    /// One line per plugin pass that was skipped on some regions, for the
    /// report at exit.
    pub fn summary(&self) -> Vec<String> {
        self.passes
            .iter()
            .filter(|s| s.skipped > 0)
            .map(|s| {
                let file = s.plugin.as_ref().map_or("", |p| p.file.as_str());
                format!(
                    "aarchx: plugin pass `{}` ({file}) failed on {} regions, translated without it",
                    s.name, s.skipped
                )
            })
            .collect()
    }

    /// Translates the guest code at `entry` into IR. `executions` is how
    /// often the dispatcher looked `entry` up before (for the region hook).
    pub fn translate(&mut self, entry: u64, code: &dyn GuestCode, executions: u64) -> Result<Region, TranslateError> {
        let mut region = Region::new(entry);
        let cx = PassContext { code, config: &self.config };
        let last = self.passes.len().saturating_sub(1);
        let mut off: Vec<bool> = Vec::new();
        for i in 0..self.passes.len() {
            if self.passes[i].stage != Stage::Decode && i > 0 && self.passes[i - 1].stage == Stage::Decode {
                off = self.passes_off(&region, executions)?;
            }
            let step = &mut self.passes[i];
            if off.get(i).copied().unwrap_or(false) {
                tracing::trace!(pass = step.name, entry = format_args!("{entry:#x}"), "switched off by on_region");
            } else if let Err(error) = step.pass.run(&cx, &mut region) {
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
            } else {
                step.counters.remap(&mut region).map_err(|error| TranslateError::Counters {
                    pass: step.name.clone(),
                    entry,
                    error,
                })?;
            }
            if self.check_each_pass || i == last {
                verify(&region).map_err(|error| TranslateError::Invalid { pass: step.name.clone(), entry, error })?;
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
