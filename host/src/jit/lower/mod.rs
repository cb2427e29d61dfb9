//! Lowering of an IR [`Region`] to arm64 with `dynasm!`.
//!
//! The code of a region is: a prologue that allocates the block's frame
//! (when any value needs a slot), the IR blocks in index order (block0
//! first, so the entry is the first instruction), each a dynamic label,
//! and the exits inline at their terminators. [`alloc`] decides where
//! each used value lives: block-local integers, floats and vectors in
//! registers, constants folded or materialised where used, the rest in
//! 16-byte frame slots; some values are folded into their single user
//! (a compare into its branch or select, an address into its access).
//! Values keep the interpreter's representation: integers up to 64 bits
//! zero-extended, i1 as 0 or 1, i128 and vectors in 16 bytes, f32 in the
//! low 4 bytes and f64 in 8.
//!
//! The op emitters take their operand and result registers as numbers
//! (`X(n)`, `V(n)`): converted emitters are handed the values' own
//! registers ([`Lowerer::xsrc`], [`Lowerer::xdst`]), the others load and
//! store through fixed registers with `ldx`/`stx`/`ldq`/`stq`, which move
//! between a value's home and the register (see [`frame`]). Emitters may
//! clobber only the temporaries of [`frame`] and may assume the result
//! register differs from the operands (the allocator guarantees it).
//!
//! One file per family: [`int`] (scalar integers, i128, conversions,
//! select), [`float`] (x86 floating point, scalar and vector), [`vector`]
//! (integer lanes and shape-changing ops), [`mem`] (guest state, memory,
//! atomics, the journal) and [`term`] (`insn`, `call` and terminators).
//! What is not lowered makes [`lower`] return [`Decline::Op`], and the
//! dispatcher runs the region in the interpreter instead.
//!
//! The float ops of a run of [`nan_runs`] are lowered twice: unchecked in
//! their block, which tests FPSR.IOC after the run, and with a check after
//! each op in the run's slow path, placed after the blocks.

mod alloc;
mod count;
mod crypto;
mod float;
mod frame;
mod int;
mod mem;
mod nan_runs;
mod term;
mod vector;

use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

use aarchx_ir::cond::Helper;
use aarchx_ir::{InstData, Opcode, Region, Type, Value};

use super::leaf::LeafRoutines;
use super::CompileOptions;

/// `dynasm!` for aarch64 on an assembler expression.
macro_rules! a64 {
    ($ops:expr; $($t:tt)*) => {
        dynasmrt::dynasm!($ops ; .arch aarch64 ; $($t)*)
    };
}
pub(crate) use a64;

/// Why a region is not translated (the dispatcher interprets it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Decline {
    /// An instruction the backend does not lower (arena index, op, type).
    #[error("inst {inst}: {op}.{ty} is not lowered")]
    Op { inst: u32, op: Opcode, ty: Type },
    /// The region needs a larger stack frame than a block may take.
    #[error("a frame of {0} bytes is too large")]
    FrameTooLarge(u32),
    /// No room left in the code cache: reset it and compile again.
    #[error("the code cache is full")]
    CacheFull,
    /// The assembler refused the code (a branch out of reach).
    #[error("assembler: {0}")]
    Assembler(String),
    /// The region is not well formed (a block without a terminator, a
    /// branch to a missing block): regions must pass the verifier.
    #[error("the region is malformed")]
    Malformed,
}

/// The system register FPSR (S3_3_C4_C4_1) as `mrs`/`msr` encode it, and
/// its Invalid Operation cumulative bit.
pub(crate) const FPSR: u32 = 0x5a21;
const FPSR_IOC: u32 = 0;
pub(crate) const OFF_MXCSR: u32 = aarchx_ir::GuestState::OFFSET_MXCSR as u32;

/// Emits `W(t) = ` the MXCSR exception flags that FPSR's cumulative bits
/// stand for (clobbers `W(u)`). Translated code runs with every MXCSR
/// exception masked, and the flags its float ops raise accumulate in FPSR
/// (cleared at the trampoline's entry), so while it runs the guest's MXCSR
/// is the state's `mxcsr` with these ORed in: `get mxcsr` reads it so, the
/// trampoline's exit folds them into the state, `set mxcsr` clears FPSR,
/// and a NaN run's slow path moves IOC to IE. IOC, DZC, OFC, UFC and
/// IXC (bits 0-4) are IE, ZE, OE, UE and PE (bits 0 and 2-5), and UFC
/// also stands for PE: a result FZ flushes raises UFC alone on arm64 but
/// UE and PE on x86 (FTZ), and without FZ arm64 raises UFC (underflow
/// masked) only with IXC. x86's DE has no counterpart: arm64's IDC is
/// raised only under FZ, which stands for DAZ, under which x86 raises no
/// DE. Under FPCR.AH ([`NanRules::Afp`]) a flush raises UFC and IXC, and
/// IDC is also raised for a denormal operand used unflushed; the mapping
/// is the same (IDC still maps to nothing).
pub(crate) fn fpsr_flags(ops: &mut VecAssembler<Aarch64Relocation>, t: u8, u: u8) {
    a64!(ops
        ; mrs X(t), #FPSR
        ; and WSP(u), W(t), #1
        ; and WSP(t), W(t), #0x1e
        ; orr W(t), W(u), W(t), lsl #1
        ; and WSP(u), W(t), #0x10
        ; orr W(t), W(t), W(u), lsl #1
    );
}

/// The largest frame a block may allocate on the thread's stack.
const MAX_FRAME: u32 = 1 << 20;

/// A stub as the lowering reports it, relative to the block's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StubSite {
    /// Offset of the patchable branch: a `b` for a forward exit, a `b.ne`
    /// (taken while the budget lasts) for a backward one.
    pub patch: u32,
    /// Offset of the slow path, the unlinked branch's target.
    pub slow: u32,
    /// A backward exit's `b` after its slow path, where an unlinked
    /// `b.ne` goes (on to the slow path) and a linked one when the target
    /// is out of its reach.
    pub far: Option<u32>,
    /// The guest address the exit leaves for.
    pub target: u64,
}

/// A lowered region: its code, assembled for the address given to
/// [`lower`], the offset of its entry in it, its chainable exit stubs in
/// order, and for each bare acquire/release access the offset of the
/// access and of the fixup a misaligned one resumes at.
pub struct Lowered {
    pub code: Vec<u8>,
    pub entry: usize,
    pub stubs: Vec<StubSite>,
    pub fixups: Vec<(u32, u32)>,
    /// Where each guest instruction's code starts in the body (offset,
    /// guest address), in code order: what the perf map names.
    pub guest_marks: Vec<(u32, u64)>,
    /// The end of the body: out-of-line code (checked runs' slow paths,
    /// misaligned accesses) follows.
    pub body_end: u32,
    /// Time spent on the value analysis and register allocation.
    pub allocation: std::time::Duration,
}

/// An ordered access emitted as a bare `ldar`/`stlr` (see `mem.rs`).
struct Misaligned {
    /// Offset of the access.
    at: u32,
    /// Right after it.
    back: DynamicLabel,
    bits: u32,
    /// The data and address registers.
    x: u8,
    a: u8,
    store: bool,
}

/// How translated code gets x86's NaN results from arm64's float
/// arithmetic (see `float.rs`, `nan_runs.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NanRules {
    /// Each op that can make a NaN arm64 and x86 disagree on is checked
    /// (after it, or at the end of its batched run) and fixed up.
    #[default]
    Checked,
    /// FEAT_AFP: the trampoline sets FPCR.AH (and FIZ for DAZ), under
    /// which arm64 propagates the first NaN operand, quieted, whether it
    /// signals or not, negates no NaN and makes a negative default NaN:
    /// x86's rules, so no op is checked (the IR's operand order is x86's,
    /// and the lowering keeps it; see `float.rs`, `nan_checked`).
    Afp,
}

/// Translates `region` into code to be placed at `base` (8-aligned).
/// Blocks leave by branching to `exit_addr` (the trampoline's exit);
/// chainable stubs are numbered from `first_stub`. Unless the guest code
/// at the entry `reads_flags` (the status flags it is entered with), the
/// entry is placed one word in, at an address with
/// [`crate::jit::ibtc::FLAGS_DEAD_BIT`] set, for `probe_indirect`. Float
/// code follows `nan_rules`, which must be the trampoline's. With a
/// `run_count` (the address of a quick block's word, see
/// `crate::jit::run_counts`) the block counts its runs at its entry and
/// leaves by the tier-up exit when they are used up.
#[allow(clippy::too_many_arguments, reason = "each is one fact about the block the lowering needs")]
pub fn lower(
    region: &Region,
    base: usize,
    exit_addr: usize,
    leaf: &LeafRoutines,
    first_stub: u32,
    options: CompileOptions,
    reads_flags: bool,
    nan_rules: NanRules,
    run_count: Option<usize>,
) -> Result<Lowered, Decline> {
    debug_assert_eq!(base % 8, 0, "regions start 8-aligned");
    let mut l = Lowerer::new(region, base, exit_addr, *leaf, first_stub, options, nan_rules)?;
    let entry = if reads_flags {
        0
    } else {
        // Never executed: the entry is the next word.
        a64!(l.ops; nop);
        4
    };
    let tier_up = run_count.map(|word| l.count_run(word));
    l.prologue();
    let dead = dead_stubs(region);
    for b in (0..region.blocks.len()).filter(|b| !dead[*b]) {
        l.block(b)?;
    }
    let body_end = l.ops.offset().0 as u32;
    if let Some(label) = tier_up {
        l.tier_up_exit(label);
    }
    l.checked_runs()?;
    let fixups = l.misaligned_paths();
    l.guest_marks.retain(|&(at, _)| at < body_end);
    let code = l.ops.finalize().map_err(|e| Decline::Assembler(e.to_string()))?;
    Ok(Lowered { code, entry, stubs: l.stubs, fixups, guest_marks: l.guest_marks, body_end, allocation: l.allocation })
}

/// The blocks no path from the entry reaches that hold only their
/// terminator (what `const-fold` leaves of a branch it decided): not
/// emitted, as nothing branches to them.
fn dead_stubs(region: &Region) -> Vec<bool> {
    let n = region.blocks.len();
    let mut reached = vec![false; n];
    let mut work = vec![0usize];
    while let Some(b) = work.pop() {
        if b >= n || std::mem::replace(&mut reached[b], true) {
            continue;
        }
        if let Some(last) = region.blocks[b].insts.last() {
            work.extend(region.inst(*last).successors().iter().map(|s| *s as usize));
        }
    }
    (0..n).map(|b| !reached[b] && region.blocks[b].insts.len() == 1).collect()
}

/// The state of one region's translation.
struct Lowerer<'r> {
    r: &'r Region,
    ops: VecAssembler<Aarch64Relocation>,
    exit_addr: usize,
    leaf: LeafRoutines,
    first_stub: u32,
    options: CompileOptions,
    /// Each value's home and fold, and the frame size.
    alloc: alloc::Allocation,
    /// Uses of each value, by arena index.
    uses: Vec<u32>,
    /// One label per IR block.
    labels: Vec<DynamicLabel>,
    stubs: Vec<StubSite>,
    /// Bare acquire/release accesses awaiting their misaligned paths.
    misaligned: Vec<Misaligned>,
    /// The runs of batched NaN checks, in layout order, and the next one
    /// [`Lowerer::block`] meets.
    runs: Vec<nan_runs::Run>,
    next_run: usize,
    /// Each lowered run's slow path entry and return labels.
    run_labels: Vec<(DynamicLabel, DynamicLabel)>,
    /// Lowering a run's fast path: its float ops go unchecked.
    batched: bool,
    nan_rules: NanRules,
    /// Whether any op can observe `rip` mid-region (a `call`): only then
    /// are `insn` marks written to the state.
    needs_rip: bool,
    /// The guest address of the last `insn` not yet written to `rip`.
    pending_rip: Option<u64>,
    /// The integer compare whose outcome the host's NZCV holds, while
    /// only instructions that leave NZCV alone have followed it: another
    /// `icmp` of the same operands (an exit storing ZF after CF, say)
    /// reuses it (see [`Lowerer::inst`]).
    nzcv: Option<int::Compared>,
    /// Arena index of the instruction being lowered (for declines).
    current: u32,
    /// Where each guest instruction's code starts (see [`Lowered`]).
    guest_marks: Vec<(u32, u64)>,
    /// How long [`Lowerer::new`]'s analysis and allocation took.
    allocation: std::time::Duration,
}

impl<'r> Lowerer<'r> {
    fn new(
        r: &'r Region,
        base: usize,
        exit_addr: usize,
        leaf: LeafRoutines,
        first_stub: u32,
        options: CompileOptions,
        nan_rules: NanRules,
    ) -> Result<Lowerer<'r>, Decline> {
        // Code must never run off the end of a block: check the structure
        // the verifier guarantees, cheaply, before relying on it.
        let well_formed = !r.blocks.is_empty()
            && r.blocks.iter().all(|b| {
                b.insts.last().is_some_and(|v| {
                    let d = r.inst(*v);
                    d.op.is_terminator() && d.successors().iter().all(|s| (*s as usize) < r.blocks.len())
                })
            });
        if !well_formed {
            return Err(Decline::Malformed);
        }
        let started = std::time::Instant::now();
        let mut uses = vec![0u32; r.insts.len()];
        for block in &r.blocks {
            for v in &block.insts {
                for a in r.inst(*v).values() {
                    uses[a.index()] += 1;
                }
            }
        }
        let runs = nan_runs::find(r, nan_rules);
        let alloc = alloc::allocate(r, &uses, skippable, options.journal, &runs, nan_rules);
        let allocation = started.elapsed();
        if alloc.frame > MAX_FRAME {
            return Err(Decline::FrameTooLarge(alloc.frame));
        }
        let mut ops = VecAssembler::new(base);
        // About an arm64 instruction per IR instruction: the code buffer
        // grows rarely past this.
        ops.reserve_ops(4 * r.insts.len());
        let labels = (0..r.blocks.len()).map(|_| ops.new_dynamic_label()).collect();
        let needs_rip =
            r.insts.iter().any(|d| d.op == Opcode::Call && Helper::from_u16(d.aux).is_none_or(|h| !h.is_leaf()));
        Ok(Lowerer {
            r,
            ops,
            exit_addr,
            leaf,
            first_stub,
            options,
            alloc,
            uses,
            labels,
            stubs: Vec::new(),
            misaligned: Vec::new(),
            runs,
            next_run: 0,
            run_labels: Vec::new(),
            batched: false,
            nan_rules,
            needs_rip,
            pending_rip: None,
            nzcv: None,
            current: 0,
            guest_marks: Vec::new(),
            allocation,
        })
    }

    /// Lowers IR block `b`.
    fn block(&mut self, b: usize) -> Result<(), Decline> {
        let label = self.labels[b];
        a64!(self.ops; =>label);
        self.pending_rip = None;
        self.nzcv = None;
        let r = self.r;
        let insts = &r.blocks[b].insts;
        let mut i = 0;
        while i < insts.len() {
            let run = self.runs.get(self.next_run).copied().filter(|run| run.block == b && run.first == i);
            let Some(run) = run else {
                self.lower_inst(insts[i], b)?;
                i += 1;
                continue;
            };
            // The run unchecked, then its one check (see `nan_runs`).
            self.next_run += 1;
            self.batched = true;
            for &v in &insts[run.first..=run.last] {
                self.lower_inst(v, b)?;
            }
            self.batched = false;
            let (slow, back) = (self.ops.new_dynamic_label(), self.ops.new_dynamic_label());
            a64!(self.ops
                ; mrs X(frame::T0), #FPSR
                ; tbnz W(frame::T0), #FPSR_IOC, =>slow
                ; =>back
            );
            // The slow path's checks compare, and come back here.
            self.nzcv = None;
            self.run_labels.push((slow, back));
            i = run.last + 1;
        }
        Ok(())
    }

    fn lower_inst(&mut self, v: Value, b: usize) -> Result<(), Decline> {
        self.current = v.0;
        self.inst(v, b)
    }

    /// Places each run's slow path after the blocks: the run again, each
    /// op checked, then IOC cleared (it is cumulative) and back. IOC was
    /// set by a guest op since the trampoline's entry, so MXCSR gets IE
    /// (see `fpsr_flags`); the other flags stay in FPSR.
    fn checked_runs(&mut self) -> Result<(), Decline> {
        let r = self.r;
        for (run, (slow, back)) in self.runs.clone().into_iter().zip(std::mem::take(&mut self.run_labels)) {
            a64!(self.ops; =>slow);
            self.nzcv = None;
            for &v in &r.blocks[run.block].insts[run.first..=run.last] {
                self.lower_inst(v, run.block)?;
            }
            let state = crate::jit::regs::STATE_REG;
            a64!(self.ops
                ; ldr W(frame::T0), [X(state), #OFF_MXCSR]
                ; orr WSP(frame::T0), W(frame::T0), #1
                ; str W(frame::T0), [X(state), #OFF_MXCSR]
                ; mrs X(frame::T0), #FPSR
                ; and XSP(frame::T0), X(frame::T0), #!(1u64 << FPSR_IOC)
                ; msr #FPSR, X(frame::T0)
                ; b =>back
            );
        }
        Ok(())
    }

    /// Lowers one instruction of block `b`.
    fn inst(&mut self, v: Value, b: usize) -> Result<(), Decline> {
        let d = *self.r.inst(v);
        if d.op.format().has_result() && skippable(&d, self.uses[v.index()]) {
            return Ok(());
        }
        if self.alloc.fold[v.index()] != alloc::Fold::No {
            // Emitted by its user.
            return Ok(());
        }
        // Only these ops' emitters never write NZCV (a scalar `icmp` writes
        // it through `compare`, which records what it compared); any other
        // op, and these on 128-bit or vector values (the i128 emitters
        // compare), forgets the compare before and after it.
        use Opcode as O;
        let scalar = |x: Value| {
            let t = self.ty_of(x);
            t.is_int() && t.bits() <= 64
        };
        let keeps_nzcv = match d.op {
            O::Iconst | O::Get | O::Set | O::Insn | O::Dep => true,
            O::Icmp | O::And | O::Or | O::Xor | O::Trunc | O::Zext | O::Parity => {
                d.ty.is_int() && d.ty.bits() <= 64 && d.values().all(scalar)
            }
            // A variable shift compares its amount with the width.
            O::Shl | O::Lshr => {
                d.ty.is_int() && d.ty.bits() <= 64 && d.values().all(scalar) && self.const_value(d.arg(1)).is_some()
            }
            _ => false,
        };
        if !keeps_nzcv {
            self.nzcv = None;
        }
        let lowered = self.dispatch(v, &d, b);
        if !keeps_nzcv {
            self.nzcv = None;
        }
        lowered
    }

    /// Lowers `v` (instruction `d` of block `b`) by its op's emitter.
    fn dispatch(&mut self, v: Value, d: &InstData, b: usize) -> Result<(), Decline> {
        let d = *d;
        use Opcode as O;
        match d.op {
            O::Iconst => self.iconst(v, &d),
            O::Get | O::Set | O::Load | O::Store | O::AtomicRmw | O::AtomicCas => self.mem_op(v, &d),
            O::Insn | O::Call | O::Jump | O::Brif | O::Exit | O::ExitIndirect | O::ProbeIndirect | O::Trap => {
                self.term_op(&d, b)
            }
            O::Count => self.count_op(&d),
            O::Dep => Ok(()),
            O::Fadd
            | O::Fsub
            | O::Fmul
            | O::Fdiv
            | O::Fsqrt
            | O::Fmin
            | O::Fmax
            | O::Fcmp
            | O::FcvtToSint
            | O::SintToF
            | O::Fconvert
            | O::Fround
            | O::Fma
            | O::FcvtFromF16
            | O::FcvtToF16 => self.float_op(v, &d),
            O::Select | O::Bitcast => self.generic_op(v, &d),
            O::Crc32c => self.crc32c(v, &d),
            O::AesEnc | O::AesEncLast | O::AesDec | O::AesDecLast | O::AesImc | O::AesKeygen | O::Clmul => {
                self.crypto_op(v, &d)
            }
            O::Splat
            | O::ExtractLane
            | O::InsertLane
            | O::Movmsk
            | O::Shuffle
            | O::Shuffle2
            | O::UnpackLo
            | O::UnpackHi
            | O::NarrowS
            | O::NarrowU
            | O::ByteShl
            | O::ByteShr
            | O::MulAddPairs
            | O::SumAbsDiff
            | O::MulEvenU
            | O::ShuffleBytes => self.vector_op(v, &d),
            _ if d.ty.is_vector() => self.vector_op(v, &d),
            _ if d.ty == Type::I128 || self.operand_is_i128(&d) => self.int128_op(v, &d),
            _ => self.int_op(v, &d),
        }
    }

    fn operand_is_i128(&self, d: &InstData) -> bool {
        d.values().any(|a| self.r.value_type(a) == Type::I128)
    }

    /// The decline for the instruction being lowered.
    fn decline(&self, d: &InstData) -> Decline {
        Decline::Op { inst: self.current, op: d.op, ty: d.ty }
    }

    fn ty_of(&self, v: Value) -> Type {
        self.r.value_type(v)
    }
}

/// Whether an unused result's instruction can be left out: pure ops only
/// (loads are kept, they can fault).
fn skippable(d: &InstData, uses: u32) -> bool {
    // A float op raises its exception flags even when its value is unused.
    uses == 0 && !d.op.has_side_effect() && d.op != Opcode::Load && !d.op.uses_mxcsr()
}
