//! `aarchx passes`: every pass a policy can name, from the registry (the
//! built-in passes and those of the resolved policy's plugins), with its
//! stage, where it comes from, what it does and its options' types,
//! defaults and documentation.

use std::fmt::Write as _;

use aarchx_pass::OptionValue;

use crate::plugin::{PassSource, PluginError, Registry};
use crate::policy::Policy;

/// The listing for the registry of `policy` (its plugins loaded).
pub fn listing(policy: &Policy) -> Result<String, PluginError> {
    let registry = Registry::with_plugins(aarchx_passes::BUILTIN, &policy.plugins, policy.base_dir())?;
    let mut out = String::new();
    for (i, pass) in registry.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let (from, doc) = match &pass.source {
            PassSource::Builtin(info) => ("built in".to_string(), info.doc),
            _ => (format!("plugin {}", pass.plugin().map_or("?", |p| p.file.as_str())), ""),
        };
        let _ = writeln!(out, "{}  ({} stage, {from})", pass.name, pass.stage.name());
        if !doc.is_empty() {
            let _ = writeln!(out, "    {doc}");
        }
        for (what, names) in [("runs before", &pass.before), ("runs after", &pass.after)] {
            if !names.is_empty() {
                let _ = writeln!(out, "    {what}: {}", names.join(", "));
            }
        }
        if pass.options.is_empty() {
            let _ = writeln!(out, "    options: none");
        }
        for o in &pass.options {
            let _ = write!(out, "    {} ({}, default {})", o.name, o.default.kind(), value_text(&o.default));
            if !o.doc.is_empty() {
                let _ = write!(out, ": {}", o.doc);
            }
            out.push('\n');
        }
    }
    Ok(out)
}

/// An option value as a policy file writes it.
pub fn value_text(v: &OptionValue) -> String {
    match v {
        OptionValue::Bool(b) => b.to_string(),
        OptionValue::Int(i) => i.to_string(),
        OptionValue::Str(s) => format!("{s:?}"),
    }
}
