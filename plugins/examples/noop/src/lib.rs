//! The smallest plugin: one transform pass that leaves the region as it
//! is. Measures the cost of the plugin boundary and starts a new pass.
//! Builds as a native `cdylib` and as a `wasm32-unknown-unknown` module.
#![no_std]

use aarchx_plugin_sdk::ir::Region;
use aarchx_plugin_sdk::{Options, Pass, PassContext, PassError, PassMeta, PluginPass, Stage};

pub struct Noop;

impl Pass for Noop {
    fn run(&mut self, _: &PassContext<'_>, _: &mut Region) -> Result<(), PassError> {
        Ok(())
    }
}

impl PluginPass for Noop {
    const META: PassMeta = PassMeta {
        name: "noop",
        version: 1,
        stage: Stage::Transform,
        doc: "Leaves the region unchanged.",
        options: &[],
        before: &[],
        after: &[],
    };

    fn create(_: &Options) -> Result<Noop, PassError> {
        Ok(Noop)
    }
}

aarchx_plugin_sdk::export_plugin!(Noop);
