//! The translations a sequence runs through besides the CPU, all from the
//! default policy (`policies/default.ron`): its whole pass list, its
//! reference translation (the decode and lowering passes: the lifter and
//! memory-order), and the reference one instruction per region (the
//! step-by-step run). A sequence runs region after region
//! on the interpreter until it reaches its end. The step-by-step run also
//! decides whether a sequence is valid (no memory outside the buffer, no
//! trap, no undefined result, no flag the SDM leaves undefined read) and
//! which flags are undefined at its end.

use std::collections::HashMap;

use aarchx::interp::run_region;
use aarchx::machine::RegionExit;
use aarchx::plugin::registry::Registry;
use aarchx::policy::{self, Policy};
use aarchx::translate::{PassFailure, Pipeline, Variant};
use aarchx_ir::{ExitKind, Region, TrapKind};
use aarchx_pass::CpuLevel;
use iced_x86::Instruction;

use crate::compare::{self, CodeBytes, InterpResult};
use crate::native::Runner;
use crate::states::Case;
use crate::undefined;

/// Which translation of the default policy.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Translation {
    /// Every pass of the policy.
    Full,
    /// The policy's reference translation: its decode and lowering
    /// passes (`decode`, `memory-order`), see `aarchx::translate`.
    Reference,
    /// The reference translation, one instruction per region.
    Step,
}

/// Most regions one run enters (sequences only branch forward, so a run
/// enters at most one per instruction).
const MAX_REGIONS: usize = 100;

/// A pipeline and the regions it translated for the current code.
pub struct Translator {
    pipeline: Pipeline,
    variant: Variant,
    regions: HashMap<u64, Result<Region, String>>,
}

impl Translator {
    pub fn new(t: Translation) -> Translator {
        let mut policy: Policy = policy::builtin_default();
        // The sequences run on this CPU, which has every level's forms.
        policy.cpu_level = CpuLevel::V3;
        if t == Translation::Step {
            policy.apply_set("decode.max_insns=1", None).expect("the default policy has a decode pass");
        }
        let registry = Registry::builtin(aarchx_passes::BUILTIN);
        let passes = policy.validate(&registry).unwrap_or_else(|e| panic!("the default policy: {e}"));
        // A pass that fails is a difference, not a reason to fall back.
        let pipeline = Pipeline::new(&passes, policy.translation_config(), None, PassFailure::Fail)
            .unwrap_or_else(|e| panic!("the default policy's passes: {e}"));
        let variant = if t == Translation::Full { Variant::Policy } else { Variant::Reference };
        Translator { pipeline, variant, regions: HashMap::new() }
    }

    /// Forgets the regions translated so far (the code changes).
    pub fn reset(&mut self) {
        self.regions.clear();
    }

    /// Runs `code` from `case` on the interpreter, region after region,
    /// until it leaves the code, traps, or has entered `max` regions.
    pub fn run(&mut self, runner: &mut Runner, code: &CodeBytes, case: &Case, max: usize) -> InterpResult {
        let range = code.addr..code.addr + code.bytes.len() as u64;
        compare::interpret_with(runner, case, |state, machine| {
            let mut exit = RegionExit::Jump { kind: ExitKind::Jump };
            for _ in 0..max {
                if !range.contains(&state.rip) {
                    return exit;
                }
                let entry = state.rip;
                let region = self.regions.entry(entry).or_insert_with(|| {
                    self.pipeline
                        .translate(entry, code, 0, self.variant, true)
                        .map_err(|e| format!("translation failed: {e}"))
                });
                match region {
                    Ok(region) => exit = run_region(region, state, machine),
                    Err(e) => {
                        machine.errors.push(e.clone());
                        return RegionExit::Trap { kind: TrapKind::Ill };
                    }
                }
                if !matches!(exit, RegionExit::Jump { .. }) {
                    return exit;
                }
            }
            if range.contains(&state.rip) && max == MAX_REGIONS {
                machine.errors.push(format!("still in the sequence after {MAX_REGIONS} regions"));
            }
            exit
        })
    }

    /// How many regions were translated for the current code.
    pub fn regions(&self) -> usize {
        self.regions.len()
    }

    /// The IR of the regions translated for the current code, by address.
    pub fn regions_text(&self) -> String {
        let mut entries: Vec<&u64> = self.regions.keys().collect();
        entries.sort();
        let mut out = String::new();
        for e in entries {
            match &self.regions[e] {
                Ok(r) => out.extend(aarchx_ir::print::print(r).lines().map(|l| format!("    {l}\n"))),
                Err(why) => out.push_str(&format!("    {e:#x}: {why}\n")),
            }
        }
        out
    }

    /// Runs `code` from `case` to its end.
    pub fn run_all(&mut self, runner: &mut Runner, code: &CodeBytes, case: &Case) -> InterpResult {
        self.run(runner, code, case, MAX_REGIONS)
    }
}

/// Runs the sequence one instruction at a time (`step` is a `Step`
/// translator) along the path it takes and follows the flags the SDM
/// leaves undefined: an instruction's own (`undefined::undefined` in the
/// state before it) and those an instruction passes on. Whether an
/// instruction reads or keeps them is asked of its lifted IR by running it
/// again with each other combination of their values: a change outside
/// the flags means it reads them, a flag that changes with them is still
/// undefined after it.
/// Returns the flags undefined at the end, or why the sequence is not
/// valid.
pub fn undefined_at_end(
    step: &mut Translator,
    runner: &mut Runner,
    code: &CodeBytes,
    insns: &HashMap<u64, Instruction>,
    case: &Case,
    end: u64,
) -> Result<u8, String> {
    let mut cur = case.clone();
    let mut undefined = 0u8;
    for _ in 0..=insns.len() {
        if cur.state.rip == end {
            return Ok(undefined);
        }
        let Some(insn) = insns.get(&cur.state.rip) else {
            return Err(format!("left the sequence at {:#x}", cur.state.rip));
        };
        if undefined::undefined_result(insn, &cur.state) {
            return Err("an undefined result".into());
        }
        let after = step.run(runner, code, &cur, 1);
        if let Some(e) = after.errors.first() {
            return Err(e.clone());
        }
        if !matches!(after.exit, RegionExit::Jump { .. }) {
            return Err(format!("{:?}", after.exit));
        }
        // Which NaN such a lane holds depends on the CPU model.
        if undefined::model_nan_lanes(insn, &after.state) != [0; 2] {
            return Err("a dot product's NaN lane".into());
        }
        let mut kept = 0u8;
        // Every other value of the undefined flags (the CPU's may be any).
        let mut flip = undefined;
        while flip != 0 {
            let mut other = cur.clone();
            for f in (0..6).filter(|f| flip & (1 << f) != 0) {
                other.state.flags[f] ^= 1;
            }
            let again = step.run(runner, code, &other, 1);
            let mut state = again.state;
            state.flags = after.state.flags;
            if state != after.state || again.mem != after.mem || again.exit != after.exit || !again.errors.is_empty() {
                return Err(format!("reads the undefined {}", undefined::names(undefined)));
            }
            for k in 0..6 {
                if again.state.flags[k] != after.state.flags[k] {
                    kept |= 1 << k;
                }
            }
            flip = (flip - 1) & undefined;
        }
        undefined = kept | undefined::undefined(insn, &cur.state);
        cur = Case { state: after.state, mem: after.mem };
    }
    Err("did not reach the end".into())
}
