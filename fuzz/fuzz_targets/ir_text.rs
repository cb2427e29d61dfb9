//! libFuzzer target `ir-text`: [`aarchx::fuzz::ir_text`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aarchx::fuzz::ir_text(data));
