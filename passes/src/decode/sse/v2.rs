//! The x86-64-v2 vector instructions that are not one table row: SSE3
//! (duplicating moves, horizontal and alternating float arithmetic),
//! SSSE3 (absolute value, sign, horizontal integer arithmetic, byte
//! alignment, the rounding and unsigned-by-signed multiplies) and SSE4.1
//! (blends, lane extract and insert, widening moves, the test into flags,
//! dot products, minimum position, sums of absolute differences), each
//! composed of the IR's lane-wise and whole-vector ops.

use aarchx_ir::{IntCond, Opcode, Type, Value};
use iced_x86::Mnemonic;

use super::super::lift::Outcome;
use super::super::operand::{int_type, L};
use super::shape;

/// shufps/shufpd selectors taking the even (`EVEN`) or odd lanes of `a`
/// then of `b`: the horizontal pairs of four f32 and of two f64 lanes.
const EVEN4: u16 = 0x88;
const ODD4: u16 = 0xdd;
const EVEN2: u16 = 0;
const ODD2: u16 = 3;

/// The 128-bit mask whose `lane_bits`-wide lanes are all ones where bit i
/// of `bits` is set.
fn lane_mask(lane_bits: u32, bits: u16) -> u128 {
    let ones = if lane_bits == 128 { u128::MAX } else { (1u128 << lane_bits) - 1 };
    (0..128 / lane_bits).filter(|i| bits >> i & 1 != 0).fold(0, |m, i| m | ones << (i * lane_bits))
}

impl L<'_, '_> {
    /// Lifts the v2 instructions of this file; anything else is unsupported.
    pub(super) fn xv2(&mut self, m: Mnemonic) -> Outcome {
        use Mnemonic as M;
        use Type as T;
        match m {
            M::Lddqu | M::Movntdqa => return self.xmov128(),
            M::Movddup => {
                let s = self.xget(1);
                let r = self.bin(Opcode::UnpackLo, T::I64X2, s, s);
                self.xset(0, r);
            }
            M::Movshdup | M::Movsldup => {
                let s = self.xget(1);
                let r = self.b.unary_imm(Opcode::Shuffle, T::I32X4, s, if m == M::Movshdup { 0xf5 } else { 0xa0 });
                self.xset(0, r);
            }
            M::Haddps => self.xhorizontal_float(Opcode::Fadd, T::F32X4),
            M::Haddpd => self.xhorizontal_float(Opcode::Fadd, T::F64X2),
            M::Hsubps => self.xhorizontal_float(Opcode::Fsub, T::F32X4),
            M::Hsubpd => self.xhorizontal_float(Opcode::Fsub, T::F64X2),
            M::Addsubps => self.xaddsub(T::F32X4),
            M::Addsubpd => self.xaddsub(T::F64X2),
            M::Pabsb => self.xabs(T::I8X16),
            M::Pabsw => self.xabs(T::I16X8),
            M::Pabsd => self.xabs(T::I32X4),
            M::Psignb => self.xsign(T::I8X16),
            M::Psignw => self.xsign(T::I16X8),
            M::Psignd => self.xsign(T::I32X4),
            M::Palignr => self.xalignr(),
            M::Phaddd => self.xhorizontal_d(Opcode::Add),
            M::Phsubd => self.xhorizontal_d(Opcode::Sub),
            M::Phaddw => self.xhorizontal_w(Opcode::Add, false),
            M::Phsubw => self.xhorizontal_w(Opcode::Sub, false),
            M::Phaddsw => self.xhorizontal_w(Opcode::Add, true),
            M::Phsubsw => self.xhorizontal_w(Opcode::Sub, true),
            M::Pmaddubsw => self.xmaddubsw(),
            M::Pmulhrsw => self.xmulhrsw(),
            M::Pblendw => self.xblend_imm(16),
            M::Blendps => self.xblend_imm(32),
            M::Blendpd => self.xblend_imm(64),
            M::Pblendvb => self.xblendv(T::I8X16),
            M::Blendvps => self.xblendv(T::I32X4),
            M::Blendvpd => self.xblendv(T::I64X2),
            M::Ptest => return self.vtest(None),
            M::Pextrb => self.xextract(T::I8),
            M::Pextrd | M::Extractps => self.xextract(T::I32),
            M::Pextrq => self.xextract(T::I64),
            M::Pinsrb => self.xinsert(T::I8),
            M::Pinsrd => self.xinsert(T::I32),
            M::Pinsrq => self.xinsert(T::I64),
            M::Insertps => self.xinsertps(),
            M::Pmovzxbw => self.xwiden(T::I8, 1, false),
            M::Pmovzxbd => self.xwiden(T::I8, 2, false),
            M::Pmovzxbq => self.xwiden(T::I8, 3, false),
            M::Pmovzxwd => self.xwiden(T::I16, 1, false),
            M::Pmovzxwq => self.xwiden(T::I16, 2, false),
            M::Pmovzxdq => self.xwiden(T::I32, 1, false),
            M::Pmovsxbw => self.xwiden(T::I8, 1, true),
            M::Pmovsxbd => self.xwiden(T::I8, 2, true),
            M::Pmovsxbq => self.xwiden(T::I8, 3, true),
            M::Pmovsxwd => self.xwiden(T::I16, 1, true),
            M::Pmovsxwq => self.xwiden(T::I16, 2, true),
            M::Pmovsxdq => self.xwiden(T::I32, 1, true),
            M::Pmuldq => self.xmuldq(),
            M::Dpps => self.xdot(T::F32),
            M::Dppd => self.xdot(T::F64),
            M::Phminposuw => self.xminpos(),
            M::Mpsadbw => self.xmpsadbw(),
            M::Pcmpistri => self.xstring_compare(None, true),
            M::Pcmpistrm => self.xstring_compare(None, false),
            M::Pcmpestri => self.xstring_compare(Some(T::I32), true),
            M::Pcmpestri64 => self.xstring_compare(Some(T::I64), true),
            M::Pcmpestrm => self.xstring_compare(Some(T::I32), false),
            M::Pcmpestrm64 => self.xstring_compare(Some(T::I64), false),
            _ => return Outcome::Unsupported,
        }
        Outcome::Next
    }

    /// The vector constant `bits`.
    pub(super) fn xconst(&mut self, bits: u128) -> Value {
        let lo = self.c(Type::I64, bits as u64);
        let v = self.un(Opcode::Splat, Type::I64X2, lo);
        if (bits >> 64) as u64 == bits as u64 {
            return v;
        }
        let hi = self.c(Type::I64, (bits >> 64) as u64);
        self.xset_lane(v, hi, 1)
    }

    /// Every lane of shape `ty` set to the integer `x`.
    pub(super) fn xsplat(&mut self, ty: Type, x: u64) -> Value {
        let lane = int_type(ty.lane_bits() as usize / 8);
        let c = self.c(lane, x);
        self.un(Opcode::Splat, ty, c)
    }

    /// `op.ty v, n`: a lane shift by the constant `n`.
    pub(super) fn xshift_by(&mut self, op: Opcode, ty: Type, v: Value, n: u32) -> Value {
        let amount = self.c(Type::I8, u64::from(n));
        self.bin(op, ty, v, amount)
    }

    /// `b` where `mask` is set, else `a`.
    pub(super) fn xblend(&mut self, a: Value, b: Value, mask: Value) -> Value {
        let from_b = self.bin(Opcode::And, Type::V128, b, mask);
        let from_a = self.bin(Opcode::AndNot, Type::V128, a, mask);
        self.bin(Opcode::Or, Type::V128, from_a, from_b)
    }

    /// The destination and the source operand as vectors.
    pub(super) fn xpair(&mut self) -> (Value, Value) {
        let b = self.xget(1);
        let a = self.xget(0);
        (a, b)
    }

    /// haddp*/hsubp*: `op` on the pairs of adjacent lanes of dst, then of src.
    fn xhorizontal_float(&mut self, op: Opcode, ty: Type) {
        let (a, b) = self.xpair();
        let (even, odd) = if ty == Type::F32X4 { (EVEN4, ODD4) } else { (EVEN2, ODD2) };
        let e = self.b.binary_imm(Opcode::Shuffle2, ty, a, b, even);
        let o = self.b.binary_imm(Opcode::Shuffle2, ty, a, b, odd);
        let r = self.bin(op, ty, e, o);
        self.xset(0, r);
    }

    /// addsubp*: even lanes subtract, odd lanes add. Each operation runs
    /// on its own lanes only (the others are +0), so only they raise
    /// exceptions.
    fn xaddsub(&mut self, ty: Type) {
        let (a, b) = self.xpair();
        let even = self.xconst(lane_mask(ty.lane_bits(), 0x55));
        let ae = self.bin(Opcode::And, Type::V128, a, even);
        let be = self.bin(Opcode::And, Type::V128, b, even);
        let ao = self.bin(Opcode::AndNot, Type::V128, a, even);
        let bo = self.bin(Opcode::AndNot, Type::V128, b, even);
        let sub = self.bin(Opcode::Fsub, ty, ae, be);
        let add = self.bin(Opcode::Fadd, ty, ao, bo);
        let r = self.xblend(add, sub, even);
        self.xset(0, r);
    }

    /// pabs*: `max(x, 0 - x)` (the minimum stays itself, as on x86).
    fn xabs(&mut self, ty: Type) {
        let s = self.xget(1);
        let zero = self.xsplat(ty, 0);
        let n = self.bin(Opcode::Sub, ty, zero, s);
        let r = self.bin(Opcode::Smax, ty, s, n);
        self.xset(0, r);
    }

    /// psign*: dst negated where src is negative, zero where it is zero.
    fn xsign(&mut self, ty: Type) {
        let (a, b) = self.xpair();
        let zero = self.xsplat(ty, 0);
        let neg = self.xapply(Opcode::Icmp, ty, IntCond::Slt as u16, Some(b), zero);
        let is_zero = self.xapply(Opcode::Icmp, ty, IntCond::Eq as u16, Some(b), zero);
        let flipped = self.bin(Opcode::Xor, Type::V128, a, neg);
        let negated = self.bin(Opcode::Sub, ty, flipped, neg);
        let r = self.bin(Opcode::AndNot, Type::V128, negated, is_zero);
        self.xset(0, r);
    }

    /// palignr: bytes imm.. of the 32 bytes dst:src, zero beyond them.
    fn xalignr(&mut self) {
        let n = self.ximm8().unwrap_or(0);
        let (a, b) = self.xpair();
        let r = if n < 16 {
            let low = self.b.unary_imm(Opcode::ByteShr, Type::V128, b, n);
            let high = self.b.unary_imm(Opcode::ByteShl, Type::V128, a, 16 - n);
            self.bin(Opcode::Or, Type::V128, low, high)
        } else {
            self.b.unary_imm(Opcode::ByteShr, Type::V128, a, (n - 16).min(16))
        };
        self.xset(0, r);
    }

    /// phaddd/phsubd: `op` on adjacent 32-bit pairs of dst, then of src.
    fn xhorizontal_d(&mut self, op: Opcode) {
        let (a, b) = self.xpair();
        let e = self.b.binary_imm(Opcode::Shuffle2, Type::I32X4, a, b, EVEN4);
        let o = self.b.binary_imm(Opcode::Shuffle2, Type::I32X4, a, b, ODD4);
        let r = self.bin(op, Type::I32X4, e, o);
        self.xset(0, r);
    }

    /// phaddw/phsubw (wrapping) and phaddsw/phsubsw (`saturate`): each
    /// pair of words is computed in its 32-bit lane (widened without or
    /// with sign) and the lanes of dst then src narrowed back to words.
    fn xhorizontal_w(&mut self, op: Opcode, saturate: bool) {
        let (a, b) = self.xpair();
        let mut halves = [a, b];
        for x in halves.iter_mut() {
            let (even, odd) = if saturate {
                let up = self.xshift_by(Opcode::Shl, Type::I32X4, *x, 16);
                (self.xshift_by(Opcode::Ashr, Type::I32X4, up, 16), self.xshift_by(Opcode::Ashr, Type::I32X4, *x, 16))
            } else {
                let words = self.xsplat(Type::I32X4, 0xffff);
                (self.bin(Opcode::And, Type::V128, *x, words), self.xshift_by(Opcode::Lshr, Type::I32X4, *x, 16))
            };
            *x = self.bin(op, Type::I32X4, even, odd);
            if !saturate {
                // The low word, wrapped: in range for an unsigned narrow.
                let words = self.xsplat(Type::I32X4, 0xffff);
                *x = self.bin(Opcode::And, Type::V128, *x, words);
            }
        }
        let narrow = if saturate { Opcode::NarrowS } else { Opcode::NarrowU };
        let r = self.bin(narrow, Type::I16X8, halves[0], halves[1]);
        self.xset(0, r);
    }

    /// pmaddubsw: unsigned bytes of dst times signed bytes of src, adjacent
    /// products summed into words with signed saturation (each product
    /// fits a word).
    fn xmaddubsw(&mut self) {
        let (a, b) = self.xpair();
        let bytes = self.xsplat(Type::I16X8, 0xff);
        let ae = self.bin(Opcode::And, Type::V128, a, bytes);
        let ao = self.xshift_by(Opcode::Lshr, Type::I16X8, a, 8);
        let up = self.xshift_by(Opcode::Shl, Type::I16X8, b, 8);
        let be = self.xshift_by(Opcode::Ashr, Type::I16X8, up, 8);
        let bo = self.xshift_by(Opcode::Ashr, Type::I16X8, b, 8);
        let pe = self.bin(Opcode::Mul, Type::I16X8, ae, be);
        let po = self.bin(Opcode::Mul, Type::I16X8, ao, bo);
        let r = self.bin(Opcode::AddSatS, Type::I16X8, pe, po);
        self.xset(0, r);
    }

    /// pmulhrsw: bits 30..15 of each signed word product rounded at bit
    /// 14: `(p >> 15) + (p >> 14 & 1)`, from the product's two halves.
    fn xmulhrsw(&mut self) {
        let (a, b) = self.xpair();
        let lo = self.bin(Opcode::Mul, Type::I16X8, a, b);
        let hi = self.bin(Opcode::Smulh, Type::I16X8, a, b);
        let hi1 = self.xshift_by(Opcode::Shl, Type::I16X8, hi, 1);
        let lo15 = self.xshift_by(Opcode::Lshr, Type::I16X8, lo, 15);
        let shifted = self.bin(Opcode::Or, Type::V128, hi1, lo15);
        let lo14 = self.xshift_by(Opcode::Lshr, Type::I16X8, lo, 14);
        let one = self.xsplat(Type::I16X8, 1);
        let round = self.bin(Opcode::And, Type::V128, lo14, one);
        let r = self.bin(Opcode::Add, Type::I16X8, shifted, round);
        self.xset(0, r);
    }

    /// pblendw, blendps, blendpd: lane i from src where imm bit i is set.
    pub(super) fn xblend_imm(&mut self, lane_bits: u32) {
        let imm = self.ximm8().unwrap_or(0);
        let (a, b) = self.xpair();
        let mask = self.xconst(lane_mask(lane_bits, imm));
        let r = self.xblend(a, b, mask);
        self.xset(0, r);
    }

    /// pblendvb, blendvps, blendvpd: lane i from src where the top bit of
    /// lane i of the selector (xmm0; VEX: the fourth operand) is set.
    fn xblendv(&mut self, ty: Type) {
        let (a, b) = self.xpair();
        let x0 = self.xblend_selector();
        let mask = self.xshift_by(Opcode::Ashr, ty, x0, ty.lane_bits() - 1);
        let r = self.xblend(a, b, mask);
        self.xset(0, r);
    }

    /// Whether the 128 bits of `v` are all zero, as an i1.
    pub(super) fn xis_zero(&mut self, v: Value) -> Value {
        let lo = self.xlane(v, Type::I64, 0);
        let hi = self.xlane(v, Type::I64, 1);
        let any = self.bin(Opcode::Or, Type::I64, lo, hi);
        let zero = self.c(Type::I64, 0);
        self.icmp(IntCond::Eq, Type::I64, any, zero)
    }

    /// pextrb/w/d/q, extractps: lane imm (of `ty` lanes) of the XMM source
    /// into a GPR, zero-extended, or into memory.
    pub(super) fn xextract(&mut self, ty: Type) {
        let n = self.ximm8().unwrap_or(0) % self.xlanes(ty);
        let v = self.xget(1);
        let x = self.xlane(v, ty, n);
        let x = if self.is_mem(0) { x } else { self.resize(x, ty, self.op_type(0)) };
        self.write(0, x);
    }

    /// pinsrb/d/q: lane imm (of `ty` lanes) of dst from a GPR's low bits
    /// or memory.
    fn xinsert(&mut self, ty: Type) {
        let n = self.ximm8().unwrap_or(0) % self.xlanes(ty);
        let x = self.read(self.src_op(1), ty);
        let d = self.xget(0);
        let r = self.xset_lane(d, x, n);
        self.xset(0, r);
    }

    /// insertps: dword imm[7:6] of an XMM source (or the m32) into lane
    /// imm[5:4] of dst, then the lanes of imm[3:0] zeroed.
    fn xinsertps(&mut self) {
        let imm = self.ximm8().unwrap_or(0);
        let x = if self.is_xreg(1) {
            let s = self.xget(1);
            self.xlane(s, Type::I32, imm >> 6 & 3)
        } else {
            self.read(self.src_op(1), Type::I32)
        };
        let d = self.xget(0);
        let ins = self.xset_lane(d, x, imm >> 4 & 3);
        let zero = self.xconst(lane_mask(32, imm & 0xf));
        let r = self.bin(Opcode::AndNot, Type::V128, ins, zero);
        self.xset(0, r);
    }

    /// pmovzx*/pmovsx*: the low lanes of `from` widened `steps` times
    /// (each doubling the lane width), without or with (`signed`) sign:
    /// each step interleaves the low lanes with zero, or with themselves
    /// and shifts the copy in the high half out arithmetically.
    fn xwiden(&mut self, from: Type, steps: u32, signed: bool) {
        let mut x = self.xget(1);
        let mut lane = from;
        for _ in 0..steps {
            let wide = int_type(lane.bits() as usize / 4);
            if signed {
                let twice = self.bin(Opcode::UnpackLo, shape(lane), x, x);
                x = self.xshift_by(Opcode::Ashr, shape(wide), twice, lane.bits());
            } else {
                let zero = self.xsplat(Type::I64X2, 0);
                x = self.bin(Opcode::UnpackLo, shape(lane), x, zero);
            }
            lane = wide;
        }
        self.xset(0, x);
    }

    /// pmuldq: the even signed dwords multiplied into quadwords.
    fn xmuldq(&mut self) {
        let (a, b) = self.xpair();
        let mut even = [a, b];
        for x in even.iter_mut() {
            let up = self.xshift_by(Opcode::Shl, Type::I64X2, *x, 32);
            *x = self.xshift_by(Opcode::Ashr, Type::I64X2, up, 32);
        }
        let r = self.bin(Opcode::Mul, Type::I64X2, even[0], even[1]);
        self.xset(0, r);
    }

    /// dpps/dppd: the products of the lanes imm[7:4] selects (the others
    /// +0, not multiplied), summed as (p0 + p1) + (p2 + p3), into the
    /// lanes imm[3:0] selects, the others zero.
    fn xdot(&mut self, lane: Type) {
        let imm = self.ximm8().unwrap_or(0);
        let ty = shape(lane);
        let (a, b) = self.xpair();
        let used = self.xconst(lane_mask(lane.bits(), imm >> 4));
        let am = self.bin(Opcode::And, Type::V128, a, used);
        let bm = self.bin(Opcode::And, Type::V128, b, used);
        let p = self.bin(Opcode::Fmul, ty, am, bm);
        let lanes: Vec<Value> = (0..ty.lanes() as u16).map(|i| self.xlane(p, lane, i)).collect();
        let pairs: Vec<Value> = lanes.chunks(2).map(|c| self.bin(Opcode::Fadd, lane, c[0], c[1])).collect();
        let sum = if pairs.len() == 2 { self.bin(Opcode::Fadd, lane, pairs[0], pairs[1]) } else { pairs[0] };
        let all = self.un(Opcode::Splat, ty, sum);
        let keep = self.xconst(lane_mask(lane.bits(), imm & 0xf));
        let r = self.bin(Opcode::And, Type::V128, all, keep);
        self.xset(0, r);
    }

    /// phminposuw: the least unsigned word of src and its (lowest) index
    /// in the two low words, the rest zero: the minimum of `word << 3 | i`.
    fn xminpos(&mut self) {
        let s = self.xget(1);
        let mut best = None;
        for i in 0..8u16 {
            let w = self.xlane(s, Type::I16, i);
            let w = self.un(Opcode::Zext, Type::I32, w);
            let key = self.xshift_key(w, i);
            best = Some(match best {
                None => key,
                Some(b) => self.bin(Opcode::Umin, Type::I32, b, key),
            });
        }
        let best = best.expect("eight words");
        let three = self.c(Type::I32, 3);
        let word = self.bin(Opcode::Lshr, Type::I32, best, three);
        let seven = self.c(Type::I32, 7);
        let index = self.bin(Opcode::And, Type::I32, best, seven);
        let sixteen = self.c(Type::I32, 16);
        let index = self.bin(Opcode::Shl, Type::I32, index, sixteen);
        let r = self.bin(Opcode::Or, Type::I32, word, index);
        let r = self.xzero_ext(r, Type::I32);
        self.xset(0, r);
    }

    /// `w << 3 | i` (an i32).
    fn xshift_key(&mut self, w: Value, i: u16) -> Value {
        let three = self.c(Type::I32, 3);
        let up = self.bin(Opcode::Shl, Type::I32, w, three);
        let i = self.c(Type::I32, u64::from(i));
        self.bin(Opcode::Or, Type::I32, up, i)
    }

    /// mpsadbw: word j is the sum of the absolute differences of dst's
    /// bytes 4*imm[2] + j .. +4 and src's bytes 4*imm[1:0] .. +4.
    fn xmpsadbw(&mut self) {
        let imm = self.ximm8().unwrap_or(0);
        let (a, b) = self.xpair();
        let four = self.xconst(0xffff_ffff);
        let bq = self.b.unary_imm(Opcode::ByteShr, Type::V128, b, 4 * (imm & 3));
        let bq = self.bin(Opcode::And, Type::V128, bq, four);
        let mut r = self.xsplat(Type::I64X2, 0);
        for j in 0..8u16 {
            let aj = self.b.unary_imm(Opcode::ByteShr, Type::V128, a, 4 * (imm >> 2 & 1) + j);
            let aj = self.bin(Opcode::And, Type::V128, aj, four);
            let sad = self.bin(Opcode::SumAbsDiff, Type::I64X2, aj, bq);
            let w = self.xlane(sad, Type::I16, 0);
            r = self.xset_lane(r, w, j);
        }
        self.xset(0, r);
    }
}
