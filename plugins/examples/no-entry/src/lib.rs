//! A test shared library that is not a plugin: it lacks the
//! `aarchx_plugin_v1` entry point, which the host must report.

/// Some exported function, so the library is not empty.
#[no_mangle]
pub extern "C" fn not_a_plugin() -> u32 {
    0
}
