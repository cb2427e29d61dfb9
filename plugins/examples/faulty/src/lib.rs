//! A test plugin whose passes misbehave on purpose, one way per `mode`
//! option of `faulty`, plus passes whose ordering constraints conflict.
//! The host's tests load it, native and WASM, to check each failure is
//! reported, not fatal. `trap`, `loop` and `hog` are for the WASM build:
//! natively nothing stops a looping pass, and `trap` does not exist.
#![no_std]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;

use aarchx_plugin_sdk::ir::{Opcode, Region, Type};
use aarchx_plugin_sdk::{OptionDescriptor, Options, Pass, PassContext, PassError, PassMeta, PluginPass, Stage, Str};

/// How `faulty` misbehaves.
pub enum Mode {
    /// Returns an error.
    Error,
    /// Returns a region the verifier rejects (an empty block).
    Invalid,
    /// Panics.
    Panic,
    /// Executes a WASM `unreachable` (WASM builds only).
    Trap,
    /// Never returns.
    Loop,
    /// Asks for 1 GiB, more than a WASM plugin's memory limit.
    Hog,
    /// Returns valid IR that computes the wrong thing: every 64-bit `add`
    /// becomes a `sub` (what verify mode's reference check must catch).
    Miscompile,
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
            Mode::Trap => trap(),
            Mode::Loop => loop {
                core::hint::spin_loop();
            },
            Mode::Hog => {
                let big: Vec<u8> = Vec::with_capacity(1 << 30);
                core::hint::black_box(big);
                Ok(())
            }
            Mode::Miscompile => {
                for d in &mut region.insts {
                    if d.op == Opcode::Add && d.ty == Type::I64 {
                        d.op = Opcode::Sub;
                    }
                }
                Ok(())
            }
            Mode::Ok => Ok(()),
        }
    }
}

impl PluginPass for Faulty {
    const META: PassMeta = PassMeta {
        name: "faulty",
        version: 1,
        stage: Stage::Transform,
        doc: "Fails the way `mode` says: error, invalid, panic, trap, loop, hog, miscompile or ok.",
        options: &[OptionDescriptor::string(
            "mode",
            "error",
            "error | invalid | panic | trap | loop | hog | miscompile | ok",
        )],
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
            "trap" if cfg!(target_arch = "wasm32") => Mode::Trap,
            "loop" => Mode::Loop,
            "hog" => Mode::Hog,
            "miscompile" => Mode::Miscompile,
            "ok" => Mode::Ok,
            other => return Err(PassError(format!("unknown mode `{other}`"))),
        }))
    }
}

#[cfg(target_arch = "wasm32")]
fn trap() -> ! {
    core::arch::wasm32::unreachable()
}

#[cfg(not(target_arch = "wasm32"))]
fn trap() -> ! {
    unreachable!("`create` makes mode `trap` only in WASM builds")
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
