//! A plugin pass with state and an option: counts the regions and the
//! guest instructions it sees, changes nothing, and reports the totals on
//! stderr when the host drops it at exit.

use aarchx_plugin_sdk::ir::Region;
use aarchx_plugin_sdk::{OptionDescriptor, Options, Pass, PassContext, PassError, PassMeta, PluginPass, Stage, Str};

pub struct NopCounter {
    report: bool,
    regions: u64,
    insns: u64,
}

impl Pass for NopCounter {
    fn run(&mut self, _: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        self.regions += 1;
        self.insns += region.guest_insns().count() as u64;
        Ok(())
    }
}

impl PluginPass for NopCounter {
    const META: PassMeta = PassMeta {
        name: "nop-counter",
        version: 1,
        stage: Stage::Transform,
        doc: "Counts translated regions and guest instructions; reports them at exit.",
        options: &[OptionDescriptor::bool("report", true, "print the totals on stderr at exit")],
        before: &[Str::new("memory-order")],
        after: &[Str::new("decode")],
    };

    fn create(options: &Options) -> Result<NopCounter, PassError> {
        Ok(NopCounter { report: options.bool("report"), regions: 0, insns: 0 })
    }
}

impl Drop for NopCounter {
    fn drop(&mut self) {
        if self.report {
            eprintln!("aarchx: nop-counter: {} regions, {} guest instructions translated", self.regions, self.insns);
        }
    }
}

aarchx_plugin_sdk::export_plugin!(NopCounter);
