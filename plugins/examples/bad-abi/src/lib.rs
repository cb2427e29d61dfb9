//! A test plugin that declares ABI version 99, which no host speaks: the
//! host must refuse it with a one-line error naming both versions.

use aarchx_plugin_abi::{PluginDescriptor, IR_ENCODING_VERSION, PLUGIN_MAGIC};

static PLUGIN: PluginDescriptor = PluginDescriptor {
    magic: PLUGIN_MAGIC,
    abi_version: 99,
    ir_encoding_version: IR_ENCODING_VERSION,
    n_passes: 0,
    passes: core::ptr::null(),
};

/// The entry point, with a descriptor from the future.
#[no_mangle]
pub extern "C" fn aarchx_plugin_v1() -> *const PluginDescriptor {
    &PLUGIN
}
