//! The pass interface: what every pass of the pipeline implements, built-in
//! or loaded from a plugin.
//!
//! A pass is described by a [`PassInfo`] (name, stage, documented options)
//! and created from validated [`Options`] by its factory. Running it hands
//! it the region under translation and a [`PassContext`] with read access to
//! guest code and the translation settings of the policy.
//!
//! Architecture invariant: like `aarchx-ir`, this crate is `no_std` +
//! `alloc`, so a pass compiles unchanged into a `wasm32` plugin.
#![no_std]

extern crate alloc;

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

pub use aarchx_ir as ir;
use aarchx_ir::Region;

/// Where in the pipeline a pass belongs. A policy's pass list must keep
/// stages in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Builds the region's IR from guest code (the lifter).
    Decode,
    /// Grows or reshapes the region (superblocks).
    Region,
    /// Rewrites IR for speed or instrumentation.
    Transform,
    /// Lowers IR for the backend's contract (memory order, NaN rules).
    Lowering,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Decode => "decode",
            Stage::Region => "region",
            Stage::Transform => "transform",
            Stage::Lowering => "lowering",
        }
    }
}

/// The guest memory model translated code must honour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryModel {
    /// Plain loads and stores: right for a single-threaded guest.
    Plain,
    /// x86-TSO: scalar loads acquire, stores release.
    Ordered,
}

/// The x86-64 microarchitecture level the guest's CPU has: what CPUID
/// reports and what the lifter accepts (an instruction of a higher level
/// raises SIGILL, as on a CPU without it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CpuLevel {
    /// x86-64 baseline: SSE2, no SSE3 and later.
    #[default]
    V1,
    /// x86-64-v2: SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B (what
    /// of it the lifter implements: all but SSE4.2's string compares).
    V2,
    /// x86-64-v3: x86-64-v2 and AVX, AVX2, FMA, F16C, BMI1, BMI2, LZCNT,
    /// MOVBE and XSAVE/XGETBV with the AVX state component.
    V3,
}

/// Settings of the policy that every pass may read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranslationConfig {
    pub memory_model: MemoryModel,
    /// Order SSE loads and stores too under [`MemoryModel::Ordered`].
    pub tso_vector: bool,
    /// The guest CPU's level: what the lifter accepts.
    pub cpu_level: CpuLevel,
    /// Whether the decode stage may build superblocks (follow branches and
    /// calls). False for a region's quick first translation under tiering
    /// (the `decode` pass's `tier_up`): the runtime translates a region
    /// again as a superblock once it has run that often.
    pub superblocks: bool,
}

/// Read access to guest code.
pub trait GuestCode {
    /// Copies guest bytes at `addr` into `buf`; returns how many could be
    /// read (fewer at the end of executable memory).
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize;

    /// The name of the function that starts at `addr`, as the symbol
    /// tables of the object mapped there give it (a glibc IFUNC-selected
    /// variant by its IFUNC symbol's name: `strlen` for `__strlen_avx2`),
    /// if the host knows one.
    fn function_at(&self, _addr: u64) -> Option<String> {
        None
    }
}

/// What a running pass can see besides its region.
pub struct PassContext<'a> {
    pub code: &'a dyn GuestCode,
    pub config: &'a TranslationConfig,
}

/// A pass option's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionValue {
    Bool(bool),
    Int(i64),
    Str(String),
}

impl OptionValue {
    pub fn kind(&self) -> &'static str {
        match self {
            OptionValue::Bool(_) => "bool",
            OptionValue::Int(_) => "integer",
            OptionValue::Str(_) => "string",
        }
    }
}

/// One documented option of a pass.
#[derive(Clone, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub default: fn() -> OptionValue,
    pub doc: &'static str,
}

/// A pass's validated options: every declared option, defaults filled in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options(pub BTreeMap<String, OptionValue>);

impl Options {
    /// Validates `given` against the declared options, each a name and its
    /// default: unknown names and values of another kind than the default
    /// are errors; missing ones take their defaults.
    pub fn validate(
        declared: &[(&str, OptionValue)],
        given: &BTreeMap<String, OptionValue>,
    ) -> Result<Options, OptionError> {
        for (name, value) in given {
            let (_, default) =
                declared.iter().find(|(n, _)| n == name).ok_or_else(|| OptionError::Unknown(name.clone()))?;
            if default.kind() != value.kind() {
                return Err(OptionError::Kind { name: name.clone(), want: default.kind(), got: value.kind() });
            }
        }
        Ok(Options(declared.iter().map(|(n, d)| (String::from(*n), given.get(*n).unwrap_or(d).clone())).collect()))
    }

    pub fn bool(&self, name: &str) -> bool {
        matches!(self.0.get(name), Some(OptionValue::Bool(true)))
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.0.get(name) {
            Some(OptionValue::Int(v)) => *v,
            _ => 0,
        }
    }
}

/// A pass option that does not fit the pass's declaration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("unknown option `{0}`")]
    Unknown(String),
    #[error("option `{name}` takes a {want}, not a {got}")]
    Kind { name: String, want: &'static str, got: &'static str },
}

/// A pass that could not do its work on a region.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PassError(pub String);

/// The description of a pass, from which it is created.
pub struct PassInfo {
    pub name: &'static str,
    pub stage: Stage,
    pub doc: &'static str,
    pub options: &'static [OptionSpec],
    pub create: fn(&Options) -> Box<dyn Pass>,
}

/// What a pass reports when the guest ends: a text for stderr, and
/// optionally a file for the host to write. A pass never does I/O itself,
/// so the same pass works as a native and as a WASM plugin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Printed on stderr as given (each line should start `aarchx: NAME: `).
    pub text: String,
    pub file: Option<ReportFile>,
}

/// A file a pass asks the host to write at exit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportFile {
    /// Where, usually from one of the pass's options; relative paths are
    /// taken from aarchx's working directory.
    pub path: String,
    pub bytes: Vec<u8>,
}

/// A pass over one region.
pub trait Pass {
    /// Transforms `region` in place. The decode stage receives an empty
    /// region with only its entry address set.
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError>;

    /// Called once when the guest ends (exit, exit_group or a guest fault)
    /// with the final values of the counters this pass's `count`
    /// instructions added to: `counters[i]` is counter `i` in the pass's own
    /// numbering (zero for ids it never used). The default reports nothing.
    fn finish(&mut self, counters: &[u64]) -> Result<Report, PassError> {
        let _ = counters;
        Ok(Report::default())
    }
}
