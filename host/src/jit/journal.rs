//! The store journal of verify mode: translated code compiled with
//! `CompileOptions { journal: true }` records every guest store's
//! address, size and old bytes before storing, so the stores can be
//! undone and the interpreter run from the same memory.

/// One journaled store. The layout is the contract with the code that
/// writes it (`lower/mem.rs`): 32 bytes, address at 0, size at 8, the old
/// bytes from 16.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct JournalEntry {
    pub addr: u64,
    pub size: u64,
    /// The bytes at `addr` before the store (the first `size` are
    /// meaningful).
    pub old: [u8; 16],
}

/// Size of one entry in bytes.
pub const ENTRY_SIZE: u32 = 32;

/// Writes back the old bytes of `entries`, newest first, through the
/// guest-access probes, skipping those that fault (the store that faulted
/// in a journaled run): what undoes a faulting run.
pub fn undo(entries: &[JournalEntry]) {
    use crate::signal::probe;
    for e in entries.iter().rev() {
        for (i, byte) in e.old.iter().take(e.size.min(16) as usize).enumerate() {
            probe::store(e.addr + i as u64, 1, u128::from(*byte));
        }
    }
    probe::take_fault();
}

/// Writes the old bytes of `entries` back, newest first.
///
/// # Safety
///
/// Every entry's range must be mapped writable and must not be memory
/// Rust code holds references into.
pub unsafe fn rollback(entries: &[JournalEntry]) {
    for e in entries.iter().rev() {
        let len = (e.size as usize).min(16);
        // SAFETY: the contract; the journal itself is Rust memory the
        // guest addresses do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(e.old.as_ptr(), e.addr as *mut u8, len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_layout() {
        assert_eq!(std::mem::size_of::<JournalEntry>(), ENTRY_SIZE as usize);
        assert_eq!(std::mem::offset_of!(JournalEntry, old), 16);
    }
}
