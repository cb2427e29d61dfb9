//! Passes loaded from plugin files, next to the built-in ones.
//!
//! [`load`] opens a native plugin (a shared library exporting
//! `aarchx_plugin_v1`) and checks its descriptor; [`native`] adapts one of
//! its passes to the [`aarchx_pass::Pass`] trait, encoding regions across
//! the boundary and verifying what comes back; `wasm` (cargo feature
//! `wasm`) does both for WASM plugins through wasmtime; [`registry`] is the set of
//! passes a policy can name, built-ins and loaded ones alike; [`order`]
//! checks the passes' `before`/`after` constraints against a policy's list.
//! The ABI itself is the `aarchx-plugin-abi` crate, documented in
//! `docs/plugins.md`.

pub mod load;
pub mod native;
pub mod order;
pub mod registry;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use load::{Plugin, PluginError};
pub use order::OrderError;
pub use registry::{OptionDef, PassDef, PassSource, Registry};
