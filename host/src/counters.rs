//! The instrumentation counters that `count` instructions add to: one
//! process-wide table of u64, allocated once (at the first counter) and
//! never moved, so translated code addresses a counter by its absolute
//! address. The table is reserved zeroed and the kernel supplies its pages
//! on first touch, so unused capacity costs address space only.
//!
//! A pass numbers its own counters from 0; [`PassCounters`] rewrites each
//! such `count` to a global id after the pass runs, and at exit gathers the
//! values in the pass's numbering for `Pass::finish`.

use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

use aarchx_ir::opcode::COUNT_GLOBAL;
use aarchx_ir::{Opcode, Region};

/// How many counters the table holds (32 MiB of address space).
pub const CAPACITY: usize = 1 << 22;

/// A `count` the host cannot accept.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CounterError {
    #[error("all {CAPACITY} instrumentation counters are in use")]
    Full,
    #[error("a `count` names global counter {0}, which the host never assigned")]
    Forged(u32),
}

/// The table: `CAPACITY` counters, of which the first `used` are assigned.
struct Table {
    counters: &'static [AtomicU64],
    used: AtomicUsize,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        // `vec![0; n]` allocates zeroed memory (calloc), which for this
        // size is a fresh anonymous mapping: no page is written here.
        let zeroed: &'static mut [u64] = Vec::leak(vec![0u64; CAPACITY]);
        assert_eq!(zeroed.as_ptr().align_offset(std::mem::align_of::<AtomicU64>()), 0, "u64 is 8-aligned");
        // SAFETY: AtomicU64 has u64's size and bit validity, the slice is
        // aligned for it (checked above), and the leaked `&mut` is consumed
        // here, so every later access goes through the atomics (or through
        // translated code at their addresses).
        let counters: &'static [AtomicU64] = unsafe { &*(zeroed as *mut [u64] as *const [AtomicU64]) };
        Table { counters, used: AtomicUsize::new(0) }
    })
}

/// Assigns a new counter (zero) and returns its global id.
pub fn allocate() -> Result<u32, CounterError> {
    let t = table();
    let id = t.used.fetch_add(1, Ordering::Relaxed);
    if id >= CAPACITY {
        t.used.store(CAPACITY, Ordering::Relaxed);
        return Err(CounterError::Full);
    }
    Ok(id as u32)
}

/// Whether `id` is an assigned global counter.
fn assigned(id: u32) -> bool {
    (id as usize) < table().used.load(Ordering::Relaxed)
}

/// The counter `id` (assigned, see [`PassCounters::remap`]).
fn counter(id: u32) -> &'static AtomicU64 {
    assert!(assigned(id), "count of unassigned global counter {id}: the pipeline checks every region");
    &table().counters[id as usize]
}

thread_local! {
    /// Set while the interpreter replays what translated code already ran.
    static MUTED: Cell<bool> = const { Cell::new(false) };
}

/// Adds `amount` to counter `id` (the interpreter's `count`), unless muted.
pub fn add(id: u32, amount: u64) {
    if !MUTED.get() {
        counter(id).fetch_add(amount, Ordering::Relaxed);
    }
}

/// Runs `f` with the interpreter's `count`s muted: for a replay of a region
/// whose translated code faulted, which counted the same instructions up to
/// the fault already.
pub fn muted<T>(f: impl FnOnce() -> T) -> T {
    MUTED.set(true);
    let out = f();
    MUTED.set(false);
    out
}

/// The value of counter `id`.
pub fn value(id: u32) -> u64 {
    counter(id).load(Ordering::Relaxed)
}

/// The host address of counter `id`, for translated code (a plain `ldr`,
/// `add`, `str` on it: the guest is single-threaded).
pub fn address(id: u32) -> u64 {
    counter(id).as_ptr() as u64
}

/// One pass instance's counters: its own ids and the global ones they map to.
#[derive(Debug, Default)]
pub struct PassCounters {
    global: FxHashMap<u32, u32>,
}

impl PassCounters {
    /// Rewrites the `count`s the pass just emitted (those in its own
    /// numbering) to global ids, assigning a global counter to each id the
    /// first time it appears. A `global` count must name an assigned
    /// counter: a pass may move or copy the host's counts, never invent one.
    /// Only the arena from index `from` on is looked at: a built-in pass
    /// adds its counts as new instructions (a debug build checks it), so
    /// its caller passes the arena's length before it ran; a plugin's
    /// region is looked at whole (`from` 0).
    pub fn remap(&mut self, region: &mut Region, from: usize) -> Result<(), CounterError> {
        let from = from.min(region.insts.len());
        debug_assert!(
            region.insts[..from].iter().all(|d| d.op != Opcode::Count || d.aux == COUNT_GLOBAL),
            "a pass turned an existing instruction into a count of its own"
        );
        for d in region.insts[from..].iter_mut().filter(|d| d.op == Opcode::Count) {
            if d.aux == COUNT_GLOBAL {
                if !assigned(d.args[0]) {
                    return Err(CounterError::Forged(d.args[0]));
                }
                continue;
            }
            let global = match self.global.get(&d.args[0]) {
                Some(g) => *g,
                None => {
                    let g = allocate()?;
                    self.global.insert(d.args[0], g);
                    g
                }
            };
            d.args[0] = global;
            d.aux = COUNT_GLOBAL;
        }
        Ok(())
    }

    /// The counters' values in the pass's own numbering: index `i` is its
    /// counter `i`, zero for ids it never used.
    pub fn values(&self) -> Vec<u64> {
        let len = self.global.keys().max().map_or(0, |m| *m as usize + 1);
        let mut out = vec![0; len];
        for (local, global) in &self.global {
            out[*local as usize] = value(*global);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aarchx_ir::parse::parse;
    use aarchx_ir::print::print;

    #[test]
    fn remaps_own_ids_once_and_keeps_global_ones() {
        let mut pc = PassCounters::default();
        let mut r = parse("region 0x0\nblock0:\n  count 0, 2\n  count 5, 3\n  count 0, 4\n  exit jump 0x0\n").unwrap();
        pc.remap(&mut r, 0).unwrap();
        let ids: Vec<u32> = r.insts.iter().filter(|d| d.op == Opcode::Count).map(|d| d.args[0]).collect();
        assert_eq!(ids[0], ids[2]);
        assert_ne!(ids[0], ids[1]);
        assert!(r.insts.iter().all(|d| d.op != Opcode::Count || d.aux == COUNT_GLOBAL), "{}", print(&r));
        // A second pass over the remapped region leaves it alone.
        let before = r.clone();
        PassCounters::default().remap(&mut r, 0).unwrap();
        assert_eq!(r, before);
        add(ids[0], 6);
        add(ids[1], 1);
        assert_eq!(pc.values(), vec![6, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn muted_adds_nothing() {
        let id = allocate().unwrap();
        add(id, 2);
        muted(|| add(id, 5));
        add(id, 1);
        assert_eq!(value(id), 3);
    }

    #[test]
    fn refuses_forged_global_ids() {
        let mut r = parse("region 0x0\nblock0:\n  count global 4000000, 1\n  exit jump 0x0\n").unwrap();
        assert_eq!(PassCounters::default().remap(&mut r, 0), Err(CounterError::Forged(4_000_000)));
    }
}
