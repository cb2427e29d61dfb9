//! libFuzzer target `policy-lua`: [`aarchx::fuzz::policy_lua`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aarchx::fuzz::policy_lua(data));
