//! libFuzzer target `elf`: [`aarchx::fuzz::elf_headers`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| aarchx::fuzz::elf_headers(data));
