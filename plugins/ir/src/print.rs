//! The text form of a region, as the parser reads it back.
//!
//! ```text
//! region 0x401000
//! block0:
//!   insn 0x401000, 3
//!   v0 = get rax
//!   v1 = iconst.i64 0x1
//!   v2 = add.i64 v0, v1
//!   set rax, v2
//!   exit jump 0x401003
//! ```
//!
//! Values are numbered in the order they are printed, so printing is
//! canonical: `print(parse(print(r))) == print(r)`.

use alloc::string::String;
use alloc::vec;
use core::fmt::{self, Write};

use crate::cond::{ExitKind, FloatCond, Helper, IntCond, MemFlags, RmwOp, TrapKind};
use crate::opcode::{Format, COUNT_GLOBAL};
use crate::region::{InstData, Region};

/// Prints `region` in its text form.
pub fn print(region: &Region) -> String {
    let mut out = String::new();
    write_region(&mut out, region).expect("writing to a String cannot fail");
    out
}

/// Writes `region` in its text form.
pub fn write_region(out: &mut dyn Write, region: &Region) -> fmt::Result {
    let mut names = vec![u32::MAX; region.insts.len()];
    let mut next = 0u32;
    for block in &region.blocks {
        for v in &block.insts {
            if region.inst(*v).op.format().has_result() {
                names[v.index()] = next;
                next += 1;
            }
        }
    }
    writeln!(out, "region {:#x}", region.entry)?;
    for (b, block) in region.blocks.iter().enumerate() {
        writeln!(out, "block{b}:")?;
        for v in &block.insts {
            out.write_str("  ")?;
            write_inst(out, region.inst(*v), names[v.index()], &names)?;
            out.write_char('\n')?;
        }
    }
    Ok(())
}

fn write_inst(out: &mut dyn Write, d: &InstData, name: u32, names: &[u32]) -> fmt::Result {
    let val = |i: usize| names.get(d.args[i] as usize).copied().unwrap_or(u32::MAX);
    let format = d.op.format();
    if format.has_result() {
        write!(out, "v{name} = ")?;
    }
    let op = d.op.name();
    let ty = d.ty;
    let aux = d.aux;
    match format {
        Format::Const if d.is_guest_addr() => write!(out, "{op}.{ty} addr {:#x}", d.imm64()),
        Format::Const => write!(out, "{op}.{ty} {:#x}", d.imm64()),
        Format::Get => write!(out, "{op} {}", d.reg()),
        Format::Set => write!(out, "{op} {}, v{}", d.reg(), val(0)),
        Format::Unary => write!(out, "{op}.{ty} v{}", val(0)),
        Format::Binary => write!(out, "{op}.{ty} v{}, v{}", val(0), val(1)),
        Format::Ternary => write!(out, "{op}.{ty} v{}, v{}, v{}", val(0), val(1), val(2)),
        Format::UnaryImm => write!(out, "{op}.{ty} v{}, {aux}", val(0)),
        Format::TernaryImm => write!(out, "{op}.{ty} v{}, v{}, v{}, {aux}", val(0), val(1), val(2)),
        Format::BinaryImm => write!(out, "{op}.{ty} v{}, v{}, {aux}", val(0), val(1)),
        Format::IntCompare => write!(out, "{op}.{ty} {} v{}, v{}", name_of(IntCond::from_u16(aux)), val(0), val(1)),
        Format::FloatCompare => {
            write!(out, "{op}.{ty} {} v{}, v{}", name_of(FloatCond::from_u16(aux)), val(0), val(1))
        }
        Format::Load => write!(out, "{op}.{ty}{} v{}", mem_flags(aux), val(0)),
        Format::Store => write!(out, "{op}.{ty}{} v{}, v{}", mem_flags(aux), val(0), val(1)),
        Format::AtomicRmw => write!(out, "{op}.{ty} {} v{}, v{}", name_of(RmwOp::from_u16(aux)), val(0), val(1)),
        Format::Call => {
            let flags = u16::try_from(d.args[0]).map_or(" ?", mem_flags);
            write!(out, "{op} {}{flags}", name_of(Helper::from_u16(aux)))
        }
        Format::Mark => write!(out, "{op} {:#x}, {aux}", d.imm64()),
        Format::Count => {
            let scope = if aux == COUNT_GLOBAL { " global" } else { "" };
            write!(out, "{op}{scope} {}, {}", d.args[0], d.args[1])
        }
        Format::Jump => write!(out, "{op} block{}", d.args[0]),
        Format::Brif => write!(out, "{op} v{}, block{}, block{}", val(0), d.args[1], d.args[2]),
        Format::Exit => {
            write!(out, "{op} {} {:#x}", name_of(ExitKind::from_u16(aux)), d.imm64())?;
            match d.exit_dead_flags() {
                0 => Ok(()),
                dead => write!(out, " dead {dead:#x}"),
            }
        }
        Format::ExitIndirect => write!(out, "{op} {} v{}", name_of(ExitKind::from_u16(aux)), val(0)),
        Format::Probe => write!(out, "{op} {} v{}, block{}", name_of(ExitKind::from_u16(aux)), val(0), d.args[1]),
        Format::Trap => write!(out, "{op} {} {:#x}", name_of(TrapKind::from_u16(aux)), d.imm64()),
    }
}

fn mem_flags(aux: u16) -> &'static str {
    match MemFlags::from_u16(aux) {
        Some(MemFlags::Plain) => "",
        Some(MemFlags::Ordered) => " ordered",
        None => " ?",
    }
}

fn name_of<T: fmt::Display>(v: Option<T>) -> impl fmt::Display {
    struct Shown<T>(Option<T>);
    impl<T: fmt::Display> fmt::Display for Shown<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match &self.0 {
                Some(v) => v.fmt(f),
                None => f.write_str("?"),
            }
        }
    }
    Shown(v)
}
