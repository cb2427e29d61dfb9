//! Policies: which passes run in which order with which options, plus the
//! memory model, CPUID level, backend and verify settings.
//!
//! This module owns the [`Policy`] struct, reading it from RON
//! ([`load`], [`parse`], [`builtin_default`]), the errors a policy file can
//! have ([`PolicyError`], each one line naming `file:line:column`), and
//! checking a policy against the registry of known passes
//! ([`Policy::validate`]). The Lua front end ([`lua`]) fills the same
//! struct from a script; [`load`] picks the front end by the file's
//! extension.
//!
//! The RON syntax (see `policies/*.ron`):
//!
//! ```ron
//! // The default policy: JIT, plain memory.
//! (
//!     backend: Jit,            // Jit | Interp
//!     memory_model: Plain,     // Plain | Ordered | Auto
//!     tso_vector: false,       // order SSE loads/stores too under Ordered
//!     cpu_level: V1,           // V1 (x86-64 baseline) | V2 (x86-64-v2) | V3 (x86-64-v3)
//!     afp: Auto,               // Auto | On | Off: FEAT_AFP's x86 NaN rules (FPCR.AH)
//!     verify: (first: 4, every: 64, on_mismatch: Exit),   // optional
//!     passes: [
//!         (name: "decode", options: { "max_insns": 64 }),
//!     ],
//! )
//! ```
//!
//! Every field but `passes` may be left out and takes the value shown in
//! the comments of `policies/default.ron`. `verify` takes the settings
//! directly (`Some(...)` and `None` are accepted too). `plugins` lists
//! plugin files whose passes the pass list may name (see docs/plugins.md):
//! `plugins: [(path: "libmy_pass.so", on_failure: Skip)]`.
//!
//! The small tokenizer at the end of this file is not a second RON
//! parser: it only finds where each pass entry and option key is in the
//! text, which errors found after parsing (an unknown pass, a bad option)
//! must name. ron reports positions only for its own syntax errors; its
//! serde path hands out values without spans, and `ron::Value` drops them
//! too, so no crate gives these positions.

pub mod lua;
mod lua_value;
mod watchdog;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use aarchx_pass::{CpuLevel, MemoryModel, OptionError, OptionValue, Options, Pass, Stage, TranslationConfig};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::plugin::{order, OrderError, PassDef, PluginError, Registry};

/// The text of `policies/default.ron`, built in so `aarchx ./prog` works
/// from any directory.
pub const DEFAULT_POLICY: &str = include_str!("../../policies/default.ron");

/// The largest policy file read: far beyond any real policy.
const MAX_POLICY_BYTES: u64 = 1 << 20;

/// A translation policy.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The pass pipeline, in order; the first must be a decode-stage pass.
    pub passes: Vec<PassEntry>,
    /// The guest memory model translated code honours.
    #[serde(default)]
    pub memory_model: MemoryModelSetting,
    /// Under the ordered model, order SSE loads and stores too.
    #[serde(default)]
    pub tso_vector: bool,
    /// The x86-64 feature level CPUID reports and the lifter accepts.
    #[serde(default, with = "CpuLevelSetting")]
    pub cpu_level: CpuLevel,
    /// What executes translated blocks.
    #[serde(default)]
    pub backend: Backend,
    /// Whether translated code runs with FEAT_AFP's alternate float
    /// handling (FPCR.AH), which gives x86's NaN results without checks.
    #[serde(default)]
    pub afp: AfpSetting,
    /// Verify mode: check translated blocks against the IR interpreter.
    #[serde(default)]
    pub verify: Option<VerifySettings>,
    /// Plugin files to load; their passes join the built-in ones.
    #[serde(default)]
    pub plugins: Vec<PluginEntry>,
    /// The persistent translation cache (docs/cache.md).
    #[serde(default)]
    pub cache: CacheSettings,
    /// Where the policy came from (a file name, `<built-in default>`), for
    /// error messages.
    #[serde(skip)]
    pub origin: String,
    /// A Lua policy's `on_region` hook: which passes to leave out of one
    /// region.
    #[serde(skip)]
    pub region_hook: Option<lua::RegionHook>,
}

/// The memory model a policy asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum MemoryModelSetting {
    /// Plain loads and stores: right for single-threaded guests.
    #[default]
    Plain,
    /// x86-TSO: loads acquire, stores release.
    Ordered,
    /// Plain until the guest starts its first thread or maps shared
    /// memory writable, then ordered (the dispatcher switches,
    /// `crate::run`).
    Auto,
}

impl MemoryModelSetting {
    /// The model translated code is generated for at the start.
    pub fn effective(self) -> MemoryModel {
        match self {
            MemoryModelSetting::Plain | MemoryModelSetting::Auto => MemoryModel::Plain,
            MemoryModelSetting::Ordered => MemoryModel::Ordered,
        }
    }
}

/// Whether translated code uses FEAT_AFP (`afp: ...`, `--set afp=...`).
/// With FPCR.AH set, arm64's float arithmetic picks the first NaN operand
/// (of a fused multiply-add's too, in x86's order), negates no NaN and
/// makes x86's negative default NaN, so add, subtract, multiply, divide,
/// square root and fma need no NaN check (`crate::jit::NanRules`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum AfpSetting {
    /// Where the host reports FEAT_AFP.
    #[default]
    Auto,
    /// Even where the host does not report it (a kernel that hides it, or
    /// counting instructions under an emulator without it): aarchx warns,
    /// since NaN results are then arm64's.
    On,
    /// Never: every NaN-producing op keeps its check.
    Off,
}

impl AfpSetting {
    const NAMES: [(&'static str, AfpSetting); 3] =
        [("Auto", AfpSetting::Auto), ("On", AfpSetting::On), ("Off", AfpSetting::Off)];

    /// The setting named `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<AfpSetting> {
        by_name(&Self::NAMES, name)
    }

    /// Whether translated code uses FEAT_AFP, given whether the host has it.
    pub fn enabled(self, host_has_afp: bool) -> bool {
        match self {
            AfpSetting::Auto => host_has_afp,
            AfpSetting::On => true,
            AfpSetting::Off => false,
        }
    }
}

/// How a policy names the x86-64 microarchitecture level presented to the
/// guest ([`CpuLevel`], the pass interface's).
#[derive(Deserialize)]
#[serde(remote = "CpuLevel")]
enum CpuLevelSetting {
    V1,
    V2,
    V3,
}

/// The persistent translation cache's settings (`cache: (...)`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheSettings {
    /// Its folder; by default `$XDG_CACHE_HOME/aarchx` (`~/.cache/aarchx`).
    pub dir: Option<String>,
    pub mode: CacheMode,
    /// The size it is kept under, in MiB: the least recently used files
    /// are removed past it.
    pub max_mib: u64,
}

impl Default for CacheSettings {
    fn default() -> CacheSettings {
        CacheSettings { dir: None, mode: CacheMode::ReadWrite, max_mib: 1024 }
    }
}

/// What a run does with the persistent cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum CacheMode {
    /// Not used.
    Off,
    /// Its translations used, none added.
    Read,
    /// Used, and what the run translates added at its end.
    ReadWrite,
    /// As `ReadWrite`, and each region taken from it translated again and
    /// compared: a difference is reported with both listings.
    Verify,
}

impl CacheMode {
    const NAMES: [(&'static str, CacheMode); 4] = [
        ("Off", CacheMode::Off),
        ("Read", CacheMode::Read),
        ("ReadWrite", CacheMode::ReadWrite),
        ("Verify", CacheMode::Verify),
    ];

    /// The mode named `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<CacheMode> {
        by_name(&Self::NAMES, name)
    }
}

/// The value `name` names in `names` (case-insensitive): a `--set`
/// value of a policy enum.
fn by_name<T: Copy>(names: &[(&str, T)], name: &str) -> Option<T> {
    names.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
}

/// What executes translated blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum Backend {
    /// The arm64 code generator (falls back to the interpreter where it
    /// cannot lower something).
    #[default]
    Jit,
    /// The portable IR interpreter: the reference, runs on any host.
    Interp,
}

/// Verify mode: a translated block's first `first` executions and then
/// every `every`th are re-run on the IR interpreter and compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifySettings {
    /// Check each block's first N executions.
    #[serde(default = "VerifySettings::default_first")]
    pub first: u32,
    /// After those, check every Nth execution.
    #[serde(default = "VerifySettings::default_every")]
    pub every: u32,
    /// What a mismatch does.
    #[serde(default)]
    pub on_mismatch: OnMismatch,
}

impl VerifySettings {
    fn default_first() -> u32 {
        4
    }
    fn default_every() -> u32 {
        64
    }
}

impl Default for VerifySettings {
    fn default() -> Self {
        VerifySettings { first: Self::default_first(), every: Self::default_every(), on_mismatch: OnMismatch::Exit }
    }
}

/// What verify mode does on a mismatch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum OnMismatch {
    /// Report the mismatch and exit.
    #[default]
    Exit,
    /// Count mismatches, report them at exit, continue with the
    /// interpreter's result.
    Count,
}

/// A plugin file the policy loads.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginEntry {
    /// The shared library; a relative path is taken from the policy
    /// file's folder.
    pub path: PathBuf,
    /// What a failure of one of its passes at run time does.
    #[serde(default)]
    pub on_failure: OnFailure,
}

/// What a plugin pass failing on a region (an error, a panic, IR the
/// verifier rejects) does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum OnFailure {
    /// Report it on one line and exit with status 4.
    #[default]
    Abort,
    /// Translate that region without the pass; count the failures and
    /// report them at exit.
    Skip,
}

/// One pass of the pipeline as the policy names it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassEntry {
    /// The pass's registered name.
    pub name: String,
    /// The options given; the pass's other options take their defaults.
    #[serde(default, deserialize_with = "deserialize_options")]
    pub options: BTreeMap<String, OptionValue>,
    /// Whether the pass also runs on quick translations (the first tier
    /// of the decode pass's `tier_up`: code that has run fewer times than
    /// that). `false` leaves a region or transform pass out of them: their
    /// code then runs a few hundred times at most, which rarely pays back
    /// an optimisation's translation cost.
    #[serde(default = "runs_on_quick")]
    pub quick: bool,
    /// Where the entry and its options are in the source text, when known.
    #[serde(skip)]
    pub source: EntrySource,
}

fn runs_on_quick() -> bool {
    true
}

/// Positions of a pass entry in the policy text, for error messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntrySource {
    /// The entry's `name` (or its opening parenthesis).
    pub at: Option<Location>,
    /// Each option's key.
    pub options: BTreeMap<String, Location>,
    /// Options a `--set` gave, each with the override and where it came
    /// from (`--set decode.max_insns=8 (FILE rule 1 (`x`))`), which an
    /// error in its value names instead of a place in the policy.
    pub set_by: BTreeMap<String, String>,
}

/// A line and column in a policy's text, both counted from 1. A Lua
/// script's errors know the line only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: u32,
    pub column: Option<u32>,
}

impl Location {
    fn new(line: usize, column: usize) -> Location {
        Location { line: clamp(line), column: Some(clamp(column)) }
    }

    /// A line without a column.
    pub fn line(line: usize) -> Location {
        Location { line: clamp(line), column: None }
    }
}

fn clamp(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Where an error is: the policy's origin and, when known, a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub origin: String,
    pub at: Option<Location>,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(Location { line, column: Some(column) }) => write!(f, "{}:{line}:{column}", self.origin),
            Some(Location { line, column: None }) => write!(f, "{}:{line}", self.origin),
            None => f.write_str(&self.origin),
        }
    }
}

/// A policy that cannot be read or does not fit the registry. Every
/// variant prints as one line starting with `file:line:column` (or `file`).
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{path}: cannot read policy: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a policy: larger than {} KiB", limit >> 10)]
    TooLarge { path: String, limit: u64 },
    /// RON syntax, unknown fields and variants, wrong value types.
    #[error("{at}: {message}")]
    Syntax { at: Place, message: String },
    /// A Lua policy script that does not compile, fails while it runs, or
    /// returns something other than a policy table.
    #[error("{at}: {message}")]
    Lua { at: Place, message: String },
    #[error("{at}: the policy lists no passes; the first must be a decode-stage pass such as `decode`")]
    NoPasses { at: Place },
    #[error("{at}: unknown pass `{name}`; known passes: {known}")]
    UnknownPass { at: Place, name: String, known: String },
    #[error("{at}: pass `{pass}`: {}{hint}", option_message(.error))]
    PassOption { at: Place, pass: String, error: Box<OptionError>, hint: String },
    #[error("{at}: the first pass must be a decode-stage pass, but `{pass}` is a {stage}-stage pass")]
    FirstNotDecode { at: Place, pass: String, stage: &'static str },
    #[error(
        "{at}: pass `{pass}` ({stage} stage) cannot come after `{prev}` ({prev_stage} stage); \
         stages run in the order decode, region, transform, lowering"
    )]
    StageOrder { at: Place, pass: String, stage: &'static str, prev: String, prev_stage: &'static str },
    #[error(
        "{at}: pass `{pass}` is a {stage}-stage pass, which every translation needs; \
         `quick: false` is for region- and transform-stage passes"
    )]
    QuickStage { at: Place, pass: String, stage: &'static str },
    /// A `before`/`after` constraint of a pass that the list breaks.
    #[error("{at}: {error}")]
    Order { at: Place, error: OrderError },
    #[error("--set {set}: {why}")]
    Set { set: String, why: String },
}

/// A pass of a validated pipeline, ready to instantiate.
#[derive(Clone)]
pub struct ValidatedPass<'r> {
    pub info: &'r PassDef,
    /// Every option the pass declares, defaults filled in.
    pub options: Options,
    /// Whether it runs on quick translations too ([`PassEntry::quick`]).
    pub quick: bool,
}

impl ValidatedPass<'_> {
    /// Creates the pass (a plugin's `create` may refuse).
    pub fn instantiate(&self) -> Result<Box<dyn Pass>, PluginError> {
        self.info.instantiate(&self.options)
    }
}

impl fmt::Debug for ValidatedPass<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidatedPass")
            .field("pass", &self.info.name)
            .field("options", &self.options)
            .field("quick", &self.quick)
            .finish()
    }
}

/// Reads the policy file at `path`: a Lua script if its name ends in
/// `.lua` (run with the guest's `program` and `args`, see [`lua`]), RON
/// otherwise.
pub fn load(path: &Path, program: &Path, args: &[OsString]) -> Result<Policy, PolicyError> {
    let origin = path.display().to_string();
    let read_error = |source| PolicyError::Read { path: origin.clone(), source };
    let mut text = String::new();
    // At most one byte past the limit: a device or a runaway pipe is
    // refused, not read until memory runs out.
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_POLICY_BYTES + 1).read_to_string(&mut text))
        .map_err(read_error)?;
    if text.len() as u64 > MAX_POLICY_BYTES {
        return Err(PolicyError::TooLarge { path: origin, limit: MAX_POLICY_BYTES });
    }
    if path.extension().is_some_and(|e| e == "lua") {
        lua::run_script(&text, &origin, &lua::Invocation { program, args })
    } else {
        parse(&text, &origin)
    }
}

/// The built-in default policy (`policies/default.ron`).
pub fn builtin_default() -> Policy {
    parse(DEFAULT_POLICY, "<built-in default policy>").expect("policies/default.ron parses")
}

/// Parses policy text; `origin` names it in error messages (usually the
/// file name).
pub fn parse(text: &str, origin: &str) -> Result<Policy, PolicyError> {
    let tokens = tokenize(text);
    let options = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let mut policy: Policy = options.from_str(text).map_err(|e| syntax_error(text, origin, &tokens, e))?;
    policy.origin = origin.to_string();
    for (entry, source) in policy.passes.iter_mut().zip(locate_entries(text, &tokens)) {
        entry.source = source;
    }
    Ok(policy)
}

impl Policy {
    /// Applies a `--set PASS.OPTION=VALUE` override to the pass `PASS` of
    /// the pipeline (every entry of that name), `--set cache.OPTION=VALUE`
    /// to the cache settings, or `--set afp=Auto|On|Off`. A pass option's
    /// value is a bool, an integer or else text; its kind is checked with
    /// the other options when the policy is validated, and an error there
    /// names the override and `from` (where it came from, when not the
    /// command line).
    pub fn apply_set(&mut self, set: &str, from: Option<&str>) -> Result<(), PolicyError> {
        let err = |why: &str| PolicyError::Set { set: set.to_string(), why: why.to_string() };
        let (key, value) = set.split_once('=').ok_or_else(|| err("expected PASS.OPTION=VALUE"))?;
        if key == "afp" {
            self.afp = AfpSetting::from_name(value).ok_or_else(|| err("afp is Auto, On or Off"))?;
            return Ok(());
        }
        let (pass, option) = key.split_once('.').ok_or_else(|| err("expected PASS.OPTION=VALUE"))?;
        if pass == "cache" {
            return self.set_cache(option, value).map_err(|why| err(&why));
        }
        let value = match value {
            "true" => OptionValue::Bool(true),
            "false" => OptionValue::Bool(false),
            v => v.parse().map_or_else(|_| OptionValue::Str(v.to_string()), OptionValue::Int),
        };
        let mut found = false;
        let by = match from {
            Some(from) => format!("--set {set} ({from})"),
            None => format!("--set {set}"),
        };
        for entry in self.passes.iter_mut().filter(|e| e.name == pass) {
            entry.options.insert(option.to_string(), value.clone());
            entry.source.set_by.insert(option.to_string(), by.clone());
            found = true;
        }
        if found {
            Ok(())
        } else {
            Err(err(&format!("the policy {} has no pass `{pass}`", self.origin)))
        }
    }

    /// `--set cache.OPTION=VALUE`: the persistent cache's settings.
    fn set_cache(&mut self, option: &str, value: &str) -> Result<(), String> {
        match option {
            "mode" => {
                self.cache.mode = CacheMode::from_name(value)
                    .ok_or_else(|| format!("`{value}` is not a cache mode (Off, Read, ReadWrite, Verify)"))?;
            }
            "dir" => self.cache.dir = Some(value.to_string()),
            "max_mib" => {
                self.cache.max_mib = value.parse().map_err(|_| format!("`{value}` is not a size in MiB"))?;
            }
            _ => return Err(format!("the cache has no option `{option}` (mode, dir, max_mib)")),
        }
        Ok(())
    }

    /// The settings every pass may read.
    pub fn translation_config(&self) -> TranslationConfig {
        TranslationConfig {
            memory_model: self.memory_model.effective(),
            tso_vector: self.tso_vector,
            cpu_level: self.cpu_level,
            superblocks: true,
        }
    }

    /// The folder relative plugin paths are taken from: the policy file's.
    pub fn base_dir(&self) -> &Path {
        Path::new(&self.origin).parent().unwrap_or(Path::new(""))
    }

    /// Checks the pass list against `registry`: every pass known, its
    /// options valid, the first pass a decode pass, stages in order, every
    /// `before`/`after` constraint met. Returns the pipeline in order,
    /// ready to instantiate.
    pub fn validate<'r>(&self, registry: &'r Registry) -> Result<Vec<ValidatedPass<'r>>, PolicyError> {
        let place = |at: Option<Location>| Place { origin: self.origin.clone(), at };
        if self.passes.is_empty() {
            return Err(PolicyError::NoPasses { at: place(None) });
        }
        let mut out: Vec<ValidatedPass<'r>> = Vec::with_capacity(self.passes.len());
        for entry in &self.passes {
            let info = registry.get(&entry.name).ok_or_else(|| {
                let known = registry.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", ");
                PolicyError::UnknownPass { at: place(entry.source.at), name: entry.name.clone(), known }
            })?;
            let options = info.validate_options(&entry.options).map_err(|error| {
                let (name, hint) = match &error {
                    OptionError::Unknown(name) => {
                        let hint = if info.options.is_empty() {
                            format!("; `{}` takes no options", info.name)
                        } else {
                            let names = info.options.iter().map(|o| format!("`{}`", o.name)).collect::<Vec<_>>();
                            format!("; `{}` takes {}", info.name, names.join(", "))
                        };
                        (name, hint)
                    }
                    OptionError::Kind { name, .. } => (name, String::new()),
                };
                let at = match entry.source.set_by.get(name) {
                    Some(set) => Place { origin: set.clone(), at: None },
                    None => place(entry.source.options.get(name).copied().or(entry.source.at)),
                };
                PolicyError::PassOption { at, pass: entry.name.clone(), error: Box::new(error.clone()), hint }
            })?;
            match out.last() {
                None if info.stage != Stage::Decode => {
                    return Err(PolicyError::FirstNotDecode {
                        at: place(entry.source.at),
                        pass: entry.name.clone(),
                        stage: info.stage.name(),
                    });
                }
                Some(prev) if info.stage < prev.info.stage => {
                    return Err(PolicyError::StageOrder {
                        at: place(entry.source.at),
                        pass: entry.name.clone(),
                        stage: info.stage.name(),
                        prev: prev.info.name.clone(),
                        prev_stage: prev.info.stage.name(),
                    });
                }
                _ => {}
            }
            if !entry.quick && matches!(info.stage, Stage::Decode | Stage::Lowering) {
                return Err(PolicyError::QuickStage {
                    at: place(entry.source.at),
                    pass: entry.name.clone(),
                    stage: info.stage.name(),
                });
            }
            out.push(ValidatedPass { info, options, quick: entry.quick });
        }
        let entries: Vec<order::Entry<'_>> = out
            .iter()
            .map(|p| order::Entry {
                name: &p.info.name,
                stage: p.info.stage,
                before: &p.info.before,
                after: &p.info.after,
            })
            .collect();
        order::check(&entries).map_err(|error| PolicyError::Order { at: place(None), error })?;
        Ok(out)
    }
}

// ---------------------------------------------------------------------------
// Option values

/// Deserializes a pass's option map: string keys, bool/integer/string values.
fn deserialize_options<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, OptionValue>, D::Error> {
    struct Value(OptionValue);
    struct ValueVisitor;

    impl<'de> Visitor<'de> for ValueVisitor {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a bool, an integer or a string")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
            Ok(Value(OptionValue::Bool(v)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
            Ok(Value(OptionValue::Int(v)))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
            i64::try_from(v)
                .map(|v| Value(OptionValue::Int(v)))
                .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &"an integer that fits in 64 signed bits"))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
            Ok(Value(OptionValue::Str(v.to_string())))
        }
    }

    impl<'de> Deserialize<'de> for Value {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
            d.deserialize_any(ValueVisitor)
        }
    }

    let map = BTreeMap::<String, Value>::deserialize(d)?;
    Ok(map.into_iter().map(|(k, v)| (k, v.0)).collect())
}

// ---------------------------------------------------------------------------
// Error messages

/// Turns ron's error into a one-line [`PolicyError::Syntax`], pointing at
/// the start of the offending name where ron's cursor is past it.
fn syntax_error(text: &str, origin: &str, tokens: &[Token<'_>], e: ron::error::SpannedError) -> PolicyError {
    use ron::error::Error as E;
    let mut at = (e.position.line > 0).then_some(Location::new(e.position.line, e.position.col));
    let cursor = at.and_then(|l| offset_of(text, l));
    // The last identifier token named `name` that starts before the cursor.
    let find_ident = |name: &str| -> Option<usize> {
        let cursor = cursor?;
        tokens.iter().rposition(|t| t.kind == Tok::Ident(name) && t.offset < cursor)
    };
    let mut field = None;
    match &e.code {
        E::NoSuchStructField { found, .. } => {
            if let Some(i) = find_ident(found) {
                at = Some(location_of(text, tokens[i].offset));
            }
        }
        E::NoSuchEnumVariant { found, .. } => {
            if let Some(i) = find_ident(found) {
                at = Some(location_of(text, tokens[i].offset));
                if i >= 2 && tokens[i - 1].kind == Tok::Punct(':') {
                    if let Tok::Ident(f) = tokens[i - 2].kind {
                        field = Some(f);
                    }
                }
            }
        }
        _ => {}
    }
    let mut message = error_words(&e.code, field);
    if !names_the_mistake(&e.code) && !matches!(e.code, E::TrailingCharacters) {
        // ron's other messages do not say what they found: name the word
        // at the cursor.
        let word = cursor.map_or("", |c| word_at(text, c));
        if !word.is_empty() {
            message.push_str(&format!(", found `{word}`"));
        }
    }
    PolicyError::Syntax { at: Place { origin: origin.to_string(), at }, message }
}

/// Whether ron's error names what is wrong itself (a field, a value).
fn names_the_mistake(code: &ron::Error) -> bool {
    use ron::error::Error as E;
    matches!(
        code,
        E::NoSuchStructField { .. }
            | E::NoSuchEnumVariant { .. }
            | E::MissingStructField { .. }
            | E::DuplicateStructField { .. }
            | E::InvalidValueForType { .. }
    )
}

/// A policy's mistake in words, from ron's typed error: the same for RON
/// files and Lua tables (`lua_value`). `field` is the field whose value an
/// unknown enum value was given for, when known.
fn error_words(code: &ron::Error, field: Option<&str>) -> String {
    use ron::error::Error as E;
    let one_of = |alts: &[&str]| {
        if alts.is_empty() {
            String::from("there are none")
        } else {
            format!("expected one of {}", alts.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", "))
        }
    };
    match code {
        E::NoSuchStructField { expected, found, outer } => {
            format!("unknown field `{found}`{}, {}", in_struct(outer.as_deref()), one_of(expected))
        }
        E::NoSuchEnumVariant { expected, found, .. } => {
            let field = field.map_or(String::new(), |f| format!(" for `{f}`"));
            format!("unknown value `{found}`{field}, {}", one_of(expected))
        }
        E::MissingStructField { field, outer } => {
            format!("missing field `{field}`{}", in_struct(outer.as_deref()))
        }
        E::DuplicateStructField { field, outer } => {
            format!("field `{field}` given twice{}", in_struct(outer.as_deref()))
        }
        E::InvalidValueForType { expected, found } => format!("expected {expected}, found {found}"),
        other => {
            // ron's messages start with a capital letter.
            let msg = other.to_string();
            let mut chars = msg.chars();
            chars.next().map_or(String::new(), |c| c.to_lowercase().chain(chars).collect())
        }
    }
}

/// The identifier or number starting at `offset`, if any.
fn word_at(text: &str, offset: usize) -> &str {
    let rest = &text[offset..];
    let len = rest.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+'))).unwrap_or(rest.len());
    &rest[..len]
}

/// An option error in words (with the right article).
fn option_message(e: &OptionError) -> String {
    let article = |kind: &str| if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    match e {
        OptionError::Unknown(name) => format!("unknown option `{name}`"),
        OptionError::Kind { name, want, got } => {
            format!("option `{name}` takes {} {want}, not {} {got}", article(want), article(got))
        }
    }
}

/// " in the pass entry" etc. for ron's struct names.
fn in_struct(outer: Option<&str>) -> String {
    match outer {
        Some("Policy") | None => String::new(),
        Some("PassEntry") => String::from(" in a pass entry"),
        Some("PluginEntry") => String::from(" in a plugin entry"),
        Some("VerifySettings") => String::from(" in `verify`"),
        Some(other) => format!(" in `{other}`"),
    }
}

/// Byte offset of a ron position (line and byte column, from 1), moved
/// back to the start of the character it falls in (ron's cursor may stop
/// inside one).
fn offset_of(text: &str, l: Location) -> Option<usize> {
    let mut start = 0;
    for _ in 1..l.line {
        start += text[start..].find('\n')? + 1;
    }
    Some(text.floor_char_boundary(start + (l.column.unwrap_or(1) as usize).saturating_sub(1)))
}

/// Line and column (from 1, column in characters) of a byte offset.
fn location_of(text: &str, offset: usize) -> Location {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Location::new(line, before[line_start..].chars().count() + 1)
}

// ---------------------------------------------------------------------------
// Finding pass entries in the text

/// A token of RON text, enough to find fields, strings and nesting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    Ident(&'a str),
    /// A string literal's raw contents (escapes left as written).
    Str(&'a str),
    Punct(char),
    /// Numbers and anything else.
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    kind: Tok<'a>,
    offset: usize,
}

/// Splits RON text into tokens, skipping whitespace and comments. Never
/// fails: it only serves error positions, ron does the real parsing.
fn tokenize(text: &str) -> Vec<Token<'_>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            i += b[i..].iter().position(|&c| c == b'\n').unwrap_or(b.len() - i);
        } else if b[i..].starts_with(b"/*") {
            i += 2 + text[i + 2..].find("*/").map_or(b.len() - i - 2, |e| e + 2);
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            let end = i.min(b.len());
            out.push(Token { kind: Tok::Str(&text[start + 1..end]), offset: start });
            i = end + 1;
        } else if c == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#')) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let open = i + 1 + hashes;
            if b.get(open) == Some(&b'"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let end = text[open + 1..].find(&close).map_or(b.len(), |e| open + 1 + e);
                out.push(Token { kind: Tok::Str(&text[open + 1..end]), offset: start });
                i = (end + close.len()).min(b.len());
            } else {
                out.push(Token { kind: Tok::Ident("r"), offset: start });
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token { kind: Tok::Ident(&text[start..i]), offset: start });
        } else if b"()[]{}:,".contains(&c) {
            out.push(Token { kind: Tok::Punct(c as char), offset: start });
            i += 1;
        } else {
            // Numbers, signs, and any other character (stepping over a
            // whole UTF-8 sequence).
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(Token { kind: Tok::Other, offset: start });
        }
    }
    out
}

/// Finds each entry of the top-level `passes: [...]` list: where its name
/// is and where each option key is. Entries come back in list order.
fn locate_entries(text: &str, tokens: &[Token<'_>]) -> Vec<EntrySource> {
    let loc = |t: &Token<'_>| location_of(text, t.offset);
    let is_field = |i: usize, name: &str| {
        tokens.get(i).map(|t| t.kind) == Some(Tok::Ident(name))
            && tokens.get(i + 1).map(|t| t.kind) == Some(Tok::Punct(':'))
    };
    // Depth of nesting before each token.
    let mut depth = 0usize;
    let mut depths = Vec::with_capacity(tokens.len());
    for t in tokens {
        if matches!(t.kind, Tok::Punct(')' | ']' | '}')) {
            depth = depth.saturating_sub(1);
        }
        depths.push(depth);
        if matches!(t.kind, Tok::Punct('(' | '[' | '{')) {
            depth += 1;
        }
    }
    // `passes` `:` `[` directly inside the top-level struct.
    let Some(list) = (0..tokens.len()).find(|&i| {
        depths[i] == 1 && is_field(i, "passes") && tokens.get(i + 2).map(|t| t.kind) == Some(Tok::Punct('['))
    }) else {
        return Vec::new();
    };
    let list_depth = 2; // tokens inside `[ ... ]`
    let mut entries = Vec::new();
    let mut i = list + 3;
    while i < tokens.len() && depths[i] >= list_depth {
        let t = &tokens[i];
        if depths[i] == list_depth && t.kind == Tok::Punct('(') {
            entries.push(EntrySource { at: Some(loc(t)), ..EntrySource::default() });
        } else if let Some(entry) = entries.last_mut() {
            if depths[i] == list_depth + 1 && is_field(i, "name") {
                if let Some(v) = tokens.get(i + 2) {
                    entry.at = Some(loc(v));
                }
            } else if let Tok::Str(key) = t.kind {
                // A key of the options map (the only map in an entry).
                if depths[i] == list_depth + 2 && tokens.get(i + 1).map(|t| t.kind) == Some(Tok::Punct(':')) {
                    entry.options.entry(key.to_string()).or_insert(loc(t));
                }
            }
        }
        i += 1;
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use aarchx_pass::ir::Region;
    use aarchx_pass::{OptionSpec, PassContext, PassError, PassInfo};

    struct Nop;
    impl Pass for Nop {
        fn run(&mut self, _: &PassContext<'_>, _: &mut Region) -> Result<(), PassError> {
            Ok(())
        }
    }
    fn create(_: &Options) -> Box<dyn Pass> {
        Box::new(Nop)
    }

    static DECODE_OPTS: [OptionSpec; 2] = [
        OptionSpec { name: "max_insns", default: || OptionValue::Int(64), doc: "instructions per block" },
        OptionSpec { name: "stop_at_call", default: || OptionValue::Bool(true), doc: "end blocks at calls" },
    ];
    static DECODE: PassInfo =
        PassInfo { name: "decode", stage: Stage::Decode, doc: "lifter", options: &DECODE_OPTS, create };
    static SUPERBLOCK: PassInfo =
        PassInfo { name: "superblock", stage: Stage::Region, doc: "superblocks", options: &[], create };
    static CONSTFOLD: PassInfo =
        PassInfo { name: "constfold", stage: Stage::Transform, doc: "folding", options: &[], create };
    static TSO: PassInfo = PassInfo { name: "tso", stage: Stage::Lowering, doc: "memory order", options: &[], create };

    fn registry() -> Registry {
        Registry::builtin(&[&DECODE, &SUPERBLOCK, &CONSTFOLD, &TSO])
    }

    fn err(text: &str) -> String {
        parse(text, "t.ron").unwrap_err().to_string()
    }

    fn verr(text: &str) -> String {
        parse(text, "t.ron").unwrap().validate(&registry()).unwrap_err().to_string()
    }

    #[test]
    fn every_policy_file_parses_and_validates() {
        // The shipped policies and the benchmark sweeps' variants.
        for (folder, least) in [("../policies", 5), ("../bench/ablation", 10)] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
            let mut n = 0;
            for f in std::fs::read_dir(&dir).unwrap() {
                let path = f.unwrap().path();
                if !matches!(path.extension().and_then(|e| e.to_str()), Some("ron" | "lua")) {
                    continue;
                }
                let policy = load(&path, Path::new("prog"), &[]).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(policy.passes[0].name, "decode", "{}", path.display());
                policy.validate(&Registry::builtin(aarchx_passes::BUILTIN)).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
            assert!(n >= least, "found only {n} policies in {}", dir.display());
        }
    }

    #[test]
    fn builtin_default_and_named_files() {
        let d = builtin_default();
        assert_eq!(d.backend, Backend::Jit);
        assert_eq!(d.memory_model, MemoryModelSetting::Auto);
        assert_eq!(d.cpu_level, CpuLevel::V1);
        assert_eq!(d.verify, None);
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies");
        let ordered = load(&dir.join("ordered.ron"), Path::new("prog"), &[]).unwrap();
        assert_eq!(ordered.translation_config().memory_model, MemoryModel::Ordered);
        assert!(!ordered.tso_vector);
        assert_eq!(load(&dir.join("interp.ron"), Path::new("prog"), &[]).unwrap().backend, Backend::Interp);
        let verify = load(&dir.join("verify.ron"), Path::new("prog"), &[]).unwrap().verify.unwrap();
        assert_eq!(verify, VerifySettings { first: 4, every: 64, on_mismatch: OnMismatch::Exit });
    }

    #[test]
    fn defaults_and_values() {
        let p = parse(
            r#"(passes: [(name: "decode", options: { "max_insns": 8, "stop_at_call": false })], memory_model: Auto)"#,
            "t.ron",
        )
        .unwrap();
        assert_eq!(p.backend, Backend::Jit);
        assert_eq!(p.memory_model.effective(), MemoryModel::Plain);
        assert!(p.afp == AfpSetting::Auto && !p.tso_vector && p.verify.is_none());
        assert_eq!(p.origin, "t.ron");
        let registry = registry();
        let v = p.validate(&registry).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].options.int("max_insns"), 8);
        assert!(!v[0].options.bool("stop_at_call"));
        let _pass = v[0].instantiate().unwrap();

        let p = parse(r#"(passes: [(name: "decode")], verify: (every: 8, on_mismatch: Count))"#, "t").unwrap();
        assert_eq!(p.verify, Some(VerifySettings { first: 4, every: 8, on_mismatch: OnMismatch::Count }));
        let p = parse(r#"(passes: [(name: "decode")], verify: Some(()))"#, "t").unwrap();
        assert_eq!(p.verify, Some(VerifySettings::default()));
        let p = parse(r#"(passes: [(name: "decode")], verify: None)"#, "t").unwrap();
        assert_eq!(p.verify, None);
        let p = parse(r#"(passes: [(name: "decode", options: { "s": "x", "n": -3 })])"#, "t").unwrap();
        assert_eq!(p.passes[0].options["s"], OptionValue::Str("x".into()));
        assert_eq!(p.passes[0].options["n"], OptionValue::Int(-3));
    }

    #[test]
    fn syntax_error_has_position() {
        let e = err("(\n    passes: [\n        (name: \"decode\" options: {}),\n    ],\n)\n");
        assert!(e.starts_with("t.ron:3:"), "{e}");
        assert!(e.lines().count() == 1, "{e}");
        let e = err("(passes: [], /* never closed");
        assert!(e.starts_with("t.ron:1:"), "{e}");
    }

    #[test]
    fn unknown_field() {
        let e = err("// typo\n(\n    backend: Jit,\n    pases: [],\n)\n");
        assert!(e.starts_with("t.ron:4:5: unknown field `pases`, expected one of `passes`"), "{e}");
        let e = err("(passes: [(name: \"decode\", optons: {})])");
        assert!(e.starts_with("t.ron:1:28: unknown field `optons` in a pass entry"), "{e}");
        let e = err("(passes: [], verify: (firts: 1))");
        assert!(e.contains("unknown field `firts` in `verify`"), "{e}");
    }

    #[test]
    fn unknown_variant() {
        let e = err("(\n  backend: Jitt,\n  passes: [],\n)");
        assert_eq!(e, "t.ron:2:12: unknown value `Jitt` for `backend`, expected one of `Jit`, `Interp`");
        let e = err("(passes: [], memory_model: TSO)");
        assert!(e.contains("unknown value `TSO` for `memory_model`"), "{e}");
    }

    #[test]
    fn missing_and_wrong_type() {
        let e = err("(backend: Jit)");
        assert!(e.contains("missing field `passes`"), "{e}");
        let e = err("(passes: [(name: \"decode\", options: { \"x\": 1.5 })])");
        assert!(e.contains("a bool, an integer or a string"), "{e}");
        let e = err("(passes: [], afp: 1)");
        assert!(e.starts_with("t.ron:1:"), "{e}");
    }

    #[test]
    fn unknown_pass() {
        let e = verr("(\n  passes: [\n    (name: \"decode\"),\n    (name: \"superblok\"),\n  ],\n)");
        assert_eq!(e, "t.ron:4:12: unknown pass `superblok`; known passes: `decode`, `superblock`, `constfold`, `tso`");
    }

    #[test]
    fn unknown_option() {
        let e = verr("(passes: [\n  (name: \"decode\", options: {\n    \"max_insn\": 3 }),\n])");
        assert_eq!(
            e,
            "t.ron:3:5: pass `decode`: unknown option `max_insn`; `decode` takes `max_insns`, `stop_at_call`"
        );
        let e = verr("(passes: [(name: \"decode\"), (name: \"tso\", options: { \"x\": true })])");
        assert!(e.contains("pass `tso`: unknown option `x`; `tso` takes no options"), "{e}");
    }

    #[test]
    fn quick_false_only_on_passes_a_translation_can_do_without() {
        let p = parse("(passes: [(name: \"decode\"), (name: \"constfold\", quick: false)])", "t.ron").unwrap();
        let registry = registry();
        let v = p.validate(&registry).unwrap();
        assert_eq!((v[0].quick, v[1].quick), (true, false));
        let e = verr("(passes: [\n  (name: \"decode\"),\n  (name: \"tso\", quick: false),\n])");
        assert_eq!(
            e,
            "t.ron:3:10: pass `tso` is a lowering-stage pass, which every translation needs; \
             `quick: false` is for region- and transform-stage passes"
        );
        assert!(verr("(passes: [(name: \"decode\", quick: false)])").contains("`decode` is a decode-stage pass"));
    }

    #[test]
    fn option_of_wrong_kind() {
        let e = verr("(passes: [\n  (options: { \"max_insns\": \"many\" }, name: \"decode\"),\n])");
        assert_eq!(e, "t.ron:2:15: pass `decode`: option `max_insns` takes an integer, not a string");
    }

    #[test]
    fn stage_order() {
        let e = verr("(passes: [\n (name: \"decode\"),\n (name: \"tso\"),\n (name: \"constfold\"),\n])");
        assert!(
            e.starts_with("t.ron:4:9: pass `constfold` (transform stage) cannot come after `tso` (lowering stage)"),
            "{e}"
        );
        let e = verr("(passes: [(name: \"superblock\"), (name: \"decode\")])");
        assert!(e.starts_with("t.ron:1:18: the first pass must be a decode-stage pass, but `superblock`"), "{e}");
        let e = verr("(passes: [])");
        assert!(e.starts_with("t.ron: the policy lists no passes"), "{e}");
        // Equal stages are fine.
        parse("(passes: [(name: \"decode\"), (name: \"tso\"), (name: \"tso\")])", "t")
            .unwrap()
            .validate(&registry())
            .unwrap();
    }

    #[test]
    fn entries_located_despite_comments_and_strings() {
        let text = "(\n // passes: [(name: \"x\")]\n passes: [ /* ( */\n  (name: \"a)\", options: {\"k\": r#\"(\"#}),\n  (name: \"b\"),\n ],\n)";
        let p = parse(text, "t").unwrap();
        assert_eq!(p.passes[0].source.at, Some(Location::new(4, 10)));
        assert_eq!(p.passes[0].source.options["k"], Location::new(4, 26));
        assert_eq!(p.passes[1].source.at, Some(Location::new(5, 10)));
    }
}
