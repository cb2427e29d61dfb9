//! `aarchx policy check` and `aarchx policy show`: a policy validated
//! against the registry, and the resolved settings of a run printed with
//! where each value came from.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use super::passes::value_text;
use crate::plugin::Registry;
use crate::policy::{self, Policy};
use crate::run::RunError;
use crate::settings::Settings;

/// Validates `policy` against the registry with its plugins; the names of
/// its passes, in order.
pub fn check(policy: &Policy) -> Result<Vec<String>, RunError> {
    let registry = Registry::with_plugins(aarchx_passes::BUILTIN, &policy.plugins, policy.base_dir())?;
    let passes = policy.validate(&registry).map_err(RunError::Policy)?;
    Ok(passes.iter().map(|p| p.info.name.clone()).collect())
}

/// The top-level fields a RON policy's `text` writes.
fn fields_given(text: &str) -> Option<BTreeSet<String>> {
    let options = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    match options.from_str::<ron::Value>(text).ok()? {
        ron::Value::Map(map) => Some(
            map.keys()
                .filter_map(|k| match k {
                    ron::Value::String(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// The text of `aarchx policy show`: the policy and why it was chosen, the
/// rules that applied, each setting and pass option with its origin, the
/// guest environment the rules add. `program` is the program shown, if
/// any.
pub fn show(settings: &Settings, program: Option<&Path>) -> Result<String, RunError> {
    let p = &settings.policy;
    let mut out = String::new();
    let policy_name = settings.policy_name();
    let _ = writeln!(out, "policy: {policy_name}  (from {})", settings.policy_origin);
    if let Some(program) = program {
        let _ = writeln!(out, "program: {}", program.display());
        if settings.rules.is_empty() {
            let _ = writeln!(out, "rule: none matches");
        }
    }
    for rule in &settings.rules {
        let _ = write!(out, "rule: {}", rule.rule);
        if !rule.reason.is_empty() {
            let _ = write!(out, ": {}", rule.reason);
        }
        out.push('\n');
    }
    // Which fields the policy writes; `None` when that cannot be told (a
    // Lua script computes its table).
    let given = match &settings.policy_file {
        Some(file) if file.extension().is_some_and(|e| e == "lua") => None,
        Some(file) => std::fs::read_to_string(file).ok().and_then(|text| fields_given(&text)),
        None => fields_given(policy::DEFAULT_POLICY),
    };
    let field_origin = |field: &str| match &given {
        Some(fields) if fields.contains(field) => policy_name.clone(),
        Some(_) => "default".to_string(),
        None => format!("computed by {policy_name}"),
    };
    let verify = p.verify.map_or("off".to_string(), |v| {
        format!("(first: {}, every: {}, on_mismatch: {:?})", v.first, v.every, v.on_mismatch)
    });
    for (field, value) in [
        ("backend", format!("{:?}", p.backend)),
        ("memory_model", format!("{:?}", p.memory_model)),
        ("tso_vector", p.tso_vector.to_string()),
        ("cpu_level", format!("{:?}", p.cpu_level)),
        ("afp", format!("{:?}", p.afp)),
        ("verify", verify),
    ] {
        let _ = writeln!(out, "{field}: {value}  ({})", field_origin(field));
    }
    for plugin in &p.plugins {
        let _ = writeln!(
            out,
            "plugin: {} (on_failure: {:?})  ({policy_name})",
            p.base_dir().join(&plugin.path).display(),
            plugin.on_failure
        );
    }
    let registry = Registry::with_plugins(aarchx_passes::BUILTIN, &p.plugins, p.base_dir())?;
    let passes = p.validate(&registry)?;
    let _ = writeln!(out, "passes:  ({})", field_origin("passes"));
    for (entry, validated) in p.passes.iter().zip(&passes) {
        let quick = if validated.quick { "" } else { "  (not on quick translations)" };
        let _ = writeln!(out, "  {}{quick}", entry.name);
        for (name, value) in &validated.options.0 {
            let origin = match entry.source.set_by.get(name) {
                Some(set) => set.clone(),
                None if entry.options.contains_key(name) => policy_name.clone(),
                None => "default".into(),
            };
            let _ = writeln!(out, "    {name} = {}  ({origin})", value_text(value));
        }
    }
    for (name, (value, origin)) in &settings.env {
        let _ = writeln!(out, "env: {name}={value}  ({origin})");
    }
    Ok(out)
}
