//! Verify mode: each region is checked on its first few executions and
//! every Nth after, against two references. From one snapshot of the guest
//! state, the region as the policy translated it runs on the JIT (on
//! aarch64, its stores journaled) and on the IR interpreter, and the
//! region's reference translation (decode and lowering passes only, see
//! [`crate::translate`]) runs on the interpreter; memory is rolled back
//! between the runs. The JIT must agree with the interpreter on the same
//! IR (else the JIT is wrong), and the policy's IR with the reference IR
//! (else a pass is wrong): the whole guest state, the exit and every stored
//! byte are compared. The reference run is the one kept. Regions that
//! call runtime helpers (cpuid, rdtsc, the x87 unit) are not replayable
//! and are not checked.
//!
//! Flags are the exception, because `dead-flags` leaves a flag unwritten
//! at a direct exit when the code there overwrites it before reading it.
//! When the two translations differ only in flags at a
//! direct exit, the check goes on at the exit's target, whatever region
//! that is: its reference translation runs from both states, and unless
//! they agree (apart from flags it too leaves alone, which defers the check
//! again) the flags were read after all, a mismatch blamed on the first
//! region. This checks the pass's look at the target by running the
//! target, not by asking the same analysis again. At a trap or a guest
//! memory fault inside a region, flags that its own code overwrites later
//! may differ: `dead-flags` does not keep them for a signal handler (the
//! trade FEX-Emu and box64 make too), and the reference run, whose state
//! is kept, hands the handler the exact ones.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;
use std::sync::Arc;

use aarchx_ir::cond::Helper;
use aarchx_ir::{ExitKind, GuestState, Opcode, Reg, Region, TrapKind, Type};

use crate::engine::{Engine, EngineError, Journaled};
use crate::interp;
use crate::machine::Machine;
use crate::machine::RegionExit;
use crate::mem::GuestAccess;
use crate::policy::{OnMismatch, VerifySettings};
use crate::signal::probe;
use crate::syscall::Process;
use crate::translate::Shape;

/// Counters of verify mode, and a flag check that waits for its target.
pub struct Verifier {
    settings: VerifySettings,
    executions: FxHashMap<u64, u64>,
    checked_runs: u64,
    mismatches: u64,
    pending: Option<Pending>,
}

/// Status flags a checked region left as the reference translation did
/// not, to be checked where its exit went.
struct Pending {
    /// Where the region left for: the next region to run.
    target: u64,
    /// The guest state with the policy translation's flags.
    state: GuestState,
    /// The flags that differ.
    flags: Vec<Reg>,
    /// The region whose translations differed, both of them.
    policy: Arc<Region>,
    reference: Arc<Region>,
}

/// The bytes a run stored: for each address, its value before the run
/// and after it.
pub type Stored = BTreeMap<u64, (u8, u8)>;

/// One run of a region: the state and exit it ended with, and what it
/// stored.
pub struct Run {
    pub state: GuestState,
    pub exit: RegionExit,
    pub stored: Stored,
}

/// Guest memory that records the old bytes of every store, so a run's
/// stores can be compared and undone.
struct Recording {
    inner: GuestAccess,
    old: BTreeMap<u64, u8>,
}

impl Recording {
    /// Records the old bytes of a `ty` at `addr` about to be written.
    /// Bytes that cannot be read are not written either: the access
    /// faults, and its fault is the one the interpreter takes.
    fn record(&mut self, addr: u64, ty: Type) {
        let n = u64::from(ty.bits() / 8);
        let old: Vec<u8> = (0..n).map(|i| self.inner.load(addr.wrapping_add(i), Type::I8) as u8).collect();
        if probe::take_fault().is_none() {
            for (i, byte) in (0..n).zip(old) {
                self.old.entry(addr.wrapping_add(i)).or_insert(byte);
            }
        }
    }
}

impl Machine for Recording {
    fn load(&mut self, addr: u64, ty: Type) -> u128 {
        self.inner.load(addr, ty)
    }

    fn store(&mut self, addr: u64, ty: Type, bits: u128) {
        self.record(addr, ty);
        self.inner.store(addr, ty, bits)
    }

    fn cas(&mut self, addr: u64, ty: Type, expected: u128, new: u128) -> u128 {
        self.record(addr, ty);
        self.inner.cas(addr, ty, expected, new)
    }

    fn helper(&mut self, helper: Helper, state: &mut GuestState) {
        self.inner.helper(helper, state)
    }
}

/// How a run of [`interpret`] treats the policy's instrumentation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counting {
    /// This run stands for the guest's execution: its `count`s add up.
    Counted,
    /// Another run counted this execution already.
    Muted,
}

/// Runs `region` on the interpreter from `start`.
fn interpret(region: &Region, start: &GuestState, counting: Counting) -> Run {
    let mut state = *start;
    let mut rec = Recording { inner: GuestAccess, old: BTreeMap::new() };
    let mut run = || interp::run_region(region, &mut state, &mut rec);
    let exit = match counting {
        Counting::Counted => run(),
        Counting::Muted => crate::counters::muted(run),
    };
    let old = rec.old;
    let stored = old.into_iter().map(|(a, b)| (a, (b, GuestAccess.load(a, Type::I8) as u8))).collect();
    Run { state, exit, stored }
}

/// Writes back the bytes `run` overwrote (those a faulting store names
/// but could not write stay as they are, and leave no fault behind for the
/// next access to find).
fn undo(run: &Run) {
    for (&a, &(old, _)) in &run.stored {
        GuestAccess.store(a, Type::I8, u128::from(old));
    }
    probe::take_fault();
}

impl Verifier {
    pub fn new(settings: VerifySettings) -> Verifier {
        Verifier { settings, executions: FxHashMap::default(), checked_runs: 0, mismatches: 0, pending: None }
    }

    pub fn invalidate(&mut self, start: u64, len: u64) {
        let range = start..start.saturating_add(len);
        self.executions.retain(|a, _| !range.contains(a));
    }

    pub fn summary(&self) -> String {
        format!(
            "aarchx: verify: {} blocks, {} executions checked, {} mismatches",
            self.executions.len(),
            self.checked_runs,
            self.mismatches
        )
    }

    /// Counts this execution of `region`; whether it is to be checked (it
    /// is due, or a flag check waits for it).
    pub fn due(&mut self, region: &Region) -> bool {
        if !self.executions.contains_key(&region.entry) {
            crate::bounds::make_room(&mut self.executions);
        }
        let n = self.executions.entry(region.entry).or_insert(0);
        *n += 1;
        let due = *n <= u64::from(self.settings.first)
            || (self.settings.every > 0 && (*n).is_multiple_of(u64::from(self.settings.every)));
        let waited_for = self.pending.as_ref().is_some_and(|p| p.target == region.entry);
        if !waited_for {
            // Something else runs first (a signal's handler): the flags
            // it sees are the reference's, and the check is dropped.
            self.pending = None;
        }
        (due || waited_for) && !region.insts.iter().any(|d| d.op == Opcode::Call)
    }

    /// Checks one execution of `policy` (the region for `state.rip`)
    /// against `reference`, its reference translation, and on the JIT
    /// against the interpreter; leaves the reference run's state and
    /// memory and returns its exit.
    pub fn check(
        &mut self,
        engine: &mut Engine,
        policy: &Arc<Region>,
        shape: Shape,
        reference: &Arc<Region>,
        state: &mut GuestState,
        process: &mut Process,
    ) -> Result<RegionExit, EngineError> {
        let before = *state;
        if let Some(p) = self.pending.take() {
            if let Some(report) = self.check_flags(p, reference, &before, process) {
                self.mismatch(report)?;
            }
        }
        let (jit, counted) = match engine.run_journaled(policy, shape, &before) {
            Journaled::Ran(run) => (Some(run), true),
            Journaled::Faulted => (None, true),
            Journaled::NotRun => (None, false),
        };
        // Each execution counts once: on the JIT when it ran, else on the
        // interpreter's run of the policy's IR (the reference translation
        // carries no instrumentation).
        let counting = if counted { Counting::Muted } else { Counting::Counted };
        let optimised = interpret(policy, &before, counting);
        undo(&optimised);
        let kept = interpret(reference, &before, Counting::Muted);
        self.checked_runs += 1;

        let mut report = None;
        if let Some(jit) = jit {
            let diffs = diffs(("jit", &jit), ("interpreter", &optimised), MXCSR_DE);
            if !diffs.is_empty() {
                report = Some(mismatch_report("the JIT and the interpreter differ", policy, None, process, &diffs));
            }
        }
        if report.is_none() {
            let flags = flag_diffs(&optimised.state, &kept.state);
            let diffs = diffs(("policy", &optimised), ("reference", &kept), 0);
            let direct = matches!(kept.exit, RegionExit::Jump { kind: ExitKind::Jump | ExitKind::Call });
            // Faults an instruction inside the region raises; a region that
            // ends in a trap (ud2, int3, an unreadable instruction) keeps
            // every flag live there.
            let faulted = matches!(
                kept.exit,
                RegionExit::Fault { .. }
                    | RegionExit::Trap {
                        kind: TrapKind::DivZero | TrapKind::SimdFp | TrapKind::X87Fp | TrapKind::Privileged
                    }
            );
            if faulted && !flags.is_empty() && diffs.len() == flags.len() {
                // A fault inside the region: the flags of an instruction
                // before it may be dead in the region's own code (the
                // trade docs/policies.md states), and the handler gets the
                // reference's.
            } else if direct && !flags.is_empty() && diffs.len() == flags.len() {
                // Only flags differ: fine unless the target reads them.
                self.pending = Some(Pending {
                    target: kept.state.rip,
                    state: optimised.state,
                    flags,
                    policy: Arc::clone(policy),
                    reference: Arc::clone(reference),
                });
            } else if !diffs.is_empty() {
                let what = "the policy's translation and the reference translation differ";
                report = Some(mismatch_report(what, policy, Some(reference), process, &diffs));
            }
        }
        *state = kept.state;
        if let Some(report) = report {
            self.mismatch(report)?;
        }
        Ok(kept.exit)
    }

    /// Runs `reference`, the region a pending flag check waited for, from
    /// `start` and from the state with the checked region's flags; a
    /// report when they differ other than in flags it leaves alone (which
    /// defers the check again). Leaves memory as it was.
    fn check_flags(
        &mut self,
        p: Pending,
        reference: &Region,
        start: &GuestState,
        process: &mut Process,
    ) -> Option<String> {
        let mut alt_start = *start;
        for r in &p.flags {
            alt_start.set(*r, p.state.get(*r));
        }
        let alt = interpret(reference, &alt_start, Counting::Muted);
        undo(&alt);
        let real = interpret(reference, start, Counting::Muted);
        undo(&real);
        let flags = flag_diffs(&alt.state, &real.state);
        let diffs = diffs(("with the dropped flags", &alt), ("with the reference's", &real), 0);
        // A fault at the target (a store to a page write-protected for its
        // code runs again after it) defers the check to the faulting
        // instruction as a direct exit does to its target.
        let direct =
            matches!(real.exit, RegionExit::Jump { kind: ExitKind::Jump | ExitKind::Call } | RegionExit::Fault { .. });
        if diffs.is_empty() {
            return None;
        }
        if direct && diffs.len() == flags.len() && flags.iter().all(|f| p.flags.contains(f)) {
            self.pending = Some(Pending { target: real.state.rip, state: alt.state, flags, ..p });
            return None;
        }
        let names: Vec<String> = p.flags.iter().map(Reg::to_string).collect();
        let what = format!(
            "the policy's translation leaves {} as the reference does not at its exit to {:#x}, and the code \
             there reads them ({})",
            names.join(", "),
            reference.entry,
            diffs.join("; ")
        );
        Some(mismatch_report(&what, &p.policy, Some(&p.reference), process, &[]))
    }

    /// Counts a mismatch: exits with its report, or prints it and goes on.
    fn mismatch(&mut self, report: String) -> Result<(), EngineError> {
        self.mismatches += 1;
        match self.settings.on_mismatch {
            OnMismatch::Exit => Err(EngineError::Mismatch(report)),
            OnMismatch::Count => {
                eprintln!("aarchx: {report}");
                Ok(())
            }
        }
    }
}

/// The flags whose values differ between `a` and `b`.
fn flag_diffs(a: &GuestState, b: &GuestState) -> Vec<Reg> {
    Reg::all().filter(|r| r.as_flag().is_some() && a.get(*r) != b.get(*r)).collect()
}

/// MXCSR's denormal-operand flag, which translated code never raises
/// (arm64 has no such flag; see docs/architecture.md, "SSE floating
/// point"): not compared between the JIT and the interpreter.
const MXCSR_DE: u128 = 0x2;

/// How runs `a` and `b` from one state and memory differ: registers
/// (MXCSR but the bits `mxcsr_ignored`), flags, vector state, rip, the
/// exit, and each byte either stored (a byte only one of them stored kept
/// its value before the runs in the other).
fn diffs((an, a): (&str, &Run), (bn, b): (&str, &Run), mxcsr_ignored: u128) -> Vec<String> {
    let mut out: Vec<String> = Reg::all()
        .filter_map(|r| {
            let ignored = if r == Reg::MXCSR { mxcsr_ignored } else { 0 };
            let (x, y) = (a.state.get(r) & !ignored, b.state.get(r) & !ignored);
            (x != y).then(|| format!("{r}: {an} {x:#x}, {bn} {y:#x}"))
        })
        .collect();
    if a.state.rip != b.state.rip {
        out.push(format!("rip: {an} {:#x}, {bn} {:#x}", a.state.rip, b.state.rip));
    }
    if a.exit != b.exit {
        out.push(format!("exit: {an} {:?}, {bn} {:?}", a.exit, b.exit));
    }
    let addrs: BTreeSet<u64> = a.stored.keys().chain(b.stored.keys()).copied().collect();
    for addr in addrs {
        let (x, y) = (a.stored.get(&addr).copied(), b.stored.get(&addr).copied());
        let before = x.or(y).map_or(0, |(old, _)| old);
        let (x, y) = (x.map_or(before, |(_, new)| new), y.map_or(before, |(_, new)| new));
        if x != y {
            out.push(format!("byte at {addr:#x}: {an} {x:#04x}, {bn} {y:#04x}"));
        }
    }
    out
}

/// The block's address, its x86 disassembly, its IR (and the reference
/// IR, when the passes are at fault) and the differing fields, as one
/// report.
fn mismatch_report(
    what: &str,
    region: &Region,
    reference: Option<&Region>,
    process: &Process,
    diffs: &[String],
) -> String {
    use aarchx_pass::GuestCode;
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};
    let mut text = format!("verify: mismatch in the block at {:#x}, {what}", region.entry);
    if !diffs.is_empty() {
        text.push_str(&format!(": {}", diffs.join("; ")));
    }
    text.push('\n');
    let mut formatter = IntelFormatter::new();
    for (addr, len) in region.guest_insns() {
        let mut bytes = vec![0u8; usize::from(len)];
        let got = process.mem.lock().read(addr, &mut bytes);
        let insn = Decoder::with_ip(64, &bytes[..got], addr, DecoderOptions::NONE).decode();
        let mut asm = String::new();
        formatter.format(&insn, &mut asm);
        text.push_str(&format!("  {addr:#x}: {asm}\n"));
    }
    match reference {
        Some(reference) => {
            text.push_str("the policy's IR:\n");
            text.push_str(&aarchx_ir::print::print(region));
            text.push_str("the reference IR:\n");
            text.push_str(&aarchx_ir::print::print(reference));
        }
        None => text.push_str(&aarchx_ir::print::print(region)),
    }
    text
}
