//! The lifter + interpreter side and the comparison: lifting a form with
//! the decode pass (one instruction) from the bytes at its real address,
//! the test `Machine` (identity-mapped loads and stores, confined to the
//! scratch buffer), running the region, and comparing the final states
//! field by field (GPRs, defined flags and DF, XMM registers, buffer
//! bytes) with a readable report.

use std::fmt::Write;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use aarchx::interp::run_region;
use aarchx::machine::Machine;
use aarchx::machine::RegionExit;
use aarchx_ir::cond::Helper;
use aarchx_ir::{ExitKind, GuestState, Region, Type};
use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, Pass, PassContext, TranslationConfig};
use aarchx_passes::decode::Decode;

use crate::layout::{Layout, BUF_SIZE};
use crate::native::Runner;
use crate::states::{effective_address, Case};
use crate::undefined;

const GPR_NAMES: [&str; 16] =
    ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"];

/// Guest code: a copy of the code page's bytes at their real address (the
/// code under test and the `jmp` after it).
pub struct CodeBytes {
    pub addr: u64,
    pub bytes: Vec<u8>,
}

impl GuestCode for CodeBytes {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(off) = addr.checked_sub(self.addr).map(|o| o as usize).filter(|o| *o < self.bytes.len()) else {
            return 0;
        };
        let n = buf.len().min(self.bytes.len() - off);
        buf[..n].copy_from_slice(&self.bytes[off..off + n]);
        n
    }
}

/// How long lifting one instruction may take before it counts as a hang.
const LIFT_TIMEOUT: Duration = Duration::from_secs(5);

/// Lifts the instruction at `layout.insn` into a one-instruction region.
/// The lifter runs on its own thread: one that never returns is reported
/// (and left spinning until the test process exits) instead of hanging
/// the whole oracle.
pub fn lift(runner: &Runner) -> Result<Region, String> {
    let layout = runner.layout();
    let mut bytes = vec![0u8; 32];
    let n = runner.read_code(layout.insn, &mut bytes);
    bytes.truncate(n);
    let code = CodeBytes { addr: layout.insn, bytes };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut region = Region::new(code.addr);
        let config = TranslationConfig {
            memory_model: MemoryModel::Plain,
            tso_vector: false,
            cpu_level: CpuLevel::V3,
            superblocks: true,
        };
        let cx = PassContext { code: &code, config: &config };
        let result = Decode { max_insns: 1, follow: false }
            .run(&cx, &mut region)
            .map_err(|e| format!("decode pass failed: {e}"))
            .and_then(|()| aarchx_ir::verify::verify(&region).map_err(|e| format!("invalid IR: {e}")))
            .map(|()| region);
        let _ = tx.send(result);
    });
    match rx.recv_timeout(LIFT_TIMEOUT) {
        Ok(result) => result,
        Err(RecvTimeoutError::Timeout) => Err(format!("the lifter did not return within {LIFT_TIMEOUT:?} (hang)")),
        Err(RecvTimeoutError::Disconnected) => Err("the lifter panicked".into()),
    }
}

/// Most loads and stores one interpreted instruction may make (a rep
/// string form here makes at most a few dozen).
const MAX_ACCESSES: usize = 10_000;

/// The payload that aborts an interpreter run which exceeded `MAX_ACCESSES`.
struct RunAway;

/// Guest memory for the interpreter: the real addresses, but only inside
/// the scratch buffer; anything else is recorded and reads as 0. A run
/// that makes more than `MAX_ACCESSES` accesses (a runaway rep loop) is
/// aborted by unwinding with `RunAway`, without the panic hook.
pub struct BufMachine {
    layout: Layout,
    accesses: usize,
    pub errors: Vec<String>,
}

impl BufMachine {
    pub fn new(layout: Layout) -> BufMachine {
        BufMachine { layout, accesses: 0, errors: Vec::new() }
    }

    fn check(&mut self, what: &str, addr: u64, ty: Type) -> Option<usize> {
        self.accesses += 1;
        if self.accesses > MAX_ACCESSES {
            std::panic::resume_unwind(Box::new(RunAway));
        }
        let len = (ty.bits() / 8).max(1) as usize;
        if self.layout.in_buf(addr, len as u64) {
            Some(len)
        } else {
            if self.errors.len() < 8 {
                self.errors.push(format!("{what} of {len} bytes at {addr:#x}, outside the scratch buffer"));
            }
            None
        }
    }
}

impl Machine for BufMachine {
    fn load(&mut self, addr: u64, ty: Type) -> u128 {
        let Some(len) = self.check("load", addr, ty) else {
            return 0;
        };
        let mut bytes = [0u8; 16];
        // SAFETY: [addr, addr + len) was checked to lie inside the scratch
        // buffer, which is mapped read-write for the runner's lifetime.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, bytes.as_mut_ptr(), len) };
        u128::from_le_bytes(bytes)
    }

    fn store(&mut self, addr: u64, ty: Type, bits: u128) {
        let Some(len) = self.check("store", addr, ty) else {
            return;
        };
        let bytes = bits.to_le_bytes();
        // SAFETY: as in `load`; the buffer is not borrowed anywhere else.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, len) };
    }

    fn helper(&mut self, helper: Helper, state: &mut GuestState) {
        match helper {
            Helper::X87 | Helper::X87Flags => aarchx::x87::run(state, self),
            _ => self.errors.push(format!("unexpected helper call {helper:?}")),
        }
    }
}

/// The interpreter's run of one case.
pub struct InterpResult {
    pub state: GuestState,
    pub mem: Vec<u8>,
    pub exit: RegionExit,
    pub errors: Vec<String>,
}

pub fn interpret(runner: &mut Runner, region: &Region, case: &Case) -> InterpResult {
    interpret_with(runner, case, |state, machine| run_region(region, state, machine))
}

/// Runs `run` (the interpreter on one or more regions) from `case`, with
/// the buffer holding the case's bytes; a run that exceeds `MAX_ACCESSES`
/// is aborted and reported as a differing exit.
pub fn interpret_with(
    runner: &mut Runner,
    case: &Case,
    run: impl FnOnce(&mut GuestState, &mut BufMachine) -> RegionExit,
) -> InterpResult {
    runner.set_buffer(&case.mem);
    let mut state = case.state;
    let mut machine = BufMachine::new(runner.layout());
    let run = std::panic::catch_unwind(AssertUnwindSafe(|| run(&mut state, &mut machine)));
    let exit = match run {
        Ok(exit) => exit,
        Err(payload) if payload.is::<RunAway>() => {
            machine.errors.push(format!("aborted after {MAX_ACCESSES} memory accesses (runaway loop)"));
            // Not a real exit: `compare` reports it as a differing exit.
            RegionExit::Trap { kind: aarchx_ir::TrapKind::FetchFault }
        }
        Err(payload) => std::panic::resume_unwind(payload),
    };
    InterpResult { state, mem: runner.buffer(), exit, errors: machine.errors }
}

/// One differing field: name, native value, interpreted value.
pub struct Diff {
    pub field: String,
    pub native: String,
    pub interp: String,
}

/// Compares a native and an interpreted final state, ignoring the flags
/// in `undefined` (a mask over `GuestState::flags`).
pub fn compare(
    native: &GuestState,
    native_mem: &[u8],
    interp: &InterpResult,
    next_ip: u64,
    undefined: u8,
    undefined_fpsw: u16,
) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let mut diff = |field: String, native: String, interp: String| diffs.push(Diff { field, native, interp });
    // ldmxcsr and fxrstor leave with `exit fenv`.
    let jumped = matches!(interp.exit, RegionExit::Jump { kind: ExitKind::Jump | ExitKind::Fenv });
    if !jumped || interp.state.rip != next_ip {
        diff("exit".into(), format!("jump {next_ip:#x}"), format!("{:?} rip={:#x}", interp.exit, interp.state.rip));
    }
    for e in &interp.errors {
        diff("machine".into(), "-".into(), e.clone());
    }
    for (k, name) in GPR_NAMES.iter().enumerate() {
        if native.gpr[k] != interp.state.gpr[k] {
            diff((*name).into(), format!("{:#018x}", native.gpr[k]), format!("{:#018x}", interp.state.gpr[k]));
        }
    }
    for (k, name) in undefined::NAMES.iter().enumerate() {
        if undefined & (1 << k) == 0 && native.flags[k] != interp.state.flags[k] {
            diff((*name).into(), native.flags[k].to_string(), interp.state.flags[k].to_string());
        }
    }
    for k in 0..16 {
        if native.xmm[k] != interp.state.xmm[k] {
            diff(format!("xmm{k}"), format!("{:#034x}", native.xmm[k]), format!("{:#034x}", interp.state.xmm[k]));
        }
        if native.ymm_hi[k] != interp.state.ymm_hi[k] {
            let (n, i) = (native.ymm_hi[k], interp.state.ymm_hi[k]);
            diff(format!("ymm{k} upper half"), format!("{n:#034x}"), format!("{i:#034x}"));
        }
    }
    let x87 = [
        ("mxcsr", u128::from(native.mxcsr), u128::from(interp.state.mxcsr)),
        ("fpcw", u128::from(native.fpcw), u128::from(interp.state.fpcw)),
        ("fpsw", u128::from(native.fpsw & !undefined_fpsw), u128::from(interp.state.fpsw & !undefined_fpsw)),
        ("fptag", u128::from(native.fptag), u128::from(interp.state.fptag)),
    ];
    for (name, n, i) in x87 {
        if n != i {
            diff(name.into(), format!("{n:#06x}"), format!("{i:#06x}"));
        }
    }
    for p in 0..8 {
        if native.st[p] != interp.state.st[p] {
            diff(format!("r{p}"), format!("{:#022x}", native.st[p]), format!("{:#022x}", interp.state.st[p]));
        }
    }
    // Differing bytes, grouped into runs.
    let mut k = 0;
    while k < BUF_SIZE {
        if native_mem[k] == interp.mem[k] {
            k += 1;
            continue;
        }
        let start = k;
        while k < BUF_SIZE && k < start + 16 && native_mem[k] != interp.mem[k] {
            k += 1;
        }
        diff(format!("mem[+{start:#x}..+{k:#x}]"), hex(&native_mem[start..k]), hex(&interp.mem[start..k]));
    }
    diffs
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

fn flags_text(s: &GuestState) -> String {
    undefined::NAMES.iter().enumerate().map(|(k, n)| format!("{n}={}", s.flags[k])).collect::<Vec<_>>().join(" ")
}

/// A state as text: GPRs, flags, the YMM registers (upper half, then XMM).
pub fn state_text(s: &GuestState) -> String {
    let mut out = String::new();
    for row in 0..4 {
        let line: Vec<String> =
            (0..4).map(|c| row * 4 + c).map(|k| format!("{:>4}={:#018x}", GPR_NAMES[k], s.gpr[k])).collect();
        let _ = writeln!(out, "    {}", line.join(" "));
    }
    let _ = writeln!(out, "    {}", flags_text(s));
    for row in 0..8 {
        let line: Vec<String> = (0..2)
            .map(|c| row * 2 + c)
            .map(|k| format!("{:>5}={:#034x}{:032x}", format!("ymm{k}"), s.ymm_hi[k], s.xmm[k]))
            .collect();
        let _ = writeln!(out, "    {}", line.join(" "));
    }
    let _ = writeln!(
        out,
        "    fpcw={:#06x} fpsw={:#06x} (top {}) fptag={:#04x}",
        s.fpcw,
        s.fpsw,
        s.fpsw >> 11 & 7,
        s.fptag
    );
    for row in 0..4 {
        let line: Vec<String> = (0..2).map(|c| row * 2 + c).map(|p| format!("r{p}={:#022x}", s.st[p])).collect();
        let _ = writeln!(out, "    {}", line.join(" "));
    }
    out
}

/// The bytes of the initial buffer around the memory operand (or rsi/rdi
/// for string forms, and the stack top).
pub fn memory_text(case: &Case, layout: &Layout, insn: &iced_x86::Instruction, string: bool) -> String {
    let mut out = String::new();
    let mut show = |name: &str, addr: u64| {
        if layout.in_buf(addr, 1) {
            let off = (addr - layout.buf) as usize;
            let lo = off & !15;
            let hi = (off + 32).min(BUF_SIZE);
            let _ = writeln!(out, "    {name} = buf+{off:#x}: [+{lo:#x}] {}", hex(&case.mem[lo..hi]));
        }
    };
    if string {
        let mask = if crate::states::string_addr32(insn) { 0xffff_ffff } else { u64::MAX };
        show("rsi", case.state.gpr[6] & mask);
        show("rdi", case.state.gpr[7] & mask);
    } else if (0..insn.op_count()).any(|n| insn.op_kind(n) == iced_x86::OpKind::Memory)
        && insn.mnemonic() != iced_x86::Mnemonic::Lea
    {
        show("ea", effective_address(insn, &case.state));
    }
    show("rsp", case.state.gpr[4]);
    out
}
