//! Small named enumerations carried in an instruction's `aux` field:
//! comparison conditions, memory flags, atomic operations, exit, trap and
//! helper kinds. Each is declared once with its text name.

macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $text:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum $name { $($(#[$vm])* $v,)* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$v,)*];

            pub fn name(self) -> &'static str {
                match self { $($name::$v => $text,)* }
            }

            pub fn from_name(s: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.name() == s)
            }

            pub fn from_u16(v: u16) -> Option<$name> {
                Self::ALL.get(usize::from(v)).copied()
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

named_enum! {
    /// Integer comparison of `icmp`.
    IntCond {
        Eq = "eq", Ne = "ne", Ult = "ult", Ule = "ule", Ugt = "ugt", Uge = "uge",
        Slt = "slt", Sle = "sle", Sgt = "sgt", Sge = "sge",
    }
}

named_enum! {
    /// Floating-point comparison of `fcmp`. `uno` is true when either operand
    /// is NaN; the ordered ones are false then, `une` true. The first eight
    /// are SSE's cmpps predicates in imm8 order, with their exceptions:
    /// `lt le nlt nle` signal invalid (IE) on any NaN operand, `eq uno une
    /// ord` only on a signalling one. The rest are the same outcomes with
    /// the other behaviour: `lt_q le_q nlt_q nle_q` quiet (ucomiss),
    /// `eq_s uno_s` signalling (comiss).
    FloatCond {
        Eq = "eq", Lt = "lt", Le = "le", Uno = "uno", Une = "une", Nlt = "nlt", Nle = "nle", Ord = "ord",
        LtQ = "lt_q", LeQ = "le_q", NltQ = "nlt_q", NleQ = "nle_q", EqS = "eq_s", UnoS = "uno_s",
    }
}

impl FloatCond {
    /// Whether the compare signals invalid (IE) on a quiet NaN operand too,
    /// not only on a signalling one.
    pub fn signals_on_qnan(self) -> bool {
        use FloatCond as C;
        matches!(self, C::Lt | C::Le | C::Nlt | C::Nle | C::EqS | C::UnoS)
    }
}

named_enum! {
    /// Memory-access flags of `load` and `store`.
    MemFlags {
        /// An ordinary access.
        Plain = "plain",
        /// An access with x86-TSO ordering: acquire for loads, release for
        /// stores (set by the memory-order lowering).
        Ordered = "ordered",
    }
}

named_enum! {
    /// Operation of `atomic_rmw`: the old value is returned and
    /// `old OP operand` stored.
    RmwOp { Add = "add", And = "and", Or = "or", Xor = "xor", Xchg = "xchg", }
}

named_enum! {
    /// Why a region is left through `exit` or `exit_indirect`. The
    /// dispatcher continues at the target; `syscall` first performs the
    /// guest system call.
    /// `fenv`: the instruction changed MXCSR (ldmxcsr, fxrstor), and the
    /// dispatcher must see it before the next region runs (the JIT runs
    /// code only under the default MXCSR): never chained.
    ExitKind { Jump = "jump", Call = "call", Ret = "ret", Syscall = "syscall", Fenv = "fenv", }
}

named_enum! {
    /// A fault raised in the guest at an instruction by `trap`.
    TrapKind {
        /// Undefined or unimplemented instruction: SIGILL.
        Ill = "ill",
        /// Divide error (#DE): SIGFPE.
        DivZero = "divzero",
        /// Breakpoint (int3): SIGTRAP.
        Breakpoint = "breakpoint",
        /// hlt and other privileged instructions in user mode, and other
        /// general-protection faults (ldmxcsr of a reserved bit): SIGSEGV.
        Privileged = "privileged",
        /// Instruction fetch from unmapped or non-executable memory: SIGSEGV.
        FetchFault = "fetchfault",
        /// An unmasked SSE floating-point exception (#XM): SIGFPE, its
        /// si_code from MXCSR. Raised by the float ops themselves, never
        /// by a `trap` the lifter emits.
        SimdFp = "simdfp",
        /// A pending unmasked x87 exception (#MF, the status word's ES set)
        /// at a waiting x87 instruction: SIGFPE, its si_code from the
        /// status and control words.
        X87Fp = "x87fp",
    }
}

named_enum! {
    /// Runtime helpers reached by `call`. A helper reads and writes guest
    /// registers in the state struct only; [`Helper::reads`] and
    /// [`Helper::writes`] say which, so register caching knows what to
    /// spill and reload.
    Helper {
        Cpuid = "cpuid",
        Rdtsc = "rdtsc",
        /// The x87 operation in `x87_op` (see [`crate::x87`]), its memory
        /// operand at `x87_addr`.
        X87 = "x87",
        /// As `x87`, for the operations that also write EFLAGS (fcomi).
        X87Flags = "x87_flags",
        /// The leaf routines ([`Helper::is_leaf`]): the C library function
        /// of the name, under the System V ABI, on the arguments in rdi,
        /// rsi, rdx (and rcx): its result in rax and `leaf_done` set, or declined
        /// (a fault, an overlapping move): nothing changed but `leaf_done`
        /// cleared. What the routine would do to guest memory at a fault
        /// is done (or not) again by the guest's own code that follows.
        Strlen = "strlen",
        Memchr = "memchr",
        Memset = "memset",
        /// memmove and memcpy: declined when the two ranges overlap.
        Memmove = "memmove",
        /// memcmp and bcmp: the difference of the first differing bytes.
        Memcmp = "memcmp",
        /// The difference of the first differing bytes.
        Strcmp = "strcmp",
        Strchr = "strchr",
        Strnlen = "strnlen",
        /// As strcmp, within the first rdx bytes.
        Strncmp = "strncmp",
        /// __memcpy_chk and __memmove_chk: memmove, declined when the
        /// destination's size (rcx) is below the length (the guest's code
        /// then reports the overflow).
        MemmoveChk = "memmove_chk",
        /// __memset_chk: memset, declined as `memmove_chk` is.
        MemsetChk = "memset_chk",
        /// memmove returning the end of the destination.
        Mempcpy = "mempcpy",
        /// memchr with no length: the byte is known to be there.
        Rawmemchr = "rawmemchr",
        /// The last byte rsi in the string (its terminator for 0), or 0.
        Strrchr = "strrchr",
        /// strcpy and stpcpy (which returns the end of the destination):
        /// declined when the string and its copy overlap.
        Strcpy = "strcpy",
        Stpcpy = "stpcpy",
        /// The last byte rsi in the rdx bytes at rdi, or 0.
        Memrchr = "memrchr",
    }
}

use crate::reg::Reg;

/// `[head..., Reg::X87_DATA...]`: a helper's registers with the x87 data
/// registers and tags, which every x87 operation may read and write.
const fn with_x87_data<const N: usize, const M: usize>(head: [Reg; N]) -> [Reg; M] {
    let mut r = [Reg::FPTAG; M];
    let mut i = 0;
    while i < M {
        r[i] = if i < N { head[i] } else { Reg::X87_DATA[i - N] };
        i += 1;
    }
    r
}

const X87_READS: [Reg; 21] = with_x87_data([Reg::FPCW, Reg::FPSW, Reg::X87_OP, Reg::X87_ADDR]);
const X87_WRITES: [Reg; 19] = with_x87_data([Reg::FPCW, Reg::FPSW]);
const X87_FLAGS_WRITES: [Reg; 24] = with_x87_data([Reg::FPSW, Reg::CF, Reg::PF, Reg::AF, Reg::ZF, Reg::SF, Reg::OF]);

impl Helper {
    pub fn reads(self) -> &'static [Reg] {
        match self {
            Helper::Cpuid => &[Reg::RAX, Reg::RCX],
            Helper::Rdtsc => &[],
            Helper::X87 | Helper::X87Flags => &X87_READS,
            Helper::Strlen => &[Reg::RDI],
            Helper::Strcmp
            | Helper::Strchr
            | Helper::Strnlen
            | Helper::Rawmemchr
            | Helper::Strrchr
            | Helper::Strcpy
            | Helper::Stpcpy => &[Reg::RDI, Reg::RSI],
            Helper::Memchr
            | Helper::Memset
            | Helper::Memmove
            | Helper::Memcmp
            | Helper::Strncmp
            | Helper::Mempcpy
            | Helper::Memrchr => &[Reg::RDI, Reg::RSI, Reg::RDX],
            Helper::MemmoveChk | Helper::MemsetChk => &[Reg::RDI, Reg::RSI, Reg::RDX, Reg::RCX],
        }
    }

    pub fn writes(self) -> &'static [Reg] {
        match self {
            Helper::Cpuid => &[Reg::RAX, Reg::RBX, Reg::RCX, Reg::RDX],
            Helper::Rdtsc => &[Reg::RAX, Reg::RDX],
            Helper::X87 => &X87_WRITES,
            Helper::X87Flags => &X87_FLAGS_WRITES,
            _ => &[Reg::RAX, Reg::LEAF_DONE],
        }
    }

    /// Whether this is a leaf routine: arm64 code under a private contract
    /// in the JIT (arguments and result in the host registers pinned to
    /// rdi, rsi, rdx and rax, nothing saved), not a call into Rust.
    pub fn is_leaf(self) -> bool {
        !matches!(self, Helper::Cpuid | Helper::Rdtsc | Helper::X87 | Helper::X87Flags)
    }

    /// Whether the helper may write guest memory.
    pub fn stores(self) -> bool {
        matches!(
            self,
            Helper::X87
                | Helper::X87Flags
                | Helper::Memset
                | Helper::Memmove
                | Helper::MemmoveChk
                | Helper::MemsetChk
                | Helper::Mempcpy
                | Helper::Strcpy
                | Helper::Stpcpy
        )
    }
}
