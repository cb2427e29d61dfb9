//! The translation fuzzer's sequences on the JIT: the x86-64 test
//! `host/tests/fuzz_translate` writes the sequences on which the CPU and
//! the interpreter agreed, with the CPU's final state, to the file
//! `AARCHX_FUZZ_CASES` names (see docs/oracle.md); this test runs each
//! through the default policy's whole pipeline on the JIT, region after
//! region, and compares the end with the CPU's: GPRs, the flags but those
//! undefined at the end, XMM registers, the x87 status word, tags and data
//! registers (where the MMX registers live), the buffer, and the exit
//! address.
//! A sequence with a region the JIT declines for an op docs/codegen.md
//! lists as not lowered ([`EXPECTED_DECLINES`]: a real run interprets that
//! region) is counted by the declined op and not compared; any other
//! decline is a failure. Without the variable it checks nothing
//! and says so.

use std::collections::{BTreeMap, HashMap};

use aarchx_ir::{GuestState, Opcode};
use aarchx_pass::GuestCode;

use crate::jit::{BlockId, CompileOptions, Decline, Jit};
use crate::machine::RegionExit;
use crate::plugin::registry::Registry;
use crate::policy;
use crate::translate::{PassFailure, Pipeline, Variant};

const BUF_SIZE: usize = 4096;
/// Most regions one sequence enters (it only branches forward).
const MAX_REGIONS: usize = 100;

/// The code of one case at its address.
struct Code {
    addr: u64,
    bytes: Vec<u8>,
}

impl GuestCode for Code {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(off) = addr.checked_sub(self.addr).map(|o| o as usize).filter(|o| *o < self.bytes.len()) else {
            return 0;
        };
        let n = buf.len().min(self.bytes.len() - off);
        buf[..n].copy_from_slice(&self.bytes[off..off + n]);
        n
    }
}

fn bytes(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex bytes")).collect()
}

fn number(hex: &str) -> u128 {
    u128::from_str_radix(hex.trim_start_matches("0x"), 16).expect("a hex number")
}

/// A state from its fields: 16 GPRs, the flags as digits, 16 XMM
/// registers, the 16 YMM upper halves, the x87 status word and tags, R0-R7.
fn state(fields: &mut dyn Iterator<Item = &str>, rip: u64) -> GuestState {
    let mut s = GuestState::default();
    for g in s.gpr.iter_mut() {
        *g = number(fields.next().expect("a GPR")) as u64;
    }
    for (f, d) in s.flags.iter_mut().zip(fields.next().expect("the flags").bytes()) {
        *f = d - b'0';
    }
    for x in s.xmm.iter_mut().chain(s.ymm_hi.iter_mut()) {
        *x = number(fields.next().expect("an XMM register or YMM upper half"));
    }
    s.fpsw = number(fields.next().expect("the x87 status word")) as u16;
    s.fptag = number(fields.next().expect("the x87 tags")) as u8;
    for r in s.st.iter_mut() {
        *r = number(fields.next().expect("an x87 register"));
    }
    s.rip = rip;
    s
}

/// One case: code, initial state and buffer, undefined flags, and the
/// CPU's final state and buffer.
struct Case {
    code: Code,
    start: GuestState,
    buffer: Vec<u8>,
    undefined: u8,
    end: GuestState,
    end_buffer: Vec<u8>,
}

fn parse(line: &str, code_at: u64) -> Case {
    let mut f = line.split(' ');
    let code = Code { addr: code_at, bytes: bytes(f.next().expect("the code")) };
    let start = state(&mut f, code_at);
    let buffer = bytes(f.next().expect("the buffer"));
    let undefined = number(f.next().expect("the undefined flags")) as u8;
    let end = state(&mut f, 0);
    let end_buffer = bytes(f.next().expect("the final buffer"));
    assert!(buffer.len() == BUF_SIZE && end_buffer.len() == BUF_SIZE, "a buffer of {BUF_SIZE} bytes");
    Case { code, start, buffer, undefined, end, end_buffer }
}

/// The buffer's memory, mapped at the address the cases were placed for.
struct Buffer(*mut u8);

impl Buffer {
    fn map(addr: u64) -> Buffer {
        // A fixed mapping that replaces nothing.
        let placed = crate::sys::mem::reserve_exact(addr, BUF_SIZE as u64).and_then(|()| {
            // SAFETY: the range was just reserved for this buffer.
            unsafe { crate::sys::mem::protect(addr, BUF_SIZE as u64, libc::PROT_READ | libc::PROT_WRITE) }
        });
        assert!(placed.is_ok(), "cannot map the cases' buffer at {addr:#x}");
        Buffer(addr as *mut u8)
    }

    fn set(&mut self, bytes: &[u8]) {
        // SAFETY: the mapping is BUF_SIZE bytes, `bytes` as long, and no
        // reference into the mapping is live.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.0, BUF_SIZE) };
    }

    fn get(&self) -> Vec<u8> {
        let mut v = vec![0u8; BUF_SIZE];
        // SAFETY: as in `set`.
        unsafe { std::ptr::copy_nonoverlapping(self.0, v.as_mut_ptr(), BUF_SIZE) };
        v
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping made in `map`; nothing points into it.
        unsafe { crate::sys::mem::unmap(self.0 as u64, BUF_SIZE as u64) }.ok();
    }
}

/// The ops docs/codegen.md says the backend does not lower (`fround` only
/// in a directed mode with the precision exception wanted; `fcvt_to_f16`).
const EXPECTED_DECLINES: &[Opcode] = &[Opcode::AtomicCas, Opcode::Fround, Opcode::FcvtToF16];

/// How one case ended on the JIT.
enum Outcome {
    /// Run to its end: the differences from the CPU's end, if any.
    Ran(Vec<String>),
    /// A region the JIT does not lower (the decline, without its position).
    Declined(String),
}

/// Runs `case` on the JIT.
fn run(case: &Case, pipeline: &mut Pipeline, jit: &mut Jit, buffer: &mut Buffer, exit_at: u64) -> Outcome {
    jit.reset();
    buffer.set(&case.buffer);
    let mut state = case.start;
    let range = case.code.addr..case.code.addr + case.code.bytes.len() as u64;
    let mut blocks: HashMap<u64, BlockId> = HashMap::new();
    let mut problems = Vec::new();
    for _ in 0..MAX_REGIONS {
        if !range.contains(&state.rip) {
            break;
        }
        let rip = state.rip;
        let block = match blocks.get(&rip) {
            Some(b) => *b,
            None => {
                let region = match pipeline.translate(rip, &case.code, 0, Variant::Policy, true) {
                    Ok(r) => r,
                    Err(e) => return Outcome::Ran(vec![format!("region at {rip:#x}: {e}")]),
                };
                match jit.compile(&region, CompileOptions::default(), true) {
                    Ok(b) => *blocks.entry(rip).or_insert(b),
                    Err(Decline::Op { op, ty, .. }) if EXPECTED_DECLINES.contains(&op) => {
                        return Outcome::Declined(format!("{op:?}.{ty}"))
                    }
                    Err(e) => return Outcome::Ran(vec![format!("region at {rip:#x}: {e:?}")]),
                }
            }
        };
        let mut helpers = Vec::new();
        // SAFETY: the sequences address only the buffer (the fuzzer ran
        // them on the interpreter, which checked that, and on the CPU).
        let out = unsafe { jit.run(block, &mut state, &mut |h, _| helpers.push(h)) };
        if !helpers.is_empty() {
            problems.push(format!("helper calls {helpers:?}"));
        }
        if !matches!(out.exit, RegionExit::Jump { .. }) {
            problems.push(format!("exit {:?} at {:#x}", out.exit, state.rip));
            break;
        }
    }
    if state.rip != exit_at {
        problems.push(format!("left at {:#x}, not {exit_at:#x}", state.rip));
    }
    let names = ["cf", "pf", "af", "zf", "sf", "of", "df"];
    for k in 0..16 {
        if state.gpr[k] != case.end.gpr[k] {
            problems.push(format!("gpr{k}: CPU {:#x} | JIT {:#x}", case.end.gpr[k], state.gpr[k]));
        }
        if state.xmm[k] != case.end.xmm[k] {
            problems.push(format!("xmm{k}: CPU {:#x} | JIT {:#x}", case.end.xmm[k], state.xmm[k]));
        }
        if state.ymm_hi[k] != case.end.ymm_hi[k] {
            problems.push(format!("ymm{k} upper half: CPU {:#x} | JIT {:#x}", case.end.ymm_hi[k], state.ymm_hi[k]));
        }
    }
    for (k, name) in names.iter().enumerate() {
        if case.undefined & (1 << k) == 0 && state.flags[k] != case.end.flags[k] {
            problems.push(format!("{name}: CPU {} | JIT {}", case.end.flags[k], state.flags[k]));
        }
    }
    if (state.fpsw, state.fptag) != (case.end.fpsw, case.end.fptag) {
        let (c, j) = (&case.end, &state);
        problems.push(format!("fpsw, fptag: CPU {:#x}, {:#x} | JIT {:#x}, {:#x}", c.fpsw, c.fptag, j.fpsw, j.fptag));
    }
    for p in 0..8 {
        if state.st[p] != case.end.st[p] {
            problems.push(format!("r{p}: CPU {:#x} | JIT {:#x}", case.end.st[p], state.st[p]));
        }
    }
    let mem = buffer.get();
    if let Some(off) = (0..BUF_SIZE).find(|&k| mem[k] != case.end_buffer[k]) {
        problems.push(format!("buffer from +{off:#x}: CPU {:02x} | JIT {:02x}", case.end_buffer[off], mem[off]));
    }
    Outcome::Ran(problems)
}

#[test]
fn fuzz_cases_on_the_jit() {
    let Some(path) = std::env::var_os("AARCHX_FUZZ_CASES") else {
        eprintln!("skipped: fuzz_cases_on_the_jit: AARCHX_FUZZ_CASES is not set (see docs/oracle.md)");
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("AARCHX_FUZZ_CASES {path:?}: {e}"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("the header line").split(' ').collect();
    let ["code", code_at, "buffer", buffer_at, "exit", exit_at] = header[..] else {
        panic!("a header `code C buffer B exit E`")
    };
    let (code_at, buffer_at, exit_at) = (number(code_at) as u64, number(buffer_at) as u64, number(exit_at) as u64);
    crate::signals::install_fault_handlers();
    let mut buffer = Buffer::map(buffer_at);
    let mut policy = policy::builtin_default();
    // The sequences ran on an x86-64 CPU with every level's forms.
    policy.cpu_level = aarchx_pass::CpuLevel::V3;
    let registry = Registry::builtin(aarchx_passes::BUILTIN);
    let passes = policy.validate(&registry).expect("the default policy validates");
    let mut pipeline =
        Pipeline::new(&passes, policy.translation_config(), None, PassFailure::Fail).expect("the default pipeline");
    let mut jit = Jit::new(crate::engine::nan_rules(policy.afp)).expect("JIT starts");
    let (mut cases, mut failures, mut declined) = (0, Vec::new(), BTreeMap::<String, usize>::new());
    for (n, line) in lines.enumerate() {
        let case = parse(line, code_at);
        cases += 1;
        let problems = match run(&case, &mut pipeline, &mut jit, &mut buffer, exit_at) {
            Outcome::Ran(problems) => problems,
            Outcome::Declined(op) => {
                *declined.entry(op).or_default() += 1;
                continue;
            }
        };
        if !problems.is_empty() {
            failures.push(format!(
                "case {n} (line {}): code {}\n  {}",
                n + 2,
                line.split(' ').next().unwrap_or(""),
                problems.join("\n  ")
            ));
        }
    }
    println!(
        "fuzz cases on the JIT: {cases} sequences, {} differ, {} not compared (a region declined: {declined:?})",
        failures.len(),
        declined.values().sum::<usize>()
    );
    for f in failures.iter().take(10) {
        println!("{f}");
    }
    assert!(failures.is_empty(), "{} of {cases} sequences end differently on the JIT than on the CPU", failures.len());
}
