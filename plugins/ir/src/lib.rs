//! The aarchx intermediate representation.
//!
//! A [`Region`] is the unit of translation: one or more blocks of typed,
//! SSA-form instructions lifted from guest x86-64 code. Instructions are
//! fixed-size records ([`InstData`], 16 bytes) in one flat array; a value is
//! the index of the instruction that defines it. Every opcode is declared
//! once, in [`opcode`], and that one table drives the printer, the parser
//! and the verifier.
//!
//! Architecture invariant: this crate does no I/O and depends on nothing
//! but `core` and `alloc`, so that the same IR code links into native
//! plugins and `wasm32` plugins alike.
#![no_std]

extern crate alloc;

pub mod cond;
pub mod eval;
pub mod opcode;
pub mod parse;
pub mod print;
pub mod reg;
pub mod region;
pub mod state;
pub mod types;
pub mod verify;
pub mod x87;

pub use cond::{ExitKind, FloatCond, IntCond, MemFlags, RmwOp, TrapKind};
pub use opcode::{Format, Opcode};
pub use reg::Reg;
pub use region::{Block, Builder, InstData, Region, Value};
pub use state::GuestState;
pub use types::Type;
