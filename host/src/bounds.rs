//! The caps that keep aarchx's own memory bounded however much code the
//! guest generates. Everything aarchx keeps per translated region is
//! capped, and flushed whole when it reaches its cap; what was flushed is
//! made again when the guest next needs it, so a flush costs time, never
//! correctness:
//!
//! - the JIT's code cache (`jit::CACHE_SIZE` bytes of arm64 code): when a
//!   block does not fit, `Jit::reset` drops every block with all that
//!   indexes the cache (block table, stubs and their links, misaligned
//!   access fixups, the indirect branch target cache), which grow with it
//!   and are bounded by it (`engine.rs`);
//! - the IR region cache (`run.rs`): [`REGION_INSTS`] IR instructions;
//! - the maps kept by guest address beside the translations (regions the
//!   JIT declined, verify mode's execution counts, the region hook's
//!   execution counts): [`SIDE_ENTRIES`] entries each.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash};

/// The most IR instructions (the regions' arenas, dead ones included) the
/// region cache holds: about 128 MiB of IR (python3 starting up translates
/// 2.6 M; at half this bound it flushed three times and translated 19% more
/// guest instructions, see docs/benchmarks.md).
pub const REGION_INSTS: usize = 1 << 22;

/// The most entries of a side map kept by guest address.
pub const SIDE_ENTRIES: usize = 1 << 16;

/// A map kept by guest address beside the translations.
pub trait SideMap {
    fn entries(&self) -> usize;
    fn flush(&mut self);
}

impl<K: Hash + Eq, V, S: BuildHasher + Default> SideMap for HashMap<K, V, S> {
    fn entries(&self) -> usize {
        self.len()
    }
    fn flush(&mut self) {
        *self = HashMap::default();
    }
}

impl<K: Hash + Eq, S: BuildHasher + Default> SideMap for HashSet<K, S> {
    fn entries(&self) -> usize {
        self.len()
    }
    fn flush(&mut self) {
        *self = HashSet::default();
    }
}

/// Empties `map` if it is full: call before adding an entry.
pub fn make_room(map: &mut impl SideMap) {
    if map.entries() >= SIDE_ENTRIES {
        tracing::debug!(entries = map.entries(), "side map full: flushed");
        map.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_map_is_emptied_before_it_grows() {
        let mut m: HashMap<u64, u64> = (0..SIDE_ENTRIES as u64 - 1).map(|k| (k, k)).collect();
        make_room(&mut m);
        assert_eq!(m.len(), SIDE_ENTRIES - 1, "room left");
        m.insert(u64::MAX, 0);
        make_room(&mut m);
        assert!(m.is_empty());
        let mut s: HashSet<u64> = (0..SIDE_ENTRIES as u64).collect();
        make_room(&mut s);
        assert!(s.is_empty());
    }
}
