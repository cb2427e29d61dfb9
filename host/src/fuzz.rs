//! The fuzz targets' entry points: one function per input aarchx takes
//! from outside, each feeding arbitrary bytes to the real parsing and
//! checking code and dropping the result. Every input must come back (an
//! error is an answer); a panic, a hang or an unbounded allocation is a
//! bug. The libFuzzer binaries in `fuzz/` (`./x fuzz TARGET`) call these,
//! and `host/tests/fuzz_corpus.rs` replays the corpora of `fuzz/corpus/`
//! through them in every test run. See docs/fuzzing.md.

use std::path::Path;

use aarchx_ir::parse::parse;
use aarchx_ir::print::print;
use aarchx_ir::verify::verify;
use aarchx_plugin_abi::STATUS_OK;

use crate::loader::{elf, image_layout};
use crate::plugin::native::region_from_output;
use crate::plugin::registry::Registry;
use crate::policy::lua::{self, Invocation, RegionFacts};
use crate::policy::{self, Policy};

/// Every target: its name (the folder of its corpus) and entry point.
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("elf", elf_headers),
    ("policy-ron", policy_ron),
    ("policy-lua", policy_lua),
    ("ir-text", ir_text),
    ("plugin-region", plugin_region),
];

/// An executable's headers: parsed and checked, and the image laid out
/// as the loader would map it (nothing is mapped).
pub fn elf_headers(data: &[u8]) {
    if let Ok(elf) = elf::parse(data) {
        let _ = image_layout(&elf);
    }
}

/// A RON policy: parsed, checked against the built-in passes, and each
/// pass created with its options.
pub fn policy_ron(data: &[u8]) {
    if let Ok(policy) = policy::parse(&String::from_utf8_lossy(data), "fuzz.ron") {
        instantiate(&policy);
    }
}

/// A Lua policy script, with its sandbox and limits: run, its table read
/// as a policy, checked and instantiated, and its `on_region` hook called
/// once.
pub fn policy_lua(data: &[u8]) {
    let guest = Invocation { program: Path::new("/bin/true"), args: &["--fuzz".into()] };
    if let Ok(policy) = lua::run_script(&String::from_utf8_lossy(data), "fuzz.lua", &guest) {
        instantiate(&policy);
        if let Some(hook) = &policy.region_hook {
            let _ = hook.passes_off(&RegionFacts { start: 0x401000, stop: 0x401010, insns: 4, executions: 1 });
        }
    }
}

/// Validates `policy` against the built-in passes and creates each pass.
fn instantiate(policy: &Policy) {
    let registry = Registry::builtin(aarchx_passes::BUILTIN);
    if let Ok(passes) = policy.validate(&registry) {
        for pass in &passes {
            let _ = pass.instantiate();
        }
    }
}

/// IR in its text form: parsed and verified; a region the verifier accepts
/// must print back to text that parses to the same region.
pub fn ir_text(data: &[u8]) {
    let Ok(region) = parse(&String::from_utf8_lossy(data)) else { return };
    if verify(&region).is_ok() {
        assert_eq!(parse(&print(&region)).as_ref(), Ok(&region), "a verified region prints back to itself");
    }
}

/// The bytes a plugin pass returns as its region: decoded and verified, as
/// the host does with every plugin's output.
pub fn plugin_region(data: &[u8]) {
    let _ = region_from_output(STATUS_OK, data);
}
