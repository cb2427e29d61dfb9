//! Shared by the pass tests: guest code as a byte buffer at [`BASE`].

use aarchx_pass::GuestCode;

/// Where the tests place their guest code.
pub const BASE: u64 = 0x1000;

/// Guest code: these bytes at [`BASE`], nothing readable elsewhere.
pub struct Bytes(pub Vec<u8>);

impl GuestCode for Bytes {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(src) = addr.checked_sub(BASE).and_then(|o| self.0.get(o as usize..)) else { return 0 };
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        n
    }
}
