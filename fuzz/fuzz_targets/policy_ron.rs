//! libFuzzer target `policy-ron`: [`aarchx::fuzz::policy_ron`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aarchx::fuzz::policy_ron(data));
