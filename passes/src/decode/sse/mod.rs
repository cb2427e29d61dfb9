//! SSE and SSE2, the x86-64 v1 baseline: moves, packed integer, scalar and
//! packed float arithmetic, compares, shuffles and conversions; and the
//! vector instructions of x86-64-v2 (SSE3, SSSE3, SSE4.1, SSE4.2), in the
//! tables where they fit, in [`v2`] where they do not, and the string
//! compares in [`string_compare`]; their VEX forms (AVX, AVX2) through the
//! operand view of [`avx`], which also lifts FMA3 ([`fma`]), and F16C's
//! half-precision conversions in [`f16c`]; their MMX forms (mm register
//! operands) through the 64-bit operand view of [`mmx`].
//!
//! Most instructions share one of three shapes and are table-driven:
//! packed `dst = op.T(dst, src[, imm])` over the whole register
//! ([`int::packed_op`], [`float::packed_op`]), scalar `dst[0] =
//! op.T(dst[0], src)` keeping the other lanes ([`float::scalar_op`]), and
//! the lane-wise shifts ([`int::shift_op`]). The rest are moves
//! ([`moves`]) and a few float/integer bridges ([`float`]).
//!
//! The methods here name operands by their legacy (SSE) position: 0 the
//! destination, which two-operand forms also read, 1 the source. A VEX
//! form with a second source (vvvv) reads position 0 from its operand 1
//! and 1 from its operand 2 ([`L::src_op`]), and a 256-bit form runs the
//! same code once per 128-bit half ([`avx`]).
//!
//! All lifter methods share `L`'s namespace, so the ones here start with `x`.

mod avx;
mod f16c;
mod float;
mod fma;
mod int;
mod mmx;
mod moves;
mod string_compare;
mod v2;

use aarchx_ir::{InstData, Opcode, Reg, Type, Value};
use iced_x86::{EncodingKind, Mnemonic, OpKind};

use super::lift::Outcome;
use super::operand::{int_type, vec_num, L};

pub use avx::Vex;

/// The vector shape whose lanes are the scalar type `lane`.
fn shape(lane: Type) -> Type {
    match lane {
        Type::I8 => Type::I8X16,
        Type::I16 => Type::I16X8,
        Type::I32 => Type::I32X4,
        Type::I64 => Type::I64X2,
        Type::F32 => Type::F32X4,
        Type::F64 => Type::F64X2,
        t => t,
    }
}

impl L<'_, '_> {
    /// Lifts an SSE instruction or its VEX form; anything else is unsupported.
    pub fn sse(&mut self, m: Mnemonic) -> Outcome {
        if self.i.encoding() == EncodingKind::VEX {
            return self.avx(m);
        }
        if matches!(m, Mnemonic::Emms | Mnemonic::Cvtpi2ps | Mnemonic::Cvtpi2pd) || self.has_mm_operand() {
            return self.mmx(m);
        }
        self.xlift(m)
    }

    /// Lifts an SSE instruction (`m` the legacy mnemonic) through the
    /// current operand view.
    fn xlift(&mut self, m: Mnemonic) -> Outcome {
        if !self.xoperands_ok() {
            return Outcome::Unsupported;
        }
        if let Some((op, ty, aux)) = int::packed_op(m).or_else(|| float::packed_op(m)) {
            return self.xpacked(op, ty, aux);
        }
        if let Some((op, ty)) = float::scalar_op(m) {
            return self.xscalar(op, ty);
        }
        if let Some((op, ty)) = int::shift_op(m) {
            return self.xshift(op, ty);
        }
        use Mnemonic as M;
        use Type as T;
        match m {
            M::Movdqa
            | M::Movdqu
            | M::Movaps
            | M::Movups
            | M::Movapd
            | M::Movupd
            | M::Movntdq
            | M::Movntps
            | M::Movntpd => self.xmov128(),
            M::Movnti => self.mov(),
            M::Movd => self.xmov_low(T::I32),
            M::Movq => self.xmov_low(T::I64),
            M::Movss => self.xmov_lane(T::I32, 0, 0, true),
            M::Movsd => self.xmov_lane(T::I64, 0, 0, true),
            M::Movlps | M::Movlpd => self.xmov_lane(T::I64, 0, 0, false),
            M::Movhps | M::Movhpd => self.xmov_lane(T::I64, 1, 1, false),
            M::Movlhps => self.xmov_lane(T::I64, 1, 0, false),
            M::Movhlps => self.xmov_lane(T::I64, 0, 1, false),
            M::Pmovmskb => self.xmovmsk(T::I8X16),
            M::Movmskps => self.xmovmsk(T::I32X4),
            M::Movmskpd => self.xmovmsk(T::I64X2),
            M::Pextrw => {
                self.xextract(T::I16);
                Outcome::Next
            }
            M::Pinsrw => self.xpinsrw(),
            M::Maskmovq | M::Maskmovdqu => self.maskmov(),
            M::Ucomiss | M::Comiss => self.xucomi(T::F32, m == M::Comiss),
            M::Ucomisd | M::Comisd => self.xucomi(T::F64, m == M::Comisd),
            M::Cvttss2si | M::Cvtss2si => self.xcvt_to_int(T::F32, m == M::Cvtss2si),
            M::Cvttsd2si | M::Cvtsd2si => self.xcvt_to_int(T::F64, m == M::Cvtsd2si),
            _ => self.xv2(m),
        }
    }

    /// Whether every register operand is an XMM or YMM register or a GPR,
    /// or in the MMX view an mm register (so nothing else that reaches
    /// here by mnemonic).
    fn xoperands_ok(&self) -> bool {
        (0..self.i.op_count()).all(|n| {
            self.i.op_kind(n) != OpKind::Register || {
                let r = self.i.op_register(n);
                r.is_xmm() || r.is_ymm() || r.is_gpr() || (self.vex.mmx && r.is_mm())
            }
        })
    }

    /// The width in bytes of the vectors the instruction works on: 8 for
    /// an MMX form, else 16 (per half of a 256-bit form).
    fn xbytes(&self) -> u32 {
        if self.vex.mmx {
            8
        } else {
            16
        }
    }

    /// The number of lanes of scalar type `ty` in [`L::xbytes`].
    fn xlanes(&self, ty: Type) -> u16 {
        (self.xbytes() * 8 / ty.bits()) as u16
    }

    /// The instruction's operand that legacy position `n` reads.
    fn src_op(&self, n: u32) -> u32 {
        n + u32::from(self.vex.nds)
    }

    /// The instruction's operand at legacy position `n` as a destination
    /// or as a kind (register or memory): position 0 is operand 0.
    fn dst_op(&self, n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            self.src_op(n)
        }
    }

    /// Whether the instruction's operand `k` is a vector register (an mm
    /// register too, in the MMX view).
    fn is_vreg(&self, k: u32) -> bool {
        self.i.op_kind(k) == OpKind::Register && {
            let r = self.i.op_register(k);
            r.is_xmm() || r.is_ymm() || (self.vex.mmx && r.is_mm())
        }
    }

    /// Whether legacy operand `n` is a vector register.
    fn is_xreg(&self, n: u32) -> bool {
        self.is_vreg(self.dst_op(n))
    }

    /// The trailing imm8 operand, if there is one, as the current half of
    /// a 256-bit form sees it.
    fn ximm8(&self) -> Option<u16> {
        let last = self.i.op_count().checked_sub(1)?;
        (self.i.op_kind(last) == OpKind::Immediate8).then(|| self.vex.imm(self.i.immediate8()))
    }

    /// Legacy operand `n` read as a 128-bit vector (see [`L::vget`]), or
    /// what the MMX view arranged for it ([`Vex::reads`]).
    fn xget(&mut self, n: u32) -> Value {
        match self.vex.reads {
            Some(reads) if n < 2 => reads[n as usize],
            _ => self.vget(self.src_op(n)),
        }
    }

    /// The instruction's operand `k` as a 128-bit vector: an XMM register,
    /// the current half of a YMM register, or memory of the operand's size
    /// (the current half of m256, m128, or m64/m32 zero-extended), or an
    /// mm register, its value in both halves. An XMM or narrower source of a widening
    /// 256-bit form is seen by its upper half as [`L::xwiden_half`] moves it.
    fn vget(&mut self, k: u32) -> Value {
        let v = if self.is_vreg(k) {
            let r = self.i.op_register(k);
            if r.is_ymm() {
                return self.b.get(self.vex.slot(vec_num(r)));
            }
            if r.is_mm() {
                return self.mm_get(r);
            }
            self.b.get(Reg::xmm(vec_num(r)))
        } else {
            let size = self.i.memory_size().size();
            let a = self.vex_addr(size);
            match int_type(size) {
                Type::I128 => self.b.load(Type::V128, a),
                ty => {
                    let v = self.b.load(ty, a);
                    self.xzero_ext(v, ty)
                }
            }
        };
        self.xwiden_half(v)
    }

    /// Writes the vector `v` to legacy operand `n`: an XMM register (its
    /// YMM half), an mm register (the low 64 bits), or memory.
    fn xset(&mut self, n: u32, v: Value) {
        let k = self.dst_op(n);
        if self.is_vreg(k) {
            let r = self.i.op_register(k);
            if r.is_mm() {
                self.mm_set(r, v);
            } else if r.is_ymm() {
                let slot = self.vex.slot(vec_num(r));
                self.vdefer(slot, v);
            } else {
                self.xset_xmm(vec_num(r), v);
            }
        } else {
            let a = self.vex_addr(self.i.memory_size().size());
            self.b.store(Type::V128, a, v);
        }
    }

    /// Lane `i` of vector `v`, the lanes being of scalar type `ty`.
    fn xlane(&mut self, v: Value, ty: Type, i: u16) -> Value {
        self.b.unary_imm(Opcode::ExtractLane, shape(ty), v, i)
    }

    /// `v` with lane `i` (of `r`'s type) replaced by `r`.
    fn xset_lane(&mut self, v: Value, r: Value, i: u16) -> Value {
        let ty = self.b.region.value_type(r);
        self.b.binary_imm(Opcode::InsertLane, shape(ty), v, r, i)
    }

    /// The scalar `ty` of operand `n`: lane 0 of an XMM register, a GPR, or memory.
    fn xlow(&mut self, n: u32, ty: Type) -> Value {
        let k = self.src_op(n);
        if self.is_vreg(k) {
            let v = self.vget(k);
            self.xlane(v, ty, 0)
        } else {
            self.read(k, ty)
        }
    }

    /// The vector whose lane 0 is the integer `v` of type `ty`, the rest zero.
    fn xzero_ext(&mut self, v: Value, ty: Type) -> Value {
        let zero = self.c(ty, 0);
        let z = self.un(Opcode::Splat, shape(ty), zero);
        self.xset_lane(z, v, 0)
    }

    /// The aux field of `op` for this instruction: the table's `aux` with
    /// the imm8 operand merged in (compare predicates use imm8 bits 2:0;
    /// byte shifts of 16 or more clear the register).
    fn xaux(&self, op: Opcode, aux: u16) -> u16 {
        match (op, self.ximm8()) {
            (_, None) => aux,
            // VEX compares have 32 predicates ([`L::xfcmp`]).
            (Opcode::Fcmp, Some(p)) => p & if self.i.encoding() == EncodingKind::VEX { 31 } else { 7 },
            (Opcode::ByteShl | Opcode::ByteShr, Some(n)) => n.min(16),
            // pclmulqdq reads imm8 bits 0 and 4 only.
            (Opcode::Clmul, Some(imm)) => imm & 0x11,
            (_, Some(imm)) => aux | imm,
        }
    }

    /// `op.ty` on `a` (the destination, for two-operand ops) and `b` (the
    /// source). `and_not` takes them reversed: x86's andn is `!dst & src`.
    fn xapply(&mut self, op: Opcode, ty: Type, aux: u16, a: Option<Value>, b: Value) -> Value {
        if let (Opcode::Fcmp, Some(a)) = (op, a) {
            return self.xfcmp(ty, aux, a, b);
        }
        let args = match a {
            None => [b.0, 0, 0],
            Some(a) if op == Opcode::AndNot => [b.0, a.0, 0],
            Some(a) => [a.0, b.0, 0],
        };
        self.b.push(InstData { op, ty, aux, args })
    }

    /// `dst = op.ty(dst, src)`, or `dst = op.ty(src)` for one-operand ops;
    /// the source is an XMM register or memory (or the destination itself
    /// when the only other operand is an immediate, as for pslldq).
    fn xpacked(&mut self, op: Opcode, ty: Type, aux: u16) -> Outcome {
        let aux = self.xaux(op, aux);
        let src = u32::from(self.i.op_kind(self.src_op(1)) != OpKind::Immediate8);
        let b = self.xget(src);
        let a = (op.format().value_args() == 2).then(|| self.xget(0));
        let r = self.xapply(op, ty, aux, a, b);
        self.xset(0, r);
        Outcome::Next
    }

    /// `dst[0] = op.ty(dst[0], src)`, the other lanes of dst kept; src is
    /// lane 0 of an XMM register, memory, or (int to float) a GPR. Compare
    /// results become an all-ones or zero mask of the lane's width.
    fn xscalar(&mut self, op: Opcode, ty: Type) -> Outcome {
        let src_ty = match op {
            Opcode::Fconvert if ty == Type::F64 => Type::F32,
            Opcode::Fconvert => Type::F64,
            Opcode::SintToF => self.op_type(self.src_op(1)),
            _ => ty,
        };
        let aux = self.xaux(op, 0);
        let b = self.xlow(1, src_ty);
        let d = self.xget(0);
        let a = (op.format().value_args() == 2).then(|| self.xlane(d, ty, 0));
        let mut r = self.xapply(op, ty, aux, a, b);
        if op == Opcode::Fcmp {
            r = self.un(Opcode::Sext, int_type(ty.bits() as usize / 8), r);
        }
        let v = self.xset_lane(d, r, 0);
        self.xset(0, v);
        Outcome::Next
    }
}
