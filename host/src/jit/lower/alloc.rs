//! Where each IR value lives while a region runs: register allocation by
//! linear scan over the region's blocks in layout order, and the operand
//! folding decisions that remove values from the code altogether.
//!
//! A value gets a home ([`Home`]):
//!
//! - an `iconst` up to 64 bits is a [`Home::Const`]: never stored, its
//!   users fold it into an immediate or materialise it when they need it;
//!   one that takes two or more instructions to build and is read more
//!   than once gets a register instead, when one is free (an address
//!   loaded and stored, a multiplier used twice);
//! - a value folded into its single user ([`Fold`]) has no home of its
//!   own: the user emits it (an `icmp` or scalar `fcmp` feeding `brif`
//!   or an integer `select` becomes `cmp`/`fcmp` + `b.cc`/`csel`; an
//!   address `iadd` feeding a plain scalar load or store becomes its
//!   addressing mode, base + immediate, base + register or base + scaled
//!   index; an acquire/release access takes only an `iadd` of 0, as its
//!   bare base register; a `trunc` of an `lshr` by a constant is one
//!   `ubfx`; a `trunc` read only by an `and` of its width is the `and`
//!   of the wide operand, and a `trunc` to 32 bits read only by ops
//!   that read W registers is its operand's register);
//! - a `get` of a pinned guest register (see `crate::jit::regs`: GPRs
//!   and XMM registers) is the pinned host register itself, when nothing writes that guest register
//!   while the value is live (no `set` of it, no helper `call` that writes
//!   it): anywhere in the region if nothing writes it at all, else when
//!   no write lies between its definition and its last use in layout
//!   order and every path between the two runs inside that span (the same
//!   condition as for a register across blocks, below);
//! - an `insert_lane` into such a `get` of an XMM register whose result a
//!   `set` of the same register writes (a scalar SSE op) inserts in place
//!   into the pinned register, the `set` then being nothing, when the
//!   `get` is read for the last time there, no other value lives in the
//!   register, and nothing reads or writes the guest register up to the
//!   `set` or writes it while the result is read;
//! - an integer result that a `set` of a pinned guest register writes is
//!   computed straight into that host register (the `set` is then
//!   nothing) when, from its definition to the `set`, no value lives in
//!   the register (but the operand of a one-instruction op, `add x20,
//!   x20, x25`), no `get` reads the guest register and no helper is
//!   called, and nothing writes the register while the result is still
//!   read (see `Scan::sets`);
//! - a float taken from lane 0 of a vector, and a `zext` of an integer
//!   (kept zero-extended anyway), is its operand's register when that
//!   has one (whose interval grows to cover the copy's); an
//!   `insert_lane` whose vector operand is read for the last time takes
//!   that operand's register and inserts in place;
//! - a value gets a register of its class (integers up to 64 bits in X
//!   registers, floats and vectors in V registers) for the interval from
//!   its definition to its last use in layout order, when one is free;
//!   values live across a helper `call` prefer callee-saved registers. A
//!   value used in another block than its own gets one only when every
//!   branch of the region goes to a later block (superblocks and the
//!   lifter's branches do; a `rep` loop does not): then every path from a
//!   definition to a use runs inside its interval;
//! - everything else (values used in other blocks of a region with a
//!   backward branch, i128s, values that found no free register) keeps a
//!   16-byte frame slot.
//!
//! A register is released only after its value's last use, so an op's
//! result register always differs from its operands' registers, the
//! contract of the op emitters.
//!
//! A run of batched NaN checks ([`super::nan_runs`]) may execute twice:
//! every value it reads that is defined before it stays in its home until
//! the run's end, no result in it is computed into a pinned register, and
//! no `insert_lane` in it inserts in place into a vector from before it.

use aarchx_ir::cond::Helper;
use aarchx_ir::{InstData, MemFlags, Opcode, Reg, Region, Type, Value};

use super::nan_runs::Run;
use super::NanRules;
use crate::jit::regs::{is_pinned_host, pinned, pinned_v};

/// Where a value lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// Not materialised: unused, or folded into its user.
    None,
    /// A frame slot at this offset from sp.
    Slot(u32),
    /// An integer register.
    X(u8),
    /// A float/vector register.
    V(u8),
    /// An integer constant (zero-extended to 64 bits).
    Const(u64),
}

/// How a value is folded into its single user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// Emitted by itself.
    No,
    /// A scalar `icmp` or `fcmp` emitted as `cmp`/`fcmp` by its `brif` or
    /// `select`.
    Compare,
    /// An `iadd` emitted as the address of its load or store.
    Address,
    /// An `ishl` by a constant emitted as the scaled index of an address.
    Index,
    /// An `lshr` by a constant emitted by its `trunc` as one `ubfx`.
    BitField,
    /// A `trunc` its readers read as the wide operand: an `and` of its
    /// width (the other operand is zero-extended at the width, so the
    /// result is too), or only ops that read the low 32 bits.
    Low,
}

/// Caller-saved X registers the allocator hands out: x0-x5 are the slot
/// layer's and the call arguments, x9-x11 the emitters' temporaries,
/// x16/x17 the intra-procedure scratch. x30 counts as caller-saved: the
/// trampoline saved the link register, and a helper call's `blr` writes
/// it.
pub const X_CALLER: [u8; 8] = [6, 7, 8, 12, 13, 14, 15, 30];
/// Callee-saved X registers (saved by the entry trampoline); those that
/// hold a pinned guest register are not handed out.
const X_CALLEE: [u8; 7] = [19, 20, 21, 22, 23, 24, 25];
/// V registers the allocator hands out (v0-v3 are the slot layer's,
/// v16-v18 the temporaries, v8-v15 and v24-v31 hold the guest's XMM
/// registers, see `crate::jit::regs`). All are caller-saved.
pub const V_POOL: [u8; 9] = [4, 5, 6, 7, 19, 20, 21, 22, 23];

/// Whether X register `r` is one a call clobbers.
pub fn caller_saved_x(r: u8) -> bool {
    X_CALLER.contains(&r)
}

/// The allocation of one region.
pub struct Allocation {
    pub home: Vec<Home>,
    pub fold: Vec<Fold>,
    /// Position (layout order) of each instruction, by arena index.
    pub pos: Vec<u32>,
    /// Last position at which each value is read (its definition's when
    /// unused).
    pub end: Vec<u32>,
    /// Bytes of frame the slots take.
    pub frame: u32,
}

/// The register class of a value of type `ty`, if it can live in one.
fn class(ty: Type) -> Option<bool> {
    if ty.is_int() && ty.bits() <= 64 {
        Some(true)
    } else if ty != Type::I128 && ty.bits() <= 128 && (ty.is_float() || ty.is_vector()) {
        Some(false)
    } else {
        None
    }
}

/// The instructions `mov64` takes to build `c` (movz/movn + movk).
pub fn materialise_cost(c: u64) -> u32 {
    if c == 0 || (!c) >> 16 == 0 {
        1
    } else {
        (0..4).filter(|i| (c >> (16 * i)) & 0xffff != 0).count() as u32
    }
}

/// The immediate of an `iconst` that gets a [`Home::Const`] (or, when
/// it is wide and read more than once, a register).
pub fn const_of(d: &InstData) -> Option<u64> {
    (d.op == Opcode::Iconst && d.ty.is_int() && d.ty.bits() <= 64).then(|| {
        let bits = d.ty.bits();
        if bits == 64 {
            d.imm64()
        } else {
            d.imm64() & ((1 << bits) - 1)
        }
    })
}

/// How an address can fold into the load or store `d`: `Some((shift,
/// any))` where 2^shift is the access size and `any` says whether any
/// base + offset or base + index form is allowed (plain scalar accesses),
/// or only base + 0 (the acquire/release forms take a bare base
/// register). 128-bit accesses keep their address whole.
fn address_fold(d: &InstData) -> Option<(u32, bool)> {
    let plain = MemFlags::from_u16(d.aux)? == MemFlags::Plain;
    match d.ty.bits() {
        bits @ (8 | 16 | 32 | 64) if d.ty.is_int() => Some(((bits / 8).trailing_zeros(), plain)),
        _ => None,
    }
}

/// Whether the ascending positions `ps` hold one strictly between `lo`
/// and `hi`.
fn any_between(ps: &[u32], lo: u32, hi: u32) -> bool {
    ps.get(ps.partition_point(|&p| p <= lo)).is_some_and(|&p| p < hi)
}

/// A value a `set` of a pinned guest register writes (see [`Scan::sets`]).
#[derive(Clone, Copy)]
struct PinnedSet {
    reg: Reg,
    /// The `set`'s position.
    at_set: u32,
    /// The `zext` between the value and the `set`, when there is one (a
    /// 32-bit result written to a 64-bit register), which shares the
    /// value's register and may be read after it.
    through: Option<Value>,
}

/// What one walk over the region in layout order finds for the
/// allocator, once positions are known.
struct Scan {
    /// Positions, ascending, at which each pinned guest register is read
    /// by a `get`, and at which it is written (by a `set`, or by a helper
    /// `call` that writes it), by guest register number.
    reads: Vec<Vec<u32>>,
    writes: Vec<Vec<u32>>,
    /// Positions of the `call`s, ascending.
    calls: Vec<u32>,
    /// For each integer value (not a `get`) that a `set` of a pinned
    /// guest register in its own block writes, directly or through a
    /// `zext`: the first such register and the `set`'s position. Such a
    /// value can be computed straight into the pinned host register (the
    /// `set` is then nothing) when nothing needs the register's old
    /// content from the definition to the `set` (no live value in it, no
    /// `get` of it, no helper call) and nothing overwrites it while the
    /// value (or its `zext`) is still read.
    sets: Vec<Option<PinnedSet>>,
    /// For each vector value that a `set` of a pinned XMM register in its
    /// own block writes: the first such register and the `set`'s position
    /// (an `insert_lane` there may update the register in place).
    xmm_sets: Vec<Option<(Reg, u32)>>,
    /// Whether every reader of a value is in its block and reads only its
    /// low 32 bits (see the `trunc` fold in [`allocate`]).
    low_readers_only: Vec<bool>,
}

fn scan(r: &Region, pos: &[u32], block_of: &[u32]) -> Scan {
    let n = r.insts.len();
    let regs = usize::from(Reg::xmm(15).0) + 1;
    let mut s = Scan {
        reads: vec![Vec::new(); regs],
        writes: vec![Vec::new(); regs],
        calls: Vec::new(),
        sets: vec![None; n],
        xmm_sets: vec![None; n],
        low_readers_only: vec![true; n],
    };
    for &v in r.blocks.iter().flat_map(|b| b.insts.iter()) {
        let d = r.inst(v);
        let (at, block) = (pos[v.index()], block_of[v.index()]);
        let one = [d.reg()];
        let accessed: Option<(&mut Vec<Vec<u32>>, &[Reg])> = match d.op {
            Opcode::Get => Some((&mut s.reads, &one)),
            Opcode::Set => Some((&mut s.writes, &one)),
            Opcode::Call => Some((&mut s.writes, Helper::from_u16(d.aux).map_or(&[], Helper::writes))),
            _ => None,
        };
        if let Some((list, regs)) = accessed {
            for &reg in regs {
                if pinned(reg).is_some() || pinned_v(reg).is_some() {
                    list[usize::from(reg.0)].push(at);
                }
            }
        }
        if d.op == Opcode::Call {
            s.calls.push(at);
        }
        if d.op == Opcode::Set && pinned(d.reg()).is_some() {
            let a = d.arg(0);
            let candidate = |x: Value| {
                let xd = r.inst(x);
                block_of[x.index()] == block && xd.op != Opcode::Get && class(xd.ty) == Some(true)
            };
            let set = PinnedSet { reg: d.reg(), at_set: at, through: None };
            if s.sets[a.index()].is_none() && candidate(a) {
                s.sets[a.index()] = Some(set);
            }
            if let Some(b) = copy_of(r, a).filter(|_| r.inst(a).op == Opcode::Zext) {
                if s.sets[b.index()].is_none() && candidate(b) {
                    s.sets[b.index()] = Some(PinnedSet { through: Some(a), ..set });
                }
            }
        }
        if d.op == Opcode::Set && pinned_v(d.reg()).is_some() {
            let a = d.arg(0);
            if s.xmm_sets[a.index()].is_none() && block_of[a.index()] == block {
                s.xmm_sets[a.index()] = Some((d.reg(), at));
            }
        }
        // The ops whose emitters read a 32-bit operand's W register: 32-bit
        // add, sub, mul and compares, a sign extension from 32 bits,
        // narrower truncs.
        let reads_low = match d.op {
            Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Icmp => d.ty == Type::I32,
            Opcode::Sext => r.value_type(d.arg(0)) == Type::I32 && d.ty == Type::I64,
            Opcode::Trunc => d.ty.is_int() && d.ty.bits() < 32,
            _ => false,
        };
        for a in d.values() {
            if !reads_low || block_of[a.index()] != block {
                s.low_readers_only[a.index()] = false;
            }
        }
    }
    s
}

/// The operand `v` is a copy of, in the register it is in: a float from
/// lane 0 of a vector (scalar ops read a V register's low lanes), a
/// `zext` of an integer (integers are kept zero-extended).
fn copy_of(r: &Region, v: Value) -> Option<Value> {
    let d = r.inst(v);
    let lane0 = d.op == Opcode::ExtractLane && d.aux == 0 && d.ty.lane_type().is_float();
    let zext = d.op == Opcode::Zext && d.ty.is_int() && d.ty.bits() <= 64;
    (lane0 || zext).then(|| d.arg(0))
}

/// Whether `d`'s emitter reads all its operands (in its first
/// instruction) before it writes its result, so the result may go to the
/// register an operand is in: the 64- and 32-bit ops that are one arm64
/// instruction (`add x20, x20, x25`, `add w22, w22, #1`, a shift or
/// rotate by a constant), a sign extension, and a load (`ldr x24, [x0,
/// x24, lsl #3]`, `ldar`).
fn in_place(r: &Region, d: &InstData) -> bool {
    let by_const = || r.insts.get(d.args[1] as usize).and_then(const_of).is_some();
    let wide = matches!(d.ty, Type::I64 | Type::I32);
    match d.op {
        Opcode::Load => class(d.ty) == Some(true),
        Opcode::Sext => wide,
        Opcode::Add | Opcode::Sub | Opcode::And | Opcode::Or | Opcode::Xor | Opcode::AndNot | Opcode::Mul => wide,
        Opcode::Shl | Opcode::Lshr | Opcode::Ashr | Opcode::Rotl | Opcode::Rotr => wide && by_const(),
        _ => false,
    }
}

/// Whether `d`'s emitter is one vector instruction that reads its operands
/// before it writes its result, so the result may go to the V register an
/// operand is in: a vector load (its address is an X register), the
/// lane-wise integer ops of one instruction, and under FEAT_AFP the float
/// arithmetic and min/max, which then are one instruction with no NaN
/// check reading the operands after it.
fn in_place_v(d: &InstData, nan_rules: NanRules) -> bool {
    match d.op {
        Opcode::Load => class(d.ty) == Some(false),
        Opcode::Add | Opcode::Sub => d.ty.is_vector() && d.ty.lane_type().is_int() && d.ty.lane_bits() <= 64,
        Opcode::And | Opcode::Or | Opcode::Xor | Opcode::AndNot => d.ty.is_vector(),
        Opcode::Fadd | Opcode::Fsub | Opcode::Fmul | Opcode::Fdiv | Opcode::Fmin | Opcode::Fmax => {
            nan_rules == NanRules::Afp && d.ty.is_vector() && d.ty.lane_type().is_float()
        }
        _ => false,
    }
}

/// Decides folds and homes for `r`. `uses` counts each value's readers;
/// `skippable` says whether an instruction is left out; `journal` keeps
/// store addresses whole (the journal records them); `runs` are the runs
/// of batched NaN checks; `nan_rules` says whether float ops check their
/// results.
pub fn allocate(
    r: &Region,
    uses: &[u32],
    skippable: impl Fn(&InstData, u32) -> bool,
    journal: bool,
    runs: &[Run],
    nan_rules: NanRules,
) -> Allocation {
    let n = r.insts.len();
    let mut pos = vec![0u32; n];
    let mut block_of = vec![0u32; n];
    let mut p = 0u32;
    for (b, block) in r.blocks.iter().enumerate() {
        for v in &block.insts {
            pos[v.index()] = p;
            block_of[v.index()] = b as u32;
            p += 1;
        }
    }
    let mut fold = vec![Fold::No; n];
    let single_local = |a: Value, user: Value| uses[a.index()] == 1 && block_of[a.index()] == block_of[user.index()];
    for block in &r.blocks {
        for &v in &block.insts {
            let d = r.inst(v);
            match d.op {
                Opcode::Brif | Opcode::Select => {
                    let c = d.arg(0);
                    let cd = r.inst(c);
                    let scalar_select = d.op == Opcode::Brif || (d.ty.is_int() && d.ty.bits() <= 64);
                    let scalar_compare = (cd.op == Opcode::Icmp && !cd.ty.is_vector() && cd.ty.bits() <= 64)
                        || (cd.op == Opcode::Fcmp && cd.ty.is_float());
                    if scalar_compare && scalar_select && single_local(c, v) {
                        fold[c.index()] = Fold::Compare;
                    }
                }
                Opcode::Trunc if d.ty.is_int() => {
                    let a = d.arg(0);
                    let ad = r.inst(a);
                    let by_const = r.insts.get(ad.args[1] as usize).and_then(const_of);
                    if ad.op == Opcode::Lshr
                        && ad.ty.is_int()
                        && ad.ty.bits() <= 64
                        && by_const.is_some_and(|n| n < u64::from(ad.ty.bits()))
                        && single_local(a, v)
                    {
                        fold[a.index()] = Fold::BitField;
                    }
                }
                Opcode::And if d.ty.is_int() && d.ty.bits() <= 32 => {
                    // A narrow value's register is zero above its width (the
                    // and is a 64-bit `and`): one unmasked operand keeps the
                    // result so, two would not.
                    for a in [d.arg(0), d.arg(1)] {
                        let ad = r.inst(a);
                        if ad.op == Opcode::Trunc
                            && ad.ty == d.ty
                            && fold[ad.arg(0).index()] == Fold::No
                            && class(r.value_type(ad.arg(0))) == Some(true)
                            && single_local(a, v)
                        {
                            fold[a.index()] = Fold::Low;
                            break;
                        }
                    }
                }
                Opcode::Load | Opcode::Store => {
                    let Some((shift, any)) = address_fold(d) else { continue };
                    if journal && d.op == Opcode::Store {
                        continue;
                    }
                    let a = d.arg(0);
                    let ad = r.inst(a);
                    if ad.op != Opcode::Add || ad.ty != Type::I64 || !single_local(a, v) {
                        continue;
                    }
                    if d.op == Opcode::Store && d.arg(1) == a {
                        continue;
                    }
                    let y = ad.arg(1);
                    let yd = r.inst(y);
                    if !any && const_of(yd) != Some(0) {
                        continue;
                    }
                    fold[a.index()] = Fold::Address;
                    let by_size = yd.op == Opcode::Shl
                        && yd.ty == Type::I64
                        && r.insts.get(yd.args[1] as usize).and_then(const_of) == Some(u64::from(shift));
                    if any && by_size && single_local(y, a) {
                        fold[y.index()] = Fold::Index;
                    }
                }
                _ => {}
            }
        }
    }
    // A `trunc` to 32 bits of a 64-bit register value, read only by ops
    // whose emitters read its W register (see `Scan::low_readers_only`),
    // is that register: none of them sees the upper half.
    let found = scan(r, &pos, &block_of);
    for block in &r.blocks {
        for &v in &block.insts {
            let d = r.inst(v);
            if d.op == Opcode::Trunc
                && d.ty == Type::I32
                && fold[v.index()] == Fold::No
                && found.low_readers_only[v.index()]
                && uses[v.index()] > 0
                && r.value_type(d.arg(0)) == Type::I64
                && fold[d.arg(0).index()] == Fold::No
            {
                fold[v.index()] = Fold::Low;
            }
        }
    }
    // Effective uses: a folded value's operands are read by its user.
    let mut end: Vec<u32> = pos.clone();
    let mut cross = vec![false; n];
    #[inline]
    fn mark(
        r: &Region,
        fold: &[Fold],
        a: Value,
        at: u32,
        block: u32,
        block_of: &[u32],
        end: &mut [u32],
        cross: &mut [bool],
    ) {
        end[a.index()] = end[a.index()].max(at);
        if block_of[a.index()] != block {
            cross[a.index()] = true;
        }
        if fold[a.index()] != Fold::No {
            mark_operands(r, fold, a, at, block, block_of, end, cross);
        }
    }
    // A folded value's operands are read where it is (out of line: few
    // values are folded).
    #[inline(never)]
    fn mark_operands(
        r: &Region,
        fold: &[Fold],
        a: Value,
        at: u32,
        block: u32,
        block_of: &[u32],
        end: &mut [u32],
        cross: &mut [bool],
    ) {
        for b in r.inst(a).values() {
            mark(r, fold, b, at, block, block_of, end, cross);
        }
    }
    for (b, block) in r.blocks.iter().enumerate() {
        for &v in &block.insts {
            if fold[v.index()] != Fold::No {
                continue;
            }
            let at = pos[v.index()];
            for a in r.inst(v).values() {
                mark(r, &fold, a, at, b as u32, &block_of, &mut end, &mut cross);
            }
        }
    }
    // What a run reads from before it lives until the run's end; each
    // instruction of a run knows where its run starts.
    let mut run_start = vec![None::<u32>; n];
    for run in runs {
        let insts = &r.blocks[run.block].insts[run.first..=run.last];
        let (start, stop) = (pos[insts[0].index()], pos[insts[insts.len() - 1].index()]);
        for &v in insts {
            run_start[v.index()] = Some(start);
            if fold[v.index()] != Fold::No {
                continue;
            }
            for a in r.inst(v).values().filter(|a| pos[a.index()] < start) {
                mark(r, &fold, a, stop, run.block as u32, &block_of, &mut end, &mut cross);
            }
        }
    }
    // A copy shares its operand's register, which then stays allocated
    // while the copy is read. Backward, so a chain of copies extends all
    // the way.
    for &v in r.blocks.iter().rev().flat_map(|b| b.insts.iter().rev()) {
        if let Some(src) = copy_of(r, v) {
            end[src.index()] = end[src.index()].max(end[v.index()]);
        }
    }
    let Scan { reads, writes, calls, sets: coalesce, xmm_sets, .. } = found;
    // Per pinned host register: the last position at which a value living
    // in it (an aliased `get`, a coalesced result) is read; X and V.
    let mut busy_until = [None::<u32>; 32];
    let mut busy_v = [None::<u32>; 32];
    let forward =
        r.blocks.iter().enumerate().all(|(b, block)| {
            block.insts.last().is_none_or(|t| r.inst(*t).successors().iter().all(|&s| s as usize > b))
        });
    let mut home = vec![Home::None; n];
    let mut frame = 0u32;
    let mut free_caller: Vec<u8> = X_CALLER.iter().rev().copied().collect();
    let mut free_callee: Vec<u8> = X_CALLEE.iter().rev().copied().filter(|&x| !is_pinned_host(x)).collect();
    let mut free_v: Vec<u8> = V_POOL.iter().rev().copied().collect();
    let mut active: Vec<(u32, Home)> = Vec::new();
    // No end in `active` is below this (a lower bound: ends only grow).
    let mut first_end = u32::MAX;
    for block in &r.blocks {
        for &v in &block.insts {
            let d = r.inst(v);
            let at = pos[v.index()];
            if first_end < at {
                active.retain(|&(e, h)| {
                    if e >= at {
                        return true;
                    }
                    match h {
                        Home::X(x) if caller_saved_x(x) => free_caller.push(x),
                        Home::X(x) => free_callee.push(x),
                        Home::V(x) => free_v.push(x),
                        _ => {}
                    }
                    false
                });
                first_end = active.iter().map(|&(e, _)| e).min().unwrap_or(u32::MAX);
            }
            if !d.op.format().has_result() || skippable(d, uses[v.index()]) || fold[v.index()] != Fold::No {
                continue;
            }
            let e = end[v.index()];
            if let Some(c) = const_of(d) {
                // A constant that takes more than one instruction to build
                // and is read more than once gets a register when one is
                // free: built once by its `iconst`.
                let reg = if uses[v.index()] > 1 && materialise_cost(c) > 1 && (forward || !cross[v.index()]) {
                    let over_call = any_between(&calls, at, e);
                    let (first, second) = if over_call {
                        (&mut free_callee, &mut free_caller)
                    } else {
                        (&mut free_caller, &mut free_callee)
                    };
                    first.pop().or_else(|| second.pop())
                } else {
                    None
                };
                home[v.index()] = match reg {
                    Some(x) => {
                        active.push((e, Home::X(x)));
                        first_end = first_end.min(e);
                        Home::X(x)
                    }
                    None => Home::Const(c),
                };
                continue;
            }
            if d.op == Opcode::Get {
                let pinned_home = match (pinned(d.reg()), pinned_v(d.reg())) {
                    (Some(x), _) => Some((Home::X(x), &mut busy_until[usize::from(x)])),
                    (_, Some(q)) => Some((Home::V(q), &mut busy_v[usize::from(q)])),
                    _ => None,
                };
                if let Some((host, busy)) = pinned_home {
                    let w = &writes[usize::from(d.reg().0)];
                    if w.is_empty() || ((forward || !cross[v.index()]) && !any_between(w, at, e)) {
                        home[v.index()] = host;
                        *busy = Some(busy.map_or(e, |x| x.max(e)));
                        continue;
                    }
                }
            } else if let Some(PinnedSet { reg, at_set, through }) =
                coalesce[v.index()].filter(|_| run_start[v.index()].is_none())
            {
                // Computed straight into the pinned register its `set`
                // writes (see `Scan::sets`).
                let host = pinned(reg).expect("a pinned register");
                let e = through.map_or(e, |z| e.max(end[z.index()]));
                let between = |ps: &[u32], hi: u32| any_between(ps, at, hi);
                let w = &writes[usize::from(reg.0)];
                if (forward || !cross[v.index()])
                    && busy_until[usize::from(host)].is_none_or(|b| b < at || (b == at && in_place(r, d)))
                    && !between(&calls, at_set)
                    && !between(&reads[usize::from(reg.0)], at_set)
                    && !between(w, at_set)
                    && !any_between(w, at_set, e.saturating_add(1))
                {
                    home[v.index()] = Home::X(host);
                    busy_until[usize::from(host)] = Some(e.max(at_set));
                    continue;
                }
            }
            // A vector result may be computed straight into the pinned XMM
            // register its `set` writes, as for the GPRs above: the
            // register and how long it is then busy.
            let into_xmm = xmm_sets[v.index()].filter(|_| run_start[v.index()].is_none()).and_then(|(reg, at_set)| {
                let h = pinned_v(reg)?;
                let g = usize::from(reg.0);
                ((forward || !cross[v.index()])
                    && busy_v[usize::from(h)].is_none_or(|b| b < at || (b == at && in_place_v(d, nan_rules)))
                    && !any_between(&calls, at, at_set)
                    && !any_between(&reads[g], at, at_set)
                    && !any_between(&writes[g], at, at_set)
                    && !any_between(&writes[g], at_set, e.saturating_add(1)))
                .then_some((h, e.max(at_set)))
            });
            if d.op != Opcode::InsertLane {
                if let Some((h, busy)) = into_xmm {
                    home[v.index()] = Home::V(h);
                    busy_v[usize::from(h)] = Some(busy);
                    continue;
                }
            }
            match copy_of(r, v).map(|src| home[src.index()]) {
                Some(h @ (Home::X(_) | Home::V(_))) if !(cross[v.index()] && !forward) => {
                    home[v.index()] = h;
                    continue;
                }
                _ => {}
            }
            if d.op == Opcode::InsertLane && !(cross[v.index()] && !forward) {
                // In place: the vector operand's register, when this is its
                // last read (the emitter then inserts into it).
                let a = d.arg(0);
                // A pinned XMM register's value (a `get` of it) updated and
                // written back to it (`set`), the scalar SSE shape: in
                // place in the pinned register when no other value lives
                // there and nothing reads or writes the guest register
                // until the `set` (which is then nothing) or writes it
                // while the result is read.
                if let (Home::V(h), Some((reg, at_set))) = (home[a.index()], xmm_sets[v.index()]) {
                    let g = usize::from(reg.0);
                    if pinned_v(reg) == Some(h)
                        && end[a.index()] == at
                        && busy_v[usize::from(h)] == Some(at)
                        && run_start[v.index()].is_none_or(|s| pos[a.index()] >= s)
                        && !any_between(&reads[g], at, at_set)
                        && !any_between(&writes[g], at, at_set)
                        && !any_between(&calls, at, at_set)
                        && !any_between(&writes[g], at_set, e.saturating_add(1))
                    {
                        home[v.index()] = Home::V(h);
                        busy_v[usize::from(h)] = Some(e.max(at_set));
                        continue;
                    }
                }
                // Else into the pinned register of the XMM register its
                // `set` writes (`movapd xmm11, xmm1; mulsd xmm11, xmm7`: a
                // copy of xmm1 there and the lane inserted).
                if let Some((h, busy)) = into_xmm {
                    home[v.index()] = Home::V(h);
                    busy_v[usize::from(h)] = Some(busy);
                    continue;
                }
                if let Home::V(h) = home[a.index()] {
                    if end[a.index()] == at && run_start[v.index()].is_none_or(|s| pos[a.index()] >= s) {
                        if let Some(k) = active.iter().position(|&(_, x)| x == Home::V(h)) {
                            active[k] = (e, Home::V(h));
                            home[v.index()] = Home::V(h);
                            continue;
                        }
                    }
                }
            }
            let reg = match class(r.value_type(v)) {
                _ if cross[v.index()] && !forward => None,
                Some(true) => {
                    let over_call = any_between(&calls, at, e);
                    let (first, second) = if over_call {
                        (&mut free_callee, &mut free_caller)
                    } else {
                        (&mut free_caller, &mut free_callee)
                    };
                    first.pop().or_else(|| second.pop()).map(Home::X)
                }
                Some(false) => free_v.pop().map(Home::V),
                None => None,
            };
            home[v.index()] = match reg {
                Some(h) => {
                    active.push((e, h));
                    first_end = first_end.min(e);
                    h
                }
                None => {
                    let h = Home::Slot(frame);
                    frame = frame.saturating_add(16);
                    h
                }
            };
        }
    }
    Allocation { home, fold, pos, end, frame }
}
