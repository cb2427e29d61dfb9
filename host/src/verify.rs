//! Verify mode: the IR interpreter checks the JIT. A region is checked on
//! its first few executions and every Nth after: snapshot the guest state,
//! run the JIT code with its stores journaled, note the result, roll state
//! and memory back, run the interpreter on the same IR, and compare the
//! whole guest state and every stored byte. The interpreter's result is
//! the one kept. Regions that call runtime helpers (cpuid, rdtsc) are not
//! replayable and are not checked.

use std::collections::{BTreeMap, HashMap};

use aarchx_ir::cond::Helper;
use aarchx_ir::{GuestState, Opcode, Reg, Region, Type};

use crate::engine::EngineError;
use crate::interp::{self, RegionExit};
use crate::jit::{CompileOptions, Jit};
use crate::machine::Machine;
use crate::policy::{OnMismatch, VerifySettings};
use crate::syscall::Process;

/// Counters and journaled blocks of verify mode.
pub struct Verifier {
    settings: VerifySettings,
    executions: HashMap<u64, u64>,
    checked_blocks: u64,
    checked_runs: u64,
    mismatches: u64,
}

/// A machine over guest memory that records the old bytes of every store,
/// so the interpreter's stores can be compared with the JIT's.
struct Recording<'a, M: Machine> {
    inner: &'a mut M,
    old: BTreeMap<u64, u8>,
}

impl<M: Machine> Machine for Recording<'_, M> {
    fn load(&mut self, addr: u64, ty: Type) -> u128 {
        self.inner.load(addr, ty)
    }

    fn store(&mut self, addr: u64, ty: Type, bits: u128) {
        for i in 0..u64::from(ty.bits() / 8) {
            let byte = self.inner.load(addr + i, Type::I8) as u8;
            self.old.entry(addr + i).or_insert(byte);
        }
        self.inner.store(addr, ty, bits)
    }

    fn helper(&mut self, helper: Helper, state: &mut GuestState) {
        self.inner.helper(helper, state)
    }
}

impl Verifier {
    pub fn new(settings: VerifySettings) -> Verifier {
        Verifier { settings, executions: HashMap::new(), checked_blocks: 0, checked_runs: 0, mismatches: 0 }
    }

    pub fn invalidate(&mut self, start: u64, len: u64) {
        let range = start..start.saturating_add(len);
        self.executions.retain(|a, _| !range.contains(a));
    }

    pub fn summary(&self) -> String {
        format!(
            "aarchx: verify: {} blocks, {} executions checked, {} mismatches",
            self.checked_blocks, self.checked_runs, self.mismatches
        )
    }

    /// Checks this execution of `region` if it is due; returns its exit
    /// when it ran it (the interpreter's result is then the state).
    pub fn maybe_check(
        &mut self,
        jit: &mut Jit,
        region: &Region,
        state: &mut GuestState,
        process: &mut Process,
    ) -> Result<Option<RegionExit>, EngineError> {
        let n = self.executions.entry(region.entry).or_insert(0);
        *n += 1;
        let due = *n <= u64::from(self.settings.first)
            || (self.settings.every > 0 && *n % u64::from(self.settings.every) == 0);
        let replayable = !region.insts.iter().any(|d| d.op == Opcode::Call);
        if !due || !replayable {
            return Ok(None);
        }
        let journaled = CompileOptions { journal: true };
        let block = match jit.lookup_with(region.entry, journaled) {
            Some(b) => b,
            None => match jit.compile(region, journaled, true) {
                Ok(b) => {
                    self.checked_blocks += 1;
                    b
                }
                Err(_) => return Ok(None),
            },
        };
        let before = *state;
        let mem = &mut process.mem;
        // SAFETY: as for any JIT run (see engine.rs): guest addresses are
        // identity-mapped and no Rust reference into guest memory is alive.
        let jit_out = unsafe { jit.run(block, state, &mut |h, s| mem.helper(h, s)) };
        if matches!(jit_out.exit, RegionExit::Fault { .. }) {
            // A faulting run has no exact state to compare, and the
            // faulting store's entry may name memory that cannot be
            // written back: undo what can be, keep the interpreter's run.
            crate::signal::probe::undo(jit.journal());
            *state = before;
            // The JIT counted this run's instrumentation already.
            return Ok(Some(crate::counters::muted(|| interp::run_region(region, state, mem))));
        }
        let jit_state = *state;
        let mut jit_bytes: BTreeMap<u64, u8> = BTreeMap::new();
        for e in jit.journal() {
            for i in 0..e.size {
                jit_bytes.insert(e.addr + i, mem.load(e.addr + i, Type::I8) as u8);
            }
        }
        // SAFETY: rolls back exactly the stores the journaled run made, to
        // memory that was writable for them.
        unsafe { jit.rollback() };
        *state = before;
        let mut rec = Recording { inner: mem, old: BTreeMap::new() };
        // The JIT's run counted the instrumentation; this one checks it.
        let interp_exit = crate::counters::muted(|| interp::run_region(region, state, &mut rec));
        let interp_old = rec.old;
        self.checked_runs += 1;

        let mut diffs = state_diffs(&jit_state, state);
        if jit_out.exit != interp_exit {
            diffs.push(format!("exit: jit {:?}, interpreter {:?}", jit_out.exit, interp_exit));
        }
        let addrs: std::collections::BTreeSet<u64> = jit_bytes.keys().chain(interp_old.keys()).copied().collect();
        for a in addrs {
            let now = mem.load(a, Type::I8) as u8;
            let jit_value = jit_bytes.get(&a).copied().unwrap_or_else(|| interp_old.get(&a).copied().unwrap_or(now));
            if jit_value != now {
                diffs.push(format!("byte at {a:#x}: jit {jit_value:#04x}, interpreter {now:#04x}"));
            }
        }
        if !diffs.is_empty() {
            self.mismatches += 1;
            let report = mismatch_report(region, process, &diffs);
            match self.settings.on_mismatch {
                OnMismatch::Exit => return Err(EngineError::Mismatch(report)),
                OnMismatch::Count => eprintln!("aarchx: {report}"),
            }
        }
        Ok(Some(interp_exit))
    }
}

/// MXCSR's denormal-operand flag, which translated code never raises
/// (arm64 has no such flag; see docs/architecture.md, "SSE floating
/// point"): not compared.
const MXCSR_DE: u128 = 0x2;

fn state_diffs(jit: &GuestState, interp: &GuestState) -> Vec<String> {
    Reg::all()
        .chain(std::iter::once(Reg(u16::MAX)))
        .filter_map(|r| {
            let (a, b) = if r.0 == u16::MAX {
                (u128::from(jit.rip), u128::from(interp.rip))
            } else if r == Reg::MXCSR {
                (jit.get(r) & !MXCSR_DE, interp.get(r) & !MXCSR_DE)
            } else {
                (jit.get(r), interp.get(r))
            };
            let name = if r.0 == u16::MAX { "rip".to_string() } else { r.to_string() };
            (a != b).then(|| format!("{name}: jit {a:#x}, interpreter {b:#x}"))
        })
        .collect()
}

/// The block's address, its x86 disassembly, its IR and the differing
/// fields, as one report.
fn mismatch_report(region: &Region, process: &Process, diffs: &[String]) -> String {
    use aarchx_pass::GuestCode;
    use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};
    let mut text = format!("verify: mismatch in the block at {:#x}: {}\n", region.entry, diffs.join("; "));
    let mut formatter = IntelFormatter::new();
    for (addr, len) in region.guest_insns() {
        let mut bytes = vec![0u8; usize::from(len)];
        let got = process.mem.read(addr, &mut bytes);
        let insn = Decoder::with_ip(64, &bytes[..got], addr, DecoderOptions::NONE).decode();
        let mut asm = String::new();
        formatter.format(&insn, &mut asm);
        text.push_str(&format!("  {addr:#x}: {asm}\n"));
    }
    text.push_str(&aarchx_ir::print::print(region));
    text
}
