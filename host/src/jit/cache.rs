//! The executable code cache, filled by bump allocation. Its memory
//! (`code_memory.rs`) is readable and executable and never writable at the
//! same time (W^X): each write makes the pages it touches writable and not
//! executable for its duration, then executable again.
//!
//! Code is assembled elsewhere for its final address
//! (`VecAssembler::new(cache.next_addr())`) and copied in here; after
//! every write the data cache is cleaned to the point of unification and
//! the instruction cache invalidated for the written range (`dc cvau`,
//! `dsb ish`, `ic ivau`, `dsb ish`), then the pipeline is flushed (`isb`),
//! as wasmtime's jit-icache-coherence does.
//!
//! Patching a live instruction is one aligned 4-byte store (single-copy
//! atomic on arm64) followed by the same maintenance.
//!
//! All the module's `unsafe` is about the mapping: every address handed
//! to it is checked to lie inside the mapping first.

use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use super::code_memory;

/// Alignment of each allocation: a cache line, so blocks do not share
/// lines they are patched through.
const ALIGN: usize = 64;

/// The cache's mapping and its bump pointer.
#[derive(Debug)]
pub struct CodeCache {
    base: usize,
    size: usize,
    used: usize,
}

impl CodeCache {
    /// Maps `size` bytes readable and executable.
    pub fn new(size: usize) -> io::Result<CodeCache> {
        Ok(CodeCache { base: code_memory::map(size)?, size, used: 0 })
    }

    /// The host addresses the cache occupies.
    pub fn range(&self) -> Range<usize> {
        self.base..self.base + self.size
    }

    /// Where the next allocation starts: assemble for this address.
    pub fn next_addr(&self) -> usize {
        self.base + self.used.next_multiple_of(ALIGN)
    }

    /// Copies `code` into the cache at `at`, which must be the current
    /// [`CodeCache::next_addr`], and makes it executable. `None` when it
    /// does not fit.
    pub fn push(&mut self, at: usize, code: &[u8]) -> Option<usize> {
        assert_eq!(at, self.next_addr(), "code assembled for another address");
        let offset = at - self.base;
        if code.len() > self.size - offset {
            return None;
        }
        // SAFETY: `at..at + code.len()` lies inside the mapping (checked
        // above), which this cache owns; nothing else references bytes
        // past the bump pointer, and no code runs while the cache is
        // written (the cache's thread is here).
        unsafe {
            code_memory::with_writable(at..at + code.len(), || {
                std::ptr::copy_nonoverlapping(code.as_ptr(), at as *mut u8, code.len())
            })
        };
        self.used = offset + code.len();
        sync(at, code.len());
        Some(at)
    }

    /// Replaces the aligned instruction at `addr` with `insn`, atomically
    /// with respect to a thread executing it.
    pub fn patch_u32(&mut self, addr: usize, insn: u32) {
        self.check(addr, 4);
        // SAFETY: `addr` is inside the mapping and 4-aligned (checked).
        unsafe { patch_word(addr, insn) };
    }

    /// The instruction at `addr`.
    pub fn read_u32(&self, addr: usize) -> u32 {
        self.check(addr, 4);
        // SAFETY: as in `patch_u32`; the mapping is always readable.
        unsafe { (*(addr as *const AtomicU32)).load(Ordering::Acquire) }
    }

    /// Forgets everything allocated from `addr` on (an address this cache
    /// returned earlier, or the start of the cache).
    pub fn rewind(&mut self, addr: usize) {
        assert!(self.range().contains(&addr) || addr == self.base + self.size);
        self.used = addr - self.base;
    }

    fn check(&self, addr: usize, len: usize) {
        assert!(
            addr % 4 == 0 && addr >= self.base && addr + len <= self.base + self.size,
            "{addr:#x} outside the code cache"
        );
    }
}

/// Makes `len` bytes written at `addr` visible to instruction fetch.
fn sync(addr: usize, len: usize) {
    // SAFETY: callers pass a range of a live code cache, which stays
    // readable; the slice is only read.
    let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
    dynasmrt::cache_control::synchronize_icache(bytes);
    dynasmrt::cache_control::prepare_for_execution(bytes);
}

/// Replaces the aligned instruction at `addr` with `insn`, atomically
/// with respect to a thread executing it, and makes the change visible to
/// instruction fetch: what [`CodeCache::patch_u32`] does once it has
/// checked the address, and what the SIGBUS handler does to send a
/// misaligned access to its fixup for good (no allocation, no lock; the
/// protection changes are system calls, safe in a signal handler).
///
/// # Safety
///
/// `addr` is 4-aligned and inside a live code cache mapping whose thread
/// (the caller's) runs no code in its page until this returns.
pub unsafe fn patch_word(addr: usize, insn: u32) {
    // SAFETY: the caller's contract; code bytes are only ever accessed
    // through raw pointers or atomics, never through Rust references.
    unsafe {
        code_memory::with_writable(addr..addr + 4, || (*(addr as *const AtomicU32)).store(insn, Ordering::Release))
    };
    sync(addr, 4);
}

impl Drop for CodeCache {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `new` created; the JIT that
        // owns the cache is being dropped, so no code in it can run again.
        unsafe { code_memory::unmap(self.base, self.size) };
    }
}

#[cfg(test)]
mod tests {
    use dynasmrt::aarch64::Aarch64Relocation;
    use dynasmrt::{dynasm, DynasmApi, VecAssembler};

    use super::*;

    /// `movz x0, #value; ret`, assembled for `at`.
    fn returns(at: usize, value: u32) -> Vec<u8> {
        let mut ops = VecAssembler::<Aarch64Relocation>::new(at);
        dynasm!(ops
            ; .arch aarch64
            ; movz x0, #value
            ; ret
        );
        ops.finalize().expect("assembles")
    }

    fn call(f: usize) -> u64 {
        // SAFETY: `f` is code generated by `returns`, a C function taking
        // nothing and returning x0.
        let f = unsafe { std::mem::transmute::<usize, extern "C" fn() -> u64>(f) };
        f()
    }

    #[test]
    fn code_runs_and_patches_in_place() {
        let mut cache = CodeCache::new(1 << 20).expect("maps");
        let at = cache.next_addr();
        let f = cache.push(at, &returns(at, 42)).expect("fits");
        assert_eq!(call(f), 42);
        let patch = u32::from_le_bytes(returns(f, 43)[..4].try_into().expect("one instruction"));
        cache.patch_u32(f, patch);
        assert_eq!(cache.read_u32(f), patch);
        assert_eq!(call(f), 43);
        // The next allocation is aligned and after this one.
        let next = cache.next_addr();
        assert!(next >= f + 8 && next % ALIGN == 0);
        assert!(cache.push(next, &vec![0; 2 << 20]).is_none(), "too large for the cache");
        cache.rewind(at);
        assert_eq!(cache.next_addr(), at);
    }

    /// The protections of the mapping holding `addr`, from
    /// /proc/self/maps ("r-xp", "rw-p"...). The file is not a snapshot:
    /// read while other tests' threads map and unmap, it can miss a line
    /// (seen under qemu-aarch64), so a missing mapping is read again
    /// before it counts as unmapped.
    fn protection(addr: usize) -> String {
        let find = || {
            let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
            maps.lines().find_map(|l| {
                let (range, rest) = l.split_once(' ')?;
                let (s, e) = range.split_once('-')?;
                let (s, e) = (usize::from_str_radix(s, 16).ok()?, usize::from_str_radix(e, 16).ok()?);
                (s..e).contains(&addr).then(|| rest.split(' ').next().unwrap_or_default().to_owned())
            })
        };
        (0..20).find_map(|_| find()).unwrap_or_else(|| panic!("{addr:#x} is not mapped"))
    }

    #[test]
    fn the_cache_is_never_writable_and_executable() {
        let mut cache = CodeCache::new(1 << 20).expect("maps");
        let range = cache.range();
        let at = cache.next_addr();
        let f = cache.push(at, &returns(at, 7)).expect("fits");
        assert_eq!(call(f), 7);
        let patch = u32::from_le_bytes(returns(f, 8)[..4].try_into().expect("one instruction"));
        cache.patch_u32(f, patch);
        assert_eq!(call(f), 8);
        for addr in [range.start, f, range.end - 1] {
            assert_eq!(protection(addr), "r-xp", "after writes, at {addr:#x}");
        }
        // The runtime's: the guest cannot map over it or unmap it.
        let mut mem = crate::mem::GuestMemory::new();
        let fixed = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED) as u64;
        assert_eq!(mem.mmap(f as u64 & !4095, 4096, 3, fixed, -1, 0), Err(crate::mem::Errno::ENOMEM));
        assert_eq!(mem.munmap(f as u64 & !4095, 4096), Ok(()));
        assert_eq!(call(f), 8);
    }
}
