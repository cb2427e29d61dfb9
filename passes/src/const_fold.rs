//! The `const-fold` pass: integer operations on constants are computed at
//! translation time, and algebraic identities applied: `x + 0`, `x | 0`,
//! `x ^ 0`, `x << 0`, `x & -1`, `x * 1`, `x & x` are `x`; `x ^ x`, `x - x`,
//! `x & 0` are 0; compares of equal or constant operands, and `x <u 0`
//! and `x >=u 0`, and `select` on
//! a constant are decided; `trunc(zext x)` is `x` (or a narrower `zext x`),
//! `zext(zext x)` is one `zext`, `zext(trunc y)` is `y`
//! when the dropped bits of `y` are known zero; `concat(0, lo)` is
//! `zext lo`; a guest address plus or minus a constant is a guest
//! address, and the distance between two a constant (no other operation
//! folds one: its value depends on where the code is loaded); and a 128-bit `udiv`/`urem` of zero-extended 64-bit operands
//! (`xor edx, edx; div rbx`) becomes the 64-bit one. Lanes: a lane
//! extracted from an `insert_lane` of the same shape is the inserted
//! scalar (that lane) or the lane of the vector inserted into (another),
//! and an `insert_lane` into a vector whose same lane was just inserted
//! replaces that insert (scalar SSE code's chains: `mulsd` then `addsd` on
//! one register keep its upper half once, not per op). A `brif` on a
//! constant becomes a `jump`; blocks no longer reached keep only a
//! terminator that uses no value, and a block then reached by one `jump`
//! alone joins the block it comes from.
//!
//! The lifter emits these where x86 semantics need them in general but a
//! given instruction does not: the `& 63` of a shift by an immediate, the
//! `+ 0` of `lea` without displacement. Folding is done in place (the
//! instruction becomes an `iconst`) or through an alias map applied to
//! every use, as in `cond-fusion`; what becomes unused is left for `dce`.
//! Constants are scalar integers up to 64 bits, computed with the IR's own
//! integer semantics (`aarchx_ir::eval`, which the interpreter runs), and
//! never a division (a zero divisor must trap where the guest divides).

use aarchx_ir::eval;
use aarchx_ir::region::CONST_GUEST_ADDR;
use alloc::vec::Vec;

use aarchx_ir::{Format, InstData, Opcode, Region, TrapKind, Type, Value};
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
        let mut alias: Vec<Option<Value>> = vec![None; region.insts.len()];
        for b in 0..region.blocks.len() {
            let insts = core::mem::take(&mut region.blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for v in insts {
                region.insts[v.index()].resolve_aliases(&alias);
                let d = region.insts[v.index()];
                match fold(region, &d) {
                    Some(Folded::Const(ty, c)) => region.insts[v.index()] = iconst(ty, c),
                    Some(Folded::Alias(w)) => alias[v.index()] = Some(w),
                    Some(Folded::Inst(new)) => region.insts[v.index()] = new,
                    Some(Folded::Widened { narrow, wide }) => {
                        let n = region.add_inst(narrow);
                        out.push(n);
                        alias.push(None);
                        region.insts[v.index()] = InstData { args: [n.0, 0, 0], ..wide };
                    }
                    None => {}
                }
                out.push(v);
            }
            region.blocks[b].insts = out;
        }
        region.resolve_aliases(&alias);
        if fold_branches(region) {
            let reached = strip_unreachable(region);
            merge_straight_lines(region, reached);
        }
        Ok(())
    }
}

/// Turns each `brif` on a constant into a `jump`; returns whether any was.
fn fold_branches(region: &mut Region) -> bool {
    let mut any = false;
    for b in 0..region.blocks.len() {
        let Some(&last) = region.blocks[b].insts.last() else { continue };
        let d = *region.inst(last);
        if d.op != Opcode::Brif {
            continue;
        }
        if let Some(c) = constant(region, d.arg(0)) {
            let target = if c & 1 != 0 { d.args[1] } else { d.args[2] };
            region.insts[last.index()] = InstData { op: Opcode::Jump, ty: d.ty, aux: 0, args: [target, 0, 0] };
            any = true;
        }
    }
    any
}

/// Empties blocks no path from the entry reaches: each keeps only its
/// terminator when that uses no value, else becomes a `trap ill` (never
/// executed), so no block uses a value it is not dominated by.
fn strip_unreachable(region: &mut Region) -> Vec<bool> {
    let n = region.blocks.len();
    let mut reached = vec![false; n];
    let mut work = vec![0usize];
    while let Some(b) = work.pop() {
        if core::mem::replace(&mut reached[b], true) {
            continue;
        }
        if let Some(last) = region.blocks[b].insts.last() {
            work.extend(region.inst(*last).successors().iter().map(|s| *s as usize));
        }
    }
    for b in (0..n).filter(|b| !reached[*b]) {
        let Some(&last) = region.blocks[b].insts.last() else { continue };
        let term = *region.inst(last);
        let keep =
            if term.values().next().is_none() && term.successors().is_empty() { last } else { never_run(region) };
        region.blocks[b].insts = alloc::vec![keep];
    }
    reached
}

/// A `trap ill` for a block no path reaches (never executed).
fn never_run(region: &mut Region) -> Value {
    region.add_inst(InstData {
        op: Opcode::Trap,
        ty: Type::I64,
        aux: TrapKind::Ill as u16,
        args: [region.entry as u32, (region.entry >> 32) as u32, 0],
    })
}

/// Appends to a block ending in `jump B` the instructions of B when the
/// jump is B's only way in (a branch folded away left it so): one block,
/// whose values the backend keeps in registers across the old boundary.
/// B is then unreached and keeps only a `trap ill`.
fn merge_straight_lines(region: &mut Region, mut reached: Vec<bool>) {
    let n = region.blocks.len();
    let mut preds = vec![0u32; n];
    for b in (0..n).filter(|&b| reached[b]) {
        if let Some(&last) = region.blocks[b].insts.last() {
            for &s in region.inst(last).successors() {
                preds[s as usize] += 1;
            }
        }
    }
    for a in 0..n {
        while reached[a] {
            let Some(&last) = region.blocks[a].insts.last() else { break };
            let t = *region.inst(last);
            let target = t.successors().first().map(|&s| s as usize);
            let Some(b) = target.filter(|&b| t.op == Opcode::Jump && b != 0 && b != a && preds[b] == 1) else { break };
            region.blocks[a].insts.pop();
            let moved = core::mem::take(&mut region.blocks[b].insts);
            region.blocks[a].insts.extend(moved);
            region.blocks[b].insts = alloc::vec![never_run(region)];
            reached[b] = false;
        }
    }
}

enum Folded {
    /// The value is this constant.
    Const(Type, u64),
    /// The value is an earlier value.
    Alias(Value),
    /// The value is computed by this instruction instead.
    Inst(InstData),
    /// The value is `wide` (a `zext`) applied to the new instruction
    /// `narrow`, inserted just before it.
    Widened { narrow: InstData, wide: InstData },
}

fn iconst(ty: Type, c: u64) -> InstData {
    InstData { op: Opcode::Iconst, ty, aux: 0, args: [c as u32, (c >> 32) as u32, 0] }
}

/// The value of `v` when it is a plain integer constant. A guest address
/// is not one: its value depends on where the code is loaded, so it is
/// only moved by an offset ([`fold_address`]).
fn constant(region: &Region, v: Value) -> Option<u64> {
    region.inst(v).plain_const()
}

/// Scalar integers of at most 64 bits: what is folded.
fn scalar(ty: Type) -> bool {
    ty.is_int() && !ty.is_vector() && ty.bits() <= 64
}

fn fold(region: &Region, d: &InstData) -> Option<Folded> {
    match d.op.format() {
        Format::Binary => fold_binary(region, d),
        Format::Unary => fold_unary(region, d),
        Format::IntCompare => fold_compare(region, d),
        Format::UnaryImm | Format::BinaryImm => fold_lanes(region, d),
        Format::Ternary if d.op == Opcode::Select => {
            let c = constant(region, d.arg(0))?;
            Some(Folded::Alias(if c & 1 != 0 { d.arg(1) } else { d.arg(2) }))
        }
        _ => None,
    }
}

/// `extract_lane(insert_lane(x, s, i), j)` is `s` for `j == i`, else
/// `extract_lane(x, j)`; `insert_lane(insert_lane(x, s, i), t, i)` is
/// `insert_lane(x, t, i)`: lanes of one shape only.
fn fold_lanes(region: &Region, d: &InstData) -> Option<Folded> {
    if !matches!(d.op, Opcode::ExtractLane | Opcode::InsertLane) {
        return None;
    }
    let inner = region.inst(d.arg(0));
    if inner.op != Opcode::InsertLane || inner.ty != d.ty {
        return None;
    }
    match d.op {
        Opcode::ExtractLane if inner.aux == d.aux => Some(Folded::Alias(inner.arg(1))),
        Opcode::ExtractLane => Some(Folded::Inst(InstData { args: [inner.arg(0).0, 0, 0], ..*d })),
        _ if inner.aux == d.aux => Some(Folded::Inst(InstData { args: [inner.arg(0).0, d.arg(1).0, 0], ..*d })),
        _ => None,
    }
}

fn fold_compare(region: &Region, d: &InstData) -> Option<Folded> {
    let (x, y) = (d.arg(0), d.arg(1));
    if !scalar(d.ty) && !(region.same_value(x, y) && d.ty.is_int() && !d.ty.is_vector()) {
        return None;
    }
    let cond = aarchx_ir::IntCond::from_u16(d.aux)?;
    let (x, y) = (d.arg(0), d.arg(1));
    // Nothing is unsigned-below 0 (sbb's carry out: `x < y + cf`).
    if scalar(d.ty) && constant(region, y) == Some(0) {
        match cond {
            aarchx_ir::IntCond::Ult => return Some(Folded::Const(Type::I1, 0)),
            aarchx_ir::IntCond::Uge => return Some(Folded::Const(Type::I1, 1)),
            _ => {}
        }
    }
    let value = if region.same_value(x, y) {
        eval::compare(cond, d.ty.bits(), 0, 0)
    } else {
        let (a, b) = (constant(region, x)?, constant(region, y)?);
        eval::compare(cond, d.ty.bits(), u128::from(a), u128::from(b))
    };
    Some(Folded::Const(Type::I1, u64::from(value)))
}

fn fold_unary(region: &Region, d: &InstData) -> Option<Folded> {
    if !matches!(d.op, Opcode::Zext | Opcode::Sext | Opcode::Trunc) {
        return None;
    }
    let x = d.arg(0);
    let from = region.value_type(x);
    let inner = region.inst(x);
    if let (Some(c), true) = (constant(region, x), scalar(d.ty) && scalar(from)) {
        let v = if d.op == Opcode::Sext { eval::sext(u128::from(c), from.bits()) as u128 } else { u128::from(c) };
        return Some(Folded::Const(d.ty, (v & eval::mask(d.ty.bits())) as u64));
    }
    // trunc(zext x) and trunc(sext x) back to x's own type, or to a type
    // between it and the extension's (a narrower zext, or sext, of x).
    if d.op == Opcode::Trunc && matches!(inner.op, Opcode::Zext | Opcode::Sext) {
        let orig = inner.arg(0);
        let orig_bits = region.value_type(orig).bits();
        if region.value_type(orig) == d.ty {
            return Some(Folded::Alias(orig));
        }
        if scalar(d.ty) && orig_bits < d.ty.bits() {
            return Some(Folded::Inst(InstData { op: inner.op, ty: d.ty, aux: 0, args: [orig.0, 0, 0] }));
        }
    }
    // zext(zext x): one zext of x.
    if d.op == Opcode::Zext && inner.op == Opcode::Zext && scalar(d.ty) {
        return Some(Folded::Inst(InstData { op: Opcode::Zext, ty: d.ty, aux: 0, args: [inner.arg(0).0, 0, 0] }));
    }
    // zext(trunc y) where y's dropped bits are known zero: y.
    if d.op == Opcode::Zext && inner.op == Opcode::Trunc && region.value_type(inner.arg(0)) == d.ty {
        let y = inner.arg(0);
        if known_zero_above(region, y, from.bits()) {
            return Some(Folded::Alias(y));
        }
    }
    None
}

/// Whether every bit of `v` at or above `bits` is known to be zero.
fn known_zero_above(region: &Region, v: Value, bits: u32) -> bool {
    let d = region.inst(v);
    match d.op {
        Opcode::Zext => region.value_type(d.arg(0)).bits() <= bits,
        Opcode::Iconst => d.plain_const().is_some_and(|c| c >> bits.min(63) == 0) || bits >= 64,
        _ => false,
    }
}

fn fold_binary(region: &Region, d: &InstData) -> Option<Folded> {
    let (x, y) = (d.arg(0), d.arg(1));
    use Opcode as O;
    // A 128-bit unsigned division of zero-extended operands is the
    // narrower division, zero-extended (the quotient cannot overflow).
    if matches!(d.op, O::Udiv | O::Urem) && d.ty == Type::I128 {
        let (a, b) = (region.inst(x), region.inst(y));
        if a.op == O::Zext && b.op == O::Zext {
            let ty = region.value_type(a.arg(0));
            if ty == region.value_type(b.arg(0)) && scalar(ty) {
                let narrow = InstData { op: d.op, ty, aux: 0, args: [a.arg(0).0, b.arg(0).0, 0] };
                let wide = InstData { op: O::Zext, ty: Type::I128, aux: 0, args: [0; 3] };
                return Some(Folded::Widened { narrow, wide });
            }
        }
        return None;
    }
    // concat(0, lo): lo zero-extended.
    if d.op == O::Concat && constant(region, x) == Some(0) && region.value_type(y).bits() * 2 == d.ty.bits() {
        return Some(Folded::Inst(InstData { op: O::Zext, ty: d.ty, aux: 0, args: [y.0, 0, 0] }));
    }
    if !scalar(d.ty) {
        return None;
    }
    if let Some(folded) = fold_address(region, d) {
        return Some(folded);
    }
    let bits = d.ty.bits();
    let mask = eval::mask(bits) as u64;
    let (cx, cy) = (constant(region, x), constant(region, y));
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
        if !foldable {
            return None;
        }
        let r = eval::binary(d.op, bits, u128::from(a & mask), u128::from(b))? as u64 & mask;
        return Some(Folded::Const(d.ty, r));
    }
    let is = |c: Option<u64>, want: u64| c.is_some_and(|c| c & mask == want & mask);
    match d.op {
        O::Xor | O::Sub if region.same_value(x, y) => Some(Folded::Const(d.ty, 0)),
        O::And | O::Or if region.same_value(x, y) => Some(Folded::Alias(x)),
        O::Add | O::Or | O::Xor if is(cy, 0) => Some(Folded::Alias(x)),
        O::Add | O::Or | O::Xor if is(cx, 0) => Some(Folded::Alias(y)),
        O::Sub | O::Shl | O::Lshr | O::Ashr | O::Rotl | O::Rotr if is(cy, 0) => Some(Folded::Alias(x)),
        O::And if is(cy, u64::MAX) => Some(Folded::Alias(x)),
        O::And if is(cx, u64::MAX) => Some(Folded::Alias(y)),
        O::And if is(cy, 0) || is(cx, 0) => Some(Folded::Const(d.ty, 0)),
        O::Mul if is(cy, 1) => Some(Folded::Alias(x)),
        O::Mul if is(cx, 1) => Some(Folded::Alias(y)),
        _ => None,
    }
}

/// A guest address moved by a constant offset is a guest address; the
/// distance between two is a plain constant (both move together).
fn fold_address(region: &Region, d: &InstData) -> Option<Folded> {
    let (x, y) = (region.inst(d.arg(0)), region.inst(d.arg(1)));
    let address = |v: u64| InstData {
        op: Opcode::Iconst,
        ty: Type::I64,
        aux: CONST_GUEST_ADDR,
        args: [v as u32, (v >> 32) as u32, 0],
    };
    if d.ty != Type::I64 || !(x.is_guest_addr() || y.is_guest_addr()) {
        return None;
    }
    match (d.op, x.is_guest_addr(), y.is_guest_addr()) {
        (Opcode::Add, true, false) => Some(Folded::Inst(address(x.imm64().wrapping_add(y.plain_const()?)))),
        (Opcode::Add, false, true) => Some(Folded::Inst(address(y.imm64().wrapping_add(x.plain_const()?)))),
        (Opcode::Sub, true, false) => Some(Folded::Inst(address(x.imm64().wrapping_sub(y.plain_const()?)))),
        (Opcode::Sub, true, true) => Some(Folded::Const(Type::I64, x.imm64().wrapping_sub(y.imm64()))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass;

    #[test]
    fn a_decided_branch_leaves_one_straight_line() {
        let out = run_pass(
            &mut ConstFold,
            "\
region 0x1000
block0:
  v0 = iconst.i1 0x1
  brif v0, block1, block2
block1:
  v1 = get rax
  set rbx, v1
  jump block3
block2:
  v2 = get rbx
  set rax, v2
  jump block3
block3:
  v3 = get rcx
  set rdx, v3
  exit jump 0x2000
",
        );
        // block1 and block3 join block0 (block3's other way in, block2,
        // is no longer reached); what is left of them is never run.
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = iconst.i1 0x1
  v1 = get rax
  set rbx, v1
  v2 = get rcx
  set rdx, v2
  exit jump 0x2000
block1:
  trap ill 0x1000
block2:
  trap ill 0x1000
block3:
  trap ill 0x1000
"
        );
    }

    #[test]
    fn guest_addresses_fold_only_by_an_offset() {
        let out = run_pass(
            &mut ConstFold,
            "\
region 0x1000
block0:
  v0 = iconst.i64 addr 0x2000
  v1 = iconst.i64 0x10
  v2 = add.i64 v0, v1
  v3 = iconst.i64 addr 0x3000
  v4 = sub.i64 v3, v0
  v5 = and.i64 v0, v1
  v6 = icmp.i64 eq v0, v1
  set rax, v2
  set rbx, v4
  set rcx, v5
  set zf, v6
  exit jump 0x2000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = iconst.i64 addr 0x2000
  v1 = iconst.i64 0x10
  v2 = iconst.i64 addr 0x2010
  v3 = iconst.i64 addr 0x3000
  v4 = iconst.i64 0x1000
  v5 = and.i64 v0, v1
  v6 = icmp.i64 eq v0, v1
  set rax, v2
  set rbx, v4
  set rcx, v5
  set zf, v6
  exit jump 0x2000
"
        );
    }

    #[test]
    fn lanes_of_inserts_are_the_inserted_scalars() {
        let out = run_pass(
            &mut ConstFold,
            "\
region 0x1000
block0:
  v0 = get xmm1
  v1 = extract_lane.f64x2 v0, 0
  v2 = fmul.f64 v1, v1
  v3 = insert_lane.f64x2 v0, v2, 0
  v4 = extract_lane.f64x2 v3, 0
  v5 = fadd.f64 v4, v1
  v6 = insert_lane.f64x2 v3, v5, 0
  v7 = extract_lane.f64x2 v6, 1
  v8 = insert_lane.f64x2 v6, v7, 1
  set xmm1, v8
  exit jump 0x2000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get xmm1
  v1 = extract_lane.f64x2 v0, 0
  v2 = fmul.f64 v1, v1
  v3 = insert_lane.f64x2 v0, v2, 0
  v4 = extract_lane.f64x2 v3, 0
  v5 = fadd.f64 v2, v1
  v6 = insert_lane.f64x2 v0, v5, 0
  v7 = extract_lane.f64x2 v0, 1
  v8 = insert_lane.f64x2 v6, v7, 1
  set xmm1, v8
  exit jump 0x2000
"
        );
    }

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
  v10 = iconst.i64 0x10
  v11 = xor.i64 v4, v10
  set rax, v11
  exit jump 0x2000
"
        );
    }

    #[test]
    fn extensions_of_extensions_collapse() {
        let out = run_pass(
            &mut ConstFold,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = trunc.i8 v0
  v2 = zext.i32 v1
  v3 = zext.i64 v2
  v4 = trunc.i16 v3
  set rax, v3
  v5 = zext.i64 v4
  set rcx, v5
  v6 = sext.i64 v1
  v7 = trunc.i32 v6
  v8 = zext.i64 v7
  set rdx, v8
  exit jump 0x2000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = trunc.i8 v0
  v2 = zext.i32 v1
  v3 = zext.i64 v1
  v4 = zext.i16 v1
  set rax, v3
  v5 = zext.i64 v1
  set rcx, v5
  v6 = sext.i64 v1
  v7 = sext.i32 v1
  v8 = zext.i64 v7
  set rdx, v8
  exit jump 0x2000
"
        );
    }

    #[test]
    fn nothing_is_unsigned_below_zero() {
        // sbb eax, 0: the carry out is `x <u 0 | (x == 0 & cf)`.
        let out = run_pass(
            &mut ConstFold,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = get cf
  v2 = iconst.i64 0x0
  v3 = icmp.i64 ult v0, v2
  v4 = icmp.i64 eq v0, v2
  v5 = and.i1 v4, v1
  v6 = or.i1 v3, v5
  set cf, v6
  v7 = icmp.i64 uge v0, v2
  set zf, v7
  v8 = icmp.i64 ule v0, v2
  set sf, v8
  exit jump 0x2000
",
        );
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = get cf
  v2 = iconst.i64 0x0
  v3 = iconst.i1 0x0
  v4 = icmp.i64 eq v0, v2
  v5 = and.i1 v4, v1
  v6 = or.i1 v3, v5
  set cf, v5
  v7 = iconst.i1 0x1
  set zf, v7
  v8 = icmp.i64 ule v0, v2
  set sf, v8
  exit jump 0x2000
"
        );
    }

    #[test]
    fn a_128_bit_division_of_64_bit_values_becomes_64_bit() {
        let out = run_pass(
            &mut ConstFold,
            "\
region 0x1000
block0:
  v0 = get rax
  v1 = get rbx
  v2 = xor.i64 v0, v0
  v3 = concat.i128 v2, v0
  v4 = zext.i128 v1
  v5 = udiv.i128 v3, v4
  v6 = trunc.i64 v5
  v7 = zext.i128 v6
  v8 = icmp.i128 ne v7, v5
  v9 = select.i64 v8, v0, v1
  set rax, v9
  exit jump 0x2000
",
        );
        assert!(out.contains("= udiv.i64 v0, v1"), "{out}");
        assert!(out.contains("set rax, v1\n"), "{out}");
    }
}
