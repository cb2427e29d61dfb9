//! The differential run of one sequence (the CPU, the reference translation,
//! the whole default pipeline, compared with the flags undefined at the end
//! masked), the shrinking of a differing sequence to a minimal one, and
//! the report: the listing, the initial state, what each side ended with,
//! the pipeline's IR, and the case as a `Regression` to paste into
//! `regressions.rs`; and an agreeing run as a line of the case file the
//! JIT test on aarch64 reads (`AARCHX_FUZZ_CASES`).

use std::fmt::Write;

use aarchx_ir::GuestState;

use crate::compare::{self, CodeBytes, Diff, InterpResult};
use crate::engines::{self, Translation, Translator};
use crate::layout::{Layout, BUF_SIZE};
use crate::native::{self, NativeResult, Runner};
use crate::regressions::Regression;
use crate::sequence::{self, Pool, Sequence};
use crate::states::{self, Case, Rng};
use crate::undefined;

/// Where the fuzzer's arena is mapped when it can be: the cases for the
/// JIT (`Fuzzer::case_line`) are placed there, so the aarch64 test maps
/// their buffer at the same address. Below 2 GiB, as `[disp32]` operands
/// need, and free in a qemu-aarch64 process.
pub const JIT_ARENA: u64 = 0x1000_0000;

/// A sequence's initial state: registers and flags, and the buffer (the
/// bytes `states::random_case` makes from a seed, or zeros).
#[derive(Clone)]
pub struct Start {
    pub state: GuestState,
    pub buffer: Option<u64>,
}

impl Start {
    /// The random initial state of seed `seed`.
    pub fn random(layout: &Layout, seed: u64) -> Start {
        Start { state: states::random_case(layout, layout.insn, &mut Rng::new(seed)).state, buffer: Some(seed) }
    }

    pub fn case(&self, layout: &Layout) -> Case {
        let mem = match self.buffer {
            Some(seed) => states::random_case(layout, layout.insn, &mut Rng::new(seed)).mem,
            None => vec![0; BUF_SIZE],
        };
        Case { state: self.state, mem }
    }
}

/// Which translation differs from the CPU.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Blame {
    /// The reference translation (the lifter) already differs.
    Lifter,
    /// Only the whole pipeline differs: a pass after `decode`.
    Passes,
}

/// The ends of a differing run.
pub struct Difference {
    pub blame: Blame,
    undefined: u8,
    native: Result<GuestState, String>,
    reference: InterpResult,
    full: InterpResult,
    reference_diffs: Vec<Diff>,
    full_diffs: Vec<Diff>,
}

impl Difference {
    /// What kind of difference this is, for reporting one of each: the
    /// blame and the fields that differ (memory as one field), or the
    /// machine errors (a failed translation) without their addresses.
    pub fn signature(&self) -> String {
        let diffs = if self.blame == Blame::Lifter { &self.reference_diffs } else { &self.full_diffs };
        let errors: Vec<&Diff> = diffs.iter().filter(|d| d.field == "machine").collect();
        let mut fields: Vec<String> = if errors.is_empty() {
            diffs.iter().map(|d| if d.field.starts_with("mem[") { "mem".into() } else { d.field.clone() }).collect()
        } else {
            errors
                .iter()
                .map(|d| d.interp.split_whitespace().filter(|w| !w.starts_with("0x")).collect::<Vec<_>>().join(" "))
                .collect()
        };
        fields.sort();
        fields.dedup();
        format!("{:?}: {}", self.blame, fields.join(" "))
    }
}

/// The end of a run where the CPU and both translations agree.
pub struct Agreement {
    /// The code as the translations read it (the sequence and its `jmp`
    /// to the epilogue).
    code: Vec<u8>,
    undefined: u8,
    native: NativeResult,
}

pub enum Outcome {
    /// Not a valid sequence from this state (why).
    Invalid(String),
    Agree(Box<Agreement>),
    Differ(Box<Difference>),
}

/// What the valid sequences run so far exercised.
#[derive(Default, Debug)]
pub struct Coverage {
    pub sequences: usize,
    /// Regions the full pipeline translated.
    pub regions: usize,
    /// Sequences the full pipeline translated as two regions or more.
    pub multi_region: usize,
}

pub struct Fuzzer {
    pub coverage: Coverage,
    runner: Runner,
    layout: Layout,
    pool: Pool,
    full: Translator,
    reference: Translator,
    step: Translator,
}

impl Fuzzer {
    /// A fuzzer whose arena is at `arena` if that is free, else anywhere.
    /// A run's sequences depend on where the arena is (a register may hold
    /// a buffer address as data), so the batch asks for `JIT_ARENA`.
    pub fn new(arena: Option<u64>) -> Fuzzer {
        let runner = Runner::preferring(arena);
        let layout = runner.layout();
        Fuzzer {
            coverage: Coverage::default(),
            runner,
            layout,
            pool: Pool::new(&layout),
            full: Translator::new(Translation::Full),
            reference: Translator::new(Translation::Reference),
            step: Translator::new(Translation::Step),
        }
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub fn forms(&self) -> usize {
        self.pool.len()
    }

    pub fn generate(&self, rng: &mut Rng) -> Sequence {
        sequence::generate(&self.pool, &self.layout, rng)
    }

    /// Runs `seq` from `start` on the CPU and both translations.
    pub fn check(&mut self, seq: &Sequence, start: &Start) -> Outcome {
        match seq.assemble(self.layout.insn) {
            Some(code) => self.check_code(&code, &code, start),
            None => Outcome::Invalid("too long for the code slot".into()),
        }
    }

    /// Runs `native` on the CPU and `lifted` (the same code, but for the
    /// harness's self-test) through both translations, from `start`.
    pub fn check_code(&mut self, native: &[u8], lifted: &[u8], start: &Start) -> Outcome {
        let case = start.case(&self.layout);
        let at = self.layout.insn;
        let end = at + lifted.len() as u64;
        self.runner.install_code(lifted);
        let mut bytes = vec![0u8; lifted.len() + 5];
        let n = self.runner.read_code(at, &mut bytes);
        bytes.truncate(n);
        let code = CodeBytes { addr: at, bytes };
        for t in [&mut self.full, &mut self.reference, &mut self.step] {
            t.reset();
        }
        let insns = sequence::by_address(lifted, at);
        let undefined = match engines::undefined_at_end(&mut self.step, &mut self.runner, &code, &insns, &case, end) {
            Ok(mask) => mask,
            Err(why) => return Outcome::Invalid(why),
        };
        let reference = self.reference.run_all(&mut self.runner, &code, &case);
        let full = self.full.run_all(&mut self.runner, &code, &case);
        self.coverage.sequences += 1;
        self.coverage.regions += self.full.regions();
        self.coverage.multi_region += usize::from(self.full.regions() > 1);
        self.runner.install_code(native);
        let exit = self.layout.epilogue;
        let (native, reference_diffs, full_diffs) = match self.runner.run(&case.state, &case.mem) {
            Ok(n) => {
                let diffs = |r: &InterpResult| compare::compare(&n.state, &n.mem, r, exit, undefined, 0);
                let (reference_diffs, full_diffs) = (diffs(&reference), diffs(&full));
                if reference_diffs.is_empty() && full_diffs.is_empty() {
                    return Outcome::Agree(Box::new(Agreement { code: code.bytes, undefined, native: n }));
                }
                (Ok(n.state), reference_diffs, full_diffs)
            }
            Err(f) => {
                let fault = format!("signal {} at {:#x}", f.signal, f.addr);
                let diff = |_: &InterpResult| {
                    vec![Diff { field: "native fault".into(), native: fault.clone(), interp: "-".into() }]
                };
                (Err(fault.clone()), diff(&reference), diff(&full))
            }
        };
        let blame = if reference_diffs.is_empty() { Blame::Passes } else { Blame::Lifter };
        Outcome::Differ(Box::new(Difference { blame, undefined, native, reference, full, reference_diffs, full_diffs }))
    }

    fn differs(&mut self, seq: &Sequence, start: &Start, blame: Blame) -> bool {
        matches!(self.check(seq, start), Outcome::Differ(d) if d.blame == blame)
    }

    /// The smallest sequence and simplest state found that still differ
    /// with the same blame: items removed one at a time while the
    /// difference stays, then registers, flags and the buffer zeroed.
    pub fn shrink(&mut self, seq: &Sequence, start: &Start, blame: Blame) -> (Sequence, Start) {
        let mut seq = seq.clone();
        let mut start = start.clone();
        loop {
            let before = seq.items.len();
            for i in (0..seq.items.len()).rev() {
                let smaller = seq.without(i);
                if self.differs(&smaller, &start, blame) {
                    seq = smaller;
                }
            }
            if seq.items.len() == before {
                break;
            }
        }
        let tries: Vec<Box<dyn Fn(&mut Start)>> = (0..16)
            .filter(|&g| g != 4)
            .map(|g| Box::new(move |s: &mut Start| s.state.gpr[g] = 0) as Box<dyn Fn(&mut Start)>)
            .chain((0..16).map(|x| Box::new(move |s: &mut Start| s.state.xmm[x] = 0) as Box<dyn Fn(&mut Start)>))
            .chain((0..16).map(|x| Box::new(move |s: &mut Start| s.state.ymm_hi[x] = 0) as Box<dyn Fn(&mut Start)>))
            .chain((0..7).map(|f| Box::new(move |s: &mut Start| s.state.flags[f] = 0) as Box<dyn Fn(&mut Start)>))
            .chain(std::iter::once(Box::new(|s: &mut Start| s.buffer = None) as Box<dyn Fn(&mut Start)>))
            .collect();
        for t in &tries {
            let mut simpler = start.clone();
            t(&mut simpler);
            if self.differs(&seq, &simpler, blame) {
                start = simpler;
            }
        }
        (seq, start)
    }

    /// The report of differing code (a sequence assembled at the arena's
    /// code address, shrunk or not).
    pub fn report(&mut self, code: &[u8], start: &Start, origin: &str) -> String {
        let Outcome::Differ(d) = self.check_code(code, code, start) else {
            return format!("{origin}: no longer differs\n");
        };
        let mut out = String::new();
        let who = match d.blame {
            Blame::Lifter => "the reference translation (the lifter) differs from the CPU",
            Blame::Passes => "the full pipeline differs from the CPU; the reference translation agrees",
        };
        let _ = writeln!(out, "=== {origin}: {who}");
        let _ = write!(out, "  code:\n{}", sequence::listing(code, self.layout.insn, &self.layout));
        let _ = writeln!(out, "  initial state:\n{}", compare::state_text(&start.state));
        let _ = writeln!(
            out,
            "  buffer: {}, rsp = buf+{:#x}",
            start.buffer.map_or("zeros".into(), |s| format!("states::random_case(seed {s:#x})")),
            start.state.gpr[4].wrapping_sub(self.layout.buf)
        );
        let _ = writeln!(
            out,
            "  flags undefined at the end (not compared): {}",
            if d.undefined == 0 { "none".into() } else { undefined::names(d.undefined) }
        );
        for (name, diffs) in [("reference", &d.reference_diffs), ("full pipeline", &d.full_diffs)] {
            if diffs.is_empty() {
                let _ = writeln!(out, "  {name}: agrees with the CPU");
                continue;
            }
            let _ = writeln!(out, "  {name} (field: CPU | {name}):");
            for diff in diffs {
                let _ = writeln!(out, "    {:<16} {} | {}", diff.field, diff.native, diff.interp);
            }
        }
        match &d.native {
            Ok(n) => {
                let _ = writeln!(out, "  CPU final state:\n{}", compare::state_text(n));
            }
            Err(f) => {
                let _ = writeln!(out, "  CPU: {f}");
            }
        }
        let _ = writeln!(out, "  reference final state:\n{}", compare::state_text(&d.reference.state));
        let _ = writeln!(out, "  full pipeline final state:\n{}", compare::state_text(&d.full.state));
        let _ = writeln!(out, "  full pipeline IR:\n{}", self.full.regions_text());
        let _ = writeln!(out, "  as a regression (host/tests/fuzz_translate/regressions.rs):");
        let _ = writeln!(out, "{}", self.regression_text(code, start));
        out
    }

    /// The case as a `Regression` literal, relocated to an arena at 0, in
    /// lines rustfmt leaves alone.
    fn regression_text(&self, code: &[u8], start: &Start) -> String {
        let canonical = native::layout_at(0);
        let code = sequence::relocate(code, &self.layout, &canonical);
        let mut gpr = start.state.gpr;
        gpr[4] = gpr[4] - self.layout.code + canonical.code;
        // Items `per` to a line, indented as the fields.
        let rows = |items: Vec<String>, per: usize| -> String {
            items.chunks(per).map(|c| format!("            {},\n", c.join(", "))).collect()
        };
        let mut out = String::from("    Regression {\n        what: \"TODO: what went wrong\",\n");
        for l in sequence::listing(&code, canonical.insn, &canonical).lines() {
            out.push_str(&format!("        // {}\n", l.trim()));
        }
        out.push_str("        code: &[\n");
        out.push_str(&rows(code.iter().map(|b| format!("{b:#04x}")).collect(), 16));
        out.push_str("        ],\n        gpr: [\n");
        out.push_str(&rows(gpr.iter().map(|g| format!("{g:#x}")).collect(), 4));
        let flags: Vec<String> = start.state.flags[..7].iter().map(|f| f.to_string()).collect();
        out.push_str(&format!("        ],\n        flags: [{}],\n        xmm: &[\n", flags.join(", ")));
        let xmm = (0..16).filter(|&x| start.state.xmm[x] != 0).map(|x| format!("({x}, {:#x})", start.state.xmm[x]));
        out.push_str(&rows(xmm.collect(), 1));
        let buffer = start.buffer.map_or("None".into(), |s| format!("Some({s:#x})"));
        out.push_str(&format!("        ],\n        buffer: {buffer},\n    }},"));
        out
    }

    /// The first line of a case file for the JIT (`AARCHX_FUZZ_CASES`, read
    /// by the aarch64 lib test `jit::tests::fuzz_cases`): where the cases'
    /// code starts, their buffer, and the address the code leaves to; the
    /// arena must be at `JIT_ARENA`, where the JIT test maps the buffer.
    pub fn cases_header(&self) -> Option<String> {
        let l = &self.layout;
        (l.code == JIT_ARENA).then(|| format!("code {:#x} buffer {:#x} exit {:#x}", l.insn, l.buf, l.epilogue))
    }

    /// An agreed run as a line of the case file: the code, the initial
    /// GPRs, flags (cf pf af zf sf of df), XMM registers, YMM upper halves,
    /// x87 status word, tags and R0-R7 (the MMX registers' home) and
    /// buffer, the flags undefined at the end (a mask), then the CPU's
    /// final GPRs, flags, XMM registers, YMM upper halves, x87 state and
    /// buffer; hexadecimal, space-separated.
    pub fn case_line(&self, a: &Agreement, start: &Start) -> String {
        let state = |s: &GuestState| {
            let gpr = s.gpr.iter().map(|g| format!("{g:x}"));
            let flags: String = s.flags[..7].iter().map(|f| f.to_string()).collect();
            let xmm = s.xmm.iter().chain(&s.ymm_hi).map(|x| format!("{x:x}"));
            let x87 = [format!("{:x}", s.fpsw), format!("{:x}", s.fptag)].into_iter();
            let st = s.st.iter().map(|r| format!("{r:x}"));
            gpr.chain(std::iter::once(flags)).chain(xmm).chain(x87).chain(st).collect::<Vec<_>>().join(" ")
        };
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        format!(
            "{} {} {} {:x} {} {}",
            hex(&a.code),
            state(&start.state),
            hex(&start.case(&self.layout).mem),
            a.undefined,
            state(&a.native.state),
            hex(&a.native.mem)
        )
    }

    /// Runs a pasted regression: its code moved to this arena.
    pub fn check_regression(&mut self, r: &Regression) -> Outcome {
        let (code, start) = self.regression_case(r);
        self.check_code(&code, &code, &start)
    }

    /// A regression's code and start in this arena.
    pub fn regression_case(&self, r: &Regression) -> (Vec<u8>, Start) {
        let canonical = native::layout_at(0);
        let code = sequence::relocate(r.code, &canonical, &self.layout);
        let mut state = GuestState::default();
        state.gpr = r.gpr;
        state.gpr[4] = state.gpr[4] - canonical.code + self.layout.code;
        state.flags[..7].copy_from_slice(&r.flags);
        for (x, v) in r.xmm {
            state.xmm[*x] = *v;
        }
        state.rip = self.layout.insn;
        (code, Start { state, buffer: r.buffer })
    }
}
