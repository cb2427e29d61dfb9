//! The entry trampoline, generated once at the start of the code cache.
//!
//! `enter(state, ctx, code) -> exit code` is an `extern "C"` function:
//! it saves the callee-saved registers of AAPCS64 (x19-x28, the frame
//! pair x29/x30, d8-d15), reserves [`SPILL_AREA`] bytes of stack for the
//! blocks' value slots, records the stack pointer in the context's
//! `entry_sp` (where a guest fault re-enters the exit sequence), pins
//! `state` in x28 and `ctx` in x27, loads the chain budget into x26 and
//! the pinned guest registers (GPRs and XMM registers) from the state, sets FPCR from the state's
//! MXCSR (see [`guest_fpcr`]), clears FPSR's cumulative float flags, and
//! branches to `code`.
//! Translated blocks never return with `ret`: each one ends by branching
//! to the trampoline's exit sequence with its exit code in x0 and the
//! stack pointer back where the block found it; the exit sequence stores
//! the pinned guest registers back into the state, ORs the float flags
//! FPSR gathered into its MXCSR (see `lower::fpsr_flags`), restores the
//! host's FPCR and the registers and returns to Rust. A guest fault enters the exit sequence
//! past the stores (the fault exit): the pinned registers may hold
//! anything by then, and the engine restores the state it saved.
//!
//! The registers it pins are declared in [`super::regs`].

use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi, VecAssembler};

use aarchx_ir::GuestState;

use super::cache::CodeCache;
use super::context::{JitContext, OFF_BUDGET, OFF_ENTRY_SP};
use super::leaf::LeafRoutines;
use super::lower::{fpsr_flags, NanRules, FPSR, OFF_MXCSR};
use super::regs::{transfer_pinned_v, PINNED, SPILL_AREA, STATE_REG};
use crate::thread::{CodeRun, Fixup};

/// Where the XMM registers start in the state struct.
const XMM: u32 = GuestState::OFFSET_XMM as u32;

/// The system register FPCR (S3_3_C4_C4_0) as `mrs`/`msr` encode it.
const FPCR: u32 = 0x5a20;

type EnterFn = unsafe extern "C" fn(*mut GuestState, *mut JitContext, usize) -> u64;

/// The generated trampoline's two entry points.
#[derive(Debug)]
pub struct Trampoline {
    enter: usize,
    exit: usize,
    /// The exit sequence past the pinned registers' stores.
    fault_exit: usize,
    /// The code cache it enters: where translated code runs.
    cache: std::ops::Range<usize>,
    /// Where the blocks start in it: past the trampoline.
    blocks: usize,
}

/// Emits the switch of FPCR from the host's to the guest's: its
/// rounding mode from MXCSR.RC and its FZ from MXCSR.FTZ, the rest kept.
/// x86's RC is nearest, down, up, toward zero; arm64's RMode is nearest,
/// up (RP), down (RM), toward zero: the two bits swap. The dispatcher
/// runs translated code only while FTZ and DAZ are equal and every
/// exception is masked (`crate::engine::jit_runs_under`): FZ flushes
/// denormal operands and results alike, which is x86's FTZ with DAZ.
/// MXCSR cannot change while translated code runs (`ldmxcsr` and
/// `fxrstor` end their region with `exit fenv`, never chained), so the
/// mode holds for every block the run reaches. Under
/// [`NanRules::Afp`] it also sets AH and, from the same FTZ bit, FIZ:
/// with AH set, FZ flushes only results (tininess after rounding, as
/// x86's FTZ) and FIZ flushes operands (DAZ). Clobbers x9-x12; writes
/// FPCR only when the mode differs from the host's.
fn guest_fpcr(ops: &mut VecAssembler<Aarch64Relocation>, nan_rules: NanRules) {
    dynasm!(ops
        ; .arch aarch64
        ; mrs x9, #FPCR
        ; ldr w10, [X(STATE_REG), #OFF_MXCSR]
        ; ubfx w11, w10, #13, #2
        ; rbit w11, w11
        ; lsr w11, w11, #30
        ; ubfx w12, w10, #15, #1
        ; orr w11, w11, w12, lsl #2
    );
    if nan_rules == NanRules::Afp {
        // FIZ (bit 0) = FTZ, AH (bit 1) set.
        dynasm!(ops; .arch aarch64; orr w10, w12, #2);
    }
    dynasm!(ops
        ; .arch aarch64
        ; mov x12, x9
        ; bfi x12, x11, #22, #3
    );
    if nan_rules == NanRules::Afp {
        dynasm!(ops; .arch aarch64; bfi x12, x10, #0, #2);
    }
    dynasm!(ops
        ; .arch aarch64
        ; cmp x12, x9
        ; b.eq >same
        ; msr #FPCR, x12
        ; same:
    );
}

impl Trampoline {
    /// Assembles the trampoline into `cache`, for code lowered under
    /// `nan_rules`.
    pub fn generate(cache: &mut CodeCache, nan_rules: NanRules) -> Result<Trampoline, String> {
        let at = cache.next_addr();
        let mut ops = VecAssembler::<Aarch64Relocation>::new(at);
        dynasm!(ops
            ; .arch aarch64
            ; stp x29, x30, [sp, #-16]!
            ; mov x29, sp
            ; stp x19, x20, [sp, #-16]!
            ; stp x21, x22, [sp, #-16]!
            ; stp x23, x24, [sp, #-16]!
            ; stp x25, x26, [sp, #-16]!
            ; stp x27, x28, [sp, #-16]!
            ; stp d8, d9, [sp, #-16]!
            ; stp d10, d11, [sp, #-16]!
            ; stp d12, d13, [sp, #-16]!
            ; stp d14, d15, [sp, #-16]!
            ; mrs x9, #FPCR
            ; stp x9, xzr, [sp, #-16]!
            ; sub sp, sp, #SPILL_AREA
            ; mov x28, x0
            ; mov x27, x1
            ; mov x9, sp
            ; str x9, [x27, #OFF_ENTRY_SP]
            ; ldr x26, [x27, #OFF_BUDGET]
        );
        for (reg, host) in PINNED {
            let off = GuestState::offset_of(reg) as u32;
            dynasm!(ops; .arch aarch64; ldr X(host), [X(STATE_REG), #off]);
        }
        dynasm!(ops; .arch aarch64; add XSP(9), XSP(STATE_REG), #XMM);
        transfer_pinned_v(&mut ops, true, 9);
        guest_fpcr(&mut ops, nan_rules);
        // Translated code's float flags start from none (see `fpsr_flags`).
        dynasm!(ops; .arch aarch64; msr #FPSR, xzr; br x2);
        let exit = ops.offset().0;
        for (reg, host) in PINNED {
            let off = GuestState::offset_of(reg) as u32;
            dynasm!(ops; .arch aarch64; str X(host), [X(STATE_REG), #off]);
        }
        dynasm!(ops; .arch aarch64; add XSP(9), XSP(STATE_REG), #XMM);
        transfer_pinned_v(&mut ops, false, 9);
        // The flags translated code raised into the state's MXCSR.
        fpsr_flags(&mut ops, 9, 10);
        dynasm!(ops
            ; .arch aarch64
            ; ldr w10, [X(STATE_REG), #OFF_MXCSR]
            ; orr w10, w10, w9
            ; str w10, [X(STATE_REG), #OFF_MXCSR]
        );
        let fault_exit = ops.offset().0;
        dynasm!(ops
            ; .arch aarch64
            ; add sp, sp, #SPILL_AREA
            ; ldp x9, x10, [sp], #16
            ; mrs x10, #FPCR
            ; cmp x9, x10
            ; b.eq >host
            ; msr #FPCR, x9
            ; host:
            ; ldp d14, d15, [sp], #16
            ; ldp d12, d13, [sp], #16
            ; ldp d10, d11, [sp], #16
            ; ldp d8, d9, [sp], #16
            ; ldp x27, x28, [sp], #16
            ; ldp x25, x26, [sp], #16
            ; ldp x23, x24, [sp], #16
            ; ldp x21, x22, [sp], #16
            ; ldp x19, x20, [sp], #16
            ; ldp x29, x30, [sp], #16
            ; ret
        );
        let code = ops.finalize().map_err(|e| e.to_string())?;
        let enter = cache.push(at, &code).ok_or("no room for the trampoline")?;
        Ok(Trampoline {
            enter,
            exit: enter + exit,
            fault_exit: enter + fault_exit,
            cache: cache.range(),
            blocks: enter + code.len(),
        })
    }

    /// Where blocks branch to leave (exit code in x0).
    pub fn exit_addr(&self) -> usize {
        self.exit
    }

    /// Runs translated code at `code` and returns its exit code.
    ///
    /// # Safety
    ///
    /// `code` is the entry of a block generated for this trampoline, and
    /// the guest memory it touches is mapped (see `Jit::run`).
    /// While it runs, a guest memory fault in the code cache comes back
    /// as the fault exit code, and a misaligned acquire/release access at
    /// an address of `fixups` resumes at its fixup (see `crate::signals`),
    /// and a signal empties the indirect branch cache through `ctx`'s cut
    /// slot `cut` (see `crate::thread::cut_one`).
    pub unsafe fn enter(
        &self,
        state: &mut GuestState,
        ctx: &mut JitContext,
        code: usize,
        fixups: &[Fixup],
        leaf: &LeafRoutines,
        cut: usize,
    ) -> u64 {
        // SAFETY: `enter` is the address of the code generated above,
        // which follows the C calling convention of `EnterFn`.
        let f = unsafe { std::mem::transmute::<usize, EnterFn>(self.enter) };
        let context = crate::thread::current();
        context.set_code_run(Some(CodeRun {
            code: (self.cache.start, self.cache.end),
            blocks: self.blocks,
            exit: self.fault_exit,
            sp_slot: std::ptr::addr_of!(ctx.entry_sp) as usize,
            fault_code: super::exit::fault_code(),
            cut: Some(cut),
            budget_reg: usize::from(super::regs::BUDGET_REG),
            fixups: (fixups.as_ptr() as usize, fixups.len()),
            patch: Some(super::cache::patch_word),
            leaf: (leaf.range.0, leaf.range.1, leaf.decline),
        }));
        // SAFETY: the caller's contract; the code preserves every register
        // AAPCS64 requires and returns through the exit sequence.
        let code = unsafe { f(state, ctx, code) };
        context.set_code_run(None);
        code
    }
}
