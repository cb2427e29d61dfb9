//! FMA3, x86-64-v3's fused multiply-add: vfmadd, vfmsub, vfnmadd,
//! vfnmsub (packed 128 and 256 bits, scalar) and vfmaddsub, vfmsubadd
//! (packed), each in its 132, 213 and 231 operand orders, as one `fma` op
//! per 128-bit half whose aux carries the negations. The destination is
//! also a source; a scalar form keeps the destination's other lanes.

use aarchx_ir::{Opcode, Type, Value};
use iced_x86::Mnemonic;

use super::super::lift::Outcome;
use super::super::operand::L;

/// The `fma` aux of the negations: the product, the even lanes' addend,
/// the odd lanes' addend.
const NEG_PRODUCT: u16 = 1;
const NEG_EVEN: u16 = 2;
const NEG_ODD: u16 = 4;

/// What an FMA3 mnemonic computes: its negations (the `fma` aux), the
/// operands (by instruction operand index) of the multiplicands and of the
/// addend, and the element type with whether the form is scalar.
#[derive(Clone, Copy)]
pub(super) struct Form {
    negate: u16,
    roles: [u32; 3],
    lane: Type,
    scalar: bool,
}

/// The form of `m`, if it is an FMA3 instruction (from a table of every
/// mnemonic, made once).
pub(super) fn form(m: Mnemonic) -> Option<Form> {
    use std::sync::OnceLock;
    static TABLE: OnceLock<rustc_hash::FxHashMap<Mnemonic, Form>> = OnceLock::new();
    let table = TABLE.get_or_init(|| Mnemonic::values().filter_map(|m| Some((m, parse(m)?))).collect());
    table.get(&m).copied()
}

/// The form an FMA3 mnemonic's name gives: `vf`, the operation, the
/// operand order (132: op0 * op2 + op1; 213: op1 * op0 + op2; 231: op1 *
/// op2 + op0) and `ps`, `pd`, `ss` or `sd`.
fn parse(m: Mnemonic) -> Option<Form> {
    let name = format!("{m:?}").to_ascii_lowercase();
    let rest = name.strip_prefix("vf")?;
    let (negate, rest) = [
        ("maddsub", NEG_EVEN),
        ("msubadd", NEG_ODD),
        ("nmadd", NEG_PRODUCT),
        ("nmsub", NEG_PRODUCT | NEG_EVEN | NEG_ODD),
        ("madd", 0),
        ("msub", NEG_EVEN | NEG_ODD),
    ]
    .iter()
    .find_map(|(op, negate)| rest.strip_prefix(op).map(|r| (*negate, r)))?;
    let (roles, suffix) = match rest.split_at_checked(3)? {
        ("132", s) => ([0, 2, 1], s),
        ("213", s) => ([1, 0, 2], s),
        ("231", s) => ([1, 2, 0], s),
        _ => return None,
    };
    let (lane, scalar) = match suffix {
        "ps" => (Type::F32, false),
        "pd" => (Type::F64, false),
        "ss" => (Type::F32, true),
        "sd" => (Type::F64, true),
        _ => return None,
    };
    // The alternating forms have no scalar variant.
    let alternating = negate & (NEG_EVEN | NEG_ODD) == NEG_EVEN || negate & (NEG_EVEN | NEG_ODD) == NEG_ODD;
    (!(alternating && scalar)).then_some(Form { negate, roles, lane, scalar })
}

impl L<'_, '_> {
    /// An FMA3 instruction: `dst = ±(x * y) ± z` in each lane (or lane 0,
    /// the others kept), one rounding.
    pub(super) fn fma(&mut self, f: Form) -> Outcome {
        self.vlanes_with(|l| {
            let v: [Value; 3] = f.roles.map(|k| l.vget(k));
            let r = if f.scalar {
                let x = v.map(|x| l.xlane(x, f.lane, 0));
                let r = l.b.ternary_imm(Opcode::Fma, f.lane, x[0], x[1], x[2], f.negate);
                let dst = l.vget(0);
                l.xset_lane(dst, r, 0)
            } else {
                let ty = super::shape(f.lane);
                l.b.ternary_imm(Opcode::Fma, ty, v[0], v[1], v[2], f.negate)
            };
            l.xset(0, r);
            Outcome::Next
        })
    }
}
