//! The built-in passes of aarchx. Each is described by a
//! [`aarchx_pass::PassInfo`] and registered in [`BUILTIN`]; they use the
//! same interface as passes loaded from plugins.

extern crate alloc;

pub mod cond_fusion;
pub mod const_fold;
pub mod cse;
pub mod dce;
pub mod dead_flags;
pub mod decode;
pub mod insn_count;
pub mod leaf_inline;
pub mod memory_order;
#[cfg(feature = "plugin")]
pub mod plugin;
pub mod sink;
pub mod state_forward;
pub mod store_forward;
#[cfg(test)]
mod testing;
mod walk;

use aarchx_pass::PassInfo;

/// Every built-in pass, in no particular order.
pub static BUILTIN: &[&PassInfo] = &[
    &decode::INFO,
    &dead_flags::INFO,
    &dce::INFO,
    &memory_order::INFO,
    &state_forward::INFO,
    &store_forward::INFO,
    &cond_fusion::INFO,
    &const_fold::INFO,
    &cse::INFO,
    &sink::INFO,
    &insn_count::INFO,
    &leaf_inline::INFO,
];
