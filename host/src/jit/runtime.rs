//! The Rust side of translated code: `extern "C"` functions it calls
//! through the addresses in [`super::context::JitContext`]. Each is called
//! with the guest state and context of the running block, from code that
//! keeps nothing live in caller-saved registers across the call.
//!
//! A panic inside one aborts the process (an `extern "C"` function does
//! not unwind). A guest memory fault inside a helper ends the run (see
//! [`call_helper`]).

use aarchx_ir::cond::Helper;
use aarchx_ir::GuestState;

use super::context::{HelperFn, JitContext};

/// `call HELPER`: runs the closure of the current `Jit::run`.
///
/// # Safety
///
/// `state` and `ctx` are the pointers the trampoline pinned for this run,
/// and `ctx.helpers` points at the live `HelperFn` of that run.
pub unsafe extern "C" fn call_helper(helper: u32, state: *mut GuestState, ctx: *mut JitContext) {
    let helper = Helper::from_u16(helper as u16).expect("translated code passes a valid helper");
    // SAFETY: per the contract, both pointers come from the `&mut`
    // references `Jit::run` holds for the duration of the run, and no other
    // reference to them is in use while translated code runs.
    let (state, ctx) = unsafe { (&mut *state, &mut *ctx) };
    assert!(!ctx.helpers.is_null(), "helper call outside a run");
    // SAFETY: `Jit::run` set `helpers` to a `*mut HelperFn` that lives
    // until the run returns.
    let f = unsafe { &mut *ctx.helpers.cast::<HelperFn<'_>>() };
    f(helper, state);
    // A guest access of the helper (x87 operands) faulted: the run ends
    // as for a fault of translated code.
    #[cfg(target_arch = "aarch64")]
    if let Some(fault) = crate::thread::current().take_fault() {
        // SAFETY: called by translated code during a run; the references
        // above own nothing.
        unsafe { leave_run(fault) };
    }
}

/// Records a fault of a guest access made by a runtime helper that JIT
/// code called, and leaves the run as a fault of the code itself would:
/// at the trampoline's exit sequence, with its stack and the fault code.
/// Only `call_helper`'s own frame is abandoned, which owns nothing.
///
/// # Safety
///
/// Called from the helper entry point of a JIT run in progress, with
/// nothing left to drop on the way back to it.
#[cfg(target_arch = "aarch64")]
unsafe fn leave_run(fault: crate::machine::GuestFault) -> ! {
    let context = crate::thread::current();
    context.record_fault(fault);
    let run = context.code_run().expect("a helper called by a registered JIT run");
    // SAFETY: the slot is the live context's `entry_sp`, written by the
    // trampoline before it branched to the block.
    let sp = unsafe { *(run.sp_slot as *const u64) };
    // SAFETY: the exit sequence restores the registers the trampoline
    // saved from the stack at `sp` and returns from the trampoline's call
    // with x0 (the contract above: no frame in between needs dropping).
    unsafe {
        std::arch::asm!(
            "mov sp, {sp}",
            "br {exit}",
            sp = in(reg) sp,
            exit = in(reg) run.exit,
            in("x0") run.fault_code,
            options(noreturn)
        )
    }
}

/// Descriptor of a float NaN fix-up: lane width in bits, lane count, and
/// how many operands the op has (1 to 3).
pub fn nan_desc(lane_bits: u32, lanes: u32, operands: u32) -> u32 {
    lane_bits | (lanes << 8) | (operands << 16)
}

/// Rewrites every NaN lane of the result at `r` by the x86 rule: the
/// first of the operands that is a NaN, quieted, else the default NaN
/// (sign set, quiet bit only). For `fma` that is x86's rule too: the
/// first NaN of the multiplicands and the addend, never negated.
///
/// # Safety
///
/// `operands` points at the descriptor's number of operands, 16 bytes
/// apart, and `r` at the result (the operands' and result's slots), each
/// `lanes` lanes of `lane_bits` bits.
pub unsafe extern "C" fn fix_nan(desc: u32, operands: *const u8, r: *mut u8) {
    let bits = desc & 0xff;
    let lanes = ((desc >> 8) & 0xff) as usize;
    let count = (desc >> 16) as usize;
    let (mantissa, width) = if bits == 32 { (23, 4) } else { (52, 8) };
    let exponent = ((1u64 << (bits - 1)) - 1) & !((1u64 << mantissa) - 1);
    let quiet = 1u64 << (mantissa - 1);
    let is_nan = |x: u64| x & exponent == exponent && x & ((1 << mantissa) - 1) != 0;
    let sign = 1u64 << (bits - 1);
    let default = sign | exponent | quiet;
    for i in 0..lanes {
        // SAFETY: lane `i` is inside each operand (the contract).
        let read = |p: *const u8| unsafe {
            if width == 4 {
                u64::from(p.add(4 * i).cast::<u32>().read_unaligned())
            } else {
                p.add(8 * i).cast::<u64>().read_unaligned()
            }
        };
        if !is_nan(read(r)) {
            continue;
        }
        // SAFETY: operand `k` is 16 bytes after the one before it.
        let fixed = (0..count).map(|k| read(unsafe { operands.add(16 * k) })).find(|&x| is_nan(x));
        let fixed = fixed.map_or(default, |x| x | quiet);
        // SAFETY: as above, for the result.
        unsafe {
            if width == 4 {
                r.add(4 * i).cast::<u32>().write_unaligned(fixed as u32);
            } else {
                r.add(8 * i).cast::<u64>().write_unaligned(fixed);
            }
        }
    }
}

/// 128-bit integer ops done in Rust, with the interpreter's results for
/// a zero divisor and for signed overflow (0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Int128Op {
    Udiv = 0,
    Sdiv = 1,
    Urem = 2,
    Srem = 3,
}

/// `*r = a OP b` on 128-bit integers.
///
/// # Safety
///
/// `a`, `b` and `r` point at 16 bytes each (value slots).
pub unsafe extern "C" fn int128(op: u32, a: *const u8, b: *const u8, r: *mut u8) {
    // SAFETY: the contract gives 16 readable bytes at `a` and `b`.
    let (x, y) = unsafe { (a.cast::<u128>().read_unaligned(), b.cast::<u128>().read_unaligned()) };
    let (sx, sy) = (x as i128, y as i128);
    let out = match op {
        0 => x.checked_div(y).unwrap_or(0),
        1 => sx.checked_div(sy).map_or(0, |q| q as u128),
        2 => x.checked_rem(y).unwrap_or(0),
        3 => sx.checked_rem(sy).map_or(0, |q| q as u128),
        _ => panic!("unknown 128-bit op {op}"),
    };
    // SAFETY: the contract gives 16 writable bytes at `r`.
    unsafe { r.cast::<u128>().write_unaligned(out) };
}

/// Makes room in the journal (called when its cursor reaches the end).
///
/// # Safety
///
/// `ctx` is the running block's context.
pub unsafe extern "C" fn journal_grow(ctx: *mut JitContext) {
    // SAFETY: the context `Jit::run` passed to the trampoline, not
    // otherwise referenced while translated code runs.
    unsafe { (*ctx).journal_double() };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fix_nan` on one f64 lane of each operand (16 bytes apart, as the
    /// JIT passes them) and the result `r`.
    fn fix64(operands: &[u64], r: u64) -> u64 {
        let slots: Vec<u128> = operands.iter().map(|&x| u128::from(x)).collect();
        let mut out = r;
        // SAFETY: `slots` holds the operands 16 bytes apart, `out` is a
        // live u64.
        unsafe {
            fix_nan(nan_desc(64, 1, operands.len() as u32), slots.as_ptr().cast(), (&mut out as *mut u64).cast())
        };
        out
    }

    #[test]
    fn nan_rule_is_x86() {
        let snan_a = 0x7ff0_0000_0000_0001;
        let qnan_b = 0x7ff8_0000_0000_0002;
        // First operand NaN wins, quieted, even over a quiet second.
        assert_eq!(fix64(&[snan_a, qnan_b], 0x7ff8_0000_0000_0002), 0x7ff8_0000_0000_0001);
        assert_eq!(fix64(&[1.0f64.to_bits(), 0x7ff0_0000_0000_0005], 0x7ff8_0000_0000_0005), 0x7ff8_0000_0000_0005);
        // A NaN made from non-NaNs is the x86 default NaN.
        assert_eq!(
            fix64(&[f64::INFINITY.to_bits(), f64::INFINITY.to_bits()], 0x7ff8_0000_0000_0000),
            0xfff8_0000_0000_0000
        );
        // A non-NaN result is left alone.
        assert_eq!(fix64(&[1, 2], 3), 3);
        // Three operands (fma): the first NaN of the three, the addend's
        // only when the multiplicands are not NaNs; a unary op's one.
        let one = 1.0f64.to_bits();
        assert_eq!(fix64(&[one, qnan_b, snan_a], 0xfff8_0000_0000_0001), qnan_b);
        assert_eq!(fix64(&[one, one, snan_a], 0x7ff8_0000_0000_0001), 0x7ff8_0000_0000_0001);
        assert_eq!(fix64(&[qnan_b], 0x7ff8_0000_0000_0000), qnan_b);
    }
}
