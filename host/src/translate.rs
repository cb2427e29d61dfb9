//! The translation pipeline: runs the policy's passes, in order, over one
//! region of guest code, and checks the IR with the verifier after each.

use aarchx_ir::verify::{verify, VerifyError};
use aarchx_ir::Region;
use aarchx_pass::{GuestCode, Pass, PassContext, PassError, TranslationConfig};

use crate::policy::ValidatedPass;

/// A translation that went wrong: a pass failed or produced invalid IR.
/// Either is a bug in that pass, reported with the region's address.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    #[error("pass `{pass}` failed on the region at {entry:#x}: {error}")]
    Pass { pass: &'static str, entry: u64, error: PassError },
    #[error("pass `{pass}` produced invalid IR for the region at {entry:#x}: {error}")]
    Invalid { pass: &'static str, entry: u64, error: VerifyError },
}

/// The instantiated passes of a policy, ready to translate regions.
pub struct Pipeline {
    passes: Vec<(&'static str, Box<dyn Pass>)>,
    config: TranslationConfig,
    check_each_pass: bool,
}

impl Pipeline {
    /// Creates every pass of the validated pipeline. The verifier runs after
    /// each pass in debug builds, and after the last one always.
    pub fn new(passes: &[ValidatedPass<'static>], config: TranslationConfig) -> Pipeline {
        Pipeline {
            passes: passes.iter().map(|p| (p.info.name, p.instantiate())).collect(),
            config,
            check_each_pass: cfg!(debug_assertions),
        }
    }

    /// Translates the guest code at `entry` into IR.
    pub fn translate(&mut self, entry: u64, code: &dyn GuestCode) -> Result<Region, TranslateError> {
        let mut region = Region::new(entry);
        let cx = PassContext { code, config: &self.config };
        let last = self.passes.len().saturating_sub(1);
        for (i, (name, pass)) in self.passes.iter_mut().enumerate() {
            pass.run(&cx, &mut region).map_err(|error| TranslateError::Pass { pass: name, entry, error })?;
            if self.check_each_pass || i == last {
                verify(&region).map_err(|error| TranslateError::Invalid { pass: name, entry, error })?;
            }
        }
        Ok(region)
    }
}
