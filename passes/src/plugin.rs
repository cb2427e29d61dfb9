//! The built-in passes as plugin passes (feature `plugin`): [`Builtin`]
//! wraps a pass registered by a [`aarchx_pass::PassInfo`] as a
//! [`PluginPass`], with its name, stage and documentation taken from that
//! `PassInfo` and the pass created by its own factory, so
//! `plugins/builtin` exports these very passes from a shared library. Only
//! the option defaults are restated as constants (a `PassInfo` default is
//! a function, which a constant cannot call); a test checks they agree.

use core::marker::PhantomData;

use aarchx_ir::Region;
use aarchx_pass::{Options, Pass, PassContext, PassError, PassInfo, Report};
use aarchx_plugin_sdk::{OptionDescriptor, PassMeta, PluginPass};

use crate::{cond_fusion, const_fold, cse, dce, dead_flags, decode, memory_order, sink, state_forward, store_forward};

/// A built-in pass's registration, as constants.
pub trait Registered: 'static {
    const INFO: &'static PassInfo;
    /// `INFO.options` with their defaults as constants.
    const OPTIONS: &'static [OptionDescriptor];
}

/// The built-in pass `R` behind the plugin interface.
pub struct Builtin<R>(Box<dyn Pass>, PhantomData<R>);

impl<R: Registered> Pass for Builtin<R> {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        self.0.run(cx, region)
    }

    fn finish(&mut self, counters: &[u64]) -> Result<Report, PassError> {
        self.0.finish(counters)
    }
}

impl<R: Registered> PluginPass for Builtin<R> {
    const META: PassMeta = PassMeta {
        name: R::INFO.name,
        version: 1,
        stage: R::INFO.stage,
        doc: R::INFO.doc,
        options: R::OPTIONS,
        before: &[],
        after: &[],
    };

    fn create(options: &Options) -> Result<Self, PassError> {
        Ok(Builtin((R::INFO.create)(options), PhantomData))
    }
}

/// `decode`.
pub enum Decode {}
/// `dead-flags`.
pub enum DeadFlags {}

impl Registered for Decode {
    const INFO: &'static PassInfo = &decode::INFO;
    const OPTIONS: &'static [OptionDescriptor] = &[
        OptionDescriptor::int(decode::INFO.options[0].name, 64, decode::INFO.options[0].doc),
        OptionDescriptor::bool(decode::INFO.options[1].name, true, decode::INFO.options[1].doc),
        OptionDescriptor::int(decode::INFO.options[2].name, 256, decode::INFO.options[2].doc),
    ];
}

impl Registered for DeadFlags {
    const INFO: &'static PassInfo = &dead_flags::INFO;
    const OPTIONS: &'static [OptionDescriptor] = &[
        OptionDescriptor::int(dead_flags::INFO.options[0].name, 16, dead_flags::INFO.options[0].doc),
        OptionDescriptor::bool(dead_flags::INFO.options[1].name, true, dead_flags::INFO.options[1].doc),
        OptionDescriptor::bool(dead_flags::INFO.options[2].name, false, dead_flags::INFO.options[2].doc),
    ];
}

/// Registers built-in passes that take no options.
macro_rules! without_options {
    ($($(#[$doc:meta])* $name:ident = $module:ident;)*) => {$(
        $(#[$doc])*
        pub enum $name {}

        impl Registered for $name {
            const INFO: &'static PassInfo = &$module::INFO;
            const OPTIONS: &'static [OptionDescriptor] = &[];
        }
    )*};
}

without_options! {
    /// `dce`.
    Dce = dce;
    /// `memory-order`.
    MemoryOrder = memory_order;
    /// `state-forward`.
    StateForward = state_forward;
    /// `store-forward`.
    StoreForward = store_forward;
    /// `const-fold`.
    ConstFold = const_fold;
    /// `cse`.
    Cse = cse;
    /// `cond-fusion`.
    CondFusion = cond_fusion;
    /// `sink`.
    Sink = sink;
}

#[cfg(test)]
mod tests {
    use aarchx_pass::OptionValue;

    use super::*;

    /// The constant options are the `PassInfo`'s, in order, with the same
    /// kinds and defaults (names and docs are the `PassInfo`'s own).
    fn agrees<R: Registered>() {
        let info = R::INFO;
        assert_eq!(R::OPTIONS.len(), info.options.len(), "{}", info.name);
        for (d, spec) in R::OPTIONS.iter().zip(info.options) {
            assert_eq!(d.name.len, spec.name.len(), "{}", spec.name);
            let want = match (spec.default)() {
                OptionValue::Int(n) => OptionDescriptor::int(spec.name, n, spec.doc),
                OptionValue::Bool(b) => OptionDescriptor::bool(spec.name, b, spec.doc),
                OptionValue::Str(_) => panic!("{}: text options need a case here", spec.name),
            };
            assert_eq!((d.kind, d.default_int), (want.kind, want.default_int), "{}", spec.name);
        }
    }

    #[test]
    fn plugin_options_match_the_builtin_registration() {
        agrees::<Decode>();
        agrees::<DeadFlags>();
        agrees::<Dce>();
        agrees::<MemoryOrder>();
        agrees::<StateForward>();
        agrees::<StoreForward>();
        agrees::<ConstFold>();
        agrees::<Cse>();
        agrees::<CondFusion>();
        agrees::<Sink>();
    }
}
