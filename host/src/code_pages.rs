//! Self-modifying code: which host pages hold guest code that translations
//! depend on, and how a store to them is seen. x86 needs no cache flush
//! (a store to code takes effect the next time the code runs), so:
//!
//! - a *writable* page that a translation depends on is write-protected
//!   on the host (`GuestMemory::protect_code`) and *armed* here first;
//!   the guest's next store to it faults, and the fault handler
//!   (`crate::signals`), finding the page armed in a table it reads
//!   without a lock ([`resume_write`]), makes the page writable again,
//!   marks it written and lets the store run again where it stood: the
//!   store happens exactly once, with every earlier store of the run
//!   kept, as on the CPU, whichever thread made it. Every thread's
//!   indirect branches go back to its dispatcher from then on
//!   (`thread::cut_every_run`, before the page is writable, so that
//!   another thread's store that no longer faults is not followed by the
//!   page's old code through its indirect branch cache; direct chains are
//!   not cut), and the dispatcher, at its
//!   next look-up, collects the written pages ([`CodePages::take_written`])
//!   and drops the translations that depend on them, on every thread;
//! - a page that keeps being written ([`FAULTS_TO_SELF_CHECK`] times) or
//!   that the guest maps shared and executable (another mapping, a
//!   memfd's second view, can change it without a fault here) is
//!   *self-checking* instead: it stays writable, and each region depending
//!   on it keeps a copy of its bytes that the dispatcher compares before
//!   every run (such a region is entered only from the dispatcher);
//! - a system call the host kernel fails with EFAULT while code pages are
//!   protected (a `read` into code) is retried once they are all made
//!   writable again and recorded as written.
//!
//! This file keeps the books and the handler's table; `mem.rs` changes the
//! host protections, the dispatcher (`run.rs`) invalidates. Pages are host
//! pages (a host page may be larger than the guest's 4 KiB).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU8, Ordering};

/// Times a page may be written before it turns self-checking.
pub const FAULTS_TO_SELF_CHECK: u32 = 8;

/// A page's bits in the table. `CODE`: translations depend on the page and
/// the guest may write it, so a write fault on it is never the guest's
/// (the store is retried: the page is writable, or armed and made so).
/// `ARMED`: write-protected for its code (set only once the protection is
/// in place, cleared before the handler removes it). `WRITTEN`: made
/// writable by the handler, not yet collected. `BUSY`: the page's
/// protection is being changed, by [`CodePages::arm`] or the handler; the
/// other waits, so that the bits always say what the protection is (a
/// handler that made a page writable after it had been protected again
/// once left it read-only and unarmed, and every store to it faulted
/// forever).
const CODE: u8 = 1;
const ARMED: u8 = 2;
const WRITTEN: u8 = 4;
const BUSY: u8 = 8;

/// The table: a byte per host page number, in leaves of `1 << LEAF_BITS`
/// allocated on first use (by the dispatcher, under the memory map's
/// lock) and never freed, so the handler reads them without a lock.
const LEAF_BITS: u32 = 18;
const ROOT_LEN: usize = 1 << 17;
static ROOT: [AtomicPtr<AtomicU8>; ROOT_LEN] = [const { AtomicPtr::new(std::ptr::null_mut()) }; ROOT_LEN];
static PAGE_SHIFT: AtomicU32 = AtomicU32::new(12);

/// Set when a page is marked written or code changes: one load per
/// look-up instead of a lock.
static WRITES: AtomicBool = AtomicBool::new(false);

/// Whether code changes wait for their translations to be dropped.
pub fn written_pending() -> bool {
    WRITES.load(Ordering::Acquire)
}

/// The table's byte for the page holding `addr`, if its leaf exists.
fn slot(addr: u64) -> Option<&'static AtomicU8> {
    let number = addr >> PAGE_SHIFT.load(Ordering::Relaxed);
    let (root, index) = ((number >> LEAF_BITS) as usize, (number & ((1 << LEAF_BITS) - 1)) as usize);
    let leaf = ROOT.get(root)?.load(Ordering::Acquire);
    // SAFETY: a non-null root entry is a leaked leaf of `1 << LEAF_BITS`
    // bytes (see `slot_or_insert`), never freed; `index` is below that.
    (!leaf.is_null()).then(|| unsafe { &*leaf.add(index) })
}

/// The table's byte for the page holding `addr`, its leaf allocated if
/// need be; `None` past the table (no guest address is).
fn slot_or_insert(addr: u64) -> Option<&'static AtomicU8> {
    let number = addr >> PAGE_SHIFT.load(Ordering::Relaxed);
    let entry = ROOT.get((number >> LEAF_BITS) as usize)?;
    if entry.load(Ordering::Acquire).is_null() {
        let leaf: &'static mut [AtomicU8] = Box::leak((0..1 << LEAF_BITS).map(|_| AtomicU8::new(0)).collect());
        // Another memory map (a test's) may have raced us here: the loser
        // leaks 256 KiB once.
        entry.compare_exchange(std::ptr::null_mut(), leaf.as_mut_ptr(), Ordering::AcqRel, Ordering::Acquire).ok();
    }
    slot(addr)
}

/// For the fault handler: a write to `addr` faulted on a page whose
/// permissions refuse it. When the page holds code translations depend on
/// and the guest may write it, it is made writable (if it is armed) and
/// recorded as written, and the store is to run again: returns true.
/// Otherwise the fault is the guest's. Takes no lock and allocates
/// nothing (async-signal-safe); it waits, yielding, while another thread
/// changes the page's protection ([`CodePages::arm`], another handler).
pub fn resume_write(addr: u64) -> bool {
    let Some(slot) = slot(addr) else { return false };
    // The page is this handler's to make writable once it has taken
    // ARMED away, marked BUSY; a change in progress is waited for.
    loop {
        let bits = slot.load(Ordering::Acquire);
        if bits & CODE == 0 {
            return false;
        }
        if bits & BUSY != 0 {
            std::thread::yield_now();
            continue;
        }
        if bits & ARMED == 0 {
            return true;
        }
        if slot.compare_exchange(bits, (bits & !ARMED) | BUSY, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            break;
        }
    }
    let size = 1u64 << PAGE_SHIFT.load(Ordering::Relaxed);
    let page = addr & !(size - 1);
    // Other threads' stores to the page will not fault either: their runs
    // are cut short first.
    crate::thread::cut_every_run(|| {
        // SAFETY: an armed page is guest memory the guest has writable
        // (`mem.rs` arms no other, and disarms a page the guest makes
        // read-only or unmaps): it gets back the host protection of a
        // writable guest page.
        let writable = unsafe { crate::sys::mem::protect(page, size, libc::PROT_READ | libc::PROT_WRITE) }.is_ok();
        // Still protected when that failed: armed again, and the fault is
        // the guest's.
        slot.fetch_or(if writable { WRITTEN } else { ARMED }, Ordering::AcqRel);
        slot.fetch_and(!BUSY, Ordering::AcqRel);
        if writable {
            WRITES.store(true, Ordering::Release);
        }
        writable
    })
}

/// The books: the pages translations depend on that the guest may write
/// (tracked, with their bits in the table), self-checking pages, writes
/// per page, and pages recorded as written outside the handler.
#[derive(Debug, Default)]
pub struct CodePages {
    tracked: BTreeSet<u64>,
    self_checking: BTreeSet<u64>,
    writes: HashMap<u64, u32>,
    written: Vec<(u64, u64)>,
    page: u64,
}

impl CodePages {
    pub fn new(page: u64) -> CodePages {
        PAGE_SHIFT.store(page.trailing_zeros(), Ordering::Relaxed);
        CodePages { page, ..CodePages::default() }
    }

    /// The host pages `[start, end)` touches.
    pub fn pages(&self, start: u64, end: u64) -> impl Iterator<Item = u64> {
        let page = self.page;
        let first = start & !(page - 1);
        (first..end).step_by(page as usize)
    }

    /// Whether `page` is write-protected for its code.
    pub fn is_armed(&self, page: u64) -> bool {
        slot(page).is_some_and(|s| s.load(Ordering::Acquire) & ARMED != 0)
    }

    pub fn is_self_checking(&self, page: u64) -> bool {
        self.self_checking.contains(&page)
    }

    /// Write-protects `page`, writable by the guest, for its code:
    /// `protect` changes its host protection, with the page marked busy
    /// meanwhile (a write fault on it waits), and the page is armed if
    /// that succeeded. `None` (nothing protected) if the table cannot hold
    /// the page.
    pub fn arm<E>(&mut self, page: u64, protect: impl FnOnce() -> Result<(), E>) -> Option<Result<(), E>> {
        let slot = slot_or_insert(page)?;
        // A handler making the page writable finishes first.
        while slot
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| (b & BUSY == 0).then_some(b | CODE | BUSY))
            .is_err()
        {
            std::thread::yield_now();
        }
        self.tracked.insert(page);
        let protected = protect();
        if protected.is_ok() {
            slot.fetch_or(ARMED, Ordering::AcqRel);
        }
        slot.fetch_and(!BUSY, Ordering::AcqRel);
        Some(protected)
    }

    /// Write-protecting the armed `page` failed: it is not protected.
    pub fn disarm(&mut self, page: u64) {
        if let Some(slot) = slot(page) {
            slot.fetch_and(WRITTEN, Ordering::AcqRel);
        }
    }

    /// The guest made the tracked `page` read-only: a write fault on it
    /// is the guest's until it is writable again and armed.
    pub fn guest_read_only(&mut self, page: u64) {
        self.disarm(page);
    }

    /// Every armed page is disarmed and recorded written; returns them,
    /// for the caller to make writable again.
    pub fn unprotect_all(&mut self) -> Vec<u64> {
        let pages: Vec<u64> = self.tracked.iter().copied().filter(|&p| self.is_armed(p)).collect();
        for &page in &pages {
            if let Some(slot) = slot(page) {
                slot.fetch_and(!ARMED, Ordering::AcqRel);
            }
            self.written.push((page, self.page));
        }
        WRITES.store(true, Ordering::Release);
        pages
    }

    /// The guest maps `[start, end)` shared and executable.
    pub fn shared_code(&mut self, start: u64, end: u64) {
        let pages: Vec<u64> = self.pages(start, end).collect();
        self.self_checking.extend(pages);
    }

    /// `page` no longer holds guest memory: it is forgotten (a write the
    /// handler let through is still collected).
    pub fn forget(&mut self, page: u64) {
        if let Some(slot) = slot(page) {
            if slot.swap(0, Ordering::AcqRel) & WRITTEN != 0 {
                self.written.push((page, self.page));
            }
        }
        self.tracked.remove(&page);
        self.self_checking.remove(&page);
        self.writes.remove(&page);
    }

    /// The tracked pages in `[start, end)`.
    pub fn tracked_in(&self, start: u64, end: u64) -> Vec<u64> {
        self.tracked.range(start & !(self.page - 1)..end).copied().collect()
    }

    /// The self-checking pages in `[start, end)`.
    pub fn self_checking_in(&self, start: u64, end: u64) -> Vec<u64> {
        self.self_checking.range(start & !(self.page - 1)..end).copied().collect()
    }

    /// Guest code in `[start, start + len)` changed another way (unmapped,
    /// replaced, made non-executable): collected with the written pages.
    pub fn record_change(&mut self, start: u64, len: u64) {
        self.written.push((start, len));
        WRITES.store(true, Ordering::Release);
    }

    /// The pages written since the last call, as (start, length): those
    /// the handler made writable are disarmed (their code is to be
    /// dropped, and the page protected again when code on it is
    /// translated again), and one written too often turns self-checking.
    pub fn take_written(&mut self) -> Vec<(u64, u64)> {
        WRITES.store(false, Ordering::Release);
        let mut written = std::mem::take(&mut self.written);
        for &page in &self.tracked {
            let Some(slot) = slot(page) else { continue };
            if slot.load(Ordering::Acquire) & WRITTEN == 0 {
                continue;
            }
            // The handler took ARMED away; the page may be armed again
            // since (its new code is dropped with the old, and translated
            // again). A straggling fault of another thread on the page,
            // from before it was writable, is retried.
            slot.fetch_and(!WRITTEN, Ordering::AcqRel);
            let writes = self.writes.entry(page).or_default();
            *writes += 1;
            if *writes >= FAULTS_TO_SELF_CHECK {
                tracing::debug!(page = format_args!("{page:#x}"), writes = *writes, "code page turns self-checking");
                self.self_checking.insert(page);
            }
            written.push((page, self.page));
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` fresh read-write host pages of this process.
    fn pages(n: u64) -> u64 {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        crate::sys::mem::map_anywhere(0, n << 12, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0).expect("mmap")
    }

    fn write_protect(page: u64) {
        // SAFETY: a page of the test's own mapping.
        unsafe { crate::sys::mem::protect(page, 4096, libc::PROT_READ) }.expect("mprotect");
    }

    #[test]
    fn a_written_page_is_resumed_collected_and_after_repeated_writes_self_checking() {
        if crate::sys::mem::page_size() != 4096 {
            return;
        }
        let mut c = CodePages::new(4096);
        let (code, other) = (pages(2), pages(1));
        assert!(!resume_write(other + 8), "not code: the guest's fault");
        for round in 1..=FAULTS_TO_SELF_CHECK {
            assert!(c.arm(code, || Ok::<(), ()>(write_protect(code))).is_some_and(|r| r.is_ok()));
            assert!(resume_write(code + 100));
            // SAFETY: the page was made writable again.
            unsafe { std::ptr::write_volatile((code + 100) as *mut u8, round as u8) };
            assert_eq!(c.take_written(), [(code, 4096)]);
            assert!(!c.is_armed(code));
            assert_eq!(c.is_self_checking(code), round == FAULTS_TO_SELF_CHECK);
        }
        assert!(c.take_written().is_empty(), "collected once");
        assert!(!resume_write(code + 4096 + 8), "the next page is not code");
        assert!(c.arm(code, || Err(())).is_some_and(|r| r.is_err()));
        assert!(!c.is_armed(code), "not protected: not armed");
        c.guest_read_only(code);
        assert!(!resume_write(code), "read-only by the guest: its fault");
        c.forget(code);
        assert!(!c.is_self_checking(code));
    }

    #[test]
    fn pages_cover_partial_ranges() {
        let c = CodePages { page: 0x1000, ..CodePages::default() };
        assert_eq!(c.pages(0x1ffe, 0x2001).collect::<Vec<_>>(), [0x1000, 0x2000]);
        assert_eq!(c.pages(0x2000, 0x2000).count(), 0);
    }
}
