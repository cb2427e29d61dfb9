//! A test plugin whose passes misbehave on purpose, one way per `mode`
//! option of `faulty`, plus passes whose ordering constraints conflict.
//! The host's tests load it to check each failure is reported, not fatal.

use aarchx_plugin_sdk::ir::Region;
use aarchx_plugin_sdk::{OptionDescriptor, Options, Pass, PassContext, PassError, PassMeta, PluginPass, Stage, Str};

/// How `faulty` misbehaves.
pub enum Mode {
    /// Returns an error.
    Error,
    /// Returns a region the verifier rejects (an empty block).
    Invalid,
    /// Panics.
    Panic,
    /// Behaves.
    Ok,
}

pub struct Faulty(Mode);

impl Pass for Faulty {
    fn run(&mut self, _: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        match self.0 {
            Mode::Error => Err(PassError(format!("refusing the region at {:#x}", region.entry))),
            Mode::Invalid => {
                region.blocks.push(Default::default());
                Ok(())
            }
            Mode::Panic => panic!("faulty pass panicked on purpose"),
            Mode::Ok => Ok(()),
        }
    }
}

impl PluginPass for Faulty {
    const META: PassMeta = PassMeta {
        name: "faulty",
        version: 1,
        stage: Stage::Transform,
        doc: "Fails the way `mode` says: error, invalid, panic or ok.",
        options: &[OptionDescriptor::string("mode", "error", "error | invalid | panic | ok")],
        before: &[],
        after: &[],
    };

    fn create(options: &Options) -> Result<Faulty, PassError> {
        let mode = match options.0.get("mode") {
            Some(aarchx_plugin_sdk::pass::OptionValue::Str(s)) => s.as_str(),
            _ => "error",
        };
        Ok(Faulty(match mode {
            "error" => Mode::Error,
            "invalid" => Mode::Invalid,
            "panic" => Mode::Panic,
            "ok" => Mode::Ok,
            other => return Err(PassError(format!("unknown mode `{other}`"))),
        }))
    }
}

/// Does nothing; must run before `cycle-b`.
pub struct CycleA;
/// Does nothing; must run before `cycle-a`.
pub struct CycleB;
/// Does nothing; must run after `memory-order`, a later stage's pass.
pub struct Late;

impl Pass for CycleA {
    fn run(&mut self, _: &PassContext<'_>, _: &mut Region) -> Result<(), PassError> {
        Ok(())
    }
}

impl Pass for CycleB {
    fn run(&mut self, _: &PassContext<'_>, _: &mut Region) -> Result<(), PassError> {
        Ok(())
    }
}

impl Pass for Late {
    fn run(&mut self, _: &PassContext<'_>, _: &mut Region) -> Result<(), PassError> {
        Ok(())
    }
}

impl PluginPass for CycleA {
    const META: PassMeta = PassMeta {
        name: "cycle-a",
        version: 1,
        stage: Stage::Transform,
        doc: "Half of an ordering cycle.",
        options: &[],
        before: &[Str::new("cycle-b")],
        after: &[],
    };

    fn create(_: &Options) -> Result<CycleA, PassError> {
        Ok(CycleA)
    }
}

impl PluginPass for CycleB {
    const META: PassMeta = PassMeta {
        name: "cycle-b",
        version: 1,
        stage: Stage::Transform,
        doc: "The other half of an ordering cycle.",
        options: &[],
        before: &[Str::new("cycle-a")],
        after: &[],
    };

    fn create(_: &Options) -> Result<CycleB, PassError> {
        Ok(CycleB)
    }
}

impl PluginPass for Late {
    const META: PassMeta = PassMeta {
        name: "late",
        version: 1,
        stage: Stage::Transform,
        doc: "A transform pass that asks to run after a lowering pass.",
        options: &[],
        before: &[],
        after: &[Str::new("memory-order")],
    };

    fn create(_: &Options) -> Result<Late, PassError> {
        Ok(Late)
    }
}

aarchx_plugin_sdk::export_plugin!(Faulty, CycleA, CycleB, Late);
