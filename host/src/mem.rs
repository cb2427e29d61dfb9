//! The guest's memory: which address ranges the guest owns (program
//! segments, stack, brk heap, its own mmaps) with their x86 protections,
//! the host mappings behind them, and the runtime's edge where guest
//! addresses become host pointers.
//!
//! Guest memory is identity-mapped: a guest address is the host address of
//! the same byte. The map here is the guest's view, in 4 KiB guest pages;
//! the host may have larger pages, in which case a host page holding any
//! guest page is mapped with the union of their protections. Host mappings
//! never carry PROT_EXEC (the host never runs guest code; the translator
//! reads it), and every guest page the guest can read, write or execute is
//! readable on the host.
//!
//! The memory-management system calls (mmap, munmap, mprotect, mremap,
//! brk, madvise) are implemented here, so that the policy that keeps the
//! guest off the runtime's own memory lives in one place: a guest mapping at
//! a fixed address may only replace guest-owned memory or free address
//! space, and munmap/mprotect only act on guest-owned memory.
//!
//! Unsafe code: the host mapping calls. Guest memory is read and written
//! through the fault-surviving probes (`signal/probe.rs`): the executors'
//! accesses ([`Machine`]), the translator's code reads ([`GuestCode`]) and
//! the checked copies of the loader and the system calls, which check the
//! guest map first and turn a fault the map cannot foresee (a file mapping
//! past the end of its file) into EFAULT. Everything else is safe.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use aarchx_ir::cond::Helper;
use aarchx_ir::{GuestState, Type};
use aarchx_pass::GuestCode;

use crate::code_pages::CodePages;
use crate::machine::Machine;
use crate::objects::Objects;
use crate::sys::mem as host;

/// The guest's page size (x86-64).
pub const GUEST_PAGE: u64 = 4096;

/// Guest protection bits (the x86-64 `PROT_*` values).
pub const PROT_READ: u32 = 1;
pub const PROT_WRITE: u32 = 2;
pub const PROT_EXEC: u32 = 4;
const PROT_ALL: u32 = PROT_READ | PROT_WRITE | PROT_EXEC;
/// x86 `PROT_SEM`: accepted and ignored, as the kernel does.
const PROT_SEM: u32 = 8;

/// x86-64 `mmap` flags. All but `MAP_32BIT` have the same values on the
/// generic (arm64) ABI, so the others pass to the host unchanged.
const MAP_TYPE: u32 = 0x0f;
const MAP_FIXED: u32 = 0x10;
const MAP_32BIT: u32 = 0x40;
/// Dropped: the map does not follow a mapping that grows on faults.
const MAP_GROWSDOWN: u32 = 0x100;
const MAP_FIXED_NOREPLACE: u32 = 0x10_0000;

/// x86-64 `mremap` flags (the same on every Linux ABI).
const MREMAP_MAYMOVE: u32 = 1;
const MREMAP_FIXED: u32 = 2;
const MREMAP_DONTUNMAP: u32 = 4;

/// `madvise(MADV_DONTNEED)` (the same on every Linux ABI).
const MADV_DONTNEED: u32 = 4;

/// The end of an x86-64 process's address space (the kernel's
/// `TASK_SIZE_MAX` with 4-level page tables): a range reaching past it is
/// not user memory, whatever the host's address space is.
pub const TASK_SIZE: u64 = (1 << 47) - GUEST_PAGE;

/// Whether `[addr, addr + len)` lies in the x86-64 user address space: the
/// kernel's `access_ok`, which a call checks before looking at a buffer.
pub fn user_range(addr: u64, len: u64) -> bool {
    len <= TASK_SIZE && addr <= TASK_SIZE - len
}

/// Address space reserved after the program for its brk heap.
const BRK_RESERVE: u64 = 1 << 30;
/// The least brk reservation tried before giving up on a brk heap.
const BRK_RESERVE_MIN: u64 = 1 << 20;

pub use crate::sys::Errno;

/// One guest-owned range; the key in the map is its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Region {
    end: u64,
    prot: u32,
}

/// The brk heap: guest-owned from `start` to the 4 KiB-rounded `cur`, with
/// host memory read-write up to `host_end` and reserved (PROT_NONE) up to
/// `limit`.
#[derive(Clone, Copy, Debug, Default)]
struct Brk {
    start: u64,
    cur: u64,
    host_end: u64,
    limit: u64,
}

/// The guest's memory map and its identity-mapped memory.
#[derive(Debug)]
pub struct GuestMemory {
    regions: BTreeMap<u64, Region>,
    host_page: u64,
    brk: Brk,
    /// Pages translated code depends on (see `crate::code_pages`).
    code: CodePages,
    /// The guest has mapped writable shared memory, which another process
    /// may access at the same time (see [`GuestMemory::shares_writable`]).
    shared_writable: bool,
    /// Which ranges hold which file's bytes (for the persistent cache).
    objects: Objects,
}

fn round_up(v: u64, to: u64) -> Option<u64> {
    v.checked_add(to - 1).map(|x| x & !(to - 1))
}

fn round_down(v: u64, to: u64) -> u64 {
    v & !(to - 1)
}

/// The host protection for a guest protection: readable whenever the guest
/// may touch the page at all, writable when the guest may write, never
/// executable.
fn host_prot(prot: u32) -> i32 {
    match (prot & PROT_ALL != 0, prot & PROT_WRITE != 0) {
        (false, _) => libc::PROT_NONE,
        (true, false) => libc::PROT_READ,
        (true, true) => libc::PROT_READ | libc::PROT_WRITE,
    }
}

/// Checks a guest protection argument, dropping the ignored `PROT_SEM`.
fn guest_prot(prot: u64) -> Result<u32, Errno> {
    let prot = u32::try_from(prot).map_err(|_| Errno::EINVAL)? & !PROT_SEM;
    if prot & !PROT_ALL != 0 {
        return Err(Errno::EINVAL);
    }
    Ok(prot)
}

impl Default for GuestMemory {
    fn default() -> Self {
        GuestMemory::new()
    }
}

impl GuestMemory {
    /// An empty map, for the host's page size.
    pub fn new() -> GuestMemory {
        let host_page = host::page_size().max(GUEST_PAGE);
        GuestMemory {
            regions: BTreeMap::new(),
            host_page,
            brk: Brk::default(),
            code: CodePages::new(host_page),
            shared_writable: false,
            objects: Objects::default(),
        }
    }

    fn host_up(&self, v: u64) -> Option<u64> {
        round_up(v, self.host_page)
    }

    fn host_down(&self, v: u64) -> u64 {
        round_down(v, self.host_page)
    }

    // ----- the map itself -----

    /// The guest-owned pieces of `[start, end)`, clipped to it.
    fn owned(&self, start: u64, end: u64) -> Vec<(u64, u64, u32)> {
        if start >= end {
            return Vec::new();
        }
        let first = self.regions.range(..=start).next_back().map_or(start, |(s, _)| *s);
        self.regions
            .range(first..end)
            .filter(|(_, r)| r.end > start)
            .map(|(s, r)| ((*s).max(start), r.end.min(end), r.prot))
            .collect()
    }

    /// Whether every byte of `[start, end)` is guest-owned with a
    /// protection that satisfies `ok`.
    fn covered_with(&self, start: u64, end: u64, ok: impl Fn(u32) -> bool) -> bool {
        let mut at = start;
        for (s, e, prot) in self.owned(start, end) {
            if s != at || !ok(prot) {
                return false;
            }
            at = e;
        }
        at >= end
    }

    /// The parts of `[start, end)` the guest does not own.
    fn gaps(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut gaps = Vec::new();
        let mut at = start;
        for (s, e, _) in self.owned(start, end) {
            if s > at {
                gaps.push((at, s));
            }
            at = e;
        }
        if at < end {
            gaps.push((at, end));
        }
        gaps
    }

    /// Sets `[start, end)` to `prot` (guest-owned) or `None` (not owned),
    /// splitting and merging regions as needed.
    fn set_range(&mut self, start: u64, end: u64, prot: Option<u32>) {
        if start >= end {
            return;
        }
        let overlapping: Vec<(u64, Region)> = {
            let first = self.regions.range(..start).next_back().map_or(start, |(s, _)| *s);
            self.regions.range(first..end).filter(|(_, r)| r.end > start).map(|(s, r)| (*s, *r)).collect()
        };
        for (s, r) in overlapping {
            self.regions.remove(&s);
            if s < start {
                self.regions.insert(s, Region { end: start, prot: r.prot });
            }
            if r.end > end {
                self.regions.insert(end, Region { end: r.end, prot: r.prot });
            }
        }
        let Some(prot) = prot else { return };
        let mut new_start = start;
        let mut new_end = end;
        if let Some((&s, r)) = self.regions.range(..start).next_back() {
            if r.end == start && r.prot == prot {
                new_start = s;
                self.regions.remove(&s);
            }
        }
        if let Some(r) = self.regions.get(&end).copied() {
            if r.prot == prot {
                new_end = r.end;
                self.regions.remove(&end);
            }
        }
        self.regions.insert(new_start, Region { end: new_end, prot });
    }

    /// Brings the host mappings of `[start, end)` in line with the map:
    /// host pages no guest page uses are unmapped, the others get the union
    /// of their guest pages' protections. The range must have been entirely
    /// guest-owned before the change that prompted the call, so every host
    /// page it touches is one the runtime mapped for the guest.
    fn sync_host(&mut self, start: u64, end: u64) -> Result<(), Errno> {
        let hp = self.host_page;
        let hs = self.host_down(start);
        let he = self.host_up(end).ok_or(Errno::ENOMEM)?;
        // The range cut where the map changes: (start, end, protection).
        let mut pieces: Vec<(u64, u64, Option<u32>)> = Vec::new();
        let mut at = hs;
        for (s, e, prot) in self.owned(hs, he) {
            if s > at {
                pieces.push((at, s, None));
            }
            pieces.push((s, e, Some(prot)));
            at = e;
        }
        if at < he {
            pieces.push((at, he, None));
        }
        let union = |page: u64| {
            pieces.iter().filter(|(s, e, _)| *s < page + hp && *e > page).fold(None, |acc, (_, _, p)| match (acc, p) {
                (None, p) => *p,
                (a, None) => a,
                (Some(a), Some(b)) => Some(a | b),
            })
        };
        let mut ops: Vec<(u64, u64, Option<u32>)> = Vec::new();
        let mut shared_pages: Vec<u64> = Vec::new();
        for &(s, e, prot) in &pieces {
            let (a, b) = (round_up(s, hp).unwrap_or(u64::MAX), round_down(e, hp));
            if a < b {
                ops.push((a, b, prot));
            }
            for edge in [s, e] {
                if edge % hp != 0 && !shared_pages.contains(&round_down(edge, hp)) {
                    shared_pages.push(round_down(edge, hp));
                }
            }
        }
        ops.extend(shared_pages.into_iter().map(|page| (page, page + hp, union(page))));
        for (s, e, prot) in ops {
            match prot {
                // SAFETY: every host page of the range was mapped by the
                // runtime for the guest (see the function comment).
                None => unsafe { host::unmap(s, e - s) }?,
                // SAFETY: as above.
                Some(p) => unsafe { host::protect(s, e - s, host_prot(p)) }?,
            }
        }
        Ok(())
    }

    /// Reserves the free parts of `[start, end)` so a fixed mapping may
    /// replace them, or fails if any of it is memory the guest does not own
    /// and is in use (the runtime's). Returns the reservations made, to be
    /// released if the mapping fails.
    fn claim(&self, start: u64, end: u64) -> Result<Vec<(u64, u64)>, Errno> {
        let mut claimed = Vec::new();
        for (s, e) in self.gaps(start, end) {
            // A gap edge inside a host page meets a guest region there (the
            // callers' ranges are host-page aligned), so that page is ours.
            let (s, e) = (self.host_up(s).unwrap_or(u64::MAX), self.host_down(e));
            if s >= e {
                continue;
            }
            if let Err(err) = host::reserve_exact(s, e - s) {
                tracing::debug!(start = s, end = e, %err, "fixed guest mapping refused: range not free");
                Self::release(&claimed);
                return Err(Errno::ENOMEM);
            }
            claimed.push((s, e));
        }
        Ok(claimed)
    }

    fn release(claimed: &[(u64, u64)]) {
        for &(s, e) in claimed {
            // SAFETY: these are reservations `claim` just made.
            unsafe { host::unmap(s, e - s) }.ok();
        }
    }

    // ----- set-up, for the loader -----

    /// Maps a program image of `len` bytes read-write and zeroed, at `at`
    /// exactly if given (it must be free), else anywhere at an address
    /// aligned to `align` (a power of two). With `brk`, reserves address
    /// space after it for the brk heap (the main program's image; a dynamic
    /// loader's has none). Each `(offset, bytes)` of `contents` (the file's
    /// part of each segment) is copied into the image at that offset, with
    /// a plain copy: the fresh mapping cannot fault (EINVAL for a piece
    /// that does not fit). Returns the image's address.
    pub fn map_image(
        &mut self,
        at: Option<u64>,
        len: u64,
        align: u64,
        brk: bool,
        contents: &[(u64, &[u8])],
    ) -> Result<u64, Errno> {
        let len = round_up(len, GUEST_PAGE).ok_or(Errno::ENOMEM)?;
        if contents.iter().any(|(off, bytes)| off.checked_add(bytes.len() as u64).is_none_or(|e| e > len)) {
            return Err(Errno::EINVAL);
        }
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let anon = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        let (start, brk_limit) = match at {
            Some(start) => {
                let hs = self.host_down(start);
                let he = start.checked_add(len).and_then(|e| self.host_up(e)).ok_or(Errno::ENOMEM)?;
                host::reserve_exact(hs, he - hs)?;
                // SAFETY: reserve_exact just reserved this range for us.
                unsafe { host::map_fixed(hs, he - hs, rw, anon, -1, 0) }?;
                let mut reserve = if brk { BRK_RESERVE } else { 0 };
                while reserve >= BRK_RESERVE_MIN && host::reserve_exact(he, reserve).is_err() {
                    reserve /= 2;
                }
                let reserve = if reserve >= BRK_RESERVE_MIN { reserve } else { 0 };
                (start, he + reserve)
            }
            None => {
                let align = align.max(self.host_page);
                let host_len = self.host_up(len).ok_or(Errno::ENOMEM)?;
                let total = host_len.checked_add(if brk { BRK_RESERVE } else { 0 }).ok_or(Errno::ENOMEM)?;
                let flags = anon | libc::MAP_NORESERVE;
                let got = host::map_anywhere(0, total + align, libc::PROT_NONE, flags, -1, 0)?;
                let start = round_up(got, align).ok_or(Errno::ENOMEM)?;
                // SAFETY: the head and tail trimmed here are parts of the
                // reservation just made.
                unsafe {
                    if start > got {
                        host::unmap(got, start - got)?;
                    }
                    host::unmap(start + total, got + align - start)?;
                }
                // SAFETY: the range is part of our reservation.
                unsafe { host::map_fixed(start, host_len, rw, anon, -1, 0) }?;
                (start, start + total)
            }
        };
        for (off, bytes) in contents {
            // SAFETY: [start, start + len) was mapped read-write and
            // anonymous just above, for this image alone: it holds no Rust
            // object, and each piece lies inside it (checked first).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), (start + off) as usize as *mut u8, bytes.len()) };
        }
        self.set_range(start, start + len, Some(PROT_READ | PROT_WRITE));
        if brk {
            let brk_start = self.host_up(start + len).ok_or(Errno::ENOMEM)?;
            self.brk = Brk { start: brk_start, cur: brk_start, host_end: brk_start, limit: brk_limit.max(brk_start) };
        }
        Ok(start)
    }

    /// Maps a read-write stack of `size` bytes with a guard page below it,
    /// anywhere; returns its top (the address just above it).
    pub fn map_stack(&mut self, size: u64) -> Result<u64, Errno> {
        let hp = self.host_page;
        let size = self.host_up(size).ok_or(Errno::ENOMEM)?;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK;
        let base = host::map_anywhere(0, size + hp, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0)?;
        // SAFETY: the guard page is part of the mapping just made.
        unsafe { host::protect(base, hp, libc::PROT_NONE) }?;
        self.set_range(base, base + hp, Some(0));
        self.set_range(base + hp, base + hp + size, Some(PROT_READ | PROT_WRITE));
        Ok(base + hp + size)
    }

    /// Where the brk heap starts.
    pub fn brk_start(&self) -> u64 {
        self.brk.start
    }

    // ----- checked copies, for the loader and the system calls -----

    /// Copies `bytes` to guest memory at `addr`, which must be guest-owned
    /// and writable (else EFAULT, as the kernel's copy_to_user).
    pub fn write_bytes(&self, addr: u64, bytes: &[u8]) -> Result<(), Errno> {
        if bytes.is_empty() {
            return Ok(());
        }
        let end = addr.checked_add(bytes.len() as u64).ok_or(Errno::EFAULT)?;
        if !self.covered_with(addr, end, |p| p & PROT_WRITE != 0) {
            return Err(Errno::EFAULT);
        }
        // Guest-owned and writable, so it holds no Rust object; a file
        // mapping past its file's end still faults, and is EFAULT too.
        crate::signal::probe::copy_to(addr, bytes).map_err(|_| Errno::EFAULT)
    }

    /// Copies guest memory at `addr` into `buf`; the range must be
    /// guest-owned and accessible (else EFAULT).
    pub fn read_bytes(&self, addr: u64, buf: &mut [u8]) -> Result<(), Errno> {
        if buf.is_empty() {
            return Ok(());
        }
        let end = addr.checked_add(buf.len() as u64).ok_or(Errno::EFAULT)?;
        if !self.covered_with(addr, end, |p| p & PROT_ALL != 0) {
            return Err(Errno::EFAULT);
        }
        crate::signal::probe::copy_from(addr, buf).map_err(|_| Errno::EFAULT)
    }

    /// Reads a NUL-terminated guest string of at most `max` bytes (without
    /// the NUL): EFAULT if it runs into memory the guest cannot read,
    /// ENAMETOOLONG if it is longer.
    pub fn read_cstr(&self, addr: u64, max: usize) -> Result<Vec<u8>, Errno> {
        let mut out = Vec::new();
        let mut at = addr;
        loop {
            let (s, r) = self.regions.range(..=at).next_back().ok_or(Errno::EFAULT)?;
            if r.end <= at || r.prot & PROT_ALL == 0 {
                return Err(Errno::EFAULT);
            }
            debug_assert!(*s <= at);
            // Up to the region's end, in pieces of 256 bytes (most strings
            // end in the first), each read through the probes.
            let n = (r.end - at).min((max + 1 - out.len()) as u64).min(256) as usize;
            let mut piece = [0u8; 256];
            let chunk = &mut piece[..n];
            self.read_bytes(at, chunk)?;
            if let Some(nul) = chunk.iter().position(|b| *b == 0) {
                out.extend_from_slice(&chunk[..nul]);
                return Ok(out);
            }
            out.extend_from_slice(chunk);
            if out.len() > max {
                return Err(Errno(libc::ENAMETOOLONG));
            }
            at += n as u64;
        }
    }

    // ----- the memory-management system calls -----

    /// x86-64 `mmap`. Returns the address; a fixed mapping that replaced
    /// code is recorded as a code change (see [`GuestMemory::take_written_code`]).
    pub fn mmap(&mut self, addr: u64, len: u64, prot: u64, flags: u64, fd: i32, offset: u64) -> Result<u64, Errno> {
        let prot = guest_prot(prot)?;
        let flags = u32::try_from(flags).map_err(|_| Errno::EINVAL)?;
        if len == 0 || offset % GUEST_PAGE != 0 || flags & MAP_TYPE == 0 {
            return Err(Errno::EINVAL);
        }
        let len = round_up(len, GUEST_PAGE).ok_or(Errno::ENOMEM)?;
        let anonymous = flags & libc::MAP_ANONYMOUS as u32 != 0;
        if !anonymous && offset % self.host_page != 0 {
            // A host with pages larger than 4 KiB cannot map the file there.
            return Err(Errno::EINVAL);
        }
        let host_flags = (flags & !(MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_32BIT | MAP_GROWSDOWN)) as i32;
        let hprot = host_prot(prot);
        if !user_range(addr, len) {
            // Past the x86-64 address space, which the host's may exceed: a
            // fixed mapping is refused, a hint ignored (as the kernel does).
            if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 || len > TASK_SIZE {
                return Err(Errno::ENOMEM);
            }
            return self.mmap(0, len, u64::from(prot), u64::from(flags), fd, offset);
        }
        if flags & MAP_FIXED != 0 {
            let end = addr.checked_add(len).ok_or(Errno::ENOMEM)?;
            if addr % GUEST_PAGE != 0 {
                return Err(Errno::EINVAL);
            }
            if addr % self.host_page != 0 || len % self.host_page != 0 {
                // Would replace part of a host page: not supported.
                return Err(Errno::EINVAL);
            }
            let claimed = self.claim(addr, end)?;
            let old = self.owned(addr, end);
            // SAFETY: `[addr, end)` is guest-owned or was just claimed.
            if let Err(e) = unsafe { host::map_fixed(addr, len, hprot, host_flags, fd, offset) } {
                Self::release(&claimed);
                return Err(e);
            }
            self.set_range(addr, end, Some(prot));
            self.reprotect_code(addr, end);
            self.note_shared(addr, end, prot, flags);
            self.note_file(addr, end, prot, flags, (!anonymous).then_some(fd), offset);
            if old.iter().any(|(_, _, p)| p & PROT_EXEC != 0) {
                self.code.record_change(addr, len);
            }
            return Ok(addr);
        }
        let (hint, extra) = if flags & MAP_FIXED_NOREPLACE != 0 {
            (addr, libc::MAP_FIXED_NOREPLACE)
        } else if flags & MAP_32BIT != 0 && addr == 0 {
            (0x4000_0000, 0)
        } else {
            (addr, 0)
        };
        let got = host::map_anywhere(hint, len, hprot, host_flags | extra, fd, offset)?;
        let misplaced = (extra != 0 && got != addr) || (flags & MAP_32BIT != 0 && got + len > 1 << 31);
        if misplaced {
            // SAFETY: the mapping was just made for this call.
            unsafe { host::unmap(got, len) }.ok();
            return Err(if extra != 0 { Errno::EEXIST } else { Errno::ENOMEM });
        }
        self.set_range(got, got + len, Some(prot));
        self.note_shared(got, got + len, prot, flags);
        self.note_file(got, got + len, prot, flags, (!anonymous).then_some(fd), offset);
        Ok(got)
    }

    /// x86-64 `munmap`: unmaps the guest-owned parts of the range (the rest
    /// is left alone, as unmapped memory would be); unmapped code is
    /// recorded as a code change.
    pub fn munmap(&mut self, addr: u64, len: u64) -> Result<(), Errno> {
        if addr % GUEST_PAGE != 0 || len == 0 {
            return Err(Errno::EINVAL);
        }
        let end = round_up(len, GUEST_PAGE).and_then(|l| addr.checked_add(l)).ok_or(Errno::EINVAL)?;
        if end > TASK_SIZE {
            return Err(Errno::EINVAL);
        }
        let owned = self.owned(addr, end);
        self.set_range(addr, end, None);
        self.objects.forget(addr, end);
        for &(s, e, _) in &owned {
            self.sync_host(s, e)?;
        }
        self.reprotect_code(addr, end);
        if owned.iter().any(|(_, _, p)| p & PROT_EXEC != 0) {
            self.code.record_change(addr, end - addr);
        }
        Ok(())
    }

    /// x86-64 `mprotect` of guest-owned memory (ENOMEM if any of the range
    /// is not); code that loses its execute permission is recorded as a
    /// code change.
    pub fn mprotect(&mut self, addr: u64, len: u64, prot: u64) -> Result<(), Errno> {
        let prot = guest_prot(prot)?;
        if addr % GUEST_PAGE != 0 {
            return Err(Errno::EINVAL);
        }
        let end = round_up(len, GUEST_PAGE).and_then(|l| addr.checked_add(l)).ok_or(Errno::ENOMEM)?;
        if addr == end {
            return Ok(());
        }
        if !self.covered_with(addr, end, |_| true) {
            return Err(Errno::ENOMEM);
        }
        let old = self.owned(addr, end);
        self.set_range(addr, end, Some(prot));
        if let Err(e) = self.sync_host(addr, end) {
            for &(s, e, p) in &old {
                self.set_range(s, e, Some(p));
            }
            self.sync_host(addr, end).ok();
            self.reprotect_code(addr, end);
            return Err(e);
        }
        self.reprotect_code(addr, end);
        if prot & PROT_WRITE != 0 {
            self.objects.dirty(addr, end);
        }
        if prot & PROT_EXEC == 0 && old.iter().any(|(_, _, p)| p & PROT_EXEC != 0) {
            self.code.record_change(addr, end - addr);
        }
        Ok(())
    }

    /// x86-64 `mremap` of a guest-owned mapping (hosts with 4 KiB pages
    /// only). Returns the new address; code that moved or was cut off is
    /// recorded as a code change.
    pub fn mremap(&mut self, old: u64, old_len: u64, new_len: u64, flags: u64, new_addr: u64) -> Result<u64, Errno> {
        let flags = u32::try_from(flags).map_err(|_| Errno::EINVAL)?;
        let fixed = flags & MREMAP_FIXED != 0;
        let dontunmap = flags & MREMAP_DONTUNMAP != 0;
        if old % GUEST_PAGE != 0
            || flags & !(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP) != 0
            || ((fixed || dontunmap) && flags & MREMAP_MAYMOVE == 0)
            || old_len == 0
            || new_len == 0
            || self.host_page != GUEST_PAGE
        {
            return Err(Errno::EINVAL);
        }
        let old_len = round_up(old_len, GUEST_PAGE).ok_or(Errno::EINVAL)?;
        let new_len = round_up(new_len, GUEST_PAGE).ok_or(Errno::EINVAL)?;
        let old_end = old.checked_add(old_len).ok_or(Errno::EINVAL)?;
        let pieces = self.owned(old, old_end);
        let prot = pieces.first().map(|p| p.2).ok_or(Errno::EFAULT)?;
        if !self.covered_with(old, old_end, |p| p == prot) {
            return Err(Errno::EFAULT);
        }
        let claimed = if fixed {
            let new_end = new_addr.checked_add(new_len).ok_or(Errno::EINVAL)?;
            if new_addr % GUEST_PAGE != 0 || (new_addr < old_end && old < new_end) {
                return Err(Errno::EINVAL);
            }
            self.claim(new_addr, new_end)?
        } else {
            Vec::new()
        };
        let had_code = !self.code.tracked_in(old, old_end).is_empty();
        // SAFETY: the old range is guest-owned; a fixed target is
        // guest-owned or was just claimed.
        let got = match unsafe { host::remap(old, old_len, new_len, flags as i32, new_addr) } {
            Ok(got) => got,
            Err(e) => {
                Self::release(&claimed);
                return Err(e);
            }
        };
        let moved = got != old;
        self.objects.forget(old, old_end);
        self.objects.forget(got, got + new_len);
        if moved {
            if !dontunmap {
                self.set_range(old, old_end, None);
            }
            self.set_range(got, got + new_len, Some(prot));
        } else if new_len < old_len {
            self.set_range(old + new_len, old_end, None);
        } else {
            self.set_range(old_end, old + new_len, Some(prot));
        }
        if moved && had_code {
            // The pages moved with the write protection of their code,
            // which stays behind (the old range's code is dropped).
            // SAFETY: `[got, got + new_len)` is the guest's mapping just made.
            unsafe { host::protect(got, new_len, host_prot(prot)) }.ok();
        }
        self.reprotect_code(old, old_end.max(old + new_len));
        let code_lost = (moved && !dontunmap) || new_len < old_len;
        if prot & PROT_EXEC != 0 && code_lost {
            self.code.record_change(old, old_len);
        }
        Ok(got)
    }

    /// x86-64 `brk`: moves the end of the brk heap within its reservation
    /// and returns the new end, or the unchanged one if it cannot move.
    pub fn brk(&mut self, new: u64) -> u64 {
        let b = self.brk;
        if new < b.start || new > b.limit {
            return b.cur;
        }
        let (Some(new_end), Some(old_end), Some(new_host)) =
            (round_up(new, GUEST_PAGE), round_up(b.cur, GUEST_PAGE), self.host_up(new))
        else {
            return b.cur;
        };
        if new_host > b.host_end {
            // SAFETY: `[host_end, new_host)` lies in the brk reservation.
            if unsafe { host::protect(b.host_end, new_host - b.host_end, libc::PROT_READ | libc::PROT_WRITE) }.is_err()
            {
                return b.cur;
            }
        } else if new_host < b.host_end {
            let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
            // SAFETY: `[new_host, host_end)` is heap the guest gave back;
            // it returns to the reservation, its contents dropped.
            if unsafe { host::map_fixed(new_host, b.host_end - new_host, libc::PROT_NONE, flags, -1, 0) }.is_err() {
                return b.cur;
            }
        }
        if new_end < old_end {
            let zero_end = old_end.min(new_host);
            if new_end < zero_end {
                // SAFETY: `[new_end, zero_end)` is in a host page of the heap
                // that stays read-write; heap pages given back must read as
                // zero when the heap grows again.
                unsafe { std::ptr::write_bytes(new_end as usize as *mut u8, 0, (zero_end - new_end) as usize) };
            }
            self.set_range(new_end, old_end, None);
            self.reprotect_code(new_end, old_end);
        } else {
            self.set_range(old_end, new_end, Some(PROT_READ | PROT_WRITE));
        }
        self.brk.cur = new;
        self.brk.host_end = new_host;
        new
    }

    /// x86-64 `madvise`: MADV_DONTNEED on guest-owned memory drops its
    /// contents as the kernel would; every other advice is accepted and
    /// ignored.
    pub fn madvise(&mut self, addr: u64, len: u64, advice: u64) -> Result<u64, Errno> {
        if addr % GUEST_PAGE != 0 {
            return Err(Errno::EINVAL);
        }
        let end = round_up(len, GUEST_PAGE).and_then(|l| addr.checked_add(l)).ok_or(Errno::EINVAL)?;
        if advice == u64::from(MADV_DONTNEED) && addr < end {
            if !self.covered_with(addr, end, |_| true) {
                return Err(Errno::ENOMEM);
            }
            if addr % self.host_page == 0 && end % self.host_page == 0 {
                // SAFETY: the range is guest-owned.
                unsafe { host::advise(addr, end - addr, libc::MADV_DONTNEED) }?;
            }
        }
        Ok(0)
    }

    // ----- self-modifying code (see `crate::code_pages`) -----

    /// The union of the guest protections on the host page at `page`, or
    /// `None` when the guest owns none of it.
    fn page_prot(&self, page: u64) -> Option<u32> {
        self.owned(page, page + self.host_page).iter().map(|p| p.2).reduce(|a, b| a | b)
    }

    /// Translated code now depends on the guest bytes in `ranges`: their
    /// writable host pages are write-protected, so that a store to them is
    /// seen. Returns whether any of them is self-checking: the region must
    /// then compare its bytes before each run.
    pub fn protect_code(&mut self, ranges: &[(u64, u64)]) -> bool {
        let mut checks = false;
        for &(start, end) in ranges {
            let pages: Vec<u64> = self.code.pages(start, end).collect();
            for page in pages {
                if self.code.is_self_checking(page) {
                    checks = true;
                    continue;
                }
                if self.code.is_armed(page) {
                    continue;
                }
                let Some(prot) = self.page_prot(page).filter(|p| p & PROT_WRITE != 0) else { continue };
                let hp = self.host_page;
                // SAFETY: the page holds guest code, so it is the guest's;
                // only its write permission goes.
                let protect = || unsafe { host::protect(page, hp, host_prot(prot & !PROT_WRITE)) };
                let protected = self.code.arm(page, protect).unwrap_or(Err(Errno::ENOMEM));
                if let Err(e) = protected {
                    // Unprotectable: the page checks its own bytes.
                    tracing::debug!(page = format_args!("{page:#x}"), %e, "cannot write-protect a code page");
                    self.code.disarm(page);
                    self.code.shared_code(page, page + 1);
                    checks = true;
                }
            }
        }
        checks
    }

    /// Whether the guest may write any of the host pages holding `ranges`
    /// (code that another thread could change while it is translated).
    pub fn writable_code(&self, ranges: &[(u64, u64)]) -> bool {
        ranges.iter().any(|&(start, end)| {
            self.code.pages(start, end).any(|page| self.page_prot(page).is_some_and(|p| p & PROT_WRITE != 0))
        })
    }

    /// A host system call failed with EFAULT: every protected code page
    /// is made writable again and recorded as written, so the call can be
    /// retried. Returns whether there was any.
    pub fn unprotect_all_code(&mut self) -> bool {
        // As a fault handler does for one page (see `crate::code_pages`).
        crate::thread::cut_every_run(|| {
            let pages = self.code.unprotect_all();
            for &page in &pages {
                self.restore_write(page);
            }
            !pages.is_empty()
        })
    }

    /// The guest code changed since the last call, as (start, length):
    /// pages written (through the fault handler, or made writable for a
    /// system call) and code unmapped, replaced or made non-executable.
    /// Recorded here, under the map's lock, rather than reported by the
    /// thread that changed it, so a thread that maps new code where old
    /// code was cannot look its address up before the change is applied.
    pub fn take_written_code(&mut self) -> Vec<(u64, u64)> {
        self.code.take_written()
    }

    /// A shared mapping that is executable can change through another
    /// mapping without a fault here: its pages check their own bytes. One
    /// that is writable makes [`GuestMemory::shares_writable`] true.
    fn note_shared(&mut self, start: u64, end: u64, prot: u32, flags: u32) {
        if flags & MAP_TYPE & libc::MAP_SHARED as u32 == 0 {
            return;
        }
        if prot & PROT_EXEC != 0 {
            self.code.shared_code(start, end);
        }
        if prot & PROT_WRITE != 0 {
            self.shared_writable = true;
        }
    }

    /// Records what a mapping of `[start, end)` holds for
    /// [`GuestMemory::objects`]: the file of `fd` from `offset`, clean when
    /// private, not writable, and the file was opened read-only (nothing
    /// this process does through the mapping or the descriptor changes
    /// the bytes); nothing for anonymous memory.
    fn note_file(&mut self, start: u64, end: u64, prot: u32, flags: u32, fd: Option<i32>, offset: u64) {
        let Some(fd) = fd else {
            self.objects.forget(start, end);
            return;
        };
        let link = format!("/proc/self/fd/{fd}");
        let (Ok(path), Ok(meta)) = (std::fs::read_link(&link), std::fs::metadata(&link)) else {
            self.objects.forget(start, end);
            return;
        };
        let clean = flags & MAP_TYPE == libc::MAP_PRIVATE as u32
            && prot & PROT_WRITE == 0
            && crate::sys::process::fd_flags(fd).is_some_and(|access| access & libc::O_ACCMODE == libc::O_RDONLY);
        self.objects.mapped(start, end, &path, &meta, crate::objects::Position::File(offset), clean);
    }

    /// Whether every byte of `ranges` is executable guest memory.
    pub fn executable(&self, ranges: &[(u64, u64)]) -> bool {
        ranges.iter().all(|&(s, e)| self.covered_with(s, e, |p| p & PROT_EXEC != 0))
    }

    /// Which guest memory holds which file's bytes.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    pub fn objects_mut(&mut self) -> &mut Objects {
        &mut self.objects
    }

    /// Whether the guest has mapped shared memory writable (`MAP_SHARED`
    /// with `PROT_WRITE`: anonymous memory a fork shares, a file or memfd
    /// another process may map too). Another process may then race this
    /// one on it, as a thread would: `memory_model: Auto` goes ordered.
    /// Stays true once set (also in a forked child).
    pub fn shares_writable(&self) -> bool {
        self.shared_writable
    }

    /// Gives the host page at `page` its guest protection back.
    fn restore_write(&self, page: u64) {
        if let Some(prot) = self.page_prot(page) {
            // SAFETY: the page is the guest's (it held guest code); it gets
            // the protection the guest gave it.
            if let Err(e) = unsafe { host::protect(page, self.host_page, host_prot(prot)) } {
                tracing::warn!(page = format_args!("{page:#x}"), %e, "cannot make a code page writable again");
            }
        }
    }

    /// After the map changed in `[start, end)`: code pages the guest no
    /// longer owns are forgotten, those it can write are write-protected
    /// again (the change gave them the guest's protection back), and a
    /// store to those it made read-only is its own fault.
    fn reprotect_code(&mut self, start: u64, end: u64) {
        let hp = self.host_page;
        let Some(end) = self.host_up(end) else { return };
        let start = self.host_down(start);
        for page in self.code.tracked_in(start, end) {
            match self.page_prot(page) {
                None => self.code.forget(page),
                Some(prot) if prot & PROT_WRITE != 0 && !self.code.is_self_checking(page) => {
                    // The change gave the page the guest's protection back:
                    // armed again (translations may depend on it).
                    // SAFETY: the guest owns the page; only its write
                    // permission goes, as before the change.
                    self.code.arm(page, || unsafe { host::protect(page, hp, host_prot(prot & !PROT_WRITE)) });
                }
                Some(_) => self.code.guest_read_only(page),
            }
        }
        let unowned: Vec<u64> =
            self.code.self_checking_in(start, end).into_iter().filter(|&p| self.page_prot(p).is_none()).collect();
        for page in unowned {
            self.code.forget(page);
        }
    }

    /// The guest-owned, executable range containing `addr`, if any.
    fn exec_region(&self, addr: u64) -> Option<u64> {
        let (_, r) = self.regions.range(..=addr).next_back()?;
        (r.end > addr && r.prot & PROT_EXEC != 0).then_some(r.end)
    }
}

/// The size in bytes of a value of `ty` in memory.
fn size_of(ty: Type) -> usize {
    (ty.bits().max(8) / 8) as usize
}

/// Guest memory as the executors access it: a guest address is the host
/// address of the same byte (identity map), so an access needs no map and
/// no lock, and threads access guest memory at once, as on the CPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct GuestAccess;

/// The runtime's edge: translated guest memory accesses become raw host
/// accesses at the same address.
impl Machine for GuestAccess {
    fn load(&mut self, addr: u64, ty: Type) -> u128 {
        // Identity-mapped: the guest address is the host address of the
        // byte. A bad address is the guest's fault, which the probe
        // catches and keeps for the interpreter (`crate::signal::probe`).
        crate::signal::probe::load(addr, size_of(ty))
    }

    fn store(&mut self, addr: u64, ty: Type, bits: u128) {
        crate::signal::probe::store(addr, size_of(ty), bits)
    }

    fn cas(&mut self, addr: u64, ty: Type, expected: u128, new: u128) -> u128 {
        let size = size_of(ty);
        if size <= 8 && addr % size as u64 == 0 {
            return u128::from(crate::signal::probe::cas(addr, size, expected as u64, new as u64));
        }
        // Misaligned (split) or 16 bytes: no host instruction does it, so
        // such accesses take one process-wide lock, as the kernel's
        // split-lock handling serialises them (atomic against each other,
        // not against an aligned access to the same bytes).
        static SPLIT: Mutex<()> = Mutex::new(());
        let _held = SPLIT.lock().unwrap_or_else(PoisonError::into_inner);
        let old = self.load(addr, ty);
        if old == expected {
            self.store(addr, ty, new);
        }
        old
    }

    fn helper(&mut self, helper: Helper, state: &mut GuestState) {
        match helper {
            Helper::Cpuid => crate::cpuid::run_cpuid(state),
            Helper::Rdtsc => crate::cpuid::run_rdtsc(state),
            Helper::X87 | Helper::X87Flags => crate::x87::run(state, self),
            leaf => crate::leaf::run(leaf, state),
        }
    }
}

/// The guest memory map as the threads of a process share it. Each use
/// locks it for as long as it takes (a map change, a check, a checked
/// copy); nothing holds the lock across a host call that can block.
#[derive(Clone, Debug, Default)]
pub struct SharedMemory(Arc<Mutex<GuestMemory>>);

impl SharedMemory {
    pub fn new(mem: GuestMemory) -> SharedMemory {
        SharedMemory(Arc::new(Mutex::new(mem)))
    }

    /// The map, locked. A thread that panicked holding it ended aarchx
    /// (panics are fatal), so a poisoned lock is taken as it is.
    pub fn lock(&self) -> MutexGuard<'_, GuestMemory> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Guest code for the translator: only memory the guest maps executable.
impl GuestCode for GuestMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let mut done = 0;
        while done < buf.len() {
            let at = addr + done as u64;
            let Some(end) = self.exec_region(at) else { break };
            let n = ((end - at) as usize).min(buf.len() - done);
            // Executable guest memory is readable on the host, but a file
            // mapping past its file's end faults: the code ends there.
            if crate::signal::probe::copy_from(at, &mut buf[done..done + n]).is_err() {
                break;
            }
            done += n;
        }
        done
    }

    fn function_at(&self, addr: u64) -> Option<String> {
        self.objects.function_at(addr, |at| {
            let mut word = [0u8; 8];
            crate::signal::probe::copy_from(at, &mut word).ok()?;
            Some(u64::from_le_bytes(word))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RW: u64 = (PROT_READ | PROT_WRITE) as u64;
    const MAP_PRIVATE_ANON: u64 = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;

    fn regions(m: &GuestMemory) -> Vec<(u64, u64, u32)> {
        m.regions.iter().map(|(s, r)| (*s, r.end, r.prot)).collect()
    }

    #[test]
    fn set_range_splits_and_merges() {
        let mut m = GuestMemory::new();
        m.set_range(0x1000, 0x5000, Some(1));
        m.set_range(0x2000, 0x3000, Some(3));
        assert_eq!(regions(&m), [(0x1000, 0x2000, 1), (0x2000, 0x3000, 3), (0x3000, 0x5000, 1)]);
        m.set_range(0x2000, 0x3000, Some(1));
        assert_eq!(regions(&m), [(0x1000, 0x5000, 1)]);
        m.set_range(0x0, 0x2000, None);
        assert_eq!(regions(&m), [(0x2000, 0x5000, 1)]);
        assert!(m.covered_with(0x2000, 0x5000, |p| p == 1));
        assert!(!m.covered_with(0x1000, 0x3000, |_| true));
        assert_eq!(m.gaps(0x1000, 0x6000), [(0x1000, 0x2000), (0x5000, 0x6000)]);
    }

    #[test]
    fn mmap_protect_unmap_and_code_reads() {
        let mut m = GuestMemory::new();
        let a = m.mmap(0, 3 * GUEST_PAGE, RW, MAP_PRIVATE_ANON, -1, 0).unwrap();
        m.write_bytes(a + 10, b"\x90\xc3").unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(m.read(a, &mut buf), 0, "not executable yet");
        m.mprotect(a, GUEST_PAGE, u64::from(PROT_READ | PROT_EXEC)).unwrap();
        assert!(m.take_written_code().is_empty(), "no code changed");
        assert_eq!(m.read(a + 10, &mut buf), 4);
        assert_eq!(&buf[..2], b"\x90\xc3");
        let mut big = vec![0u8; 2 * GUEST_PAGE as usize];
        assert_eq!(m.read(a, &mut big), GUEST_PAGE as usize, "stops at the end of executable memory");
        assert_eq!(m.write_bytes(a, b"x"), Err(Errno::EFAULT), "read-only now");
        assert_eq!(m.mprotect(a, GUEST_PAGE, u64::from(PROT_READ)), Ok(()));
        assert_eq!(m.take_written_code(), [(a, GUEST_PAGE)], "code lost exec");
        assert_eq!(m.munmap(a, 3 * GUEST_PAGE), Ok(()));
        assert!(m.take_written_code().is_empty(), "no code unmapped");
        assert!(regions(&m).is_empty());
        assert_eq!(m.read_bytes(a, &mut buf), Err(Errno::EFAULT));
        assert_eq!(m.mprotect(a, GUEST_PAGE, RW), Err(Errno::ENOMEM));
    }

    #[test]
    fn fixed_maps_only_over_guest_or_free_memory() {
        let mut m = GuestMemory::new();
        let a = m.mmap(0, 4 * GUEST_PAGE, RW, MAP_PRIVATE_ANON, -1, 0).unwrap();
        m.mprotect(a, GUEST_PAGE, u64::from(PROT_READ | PROT_EXEC)).unwrap();
        let fixed = MAP_PRIVATE_ANON | u64::from(MAP_FIXED);
        assert_eq!(m.mmap(a, GUEST_PAGE, RW, fixed, -1, 0), Ok(a));
        assert_eq!(m.take_written_code(), [(a, GUEST_PAGE)], "replaces guest code");
        // Runtime memory: a Rust heap allocation the guest does not own.
        let ours = vec![7u8; 1 << 20];
        let page = round_up(ours.as_ptr() as u64, m.host_page).unwrap();
        assert_eq!(m.mmap(page, m.host_page, RW, fixed, -1, 0), Err(Errno::ENOMEM));
        assert_eq!(m.munmap(page, m.host_page), Ok(()), "not the guest's: left alone");
        assert!(ours.iter().all(|b| *b == 7));
        let noreplace = MAP_PRIVATE_ANON | u64::from(MAP_FIXED_NOREPLACE);
        assert_eq!(m.mmap(a, GUEST_PAGE, RW, noreplace, -1, 0), Err(Errno::EEXIST));
        m.munmap(a, 4 * GUEST_PAGE).unwrap();
    }

    #[test]
    fn brk_grows_and_shrinks_with_zeroed_pages() {
        let mut m = GuestMemory::new();
        let base = m.map_image(None, 3 * GUEST_PAGE, 1 << 21, true, &[]).unwrap();
        assert_eq!(base % (1 << 21), 0);
        let start = m.brk_start();
        assert_eq!(start, base + m.host_up(3 * GUEST_PAGE).unwrap());
        assert_eq!(m.brk(0), start);
        assert_eq!(m.brk(start + 0x1800), start + 0x1800);
        m.write_bytes(start + 0x1000, b"heap").unwrap();
        assert_eq!(m.brk(start + 0x10), start + 0x10);
        assert_eq!(m.write_bytes(start + 0x1000, b"x"), Err(Errno::EFAULT));
        assert_eq!(m.brk(start + 0x2000), start + 0x2000);
        let mut buf = [1u8; 4];
        m.read_bytes(start + 0x1000, &mut buf).unwrap();
        assert_eq!(buf, [0; 4]);
        assert_eq!(m.brk(start + BRK_RESERVE + 1), start + 0x2000, "past the reservation");
        assert_eq!(m.brk(start - 1), start + 0x2000);
    }

    #[test]
    fn read_cstr_stops_at_nul_and_faults() {
        let mut m = GuestMemory::new();
        let a = m.mmap(0, GUEST_PAGE, RW, MAP_PRIVATE_ANON, -1, 0).unwrap();
        m.write_bytes(a, b"hello\0").unwrap();
        assert_eq!(m.read_cstr(a, 100).unwrap(), b"hello");
        assert_eq!(m.read_cstr(a, 3), Err(Errno(libc::ENAMETOOLONG)));
        m.write_bytes(a + GUEST_PAGE - 2, b"ab").unwrap();
        assert_eq!(m.read_cstr(a + GUEST_PAGE - 2, 100), Err(Errno::EFAULT), "runs off the mapping");
        assert_eq!(m.read_cstr(0, 100), Err(Errno::EFAULT));
    }

    #[test]
    fn machine_loads_and_stores_unaligned() {
        let mut m = GuestMemory::new();
        let a = m.mmap(0, GUEST_PAGE, RW, MAP_PRIVATE_ANON, -1, 0).unwrap();
        GuestAccess.store(a + 1, Type::I64, 0x1122_3344_5566_7788);
        assert_eq!(GuestAccess.load(a + 1, Type::I64), 0x1122_3344_5566_7788);
        assert_eq!(GuestAccess.load(a + 1, Type::I8), 0x88);
        assert_eq!(GuestAccess.load(a + 1, Type::I16), 0x7788);
        GuestAccess.store(a + 3, Type::V128, u128::MAX);
        assert_eq!(GuestAccess.load(a + 3, Type::I128), u128::MAX);
        assert_eq!(GuestAccess.load(a + 1, Type::I32), 0xffff_7788);
        let mut s = GuestState::default();
        GuestAccess.helper(Helper::Cpuid, &mut s);
        assert_eq!(s.gpr[0], 0xd);
    }

    /// Whether the host kernel can write `bytes` at `addr` (a pipe's
    /// `read` into it): what a system call's copy to guest memory does.
    fn kernel_writes(addr: u64, bytes: &[u8]) -> bool {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let (reader, mut writer) = std::io::pipe().expect("pipe");
        writer.write_all(bytes).expect("write to the pipe");
        let read = [reader.as_raw_fd() as u64, addr, bytes.len() as u64];
        // SAFETY: a read from the test's own pipe; the kernel checks `addr`
        // and fails with EFAULT rather than fault.
        let got = unsafe { crate::signal::interruptible::syscall(libc::SYS_read, &read) };
        got == Ok(bytes.len() as u64)
    }

    #[test]
    fn a_store_to_protected_code_is_let_through_and_recorded() {
        // The probes of the checked copies are guest accesses, like the
        // JIT's stores: the fault handler lets them through.
        crate::signals::install_fault_handlers();
        let mut m = GuestMemory::new();
        let hp = m.host_page;
        let rwx = u64::from(PROT_READ | PROT_WRITE | PROT_EXEC);
        let a = m.mmap(0, 2 * hp, rwx, MAP_PRIVATE_ANON, -1, 0).unwrap();
        let code = [(a + 16, a + 20)];
        assert!(!m.protect_code(&code), "protected, not self-checking");
        assert!(!kernel_writes(a + 100, b"k"), "write-protected on the host");
        m.write_bytes(a + 100, b"x").expect("let through");
        let mut back = [0u8];
        m.read_bytes(a + 100, &mut back).unwrap();
        assert_eq!(back, *b"x");
        m.write_bytes(a + hp, b"y").expect("the next page is not code");
        assert_eq!(m.take_written_code(), [(a, hp)]);
        assert!(m.take_written_code().is_empty(), "collected once");
        assert!(kernel_writes(a + 100, b"k"), "writable until code on it is translated again");
        // The guest's mprotect keeps the protection while code depends on it.
        m.protect_code(&code);
        m.mprotect(a, hp, rwx).unwrap();
        assert!(!kernel_writes(a + 100, b"k"));
        m.write_bytes(a + 100, b"x").expect("let through");
        assert_eq!(m.take_written_code(), [(a, hp)]);
        // Read-only by the guest: a store is the guest's fault.
        m.protect_code(&code);
        m.mprotect(a, hp, u64::from(PROT_READ | PROT_EXEC)).unwrap();
        assert!(crate::signal::probe::copy_to(a + 100, b"x").is_err(), "the guest's fault");
        m.munmap(a, 2 * hp).unwrap();
        assert!(m.code.tracked_in(a, a + 2 * hp).is_empty(), "unmapped pages are forgotten");
    }

    #[test]
    fn a_system_call_into_protected_code_is_retried_with_it_writable() {
        crate::signals::install_fault_handlers();
        let mut m = GuestMemory::new();
        let rwx = u64::from(PROT_READ | PROT_WRITE | PROT_EXEC);
        let a = m.mmap(0, m.host_page, rwx, MAP_PRIVATE_ANON, -1, 0).unwrap();
        m.protect_code(&[(a, a + 1)]);
        assert!(!kernel_writes(a, b"x"), "EFAULT");
        assert!(m.unprotect_all_code());
        assert!(kernel_writes(a, b"x"), "writable again");
        assert!(!m.unprotect_all_code(), "nothing left to unprotect");
        assert_eq!(m.take_written_code(), [(a, m.host_page)]);
        m.munmap(a, m.host_page).unwrap();
    }

    #[test]
    fn a_moved_mapping_loses_its_code_protection() {
        crate::signals::install_fault_handlers();
        let mut m = GuestMemory::new();
        if m.host_page != GUEST_PAGE {
            return;
        }
        let rwx = u64::from(PROT_READ | PROT_WRITE | PROT_EXEC);
        let a = m.mmap(0, GUEST_PAGE, rwx, MAP_PRIVATE_ANON, -1, 0).unwrap();
        m.protect_code(&[(a, a + 1)]);
        let b = m.mremap(a, GUEST_PAGE, 64 * GUEST_PAGE, u64::from(MREMAP_MAYMOVE), 0).unwrap();
        if b != a {
            assert!(m.take_written_code().contains(&(a, GUEST_PAGE)), "the code moved");
            assert!(kernel_writes(b, b"x"), "the moved page is the guest's, writable");
        }
        m.munmap(b, 64 * GUEST_PAGE).unwrap();
    }

    #[test]
    fn stack_has_guard_page() {
        let mut m = GuestMemory::new();
        let top = m.map_stack(64 << 10).unwrap();
        m.write_bytes(top - 8, &[1; 8]).unwrap();
        let bottom = top - (64 << 10);
        m.write_bytes(bottom, &[1]).unwrap();
        assert_eq!(m.write_bytes(bottom - 1, &[1]), Err(Errno::EFAULT));
    }
}
