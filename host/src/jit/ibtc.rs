//! The indirect branch target cache: a two-way set-associative table from
//! guest addresses to the host code of their blocks, probed inline by
//! translated code at `exit_indirect` (ret, call and jmp through a register
//! or memory), so an indirect branch to translated code stays in translated
//! code instead of returning to the dispatcher.
//!
//! The probe (see `lower/term.rs`), with the guest target in `t`, reads
//! the set's first way on its straight path and the second out of line:
//!
//! ```text
//! ldr  x16, [ctx, #OFF_IBTC]          ; the table
//! eor  x17, t, t, lsr #SHIFT          ; hash: fold high bits down
//! and  x17, x17, #(SETS - 1)
//! add  x16, x16, x17, lsl #5          ; 32-byte sets of two 16-byte ways
//! ldp  x17, x16, [x16]                ; way 0: guest, host
//! cmp  x17, t
//! b.ne way1
//! br   x16
//! way1: (the set address again) ldp x17, x16, [x16, #16]; cmp x17, t
//! b.ne miss
//! br   x16
//! ```
//!
//! A `probe_indirect` probes the same way and then also tests
//! [`FLAGS_DEAD_BIT`] of the host address, leaving for the target only
//! when it is set (`tbz x16, #FLAGS_DEAD_BIT, fallback; br x16`).
//!
//! The dispatcher fills the table: every block it enters is recorded
//! ([`Ibtc::insert`]) in its set's first way, whose entry moves to the
//! second, so a target seen once is found from then on and two targets
//! whose addresses share a set do not evict each other (a direct-mapped
//! table made perl's and sqlite3's counts move by 10-13% with where the
//! libraries happened to be mapped). Any change to the set of live blocks
//! (invalidation, cache reset) clears the whole table: entries never point
//! at dropped code.

/// The bit of a block's host entry address that is set when the guest
/// code there writes every status flag before it reads one (regions start
/// 8-aligned; such a block's entry is placed one word in, see
/// `lower::lower`). A `probe_indirect` branches only to such targets; the
/// flags it would have written are dead there.
pub const FLAGS_DEAD_BIT: u32 = 2;

/// Sets in the table (a power of two), of [`WAYS`] entries each.
pub const SETS: usize = 1 << 12;
pub const WAYS: usize = 2;
const ENTRIES: usize = SETS * WAYS;
/// The hash's fold: `set = (t ^ (t >> SHIFT)) & (SETS - 1)`.
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

    /// The set `guest` hashes to, as translated code computes it.
    pub fn set(guest: u64) -> usize {
        ((guest ^ (guest >> SHIFT)) as usize) & (SETS - 1)
    }

    /// Records that `guest`'s block starts at host address `host`, in its
    /// set's first way; the entry there moves to the second unless it is
    /// `guest`'s, and the second's is dropped.
    pub fn insert(&mut self, guest: u64, host: usize) {
        let ways = &mut self.entries[Ibtc::set(guest) * WAYS..][..WAYS];
        if ways[0].guest != guest {
            ways[1] = ways[0];
        }
        ways[0] = IbtcEntry { guest, host: host as u64 };
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.entries.fill(IbtcEntry { guest: EMPTY, host: 0 });
    }

    /// The host code recorded for `guest` (what the probe finds).
    pub fn get(&self, guest: u64) -> Option<usize> {
        let ways = &self.entries[Ibtc::set(guest) * WAYS..][..WAYS];
        ways.iter().find(|e| e.guest == guest).map(|e| e.host as usize)
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
    fn entries_are_found_kept_two_to_a_set_replaced_and_cleared() {
        let mut t = Ibtc::new();
        assert_eq!(t.get(0x401000), None);
        t.insert(0x401000, 0x7000_0000);
        assert_eq!(t.get(0x401000), Some(0x7000_0000));
        let mut same_set = (1..u64::MAX).map(|k| 0x401000 + (k << 3)).filter(|g| Ibtc::set(*g) == Ibtc::set(0x401000));
        let (b, c) = (same_set.next().expect("a set-mate"), same_set.next().expect("another"));
        // A second address in the set keeps the first.
        t.insert(b, 0x7000_1000);
        assert_eq!((t.get(0x401000), t.get(b)), (Some(0x7000_0000), Some(0x7000_1000)));
        // Entering the first again keeps both; a third drops the older.
        t.insert(0x401000, 0x7000_0000);
        t.insert(b, 0x7000_1000);
        assert_eq!(t.get(0x401000), Some(0x7000_0000), "re-entering b did not push out the other way");
        t.insert(c, 0x7000_2000);
        assert_eq!((t.get(c), t.get(b), t.get(0x401000)), (Some(0x7000_2000), Some(0x7000_1000), None));
        t.clear();
        assert_eq!(t.get(c), None);
        assert_eq!(std::mem::size_of::<IbtcEntry>(), 16);
    }
}
