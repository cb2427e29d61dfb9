//! Guest memory accesses that survive a fault. The interpreter's loads and
//! stores go through two small leaf functions in assembly
//! (`aarchx_probe_load`, `aarchx_probe_store`) whose code lies between the
//! symbols `aarchx_probe_begin` and `aarchx_probe_end`. When an access
//! faults, the host SIGSEGV/SIGBUS handler (`crate::signals`) sees the pc
//! inside that range, records the fault and resumes at
//! `aarchx_probe_fault`, which returns 1 to the caller: the kernel's
//! exception-table technique for user copies. Nothing has been pushed in
//! these leaf functions, so returning from the landing pad is exact.
//!
//! The access itself is one host load or store of the guest's size (a
//! pair for 16 bytes), unaligned where the guest's is; `aarchx_probe_cas`
//! is one host compare-and-swap (aligned), what the interpreter's atomics
//! are made of, so they are atomic against other threads.

use crate::machine::GuestFault;

#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl aarchx_probe_begin",
    ".globl aarchx_probe_end",
    ".globl aarchx_probe_fault",
    ".globl aarchx_probe_load",
    ".globl aarchx_probe_store",
    ".globl aarchx_probe_cas",
    "aarchx_probe_begin:",
    // x0 = address (aligned to the size), x1 = size (1, 2, 4, 8), x2 =
    // where the expected value is and the old one goes, x3 = where the
    // new value is. An exclusive-pair loop with acquire and release (no
    // FEAT_LSE needed).
    "aarchx_probe_cas:",
    "cmp x1, #1",
    "b.ne .Lprobe_c2",
    "ldrb w4, [x2]",
    "ldrb w5, [x3]",
    "0:",
    "ldaxrb w6, [x0]",
    "cmp w6, w4",
    "b.ne .Lprobe_cdiff",
    "stlxrb w7, w5, [x0]",
    "cbnz w7, 0b",
    "b .Lprobe_cdone",
    ".Lprobe_c2:",
    "cmp x1, #2",
    "b.ne .Lprobe_c4",
    "ldrh w4, [x2]",
    "ldrh w5, [x3]",
    "0:",
    "ldaxrh w6, [x0]",
    "cmp w6, w4",
    "b.ne .Lprobe_cdiff",
    "stlxrh w7, w5, [x0]",
    "cbnz w7, 0b",
    "b .Lprobe_cdone",
    ".Lprobe_c4:",
    "cmp x1, #4",
    "b.ne .Lprobe_c8",
    "ldr w4, [x2]",
    "ldr w5, [x3]",
    "0:",
    "ldaxr w6, [x0]",
    "cmp w6, w4",
    "b.ne .Lprobe_cdiff",
    "stlxr w7, w5, [x0]",
    "cbnz w7, 0b",
    "b .Lprobe_cdone",
    ".Lprobe_c8:",
    "ldr x4, [x2]",
    "ldr x5, [x3]",
    "0:",
    "ldaxr x6, [x0]",
    "cmp x6, x4",
    "b.ne .Lprobe_cdiff",
    "stlxr w7, x5, [x0]",
    "cbnz w7, 0b",
    "b .Lprobe_cdone",
    ".Lprobe_cdiff:",
    "clrex",
    ".Lprobe_cdone:",
    "str x6, [x2]",
    "b .Lprobe_ok",
    // x0 = address, x1 = size, x2 = where the value goes.
    "aarchx_probe_load:",
    "cmp x1, #1",
    "b.ne .Lprobe_l2",
    "ldrb w3, [x0]",
    "strb w3, [x2]",
    "b .Lprobe_ok",
    ".Lprobe_l2:",
    "cmp x1, #2",
    "b.ne .Lprobe_l4",
    "ldrh w3, [x0]",
    "strh w3, [x2]",
    "b .Lprobe_ok",
    ".Lprobe_l4:",
    "cmp x1, #4",
    "b.ne .Lprobe_l8",
    "ldr w3, [x0]",
    "str w3, [x2]",
    "b .Lprobe_ok",
    ".Lprobe_l8:",
    "cmp x1, #8",
    "b.ne .Lprobe_l16",
    "ldr x3, [x0]",
    "str x3, [x2]",
    "b .Lprobe_ok",
    ".Lprobe_l16:",
    "ldp x3, x4, [x0]",
    "stp x3, x4, [x2]",
    "b .Lprobe_ok",
    // x0 = address, x1 = size, x2 = where the value is.
    "aarchx_probe_store:",
    "cmp x1, #1",
    "b.ne .Lprobe_s2",
    "ldrb w3, [x2]",
    "strb w3, [x0]",
    "b .Lprobe_ok",
    ".Lprobe_s2:",
    "cmp x1, #2",
    "b.ne .Lprobe_s4",
    "ldrh w3, [x2]",
    "strh w3, [x0]",
    "b .Lprobe_ok",
    ".Lprobe_s4:",
    "cmp x1, #4",
    "b.ne .Lprobe_s8",
    "ldr w3, [x2]",
    "str w3, [x0]",
    "b .Lprobe_ok",
    ".Lprobe_s8:",
    "cmp x1, #8",
    "b.ne .Lprobe_s16",
    "ldr x3, [x2]",
    "str x3, [x0]",
    "b .Lprobe_ok",
    ".Lprobe_s16:",
    "ldp x3, x4, [x2]",
    "stp x3, x4, [x0]",
    ".Lprobe_ok:",
    "mov x0, #0",
    "ret",
    "aarchx_probe_fault:",
    "mov x0, #1",
    "ret",
    "aarchx_probe_end:",
);

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl aarchx_probe_begin",
    ".globl aarchx_probe_end",
    ".globl aarchx_probe_fault",
    ".globl aarchx_probe_load",
    ".globl aarchx_probe_store",
    ".globl aarchx_probe_cas",
    "aarchx_probe_begin:",
    // rdi = address, rsi = size (1, 2, 4, 8), rdx = where the expected
    // value is and the old one goes, rcx = where the new value is.
    "aarchx_probe_cas:",
    "cmp rsi, 1",
    "jne .Lprobe_c2",
    "mov al, byte ptr [rdx]",
    "mov r8b, byte ptr [rcx]",
    "lock cmpxchg byte ptr [rdi], r8b",
    "mov byte ptr [rdx], al",
    "jmp .Lprobe_ok",
    ".Lprobe_c2:",
    "cmp rsi, 2",
    "jne .Lprobe_c4",
    "mov ax, word ptr [rdx]",
    "mov r8w, word ptr [rcx]",
    "lock cmpxchg word ptr [rdi], r8w",
    "mov word ptr [rdx], ax",
    "jmp .Lprobe_ok",
    ".Lprobe_c4:",
    "cmp rsi, 4",
    "jne .Lprobe_c8",
    "mov eax, dword ptr [rdx]",
    "mov r8d, dword ptr [rcx]",
    "lock cmpxchg dword ptr [rdi], r8d",
    "mov dword ptr [rdx], eax",
    "jmp .Lprobe_ok",
    ".Lprobe_c8:",
    "mov rax, qword ptr [rdx]",
    "mov r8, qword ptr [rcx]",
    "lock cmpxchg qword ptr [rdi], r8",
    "mov qword ptr [rdx], rax",
    "jmp .Lprobe_ok",
    // rdi = address, rsi = size, rdx = where the value goes.
    "aarchx_probe_load:",
    "cmp rsi, 1",
    "jne .Lprobe_l2",
    "mov al, byte ptr [rdi]",
    "mov byte ptr [rdx], al",
    "jmp .Lprobe_ok",
    ".Lprobe_l2:",
    "cmp rsi, 2",
    "jne .Lprobe_l4",
    "mov ax, word ptr [rdi]",
    "mov word ptr [rdx], ax",
    "jmp .Lprobe_ok",
    ".Lprobe_l4:",
    "cmp rsi, 4",
    "jne .Lprobe_l8",
    "mov eax, dword ptr [rdi]",
    "mov dword ptr [rdx], eax",
    "jmp .Lprobe_ok",
    ".Lprobe_l8:",
    "cmp rsi, 8",
    "jne .Lprobe_l16",
    "mov rax, qword ptr [rdi]",
    "mov qword ptr [rdx], rax",
    "jmp .Lprobe_ok",
    ".Lprobe_l16:",
    "movups xmm0, xmmword ptr [rdi]",
    "movups xmmword ptr [rdx], xmm0",
    "jmp .Lprobe_ok",
    // rdi = address, rsi = size, rdx = where the value is.
    "aarchx_probe_store:",
    "cmp rsi, 1",
    "jne .Lprobe_s2",
    "mov al, byte ptr [rdx]",
    "mov byte ptr [rdi], al",
    "jmp .Lprobe_ok",
    ".Lprobe_s2:",
    "cmp rsi, 2",
    "jne .Lprobe_s4",
    "mov ax, word ptr [rdx]",
    "mov word ptr [rdi], ax",
    "jmp .Lprobe_ok",
    ".Lprobe_s4:",
    "cmp rsi, 4",
    "jne .Lprobe_s8",
    "mov eax, dword ptr [rdx]",
    "mov dword ptr [rdi], eax",
    "jmp .Lprobe_ok",
    ".Lprobe_s8:",
    "cmp rsi, 8",
    "jne .Lprobe_s16",
    "mov rax, qword ptr [rdx]",
    "mov qword ptr [rdi], rax",
    "jmp .Lprobe_ok",
    ".Lprobe_s16:",
    "movups xmm0, xmmword ptr [rdx]",
    "movups xmmword ptr [rdi], xmm0",
    ".Lprobe_ok:",
    "xor eax, eax",
    "ret",
    "aarchx_probe_fault:",
    "mov eax, 1",
    "ret",
    "aarchx_probe_end:",
);

extern "C" {
    fn aarchx_probe_load(addr: u64, size: u64, out: *mut u8) -> u64;
    fn aarchx_probe_store(addr: u64, size: u64, value: *const u8) -> u64;
    fn aarchx_probe_cas(addr: u64, size: u64, expected: *mut u8, new: *const u8) -> u64;
    static aarchx_probe_begin: u8;
    static aarchx_probe_end: u8;
    static aarchx_probe_fault: u8;
}

/// The host code range whose faults are guest faults, and where they
/// resume.
pub fn code_range() -> (usize, usize, usize) {
    (
        std::ptr::addr_of!(aarchx_probe_begin) as usize,
        std::ptr::addr_of!(aarchx_probe_end) as usize,
        std::ptr::addr_of!(aarchx_probe_fault) as usize,
    )
}

/// Loads `size` (1, 2, 4, 8 or 16) bytes at guest address `addr`. On a
/// fault, returns 0 and keeps the fault for [`take_fault`].
pub fn load(addr: u64, size: usize) -> u128 {
    let mut out = 0u128;
    // SAFETY: runtime edge. Guest memory is identity-mapped; a bad address
    // faults inside the probe, and the fault handler makes the probe
    // return 1 instead. `out` is a live local of 16 bytes.
    let failed = unsafe { aarchx_probe_load(addr, size as u64, (&mut out as *mut u128).cast()) };
    if failed != 0 {
        // The handler recorded the fault in the thread's context.
        return 0;
    }
    out
}

/// Stores the low `size` bytes of `bits` at guest address `addr`. On a
/// fault, nothing is stored and the fault is kept for [`take_fault`].
pub fn store(addr: u64, size: usize, bits: u128) {
    // A fault is recorded by the handler in the thread's context.
    // SAFETY: as in `load`; `bits` is a live local of 16 bytes.
    unsafe { aarchx_probe_store(addr, size as u64, (&bits as *const u128).cast()) };
}

/// Atomically replaces the `size` bytes (1, 2, 4 or 8) at guest address
/// `addr`, aligned to `size`, with `new` if they hold `expected`; returns
/// what they held (sequentially consistent: `lock cmpxchg`, or an
/// acquire/release exclusive pair). On a fault, returns 0, stores nothing
/// and the fault is kept for [`take_fault`].
pub fn cas(addr: u64, size: usize, expected: u64, new: u64) -> u64 {
    let mut old = expected;
    // SAFETY: as in `load`; `old` and `new` are live locals of 8 bytes,
    // of which the probe reads and writes the low `size` (little-endian).
    let failed =
        unsafe { aarchx_probe_cas(addr, size as u64, (&mut old as *mut u64).cast(), (&new as *const u64).cast()) };
    if failed != 0 {
        return 0;
    }
    old
}

/// Copies guest memory at `addr` into `buf`, 8 bytes at a time, stopping
/// at the first access that faults: its fault is returned (and not kept).
/// For the system calls' copies, which the guest map has checked but
/// which can still fault (a file mapping past the end of its file).
pub fn copy_from(addr: u64, buf: &mut [u8]) -> Result<(), GuestFault> {
    let mut done = 0;
    while done < buf.len() {
        let n = if buf.len() - done >= 8 { 8 } else { 1 };
        let v = load(addr + done as u64, n);
        if let Some(fault) = take_fault() {
            return Err(fault);
        }
        buf[done..done + n].copy_from_slice(&v.to_le_bytes()[..n]);
        done += n;
    }
    Ok(())
}

/// Copies `bytes` to guest memory at `addr`, as [`copy_from`] does the
/// other way.
pub fn copy_to(addr: u64, bytes: &[u8]) -> Result<(), GuestFault> {
    let mut done = 0;
    while done < bytes.len() {
        let n = if bytes.len() - done >= 8 { 8 } else { 1 };
        let mut v = [0u8; 16];
        v[..n].copy_from_slice(&bytes[done..done + n]);
        store(addr + done as u64, n, u128::from_le_bytes(v));
        if let Some(fault) = take_fault() {
            return Err(fault);
        }
        done += n;
    }
    Ok(())
}

/// The fault of the last failed access since the last call (kept in the
/// thread's context, where the fault handler records it).
pub fn take_fault() -> Option<GuestFault> {
    crate::thread::current().take_fault()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_and_faults() {
        crate::signals::install_fault_handlers();
        let mut buf = [0u8; 32];
        let at = buf.as_mut_ptr() as u64 + 3;
        store(at, 8, 0x1122_3344_5566_7788);
        assert_eq!(load(at, 4), 0x5566_7788);
        store(at, 16, u128::MAX - 5);
        assert_eq!(load(at, 16), u128::MAX - 5);
        assert_eq!(take_fault(), None);
        assert_eq!(load(8, 8), 0);
        let f = take_fault().expect("a fault at address 8");
        assert_eq!((f.sig, f.addr), (libc::SIGSEGV, 8));
        store(16, 1, 1);
        assert_eq!(take_fault().map(|f| f.addr), Some(16));
        let mut out = [0u8; 11];
        copy_to(at, b"hello world").unwrap();
        copy_from(at, &mut out).unwrap();
        assert_eq!(&out, b"hello world");
        assert_eq!(copy_from(24, &mut out).map_err(|f| f.addr), Err(24));
        assert_eq!(copy_to(32, &out).map_err(|f| f.addr), Err(32));
        assert_eq!(take_fault(), None, "returned, not kept");
    }
}
