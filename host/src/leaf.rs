//! The leaf routines as the interpreter runs them: each C library function
//! of [`Helper::is_leaf`] on the guest state's arguments, reading and
//! writing guest memory through the fault probes. A fault declines the
//! routine (`leaf_done` cleared, rax unchanged), so the guest's own x86
//! code that follows takes the fault itself and its handler sees what it
//! would have seen. The JIT's arm64 versions (`jit/leaf.rs`) follow the
//! same contract; tests hold the two to each other and to the guest's own
//! routines.
//!
//! Memory is touched a chunk at a time, never past the page that holds
//! the last byte the function needs (the terminator, the match, the
//! length's end), so a routine faults only where the x86 code would.

use aarchx_ir::cond::Helper;
use aarchx_ir::{GuestState, Reg};

use crate::signal::probe;

/// Bytes read or written at a time (and at most to the end of a page).
const CHUNK: u64 = 64;
const PAGE: u64 = 4096;

/// A guest memory access the routine could not make.
struct Faulted;

/// Runs leaf routine `helper` on `state`: its result in rax and
/// `leaf_done` set, or `leaf_done` cleared.
pub fn run(helper: Helper, state: &mut GuestState) {
    let (a, b, n) = (state.get(Reg::RDI) as u64, state.get(Reg::RSI) as u64, state.get(Reg::RDX) as u64);
    // The destination's size of the checking (`_chk`) routines.
    let room = state.get(Reg::RCX) as u64;
    let result = match helper {
        Helper::Strlen => strlen(a),
        Helper::Memchr => memchr(a, b as u8, n),
        Helper::Memset => memset(a, b as u8, n),
        Helper::Memmove => memmove(a, b, n),
        Helper::Memcmp => memcmp(a, b, n),
        Helper::Strcmp => strncmp(a, b, u64::MAX),
        Helper::Strchr => strchr(a, b as u8),
        Helper::Strnlen => strnlen(a, b),
        Helper::Strncmp => strncmp(a, b, n),
        Helper::MemmoveChk if room < n => Ok(None),
        Helper::MemmoveChk => memmove(a, b, n),
        Helper::MemsetChk if room < n => Ok(None),
        Helper::MemsetChk => memset(a, b as u8, n),
        Helper::Mempcpy => memmove(a, b, n).map(|r| r.map(|d| d + n)),
        Helper::Rawmemchr => memchr(a, b as u8, u64::MAX),
        Helper::Strrchr => strrchr(a, b as u8),
        Helper::Strcpy => strcpy(a, b).map(|r| r.map(|(d, _)| d)),
        Helper::Stpcpy => strcpy(a, b).map(|r| r.map(|(_, end)| end)),
        Helper::Memrchr => memrchr(a, b as u8, n),
        Helper::Cpuid | Helper::Rdtsc | Helper::X87 | Helper::X87Flags => unreachable!("not a leaf routine: {helper}"),
    };
    match result {
        Ok(Some(rax)) => {
            state.set(Reg::RAX, u128::from(rax));
            state.set(Reg::LEAF_DONE, 1);
        }
        Ok(None) | Err(Faulted) => state.set(Reg::LEAF_DONE, 0),
    }
}

/// How many bytes from `at` to read next: a chunk, not past the page.
fn span(at: u64) -> usize {
    (CHUNK - at % CHUNK).min(PAGE - at % PAGE) as usize
}

fn read(at: u64, len: usize) -> Result<[u8; CHUNK as usize], Faulted> {
    let mut buf = [0u8; CHUNK as usize];
    probe::copy_from(at, &mut buf[..len]).map_err(|_| Faulted)?;
    Ok(buf)
}

fn strlen(s: u64) -> Result<Option<u64>, Faulted> {
    let mut at = s;
    loop {
        let len = span(at);
        let buf = read(at, len)?;
        if let Some(i) = buf[..len].iter().position(|&c| c == 0) {
            return Ok(Some((at + i as u64).wrapping_sub(s)));
        }
        at = at.wrapping_add(len as u64);
    }
}

fn memchr(s: u64, c: u8, n: u64) -> Result<Option<u64>, Faulted> {
    // A length past the top of memory (memchr as rawmemchr) searches to it.
    let (mut at, end) = (s, s.saturating_add(n));
    while at < end {
        let len = span(at).min((end - at) as usize);
        let buf = read(at, len)?;
        if let Some(i) = buf[..len].iter().position(|&b| b == c) {
            return Ok(Some(at + i as u64));
        }
        at += len as u64;
    }
    Ok(Some(0))
}

/// memchr from the end: chunks read downwards, none past the range's
/// pages. Declines when the range wraps.
fn memrchr(s: u64, c: u8, n: u64) -> Result<Option<u64>, Faulted> {
    let Some(mut end) = s.checked_add(n) else { return Ok(None) };
    while end > s {
        // The bytes below `end` in `end - 1`'s chunk (within its page).
        let below = (end - 1) % CHUNK + 1;
        let at = end - below.min(end - s);
        let len = (end - at) as usize;
        let buf = read(at, len)?;
        if let Some(i) = buf[..len].iter().rposition(|&b| b == c) {
            return Ok(Some(at + i as u64));
        }
        end = at;
    }
    Ok(Some(0))
}

fn strrchr(s: u64, c: u8) -> Result<Option<u64>, Faulted> {
    let (mut at, mut last) = (s, 0);
    loop {
        let len = span(at);
        let buf = read(at, len)?;
        let end = buf[..len].iter().position(|&b| b == 0);
        if let Some(i) = buf[..end.map_or(len, |e| e + 1)].iter().rposition(|&b| b == c) {
            last = at + i as u64;
        }
        if end.is_some() {
            return Ok(Some(last));
        }
        at = at.wrapping_add(len as u64);
    }
}

/// Copies the string at `s` with its terminator to `d`: `d` and the end of
/// the copy (its terminator). Declines when the two overlap or wrap.
fn strcpy(d: u64, s: u64) -> Result<Option<(u64, u64)>, Faulted> {
    let Some(len) = strlen(s)? else { return Ok(None) };
    let n = len.wrapping_add(1);
    Ok(memmove(d, s, n)?.map(|d| (d, d + len)))
}

fn memset(d: u64, c: u8, n: u64) -> Result<Option<u64>, Faulted> {
    let Some(end) = d.checked_add(n) else { return Ok(None) };
    let mut at = d;
    while at < end {
        let len = span(at).min((end - at) as usize);
        probe::copy_to(at, &[c; CHUNK as usize][..len]).map_err(|_| Faulted)?;
        at += len as u64;
    }
    Ok(Some(d))
}

fn memmove(d: u64, s: u64, n: u64) -> Result<Option<u64>, Faulted> {
    let (Some(dend), Some(send)) = (d.checked_add(n), s.checked_add(n)) else { return Ok(None) };
    if n != 0 && d < send && s < dend {
        return Ok(None);
    }
    let mut done = 0;
    while done < n {
        let len = span(s + done).min((n - done) as usize);
        let buf = read(s + done, len)?;
        probe::copy_to(d + done, &buf[..len]).map_err(|_| Faulted)?;
        done += len as u64;
    }
    Ok(Some(d))
}

/// The System V result of a byte comparison: the difference of the first
/// differing bytes as a 32-bit int, zero-extended (`subl` into eax).
fn difference(x: u8, y: u8) -> u64 {
    u64::from(u32::from(x).wrapping_sub(u32::from(y)))
}

fn memcmp(a: u64, b: u64, n: u64) -> Result<Option<u64>, Faulted> {
    let mut done = 0u64;
    while done < n {
        let (p, q) = (a.wrapping_add(done), b.wrapping_add(done));
        let len = span(p).min(span(q)).min((n - done) as usize);
        let (x, y) = (read(p, len)?, read(q, len)?);
        if let Some(i) = (0..len).find(|&i| x[i] != y[i]) {
            return Ok(Some(difference(x[i], y[i])));
        }
        done += len as u64;
    }
    Ok(Some(0))
}

/// strncmp; strcmp is the unbounded one.
fn strncmp(a: u64, b: u64, n: u64) -> Result<Option<u64>, Faulted> {
    let mut done = 0u64;
    while done < n {
        let (p, q) = (a.wrapping_add(done), b.wrapping_add(done));
        let len = span(p).min(span(q)).min(usize::try_from(n - done).unwrap_or(usize::MAX));
        let (x, y) = (read(p, len)?, read(q, len)?);
        if let Some(i) = (0..len).find(|&i| x[i] != y[i] || x[i] == 0) {
            return Ok(Some(difference(x[i], y[i])));
        }
        done += len as u64;
    }
    Ok(Some(0))
}

fn strchr(s: u64, c: u8) -> Result<Option<u64>, Faulted> {
    let mut at = s;
    loop {
        let len = span(at);
        let buf = read(at, len)?;
        if let Some(i) = buf[..len].iter().position(|&b| b == c || b == 0) {
            return Ok(Some(if buf[i] == c { at + i as u64 } else { 0 }));
        }
        at = at.wrapping_add(len as u64);
    }
}

fn strnlen(s: u64, n: u64) -> Result<Option<u64>, Faulted> {
    let (mut at, end) = (s, s.saturating_add(n));
    while at < end {
        let len = span(at).min((end - at) as usize);
        let buf = read(at, len)?;
        if let Some(i) = buf[..len].iter().position(|&c| c == 0) {
            return Ok(Some(at + i as u64 - s));
        }
        at += len as u64;
    }
    Ok(Some(end - s))
}
