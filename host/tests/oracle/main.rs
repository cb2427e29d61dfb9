//! The first oracle layer: the real x86-64 CPU checks the lifter. For every
//! instruction form the lifter implements (each operand size and
//! addressing form, see `forms`), random register, flag, XMM and memory
//! states (see `states`) run natively (`native`) and through the decode
//! pass + IR interpreter (`compare`), and must end in the same state,
//! except for the flags the SDM leaves undefined (`undefined`).
//!
//! Environment:
//! - `AARCHX_ORACLE_STATES`: states per form (default 200);
//! - `AARCHX_ORACLE_FILTER`: only forms whose disassembly contains this;
//! - `AARCHX_ORACLE_SEED`: changes every state (default 0);
//! - `AARCHX_ORACLE_LIST=1`: print every form run.
//!
//! Run: `cargo test --release -p aarchx --test oracle -- --nocapture`.
//! See docs/oracle.md.
#![cfg(target_arch = "x86_64")]

mod compare;
mod forms;
mod layout;
mod native;
mod states;
mod undefined;
mod x87;

use std::collections::BTreeMap;
use std::fmt::Write;

use aarchx::machine::RegionExit;
use aarchx_ir::TrapKind;
use iced_x86::Mnemonic;

use forms::Form;
use native::Runner;
use states::{hash, Rng};

struct Config {
    states: usize,
    filter: Option<String>,
    seed: u64,
    list: bool,
}

impl Config {
    fn from_env() -> Config {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Config {
            states: var("AARCHX_ORACLE_STATES")
                .map(|v| v.parse().expect("AARCHX_ORACLE_STATES is a number"))
                .unwrap_or(200),
            filter: var("AARCHX_ORACLE_FILTER"),
            seed: var("AARCHX_ORACLE_SEED").map(|v| v.parse().expect("AARCHX_ORACLE_SEED is a number")).unwrap_or(0),
            list: var("AARCHX_ORACLE_LIST").is_some(),
        }
    }

    fn forms(&self, runner: &Runner) -> Vec<Form> {
        forms::all(&runner.layout())
            .into_iter()
            .filter(|f| self.filter.as_ref().is_none_or(|s| f.text.contains(s.as_str())))
            .collect()
    }
}

/// What went wrong with one form.
struct Failure {
    text: String,
    bad: usize,
    states: usize,
    fields: BTreeMap<String, usize>,
    detail: String,
}

/// Runs one form over `cfg.states` states; `Err(())` means the lifter
/// does not implement it (`trap ill`).
fn check_form(cfg: &Config, runner: &mut Runner, form: &Form) -> Result<Option<Failure>, ()> {
    let layout = runner.layout();
    runner.install(&form.bytes);
    let fail = |detail: String, field: &str| Failure {
        text: form.text.clone(),
        bad: cfg.states,
        states: cfg.states,
        fields: BTreeMap::from([(field.to_string(), cfg.states)]),
        detail,
    };
    let region = match compare::lift(runner) {
        Ok(r) => r,
        Err(e) => return Ok(Some(fail(format!("  {e}\n"), "lift"))),
    };
    let ir = aarchx_ir::print::print(&region);
    let next_ip = form.insn.next_ip();
    let mut rng = Rng::new(hash(form.text.as_bytes()) ^ cfg.seed.wrapping_mul(0x9e37_79b9));
    let mut bad = 0;
    let mut fields = BTreeMap::new();
    let mut detail = String::new();
    for s in 0..cfg.states {
        let case = states::generate(form, &layout, &mut rng);
        assert!(
            !undefined::undefined_result(&form.insn, &case.state),
            "{}: the state leaves the result undefined (states::steer should prevent it)",
            form.text
        );
        let mut interp = compare::interpret(runner, &region, &case);
        if interp.exit == (RegionExit::Trap { kind: TrapKind::Ill }) && interp.state.rip == layout.insn {
            return Err(());
        }
        let (diffs, native) = match runner.run(&case.state, &case.mem) {
            Ok(mut n) => {
                let mask = undefined::undefined(&form.insn, &case.state);
                undefined::mask_model_nans(&form.insn, &mut n.state, &mut interp.state);
                let area = states::effective_address(&form.insn, &case.state).checked_sub(layout.buf);
                undefined::mask_model_mxcsr_mask(&form.insn, case.state.gpr[0], area.map(|a| a as usize), &mut n.mem);
                (
                    compare::compare(
                        &n.state,
                        &n.mem,
                        &interp,
                        next_ip,
                        mask,
                        x87::undefined_fpsw(form.insn.mnemonic()),
                    ),
                    Some((n, mask)),
                )
            }
            // An unmasked SSE exception, or a pending x87 one at an MMX
            // instruction: SIGFPE at the instruction, as the interpreter's
            // `simdfp` or `x87fp` trap there.
            Err(f)
                if f.signal == libc::SIGFPE
                    && matches!(interp.exit, RegionExit::Trap { kind: TrapKind::SimdFp | TrapKind::X87Fp })
                    && interp.state.rip == layout.insn =>
            {
                continue;
            }
            Err(f) => {
                let d = compare::Diff {
                    field: "native fault".into(),
                    native: format!("signal {} at {:#x}", f.signal, f.addr),
                    interp: "-".into(),
                };
                (vec![d], None)
            }
        };
        if diffs.is_empty() {
            continue;
        }
        bad += 1;
        for d in &diffs {
            let key = if d.field.starts_with("mem[") { "mem".to_string() } else { d.field.clone() };
            *fields.entry(key).or_insert(0) += 1;
        }
        if detail.is_empty() {
            let _ = writeln!(detail, "  first differing state: #{s}");
            if let Some((_, mask)) = &native {
                let _ = writeln!(
                    detail,
                    "  undefined flags (not compared): {}",
                    if *mask == 0 { "none".into() } else { undefined::names(*mask) }
                );
            }
            let _ = writeln!(detail, "  initial state:\n{}", compare::state_text(&case.state));
            let _ = write!(detail, "{}", compare::memory_text(&case, &layout, &form.insn, form.string));
            let _ = writeln!(detail, "  differences (field: native | interpreted):");
            for d in &diffs {
                let _ = writeln!(detail, "    {:<16} {} | {}", d.field, d.native, d.interp);
            }
            if let Some((n, _)) = &native {
                let _ = writeln!(detail, "  native final state:\n{}", compare::state_text(&n.state));
            }
            let _ = writeln!(detail, "  interpreted final state:\n{}", compare::state_text(&interp.state));
            let _ =
                writeln!(detail, "  IR:\n{}", ir.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n"));
        }
    }
    Ok((bad > 0).then(|| Failure { text: form.text.clone(), bad, states: cfg.states, fields, detail }))
}

#[test]
fn lifter_matches_cpu() {
    let cfg = Config::from_env();
    let mut runner = Runner::new();
    let forms = cfg.forms(&runner);
    let start = std::time::Instant::now();
    let mut failures = Vec::new();
    let mut unsupported = Vec::new();
    let mut not_yet = Vec::new();
    let mut implemented_now = Vec::new();
    for form in &forms {
        if cfg.list {
            println!("form {:<50} [{}] {}", form.text, form.hex(), form.code);
        }
        match check_form(&cfg, &mut runner, form) {
            Err(()) => match forms::not_yet(form) {
                Some(why) => not_yet.push(format!("{} ({}): {why}", form.text, form.code)),
                None => unsupported.push(format!("{} [{}] ({})", form.text, form.hex(), form.code)),
            },
            Ok(result) => {
                if forms::not_yet(form).is_some() {
                    implemented_now.push(format!("{} ({})", form.text, form.code));
                }
                if let Some(f) = result {
                    println!(
                        "--- FAIL {} [{}] ({}): {} of {} states differ",
                        f.text,
                        form.hex(),
                        form.code,
                        f.bad,
                        f.states
                    );
                    print!("{}", f.detail);
                    failures.push(f);
                }
            }
        }
    }
    println!();
    println!("oracle: {} forms x {} states in {:.1?}", forms.len(), cfg.states, start.elapsed());
    let uncovered = if cfg.filter.is_none() { forms::uncovered(&forms) } else { Vec::new() };
    if !uncovered.is_empty() {
        println!("listed mnemonics without any form: {uncovered:?}");
    }
    if !not_yet.is_empty() {
        println!("not yet implemented ({} forms, listed in forms::NOT_YET):", not_yet.len());
        for n in &not_yet {
            println!("  {n}");
        }
    }
    if !implemented_now.is_empty() {
        println!("implemented now, remove from forms::NOT_YET:");
        for n in &implemented_now {
            println!("  {n}");
        }
    }
    if !unsupported.is_empty() {
        println!("unsupported by the lifter (trap ill), {} forms:", unsupported.len());
        for u in &unsupported {
            println!("  {u}");
        }
    }
    if !failures.is_empty() {
        println!("differing forms ({}):", failures.len());
        for f in &failures {
            let fields: Vec<String> = f.fields.iter().map(|(k, v)| format!("{k}x{v}")).collect();
            println!("  {}: {} of {} states differ [{}]", f.text, f.bad, f.states, fields.join(" "));
        }
    }
    assert!(
        failures.is_empty() && unsupported.is_empty() && uncovered.is_empty(),
        "{} forms differ from the CPU, {} forms are unsupported, {} mnemonics have no form (see the output above)",
        failures.len(),
        unsupported.len(),
        uncovered.len()
    );
}

/// div and idiv must raise #DE (`trap divzero`) at the instruction, with
/// the guest state and memory untouched, for a zero divisor and for a
/// quotient that does not fit. These states are never run natively.
#[test]
fn divide_errors_trap() {
    let cfg = Config::from_env();
    let mut runner = Runner::new();
    let layout = runner.layout();
    let forms: Vec<Form> = cfg
        .forms(&runner)
        .into_iter()
        .filter(|f| matches!(f.insn.mnemonic(), Mnemonic::Div | Mnemonic::Idiv))
        .collect();
    let mut problems = Vec::new();
    for form in &forms {
        runner.install(&form.bytes);
        let region = compare::lift(&runner).unwrap_or_else(|e| panic!("{}: {e}", form.text));
        let mut rng = Rng::new(hash(form.text.as_bytes()) ^ DIV_SEED);
        let insn = &form.insn;
        let size = states::op_size(insn, 0);
        let bits = 8 * size as u32;
        let data = match size {
            1 => iced_x86::Register::AH,
            2 => iced_x86::Register::DX,
            4 => iced_x86::Register::EDX,
            _ => iced_x86::Register::RDX,
        };
        for k in 0..8 {
            let mut case = states::generate(form, &layout, &mut rng);
            if k % 2 == 0 {
                states::write_op(&mut case, &layout, insn, 0, 0);
            } else {
                // dividend >= 2^(2*bits-2) divided by 1: the quotient overflows.
                states::write_op(&mut case, &layout, insn, 0, 1);
                states::set_reg(&mut case.state, data, 1u128 << (bits - 2));
            }
            if !states::divide_faults(&case, &layout, insn) {
                problems.push(format!("{}: case {k} was meant to fault but does not (test bug)", form.text));
                continue;
            }
            let interp = compare::interpret(&mut runner, &region, &case);
            let mut expect = case.state;
            expect.rip = layout.insn;
            if interp.exit != (RegionExit::Trap { kind: TrapKind::DivZero })
                || interp.state != expect
                || interp.mem != case.mem
            {
                problems.push(format!(
                    "{}: case {k}: exit {:?} rip {:#x}, state unchanged: {}, memory unchanged: {}\n{}",
                    form.text,
                    interp.exit,
                    interp.state.rip,
                    interp.state == expect,
                    interp.mem == case.mem,
                    aarchx_ir::print::print(&region)
                ));
            }
        }
    }
    println!("divide traps: {} div/idiv forms x 8 faulting states", forms.len());
    for p in &problems {
        println!("{p}");
    }
    assert!(problems.is_empty(), "{} faulting div/idiv states did not trap as #DE", problems.len());
}

/// Seed for the divide-trap states.
const DIV_SEED: u64 = 0xd1d1_d1d1;

/// The oracle can fail: with the native side running one instruction and
/// the interpreter the lift of another, nearly every state must differ.
/// Guards against a harness that compares nothing (a state not loaded or
/// not stored, a buffer not copied).
#[test]
fn oracle_detects_a_wrong_lift() {
    let cfg = Config::from_env();
    let mut runner = Runner::new();
    let layout = runner.layout();
    // (run natively, lifted instead, what must differ)
    let pairs: [(&[u8], &[u8], &str); 6] = [
        (&[0x01, 0xc8], &[0x29, 0xc8], "add eax,ecx vs sub eax,ecx: rax"),
        (&[0x0f, 0x58, 0xc1], &[0x0f, 0x5c, 0xc1], "addps vs subps: xmm0"),
        (&[0x66, 0x45, 0x0f, 0xef, 0xf9], &[0x66, 0x45, 0x0f, 0xeb, 0xf9], "pxor vs por xmm15,xmm9: xmm15"),
        (&[0x89, 0x43, 0x08], &[0x89, 0x43, 0x0c], "mov [rbx+8],eax vs mov [rbx+12],eax: memory"),
        (&[0xf9], &[0xf8], "stc vs clc: cf"),
        (&[0xfd], &[0xfc], "std vs cld: df"),
    ];
    let states = cfg.states.clamp(20, 200);
    for (native_bytes, lifted_bytes, what) in pairs {
        let native_form = forms::from_bytes(native_bytes, &layout);
        runner.install(lifted_bytes);
        let region = compare::lift(&runner).expect("the other instruction lifts");
        runner.install(native_bytes);
        let mut rng = Rng::new(hash(what.as_bytes()));
        let (mut differ, mut ran) = (0, 0);
        for _ in 0..states {
            let case = states::generate(&native_form, &layout, &mut rng);
            let interp = compare::interpret(&mut runner, &region, &case);
            let native = match runner.run(&case.state, &case.mem) {
                // An unmasked exception of the state's MXCSR (addps).
                Err(f) if f.signal == libc::SIGFPE => continue,
                run => run.expect("no native fault"),
            };
            ran += 1;
            let mask = undefined::undefined(&native_form.insn, &case.state);
            // The two instructions have the same length, so the exit matches.
            if !compare::compare(&native.state, &native.mem, &interp, native_form.insn.next_ip(), mask, 0).is_empty() {
                differ += 1;
            }
        }
        // stc/clc and std/cld agree whenever the flag already had the lifted
        // value; addps and subps agree on some NaN, infinite and zero lanes.
        let need = if native_bytes.len() == 1 { ran / 4 } else { ran * 3 / 4 };
        assert!(ran >= states / 2, "{what}: only {ran} of {states} states ran natively");
        assert!(differ >= need, "{what}: only {differ} of {ran} states differ; the oracle is not comparing");
    }
}

/// A native fault in the instruction under test is caught and reported,
/// and the runner keeps working after it.
#[test]
fn native_faults_are_caught() {
    let mut runner = Runner::new();
    let layout = runner.layout();
    let add = forms::from_bytes(&[0x01, 0xc8], &layout);
    let mut rng = Rng::new(1);
    // mov eax, [0]; ud2; int3
    for (bytes, signal) in
        [(&[0x8b, 0x04, 0x25, 0, 0, 0, 0][..], libc::SIGSEGV), (&[0x0f, 0x0b], libc::SIGILL), (&[0xcc], libc::SIGTRAP)]
    {
        runner.install(bytes);
        let case = states::generate(&add, &layout, &mut rng);
        let fault = runner.run(&case.state, &case.mem).err().expect("the instruction faults natively");
        assert_eq!(fault.signal, signal, "{bytes:02x?}");
        runner.install(&add.bytes);
        let n = runner.run(&case.state, &case.mem).expect("add runs after a fault");
        assert_eq!(n.state.gpr[0] as u32, (case.state.gpr[0] as u32).wrapping_add(case.state.gpr[1] as u32));
    }
}

/// docs/oracle.md must show every row of the undefined-flags table.
#[test]
fn docs_mirror_the_mask_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/oracle.md");
    let doc = std::fs::read_to_string(path).expect("docs/oracle.md exists");
    for row in undefined::TABLE {
        let names: Vec<String> = row.mnemonics.iter().map(|m| format!("{m:?}").to_lowercase()).collect();
        let line = format!("| {} | {} |", names.join(", "), row.doc);
        assert!(doc.contains(&line), "docs/oracle.md lacks the mask table row `{line}`");
    }
}
