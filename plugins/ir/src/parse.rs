//! Parser for the text form written by [`crate::print`]. Used by pass
//! fixtures and by tools that take IR from a file. `;` starts a comment.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::cond::{ExitKind, FloatCond, Helper, IntCond, MemFlags, RmwOp, TrapKind};
use crate::opcode::{Format, Opcode, COUNT_GLOBAL};
use crate::reg::Reg;
use crate::region::{BlockData, InstData, Region, Value};
use crate::types::Type;

/// A parse error: the 1-based line and what was wrong there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {msg}")]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
}

/// Parses a region from its text form.
pub fn parse(text: &str) -> Result<Region, ParseError> {
    let mut region: Option<Region> = None;
    // Value operands are first recorded by their text number and resolved
    // once every definition is known, so uses may precede definitions in
    // layout order.
    let mut defs: BTreeMap<u32, u32> = BTreeMap::new();
    let mut pending: Vec<(usize, usize, [Option<u32>; 3])> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |msg: &str| ParseError { line, msg: msg.to_string() };
        let content = raw.split(';').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        if let Some(rest) = content.strip_prefix("region ") {
            if region.is_some() {
                return Err(err("a second `region` header"));
            }
            region = Some(Region::new(parse_u64(rest.trim()).ok_or_else(|| err("bad region address"))?));
            continue;
        }
        let r = region.as_mut().ok_or_else(|| err("expected `region ADDR` first"))?;
        if let Some(label) = content.strip_suffix(':') {
            let n = parse_block(label).ok_or_else(|| err("bad block label"))?;
            if n as usize != r.blocks.len() {
                return Err(err("blocks must be numbered in order from block0"));
            }
            r.blocks.push(BlockData::default());
            continue;
        }
        if r.blocks.is_empty() {
            return Err(err("instruction before the first block label"));
        }
        let (def, body) = match content.split_once(" = ") {
            Some((lhs, rhs)) => (Some(parse_value(lhs.trim()).ok_or_else(|| err("bad result name"))?), rhs),
            None => (None, content),
        };
        let (data, refs) = parse_inst(body).map_err(|m| err(&m))?;
        if data.op.format().has_result() != def.is_some() {
            return Err(err(if def.is_some() { "this op defines no value" } else { "missing `vN =`" }));
        }
        let index = r.insts.len() as u32;
        if let Some(d) = def {
            if defs.insert(d, index).is_some() {
                return Err(ParseError { line, msg: alloc::format!("v{d} defined twice") });
            }
        }
        r.insts.push(data);
        r.blocks.last_mut().expect("checked above").insts.push(Value(index));
        pending.push((line, index as usize, refs));
    }
    let mut region = region.ok_or(ParseError { line: 1, msg: "empty input".to_string() })?;
    for (line, index, refs) in pending {
        for (slot, r) in refs.iter().enumerate() {
            if let Some(name) = r {
                let v =
                    defs.get(name).ok_or_else(|| ParseError { line, msg: alloc::format!("v{name} is not defined") })?;
                region.insts[index].args[slot] = *v;
            }
        }
    }
    Ok(region)
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn parse_value(s: &str) -> Option<u32> {
    s.strip_prefix('v')?.parse().ok()
}

fn parse_block(s: &str) -> Option<u32> {
    s.strip_prefix("block")?.parse().ok()
}

fn named<T>(s: &str, what: &str, f: impl Fn(&str) -> Option<T>) -> Result<T, String> {
    f(s).ok_or_else(|| alloc::format!("unknown {what} `{s}`"))
}

/// Parses one instruction body (after any `vN =`). Value operands are
/// returned separately by their text number, to be resolved later.
fn parse_inst(body: &str) -> Result<(InstData, [Option<u32>; 3]), String> {
    let (head, rest) = body.split_once(' ').unwrap_or((body, ""));
    let (opname, ty) = match head.split_once('.') {
        Some((o, t)) => (o, Some(named(t, "type", Type::from_name)?)),
        None => (head, None),
    };
    let op = named(opname, "opcode", Opcode::from_name)?;
    let format = op.format();
    let mut words: Vec<&str> = rest.split([',', ' ']).filter(|w| !w.is_empty()).collect();
    let mut data = InstData { op, ty: ty.unwrap_or(Type::I64), aux: 0, args: [0; 3] };
    let mut refs = [None; 3];

    if format.has_type_suffix() && ty.is_none() {
        return Err(alloc::format!("`{opname}` needs a type suffix"));
    }
    // A leading keyword operand, for the formats that have one.
    let keyword = match format {
        Format::Get | Format::Set => {
            let reg = named(take(&mut words)?, "register", Reg::from_name)?;
            data.ty = reg.ty().unwrap_or(Type::I64);
            Some(reg.0)
        }
        Format::IntCompare => Some(named(take(&mut words)?, "condition", IntCond::from_name)? as u16),
        Format::FloatCompare => Some(named(take(&mut words)?, "condition", FloatCond::from_name)? as u16),
        Format::AtomicRmw => Some(named(take(&mut words)?, "atomic op", RmwOp::from_name)? as u16),
        Format::Call => {
            let helper = named(take(&mut words)?, "helper", Helper::from_name)?;
            if let Some(flags) = words.first().and_then(|w| MemFlags::from_name(w)) {
                words.remove(0);
                data.args[0] = flags as u32;
            }
            Some(helper as u16)
        }
        Format::Exit | Format::ExitIndirect | Format::Probe => {
            Some(named(take(&mut words)?, "exit kind", ExitKind::from_name)? as u16)
        }
        Format::Trap => Some(named(take(&mut words)?, "trap kind", TrapKind::from_name)? as u16),
        Format::Load | Format::Store => {
            let flags = words.first().and_then(|w| MemFlags::from_name(w));
            if flags.is_some() {
                words.remove(0);
            }
            Some(flags.unwrap_or(MemFlags::Plain) as u16)
        }
        Format::Const if words.first() == Some(&"addr") => {
            words.remove(0);
            Some(crate::region::CONST_GUEST_ADDR)
        }
        Format::Count if words.first() == Some(&"global") => {
            words.remove(0);
            Some(COUNT_GLOBAL)
        }
        _ => None,
    };
    if let Some(k) = keyword {
        data.aux = k;
    }
    for slot in 0..format.value_args() {
        let w = take(&mut words)?;
        refs[slot] = Some(parse_value(w).ok_or_else(|| alloc::format!("expected a value, found `{w}`"))?);
    }
    match format {
        Format::Const | Format::Mark | Format::Exit | Format::Trap => {
            let w = take(&mut words)?;
            let imm = parse_u64(w).ok_or_else(|| alloc::format!("bad immediate `{w}`"))?;
            data.args[0] = imm as u32;
            data.args[1] = (imm >> 32) as u32;
            if format == Format::Mark {
                let len = take(&mut words)?;
                data.aux = len.parse().map_err(|_| alloc::format!("bad length `{len}`"))?;
            }
            if format == Format::Exit && words.first() == Some(&"dead") {
                words.remove(0);
                let w = take(&mut words)?;
                let dead = parse_u64(w).filter(|m| *m <= 0x7f).ok_or_else(|| alloc::format!("bad flag mask `{w}`"))?;
                data.args[2] = dead as u32;
            }
        }
        Format::UnaryImm | Format::BinaryImm | Format::TernaryImm => {
            let w = take(&mut words)?;
            data.aux = parse_u64(w)
                .and_then(|v| u16::try_from(v).ok())
                .ok_or_else(|| alloc::format!("bad immediate `{w}`"))?;
        }
        Format::Count => {
            for slot in 0..2 {
                let w = take(&mut words)?;
                data.args[slot] = parse_u64(w)
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| alloc::format!("bad counter operand `{w}`"))?;
            }
        }
        Format::Jump => data.args[0] = parse_block(take(&mut words)?).ok_or("bad block name")?,
        Format::Probe => data.args[1] = parse_block(take(&mut words)?).ok_or("bad block name")?,
        Format::Brif => {
            data.args[1] = parse_block(take(&mut words)?).ok_or("bad block name")?;
            data.args[2] = parse_block(take(&mut words)?).ok_or("bad block name")?;
        }
        _ => {}
    }
    if let Some(extra) = words.first() {
        return Err(alloc::format!("unexpected `{extra}`"));
    }
    Ok((data, refs))
}

fn take<'a>(words: &mut Vec<&'a str>) -> Result<&'a str, String> {
    if words.is_empty() {
        Err("missing operand".to_string())
    } else {
        Ok(words.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::print;

    const SAMPLE: &str = "\
region 0x401000
block0:
  insn 0x401000, 3
  v0 = get rax
  v1 = iconst.i64 0x1
  v2 = add.i64 v0, v1
  set rax, v2
  v3 = icmp.i64 eq v2, v1
  v4 = load.i32 ordered v0
  store.i32 v0, v4
  v5 = extract_lane.f64x2 v0, 1
  v6 = atomic_rmw.i64 xchg v0, v1
  call cpuid
  count 0, 3
  count global 7, 1
  brif v3, block1, block2
block1:
  exit_indirect ret v2
block2:
  trap divzero 0x401000
";

    #[test]
    fn round_trips() {
        let r = parse(SAMPLE).unwrap();
        assert_eq!(print(&r), SAMPLE);
    }

    #[test]
    fn compacting_drops_what_no_block_holds_and_keeps_the_code() {
        let mut r = parse(SAMPLE).unwrap();
        // `v5 = extract_lane` has no use: a pass dropping it leaves it in
        // the arena.
        let dead = r.blocks[0].insts.iter().position(|v| r.inst(*v).op == crate::Opcode::ExtractLane).unwrap();
        r.blocks[0].insts.remove(dead);
        let (listing, arena) = (print(&r), r.insts.len());
        r.compact();
        assert_eq!(print(&r), listing);
        assert_eq!(r.insts.len(), arena - 1);
        assert!(r.insts.iter().all(|d| d.op != crate::Opcode::ExtractLane));
        // A held instruction using a value no block holds: left alone.
        let used = r.blocks[0].insts.iter().position(|v| r.inst(*v).op == crate::Opcode::Add).unwrap();
        r.blocks[0].insts.remove(used);
        let before = r.clone();
        r.compact();
        assert_eq!(r, before);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("region 0x10\nblock0:\n  v0 = frob.i64 v1\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.msg.contains("frob"), "{e}");
        let e = parse("region 0x10\nblock0:\n  v0 = add.i64 v1, v2\n").unwrap_err();
        assert!(e.msg.contains("v1 is not defined"), "{e}");
    }
}
