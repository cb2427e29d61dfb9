//! Tests of the arm64 backend alone, run under qemu-aarch64: chaining,
//! the journal, large frames, and differential runs of fixtures and
//! lifted programs against the interpreter from random states.
//!
//! The IR semantic tests, with hand-written expected values, are shared
//! with the interpreter in [`crate::exec_tests`], which runs each through
//! the JIT (plain and journaled) and the interpreter; these tests use its
//! runner ([`crate::exec_tests::check`]) and guest memory.

mod chain;
mod diff;
mod frames;
mod fuzz_cases;
mod journal;
mod lifted;
