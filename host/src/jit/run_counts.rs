//! The run counters of quick translations' blocks (tiering, see
//! `crate::translate::Shape`). A quick block other blocks may branch to
//! has one 32-bit word here, which its code tests and decrements on every
//! run however it is entered (the dispatcher, a chained exit, the
//! indirect branch target cache); at zero it leaves for the dispatcher
//! with the tier-up exit (see [`super::exit`]), which translates the
//! region's superblock and so drops the quick block. Quick regions thus
//! chain like any other, and their runs cost a load, a test and a store
//! instead of a round trip through the dispatcher.
//!
//! Words live in chunks that never move while code holds their
//! addresses; a dropped block's word is forgotten, and all are freed at
//! the JIT's reset, when no code refers to them any longer. Translated
//! code writes them with plain stores: each JIT, and so each word, belongs
//! to one thread.

use std::sync::atomic::{AtomicU32, Ordering};

/// Words per chunk (4 KiB).
const CHUNK: usize = 1024;

/// The counters of one JIT's quick blocks.
#[derive(Debug, Default)]
pub struct RunCounts {
    chunks: Vec<Box<[AtomicU32; CHUNK]>>,
    /// Words handed out from the last chunk.
    used: usize,
}

impl RunCounts {
    /// A new word holding `runs`, the runs left before the tier-up exit:
    /// its address, for the block's code.
    pub fn add(&mut self, runs: u32) -> usize {
        if self.chunks.is_empty() || self.used == CHUNK {
            self.chunks.push(Box::new(std::array::from_fn(|_| AtomicU32::new(0))));
            self.used = 0;
        }
        let chunk = self.chunks.last().expect("a chunk was just pushed");
        let word = &chunk[self.used];
        self.used += 1;
        word.store(runs, Ordering::Relaxed);
        word.as_ptr() as usize
    }

    /// Frees every word (the JIT's reset: no code is left that uses them).
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_distinct_hold_their_count_and_stay_put() {
        let mut counts = RunCounts::default();
        let words: Vec<usize> = (0..(CHUNK as u32 * 2 + 3)).map(|i| counts.add(i)).collect();
        let mut sorted = words.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), words.len(), "every block has its own word");
        for (i, &w) in words.iter().enumerate() {
            assert_eq!(w % 4, 0);
            // SAFETY: `w` is the address of a live word of `counts`.
            assert_eq!(unsafe { (*(w as *const AtomicU32)).load(Ordering::Relaxed) }, i as u32);
        }
    }
}
