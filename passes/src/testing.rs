//! Test support for pass fixtures: parse IR text, run a pass on it, verify
//! the result and print it back.

use aarchx_ir::parse::parse;
use aarchx_ir::print::print;
use aarchx_ir::verify::verify;
use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, Pass, PassContext, TranslationConfig};

struct NoCode;

impl GuestCode for NoCode {
    fn read(&self, _addr: u64, _buf: &mut [u8]) -> usize {
        0
    }
}

/// Runs `pass` on the region `text` describes (plain memory model) and
/// returns the printed result, which must verify.
pub fn run_pass(pass: &mut dyn Pass, text: &str) -> String {
    run_pass_with(
        pass,
        text,
        &TranslationConfig {
            memory_model: MemoryModel::Plain,
            tso_vector: false,
            cpu_level: CpuLevel::V3,
            superblocks: true,
        },
    )
}

/// [`run_pass`] under the given settings.
pub fn run_pass_with(pass: &mut dyn Pass, text: &str, config: &TranslationConfig) -> String {
    run_pass_on(pass, text, config, &NoCode)
}

/// [`run_pass_with`] over guest code `code`.
pub fn run_pass_on(pass: &mut dyn Pass, text: &str, config: &TranslationConfig, code: &dyn GuestCode) -> String {
    let mut region = parse(text).expect("fixture parses");
    verify(&region).expect("fixture verifies");
    pass.run(&PassContext { code, config }, &mut region).expect("pass succeeds");
    verify(&region).unwrap_or_else(|e| panic!("pass output does not verify: {e}\n{}", print(&region)));
    print(&region)
}
