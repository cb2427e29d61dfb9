//! The indirect branch target cache: a direct-mapped table from guest
//! addresses to the host code of their blocks, probed inline by translated
//! code at `exit_indirect` (ret, call and jmp through a register or
//! memory), so an indirect branch to translated code stays in translated
//! code instead of returning to the dispatcher.
//!
//! The probe (see `lower/term.rs`), with the guest target in `t`:
//!
//! ```text
//! ldr  x16, [ctx, #OFF_IBTC]          ; the table
//! eor  x17, t, t, lsr #SHIFT          ; hash: fold high bits down
//! and  x17, x17, #(ENTRIES - 1)
//! add  x16, x16, x17, lsl #4          ; 16-byte entries
//! ldp  x17, x16, [x16]                ; guest, host
//! cmp  x17, t
//! b.ne miss
//! br   x16
//! ```
//!
//! A `probe_indirect` probes the same way and then also tests
//! [`FLAGS_DEAD_BIT`] of the host address, leaving for the target only
//! when it is set (`tbz x16, #FLAGS_DEAD_BIT, fallback; br x16`).
//!
//! The dispatcher fills the table: every block it enters is recorded
//! ([`Ibtc::insert`]), so a target seen once is found from then on. Any
//! change to the set of live blocks (invalidation, cache reset) clears the
//! whole table: entries never point at dropped code.

/// The bit of a block's host entry address that is set when the guest
/// code there writes every status flag before it reads one (regions start
/// 8-aligned; such a block's entry is placed one word in, see
/// `lower::lower`). A `probe_indirect` branches only to such targets; the
/// flags it would have written are dead there.
pub const FLAGS_DEAD_BIT: u32 = 2;

/// Entries in the table (a power of two).
pub const ENTRIES: usize = 1 << 12;
/// The hash's fold: `index = (t ^ (t >> SHIFT)) & (ENTRIES - 1)`.
pub const SHIFT: u32 = 12;

/// An address no guest branch can target (not canonical on x86-64).
const EMPTY: u64 = u64::MAX;

/// A table in which every probe misses: the context points at it instead
/// of the live table while a signal waits for delivery (see
/// `crate::signals`), so indirect branches go back to the dispatcher.
pub static NO_ENTRIES: [IbtcEntry; ENTRIES] = [IbtcEntry { guest: EMPTY, host: 0 }; ENTRIES];

/// One entry: what translated code loads with one `ldp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct IbtcEntry {
    pub guest: u64,
    pub host: u64,
}

/// The table, at a fixed address for its whole life (translated code holds
/// its address through the JIT context).
pub struct Ibtc {
    entries: Box<[IbtcEntry]>,
}

impl Ibtc {
    pub fn new() -> Ibtc {
        Ibtc { entries: vec![IbtcEntry { guest: EMPTY, host: 0 }; ENTRIES].into_boxed_slice() }
    }

    /// The table's address, for the JIT context.
    pub fn as_mut_ptr(&mut self) -> *mut IbtcEntry {
        self.entries.as_mut_ptr()
    }

    /// The slot `guest` hashes to, as translated code computes it.
    pub fn index(guest: u64) -> usize {
        ((guest ^ (guest >> SHIFT)) as usize) & (ENTRIES - 1)
    }

    /// Records that `guest`'s block starts at host address `host`,
    /// replacing whatever shared its slot.
    pub fn insert(&mut self, guest: u64, host: usize) {
        self.entries[Ibtc::index(guest)] = IbtcEntry { guest, host: host as u64 };
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.entries.fill(IbtcEntry { guest: EMPTY, host: 0 });
    }

    /// The host code recorded for `guest` (what the probe finds).
    pub fn get(&self, guest: u64) -> Option<usize> {
        let e = self.entries[Ibtc::index(guest)];
        (e.guest == guest).then_some(e.host as usize)
    }
}

impl Default for Ibtc {
    fn default() -> Ibtc {
        Ibtc::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_replaced_and_cleared() {
        let mut t = Ibtc::new();
        assert_eq!(t.get(0x401000), None);
        t.insert(0x401000, 0x7000_0000);
        assert_eq!(t.get(0x401000), Some(0x7000_0000));
        // Another address in the same slot replaces it.
        let other = (1..u64::MAX).map(|k| 0x401000 + (k << 3)).find(|g| Ibtc::index(*g) == Ibtc::index(0x401000));
        let other = other.expect("some address shares the slot");
        t.insert(other, 0x7000_1000);
        assert_eq!(t.get(0x401000), None);
        assert_eq!(t.get(other), Some(0x7000_1000));
        t.clear();
        assert_eq!(t.get(other), None);
        assert_eq!(std::mem::size_of::<IbtcEntry>(), 16);
    }
}
