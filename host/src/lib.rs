//! The aarchx runtime: loads an x86-64 Linux program, translates its code
//! region by region through the policy's pass pipeline, and executes the
//! result on the arm64 JIT or the IR interpreter.
//!
//! The `aarchx` binary (main.rs) is a thin command line over this library;
//! the integration tests and the lifter oracle use the library directly.

pub mod binfmt;
pub mod bounds;
pub mod cli;
pub mod code_pages;
pub mod counters;
pub mod cpuid;
pub mod disk_cache;
pub mod engine;
#[cfg(test)]
mod exec_tests;
pub mod fuzz;
pub mod interp;
pub mod jit;
pub mod leaf;
pub mod loader;
pub mod machine;
pub mod mem;
pub mod objects;
pub mod panics;
pub mod plugin;
pub mod policy;
pub mod programs;
pub mod run;
pub mod settings;
pub mod signal;
pub mod signals;
pub mod symbols;
pub mod sys;
pub mod syscall;
pub mod thread;
pub mod translate;
pub mod verify;
pub mod x87;
