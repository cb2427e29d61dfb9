//! The table of flags the Intel SDM leaves undefined, per instruction: the
//! oracle does not compare them. This is the one place the masks are
//! kept; docs/oracle.md mirrors it (a test checks every row is there).
//! Also the results CPU models disagree on: the dot products' NaN lanes.
//!
//! Flags are numbered as in `GuestState::flags`: cf pf af zf sf of df.

use iced_x86::{Instruction, Mnemonic, OpKind};

use crate::states::get_reg;
use aarchx_ir::GuestState;

pub const CF: u8 = 1 << 0;
pub const PF: u8 = 1 << 1;
pub const AF: u8 = 1 << 2;
pub const ZF: u8 = 1 << 3;
pub const SF: u8 = 1 << 4;
pub const OF: u8 = 1 << 5;
pub const STATUS: u8 = CF | PF | AF | ZF | SF | OF;

/// Names of the flag bits, in order.
pub const NAMES: [&str; 7] = ["cf", "pf", "af", "zf", "sf", "of", "df"];

/// How an instruction's undefined flags are found.
#[derive(Clone, Copy)]
pub enum Rule {
    /// These flags, always.
    Always(u8),
    /// shl/sal/shr/sar with masked count c: c = 0 leaves every flag
    /// unchanged (all compared); otherwise AF, OF unless c = 1, and for
    /// shl/sal/shr CF when c >= the operand width (8- and 16-bit forms).
    Shift,
    /// rol/ror with masked count c: c = 0 changes nothing; otherwise OF
    /// unless c = 1.
    Rotate,
    /// shld/shrd with masked count c: c = 0 changes nothing; otherwise AF,
    /// and OF unless c = 1 (counts above 16 on 16-bit forms, whose result
    /// is undefined, are steered away from).
    DoubleShift,
}

/// One row of the table: mnemonics, rule, and the text docs/oracle.md shows.
pub struct Row {
    pub mnemonics: &'static [Mnemonic],
    pub rule: Rule,
    pub doc: &'static str,
}

pub static TABLE: &[Row] = {
    use Mnemonic as M;
    &[
        Row { mnemonics: &[M::And, M::Or, M::Xor, M::Test], rule: Rule::Always(AF), doc: "af" },
        Row {
            mnemonics: &[M::Shl, M::Sal, M::Shr, M::Sar],
            rule: Rule::Shift,
            doc: "count 0: none; else af, of if count != 1, cf if count >= width (shl/sal/shr, 8/16-bit)",
        },
        Row {
            mnemonics: &[M::Rol, M::Ror, M::Rcl, M::Rcr],
            rule: Rule::Rotate,
            doc: "count 0: none; else of if count != 1",
        },
        Row {
            mnemonics: &[M::Shld, M::Shrd],
            rule: Rule::DoubleShift,
            doc: "count 0: none; else af, of if count != 1",
        },
        Row { mnemonics: &[M::Mul, M::Imul], rule: Rule::Always(SF | ZF | AF | PF), doc: "sf zf af pf" },
        Row { mnemonics: &[M::Div, M::Idiv], rule: Rule::Always(STATUS), doc: "cf pf af zf sf of" },
        Row { mnemonics: &[M::Bt, M::Bts, M::Btr, M::Btc], rule: Rule::Always(OF | SF | AF | PF), doc: "of sf af pf" },
        Row { mnemonics: &[M::Bsf, M::Bsr], rule: Rule::Always(CF | OF | SF | AF | PF), doc: "cf of sf af pf" },
        Row { mnemonics: &[M::Tzcnt, M::Lzcnt], rule: Rule::Always(OF | SF | AF | PF), doc: "of sf af pf" },
        Row { mnemonics: &[M::Andn, M::Blsi, M::Blsmsk, M::Blsr, M::Bzhi], rule: Rule::Always(AF | PF), doc: "af pf" },
        Row { mnemonics: &[M::Bextr], rule: Rule::Always(AF | SF | PF), doc: "af sf pf" },
    ]
};

/// The shift or rotate count as the CPU masks it.
fn masked_count(insn: &Instruction, n: u32, init: &GuestState, width: u32) -> u32 {
    let raw = if insn.op_count() <= n {
        1
    } else {
        match insn.op_kind(n) {
            OpKind::Register => get_reg(init, insn.op_register(n)) as u32,
            _ => insn.immediate(n) as u32,
        }
    };
    raw & if width == 64 { 63 } else { 31 }
}

fn width(insn: &Instruction) -> u32 {
    let bytes = match insn.op_kind(0) {
        OpKind::Register => insn.op_register(0).size(),
        _ => insn.memory_size().size(),
    };
    8 * bytes as u32
}

/// The flags left undefined by `insn` run from `init`.
pub fn undefined(insn: &Instruction, init: &GuestState) -> u8 {
    let m = insn.mnemonic();
    let Some(row) = TABLE.iter().find(|r| r.mnemonics.contains(&m)) else {
        return 0;
    };
    match row.rule {
        Rule::Always(mask) => mask,
        Rule::Shift => {
            let w = width(insn);
            let c = masked_count(insn, 1, init, w);
            if c == 0 {
                return 0;
            }
            let mut mask = AF;
            if c != 1 {
                mask |= OF;
            }
            if m != Mnemonic::Sar && c >= w {
                mask |= CF;
            }
            mask
        }
        Rule::Rotate => {
            let w = width(insn);
            match masked_count(insn, 1, init, w) {
                0 | 1 => 0,
                _ => OF,
            }
        }
        Rule::DoubleShift => {
            let w = width(insn);
            match masked_count(insn, 2, init, w) {
                0 => 0,
                1 => AF,
                _ => AF | OF,
            }
        }
    }
}

/// Whether `insn` run from `init` leaves its result undefined: a 16-bit
/// shld/shrd by more than 16 (single forms are steered away from it, see
/// `states::double_shift_count`).
pub fn undefined_result(insn: &Instruction, init: &GuestState) -> bool {
    matches!(insn.mnemonic(), Mnemonic::Shld | Mnemonic::Shrd)
        && width(insn) == 16
        && masked_count(insn, 2, init, 16) > 16
}

/// The destination register and lane width in bits of a dot product
/// (`dpps`, `dppd` and their VEX forms), whose NaN results differ between CPU models: the SDM
/// sums the products in one order for every lane, and the lifter follows
/// it, but some CPUs sum them in a different order per lane, so when two
/// NaNs meet in the sums the lanes get different ones (seen on one of
/// this project's machines: lane 0 of `dpps` is (p1+p0)+(p3+p2), lane 1
/// (p0+p1)+(p2+p3), lane 2 (p3+p2)+(p1+p0), lane 3 (p2+p3)+(p0+p1), with
/// x86's rule that the first of two NaNs wins). Where either side's lane
/// is a NaN, only whether both are is compared ([`mask_model_nans`]).
pub fn model_nans(insn: &Instruction) -> Option<(usize, u32)> {
    let lane = match insn.mnemonic() {
        Mnemonic::Dpps | Mnemonic::Vdpps => 32,
        Mnemonic::Dppd | Mnemonic::Vdppd => 64,
        _ => return None,
    };
    Some((insn.op0_register().number(), lane))
}

/// The lanes of `x`, `lane` bits each, that hold a NaN, as a mask of
/// whole lanes.
fn nan_lanes(x: u128, lane: u32) -> u128 {
    let (exp, frac) =
        if lane == 32 { (0xffu128 << 23, (1u128 << 23) - 1) } else { (0x7ffu128 << 52, (1u128 << 52) - 1) };
    let all = (1u128 << lane) - 1;
    (0..128 / lane)
        .filter(|k| {
            let v = (x >> (k * lane)) & all;
            v & exp == exp && v & frac != 0
        })
        .fold(0, |m, k| m | (all << (k * lane)))
}

/// The NaN lanes of the [`model_nans`] destination of `insn` in `state`,
/// as masks over the register's low and upper 128 bits (0 for other
/// instructions).
pub fn model_nan_lanes(insn: &Instruction, state: &GuestState) -> [u128; 2] {
    model_nans(insn).map_or([0; 2], |(reg, lane)| [nan_lanes(state.xmm[reg], lane), nan_lanes(state.ymm_hi[reg], lane)])
}

/// Sets every bit of each NaN lane of a [`model_nans`] destination in
/// both states, so that only which lanes are NaNs is compared.
pub fn mask_model_nans(insn: &Instruction, native: &mut GuestState, lifted: &mut GuestState) {
    let Some((reg, _)) = model_nans(insn) else { return };
    for state in [native, lifted] {
        let [low, high] = model_nan_lanes(insn, state);
        state.xmm[reg] |= low;
        state.ymm_hi[reg] |= high;
    }
}

/// The mask as flag names, e.g. "af of".
pub fn names(mask: u8) -> String {
    NAMES.iter().enumerate().filter(|(k, _)| mask & (1 << k) != 0).map(|(_, n)| *n).collect::<Vec<_>>().join(" ")
}

/// MXCSR_MASK (bytes 28..32 of an `xsave` area) is a property of the CPU
/// model: AMD's processors set bit 17 there (MM, their misaligned-access
/// exception mask), which aarchx's model, like Intel's, does not have.
/// Clears that bit in the native run's image of the area at `area` (the
/// offset in the buffer) so that the rest of the field is compared; only
/// when the requested-feature bitmap (`eax`) asks for SSE or AVX state,
/// the only case in which the field is written.
pub fn mask_model_mxcsr_mask(insn: &Instruction, eax: u64, area: Option<usize>, native_mem: &mut [u8]) {
    if !matches!(insn.mnemonic(), Mnemonic::Xsave | Mnemonic::Xsave64) || eax & 0b110 == 0 {
        return;
    }
    if let Some(byte) = area.and_then(|a| native_mem.get_mut(a + 30)) {
        *byte &= !0x02;
    }
}
