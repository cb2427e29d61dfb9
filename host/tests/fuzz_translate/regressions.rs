//! Sequences the fuzzer once found differing, shrunk and pasted here as the
//! report prints them (code assembled for an arena whose code page is at 0,
//! see `native::layout_at`; rsp in that arena's buffer). Each runs before
//! every batch and must agree with the CPU.

/// One pasted case.
pub struct Regression {
    /// What went wrong, and where it was fixed.
    pub what: &'static str,
    pub code: &'static [u8],
    pub gpr: [u64; 16],
    /// cf pf af zf sf of df.
    pub flags: [u8; 7],
    /// The XMM registers that are not zero.
    pub xmm: &'static [(usize, u128)],
    /// The buffer: `states::random_case`'s bytes for this seed, or zeros.
    pub buffer: Option<u64>,
}

pub static REGRESSIONS: &[Regression] = &[];
