//! Native execution of one instruction on the real CPU: owns the oracle's
//! arena (an RWX code page, a data page, and the guest's scratch buffer
//! between guard pages, all below 2 GiB), the prologue and epilogue that
//! switch between the host's registers and a guest state, and the signal
//! handler that turns a native fault into a reported result instead of a
//! crashed test.
//!
//! Layout of the arena (one mapping, `MAP_32BIT`, so `[disp32]` and 32-bit
//! address-size forms can reach the buffer):
//!
//! ```text
//! page 0  code: prologue at +0, the code under test (one instruction, or
//!         a sequence of up to `CODE_SLOT` bytes) at +INSN_OFFSET,
//!         `jmp epilogue` right after it, epilogue at +EPILOGUE_OFFSET
//! page 1  data: the `Frame` (guest state in and out, saved host registers)
//! page 2  guard (PROT_NONE)
//! page 3  the guest's scratch buffer: memory operands, string operands
//!         and the guest stack all live here
//! page 4  guard (PROT_NONE)
//! ```
//!
//! The prologue saves the host's callee-saved registers, rsp and MXCSR in
//! the frame (RIP-relative), sets MXCSR to the guest's 0x1f80, loads the
//! XMM registers and the YMM upper halves, the flags (push + popfq on the host stack, before rsp is
//! switched) and all sixteen GPRs (rsp last), and jumps to the instruction.
//! The epilogue stores the GPRs, restores the host rsp, stores the flags
//! (pushfq + pop, on the host stack), the XMM registers, the YMM upper halves
//! (then vzeroupper) and MXCSR, clears DF and restores the host's registers before returning.

use std::cell::Cell;
use std::ptr;
use std::sync::Once;

use aarchx_ir::GuestState;
use iced_x86::{Code, Encoder, Instruction, MemoryOperand, Register};

use crate::layout::{Layout, BUF_SIZE};

const PAGE: usize = 4096;
/// Where the instruction under test sits in the code page.
const INSN_OFFSET: u64 = 0x800;
/// Where the epilogue starts in the code page.
const EPILOGUE_OFFSET: u64 = 0xc00;
/// Room for the code under test and its `jmp` to the epilogue.
pub const CODE_SLOT: usize = (EPILOGUE_OFFSET - INSN_OFFSET) as usize - 5;
const ARENA_PAGES: usize = 5;

/// The data page: what the prologue loads and the epilogue stores.
#[repr(C, align(16))]
struct Frame {
    /// fxsave images: the guest's x87 state in and out.
    in_fx: [u8; 512],
    out_fx: [u8; 512],
    in_xmm: [u128; 16],
    out_xmm: [u128; 16],
    /// The upper halves of ymm0-15.
    in_ymm_hi: [u128; 16],
    out_ymm_hi: [u128; 16],
    in_gpr: [u64; 16],
    out_gpr: [u64; 16],
    in_rflags: u64,
    out_rflags: u64,
    /// rsp, rbx, rbp, r12, r13, r14, r15 of the host.
    host: [u64; 7],
    host_mxcsr: u32,
    guest_mxcsr: u32,
    out_mxcsr: u32,
}

const HOST_SAVED: [Register; 6] =
    [Register::RBX, Register::RBP, Register::R12, Register::R13, Register::R14, Register::R15];

/// The final state of a native run.
pub struct NativeResult {
    pub state: GuestState,
    pub mem: Vec<u8>,
}

/// A native run that faulted: the signal it raised.
#[derive(Clone, Copy, Debug)]
pub struct NativeFault {
    pub signal: i32,
    pub addr: u64,
}

thread_local! {
    /// The code range of the runner active on this thread, the address the
    /// fault handler resumes at, and the last fault (signal, address).
    static ACTIVE: Cell<(u64, u64, u64)> = const { Cell::new((0, 0, 0)) };
    static FAULT: Cell<(i32, u64)> = const { Cell::new((0, 0)) };
}

const SIGNALS: [libc::c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL, libc::SIGTRAP];

/// The fxsave image of `s`'s x87 state (registers in stack order), with
/// the guest's MXCSR.
fn x87_image(s: &GuestState) -> [u8; 512] {
    let mut fx = [0u8; 512];
    fx[0..2].copy_from_slice(&s.fpcw.to_le_bytes());
    fx[2..4].copy_from_slice(&s.fpsw.to_le_bytes());
    fx[4] = s.fptag;
    fx[24..28].copy_from_slice(&0x1f80u32.to_le_bytes());
    let top = usize::from(s.fpsw >> 11 & 7);
    for i in 0..8 {
        fx[32 + 16 * i..42 + 16 * i].copy_from_slice(&s.st[(top + i) & 7].to_le_bytes()[..10]);
    }
    fx
}

/// The x87 state of an fxsave image into `s`.
fn x87_from_image(s: &mut GuestState, fx: &[u8; 512]) {
    s.fpcw = u16::from_le_bytes([fx[0], fx[1]]);
    s.fpsw = u16::from_le_bytes([fx[2], fx[3]]);
    s.fptag = fx[4];
    let top = usize::from(s.fpsw >> 11 & 7);
    for i in 0..8 {
        let mut b = [0u8; 16];
        b[..10].copy_from_slice(&fx[32 + 16 * i..42 + 16 * i]);
        s.st[(top + i) & 7] = u128::from_le_bytes(b);
    }
}

/// The layout of an arena whose code page is at `code`.
pub fn layout_at(code: u64) -> Layout {
    Layout {
        code,
        insn: code + INSN_OFFSET,
        epilogue: code + EPILOGUE_OFFSET,
        data: code + PAGE as u64,
        buf: code + 3 * PAGE as u64,
    }
}

/// Runs single instructions natively in the arena.
pub struct Runner {
    base: *mut u8,
    layout: Layout,
    alt_stack: Vec<u8>,
    old_alt: libc::stack_t,
}

fn gpr64(i: usize) -> Register {
    Register::values().nth(Register::RAX as usize + i).expect("a 64-bit GPR")
}

fn xmm(i: usize) -> Register {
    Register::values().nth(Register::XMM0 as usize + i).expect("an XMM register")
}

fn ymm(i: usize) -> Register {
    Register::values().nth(Register::YMM0 as usize + i).expect("a YMM register")
}

/// A tiny assembler: encodes instructions one after another from `ip`.
struct Asm {
    encoder: Encoder,
    ip: u64,
    start: u64,
}

impl Asm {
    fn new(ip: u64) -> Asm {
        Asm { encoder: Encoder::new(64), ip, start: ip }
    }

    fn emit(&mut self, i: Result<Instruction, iced_x86::IcedError>) {
        let i = i.expect("a valid helper instruction");
        let len = self.encoder.encode(&i, self.ip).expect("the helper instruction encodes");
        self.ip += len as u64;
    }

    fn finish(mut self) -> (u64, Vec<u8>) {
        (self.start, self.encoder.take_buffer())
    }
}

/// A RIP-relative memory operand addressing `addr`.
fn at(addr: u64) -> MemoryOperand {
    MemoryOperand::with_base_displ(Register::RIP, addr as i64)
}

impl Runner {
    /// Maps the arena (anywhere below 2 GiB), assembles the prologue and
    /// epilogue, and installs the fault handlers (restored when the runner
    /// is dropped).
    pub fn new() -> Runner {
        Runner::preferring(None)
    }

    /// As `new`, with the arena's code page at `code` (below 2 GiB) if
    /// that range is free.
    pub fn preferring(code: Option<u64>) -> Runner {
        code.and_then(|c| Runner::map(c as *mut libc::c_void, libc::MAP_FIXED_NOREPLACE))
            .or_else(|| Runner::map(ptr::null_mut(), libc::MAP_32BIT))
            .expect("mmap of the oracle arena failed")
    }

    fn map(hint: *mut libc::c_void, placement: libc::c_int) -> Option<Runner> {
        // SAFETY: an anonymous private mapping; with MAP_FIXED_NOREPLACE it
        // replaces nothing. The result is checked before use.
        let base = unsafe {
            libc::mmap(
                hint,
                ARENA_PAGES * PAGE,
                libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | placement,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        if !hint.is_null() && base != hint {
            // A kernel without MAP_FIXED_NOREPLACE took it as a hint.
            // SAFETY: unmaps the mapping just made, which nothing uses.
            unsafe { libc::munmap(base, ARENA_PAGES * PAGE) };
            return None;
        }
        let base = base.cast::<u8>();
        for guard in [2, 4] {
            // SAFETY: the page lies inside the mapping just created.
            let r = unsafe { libc::mprotect(base.add(guard * PAGE).cast(), PAGE, libc::PROT_NONE) };
            assert_eq!(r, 0, "mprotect of a guard page failed");
        }
        let layout = layout_at(base as u64);
        let mut runner = Runner {
            base,
            layout,
            alt_stack: vec![0u8; 256 * 1024],
            // SAFETY: stack_t is plain old data; all-zero is a valid value.
            old_alt: unsafe { std::mem::zeroed() },
        };
        runner.assemble();
        runner.install_handlers();
        runner.install(&[0x90]);
        Some(runner)
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    fn frame(&self) -> *mut Frame {
        self.layout.data as *mut Frame
    }

    fn field(&self, offset: usize) -> u64 {
        self.layout.data + offset as u64
    }

    /// Writes `bytes` into the code page at `addr`.
    fn poke(&mut self, addr: u64, bytes: &[u8]) {
        assert!(addr >= self.layout.code && addr + bytes.len() as u64 <= self.layout.code + PAGE as u64);
        // SAFETY: the range was just checked to lie inside the code page,
        // which is mapped read-write-execute and owned by this runner.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, bytes.len()) };
    }

    fn assemble(&mut self) {
        use std::mem::offset_of;
        let host = self.field(offset_of!(Frame, host));
        let in_gpr = self.field(offset_of!(Frame, in_gpr));
        let out_gpr = self.field(offset_of!(Frame, out_gpr));
        let in_xmm = self.field(offset_of!(Frame, in_xmm));
        let out_xmm = self.field(offset_of!(Frame, out_xmm));
        let in_ymm_hi = self.field(offset_of!(Frame, in_ymm_hi));
        let out_ymm_hi = self.field(offset_of!(Frame, out_ymm_hi));
        let in_rflags = self.field(offset_of!(Frame, in_rflags));
        let out_rflags = self.field(offset_of!(Frame, out_rflags));
        let host_mxcsr = self.field(offset_of!(Frame, host_mxcsr));
        let guest_mxcsr = self.field(offset_of!(Frame, guest_mxcsr));
        let out_mxcsr = self.field(offset_of!(Frame, out_mxcsr));
        let in_fx = self.field(offset_of!(Frame, in_fx));
        let out_fx = self.field(offset_of!(Frame, out_fx));

        let mut a = Asm::new(self.layout.code);
        a.emit(Instruction::with2(Code::Mov_rm64_r64, at(host), Register::RSP));
        for (n, r) in HOST_SAVED.iter().enumerate() {
            a.emit(Instruction::with2(Code::Mov_rm64_r64, at(host + 8 * (n as u64 + 1)), *r));
        }
        a.emit(Instruction::with1(Code::Stmxcsr_m32, at(host_mxcsr)));
        a.emit(Instruction::with1(Code::Fxrstor64_m512byte, at(in_fx)));
        a.emit(Instruction::with1(Code::Ldmxcsr_m32, at(guest_mxcsr)));
        for n in 0..16 {
            a.emit(Instruction::with2(Code::Movdqa_xmm_xmmm128, xmm(n), at(in_xmm + 16 * n as u64)));
            a.emit(Instruction::with4(
                Code::VEX_Vinserti128_ymm_ymm_xmmm128_imm8,
                ymm(n),
                ymm(n),
                at(in_ymm_hi + 16 * n as u64),
                1,
            ));
        }
        // The flags go through the host stack, before rsp is switched.
        a.emit(Instruction::with1(Code::Push_rm64, at(in_rflags)));
        a.emit(Ok(Instruction::with(Code::Popfq)));
        for n in (0..16).filter(|&n| n != 4) {
            a.emit(Instruction::with2(Code::Mov_r64_rm64, gpr64(n), at(in_gpr + 8 * n as u64)));
        }
        a.emit(Instruction::with2(Code::Mov_r64_rm64, Register::RSP, at(in_gpr + 32)));
        a.emit(Instruction::with_branch(Code::Jmp_rel32_64, self.layout.insn));
        let (start, bytes) = a.finish();
        assert!(start + bytes.len() as u64 <= self.layout.insn, "the prologue overlaps the instruction slot");
        self.poke(start, &bytes);

        let mut a = Asm::new(self.layout.epilogue);
        for n in 0..16 {
            a.emit(Instruction::with2(Code::Mov_rm64_r64, at(out_gpr + 8 * n as u64), gpr64(n)));
        }
        a.emit(Instruction::with2(Code::Mov_r64_rm64, Register::RSP, at(host)));
        a.emit(Ok(Instruction::with(Code::Pushfq)));
        a.emit(Instruction::with1(Code::Pop_rm64, at(out_rflags)));
        for n in 0..16 {
            a.emit(Instruction::with2(Code::Movdqa_xmmm128_xmm, at(out_xmm + 16 * n as u64), xmm(n)));
            a.emit(Instruction::with3(
                Code::VEX_Vextracti128_xmmm128_ymm_imm8,
                at(out_ymm_hi + 16 * n as u64),
                ymm(n),
                1,
            ));
        }
        // Clean upper halves again for the host's own SSE code.
        a.emit(Ok(Instruction::with(Code::VEX_Vzeroupper)));
        a.emit(Instruction::with1(Code::Stmxcsr_m32, at(out_mxcsr)));
        a.emit(Instruction::with1(Code::Fxsave64_m512byte, at(out_fx)));
        a.emit(Ok(Instruction::with(Code::Fninit)));
        a.emit(Instruction::with1(Code::Ldmxcsr_m32, at(host_mxcsr)));
        a.emit(Ok(Instruction::with(Code::Cld)));
        for (n, r) in HOST_SAVED.iter().enumerate() {
            a.emit(Instruction::with2(Code::Mov_r64_rm64, *r, at(host + 8 * (n as u64 + 1))));
        }
        a.emit(Ok(Instruction::with(Code::Retnq)));
        let (start, bytes) = a.finish();
        assert!(start + bytes.len() as u64 <= self.layout.code + PAGE as u64, "the epilogue overflows the code page");
        self.poke(start, &bytes);
    }

    /// Places the instruction under test (encoded for `layout.insn`) and a
    /// `jmp` to the epilogue after it.
    pub fn install(&mut self, insn: &[u8]) {
        assert!(insn.len() <= 15);
        self.install_code(insn);
    }

    /// Places code under test (encoded for `layout.insn`, at most
    /// `CODE_SLOT` bytes, which may jump to the epilogue) and a `jmp` to
    /// the epilogue after it.
    pub fn install_code(&mut self, code: &[u8]) {
        assert!(code.len() <= CODE_SLOT, "{} bytes of code do not fit the slot", code.len());
        let end = self.layout.insn + code.len() as u64;
        let rel = (self.layout.epilogue as i64 - (end as i64 + 5)) as i32;
        let mut bytes = code.to_vec();
        bytes.push(0xe9);
        bytes.extend_from_slice(&rel.to_le_bytes());
        self.poke(self.layout.insn, &bytes);
    }

    /// Reads guest code bytes for the lifter, straight from the code page.
    pub fn read_code(&self, addr: u64, out: &mut [u8]) -> usize {
        let end = self.layout.code + PAGE as u64;
        if addr < self.layout.code || addr >= end {
            return 0;
        }
        let n = out.len().min((end - addr) as usize);
        // SAFETY: [addr, addr + n) lies inside the code page, which is
        // mapped readable for the runner's lifetime.
        unsafe { ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), n) };
        n
    }

    /// Fills the scratch buffer with `mem` (`BUF_SIZE` bytes).
    pub fn set_buffer(&mut self, mem: &[u8]) {
        assert_eq!(mem.len(), BUF_SIZE);
        // SAFETY: the buffer page is mapped read-write, BUF_SIZE bytes long,
        // and does not overlap `mem` (a Rust allocation).
        unsafe { ptr::copy_nonoverlapping(mem.as_ptr(), self.layout.buf as *mut u8, BUF_SIZE) };
    }

    /// A copy of the scratch buffer.
    pub fn buffer(&self) -> Vec<u8> {
        let mut v = vec![0u8; BUF_SIZE];
        // SAFETY: as in `set_buffer`.
        unsafe { ptr::copy_nonoverlapping(self.layout.buf as *const u8, v.as_mut_ptr(), BUF_SIZE) };
        v
    }

    /// Runs the installed instruction natively from `init` with the buffer
    /// holding `mem`.
    pub fn run(&mut self, init: &GuestState, mem: &[u8]) -> Result<NativeResult, NativeFault> {
        self.set_buffer(mem);
        let f = self.frame();
        // SAFETY: the frame lies in the data page, mapped read-write and
        // only used by this runner; no reference to it is live.
        unsafe {
            (*f).in_gpr = init.gpr;
            (*f).in_xmm = init.xmm;
            (*f).in_ymm_hi = init.ymm_hi;
            // Only the six status flags, DF and the reserved bit 1: never
            // TF or AC, which would trap or fault the host code after.
            (*f).in_rflags = init.rflags() & 0x0ed7;
            (*f).guest_mxcsr = init.mxcsr;
            (*f).in_fx = x87_image(init);
        }
        let code = self.layout.code;
        ACTIVE.set((code, code + PAGE as u64, self.layout.epilogue));
        FAULT.set((0, 0));
        // SAFETY: the code page holds a complete function (prologue,
        // instruction, epilogue) that follows the SysV calling convention:
        // it saves and restores every callee-saved register, rsp, MXCSR,
        // and returns with DF clear. The guest instruction only touches the
        // arena (the states are generated to keep its memory accesses in the
        // scratch buffer); a fault in it resumes at the epilogue through the
        // signal handler.
        unsafe {
            let entry: extern "sysv64" fn() = std::mem::transmute(code as usize);
            entry();
        }
        ACTIVE.set((0, 0, 0));
        let (signal, addr) = FAULT.get();
        if signal != 0 {
            return Err(NativeFault { signal, addr });
        }
        let mut state = *init;
        // SAFETY: as above; the native code has returned.
        unsafe {
            state.gpr = (*f).out_gpr;
            state.xmm = (*f).out_xmm;
            state.ymm_hi = (*f).out_ymm_hi;
            state.set_rflags((*f).out_rflags);
            state.mxcsr = (*f).out_mxcsr;
            x87_from_image(&mut state, &(*f).out_fx);
        }
        state.rip = init.rip;
        Ok(NativeResult { state, mem: self.buffer() })
    }

    /// Installs this thread's alternate signal stack (the guest rsp points
    /// into the scratch buffer, no place for a signal frame) and, once per
    /// process, the fault handlers. The handlers stay installed: they only
    /// act on faults inside an active runner's code page (per thread).
    fn install_handlers(&mut self) {
        let stack =
            libc::stack_t { ss_sp: self.alt_stack.as_mut_ptr().cast(), ss_flags: 0, ss_size: self.alt_stack.len() };
        // SAFETY: the alternate stack is owned by the runner and outlives
        // its installation (restored in Drop before the Vec is freed).
        let r = unsafe { libc::sigaltstack(&stack, &mut self.old_alt) };
        assert_eq!(r, 0, "sigaltstack failed");
        static HANDLERS: Once = Once::new();
        HANDLERS.call_once(|| {
            for sig in SIGNALS {
                // SAFETY: a zeroed sigaction is a valid value to fill in;
                // the handler is an extern "C" function with the SA_SIGINFO
                // signature.
                unsafe {
                    let mut act: libc::sigaction = std::mem::zeroed();
                    act.sa_sigaction = on_fault as *const () as usize;
                    act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
                    libc::sigemptyset(&mut act.sa_mask);
                    let r = libc::sigaction(sig, &act, ptr::null_mut());
                    assert_eq!(r, 0, "sigaction failed");
                }
            }
        });
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        // SAFETY: restores the alternate stack saved by install_handlers,
        // then unmaps the arena this runner mapped; nothing points into it.
        unsafe {
            libc::sigaltstack(&self.old_alt, ptr::null_mut());
            libc::munmap(self.base.cast(), ARENA_PAGES * PAGE);
        }
    }
}

/// The fault handler: a fault inside the active runner's code page resumes
/// at the epilogue (which restores the host state and returns normally)
/// and is recorded; any other fault restores the default action, so the
/// process dies as it would have (without Rust's stack-overflow message).
extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let (lo, hi, resume) = ACTIVE.get();
    // SAFETY: the kernel passes a valid ucontext_t and siginfo_t to an
    // SA_SIGINFO handler; REG_RIP indexes the saved general registers.
    unsafe {
        let uc = ctx.cast::<libc::ucontext_t>();
        let rip = (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] as u64;
        if rip >= lo && rip < hi {
            FAULT.set((sig, (*info).si_addr() as u64));
            (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] = resume as i64;
        } else {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}
