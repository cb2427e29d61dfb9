//! Regions: the instruction arena, block layout and the builder.

use alloc::vec::Vec;

use crate::cond::{ExitKind, FloatCond, Helper, IntCond, MemFlags, RmwOp, TrapKind};
use crate::opcode::{Format, Opcode};
use crate::reg::Reg;
use crate::types::Type;

/// A value: the index of the instruction that defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// A block of a region: an index into [`Region::blocks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(pub u32);

impl Value {
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl Block {
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One instruction: a fixed-size, `Copy` record. What `aux` and `args`
/// mean is given by the opcode's [`Format`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct InstData {
    pub op: Opcode,
    pub ty: Type,
    pub aux: u16,
    pub args: [u32; 3],
}

/// The `aux` of an `iconst` whose value is a guest code address or derived
/// from one by an offset (a call's return address, a RIP-relative
/// operand's address): it moves with the code when the code is loaded
/// elsewhere (see [`Region::relocate`]). Every other `iconst` has `aux` 0.
pub const CONST_GUEST_ADDR: u16 = 1;

impl InstData {
    /// For an `exit`: the flags known dead at its target (bit i for the flag
    /// register of index i, `Reg::as_flag`): the code there writes them
    /// before it reads them. 0 when nothing is known.
    #[inline]
    pub fn exit_dead_flags(&self) -> u8 {
        if self.op == Opcode::Exit {
            self.args[2] as u8
        } else {
            0
        }
    }

    /// Whether this is an `iconst` of a guest address ([`CONST_GUEST_ADDR`]).
    #[inline]
    pub fn is_guest_addr(&self) -> bool {
        self.op == Opcode::Iconst && self.aux == CONST_GUEST_ADDR
    }

    /// The value of a plain integer `iconst` (not a guest address, whose
    /// value depends on where the code is loaded).
    #[inline]
    pub fn plain_const(&self) -> Option<u64> {
        (self.op == Opcode::Iconst && self.aux == 0).then(|| self.imm64())
    }

    /// A `Mark`-format instruction (`insn` or `dep`) for the `len` guest
    /// bytes at `addr`.
    pub fn mark(op: Opcode, addr: u64, len: u16) -> InstData {
        debug_assert_eq!(op.format(), Format::Mark);
        InstData { op, ty: Type::I64, aux: len, args: [addr as u32, (addr >> 32) as u32, 0] }
    }

    /// The value operands.
    #[inline]
    pub fn values(&self) -> impl Iterator<Item = Value> + '_ {
        self.args[..self.op.format().value_args()].iter().map(|a| Value(*a))
    }

    #[inline]
    pub fn arg(&self, i: usize) -> Value {
        Value(self.args[i])
    }

    /// The 64-bit immediate of `Const`, `Mark`, `Exit` and `Trap` formats.
    #[inline]
    pub fn imm64(&self) -> u64 {
        u64::from(self.args[0]) | (u64::from(self.args[1]) << 32)
    }

    #[inline]
    pub fn reg(&self) -> Reg {
        Reg(self.aux)
    }

    /// Replaces the operands that `alias` maps with what they map to,
    /// transitively (see [`Region::resolve_aliases`]).
    #[inline]
    pub fn resolve_aliases(&mut self, alias: &[Option<Value>]) {
        let k = self.op.format().value_args();
        for a in &mut self.args[..k] {
            while let Some(w) = alias.get(*a as usize).copied().flatten() {
                *a = w.0;
            }
        }
    }

    /// Target blocks of a `jump`, `brif` or `probe_indirect`.
    #[inline]
    pub fn successors(&self) -> &[u32] {
        &self.args[Self::successor_args(self.op.format())]
    }

    /// Target blocks, to change.
    pub fn successors_mut(&mut self) -> &mut [u32] {
        &mut self.args[Self::successor_args(self.op.format())]
    }

    /// Where a format keeps its target blocks in `args`.
    #[inline]
    fn successor_args(format: Format) -> core::ops::Range<usize> {
        match format {
            Format::Jump => 0..1,
            Format::Brif => 1..3,
            Format::Probe => 1..2,
            _ => 0..0,
        }
    }
}

/// The contents of one block: instruction indices in execution order. The
/// last one is the block's terminator.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockData {
    pub insts: Vec<Value>,
}

/// A unit of translation: the IR of guest code starting at `entry`.
/// `blocks[0]` is the entry block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// Guest address of the first instruction.
    pub entry: u64,
    /// The instruction arena; a [`Value`] indexes it.
    pub insts: Vec<InstData>,
    pub blocks: Vec<BlockData>,
}

impl Region {
    pub fn new(entry: u64) -> Region {
        Region { entry, insts: Vec::new(), blocks: Vec::new() }
    }

    #[inline]
    pub fn inst(&self, v: Value) -> &InstData {
        &self.insts[v.index()]
    }

    /// Whether `x` and `y` are provably the same value: one value, or the
    /// same pure op (not a `get` or `load`, which read state that may have
    /// changed, nor an op computing under MXCSR) with the same type and
    /// immediates on operands that are the same in turn, four levels deep
    /// (two `splat`s of equal `iconst`s are the same).
    pub fn same_value(&self, x: Value, y: Value) -> bool {
        self.same_value_within(x, y, 4)
    }

    fn same_value_within(&self, x: Value, y: Value, depth: u32) -> bool {
        if x == y {
            return true;
        }
        let (a, b) = (self.inst(x), self.inst(y));
        let pure = a.op.format().has_result()
            && !a.op.has_side_effect()
            && !a.op.uses_mxcsr()
            && !matches!(a.op, Opcode::Load | Opcode::Get);
        if !pure || depth == 0 || (a.op, a.ty, a.aux) != (b.op, b.ty, b.aux) {
            return false;
        }
        let k = a.op.format().value_args();
        a.args[k..] == b.args[k..] && (0..k).all(|i| self.same_value_within(a.arg(i), b.arg(i), depth - 1))
    }

    /// Adds `d` to the arena, in no block yet, and returns its value.
    pub fn add_inst(&mut self, d: InstData) -> Value {
        self.insts.push(d);
        Value(self.insts.len() as u32 - 1)
    }

    /// The type of the value `v` defines.
    #[inline]
    pub fn value_type(&self, v: Value) -> Type {
        let d = self.inst(v);
        match d.op.format() {
            Format::Get => d.reg().ty().unwrap_or(Type::I64),
            Format::IntCompare | Format::FloatCompare if !d.ty.is_vector() => Type::I1,
            _ if d.op == Opcode::Parity => Type::I1,
            Format::Unary if d.op == Opcode::Movmsk => Type::I32,
            Format::UnaryImm if d.op == Opcode::ExtractLane => d.ty.lane_type(),
            _ => d.ty,
        }
    }

    /// How many branches enter each block (from the blocks' terminators).
    pub fn predecessor_counts(&self) -> Vec<u32> {
        let mut preds = alloc::vec![0u32; self.blocks.len()];
        for block in &self.blocks {
            if let Some(last) = block.insts.last() {
                for s in self.inst(*last).successors() {
                    preds[*s as usize] += 1;
                }
            }
        }
        preds
    }

    /// Replaces every operand that `alias` maps (by value index) with
    /// what it maps to, transitively. Values beyond `alias` stay.
    pub fn resolve_aliases(&mut self, alias: &[Option<Value>]) {
        for d in &mut self.insts {
            d.resolve_aliases(alias);
        }
    }

    /// Replaces the instructions `replace` maps (by value index) with the
    /// values they map to: every use is rewritten ([`Region::resolve_aliases`])
    /// and the replaced instructions leave their blocks.
    pub fn replace_values(&mut self, replace: &[Option<Value>]) {
        self.resolve_aliases(replace);
        for block in &mut self.blocks {
            block.insts.retain(|v| replace.get(v.index()).copied().flatten().is_none());
        }
    }

    /// Drops the arena's instructions no block holds (what the passes left
    /// behind), renumbering the rest in block order, so a region kept in a
    /// cache holds only what runs. Leaves the region as it is if a held
    /// instruction uses a value no block holds (invalid IR, for the
    /// verifier to report).
    pub fn compact(&mut self) {
        const NONE: u32 = u32::MAX;
        // Already compact (a lifter's region no pass touched): the blocks
        // hold the whole arena, in order.
        let mut held = self.blocks.iter().flat_map(|b| b.insts.iter()).enumerate();
        if held.all(|(i, v)| v.index() == i)
            && self.blocks.iter().map(|b| b.insts.len()).sum::<usize>() == self.insts.len()
        {
            return;
        }
        let mut new_index = alloc::vec![NONE; self.insts.len()];
        let mut insts = Vec::with_capacity(self.blocks.iter().map(|b| b.insts.len()).sum());
        for v in self.blocks.iter().flat_map(|b| b.insts.iter()) {
            if new_index[v.index()] != NONE {
                return;
            }
            new_index[v.index()] = insts.len() as u32;
            insts.push(self.insts[v.index()]);
        }
        for d in &mut insts {
            let k = d.op.format().value_args();
            for a in &mut d.args[..k] {
                match new_index.get(*a as usize) {
                    Some(&n) if n != NONE => *a = n,
                    _ => return,
                }
            }
        }
        for v in self.blocks.iter_mut().flat_map(|b| b.insts.iter_mut()) {
            *v = Value(new_index[v.index()]);
        }
        self.insts = insts;
    }

    /// Moves the region's guest addresses by `delta` (wrapping): the entry,
    /// the addresses of marks, exits and traps, and the `iconst`s of guest
    /// addresses. The region of code loaded `delta` bytes further on, as
    /// long as the passes that made it kept each address-derived constant
    /// a guest address (`tests/relocate.rs` checks the built-in ones).
    pub fn relocate(&mut self, delta: u64) {
        self.entry = self.entry.wrapping_add(delta);
        for d in &mut self.insts {
            let moves = match d.op.format() {
                Format::Mark | Format::Exit | Format::Trap => true,
                Format::Const => d.aux == CONST_GUEST_ADDR,
                _ => false,
            };
            if moves {
                let bits = if d.op.format() == Format::Const { d.ty.bits() } else { 64 };
                let mut imm = d.imm64().wrapping_add(delta);
                if bits < 64 {
                    imm &= (1u64 << bits) - 1;
                }
                d.args[0] = imm as u32;
                d.args[1] = (imm >> 32) as u32;
            }
        }
    }

    /// Guest instructions marked in the region, as (address, length).
    pub fn guest_insns(&self) -> impl Iterator<Item = (u64, u16)> + '_ {
        self.blocks
            .iter()
            .flat_map(|b| b.insts.iter())
            .map(|v| self.inst(*v))
            .filter(|d| d.op == Opcode::Insn)
            .map(|d| (d.imm64(), d.aux))
    }

    /// The guest byte ranges `[start, end)` the region depends on: those
    /// its instructions came from and those its `dep` marks name, sorted
    /// and merged when they touch; the entry byte alone for a region
    /// without marks. A superblock has several.
    pub fn guest_ranges(&self) -> Vec<(u64, u64)> {
        let mut ranges: Vec<(u64, u64)> = self
            .blocks
            .iter()
            .flat_map(|b| b.insts.iter())
            .map(|v| self.inst(*v))
            .filter(|d| d.op.format() == Format::Mark)
            .map(|d| (d.imm64(), d.imm64().saturating_add(u64::from(d.aux.max(1)))))
            .collect();
        if ranges.is_empty() {
            ranges.push((self.entry, self.entry.saturating_add(1)));
        }
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (s, e) in ranges {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged
    }
}

/// Appends instructions to a region, one current block at a time.
pub struct Builder<'r> {
    pub region: &'r mut Region,
    current: Block,
}

impl<'r> Builder<'r> {
    /// A builder positioned at a new entry block (if the region has none) or
    /// at the last block.
    pub fn new(region: &'r mut Region) -> Builder<'r> {
        if region.blocks.is_empty() {
            region.blocks.push(BlockData::default());
        }
        let current = Block(region.blocks.len() as u32 - 1);
        Builder { region, current }
    }

    pub fn create_block(&mut self) -> Block {
        self.region.blocks.push(BlockData::default());
        Block(self.region.blocks.len() as u32 - 1)
    }

    pub fn switch_to(&mut self, b: Block) {
        self.current = b;
    }

    pub fn current(&self) -> Block {
        self.current
    }

    /// Whether the current block already ends in a terminator.
    pub fn is_terminated(&self) -> bool {
        self.region.blocks[self.current.index()].insts.last().is_some_and(|v| self.region.inst(*v).op.is_terminator())
    }

    /// Appends a raw instruction and returns the value it defines.
    pub fn push(&mut self, data: InstData) -> Value {
        let v = Value(self.region.insts.len() as u32);
        self.region.insts.push(data);
        self.region.blocks[self.current.index()].insts.push(v);
        v
    }

    fn make(&mut self, op: Opcode, ty: Type, aux: u16, args: [u32; 3]) -> Value {
        self.push(InstData { op, ty, aux, args })
    }

    pub fn iconst(&mut self, ty: Type, imm: u64) -> Value {
        let imm = if ty.bits() < 64 { imm & ((1u64 << ty.bits()) - 1) } else { imm };
        self.make(Opcode::Iconst, ty, 0, [imm as u32, (imm >> 32) as u32, 0])
    }

    /// An `iconst.i64` of the guest address `addr` ([`CONST_GUEST_ADDR`]).
    pub fn guest_addr(&mut self, addr: u64) -> Value {
        self.make(Opcode::Iconst, Type::I64, CONST_GUEST_ADDR, [addr as u32, (addr >> 32) as u32, 0])
    }

    pub fn get(&mut self, reg: Reg) -> Value {
        let ty = reg.ty().expect("valid register");
        self.make(Opcode::Get, ty, reg.0, [0; 3])
    }

    pub fn set(&mut self, reg: Reg, v: Value) {
        let ty = reg.ty().expect("valid register");
        self.make(Opcode::Set, ty, reg.0, [v.0, 0, 0]);
    }

    pub fn load(&mut self, ty: Type, addr: Value) -> Value {
        self.make(Opcode::Load, ty, MemFlags::Plain as u16, [addr.0, 0, 0])
    }

    pub fn store(&mut self, ty: Type, addr: Value, v: Value) {
        self.make(Opcode::Store, ty, MemFlags::Plain as u16, [addr.0, v.0, 0]);
    }

    pub fn atomic_rmw(&mut self, ty: Type, op: RmwOp, addr: Value, v: Value) -> Value {
        self.make(Opcode::AtomicRmw, ty, op as u16, [addr.0, v.0, 0])
    }

    pub fn unary(&mut self, op: Opcode, ty: Type, a: Value) -> Value {
        debug_assert_eq!(op.format(), Format::Unary);
        self.make(op, ty, 0, [a.0, 0, 0])
    }

    pub fn binary(&mut self, op: Opcode, ty: Type, a: Value, b: Value) -> Value {
        debug_assert_eq!(op.format(), Format::Binary);
        self.make(op, ty, 0, [a.0, b.0, 0])
    }

    pub fn ternary(&mut self, op: Opcode, ty: Type, a: Value, b: Value, c: Value) -> Value {
        debug_assert_eq!(op.format(), Format::Ternary);
        self.make(op, ty, 0, [a.0, b.0, c.0])
    }

    pub fn ternary_imm(&mut self, op: Opcode, ty: Type, a: Value, b: Value, c: Value, imm: u16) -> Value {
        debug_assert_eq!(op.format(), Format::TernaryImm);
        self.make(op, ty, imm, [a.0, b.0, c.0])
    }

    pub fn unary_imm(&mut self, op: Opcode, ty: Type, a: Value, imm: u16) -> Value {
        debug_assert_eq!(op.format(), Format::UnaryImm);
        self.make(op, ty, imm, [a.0, 0, 0])
    }

    pub fn binary_imm(&mut self, op: Opcode, ty: Type, a: Value, b: Value, imm: u16) -> Value {
        debug_assert_eq!(op.format(), Format::BinaryImm);
        self.make(op, ty, imm, [a.0, b.0, 0])
    }

    pub fn icmp(&mut self, cond: IntCond, ty: Type, a: Value, b: Value) -> Value {
        self.make(Opcode::Icmp, ty, cond as u16, [a.0, b.0, 0])
    }

    pub fn fcmp(&mut self, cond: FloatCond, ty: Type, a: Value, b: Value) -> Value {
        self.make(Opcode::Fcmp, ty, cond as u16, [a.0, b.0, 0])
    }

    pub fn call(&mut self, helper: Helper) {
        self.make(Opcode::Call, Type::I64, helper as u16, [0; 3]);
    }

    pub fn insn(&mut self, addr: u64, len: u16) {
        self.push(InstData::mark(Opcode::Insn, addr, len));
    }

    pub fn jump(&mut self, target: Block) {
        self.make(Opcode::Jump, Type::I64, 0, [target.0, 0, 0]);
    }

    pub fn brif(&mut self, cond: Value, then: Block, els: Block) {
        self.make(Opcode::Brif, Type::I64, 0, [cond.0, then.0, els.0]);
    }

    pub fn exit(&mut self, kind: ExitKind, target: u64) {
        self.make(Opcode::Exit, Type::I64, kind as u16, [target as u32, (target >> 32) as u32, 0]);
    }

    pub fn exit_indirect(&mut self, kind: ExitKind, target: Value) {
        self.make(Opcode::ExitIndirect, Type::I64, kind as u16, [target.0, 0, 0]);
    }

    pub fn probe_indirect(&mut self, kind: ExitKind, target: Value, fallback: Block) {
        self.make(Opcode::ProbeIndirect, Type::I64, kind as u16, [target.0, fallback.0, 0]);
    }

    pub fn trap(&mut self, kind: TrapKind, addr: u64) {
        self.make(Opcode::Trap, Type::I64, kind as u16, [addr as u32, (addr >> 32) as u32, 0]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inst_data_is_16_bytes() {
        assert_eq!(core::mem::size_of::<InstData>(), 16);
    }
}
