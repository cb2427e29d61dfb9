//! The translation pipeline: runs the policy's passes, in order, over one
//! region of guest code, and checks the IR with the verifier after each.
//! A plugin pass that fails aborts the translation or, under its plugin's
//! `on_failure: Skip`, is left out for that region and counted.

use std::sync::Arc;

use aarchx_ir::verify::{verify, VerifyError};
use aarchx_ir::Region;
use aarchx_pass::{GuestCode, Pass, PassContext, PassError, TranslationConfig};

use crate::plugin::{Plugin, PluginError};
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
}

/// One instantiated pass of the pipeline.
struct Step {
    name: String,
    pass: Box<dyn Pass>,
    /// The plugin it comes from, if any.
    plugin: Option<Arc<Plugin>>,
    /// Regions translated without it after it failed (under `Skip`).
    skipped: u64,
}

/// The instantiated passes of a policy, ready to translate regions.
pub struct Pipeline {
    passes: Vec<Step>,
    config: TranslationConfig,
    check_each_pass: bool,
}

impl Pipeline {
    /// Creates every pass of the validated pipeline. The verifier runs after
    /// each pass in debug builds, and after the last one always.
    /// A plugin pass's `create` may refuse its options.
    pub fn new(passes: &[ValidatedPass<'_>], config: TranslationConfig) -> Result<Pipeline, PluginError> {
        let steps = passes
            .iter()
            .map(|p| {
                let plugin = p.info.plugin().cloned();
                Ok(Step { name: p.info.name.clone(), pass: p.instantiate()?, plugin, skipped: 0 })
            })
            .collect::<Result<_, PluginError>>()?;
        Ok(Pipeline { passes: steps, config, check_each_pass: cfg!(debug_assertions) })
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

    /// Translates the guest code at `entry` into IR.
    pub fn translate(&mut self, entry: u64, code: &dyn GuestCode) -> Result<Region, TranslateError> {
        let mut region = Region::new(entry);
        let cx = PassContext { code, config: &self.config };
        let last = self.passes.len().saturating_sub(1);
        for (i, step) in self.passes.iter_mut().enumerate() {
            if let Err(error) = step.pass.run(&cx, &mut region) {
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
            }
            if self.check_each_pass || i == last {
                verify(&region).map_err(|error| TranslateError::Invalid { pass: step.name.clone(), entry, error })?;
            }
        }
        Ok(region)
    }
}
