//! The `const-fold` pass: integer operations on constants are computed at
//! translation time, and operations with an identity operand (`x + 0`,
//! `x | 0`, `x ^ 0`, `x << 0`, `x & all-ones`, `x * 1`) are replaced by
//! their other operand.
//!
//! The lifter emits these where x86 semantics need them in general but a
//! given instruction does not: the `& 63` of a shift by an immediate, the
//! `+ 0` of `lea` without displacement. Folding is done in place (the
//! instruction becomes an `iconst`) or through an alias map applied to
//! every use, as in `cond-fusion`; what becomes unused is left for `dce`.
//! Only scalar integer types up to 64 bits are folded, with the IR's own
//! integer semantics (`aarchx_ir::eval`, which the interpreter runs), and
//! never a division (a zero divisor must trap where the guest divides).

use aarchx_ir::eval;
use aarchx_ir::{Format, InstData, Opcode, Region, Type, Value};
use aarchx_pass::{Pass, PassContext, PassError, PassInfo, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "const-fold",
    stage: Stage::Transform,
    doc: "Computes integer operations on constants and drops identity operations (x+0, x&-1, x<<0...).",
    options: &[],
    create: |_| Box::new(ConstFold),
};

pub struct ConstFold;

impl Pass for ConstFold {
    fn run(&mut self, _cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let order: Vec<Value> = region.blocks.iter().flat_map(|b| b.insts.iter().copied()).collect();
        let mut alias: Vec<Option<Value>> = vec![None; region.insts.len()];
        for v in order {
            resolve(&mut region.insts[v.index()], &alias);
            let d = region.insts[v.index()];
            match fold(region, &d) {
                Some(Folded::Const(c)) => region.insts[v.index()] = iconst(d.ty, c),
                Some(Folded::Alias(w)) => alias[v.index()] = Some(w),
                None => {}
            }
        }
        for d in &mut region.insts {
            resolve(d, &alias);
        }
        Ok(())
    }
}

/// Replaces operands that are aliases by what they alias, transitively.
fn resolve(d: &mut InstData, alias: &[Option<Value>]) {
    let k = d.op.format().value_args();
    for a in &mut d.args[..k] {
        while let Some(w) = alias[*a as usize] {
            *a = w.0;
        }
    }
}

enum Folded {
    Const(u64),
    Alias(Value),
}

fn iconst(ty: Type, c: u64) -> InstData {
    InstData { op: Opcode::Iconst, ty, aux: 0, args: [c as u32, (c >> 32) as u32, 0] }
}

/// The value of `v` when it is an integer constant.
fn constant(region: &Region, v: Value) -> Option<u64> {
    let d = region.inst(v);
    (d.op == Opcode::Iconst).then(|| d.imm64())
}

fn fold(region: &Region, d: &InstData) -> Option<Folded> {
    if d.op.format() != Format::Binary || !d.ty.is_int() || d.ty.is_vector() || d.ty.bits() > 64 {
        return None;
    }
    let bits = d.ty.bits();
    let mask = eval::mask(bits) as u64;
    let (x, y) = (d.arg(0), d.arg(1));
    let (cx, cy) = (constant(region, x), constant(region, y));
    use Opcode as O;
    if let (Some(a), Some(b)) = (cx, cy) {
        let foldable = matches!(
            d.op,
            O::Add
                | O::Sub
                | O::Mul
                | O::And
                | O::Or
                | O::Xor
                | O::AndNot
                | O::Shl
                | O::Lshr
                | O::Ashr
                | O::Rotl
                | O::Rotr
        );
        // Shift amounts are not masked to the width; the others are.
        let b = if matches!(d.op, O::Shl | O::Lshr | O::Ashr | O::Rotl | O::Rotr) { b } else { b & mask };
        return foldable
            .then(|| Folded::Const(eval::binary(d.op, bits, u128::from(a & mask), u128::from(b)) as u64 & mask));
    }
    let is = |c: Option<u64>, want: u64| c.is_some_and(|c| c & mask == want & mask);
    match d.op {
        O::Add | O::Or | O::Xor if is(cy, 0) => Some(Folded::Alias(x)),
        O::Add | O::Or | O::Xor if is(cx, 0) => Some(Folded::Alias(y)),
        O::Sub | O::Shl | O::Lshr | O::Ashr | O::Rotl | O::Rotr if is(cy, 0) => Some(Folded::Alias(x)),
        O::And if is(cy, u64::MAX) => Some(Folded::Alias(x)),
        O::And if is(cx, u64::MAX) => Some(Folded::Alias(y)),
        O::Mul if is(cy, 1) => Some(Folded::Alias(x)),
        O::Mul if is(cx, 1) => Some(Folded::Alias(y)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    #[test]
    fn constants_fold_and_identities_disappear() {
        let out = run_pass(
            &mut ConstFold,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i8 0x1d
  v2 = iconst.i8 0x3f
  v3 = and.i8 v1, v2
  v4 = lshr.i64 v0, v3
  v5 = iconst.i64 0x0
  v6 = add.i64 v4, v5
  v7 = iconst.i8 0xf0
  v8 = iconst.i8 0x20
  v9 = add.i8 v7, v8
  v10 = zext.i64 v9
  v11 = xor.i64 v6, v10
  set rax, v11
  exit jump 0x2000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = iconst.i8 0x1d
  v2 = iconst.i8 0x3f
  v3 = iconst.i8 0x1d
  v4 = lshr.i64 v0, v3
  v5 = iconst.i64 0x0
  v6 = add.i64 v4, v5
  v7 = iconst.i8 0xf0
  v8 = iconst.i8 0x20
  v9 = iconst.i8 0x10
  v10 = zext.i64 v9
  v11 = xor.i64 v4, v10
  set rax, v11
  exit jump 0x2000
"
        );
    }
}
