//! The settings of one run and where each came from. The policy is the
//! command line's `--policy`, else `$AARCHX_POLICY`, else the policy of the
//! per-program rule that applies (the user's rules file over the
//! system's), else the built-in default. `--set` overrides apply in the
//! order system rule, user rule, `$AARCHX_CACHE` (the cache's mode), command
//! line (a later one wins). A rule's
//! environment variables are added to the guest's, the user's rule over
//! the system's, a variable already in the environment kept. A policy
//! named without a path (`ordered`) is looked up beside the running
//! binary, then in the source tree ([`find_policy`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::policy::{self, Policy, PolicyError};
use crate::programs::{Rules, RulesError};

/// Where the installed policies are, relative to the folder of the
/// running aarchx binary (`/usr/bin/aarchx` finds `/usr/share/aarchx/policies`).
const SHARE_POLICIES: &str = "../share/aarchx/policies";
/// The source tree's policies, for a binary run from its build folder.
const SOURCE_POLICIES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies");

/// Where a setting came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    CommandLine,
    /// `$AARCHX_POLICY`.
    Environment,
    /// A per-program rule, described as `FILE rule N (`PATTERN`)`.
    Rule(String),
    /// aarchx's own default.
    BuiltIn,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::CommandLine => f.write_str("command line"),
            Origin::Environment => f.write_str("AARCHX_POLICY"),
            Origin::Rule(rule) => f.write_str(rule),
            Origin::BuiltIn => f.write_str("built in"),
        }
    }
}

/// What a run was asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Request<'a> {
    /// `--policy`.
    pub policy: Option<&'a OsStr>,
    /// `--set`, in order.
    pub sets: &'a [String],
    /// The guest program, when there is one (rules match it; a Lua policy
    /// sees it).
    pub program: Option<&'a Path>,
    pub args: &'a [OsString],
}

/// A rule that applied, with why it exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedRule {
    pub rule: String,
    pub reason: String,
}

/// The resolved settings.
#[derive(Debug)]
pub struct Settings {
    pub policy: Policy,
    /// The policy's file; `None` for the built-in default.
    pub policy_file: Option<PathBuf>,
    pub policy_origin: Origin,
    /// Variables the rules add to the guest's environment (those not
    /// already in it), with their origin.
    pub env: BTreeMap<String, (String, Origin)>,
    /// The rules that matched the program, system's first.
    pub rules: Vec<AppliedRule>,
}

impl Settings {
    /// The policy as messages name it: its file, or the built-in default.
    pub fn policy_name(&self) -> String {
        self.policy_file.as_ref().map_or_else(|| "<built-in default policy>".into(), |f| f.display().to_string())
    }
}

/// Settings that cannot be resolved; one line each.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{0}")]
    Rules(#[from] RulesError),
    #[error("{0}")]
    Policy(#[from] PolicyError),
    #[error("policy `{name}` (from {origin}) not found: looked for {name}.ron and {name}.lua in {}", .dirs.join(", "))]
    NotFound { name: String, origin: Origin, dirs: Vec<String> },
    #[error("{rule}: {error}")]
    RuleSet { rule: String, error: PolicyError },
}

/// The per-program rules files, system's first: `$AARCHX_SYSCONFDIR` (for
/// tests and packaging; default `/etc`)`/aarchx/programs.ron`, then
/// `$XDG_CONFIG_HOME/aarchx/programs.ron` (default `~/.config/...`).
pub fn rules_files() -> Vec<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let system = var("AARCHX_SYSCONFDIR").unwrap_or_else(|| PathBuf::from("/etc"));
    let mut files = vec![system.join("aarchx/programs.ron")];
    if let Some(config) = var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|h| h.join(".config"))) {
        files.push(config.join("aarchx/programs.ron"));
    }
    files
}

/// The folders a policy named without a path is looked for in, in order.
pub fn policy_dirs() -> Vec<PathBuf> {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|d| d.join(SHARE_POLICIES)));
    beside.into_iter().chain([PathBuf::from(SOURCE_POLICIES)]).map(|d| std::fs::canonicalize(&d).unwrap_or(d)).collect()
}

/// The file `--policy VALUE` means. A value with a `/`, or ending in
/// `.ron` or `.lua`, is a file (relative ones taken from `base`); any other
/// is an installed policy's name, `NAME.ron` or `NAME.lua` in
/// [`policy_dirs`]. `default` not found there is the built-in default
/// (`Ok(None)`).
pub fn find_policy(value: &OsStr, base: &Path, origin: &Origin) -> Result<Option<PathBuf>, SettingsError> {
    let path = Path::new(value);
    let text = value.to_string_lossy();
    if text.contains('/') || path.extension().is_some_and(|e| e == "ron" || e == "lua") {
        return Ok(Some(base.join(path)));
    }
    let dirs = policy_dirs();
    for dir in &dirs {
        for ext in ["ron", "lua"] {
            let file = dir.join(format!("{text}.{ext}"));
            if file.is_file() {
                return Ok(Some(file));
            }
        }
    }
    if text == "default" {
        return Ok(None);
    }
    Err(SettingsError::NotFound {
        name: text.into_owned(),
        origin: origin.clone(),
        dirs: dirs.iter().map(|d| d.display().to_string()).collect(),
    })
}

/// Resolves the settings for `request`, reading the rules files and the
/// policy.
pub fn resolve(request: &Request<'_>) -> Result<Settings, SettingsError> {
    let files: Vec<Rules> =
        rules_files().iter().filter_map(|f| Rules::load(f).transpose()).collect::<Result<_, _>>()?;
    let applied: Vec<_> = match request.program {
        Some(program) => files.iter().filter_map(|r| r.find(program)).collect(),
        None => Vec::new(),
    };
    let env_policy = std::env::var_os("AARCHX_POLICY").filter(|v| !v.is_empty());
    let rule_policy = applied.iter().rev().find_map(|a| Some((a, a.rule.policy.as_ref()?)));
    let here = PathBuf::new();
    let (choice, policy_origin, base) = if let Some(p) = request.policy {
        (Some(p.to_os_string()), Origin::CommandLine, here)
    } else if let Some(p) = env_policy {
        (Some(p), Origin::Environment, here)
    } else if let Some((a, p)) = rule_policy {
        let dir = a.file.parent().unwrap_or(Path::new("")).to_path_buf();
        (Some(OsString::from(p)), Origin::Rule(a.describe()), dir)
    } else {
        (None, Origin::BuiltIn, here)
    };
    let policy_file = match &choice {
        Some(value) => find_policy(value, &base, &policy_origin)?,
        None => None,
    };
    let mut policy = match &policy_file {
        Some(file) => policy::load(file, request.program.unwrap_or(Path::new("")), request.args)?,
        None => policy::builtin_default(),
    };
    let mut env = BTreeMap::new();
    for a in &applied {
        for set in &a.rule.set {
            let rule = a.describe();
            policy.apply_set(set, Some(&rule)).map_err(|error| SettingsError::RuleSet { rule, error })?;
        }
        for (name, value) in &a.rule.env {
            if std::env::var_os(name).is_none() {
                env.insert(name.clone(), (value.clone(), Origin::Rule(a.describe())));
            }
        }
    }
    if let Some(mode) = std::env::var_os("AARCHX_CACHE").filter(|v| !v.is_empty()) {
        policy.apply_set(&format!("cache.mode={}", mode.to_string_lossy()), Some("AARCHX_CACHE"))?;
    }
    for set in request.sets {
        policy.apply_set(set, None)?;
    }
    let rules = applied.iter().map(|a| AppliedRule { rule: a.describe(), reason: a.rule.reason.clone() }).collect();
    Ok(Settings { policy, policy_file, policy_origin, env, rules })
}
