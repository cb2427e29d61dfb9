//! The aarchx plugin ABI: what a plugin file exports and how a region and
//! a pass's options cross the boundary.
//!
//! A plugin exports one C function, [`ENTRY_SYMBOL`], returning a
//! [`PluginDescriptor`] (module [`descriptor`]). Regions travel in the
//! stable little-endian encoding of module [`encoding`]; options in that of
//! module [`options`]; a pass's report at exit in that of module
//! [`report`]. `docs/plugins.md` gives the exact layouts.
//!
//! Architecture invariant: `no_std` + `alloc` and no I/O, like the IR, so
//! the same ABI code links into native and `wasm32` plugins.
#![no_std]

extern crate alloc;

pub mod descriptor;
pub mod encoding;
pub mod options;
pub mod report;

pub use descriptor::{
    FinishFn, OptionDescriptor, OptionKind, OutBuf, PassDescriptor, PluginDescriptor, RunContext, Str, ABI_VERSION,
    ENTRY_SYMBOL, PLUGIN_MAGIC, STATUS_ERROR, STATUS_OK,
};
pub use encoding::{decode_region, encode_region, DecodeError, IR_ENCODING_VERSION, IR_MAGIC};
pub use report::{decode_report, encode_report, ReportDecodeError};
