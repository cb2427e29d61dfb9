//! Where the oracle's arena puts things (see `native.rs`): the addresses
//! forms are generated for. Apart from the native runner, so the codegen
//! fixtures can enumerate the same forms at addresses of their own.

/// Bytes in the guest's scratch buffer.
pub const BUF_SIZE: usize = 4096;

/// Addresses of the arena's parts.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub code: u64,
    /// The address of the instruction under test.
    pub insn: u64,
    pub epilogue: u64,
    pub data: u64,
    /// The guest's scratch buffer, `BUF_SIZE` bytes.
    pub buf: u64,
}

impl Layout {
    /// Whether `[addr, addr + len)` lies inside the scratch buffer.
    pub fn in_buf(&self, addr: u64, len: u64) -> bool {
        addr >= self.buf && addr.checked_add(len).is_some_and(|end| end <= self.buf + BUF_SIZE as u64)
    }
}
