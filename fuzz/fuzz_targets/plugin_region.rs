//! libFuzzer target `plugin-region`: [`aarchx::fuzz::plugin_region`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aarchx::fuzz::plugin_region(data));
