//! The per-thread context: what the host's signal handlers share with the
//! dispatcher and the executors of the same thread. It holds the signals
//! recorded for the guest with their siginfo, the fault record of the last
//! guest access that failed, the interrupt window of a guest system call
//! (`crate::signal::interruptible`) and the run of generated code in
//! progress ([`CodeRun`]), which a handler cuts short or leaves.
//!
//! It is one constant-initialised thread-local with no destructor, reached
//! through one pointer ([`current`]): reading it in a signal handler
//! allocates nothing and runs no initialiser, and a fault, a recorded
//! signal or a cancelled system call belongs to the thread it happened
//! on. Everything a handler writes is an atomic or, for the code run
//! (written only by its own thread outside handlers), a `Cell`.
//!
//! The JIT describes its run here as plain data and the handlers act on
//! that description, so the JIT and the signal code do not import each
//! other.
//!
//! Cutting runs short across threads is here too ([`cut_every_run`]):
//! when a fault handler makes a page of translated code writable, other
//! threads' stores to it no longer fault, so every JIT's indirect branch
//! cache is emptied first, and a thread that starts a run after such a
//! change without having been back to the dispatcher empties its own
//! ([`ThreadContext::code_changed`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering::SeqCst};

use crate::machine::GuestFault;

/// The context of one thread (see the module comment).
pub struct ThreadContext {
    /// Signals recorded by a handler and not yet delivered: bit `sig - 1`.
    pending: AtomicU64,
    /// The siginfo of each recorded signal, as 16 words.
    info: [[AtomicU64; 16]; 64],
    /// The last guest-access fault: signal (0 for none), si_code, address.
    fault_sig: AtomicI32,
    fault_code: AtomicI32,
    fault_addr: AtomicU64,
    /// The interrupt window word of `crate::signal::interruptible`.
    pub window: AtomicU32,
    /// The run of generated code in progress ([`CodeRun::NONE`] between
    /// runs).
    code_run: Cell<CodeRun>,
    /// [`CUTS_BEGUN`] when this thread's dispatcher last settled
    /// ([`ThreadContext::settle_code_changes`]).
    cuts_seen: Cell<u64>,
}

thread_local! {
    static CONTEXT: ThreadContext = const {
        ThreadContext {
            pending: AtomicU64::new(0),
            info: [const { [const { AtomicU64::new(0) }; 16] }; 64],
            fault_sig: AtomicI32::new(0),
            fault_code: AtomicI32::new(0),
            fault_addr: AtomicU64::new(0),
            window: AtomicU32::new(0),
            code_run: Cell::new(CodeRun::NONE),
            cuts_seen: Cell::new(0),
        }
    };
}

/// This thread's context.
pub fn current() -> &'static ThreadContext {
    let ptr = CONTEXT.with(|c| c as *const ThreadContext);
    // SAFETY: the thread-local is constant-initialised and has no
    // destructor, so it is valid from the thread's start to its end, and
    // code can only run on this thread while the thread lives. The
    // reference cannot reach another thread: `ThreadContext` holds a
    // `Cell`, so it is not `Sync` and `&ThreadContext` is not `Send`.
    unsafe { &*ptr }
}

/// The mask bit of signal `sig` (bit `sig - 1`).
pub fn bit(sig: i32) -> u64 {
    1 << (sig - 1)
}

impl ThreadContext {
    /// Records `sig` with its siginfo (16 words) as pending. Called from a
    /// signal handler.
    pub fn record_signal(&self, sig: i32, info: &[u64; 16]) {
        if !(1..=64).contains(&sig) {
            return;
        }
        for (slot, w) in self.info[(sig - 1) as usize].iter().zip(info) {
            slot.store(*w, SeqCst);
        }
        self.pending.fetch_or(bit(sig), SeqCst);
    }

    /// Takes one recorded signal among `allowed` (lowest number first),
    /// with its siginfo words.
    pub fn take_signal(&self, allowed: u64) -> Option<(i32, [u64; 16])> {
        loop {
            let ready = self.pending.load(SeqCst) & allowed;
            if ready == 0 {
                return None;
            }
            let sig = ready.trailing_zeros() as i32 + 1;
            if self.pending.fetch_and(!bit(sig), SeqCst) & bit(sig) != 0 {
                return Some((sig, std::array::from_fn(|i| self.info[(sig - 1) as usize][i].load(SeqCst))));
            }
        }
    }

    /// The recorded signals, as a mask.
    pub fn pending_signals(&self) -> u64 {
        self.pending.load(SeqCst)
    }

    /// Drops the recorded signals in `mask`.
    pub fn discard_signals(&self, mask: u64) {
        self.pending.fetch_and(!mask, SeqCst);
    }

    /// Records the fault of a guest access. Called from a signal handler,
    /// or by a runtime helper whose access faulted.
    pub fn record_fault(&self, fault: GuestFault) {
        self.fault_code.store(fault.code, SeqCst);
        self.fault_addr.store(fault.addr, SeqCst);
        self.fault_sig.store(fault.sig, SeqCst);
    }

    /// Takes the recorded fault, if any.
    pub fn take_fault(&self) -> Option<GuestFault> {
        let sig = self.fault_sig.swap(0, SeqCst);
        (sig != 0).then(|| GuestFault { sig, code: self.fault_code.load(SeqCst), addr: self.fault_addr.load(SeqCst) })
    }

    /// The run of generated code in progress, if any.
    pub fn code_run(&self) -> Option<CodeRun> {
        Some(self.code_run.get()).filter(|r| r.code.1 != 0)
    }

    /// Registers the run of generated code about to start (`None`: it is
    /// over).
    pub fn set_code_run(&self, run: Option<CodeRun>) {
        self.code_run.set(run.unwrap_or(CodeRun::NONE));
    }

    /// Called by the dispatcher before it looks code up: waits until every
    /// [`cut_every_run`] begun so far has ended (the change it made, a page
    /// recorded written, is then there for the look-up to collect), and
    /// notes how many have begun.
    pub fn settle_code_changes(&self) {
        loop {
            let begun = CUTS_BEGUN.load(SeqCst);
            if CUTS_IN_FLIGHT.load(SeqCst) == 0 {
                self.cuts_seen.set(begun);
                return;
            }
            std::thread::yield_now();
        }
    }

    /// Whether a [`cut_every_run`] has begun since this thread's
    /// dispatcher last settled: a run about to start must then keep its
    /// indirect branch cache empty, as the cut would have made it had the
    /// run been in progress. Called after the run's real cache pointer is
    /// in place (registered with [`register_cut`]), so that either this
    /// sees the cut or the cut sees the pointer.
    pub fn code_changed(&self) -> bool {
        CUTS_BEGUN.load(SeqCst) != self.cuts_seen.get()
    }
}

/// How many JIT contexts [`register_cut`] can hold at once: one per live
/// guest thread.
const CUT_SLOTS: usize = 1 << 14;

/// The registered cut slots: the address of a JIT context's indirect
/// branch cache pointer (0 when free, [`CLAIMED`] while being registered)
/// and the pointer that empties it.
static CUT_AT: [AtomicUsize; CUT_SLOTS] = [const { AtomicUsize::new(0) }; CUT_SLOTS];
static CUT_VALUE: [AtomicUsize; CUT_SLOTS] = [const { AtomicUsize::new(0) }; CUT_SLOTS];
const CLAIMED: usize = 1;
/// One past the highest slot ever claimed.
static CUT_HIGH: AtomicUsize = AtomicUsize::new(0);
/// Cuts begun, and cuts in progress (their writes to registered slots may
/// not be done).
static CUTS_BEGUN: AtomicU64 = AtomicU64::new(0);
static CUTS_IN_FLIGHT: AtomicU32 = AtomicU32::new(0);

/// A JIT context's registration with [`cut_every_run`], undone on drop.
#[derive(Debug)]
pub struct CutRegistration(usize);

impl CutRegistration {
    /// Its slot, for [`cut_one`].
    pub fn slot(&self) -> usize {
        self.0
    }
}

/// Empties the one indirect branch cache registered in `slot` (a
/// [`CutRegistration::slot`] of this thread's own JIT, alive while its run
/// is), as [`cut_every_run`] empties them all: what a signal for this
/// thread does to the run in progress. Async-signal-safe.
pub fn cut_one(slot: usize) {
    let Some(at) = CUT_AT.get(slot).map(|a| a.load(SeqCst)) else { return };
    if at > CLAIMED {
        // SAFETY: the registration is alive (see above), so `at` is its
        // `AtomicUsize`.
        unsafe { &*(at as *const AtomicUsize) }.store(CUT_VALUE[slot].load(SeqCst), SeqCst);
    }
}

/// Registers the indirect branch cache pointer at `at` (a `usize` word
/// that translated code loads and the JIT stores atomically), to be set
/// to `empty` by every [`cut_every_run`] until the registration is
/// dropped. `None` when every slot is taken.
pub fn register_cut(at: &AtomicUsize, empty: usize) -> Option<CutRegistration> {
    for (i, slot) in CUT_AT.iter().enumerate() {
        // Claimed with `CLAIMED` first, so that the value is this
        // registration's before a cut can use the address.
        if slot.compare_exchange(0, CLAIMED, SeqCst, SeqCst).is_ok() {
            CUT_VALUE[i].store(empty, SeqCst);
            slot.store(at as *const AtomicUsize as usize, SeqCst);
            CUT_HIGH.fetch_max(i + 1, SeqCst);
            return Some(CutRegistration(i));
        }
    }
    None
}

impl Drop for CutRegistration {
    /// Frees the slot, then waits for cuts in progress, which may have
    /// read the old address, so that the word may be freed afterwards.
    fn drop(&mut self) {
        CUT_AT[self.0].store(0, SeqCst);
        while CUTS_IN_FLIGHT.load(SeqCst) != 0 {
            std::thread::yield_now();
        }
    }
}

/// Runs `change`, which lets guest stores to pages of translated code
/// through without a fault (makes them writable), with every thread's run
/// of generated code cut short first as far as its indirect branches go
/// (its chain budget and direct chains are its own): each registered
/// indirect branch cache is emptied, so a thread whose store to such a page no longer
/// faults leaves for its dispatcher at its next indirect branch instead
/// of entering the page's old translation from the cache, and its
/// dispatcher waits for `change` to end before it looks code up.
/// Async-signal-safe: no lock, no allocation (fault handlers call it).
pub fn cut_every_run<R>(change: impl FnOnce() -> R) -> R {
    CUTS_IN_FLIGHT.fetch_add(1, SeqCst);
    CUTS_BEGUN.fetch_add(1, SeqCst);
    for i in 0..CUT_HIGH.load(SeqCst) {
        let at = CUT_AT[i].load(SeqCst);
        if at > CLAIMED {
            // SAFETY: a registered address is an `AtomicUsize` kept alive
            // until its registration is dropped, which waits for this cut
            // (counted in flight since before the address was read).
            unsafe { &*(at as *const AtomicUsize) }.store(CUT_VALUE[i].load(SeqCst), SeqCst);
        }
    }
    let changed = change();
    CUTS_IN_FLIGHT.fetch_sub(1, SeqCst);
    changed
}

/// In the child of a fork: cuts other threads of the parent had in
/// progress never end here.
pub fn forked_child() {
    CUTS_IN_FLIGHT.store(0, SeqCst);
}

/// A run of generated code, as the signal handlers need it: where the code
/// lies, how to leave it at a fault, how to cut it short for a signal, and
/// the accesses that resume elsewhere when misaligned.
#[derive(Clone, Copy, Debug)]
pub struct CodeRun {
    /// The code cache: a fault with the pc in `[start, end)` is the
    /// guest's.
    pub code: (usize, usize),
    /// Where translated blocks start in it (past the trampoline).
    pub blocks: usize,
    /// Leaving at a fault: pc, the stack pointer stored at `sp_slot`, and
    /// x0 = `fault_code`.
    pub exit: usize,
    pub sp_slot: usize,
    pub fault_code: u64,
    /// Cutting the run short for a signal: [`cut_one`] of the run's JIT
    /// context's cut slot (its indirect branch cache swapped for a table
    /// with no entries), and, when the pc is in a block, general register
    /// `budget_reg` set to 1 (the chain budget, spent at the next check).
    pub cut: Option<usize>,
    pub budget_reg: usize,
    /// The misaligned-access fixup table (sorted by `at`, alive while the
    /// run is registered) and how to patch an instruction of the code.
    pub fixups: (usize, usize),
    pub patch: Option<unsafe fn(usize, u32)>,
    /// The leaf routines' code `[start, end)` and where a fault in it
    /// resumes (see `crate::jit::leaf`).
    pub leaf: (usize, usize, usize),
}

impl CodeRun {
    const NONE: CodeRun = CodeRun {
        code: (0, 0),
        blocks: 0,
        exit: 0,
        sp_slot: 0,
        fault_code: 0,
        cut: None,
        budget_reg: 0,
        fixups: (0, 0),
        patch: None,
        leaf: (0, 0, 0),
    };

    /// Whether `pc` lies in the run's code.
    pub fn contains(&self, pc: usize) -> bool {
        (self.code.0..self.code.1).contains(&pc)
    }

    /// Where a fault at `pc` resumes when `pc` is in a leaf routine.
    pub fn leaf_decline(&self, pc: usize) -> Option<usize> {
        let (start, end, decline) = self.leaf;
        (start..end).contains(&pc).then_some(decline)
    }

    /// The fixup of the acquire/release access at `pc`, if it is one.
    pub fn fixup(&self, pc: usize) -> Option<Fixup> {
        let (ptr, len) = self.fixups;
        if len == 0 {
            return None;
        }
        // SAFETY: the run registered this slice of its fixup table, which
        // nothing changes while the run is registered (only then is a
        // `CodeRun` returned by `code_run`).
        let table = unsafe { std::slice::from_raw_parts(ptr as *const Fixup, len) };
        let i = table.binary_search_by_key(&pc, |f| f.at).ok()?;
        Some(table[i])
    }
}

/// A bare acquire/release access of JIT code (`at`), the fenced plain
/// version a misaligned one resumes at (`fixup`), and the `b fixup` that
/// replaces the access once it has been misaligned (encoded in advance:
/// the handler does not assemble).
#[derive(Clone, Copy, Debug)]
pub struct Fixup {
    pub at: usize,
    pub fixup: usize,
    pub branch: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_empties_every_registered_cache_and_a_run_started_after_it_knows() {
        let (a, b) = (AtomicUsize::new(0x1000), AtomicUsize::new(0x2000));
        let ra = register_cut(&a, 7).expect("a free slot");
        let rb = register_cut(&b, 9).expect("a free slot");
        // (Other tests may cut at the same time: only what this one's cuts
        // must do is asserted.)
        let context = current();
        context.settle_code_changes();
        let during = cut_every_run(|| (a.load(SeqCst), b.load(SeqCst)));
        assert_eq!(during, (7, 9), "emptied before the change runs");
        assert!(context.code_changed(), "a cut since the last settle");
        drop(ra);
        a.store(0x1000, SeqCst);
        cut_every_run(|| ());
        assert_eq!(a.load(SeqCst), 0x1000, "no longer registered");
        assert_eq!(b.load(SeqCst), 9);
        drop(rb);
    }
}
