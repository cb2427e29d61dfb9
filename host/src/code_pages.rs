//! Self-modifying code: which host pages hold guest code that translations
//! depend on, and how a store to them is seen. x86 needs no cache flush
//! (a store to code takes effect the next time the code runs), so:
//!
//! - a *writable* page that a translation depends on is write-protected
//!   on the host (`GuestMemory::protect_code`); the guest's next store to
//!   it faults, and instead of a guest SIGSEGV the page is made writable
//!   again and recorded as written (`GuestMemory::code_write_fault`), the
//!   dispatcher invalidates the translations that depend on it and the
//!   store runs again;
//! - a page that keeps taking such faults ([`FAULTS_TO_SELF_CHECK`]),
//!   whose faulting store came from code on that page (code and data on
//!   one page: protecting it again would fault forever), or that the guest
//!   maps shared and executable (another mapping, a memfd's second view,
//!   can change it without a fault here) is *self-checking* instead: it
//!   stays writable, and each region depending on it keeps a copy of its
//!   bytes that the dispatcher compares before every run;
//! - a system call the host kernel fails with EFAULT while code pages are
//!   protected (a `read` into code) is retried once they are all made
//!   writable again and recorded as written.
//!
//! This file keeps the books; `mem.rs` changes the host protections, the
//! dispatcher (`run.rs`) invalidates. Pages are host pages (a host page may
//! be larger than the guest's 4 KiB).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::machine::GuestFault;

/// Write faults a page may take before it turns self-checking.
pub const FAULTS_TO_SELF_CHECK: u32 = 8;

/// Set (for good) when a code page is first write-protected: from then on
/// a translated run must end with an exact state at a fault (the engine
/// journals JIT runs, as while the guest handles SIGSEGV), since a store
/// may take a write fault that is not the guest's.
static PROTECTING: AtomicBool = AtomicBool::new(false);

/// Set when a page is recorded as written and not yet invalidated: one
/// relaxed load per dispatch instead of a lock.
static WRITTEN: AtomicBool = AtomicBool::new(false);

/// `si_code` of a fault on a page whose permissions refuse the access
/// (`libc` has no name for it).
const SEGV_ACCERR: i32 = 2;

/// Whether `fault` could be a store to a write-protected code page (the
/// memory map then tells).
pub fn may_be_code_write(fault: &GuestFault) -> bool {
    fault.sig == libc::SIGSEGV && fault.code == SEGV_ACCERR
}

/// Whether any code page has ever been write-protected in this process.
pub fn protecting() -> bool {
    PROTECTING.load(Ordering::Acquire)
}

/// Whether written code pages wait for their translations to be dropped.
pub fn written_pending() -> bool {
    WRITTEN.load(Ordering::Acquire)
}

/// The books: protected pages, self-checking pages, write faults per
/// page, and the pages written since the dispatcher last asked.
#[derive(Debug, Default)]
pub struct CodePages {
    protected: BTreeSet<u64>,
    self_checking: BTreeSet<u64>,
    faults: HashMap<u64, u32>,
    written: Vec<(u64, u64)>,
    page: u64,
}

impl CodePages {
    pub fn new(page: u64) -> CodePages {
        CodePages { page, ..CodePages::default() }
    }

    /// The host pages `[start, end)` touches.
    pub fn pages(&self, start: u64, end: u64) -> impl Iterator<Item = u64> {
        let page = self.page;
        let first = start & !(page - 1);
        (first..end).step_by(page as usize)
    }

    pub fn is_protected(&self, page: u64) -> bool {
        self.protected.contains(&page)
    }

    pub fn is_self_checking(&self, page: u64) -> bool {
        self.self_checking.contains(&page)
    }

    /// `page` is now write-protected on the host.
    pub fn protected(&mut self, page: u64) {
        if !PROTECTING.swap(true, Ordering::AcqRel) {
            tracing::debug!(
                page = format_args!("{page:#x}"),
                "guest code on a writable page: write-protected, and translated runs are exact from now on"
            );
        }
        self.protected.insert(page);
    }

    /// A store faulted on the protected `page`, which the caller makes
    /// writable again: records it written and, when it has faulted too
    /// often or `own_code` (the faulting code depends on the page), makes
    /// it self-checking.
    pub fn write_faulted(&mut self, page: u64, own_code: bool) {
        self.protected.remove(&page);
        let faults = self.faults.entry(page).or_default();
        *faults += 1;
        if own_code || *faults >= FAULTS_TO_SELF_CHECK {
            tracing::debug!(page = format_args!("{page:#x}"), faults = *faults, own_code, "code page turns self-checking");
            self.self_checking.insert(page);
        }
        self.record_written(page);
    }

    /// Every protected page, which the caller makes writable again, is
    /// recorded written; returns them.
    pub fn unprotect_all(&mut self) -> Vec<u64> {
        let pages: Vec<u64> = std::mem::take(&mut self.protected).into_iter().collect();
        for &page in &pages {
            self.record_written(page);
        }
        pages
    }

    /// The guest maps `[start, end)` shared and executable.
    pub fn shared_code(&mut self, start: u64, end: u64) {
        let pages: Vec<u64> = self.pages(start, end).collect();
        self.self_checking.extend(pages);
    }

    /// `page` no longer holds guest memory: it is forgotten.
    pub fn forget(&mut self, page: u64) {
        self.protected.remove(&page);
        self.self_checking.remove(&page);
        self.faults.remove(&page);
    }

    /// The protected pages in `[start, end)`.
    pub fn protected_in(&self, start: u64, end: u64) -> Vec<u64> {
        self.protected.range(start & !(self.page - 1)..end).copied().collect()
    }

    /// The self-checking pages in `[start, end)`.
    pub fn self_checking_in(&self, start: u64, end: u64) -> Vec<u64> {
        self.self_checking.range(start & !(self.page - 1)..end).copied().collect()
    }

    fn record_written(&mut self, page: u64) {
        self.written.push((page, self.page));
        WRITTEN.store(true, Ordering::Release);
    }

    /// The pages written since the last call, as (start, length).
    pub fn take_written(&mut self) -> Vec<(u64, u64)> {
        WRITTEN.store(false, Ordering::Release);
        std::mem::take(&mut self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_turns_self_checking_after_repeated_faults_or_its_own_store() {
        let mut c = CodePages::new(0x1000);
        c.protected(0x5000);
        c.write_faulted(0x5000, false);
        assert!(!c.is_protected(0x5000));
        assert!(!c.is_self_checking(0x5000));
        for _ in 1..FAULTS_TO_SELF_CHECK {
            c.protected(0x5000);
            c.write_faulted(0x5000, false);
        }
        assert!(c.is_self_checking(0x5000));
        c.protected(0x9000);
        c.write_faulted(0x9000, true);
        assert!(c.is_self_checking(0x9000), "code storing to its own page");
        assert_eq!(c.take_written().len(), FAULTS_TO_SELF_CHECK as usize + 1);
        assert!(c.take_written().is_empty());
    }

    #[test]
    fn pages_cover_partial_ranges() {
        let c = CodePages::new(0x1000);
        assert_eq!(c.pages(0x1ffe, 0x2001).collect::<Vec<_>>(), [0x1000, 0x2000]);
        assert_eq!(c.pages(0x2000, 0x2000).count(), 0);
    }
}
