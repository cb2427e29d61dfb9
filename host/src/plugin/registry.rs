//! The pass registry: every pass a policy can name, built-in or loaded
//! from a plugin, with what validation needs (stage, options, ordering
//! constraints) and how to create it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use aarchx_pass::{OptionError, OptionValue, Options, Pass, PassInfo, Stage};

use super::load::{self, Plugin, PluginError};
use super::native::PluginPass;
#[cfg(feature = "wasm")]
use super::wasm::WasmPassDef;
use crate::policy::PluginEntry;

/// One documented option of a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionDef {
    pub name: String,
    pub default: OptionValue,
    pub doc: String,
}

/// Where a pass's code is.
pub enum PassSource {
    /// Compiled into aarchx.
    Builtin(&'static PassInfo),
    /// A pass of a loaded plugin.
    Plugin(PluginPass),
    /// A pass of a loaded WASM plugin.
    #[cfg(feature = "wasm")]
    Wasm(WasmPassDef),
}

/// A pass a policy can name.
pub struct PassDef {
    pub name: String,
    pub stage: Stage,
    pub options: Vec<OptionDef>,
    /// Passes this one must run before, when the policy lists them.
    pub before: Vec<String>,
    /// Passes this one must run after, when the policy lists them.
    pub after: Vec<String>,
    pub source: PassSource,
}

impl PassDef {
    fn builtin(info: &'static PassInfo) -> PassDef {
        PassDef {
            name: info.name.to_string(),
            stage: info.stage,
            options: info
                .options
                .iter()
                .map(|o| OptionDef { name: o.name.to_string(), default: (o.default)(), doc: o.doc.to_string() })
                .collect(),
            before: Vec::new(),
            after: Vec::new(),
            source: PassSource::Builtin(info),
        }
    }

    /// The plugin the pass comes from, if any.
    pub fn plugin(&self) -> Option<&Arc<Plugin>> {
        match &self.source {
            PassSource::Builtin(_) => None,
            PassSource::Plugin(p) => Some(p.plugin()),
            #[cfg(feature = "wasm")]
            PassSource::Wasm(p) => Some(p.plugin()),
        }
    }

    /// Checks `given` against the declared options (see `Options::validate`).
    pub fn validate_options(&self, given: &BTreeMap<String, OptionValue>) -> Result<Options, OptionError> {
        let declared: Vec<(&str, OptionValue)> =
            self.options.iter().map(|o| (o.name.as_str(), o.default.clone())).collect();
        Options::validate(&declared, given)
    }

    /// Creates the pass with validated `options`.
    pub fn instantiate(&self, options: &Options) -> Result<Box<dyn Pass>, PluginError> {
        match &self.source {
            PassSource::Builtin(info) => Ok((info.create)(options)),
            PassSource::Plugin(p) => Ok(Box::new(p.create(options)?)),
            #[cfg(feature = "wasm")]
            PassSource::Wasm(p) => Ok(Box::new(p.create(options)?)),
        }
    }
}

/// The passes a policy can name.
pub struct Registry {
    passes: Vec<PassDef>,
}

impl Registry {
    /// The built-in passes only.
    pub fn builtin(builtin: &[&'static PassInfo]) -> Registry {
        Registry { passes: builtin.iter().map(|i| PassDef::builtin(i)).collect() }
    }

    /// The built-in passes and those of every plugin in `plugins`, loaded
    /// in order; relative plugin paths are taken from `base` (the policy
    /// file's folder). A plugin pass named like a built-in one replaces it
    /// (the policy asked for that plugin); two plugin passes of one name
    /// are an error.
    pub fn with_plugins(
        builtin: &[&'static PassInfo],
        plugins: &[PluginEntry],
        base: &Path,
    ) -> Result<Registry, PluginError> {
        let mut registry = Registry::builtin(builtin);
        for entry in plugins {
            for def in load::load(entry, base)? {
                match registry.passes.iter().position(|p| p.name == def.name) {
                    Some(i) if registry.passes[i].plugin().is_none() => {
                        tracing::debug!(pass = def.name, "a plugin pass replaces the built-in one");
                        registry.passes[i] = def;
                    }
                    Some(i) => {
                        let first = registry.passes[i].plugin().map_or_else(String::new, |p| p.file.clone());
                        let file = def.plugin().map_or_else(String::new, |p| p.file.clone());
                        return Err(PluginError::Duplicate { file, pass: def.name, first });
                    }
                    None => registry.passes.push(def),
                }
            }
        }
        Ok(registry)
    }

    pub fn get(&self, name: &str) -> Option<&PassDef> {
        self.passes.iter().find(|p| p.name == name)
    }

    /// Every pass, built-ins first.
    pub fn iter(&self) -> impl Iterator<Item = &PassDef> {
        self.passes.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked_and_defaulted() {
        let mut def = PassDef::builtin(&aarchx_passes::memory_order::INFO);
        def.options = vec![
            OptionDef { name: "n".into(), default: OptionValue::Int(3), doc: String::new() },
            OptionDef { name: "s".into(), default: OptionValue::Str("x".into()), doc: String::new() },
        ];
        let given = BTreeMap::from([("n".to_string(), OptionValue::Int(5))]);
        let o = def.validate_options(&given).unwrap();
        assert_eq!(o.int("n"), 5);
        assert_eq!(o.0["s"], OptionValue::Str("x".into()));
        let wrong = BTreeMap::from([("n".to_string(), OptionValue::Bool(true))]);
        assert_eq!(
            def.validate_options(&wrong),
            Err(OptionError::Kind { name: "n".into(), want: "integer", got: "bool" })
        );
        let unknown = BTreeMap::from([("m".to_string(), OptionValue::Int(1))]);
        assert_eq!(def.validate_options(&unknown), Err(OptionError::Unknown("m".into())));
        assert!(Registry::builtin(aarchx_passes::BUILTIN).iter().all(|d| d.plugin().is_none()));
    }
}
