//! Integer vector ops on NEON (lane-wise arithmetic, compares, shifts by
//! a scalar amount) and the ops that move data between lanes or change
//! the lane shape (splat, lane extract/insert, sign masks, shuffles,
//! interleaves, narrows, byte shifts, the SSE2 widening ops and the
//! byte table lookup).
//! `v128` is treated as two 64-bit lanes, as the interpreter does.
//!
//! Declined: vector division and rotates, `avg_u` on 64-bit lanes, the
//! bit counts other than `popcnt.i8x16` and `clz` on lanes up to 32 bits,
//! `bswap` and `parity` on vectors.

use aarchx_ir::{InstData, IntCond, Opcode, Type, Value};
use dynasmrt::DynasmApi;

use super::alloc::Home;
use super::frame::{T0, T1, T2, VT0, VT1};
use super::{a64, Decline, Lowerer};

/// `$op` on all three registers with the arrangement of `$lane` bits
/// (8: 16B, 16: 8H, 32: 4S, 64: 2D).
macro_rules! v3 {
    ($s:expr, $lane:expr, $op:ident, $d:expr, $a:expr, $b:expr) => {
        match $lane {
            8 => a64!($s.ops; $op V($d).B16, V($a).B16, V($b).B16),
            16 => a64!($s.ops; $op V($d).H8, V($a).H8, V($b).H8),
            32 => a64!($s.ops; $op V($d).S4, V($a).S4, V($b).S4),
            _ => a64!($s.ops; $op V($d).D2, V($a).D2, V($b).D2),
        }
    };
}

/// As [`v3`] for ops without a 2D form (the caller handles 64-bit lanes).
macro_rules! v3_bhs {
    ($s:expr, $lane:expr, $op:ident, $d:expr, $a:expr, $b:expr) => {
        match $lane {
            8 => a64!($s.ops; $op V($d).B16, V($a).B16, V($b).B16),
            16 => a64!($s.ops; $op V($d).H8, V($a).H8, V($b).H8),
            _ => a64!($s.ops; $op V($d).S4, V($a).S4, V($b).S4),
        }
    };
}

impl Lowerer<'_> {
    pub(super) fn vector_op(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        let ok = match d.op.format() {
            aarchx_ir::Format::Binary if !is_shape_op(d.op) => self.vector_binary(v, d),
            aarchx_ir::Format::Unary if !is_shape_op(d.op) => self.vector_unary(v, d),
            aarchx_ir::Format::IntCompare => self.vector_icmp(v, d),
            _ => self.shape_op(v, d),
        };
        if ok {
            Ok(())
        } else {
            Err(self.decline(d))
        }
    }

    fn vector_binary(&mut self, v: Value, d: &InstData) -> bool {
        let lane = d.ty.lane_bits();
        if matches!(d.op, Opcode::Shl | Opcode::Lshr | Opcode::Ashr) {
            return self.vector_shift(v, d);
        }
        let (a, b, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
        match d.op {
            Opcode::Add => v3!(self, lane, add, r, a, b),
            Opcode::Sub => v3!(self, lane, sub, r, a, b),
            Opcode::And => a64!(self.ops; and V(r).B16, V(a).B16, V(b).B16),
            Opcode::Or => a64!(self.ops; orr V(r).B16, V(a).B16, V(b).B16),
            Opcode::Xor => a64!(self.ops; eor V(r).B16, V(a).B16, V(b).B16),
            Opcode::AndNot => a64!(self.ops; bic V(r).B16, V(a).B16, V(b).B16),
            Opcode::AddSatU => v3!(self, lane, uqadd, r, a, b),
            Opcode::AddSatS => v3!(self, lane, sqadd, r, a, b),
            Opcode::SubSatU => v3!(self, lane, uqsub, r, a, b),
            Opcode::SubSatS => v3!(self, lane, sqsub, r, a, b),
            Opcode::Mul | Opcode::Umulh | Opcode::Smulh if lane == 64 => {
                // No 64-bit lane multiply on NEON: one lane at a time.
                for i in 0..2u32 {
                    a64!(self.ops
                        ; umov X(T0), V(a).D[i]
                        ; umov X(T1), V(b).D[i]
                    );
                    match d.op {
                        Opcode::Mul => a64!(self.ops; mul X(T2), X(T0), X(T1)),
                        Opcode::Umulh => a64!(self.ops; umulh X(T2), X(T0), X(T1)),
                        _ => a64!(self.ops; smulh X(T2), X(T0), X(T1)),
                    }
                    a64!(self.ops; ins V(r).D[i], X(T2));
                }
            }
            Opcode::Mul => v3_bhs!(self, lane, mul, r, a, b),
            Opcode::Umulh | Opcode::Smulh => {
                // Widening products of the low and high halves, then the
                // high half of each product.
                let signed = d.op == Opcode::Smulh;
                match (lane, signed) {
                    (8, false) => {
                        a64!(self.ops; umull V(VT0).H8, V(a).B8, V(b).B8; umull2 V(VT1).H8, V(a).B16, V(b).B16)
                    }
                    (8, true) => {
                        a64!(self.ops; smull V(VT0).H8, V(a).B8, V(b).B8; smull2 V(VT1).H8, V(a).B16, V(b).B16)
                    }
                    (16, false) => {
                        a64!(self.ops; umull V(VT0).S4, V(a).H4, V(b).H4; umull2 V(VT1).S4, V(a).H8, V(b).H8)
                    }
                    (16, true) => a64!(self.ops; smull V(VT0).S4, V(a).H4, V(b).H4; smull2 V(VT1).S4, V(a).H8, V(b).H8),
                    (_, false) => a64!(self.ops; umull V(VT0).D2, V(a).S2, V(b).S2; umull2 V(VT1).D2, V(a).S4, V(b).S4),
                    (_, true) => a64!(self.ops; smull V(VT0).D2, V(a).S2, V(b).S2; smull2 V(VT1).D2, V(a).S4, V(b).S4),
                }
                v3_bhs!(self, lane, uzp2, r, VT0, VT1);
            }
            Opcode::Umin | Opcode::Umax | Opcode::Smin | Opcode::Smax if lane == 64 => {
                // Mask of lanes where a wins, then select.
                match d.op {
                    Opcode::Umin => a64!(self.ops; cmhi V(r).D2, V(b).D2, V(a).D2),
                    Opcode::Umax => a64!(self.ops; cmhi V(r).D2, V(a).D2, V(b).D2),
                    Opcode::Smin => a64!(self.ops; cmgt V(r).D2, V(b).D2, V(a).D2),
                    _ => a64!(self.ops; cmgt V(r).D2, V(a).D2, V(b).D2),
                }
                a64!(self.ops; bsl V(r).B16, V(a).B16, V(b).B16);
            }
            Opcode::Umin => v3_bhs!(self, lane, umin, r, a, b),
            Opcode::Umax => v3_bhs!(self, lane, umax, r, a, b),
            Opcode::Smin => v3_bhs!(self, lane, smin, r, a, b),
            Opcode::Smax => v3_bhs!(self, lane, smax, r, a, b),
            Opcode::AvgU if lane < 64 => v3_bhs!(self, lane, urhadd, r, a, b),
            _ => return false,
        }
        self.vdone(v, r);
        true
    }

    /// `shl`/`lshr`/`ashr` of each 32- or 64-bit lane by its own lane of
    /// the amounts (vpsllv, vpsrlv, vpsrav): ushl/sshl shift by the
    /// signed low byte of each amount lane, so the amounts are clamped to
    /// the width first (where ushl gives 0 and sshl the sign; umin for
    /// 32-bit lanes, a cmhi mask selecting the width for 64-bit ones) and
    /// negated for right shifts.
    fn vector_shift_lanes(&mut self, v: Value, d: &InstData) -> bool {
        let lane = d.ty.lane_bits();
        let (a, n, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
        match lane {
            32 => a64!(self.ops; movi V(VT0).S4, #32; umin V(VT0).S4, V(n).S4, V(VT0).S4),
            64 => a64!(self.ops
                ; movz X(T0), #64
                ; dup V(VT1).D2, X(T0)
                ; cmhi V(VT0).D2, V(n).D2, V(VT1).D2
                ; bsl V(VT0).B16, V(VT1).B16, V(n).B16
            ),
            _ => return false,
        }
        match (d.op != Opcode::Shl, lane) {
            (false, _) => {}
            (true, 32) => a64!(self.ops; neg V(VT0).S4, V(VT0).S4),
            (true, _) => a64!(self.ops; neg V(VT0).D2, V(VT0).D2),
        }
        if d.op == Opcode::Ashr {
            v3!(self, lane, sshl, r, a, VT0);
        } else {
            v3!(self, lane, ushl, r, a, VT0);
        }
        self.vdone(v, r);
        true
    }

    /// `shl`/`lshr`/`ashr` of every lane by one scalar amount: by a
    /// constant, one immediate shift (the width or more: zero, or the
    /// sign for `ashr`); else clamped to the lane width (where NEON's
    /// register shifts give 0, or the sign for `sshl`), negated for right
    /// shifts, and splat.
    fn vector_shift(&mut self, v: Value, d: &InstData) -> bool {
        let lane = d.ty.lane_bits();
        if self.ty_of(d.arg(1)).is_vector() {
            return self.vector_shift_lanes(v, d);
        }
        if self.ty_of(d.arg(1)).bits() > 64 {
            return false;
        }
        if let Some(n) = self.const_value(d.arg(1)) {
            let (a, r) = (self.vsrc(d.arg(0), 0), self.vdst(v, 3));
            let n = n.min(u64::from(lane)) as u32;
            match d.op {
                Opcode::Shl | Opcode::Lshr if n == lane => a64!(self.ops; movi V(r).D2, #0),
                _ if n == 0 => {
                    if r != a {
                        a64!(self.ops; mov V(r).B16, V(a).B16);
                    }
                }
                Opcode::Shl => match lane {
                    8 => a64!(self.ops; shl V(r).B16, V(a).B16, #n),
                    16 => a64!(self.ops; shl V(r).H8, V(a).H8, #n),
                    32 => a64!(self.ops; shl V(r).S4, V(a).S4, #n),
                    _ => a64!(self.ops; shl V(r).D2, V(a).D2, #n),
                },
                Opcode::Lshr => match lane {
                    8 => a64!(self.ops; ushr V(r).B16, V(a).B16, #n),
                    16 => a64!(self.ops; ushr V(r).H8, V(a).H8, #n),
                    32 => a64!(self.ops; ushr V(r).S4, V(a).S4, #n),
                    _ => a64!(self.ops; ushr V(r).D2, V(a).D2, #n),
                },
                _ => {
                    // An arithmetic shift by the width is one by width - 1.
                    let n = n.min(lane - 1);
                    match lane {
                        8 => a64!(self.ops; sshr V(r).B16, V(a).B16, #n),
                        16 => a64!(self.ops; sshr V(r).H8, V(a).H8, #n),
                        32 => a64!(self.ops; sshr V(r).S4, V(a).S4, #n),
                        _ => a64!(self.ops; sshr V(r).D2, V(a).D2, #n),
                    }
                }
            }
            self.vdone(v, r);
            return true;
        }
        self.ldq(0, d.arg(0));
        self.ldx(1, d.arg(1));
        a64!(self.ops
            ; movz X(T0), #lane
            ; cmp X(1), X(T0)
            ; csel X(1), X(1), X(T0), lo
        );
        if d.op != Opcode::Shl {
            a64!(self.ops; neg X(1), X(1));
        }
        match lane {
            8 => a64!(self.ops; dup V(1).B16, W(1)),
            16 => a64!(self.ops; dup V(1).H8, W(1)),
            32 => a64!(self.ops; dup V(1).S4, W(1)),
            _ => a64!(self.ops; dup V(1).D2, X(1)),
        }
        if d.op == Opcode::Ashr {
            v3!(self, lane, sshl, 3, 0, 1);
        } else {
            v3!(self, lane, ushl, 3, 0, 1);
        }
        self.stq(3, v);
        true
    }

    fn vector_unary(&mut self, v: Value, d: &InstData) -> bool {
        let lane = d.ty.lane_bits();
        let (a, r) = (self.vsrc(d.arg(0), 0), self.vdst(v, 3));
        match d.op {
            Opcode::Not => a64!(self.ops; mvn V(r).B16, V(a).B16),
            Opcode::Neg => match lane {
                8 => a64!(self.ops; neg V(r).B16, V(a).B16),
                16 => a64!(self.ops; neg V(r).H8, V(a).H8),
                32 => a64!(self.ops; neg V(r).S4, V(a).S4),
                _ => a64!(self.ops; neg V(r).D2, V(a).D2),
            },
            Opcode::Popcnt if lane == 8 => a64!(self.ops; cnt V(r).B16, V(a).B16),
            Opcode::Clz => match lane {
                8 => a64!(self.ops; clz V(r).B16, V(a).B16),
                16 => a64!(self.ops; clz V(r).H8, V(a).H8),
                32 => a64!(self.ops; clz V(r).S4, V(a).S4),
                _ => return false,
            },
            _ => return false,
        }
        self.vdone(v, r);
        true
    }

    /// Lane-wise integer compare: all-ones lanes where it holds.
    fn vector_icmp(&mut self, v: Value, d: &InstData) -> bool {
        let lane = d.ty.lane_bits();
        let Some(cond) = IntCond::from_u16(d.aux) else { return false };
        let (a, b, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
        match cond {
            IntCond::Eq | IntCond::Ne => v3!(self, lane, cmeq, r, a, b),
            IntCond::Ugt => v3!(self, lane, cmhi, r, a, b),
            IntCond::Uge => v3!(self, lane, cmhs, r, a, b),
            IntCond::Ult => v3!(self, lane, cmhi, r, b, a),
            IntCond::Ule => v3!(self, lane, cmhs, r, b, a),
            IntCond::Sgt => v3!(self, lane, cmgt, r, a, b),
            IntCond::Sge => v3!(self, lane, cmge, r, a, b),
            IntCond::Slt => v3!(self, lane, cmgt, r, b, a),
            IntCond::Sle => v3!(self, lane, cmge, r, b, a),
        }
        if cond == IntCond::Ne {
            a64!(self.ops; mvn V(r).B16, V(r).B16);
        }
        self.vdone(v, r);
        true
    }

    fn shape_op(&mut self, v: Value, d: &InstData) -> bool {
        let ty = d.ty;
        let lane = ty.lane_bits();
        if !ty.is_vector() {
            return false;
        }
        match d.op {
            Opcode::Splat if self.const_value(d.arg(0)) == Some(0) => {
                let r = self.vdst(v, 3);
                a64!(self.ops; movi V(r).D2, #0);
                self.vdone(v, r);
                return true;
            }
            Opcode::Splat => {
                let (x, r) = (self.xsrc(d.arg(0), 0), self.vdst(v, 3));
                match lane {
                    8 => a64!(self.ops; dup V(r).B16, W(x)),
                    16 => a64!(self.ops; dup V(r).H8, W(x)),
                    32 => a64!(self.ops; dup V(r).S4, W(x)),
                    _ => a64!(self.ops; dup V(r).D2, X(x)),
                }
                self.vdone(v, r);
                return true;
            }
            Opcode::ExtractLane => {
                let i = u32::from(d.aux);
                if i >= ty.lanes() {
                    return false;
                }
                let a = self.vsrc(d.arg(0), 0);
                match (self.home(v), lane) {
                    // Lane 0 sharing the vector's register (see `alloc`).
                    (Home::V(r), _) if r == a && i == 0 => {}
                    // A float lane to a float register.
                    (Home::V(r), 32) => a64!(self.ops; dup S(r), V(a).S[i]),
                    (Home::V(r), _) => a64!(self.ops; dup D(r), V(a).D[i]),
                    _ => {
                        let r = self.xdst(v, 3);
                        match lane {
                            8 => a64!(self.ops; umov W(r), V(a).B[i]),
                            16 => a64!(self.ops; umov W(r), V(a).H[i]),
                            32 => a64!(self.ops; umov W(r), V(a).S[i]),
                            _ => a64!(self.ops; umov X(r), V(a).D[i]),
                        }
                        self.xdone(v, r);
                    }
                }
                return true;
            }
            Opcode::InsertLane => {
                let i = u32::from(d.aux);
                if i >= ty.lanes() {
                    return false;
                }
                let a = self.vsrc(d.arg(0), 0);
                let r = self.vdst(v, 3);
                // In place when the allocator gave the result the vector's
                // register (its last read).
                if r != a {
                    a64!(self.ops; mov V(r).B16, V(a).B16);
                }
                match (self.home(d.arg(1)), lane) {
                    (Home::V(s), 32) => a64!(self.ops; ins V(r).S[i], V(s).S[0]),
                    (Home::V(s), 64) => a64!(self.ops; ins V(r).D[i], V(s).D[0]),
                    _ => {
                        let x = self.xsrc(d.arg(1), 1);
                        match lane {
                            8 => a64!(self.ops; ins V(r).B[i], W(x)),
                            16 => a64!(self.ops; ins V(r).H[i], W(x)),
                            32 => a64!(self.ops; ins V(r).S[i], W(x)),
                            _ => a64!(self.ops; ins V(r).D[i], X(x)),
                        }
                    }
                }
                self.vdone(v, r);
                return true;
            }
            Opcode::Movmsk => {
                self.ldq(0, d.arg(0));
                self.movmsk(lane);
                self.stx(3, v);
                return true;
            }
            Opcode::Shuffle => {
                let n = ty.lanes();
                if n != 4 && n != 8 {
                    return false;
                }
                self.ldq(0, d.arg(0));
                a64!(self.ops; mov V(3).B16, V(0).B16);
                let base = if n == 8 && d.aux & 0x100 != 0 { 4 } else { 0 };
                for k in 0..4u32 {
                    let from = base + u32::from(d.aux >> (2 * k)) % 4;
                    let to = base + k;
                    if n == 4 {
                        a64!(self.ops; ins V(3).S[to], V(0).S[from]);
                    } else {
                        a64!(self.ops; ins V(3).H[to], V(0).H[from]);
                    }
                }
            }
            Opcode::Shuffle2 => {
                let n = ty.lanes();
                if n != 2 && n != 4 {
                    return false;
                }
                self.ldq(0, d.arg(0));
                self.ldq(1, d.arg(1));
                let field = n.trailing_zeros();
                for j in 0..n {
                    let from = u32::from(d.aux >> (field * j)) % n;
                    let src = if j < n / 2 { 0 } else { 1 };
                    if n == 4 {
                        a64!(self.ops; ins V(3).S[j], V(src).S[from]);
                    } else {
                        a64!(self.ops; ins V(3).D[j], V(src).D[from]);
                    }
                }
            }
            Opcode::UnpackLo | Opcode::UnpackHi => {
                let (a, b, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
                if d.op == Opcode::UnpackLo {
                    v3!(self, lane, zip1, r, a, b);
                } else {
                    v3!(self, lane, zip2, r, a, b);
                }
                self.vdone(v, r);
                return true;
            }
            Opcode::NarrowS | Opcode::NarrowU => {
                let (a, b, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
                // The low half is written before the high half is read.
                let r = if r == b { 3 } else { r };
                let signed = d.op == Opcode::NarrowS;
                match (lane, signed) {
                    (8, true) => a64!(self.ops; sqxtn V(r).B8, V(a).H8; sqxtn2 V(r).B16, V(b).H8),
                    (8, false) => a64!(self.ops; sqxtun V(r).B8, V(a).H8; sqxtun2 V(r).B16, V(b).H8),
                    (16, true) => a64!(self.ops; sqxtn V(r).H4, V(a).S4; sqxtn2 V(r).H8, V(b).S4),
                    (16, false) => a64!(self.ops; sqxtun V(r).H4, V(a).S4; sqxtun2 V(r).H8, V(b).S4),
                    (32, true) => a64!(self.ops; sqxtn V(r).S2, V(a).D2; sqxtn2 V(r).S4, V(b).D2),
                    (32, false) => a64!(self.ops; sqxtun V(r).S2, V(a).D2; sqxtun2 V(r).S4, V(b).D2),
                    _ => return false,
                }
                self.vdone(v, r);
                return true;
            }
            Opcode::ByteShl | Opcode::ByteShr => {
                let n = u32::from(d.aux);
                let (a, r) = (self.vsrc(d.arg(0), 0), self.vdst(v, 3));
                if n >= 16 {
                    a64!(self.ops; movi V(r).D2, #0);
                } else if n == 0 {
                    if r != a {
                        a64!(self.ops; mov V(r).B16, V(a).B16);
                    }
                } else {
                    a64!(self.ops; movi V(VT0).D2, #0);
                    if d.op == Opcode::ByteShr {
                        a64!(self.ops; ext V(r).B16, V(a).B16, V(VT0).B16, #n);
                    } else {
                        let k = 16 - n;
                        a64!(self.ops; ext V(r).B16, V(VT0).B16, V(a).B16, #k);
                    }
                }
                self.vdone(v, r);
                return true;
            }
            // These read their operands into temporaries before writing
            // the result, so it may share an operand's register.
            Opcode::MulAddPairs if ty == Type::I32X4 => {
                let (a, b, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
                a64!(self.ops
                    ; smull V(VT0).S4, V(a).H4, V(b).H4
                    ; smull2 V(VT1).S4, V(a).H8, V(b).H8
                    ; addp V(r).S4, V(VT0).S4, V(VT1).S4
                );
                self.vdone(v, r);
                return true;
            }
            Opcode::SumAbsDiff if ty == Type::I64X2 => {
                let (a, b, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
                a64!(self.ops
                    ; uabd V(VT0).B16, V(a).B16, V(b).B16
                    ; uaddlp V(VT0).H8, V(VT0).B16
                    ; uaddlp V(VT0).S4, V(VT0).H8
                    ; uaddlp V(r).D2, V(VT0).S4
                );
                self.vdone(v, r);
                return true;
            }
            Opcode::MulEvenU if ty == Type::I64X2 => {
                let (a, b, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
                a64!(self.ops
                    ; xtn V(VT0).S2, V(a).D2
                    ; xtn V(VT1).S2, V(b).D2
                    ; umull V(r).D2, V(VT0).S2, V(VT1).S2
                );
                self.vdone(v, r);
                return true;
            }
            Opcode::ShuffleBytes => {
                // tbl gives zero for indices of 16 and more: keep bit 7
                // and the low four.
                let (a, b, r) = (self.vsrc(d.arg(0), 0), self.vsrc(d.arg(1), 1), self.vdst(v, 3));
                a64!(self.ops
                    ; movi V(VT0).B16, #0x8f
                    ; and V(VT0).B16, V(b).B16, V(VT0).B16
                    ; tbl V(r).B16, {V(a).B16 * 1}, V(VT0).B16
                );
                self.vdone(v, r);
                return true;
            }
            _ => return false,
        }
        self.stq(3, v);
        true
    }

    /// `X(3)` = the sign bits of the lanes of `V(0)` (`lane` bits wide).
    /// Each lane becomes a byte mask (shift by the sign, narrow), and the
    /// top bits of eight bytes gather into one byte by a multiply: with
    /// byte i's bit at 8i+7, times sum of 2^(7k), bit 56+i receives
    /// exactly byte i and nothing carries into the top byte.
    fn movmsk(&mut self, lane: u32) {
        match lane {
            8 => {
                a64!(self.ops; umov X(T0), V(0).D[0]);
                self.gather_bytes(T0);
                a64!(self.ops; umov X(T1), V(0).D[1]);
                self.gather_bytes(T1);
                a64!(self.ops; orr X(3), X(T0), X(T1), lsl #8);
                return;
            }
            16 => a64!(self.ops
                ; sshr V(VT0).H8, V(0).H8, #15
                ; xtn V(VT0).B8, V(VT0).H8
            ),
            32 => a64!(self.ops
                ; sshr V(VT0).S4, V(0).S4, #31
                ; xtn V(VT0).H4, V(VT0).S4
                ; xtn V(VT0).B8, V(VT0).H8
            ),
            _ => a64!(self.ops
                ; sshr V(VT0).D2, V(0).D2, #63
                ; xtn V(VT0).S2, V(VT0).D2
                ; xtn V(VT0).H4, V(VT0).S4
                ; xtn V(VT0).B8, V(VT0).H8
            ),
        }
        a64!(self.ops; umov X(3), V(VT0).D[0]);
        self.gather_bytes(3);
    }

    /// `X(r)` = bit i set iff byte i of `X(r)` has its top bit set.
    fn gather_bytes(&mut self, r: u8) {
        a64!(self.ops; and XSP(r), X(r), #0x8080_8080_8080_8080);
        self.mov64(T2, 0x0002_0408_1020_4081);
        a64!(self.ops
            ; mul X(r), X(r), X(T2)
            ; lsr X(r), X(r), #56
        );
    }
}

/// Ops handled by [`Lowerer::shape_op`] whatever their format.
fn is_shape_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Splat
            | Opcode::Movmsk
            | Opcode::UnpackLo
            | Opcode::UnpackHi
            | Opcode::NarrowS
            | Opcode::NarrowU
            | Opcode::MulAddPairs
            | Opcode::SumAbsDiff
            | Opcode::MulEvenU
            | Opcode::ShuffleBytes
    )
}
