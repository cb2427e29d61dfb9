//! The op table: every IR opcode declared once, with its text name, its
//! operand format and a line of documentation. The printer, the parser,
//! the verifier and the executors all dispatch on what is declared here.
//!
//! Adding an op: add a row below, give it semantics in the interpreter
//! (`host/src/interp`), lower it in the JIT or let the JIT fall back to the
//! interpreter for regions that contain it, and add a text fixture.

/// How an instruction's operands are laid out in [`crate::InstData`] and
/// written in the text form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `vN = iconst.T IMM`: a 64-bit immediate in `args[0]` (low) and `args[1]` (high).
    Const,
    /// `vN = get REG`: register in `aux`.
    Get,
    /// `set REG, vA`.
    Set,
    /// `vN = op.T vA`.
    Unary,
    /// `vN = op.T vA, vB`.
    Binary,
    /// `vN = op.T vA, vB, vC`.
    Ternary,
    /// `vN = op.T vA, IMM`: a 16-bit immediate in `aux`.
    UnaryImm,
    /// `vN = op.T vA, vB, vC, IMM`.
    TernaryImm,
    /// `vN = op.T vA, vB, IMM`.
    BinaryImm,
    /// `vN = icmp.T COND vA, vB`.
    IntCompare,
    /// `vN = fcmp.T COND vA, vB`.
    FloatCompare,
    /// `vN = load.T FLAGS vA`.
    Load,
    /// `store.T FLAGS vA, vB`: store `vB` at address `vA`.
    Store,
    /// `vN = atomic_rmw.T OP vA, vB`.
    AtomicRmw,
    /// `call HELPER [ordered]`: the memory flags in `args[0]` (ordered: the
    /// helper's memory accesses as a whole ordered with the guest's other
    /// accesses, set by the memory-order lowering for the leaf routines).
    Call,
    /// `insn ADDR, LEN` / `dep ADDR, LEN`: marks the start of a guest
    /// instruction, or guest bytes the region depends on.
    Mark,
    /// `jump blockN`.
    Jump,
    /// `brif vA, blockN, blockM`.
    Brif,
    /// `exit KIND ADDR [dead MASK]`: `args[2]` holds the flags known dead
    /// at ADDR (see [`InstData::exit_dead_flags`]).
    Exit,
    /// `exit_indirect KIND vA`.
    ExitIndirect,
    /// `probe_indirect KIND vA, blockN`.
    Probe,
    /// `trap KIND ADDR`.
    Trap,
    /// `count [global] COUNTER, AMOUNT`: counter id in `args[0]`, amount in
    /// `args[1]`, `aux` 1 once the host has made the id global (0: the id
    /// is in the emitting pass's own numbering).
    Count,
}

/// The `aux` of a `count` whose counter id the host has made global.
pub const COUNT_GLOBAL: u16 = 1;

impl Format {
    /// Whether instructions of this format end a block.
    #[inline]
    pub fn is_terminator(self) -> bool {
        matches!(self, Format::Jump | Format::Brif | Format::Exit | Format::ExitIndirect | Format::Probe | Format::Trap)
    }

    /// Whether instructions of this format define a value.
    pub fn has_result(self) -> bool {
        !matches!(
            self,
            Format::Set
                | Format::Store
                | Format::Call
                | Format::Mark
                | Format::Jump
                | Format::Brif
                | Format::Exit
                | Format::ExitIndirect
                | Format::Probe
                | Format::Trap
                | Format::Count
        )
    }

    /// Whether the text form writes the instruction's type (`op.T`): the
    /// type of `get`/`set` comes from the register, and control flow,
    /// calls and markers have none.
    pub fn has_type_suffix(self) -> bool {
        !matches!(self, Format::Get | Format::Set | Format::Call | Format::Mark | Format::Count)
            && !self.is_terminator()
    }

    /// How many of `args` are value operands.
    #[inline(always)]
    pub fn value_args(self) -> usize {
        match self {
            Format::Const
            | Format::Get
            | Format::Call
            | Format::Mark
            | Format::Count
            | Format::Jump
            | Format::Exit
            | Format::Trap => 0,
            Format::Set
            | Format::Unary
            | Format::UnaryImm
            | Format::Load
            | Format::Brif
            | Format::ExitIndirect
            | Format::Probe => 1,
            Format::Binary
            | Format::BinaryImm
            | Format::IntCompare
            | Format::FloatCompare
            | Format::Store
            | Format::AtomicRmw => 2,
            Format::Ternary | Format::TernaryImm => 3,
        }
    }
}

macro_rules! declare_ops {
    ($($(#[doc = $doc:literal])+ $v:ident = $text:literal, $format:ident;)*) => {
        /// An IR opcode. See the table in this module's source for each
        /// one's semantics.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Opcode { $($(#[doc = $doc])+ $v,)* }

        impl Opcode {
            pub const ALL: &'static [Opcode] = &[$(Opcode::$v,)*];

            pub fn name(self) -> &'static str {
                match self { $(Opcode::$v => $text,)* }
            }

            /// Its format: one load from a table indexed by the opcode
            /// (asked for every operand walk, so it is inlined).
            #[inline(always)]
            pub fn format(self) -> Format {
                const FORMATS: &[Format] = &[$(Format::$format,)*];
                FORMATS[self as usize]
            }

            pub fn doc(self) -> &'static str {
                match self { $(Opcode::$v => concat!($($doc),+),)* }
            }
        }
    };
}

declare_ops! {
    /// Integer constant of type T (up to 64 bits, zero-extended).
    Iconst = "iconst", Const;
    /// Read a guest register from the state.
    Get = "get", Get;
    /// Write a guest register in the state.
    Set = "set", Set;
    /// Load a T from guest address vA.
    Load = "load", Load;
    /// Store vB (a T) at guest address vA.
    Store = "store", Store;
    /// Atomically replace the T at vA with `old OP vB`; yields the old value.
    AtomicRmw = "atomic_rmw", AtomicRmw;
    /// Atomic compare-and-swap of the T at vA: if it equals vB, store vC;
    /// yields the old value.
    AtomicCas = "atomic_cas", Ternary;
    /// Wrapping addition (lane-wise on vectors).
    Add = "add", Binary;
    /// Wrapping subtraction (lane-wise on vectors).
    Sub = "sub", Binary;
    /// Wrapping multiplication, low half (lane-wise on vectors).
    Mul = "mul", Binary;
    /// High half of the unsigned double-width product (lane-wise).
    Umulh = "umulh", Binary;
    /// High half of the signed double-width product (lane-wise).
    Smulh = "smulh", Binary;
    /// Unsigned division; the divisor must not be zero (the lifter traps first).
    Udiv = "udiv", Binary;
    /// Signed division; divisor non-zero and no overflow (checked by the lifter).
    Sdiv = "sdiv", Binary;
    /// Unsigned remainder; divisor non-zero.
    Urem = "urem", Binary;
    /// Signed remainder; divisor non-zero and no overflow.
    Srem = "srem", Binary;
    /// Bitwise and.
    And = "and", Binary;
    /// Bitwise or.
    Or = "or", Binary;
    /// Bitwise exclusive or.
    Xor = "xor", Binary;
    /// vA and not vB.
    AndNot = "and_not", Binary;
    /// Shift left by vB (any integer type); amounts of the lane width or
    /// more give 0. On a vector, vB is a scalar amount for every lane, or
    /// a vector of T: each lane shifted by its own lane of vB (unsigned).
    Shl = "shl", Binary;
    /// Logical shift right by vB (as `shl`); amounts of the lane width or more give 0.
    Lshr = "lshr", Binary;
    /// Arithmetic shift right by vB (as `shl`); amounts of the lane width or more fill with the sign.
    Ashr = "ashr", Binary;
    /// Rotate left by vB modulo the width.
    Rotl = "rotl", Binary;
    /// Rotate right by vB modulo the width.
    Rotr = "rotr", Binary;
    /// Bitwise not.
    Not = "not", Unary;
    /// Two's complement negation.
    Neg = "neg", Unary;
    /// Count leading zeros (the width for zero).
    Clz = "clz", Unary;
    /// Count trailing zeros (the width for zero).
    Ctz = "ctz", Unary;
    /// Population count.
    Popcnt = "popcnt", Unary;
    /// Byte swap.
    Bswap = "bswap", Unary;
    /// i1: whether the low byte of vA has an even number of set bits (x86 PF).
    Parity = "parity", Unary;
    /// Zero-extend vA to T.
    Zext = "zext", Unary;
    /// Sign-extend vA to T.
    Sext = "sext", Unary;
    /// Truncate vA to T.
    Trunc = "trunc", Unary;
    /// Reinterpret vA's bits as T (same width).
    Bitcast = "bitcast", Unary;
    /// Integer compare, yields i1 (a lane mask of T for vectors).
    Icmp = "icmp", IntCompare;
    /// vB if i1 vA is set, else vC.
    Select = "select", Ternary;
    /// The double-width T built from high half vA and low half vB.
    Concat = "concat", Binary;
    /// Unsigned minimum (lane-wise).
    Umin = "umin", Binary;
    /// Unsigned maximum (lane-wise).
    Umax = "umax", Binary;
    /// Signed minimum (lane-wise).
    Smin = "smin", Binary;
    /// Signed maximum (lane-wise).
    Smax = "smax", Binary;
    /// Unsigned rounding average (lane-wise): (a + b + 1) >> 1.
    AvgU = "avg_u", Binary;
    /// Unsigned saturating add (lane-wise).
    AddSatU = "add_sat_u", Binary;
    /// Signed saturating add (lane-wise).
    AddSatS = "add_sat_s", Binary;
    /// Unsigned saturating subtract (lane-wise).
    SubSatU = "sub_sat_u", Binary;
    /// Signed saturating subtract (lane-wise).
    SubSatS = "sub_sat_s", Binary;
    /// Vector with every lane of shape T set to scalar vA.
    Splat = "splat", Unary;
    /// Lane IMM of vector vA (shape T), as a scalar.
    ExtractLane = "extract_lane", UnaryImm;
    /// Vector vA (shape T) with lane IMM replaced by scalar vB.
    InsertLane = "insert_lane", BinaryImm;
    /// i32 of the lanes' sign bits (pmovmskb, movmskps, movmskpd).
    Movmsk = "movmsk", Unary;
    /// Lanes of vA (shape T, 4 lanes) permuted by the 2-bit fields of IMM (pshufd).
    /// For i16x8, IMM bit 8 selects the high quadword (pshufhw), else the low one (pshuflw).
    Shuffle = "shuffle", UnaryImm;
    /// Low lanes from vA, high lanes from vB, each picked by the fields of IMM (shufps, shufpd).
    Shuffle2 = "shuffle2", BinaryImm;
    /// Interleave the low halves of vA and vB (punpckl*, unpcklp*).
    UnpackLo = "unpack_lo", Binary;
    /// Interleave the high halves of vA and vB (punpckh*, unpckhp*).
    UnpackHi = "unpack_hi", Binary;
    /// Narrow the lanes of vA then vB to T with signed saturation (packsswb, packssdw).
    NarrowS = "narrow_s", Binary;
    /// Narrow the signed lanes of vA then vB to T with unsigned saturation (packuswb).
    NarrowU = "narrow_u", Binary;
    /// Shift the whole 128-bit vA left by IMM bytes (pslldq).
    ByteShl = "byte_shl", UnaryImm;
    /// Shift the whole 128-bit vA right by IMM bytes (psrldq).
    ByteShr = "byte_shr", UnaryImm;
    /// Multiply i16 lanes and add adjacent pairs into i32 lanes (pmaddwd).
    MulAddPairs = "mul_add_pairs", Binary;
    /// Sum of absolute byte differences per 64-bit half (psadbw).
    SumAbsDiff = "sum_abs_diff", Binary;
    /// Multiply the even unsigned 32-bit lanes into 64-bit lanes (pmuludq).
    MulEvenU = "mul_even_u", Binary;
    /// Float addition with x86 NaN rules (lane-wise on vectors). This op and
    /// the float ops below it, through `fconvert`, are SSE instructions'
    /// arithmetic under the guest's MXCSR (see [`Opcode::uses_mxcsr`]).
    Fadd = "fadd", Binary;
    /// Float subtraction with x86 NaN rules.
    Fsub = "fsub", Binary;
    /// Float multiplication with x86 NaN rules.
    Fmul = "fmul", Binary;
    /// Float division with x86 NaN rules.
    Fdiv = "fdiv", Binary;
    /// Float square root with x86 NaN rules.
    Fsqrt = "fsqrt", Unary;
    /// x86 minimum: vA if vA < vB, else vB (so NaNs and equal zeros give vB).
    Fmin = "fmin", Binary;
    /// x86 maximum: vA if vA > vB, else vB.
    Fmax = "fmax", Binary;
    /// Float compare, yields i1 (a lane mask of T for vectors).
    Fcmp = "fcmp", FloatCompare;
    /// Float vA to signed integer T; IMM bit 0 clear truncates, set rounds
    /// by MXCSR.RC. NaN and out-of-range give the integer indefinite (the
    /// minimum value). For `i32x4`, IMM bit 1 set means the source is `f64x2`
    /// (two results, upper lanes zero), clear means `f32x4`.
    FcvtToSint = "fcvt_to_sint", UnaryImm;
    /// Signed integer vA to float T, rounded by MXCSR.RC (lane-wise: i32 lanes to T lanes).
    SintToF = "sint_to_f", Unary;
    /// Float vA to float T (f32 <-> f64, lane-wise on vectors: low lanes).
    Fconvert = "fconvert", Unary;
    /// Run a runtime helper on the guest state.
    Call = "call", Call;
    /// Start of a guest instruction at ADDR, LEN bytes long.
    Insn = "insn", Mark;
    /// Continue in a block of this region.
    Jump = "jump", Jump;
    /// Continue in the first block if vA is set, else in the second.
    Brif = "brif", Brif;
    /// Leave the region for a known guest address. `dead MASK` (optional):
    /// the flags (bit i for the flag register of index i, `Reg::as_flag`)
    /// the code at ADDR writes before it reads them, as a pass that looked
    /// there found; their values at the exit do not matter.
    Exit = "exit", Exit;
    /// Leave the region for the guest address vA.
    ExitIndirect = "exit_indirect", ExitIndirect;
    /// Raise a guest fault at the instruction at ADDR.
    Trap = "trap", Trap;
    /// Add AMOUNT to instrumentation counter COUNTER (wrapping u64). A pass
    /// numbers its counters from 0; after the pass the host rewrites each
    /// to a `global` id in its counter table, whose values the pass gets at
    /// exit (`Pass::finish`).
    Count = "count", Count;
    /// Leave the region for the guest address vA when its translated code
    /// is at hand and does not read the status flags it is entered with;
    /// else continue in the block. The block computes the flags and leaves
    /// with `exit_indirect` (see the `dead-flags` pass); an executor
    /// without a target cache always continues there. Last in the table so
    /// the numbers of the ops above stay those of plugin ABI 1.
    ProbeIndirect = "probe_indirect", Probe;
    /// Guest bytes ADDR..ADDR+LEN that the translation depends on without
    /// translating them (a pass looked at them: `dead-flags` at an exit's
    /// target). Executes as nothing; a write to them invalidates the region
    /// as a write to its instructions does.
    Dep = "dep", Mark;
    /// Byte i of the 128-bit result is byte `vB[i] & 15` of vA, or zero
    /// when the top bit of byte i of vB is set (pshufb).
    ShuffleBytes = "shuffle_bytes", Binary;
    /// Float vA (lane-wise on vectors) rounded to an integral value of its
    /// type: IMM bits 1:0 nearest even, down, up, toward zero; bit 2 set
    /// rounds by MXCSR.RC instead; bit 3 set raises no precision exception
    /// (roundss/roundps). A signalling NaN raises invalid and is quieted.
    /// Computes under MXCSR as the ops `fadd` to `fconvert` do.
    Fround = "fround", UnaryImm;
    /// The i32 CRC-32C (Castagnoli, bit-reflected, no inversion) vA
    /// updated with the low IMM bytes (1, 2, 4 or 8) of the i64 vB, low
    /// byte first (crc32).
    Crc32c = "crc32c", BinaryImm;
    /// The low bits of vA deposited, lowest first, at the set bits of vB;
    /// zero elsewhere (pdep).
    Pdep = "pdep", Binary;
    /// The bits of vA at the set bits of vB, packed into the low bits
    /// (pext).
    Pext = "pext", Binary;
    /// One AES encryption round of the state vA with the round key vB:
    /// ShiftRows, SubBytes, MixColumns, then XOR vB (aesenc).
    AesEnc = "aes_enc", Binary;
    /// The last AES encryption round: ShiftRows, SubBytes, XOR vB
    /// (aesenclast).
    AesEncLast = "aes_enc_last", Binary;
    /// One AES decryption round of the equivalent inverse cipher:
    /// InvShiftRows, InvSubBytes, InvMixColumns, then XOR vB (aesdec).
    AesDec = "aes_dec", Binary;
    /// The last AES decryption round: InvShiftRows, InvSubBytes, XOR vB
    /// (aesdeclast).
    AesDecLast = "aes_dec_last", Binary;
    /// InvMixColumns of vA (aesimc).
    AesImc = "aes_imc", Unary;
    /// AES key expansion assist: SubWord of dwords 1 and 3 of vA into
    /// dwords 0 and 2, and RotWord of those XOR IMM (the round constant,
    /// 0-255) into dwords 1 and 3 (aeskeygenassist).
    AesKeygen = "aes_keygen", UnaryImm;
    /// Carry-less product of one 64-bit half of vA (IMM bit 0: high) and
    /// one of vB (IMM bit 4: high), as 128 bits (pclmulqdq).
    Clmul = "clmul", BinaryImm;
    /// Fused multiply-add with x86 NaN rules (lane-wise on vectors): vA *
    /// vB + vC with one rounding, IMM bit 0 negating the product, bit 1
    /// the addend of the even lanes (lane 0 of a scalar), bit 2 that of
    /// the odd lanes (vfmadd, vfmsub, vfnmadd, vfnmsub, vfmaddsub,
    /// vfmsubadd). A NaN operand gives the first NaN of vA, vB, vC,
    /// quieted and never negated; inf * 0 with no NaN is invalid.
    /// Computes under MXCSR as the ops `fadd` to `fconvert` do.
    Fma = "fma", TernaryImm;
    /// The four f16 in the low 64 bits of vA as the four lanes of an
    /// f32x4 (vcvtph2ps): exact; a NaN keeps its sign and payload (at the
    /// top of the wider significand) and is quieted, a signalling one
    /// raising invalid. Computes under MXCSR as the ops `fadd` to
    /// `fconvert` do.
    FcvtFromF16 = "fcvt_from_f16", Unary;
    /// The four f32 lanes of vA as four f16 in the low 64 bits of the
    /// i16x8 result, the rest zero (vcvtps2ph): IMM bits 1:0 round to
    /// nearest even, down, up, toward zero; bit 2 set rounds by MXCSR.RC
    /// instead. A NaN keeps its sign and the top of its payload and is
    /// quieted. Computes under MXCSR as the ops `fadd` to `fconvert` do.
    FcvtToF16 = "fcvt_to_f16", UnaryImm;
}

impl Opcode {
    pub fn from_u8(v: u8) -> Option<Opcode> {
        Opcode::ALL.get(usize::from(v)).copied()
    }

    pub fn from_name(s: &str) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| o.name() == s)
    }

    #[inline]
    pub fn is_terminator(self) -> bool {
        self.format().is_terminator()
    }

    /// Whether this is one of the SSE float ops (`fadd` to `fconvert`,
    /// `fround`, `fma`, `fcvt_from_f16` and `fcvt_to_f16`),
    /// which compute under the guest's MXCSR as the SSE instruction does:
    /// rounding by RC, denormal operands read as zero under DAZ, tiny
    /// results flushed to zero under FTZ (when underflow is masked). Each
    /// ORs the exceptions it raises into MXCSR's sticky flags (bits 0-5).
    /// When one of them is unmasked, the op leaves the region instead with
    /// the trap `simdfp` (SIGFPE) at the current guest instruction, with
    /// the registers that instruction set put back (nothing of it written)
    /// and its flags in MXCSR. The flags are an effect: a pass keeps an op
    /// whose result nobody uses (glibc's `math_force_eval` computes a sum
    /// only for its inexact flag) and moves none onto one path of a branch;
    /// it may drop a compare whose twin stays (another `fcmp` of the same
    /// values that signals alike, close enough that nothing can see the
    /// difference: the rule is `dce`'s, in its module docs; the lifter gives
    /// every compare of one instruction the same exceptions), and an
    /// executor runs every op it is given.
    pub fn uses_mxcsr(self) -> bool {
        matches!(
            self,
            Opcode::Fadd
                | Opcode::Fsub
                | Opcode::Fmul
                | Opcode::Fdiv
                | Opcode::Fsqrt
                | Opcode::Fmin
                | Opcode::Fmax
                | Opcode::Fcmp
                | Opcode::FcvtToSint
                | Opcode::SintToF
                | Opcode::Fconvert
                | Opcode::Fround
                | Opcode::Fma
                | Opcode::FcvtFromF16
                | Opcode::FcvtToF16
        )
    }

    /// Whether the instruction has an effect besides its result (so dead-code
    /// elimination must keep it).
    #[inline]
    pub fn has_side_effect(self) -> bool {
        matches!(
            self.format(),
            Format::Set | Format::Store | Format::AtomicRmw | Format::Call | Format::Mark | Format::Count
        ) || self == Opcode::AtomicCas
            || self.is_terminator()
    }
}

impl core::fmt::Display for Opcode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for (i, op) in Opcode::ALL.iter().enumerate() {
            assert_eq!(Opcode::from_u8(i as u8), Some(*op));
            assert_eq!(Opcode::from_name(op.name()), Some(*op), "{op:?}");
        }
    }
}
