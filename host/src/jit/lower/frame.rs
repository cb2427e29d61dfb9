//! The block frame and the small emitters every family uses: loading and
//! storing value slots, materialising constants, masking and sign
//! extension at a width, condition codes, and calls into Rust.
//!
//! Values live where [`super::alloc`] put them; [`Lowerer::load`] and
//! [`Lowerer::store`] (and `ldx`/`stx`/`ldq`/`stq`) mean "put value v in
//! register r" and "the result in r goes to v's home", whatever the home,
//! so an emitter written for fixed registers works on any allocation,
//! with a move where the value has a register of its own; converted
//! emitters use the value's register directly ([`Lowerer::xsrc`],
//! [`Lowerer::xdst`] and their V twins).
//!
//! Fixed registers of the slot path: operands go in x0-x2 / v0-v2 and
//! results in x3 / v3 (i128 operands in the pairs x0/x1 and x2/x3, results
//! in x4/x5); the op emitters' own temporaries are x9-x11 ([`T0`]-[`T2`])
//! and v16-v18 ([`VT0`]-[`VT2`]); x16 holds a helper's address for `blr`
//! (and the journal cursor), x17 a slot address when an offset is out of
//! an instruction's reach.

use aarchx_ir::{Type, Value};
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi};

use super::alloc::{caller_saved_x, Fold, Home};
use super::{a64, Lowerer};
use crate::jit::regs::{transfer_pinned_v, CTX_REG, PINNED_V_HOSTS, SPILL_AREA};

/// Stack bytes `call_ctx` saves the pinned V registers in.
const PINNED_V_BYTES: u32 = 16 * PINNED_V_HOSTS.len() as u32;

/// Integer temporaries of the op emitters.
pub const T0: u8 = 9;
pub const T1: u8 = 10;
pub const T2: u8 = 11;
/// Vector temporaries of the op emitters.
pub const VT0: u8 = 16;
pub const VT1: u8 = 17;
pub const VT2: u8 = 18;

/// The register a slot is accessed through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// 64-bit integer register.
    X,
    /// 32-bit integer register (zero-extends on load).
    W,
    /// 32-bit float register.
    S,
    /// 64-bit float register.
    D,
    /// 128-bit vector register.
    Q,
}

impl Width {
    fn bytes(self) -> u32 {
        match self {
            Width::W | Width::S => 4,
            Width::X | Width::D => 8,
            Width::Q => 16,
        }
    }

    /// The width a value of `ty` is loaded into a float/vector register with.
    pub fn fp(ty: Type) -> Width {
        match ty.bits() {
            32 => Width::S,
            64 => Width::D,
            _ => Width::Q,
        }
    }
}

/// An arm64 condition code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cc {
    Eq,
    Ne,
    Hs,
    Lo,
    Mi,
    Pl,
    Vs,
    Vc,
    Hi,
    Ls,
    Ge,
    Lt,
    Gt,
    Le,
}

impl Cc {
    /// The condition that holds when `self` does not.
    pub fn invert(self) -> Cc {
        match self {
            Cc::Eq => Cc::Ne,
            Cc::Ne => Cc::Eq,
            Cc::Hs => Cc::Lo,
            Cc::Lo => Cc::Hs,
            Cc::Mi => Cc::Pl,
            Cc::Pl => Cc::Mi,
            Cc::Vs => Cc::Vc,
            Cc::Vc => Cc::Vs,
            Cc::Hi => Cc::Ls,
            Cc::Ls => Cc::Hi,
            Cc::Ge => Cc::Lt,
            Cc::Lt => Cc::Ge,
            Cc::Gt => Cc::Le,
            Cc::Le => Cc::Gt,
        }
    }
}

impl Lowerer<'_> {
    /// Where `v` lives.
    pub fn home(&self, v: Value) -> Home {
        self.alloc.home[v.index()]
    }

    /// Frame offset of `v`'s slot (values that have one: i128s and the
    /// values the allocator left in memory).
    pub fn off(&self, v: Value) -> u32 {
        match self.home(v) {
            Home::Slot(o) => o,
            h => panic!("value {} has no slot ({h:?})", v.0),
        }
    }

    /// Loads (`store` false) or stores register `r` of width `w` at frame
    /// offset `off`.
    pub fn slot_access(&mut self, store: bool, w: Width, r: u8, off: u32) {
        let direct = off % w.bytes() == 0 && off / w.bytes() <= 4095;
        let off = if direct {
            off
        } else {
            self.slot_addr(17, off);
            0
        };
        let base = if direct { 31 } else { 17 };
        // Register 31 as a base is sp.
        match (store, w) {
            (false, Width::X) => a64!(self.ops; ldr X(r), [XSP(base), #off]),
            (false, Width::W) => a64!(self.ops; ldr W(r), [XSP(base), #off]),
            (false, Width::S) => a64!(self.ops; ldr S(r), [XSP(base), #off]),
            (false, Width::D) => a64!(self.ops; ldr D(r), [XSP(base), #off]),
            (false, Width::Q) => a64!(self.ops; ldr Q(r), [XSP(base), #off]),
            (true, Width::X) => a64!(self.ops; str X(r), [XSP(base), #off]),
            (true, Width::W) => a64!(self.ops; str W(r), [XSP(base), #off]),
            (true, Width::S) => a64!(self.ops; str S(r), [XSP(base), #off]),
            (true, Width::D) => a64!(self.ops; str D(r), [XSP(base), #off]),
            (true, Width::Q) => a64!(self.ops; str Q(r), [XSP(base), #off]),
        }
    }

    /// `X(r) = sp + off`.
    pub fn slot_addr(&mut self, r: u8, off: u32) {
        if off <= 0xfff {
            a64!(self.ops; add XSP(r), sp, #off);
        } else {
            let (upper, lower) = (off >> 12, off & 0xfff);
            a64!(self.ops
                ; add XSP(r), sp, #upper, lsl #12
                ; add XSP(r), XSP(r), #lower
            );
        }
    }

    /// `X(r) = &slot(v)`.
    pub fn addr_of(&mut self, r: u8, v: Value) {
        let off = self.off(v);
        self.slot_addr(r, off);
    }

    /// Puts `v` in register `r` of width `w` (X/W: an integer register,
    /// S/D/Q: a float/vector register), from wherever it lives.
    pub fn load(&mut self, w: Width, r: u8, v: Value) {
        match (self.home(v), w) {
            (Home::Slot(off), _) => self.slot_access(false, w, r, off),
            (Home::X(h), Width::X) if h != r => a64!(self.ops; mov X(r), X(h)),
            (Home::X(h), Width::W) => a64!(self.ops; mov W(r), W(h)),
            (Home::X(_), Width::X) => {}
            (Home::X(h), Width::S) => a64!(self.ops; fmov S(r), W(h)),
            (Home::X(h), _) => a64!(self.ops; fmov D(r), X(h)),
            (Home::V(h), Width::X) => a64!(self.ops; fmov X(r), D(h)),
            (Home::V(h), Width::W) => a64!(self.ops; fmov W(r), S(h)),
            // The upper bytes of a float value mean nothing: no copy to itself.
            (Home::V(h), Width::S | Width::D) if h == r => {}
            (Home::V(h), Width::S) => a64!(self.ops; fmov S(r), S(h)),
            (Home::V(h), Width::D) => a64!(self.ops; fmov D(r), D(h)),
            (Home::V(h), Width::Q) if h != r => a64!(self.ops; mov V(r).B16, V(h).B16),
            (Home::V(_), Width::Q) => {}
            (Home::Const(c), Width::X | Width::W) => {
                let c = if w == Width::W { c & 0xffff_ffff } else { c };
                self.mov64(r, c);
            }
            (Home::Const(c), _) => {
                self.mov64(16, c);
                a64!(self.ops; fmov D(r), X(16));
            }
            (Home::None, _) => panic!("value {} is not materialised", v.0),
        }
    }

    /// Sends the result in register `r` of width `w` to `v`'s home.
    pub fn store(&mut self, w: Width, r: u8, v: Value) {
        match (self.home(v), w) {
            (Home::Slot(off), _) => self.slot_access(true, w, r, off),
            (Home::X(h), Width::X) if h != r => a64!(self.ops; mov X(h), X(r)),
            (Home::X(h), Width::W) => a64!(self.ops; mov W(h), W(r)),
            (Home::X(_), Width::X) => {}
            (Home::X(h), Width::S) => a64!(self.ops; fmov W(h), S(r)),
            (Home::X(h), _) => a64!(self.ops; fmov X(h), D(r)),
            (Home::V(h), Width::X) => a64!(self.ops; fmov D(h), X(r)),
            (Home::V(h), Width::W) => a64!(self.ops; fmov S(h), W(r)),
            (Home::V(h), Width::S | Width::D) if h == r => {}
            (Home::V(h), Width::S) => a64!(self.ops; fmov S(h), S(r)),
            (Home::V(h), Width::D) => a64!(self.ops; fmov D(h), D(r)),
            (Home::V(h), Width::Q) if h != r => a64!(self.ops; mov V(h).B16, V(r).B16),
            (Home::V(_), Width::Q) => {}
            (h, _) => panic!("value {} cannot take a result ({h:?})", v.0),
        }
    }

    /// Puts the low 8 bytes of `v` in `X(r)`.
    pub fn ldx(&mut self, r: u8, v: Value) {
        self.load(Width::X, r, v);
    }

    /// Sends the result in `X(r)` to `v`'s home.
    pub fn stx(&mut self, r: u8, v: Value) {
        self.store(Width::X, r, v);
    }

    /// Loads the high 8 bytes of a 16-byte slot.
    pub fn ldx_hi(&mut self, r: u8, v: Value) {
        let off = self.off(v) + 8;
        self.slot_access(false, Width::X, r, off);
    }

    pub fn stx_hi(&mut self, r: u8, v: Value) {
        let off = self.off(v) + 8;
        self.slot_access(true, Width::X, r, off);
    }

    pub fn ldq(&mut self, r: u8, v: Value) {
        self.load(Width::Q, r, v);
    }

    pub fn stq(&mut self, r: u8, v: Value) {
        self.store(Width::Q, r, v);
    }

    /// The X register to read integer value `v` from: its own register,
    /// or `scratch` after loading it there.
    pub fn xsrc(&mut self, v: Value, scratch: u8) -> u8 {
        if self.alloc.fold[v.index()] == Fold::Low {
            // A `trunc` whose readers read the wide value's low bits
            // (see `Fold::Low`).
            let wide = self.r.inst(v).arg(0);
            return self.xsrc(wide, scratch);
        }
        match self.home(v) {
            Home::X(h) => h,
            _ => {
                self.ldx(scratch, v);
                scratch
            }
        }
    }

    /// As [`Lowerer::xsrc`], but the constant 0 is xzr (register 31):
    /// only for operands where 31 means the zero register (stored
    /// values, `csel` and other shifted-register operands, never a base
    /// or an immediate form's source).
    pub fn xsrc_zr(&mut self, v: Value, scratch: u8) -> u8 {
        if self.const_value(v) == Some(0) {
            31
        } else {
            self.xsrc(v, scratch)
        }
    }

    /// The X register to compute integer result `v` into: its own
    /// register, or `scratch` (then [`Lowerer::xdone`] stores it).
    pub fn xdst(&self, v: Value, scratch: u8) -> u8 {
        match self.home(v) {
            Home::X(h) => h,
            _ => scratch,
        }
    }

    /// Finishes a result computed into `r` = [`Lowerer::xdst`].
    pub fn xdone(&mut self, v: Value, r: u8) {
        self.stx(r, v);
    }

    /// The V register to read float/vector value `v` from (its own, or
    /// `scratch` loaded at the width of its type).
    pub fn vsrc(&mut self, v: Value, scratch: u8) -> u8 {
        match self.home(v) {
            Home::V(h) => h,
            _ => {
                let w = Width::fp(self.ty_of(v));
                self.load(w, scratch, v);
                scratch
            }
        }
    }

    /// The V register to compute float/vector result `v` into.
    pub fn vdst(&self, v: Value, scratch: u8) -> u8 {
        match self.home(v) {
            Home::V(h) => h,
            _ => scratch,
        }
    }

    /// Finishes a result computed into `r` = [`Lowerer::vdst`].
    pub fn vdone(&mut self, v: Value, r: u8) {
        let w = Width::fp(self.ty_of(v));
        self.store(w, r, v);
    }

    /// The integer constant `v` is, if it is one.
    pub fn const_value(&self, v: Value) -> Option<u64> {
        match self.home(v) {
            Home::Const(c) => Some(c),
            _ => None,
        }
    }

    /// `X(r) = imm`, in one to four instructions.
    pub fn mov64(&mut self, r: u8, imm: u64) {
        if imm == 0 {
            a64!(self.ops; movz X(r), #0);
            return;
        }
        if (!imm) >> 16 == 0 {
            let part = (!imm) as u32;
            a64!(self.ops; movn X(r), #part);
            return;
        }
        let mut first = true;
        for i in 0..4u32 {
            let part = ((imm >> (16 * i)) & 0xffff) as u32;
            if part == 0 {
                continue;
            }
            match (first, i) {
                (true, 0) => a64!(self.ops; movz X(r), #part),
                (true, 1) => a64!(self.ops; movz X(r), #part, lsl #16),
                (true, 2) => a64!(self.ops; movz X(r), #part, lsl #32),
                (true, _) => a64!(self.ops; movz X(r), #part, lsl #48),
                (false, 0) => a64!(self.ops; movk X(r), #part),
                (false, 1) => a64!(self.ops; movk X(r), #part, lsl #16),
                (false, 2) => a64!(self.ops; movk X(r), #part, lsl #32),
                (false, _) => a64!(self.ops; movk X(r), #part, lsl #48),
            }
            first = false;
        }
    }

    /// Zero-extends the low `bits` of `X(r)` in place (no-op at 64).
    pub fn mask(&mut self, r: u8, bits: u32) {
        match bits {
            1 => a64!(self.ops; and XSP(r), X(r), #1),
            8 => a64!(self.ops; and XSP(r), X(r), #0xff),
            16 => a64!(self.ops; and XSP(r), X(r), #0xffff),
            32 => a64!(self.ops; mov W(r), W(r)),
            64 => {}
            _ => panic!("no integer width {bits}"),
        }
    }

    /// Sign-extends the low `bits` of `X(r)` to 64 bits in place.
    pub fn sext(&mut self, r: u8, bits: u32) {
        match bits {
            1 => a64!(self.ops; sbfx X(r), X(r), #0, #1),
            8 => a64!(self.ops; sxtb X(r), W(r)),
            16 => a64!(self.ops; sxth X(r), W(r)),
            32 => a64!(self.ops; sxtw X(r), W(r)),
            64 => {}
            _ => panic!("no integer width {bits}"),
        }
    }

    /// `X(d) = X(s)` sign-extended from `bits`.
    pub fn sext_to(&mut self, d: u8, s: u8, bits: u32) {
        a64!(self.ops; mov X(d), X(s));
        self.sext(d, bits);
    }

    /// `X(d) = cc ? 1 : 0`.
    pub fn cset(&mut self, d: u8, cc: Cc) {
        match cc {
            Cc::Eq => a64!(self.ops; cset X(d), eq),
            Cc::Ne => a64!(self.ops; cset X(d), ne),
            Cc::Hs => a64!(self.ops; cset X(d), hs),
            Cc::Lo => a64!(self.ops; cset X(d), lo),
            Cc::Mi => a64!(self.ops; cset X(d), mi),
            Cc::Pl => a64!(self.ops; cset X(d), pl),
            Cc::Vs => a64!(self.ops; cset X(d), vs),
            Cc::Vc => a64!(self.ops; cset X(d), vc),
            Cc::Hi => a64!(self.ops; cset X(d), hi),
            Cc::Ls => a64!(self.ops; cset X(d), ls),
            Cc::Ge => a64!(self.ops; cset X(d), ge),
            Cc::Lt => a64!(self.ops; cset X(d), lt),
            Cc::Gt => a64!(self.ops; cset X(d), gt),
            Cc::Le => a64!(self.ops; cset X(d), le),
        }
    }

    /// `b.cc label`.
    pub fn b_cond(&mut self, cc: Cc, label: DynamicLabel) {
        match cc {
            Cc::Eq => a64!(self.ops; b.eq =>label),
            Cc::Ne => a64!(self.ops; b.ne =>label),
            Cc::Hs => a64!(self.ops; b.hs =>label),
            Cc::Lo => a64!(self.ops; b.lo =>label),
            Cc::Mi => a64!(self.ops; b.mi =>label),
            Cc::Pl => a64!(self.ops; b.pl =>label),
            Cc::Vs => a64!(self.ops; b.vs =>label),
            Cc::Vc => a64!(self.ops; b.vc =>label),
            Cc::Hi => a64!(self.ops; b.hi =>label),
            Cc::Ls => a64!(self.ops; b.ls =>label),
            Cc::Ge => a64!(self.ops; b.ge =>label),
            Cc::Lt => a64!(self.ops; b.lt =>label),
            Cc::Gt => a64!(self.ops; b.gt =>label),
            Cc::Le => a64!(self.ops; b.le =>label),
        }
    }

    /// `X(d) = cc ? X(a) : X(b)`.
    pub fn csel(&mut self, d: u8, a: u8, b: u8, cc: Cc) {
        match cc {
            Cc::Eq => a64!(self.ops; csel X(d), X(a), X(b), eq),
            Cc::Ne => a64!(self.ops; csel X(d), X(a), X(b), ne),
            Cc::Hs => a64!(self.ops; csel X(d), X(a), X(b), hs),
            Cc::Lo => a64!(self.ops; csel X(d), X(a), X(b), lo),
            Cc::Mi => a64!(self.ops; csel X(d), X(a), X(b), mi),
            Cc::Pl => a64!(self.ops; csel X(d), X(a), X(b), pl),
            Cc::Vs => a64!(self.ops; csel X(d), X(a), X(b), vs),
            Cc::Vc => a64!(self.ops; csel X(d), X(a), X(b), vc),
            Cc::Hi => a64!(self.ops; csel X(d), X(a), X(b), hi),
            Cc::Ls => a64!(self.ops; csel X(d), X(a), X(b), ls),
            Cc::Ge => a64!(self.ops; csel X(d), X(a), X(b), ge),
            Cc::Lt => a64!(self.ops; csel X(d), X(a), X(b), lt),
            Cc::Gt => a64!(self.ops; csel X(d), X(a), X(b), gt),
            Cc::Le => a64!(self.ops; csel X(d), X(a), X(b), le),
        }
    }

    /// Calls the Rust function whose address is at `ctx_off` in the JIT
    /// context, with arguments already in x0-x3. Clobbers every
    /// caller-saved register except those holding values live across
    /// the instruction being lowered, and the pinned guest XMM registers,
    /// which it saves and restores on the stack around the call (every
    /// call from translated code goes through here).
    pub fn call_ctx(&mut self, ctx_off: u32) {
        a64!(self.ops
            ; sub sp, sp, #PINNED_V_BYTES
            ; mov x17, sp
        );
        transfer_pinned_v(&mut self.ops, false, 17);
        let live = self.save_live();
        a64!(self.ops
            ; ldr x16, [X(CTX_REG), #ctx_off]
            ; blr x16
        );
        self.restore_live(live);
        a64!(self.ops; mov x17, sp);
        transfer_pinned_v(&mut self.ops, true, 17);
        a64!(self.ops; add sp, sp, #PINNED_V_BYTES);
    }

    /// Calls the leaf routine at `entry` (see `crate::jit::leaf`: it
    /// keeps the pinned registers and x30's callers), saving only the
    /// values live across the instruction in caller-saved registers;
    /// `ordered`: between full barriers, so that its plain accesses stay
    /// after the guest's earlier ones and before its later ones (x86-TSO).
    pub fn call_leaf(&mut self, entry: usize, ordered: bool) {
        let live = self.save_live();
        if ordered {
            a64!(self.ops; dmb ish);
        }
        a64!(self.ops; bl extern entry);
        if ordered {
            a64!(self.ops; dmb ish);
        }
        self.restore_live(live);
    }

    /// Pushes the caller-saved X and V registers live across the
    /// instruction being lowered; returns them for [`Self::restore_live`].
    fn save_live(&mut self) -> (Vec<u8>, Vec<u8>) {
        let (xs, vs) = self.live_caller_saved();
        for pair in xs.chunks(2) {
            match *pair {
                [a, b] => a64!(self.ops; stp X(a), X(b), [sp, #-16]!),
                [a] => a64!(self.ops; str X(a), [sp, #-16]!),
                _ => {}
            }
        }
        for &q in &vs {
            a64!(self.ops; str Q(q), [sp, #-16]!);
        }
        (xs, vs)
    }

    /// Pops what [`Self::save_live`] pushed.
    fn restore_live(&mut self, (xs, vs): (Vec<u8>, Vec<u8>)) {
        for &q in vs.iter().rev() {
            a64!(self.ops; ldr Q(q), [sp], #16);
        }
        for pair in xs.chunks(2).rev() {
            match *pair {
                [a, b] => a64!(self.ops; ldp X(a), X(b), [sp], #16),
                [a] => a64!(self.ops; ldr X(a), [sp], #16),
                _ => {}
            }
        }
    }

    /// The caller-saved X and V registers holding values defined before
    /// the current instruction and read by it or later (but the pinned V
    /// registers, which `call_ctx` saves whole).
    fn live_caller_saved(&self) -> (Vec<u8>, Vec<u8>) {
        let at = self.alloc.pos[self.current as usize];
        let (mut xs, mut vs) = (Vec::new(), Vec::new());
        for (i, h) in self.alloc.home.iter().enumerate() {
            if !(self.alloc.pos[i] < at && at <= self.alloc.end[i]) {
                continue;
            }
            match *h {
                Home::X(x) if caller_saved_x(x) => xs.push(x),
                Home::V(x) if !PINNED_V_HOSTS.contains(&x) => vs.push(x),
                _ => {}
            }
        }
        (xs, vs)
    }

    /// Allocates the frame: the first code of the region (and the target
    /// of chained branches). Slots that fit the trampoline's spill area
    /// need none.
    pub fn prologue(&mut self) {
        let frame = self.own_frame();
        self.adjust_sp(frame, false);
    }

    /// Frees the frame before leaving the region.
    pub fn pop_frame(&mut self) {
        let frame = self.own_frame();
        self.adjust_sp(frame, true);
    }

    /// The bytes of stack the region moves sp by: none when its slots fit
    /// in the spill area the trampoline reserved, else all of them.
    fn own_frame(&self) -> u32 {
        if self.alloc.frame <= SPILL_AREA {
            0
        } else {
            self.alloc.frame
        }
    }

    fn adjust_sp(&mut self, bytes: u32, up: bool) {
        let (upper, lower) = (bytes >> 12, bytes & 0xfff);
        if upper != 0 {
            if up {
                a64!(self.ops; add sp, sp, #upper, lsl #12);
            } else {
                a64!(self.ops; sub sp, sp, #upper, lsl #12);
            }
        }
        if lower != 0 {
            if up {
                a64!(self.ops; add sp, sp, #lower);
            } else {
                a64!(self.ops; sub sp, sp, #lower);
            }
        }
    }
}
