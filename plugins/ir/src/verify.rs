//! The verifier: structural, dominance and type checks of a region. Run
//! after the lifter and after every pass in debug builds, and on every
//! region a plugin returns.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::cond::{ExitKind, FloatCond, Helper, IntCond, MemFlags, RmwOp, TrapKind};
use crate::opcode::{Format, Opcode, COUNT_GLOBAL};
use crate::region::{InstData, Region, Value};
use crate::types::Type;

/// What is wrong with a region, and at which instruction (arena index).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{msg}", match inst { Some(i) => alloc::format!("inst {i}: "), None => String::new() })]
pub struct VerifyError {
    pub inst: Option<u32>,
    pub msg: String,
}

fn fail<T>(inst: Option<u32>, msg: impl Into<String>) -> Result<T, VerifyError> {
    Err(VerifyError { inst, msg: msg.into() })
}

/// Checks every invariant of the IR on `region`.
pub fn verify(region: &Region) -> Result<(), VerifyError> {
    let nblocks = region.blocks.len();
    if nblocks == 0 {
        return fail(None, "region has no blocks");
    }
    // Where each instruction sits: (block, position).
    let mut place = vec![None; region.insts.len()];
    for (b, block) in region.blocks.iter().enumerate() {
        let Some(last) = block.insts.last() else {
            return fail(None, alloc::format!("block{b} is empty"));
        };
        for (pos, v) in block.insts.iter().enumerate() {
            let slot = place
                .get_mut(v.index())
                .ok_or(VerifyError { inst: Some(v.0), msg: "index out of the arena".into() })?;
            if slot.is_some() {
                return fail(Some(v.0), "instruction placed twice");
            }
            *slot = Some((b, pos));
            let is_last = v == last;
            if region.inst(*v).op.is_terminator() != is_last {
                return fail(
                    Some(v.0),
                    if is_last {
                        "block does not end in a terminator"
                    } else {
                        "terminator before the end of its block"
                    },
                );
            }
        }
        for succ in region.inst(*last).successors() {
            if *succ as usize >= nblocks {
                return fail(Some(last.0), alloc::format!("branch to missing block{succ}"));
            }
        }
    }
    let idom = dominators(region);
    for (b, block) in region.blocks.iter().enumerate() {
        for (pos, v) in block.insts.iter().enumerate() {
            let d = region.inst(*v);
            for arg in d.values() {
                let Some(Some((db, dpos))) = place.get(arg.index()) else {
                    return fail(Some(v.0), alloc::format!("operand {} is not a placed instruction", arg.0));
                };
                if !region.inst(arg).op.format().has_result() {
                    return fail(Some(v.0), alloc::format!("operand {} defines no value", arg.0));
                }
                let dominated = if *db == b { *dpos < pos } else { dominates(&idom, *db, b) };
                if !dominated {
                    return fail(Some(v.0), alloc::format!("operand {} does not dominate its use", arg.0));
                }
            }
            check_types(region, d).map_err(|msg| VerifyError { inst: Some(v.0), msg })?;
        }
    }
    Ok(())
}

/// Immediate dominators of the blocks (entry: itself; unreachable: None),
/// by the iterative algorithm; regions are small.
fn dominators(region: &Region) -> Vec<Option<usize>> {
    let n = region.blocks.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, block) in region.blocks.iter().enumerate() {
        if let Some(last) = block.insts.last() {
            for s in region.inst(*last).successors() {
                preds[*s as usize].push(b);
            }
        }
    }
    let mut idom = vec![None; n];
    idom[0] = Some(0);
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..n {
            let mut new: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(cur) => intersect(&idom, cur, p),
                });
            }
            if new.is_some() && new != idom[b] {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

fn intersect(idom: &[Option<usize>], mut a: usize, mut b: usize) -> usize {
    // Walk both up the tree until they meet; block numbers are not an
    // order here, so mark a's ancestors.
    let mut seen = vec![false; idom.len()];
    loop {
        seen[a] = true;
        match idom[a] {
            Some(p) if p != a => a = p,
            _ => break,
        }
    }
    while !seen[b] {
        b = idom[b].unwrap_or(0);
    }
    b
}

fn dominates(idom: &[Option<usize>], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        match idom[b] {
            Some(p) if p != b => b = p,
            _ => return false,
        }
    }
}

fn check_types(region: &Region, d: &InstData) -> Result<(), String> {
    let ty = d.ty;
    let arg = |i: usize| region.value_type(Value(d.args[i]));
    let expect = |i: usize, want: Type| -> Result<(), String> {
        let got = arg(i);
        if got.compatible(want) {
            Ok(())
        } else {
            Err(alloc::format!("operand {i} of {} is {got}, expected {want}", d.op))
        }
    };
    let known =
        |ok: bool, what: &str| if ok { Ok(()) } else { Err(alloc::format!("bad {what} {} for {}", d.aux, d.op)) };
    let int_scalar = |t: Type| t.is_int();
    match d.op.format() {
        Format::Const => {
            known(ty.is_int() && ty.bits() <= 64, "type")?;
            known(d.aux == 0 || (d.aux == crate::region::CONST_GUEST_ADDR && ty == Type::I64), "constant kind")?;
        }
        Format::Get => known(d.reg().is_valid(), "register")?,
        Format::Set => {
            known(d.reg().is_valid(), "register")?;
            expect(0, d.reg().ty().unwrap_or(Type::I64))?;
        }
        Format::Load | Format::Store => {
            known(MemFlags::from_u16(d.aux).is_some(), "memory flags")?;
            known(ty != Type::I1, "type")?;
            expect(0, Type::I64)?;
            if d.op == Opcode::Store {
                expect(1, ty)?;
            }
        }
        Format::AtomicRmw => {
            known(RmwOp::from_u16(d.aux).is_some() && int_scalar(ty), "atomic op")?;
            expect(0, Type::I64)?;
            expect(1, ty)?;
        }
        Format::IntCompare => {
            known(IntCond::from_u16(d.aux).is_some(), "condition")?;
            expect(0, ty)?;
            expect(1, ty)?;
        }
        Format::FloatCompare => {
            known(FloatCond::from_u16(d.aux).is_some(), "condition")?;
            expect(0, ty)?;
            expect(1, ty)?;
        }
        Format::Call => {
            known(Helper::from_u16(d.aux).is_some(), "helper")?;
            known(u16::try_from(d.args[0]).ok().and_then(MemFlags::from_u16).is_some(), "memory flags")?;
        }
        Format::Exit => {
            known(ExitKind::from_u16(d.aux).is_some(), "exit kind")?;
            known(d.args[2] <= 0x7f, "dead flag mask")?;
        }
        Format::ExitIndirect | Format::Probe => {
            known(ExitKind::from_u16(d.aux).is_some(), "exit kind")?;
            expect(0, Type::I64)?;
        }
        Format::Trap => known(TrapKind::from_u16(d.aux).is_some(), "trap kind")?,
        Format::Brif => expect(0, Type::I1)?,
        Format::Mark | Format::Jump => {}
        Format::Count => known(d.aux <= COUNT_GLOBAL, "counter scope")?,
        Format::Unary => check_unary(d.op, ty, arg(0))?,
        Format::UnaryImm => {
            let a = arg(0);
            match d.op {
                Opcode::ExtractLane => known(a.is_vector() && ty.is_vector() && u32::from(d.aux) < ty.lanes(), "lane")?,
                Opcode::FcvtToSint => known((a.is_float() || a.is_vector()) && d.aux <= 3, "conversion mode")?,
                Opcode::ByteShl | Opcode::ByteShr => known(a.is_vector() && d.aux <= 16, "byte count")?,
                Opcode::AesKeygen => known(a.is_vector() && ty.is_vector() && d.aux <= 0xff, "round constant")?,
                Opcode::Fround => known(
                    (ty.is_float() || ty.lane_type().is_float()) && a.compatible(ty) && d.aux <= 15,
                    "rounding mode",
                )?,
                Opcode::FcvtToF16 => known(ty == Type::I16X8 && a.is_vector() && d.aux <= 7, "rounding mode")?,
                _ => known(a.is_vector() && ty.is_vector(), "type")?,
            }
        }
        Format::BinaryImm => {
            expect(0, ty)?;
            if d.op == Opcode::Crc32c {
                known(ty == Type::I32 && matches!(d.aux, 1 | 2 | 4 | 8), "crc32c width")?;
                expect(1, Type::I64)?;
            } else if d.op == Opcode::Clmul {
                known(ty.is_vector() && d.aux & !0x11 == 0, "half selector")?;
                expect(1, ty)?;
            } else if d.op == Opcode::InsertLane {
                known(ty.is_vector() && u32::from(d.aux) < ty.lanes(), "lane")?;
                expect(1, ty.lane_type())?;
            } else {
                expect(1, ty)?;
            }
        }
        Format::Binary => match d.op {
            Opcode::Shl | Opcode::Lshr | Opcode::Ashr | Opcode::Rotl | Opcode::Rotr => {
                expect(0, ty)?;
                // A vector shifts by a scalar, or lane by lane by a vector.
                let per_lane = d.op != Opcode::Rotl
                    && d.op != Opcode::Rotr
                    && ty.is_vector()
                    && arg(1).is_vector()
                    && arg(1).compatible(ty);
                known(int_scalar(arg(1)) || per_lane, "shift amount type")?;
            }
            Opcode::Concat => {
                known(ty.is_int() && ty.bits() >= 16 && arg(0).bits() * 2 == ty.bits(), "type")?;
                expect(1, arg(0))?;
            }
            _ => {
                expect(0, ty)?;
                expect(1, ty)?;
            }
        },
        Format::TernaryImm => {
            let float = ty.is_float() || (ty.is_vector() && ty.lane_type().is_float());
            known(float && d.aux <= 7, "negation mask")?;
            for i in 0..3 {
                expect(i, ty)?;
            }
        }
        Format::Ternary => {
            if d.op == Opcode::Select {
                expect(0, Type::I1)?;
            } else {
                expect(0, Type::I64)?;
            }
            expect(1, ty)?;
            expect(2, ty)?;
        }
    }
    Ok(())
}

fn check_unary(op: Opcode, ty: Type, a: Type) -> Result<(), String> {
    let ok = match op {
        Opcode::Zext | Opcode::Sext => a.is_int() && ty.is_int() && a.bits() < ty.bits(),
        Opcode::Trunc => a.is_int() && ty.is_int() && a.bits() > ty.bits(),
        Opcode::Bitcast => a.bits() == ty.bits(),
        Opcode::Parity => a.is_int(),
        Opcode::Splat => ty.is_vector() && a == ty.lane_type(),
        Opcode::Movmsk => a.is_vector(),
        Opcode::SintToF => (a.is_int() && ty.is_float()) || (a.is_vector() && ty.is_vector()),
        Opcode::Fconvert => (a.is_float() && ty.is_float() && a != ty) || (a.is_vector() && ty.is_vector()),
        Opcode::FcvtFromF16 => ty == Type::F32X4 && a.is_vector(),
        _ => a.compatible(ty),
    };
    if ok {
        Ok(())
    } else {
        Err(alloc::format!("{op}.{ty} cannot take a {a}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn check(text: &str) -> Result<(), VerifyError> {
        verify(&parse(text).expect("fixture parses"))
    }

    #[test]
    fn accepts_a_diamond() {
        check(
            "region 0x0\nblock0:\n  v0 = get rax\n  v1 = iconst.i64 0x0\n  v2 = icmp.i64 eq v0, v1\n  brif v2, block1, block2\n\
             block1:\n  set rax, v1\n  jump block3\nblock2:\n  jump block3\nblock3:\n  exit_indirect jump v0\n",
        )
        .unwrap();
    }

    #[test]
    fn rejects_use_not_dominated() {
        let e = check(
            "region 0x0\nblock0:\n  v0 = get zf\n  brif v0, block1, block2\nblock1:\n  v1 = iconst.i64 0x1\n  jump block2\n\
             block2:\n  set rax, v1\n  exit jump 0x0\n",
        )
        .unwrap_err();
        assert!(e.msg.contains("dominate"), "{e}");
    }

    #[test]
    fn rejects_type_mismatch() {
        let e = check(
            "region 0x0\nblock0:\n  v0 = get rax\n  v1 = iconst.i32 0x1\n  v2 = add.i64 v0, v1\n  exit jump 0x0\n",
        )
        .unwrap_err();
        assert!(e.msg.contains("operand 1 of add is i32"), "{e}");
    }

    #[test]
    fn rejects_missing_terminator() {
        let e = check("region 0x0\nblock0:\n  v0 = get rax\n").unwrap_err();
        assert!(e.msg.contains("terminator"), "{e}");
    }
}
