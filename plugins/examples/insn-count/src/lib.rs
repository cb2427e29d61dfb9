//! The `insn-count` pass as a plugin: the very source of the built-in pass
//! (`passes/src/insn_count.rs`, compiled here as module [`insn_count`]),
//! exported with its metadata. Builds as a native `cdylib` and as a
//! `wasm32-unknown-unknown` module; every form reports the same count.
#![no_std]

extern crate alloc;

#[path = "../../../../passes/src/insn_count.rs"]
pub mod insn_count;

use aarchx_plugin_sdk::{OptionDescriptor, Options, PassError, PassMeta, PluginPass, Stage, Str};

pub use insn_count::InsnCount;

impl PluginPass for InsnCount {
    const META: PassMeta = PassMeta {
        name: insn_count::NAME,
        version: 1,
        stage: Stage::Transform,
        doc: insn_count::DOC,
        options: &[OptionDescriptor::bool(insn_count::REP_ITERATIONS, true, insn_count::REP_ITERATIONS_DOC)],
        before: &[],
        after: &[Str::new("decode")],
    };

    fn create(options: &Options) -> Result<InsnCount, PassError> {
        Ok(InsnCount::new(options))
    }
}

aarchx_plugin_sdk::export_plugin!(InsnCount);
