//! The `cond-fusion` pass: conditions computed from the flags of a compare
//! become one compare of the compared values.
//!
//! The lifter evaluates `jl` after `cmp a, b` as `SF xor OF`, each flag
//! built from `r = a - b` by its x86 definition. Once `state-forward` has
//! put those definitions in place of the flag reads, this pass recognises
//! them and rewrites the condition in place:
//!
//! | condition | flags of `r = sub a, b`      | becomes       |
//! |-----------|------------------------------|---------------|
//! | e         | `icmp eq r, 0`               | `icmp eq a, b` |
//! | l         | `xor SF, OF`                 | `icmp slt a, b` |
//! | le        | `or ZF, (xor SF, OF)`        | `icmp sle a, b` |
//! | be        | `or CF, ZF`                  | `icmp ule a, b` |
//!
//! and after a logical op (`CF = OF = 0`, `r` its result): `xor SF, 0` is
//! `SF`, `or ZF, SF` is `icmp sle r, 0`, `or 0, ZF` is `ZF`. A `not` of a
//! compare becomes the inverse compare (`ge`, `g`, `a`, `ae`, `ne`).
//!
//! After `comisd`/`ucomisd a, b` the flags are float compares of `a` and
//! `b` (ZF = eq or uno, CF = lt or uno, PF = uno): an `or` of such
//! compares (through other `or`s) whose outcomes one `fcmp` has, in
//! either operand order, becomes that `fcmp` (`jbe`: CF or ZF is
//! `fcmp nlt b, a`), and so does a `not` of one (`ja`: `fcmp lt b, a`).
//! The new compare raises the exceptions of those it replaces: only
//! compares that signal alike are combined (comisd's signal invalid on a
//! quiet NaN, ucomisd's do not), and the condition is chosen among those
//! that signal so (`nlt` after comisd, `nlt_q` after ucomisd).
//!
//! The flag computations are left in place for whoever still reads the
//! flags; `dead-flags` and `dce` remove them when nothing does. Rewriting
//! an instruction in place keeps every other use of its value valid, and
//! the operands it gets (`a`, `b`, `r`) are defined before it.

use aarchx_ir::{FloatCond, InstData, IntCond, Opcode, Region, Type, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "cond-fusion",
    stage: Stage::Transform,
    doc: "Rewrites conditions built from compare flags (SF xor OF, CF or ZF, ...) as one compare of the operands.",
    options: &[],
    create: |_| Box::new(CondFusion),
};

pub struct CondFusion;

impl Pass for CondFusion {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let order: Vec<Value> = region.blocks.iter().flat_map(|b| b.insts.iter().copied()).collect();
        // Values that equal an earlier value (`xor x, 0` is `x`).
        let mut alias: Vec<Option<Value>> = vec![None; region.insts.len()];
        for v in order {
            region.insts[v.index()].resolve_aliases(&alias);
            let d = region.insts[v.index()];
            match fuse(region, &d) {
                Some(Fused::Inst(new)) => region.insts[v.index()] = new,
                Some(Fused::Alias(w)) => alias[v.index()] = Some(w),
                None => {}
            }
        }
        // Block order need not be dominance order: resolve every use again.
        region.resolve_aliases(&alias);
        Ok(())
    }
}

/// What a condition simplifies to.
enum Fused {
    /// A new definition of the same value.
    Inst(InstData),
    /// An earlier value it equals.
    Alias(Value),
}

fn icmp(cond: IntCond, ty: Type, a: Value, b: Value) -> InstData {
    InstData { op: Opcode::Icmp, ty, aux: cond as u16, args: [a.0, b.0, 0] }
}

/// `(cond, ty, a, b)` of `icmp.ty cond a, b`, with `eq r, 0` of
/// `r = sub a, b` seen as `eq a, b`.
fn compare(region: &Region, v: Value) -> Option<(IntCond, Type, Value, Value)> {
    compare_inst(region, region.inst(v))
}

fn compare_inst(region: &Region, d: &InstData) -> Option<(IntCond, Type, Value, Value)> {
    if d.op != Opcode::Icmp {
        return None;
    }
    let cond = IntCond::from_u16(d.aux)?;
    let (a, b) = (d.arg(0), d.arg(1));
    if cond == IntCond::Eq && is_const(region, b, 0) {
        if let Some((x, y)) = sub_operands(region, a, d.ty) {
            return Some((cond, d.ty, x, y));
        }
    }
    Some((cond, d.ty, a, b))
}

fn is_const(region: &Region, v: Value, value: u64) -> bool {
    let d = region.inst(v);
    d.plain_const() == Some(value)
}

/// `(a, b)` when `r = sub.ty a, b`.
fn sub_operands(region: &Region, r: Value, ty: Type) -> Option<(Value, Value)> {
    let d = region.inst(r);
    (d.op == Opcode::Sub && d.ty == ty).then(|| (d.arg(0), d.arg(1)))
}

/// `(ty, r)` when `v` is `OF` of `r = sub.ty a, b`:
/// `trunc.i1 (lshr (and (xor a, b), (xor a, r)), bits - 1)`, as the
/// lifter builds it.
fn sub_overflow(region: &Region, v: Value) -> Option<(Type, Value, Value)> {
    let t = region.inst(v);
    if t.op != Opcode::Trunc || t.ty != Type::I1 {
        return None;
    }
    let sh = region.inst(t.arg(0));
    let ty = sh.ty;
    if sh.op != Opcode::Lshr || !is_const(region, sh.arg(1), u64::from(ty.bits() - 1)) {
        return None;
    }
    let both = region.inst(sh.arg(0));
    if both.op != Opcode::And || both.ty != ty {
        return None;
    }
    let (x, y) = (region.inst(both.arg(0)), region.inst(both.arg(1)));
    if x.op != Opcode::Xor || y.op != Opcode::Xor || x.ty != ty || y.ty != ty || x.arg(0) != y.arg(0) {
        return None;
    }
    let (a, b, r) = (x.arg(0), x.arg(1), y.arg(1));
    (sub_operands(region, r, ty) == Some((a, b))).then_some((ty, a, b))
}

/// The outcomes of comparing two floats `x`, `y`, one bit each.
const LT: u8 = 1;
const EQ: u8 = 2;
const GT: u8 = 4;
const UN: u8 = 8;

/// The outcomes for which `fcmp cond x, y` is true.
fn outcomes(cond: FloatCond) -> u8 {
    use FloatCond as C;
    match cond {
        C::Eq | C::EqS => EQ,
        C::Lt | C::LtQ => LT,
        C::Le | C::LeQ => LT | EQ,
        C::Uno | C::UnoS => UN,
        C::Une => LT | GT | UN,
        C::Nlt | C::NltQ => EQ | GT | UN,
        C::Nle | C::NleQ => GT | UN,
        C::Ord => LT | EQ | GT,
    }
}

/// The same outcomes seen from `fcmp y, x`.
fn swapped(set: u8) -> u8 {
    (set & (EQ | UN)) | ((set & LT) << 2) | ((set & GT) >> 2)
}

/// A set of outcomes of comparing two scalar floats `x` and `y` (of type
/// `ty`), and whether the compares it comes from signal invalid on a
/// quiet NaN (their exceptions: see `FloatCond`).
struct Outcomes {
    set: u8,
    signals: bool,
    ty: Type,
    x: Value,
    y: Value,
}

/// The outcomes `d` is true for: an `fcmp`, or an `or` of such (of the
/// same two values, in either order, and the same exceptions), at most
/// `depth` deep.
fn float_outcomes(region: &Region, d: &InstData, depth: u32) -> Option<Outcomes> {
    match d.op {
        Opcode::Fcmp if d.ty.is_float() => {
            let cond = FloatCond::from_u16(d.aux)?;
            Some(Outcomes { set: outcomes(cond), signals: cond.signals_on_qnan(), ty: d.ty, x: d.arg(0), y: d.arg(1) })
        }
        Opcode::Or if d.ty == Type::I1 && depth > 0 => {
            let o1 = float_outcomes(region, region.inst(d.arg(0)), depth - 1)?;
            let o2 = float_outcomes(region, region.inst(d.arg(1)), depth - 1)?;
            let s2 = match (o2.x, o2.y) {
                _ if o2.ty != o1.ty || o2.signals != o1.signals => return None,
                (a, b) if (a, b) == (o1.x, o1.y) => o2.set,
                (a, b) if (b, a) == (o1.x, o1.y) => swapped(o2.set),
                _ => return None,
            };
            Some(Outcomes { set: o1.set | s2, ..o1 })
        }
        _ => None,
    }
}

/// One `fcmp` true exactly for the outcomes `o`, with their exceptions.
fn fcmp_for(o: Outcomes) -> Option<InstData> {
    let Outcomes { set, signals, ty, x, y } = o;
    let find = |s: u8| FloatCond::ALL.iter().copied().find(|c| outcomes(*c) == s && c.signals_on_qnan() == signals);
    let (cond, a, b) = match find(set) {
        Some(c) => (c, x, y),
        None => (find(swapped(set))?, y, x),
    };
    Some(InstData { op: Opcode::Fcmp, ty, aux: cond as u16, args: [a.0, b.0, 0] })
}

fn fuse(region: &Region, d: &InstData) -> Option<Fused> {
    // Only a rewrite that is not an fcmp already: the or of compares
    // becomes one, the not its complement.
    let float = match d.op {
        Opcode::Or => float_outcomes(region, d, 3),
        Opcode::Not if d.ty == Type::I1 => float_outcomes(region, region.inst(d.arg(0)), 3)
            .map(|o| Outcomes { set: !o.set & (LT | EQ | GT | UN), ..o }),
        _ => None,
    };
    if let Some(new) = float.and_then(fcmp_for) {
        return Some(Fused::Inst(new));
    }
    if d.op == Opcode::Icmp {
        // ZF of a subtraction: a == b.
        let (c, ty, a, b) = compare_inst(region, d)?;
        return (c == IntCond::Eq && (a, b) != (d.arg(0), d.arg(1))).then(|| Fused::Inst(icmp(c, ty, a, b)));
    }
    if d.ty != Type::I1 {
        return None;
    }
    let cmp = |v: Value| compare(region, v);
    let zero = |v: Value| is_const(region, v, 0);
    let (x, y) = (d.arg(0), d.arg(1));
    match d.op {
        Opcode::Not => {
            let (c, ty, a, b) = cmp(x)?;
            Some(Fused::Inst(icmp(inverse(c), ty, a, b)))
        }
        Opcode::Xor | Opcode::Or if zero(y) => Some(Fused::Alias(x)),
        Opcode::Xor | Opcode::Or if zero(x) => Some(Fused::Alias(y)),
        // SF xor OF of a subtraction: a < b.
        Opcode::Xor => [(x, y), (y, x)].into_iter().find_map(|(sf, of)| {
            let (c, _, r, z) = cmp(sf)?;
            let (ty, a, b) = sub_overflow(region, of)?;
            (c == IntCond::Slt && zero(z) && sub_operands(region, r, ty) == Some((a, b)))
                .then(|| Fused::Inst(icmp(IntCond::Slt, ty, a, b)))
        }),
        // ZF or (a < b): a <= b; CF or ZF: a <=u b.
        Opcode::Or => [(x, y), (y, x)].into_iter().find_map(|(eq, other)| {
            let (c1, ty, a, b) = cmp(eq)?;
            let (c2, ty2, a2, b2) = cmp(other)?;
            let fused = match c2 {
                IntCond::Slt => IntCond::Sle,
                IntCond::Ult => IntCond::Ule,
                _ => return None,
            };
            (c1 == IntCond::Eq && ty == ty2 && (a, b) == (a2, b2)).then(|| Fused::Inst(icmp(fused, ty, a, b)))
        }),
        _ => None,
    }
}

fn inverse(c: IntCond) -> IntCond {
    use IntCond as C;
    match c {
        C::Eq => C::Ne,
        C::Ne => C::Eq,
        C::Ult => C::Uge,
        C::Uge => C::Ult,
        C::Ule => C::Ugt,
        C::Ugt => C::Ule,
        C::Slt => C::Sge,
        C::Sge => C::Slt,
        C::Sle => C::Sgt,
        C::Sgt => C::Sle,
    }
}
