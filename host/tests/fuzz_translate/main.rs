//! Differential fuzzing of translation: random sequences of the oracle's
//! instruction forms (see `sequence`) with forward branches, shift counts
//! that mask to zero and memory operands in the scratch buffer run on the
//! real CPU, through the default policy's reference translation (its
//! decode and lowering passes: the lifter) and through its whole pass
//! list, both on the interpreter (`engines`), and must end in the same
//! state but for the flags the SDM leaves undefined. A
//! differing sequence is shrunk and printed with a `Regression` to paste
//! into `regressions`, which run first (`fuzzer`).
//!
//! Environment:
//! - `AARCHX_FUZZ_SEQUENCES`: sequences to run (default 20 000, or
//!   200 000 for the ignored `long_run`);
//! - `AARCHX_FUZZ_SEED`: a number every sequence and state derives from
//!   (default 0);
//! - `AARCHX_FUZZ_CASES`: a file to write the agreeing sequences to, with
//!   the CPU's results, for the JIT test on aarch64
//!   (`jit::tests::fuzz_cases`).
//!
//! Run: `cargo test --release -p aarchx --test fuzz_translate -- --nocapture`
//! (add `--ignored` for the long run). See docs/oracle.md.
#![cfg(target_arch = "x86_64")]

#[allow(dead_code)]
#[path = "../oracle/compare.rs"]
mod compare;
#[allow(dead_code)]
#[path = "../oracle/forms.rs"]
mod forms;
#[allow(dead_code)]
#[path = "../oracle/layout.rs"]
mod layout;
#[allow(dead_code)]
#[path = "../oracle/native.rs"]
mod native;
#[allow(dead_code)]
#[path = "../oracle/states.rs"]
mod states;
#[allow(dead_code)]
#[path = "../oracle/undefined.rs"]
mod undefined;
#[allow(dead_code)]
#[path = "../oracle/x87.rs"]
mod x87;

mod engines;
mod fuzzer;
mod regressions;
mod sequence;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::time::Instant;

use fuzzer::{Blame, Fuzzer, Outcome, Start, JIT_ARENA};
use regressions::REGRESSIONS;
use states::{hash, Rng};

/// Most differing sequences shrunk and reported in one run (the first of
/// each kind, see `Difference::signature`).
const MAX_REPORTS: usize = 8;
/// Mixed into a sequence's seed for its items (the state takes the seed).
const ITEMS: u64 = 0x17e5_5eed;

fn env(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok().filter(|v| !v.is_empty())?;
    Some(v.parse().unwrap_or_else(|_| panic!("{name} is a number, not `{v}`")))
}

/// Runs the regressions, then `AARCHX_FUZZ_SEQUENCES` (or `default`) valid
/// sequences; fails with the shrunk reports if any differ.
fn fuzz(default: usize) {
    let sequences = env("AARCHX_FUZZ_SEQUENCES").map_or(default, |n| n as usize);
    let seed = env("AARCHX_FUZZ_SEED").unwrap_or(0);
    let mut fz = Fuzzer::new(Some(JIT_ARENA));
    let layout = fz.layout();
    let started = Instant::now();
    let mut reports = Vec::new();
    for r in REGRESSIONS {
        match fz.check_regression(r) {
            Outcome::Agree(_) => {}
            Outcome::Invalid(why) => reports.push(format!("=== regression \"{}\" is not valid: {why}\n", r.what)),
            Outcome::Differ(_) => {
                let (code, start) = fz.regression_case(r);
                reports.push(fz.report(&code, &start, &format!("regression \"{}\"", r.what)));
            }
        }
    }
    let mut cases = std::env::var_os("AARCHX_FUZZ_CASES").map(|path| {
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("AARCHX_FUZZ_CASES {path:?}: {e}"));
        let mut w = std::io::BufWriter::new(file);
        let header = fz.cases_header().unwrap_or_else(|| {
            panic!("AARCHX_FUZZ_CASES needs the arena at {JIT_ARENA:#x}, which is taken: run one batch at a time")
        });
        writeln!(w, "{header}").expect("writing AARCHX_FUZZ_CASES");
        w
    });
    let mut rejected: BTreeMap<String, usize> = BTreeMap::new();
    let mut differing: BTreeMap<&str, usize> = BTreeMap::new();
    // Differences already reported, by blame and the fields that differ.
    let mut seen = BTreeSet::new();
    let (mut run, mut k) = (0, 0u64);
    while run < sequences {
        // About a quarter of the drawn sequences are rejected; a change that
        // made nearly all of them invalid must fail, not loop.
        assert!(k < 20 * sequences as u64 + 1000, "{k} sequences drawn, {run} valid: {rejected:?}");
        let s = hash(&[seed.to_le_bytes(), k.to_le_bytes()].concat());
        k += 1;
        let seq = fz.generate(&mut Rng::new(s ^ ITEMS));
        let start = Start::random(&layout, s);
        match fz.check(&seq, &start) {
            Outcome::Invalid(why) => {
                // The reason without addresses, for the summary.
                let reason = why.split(" at ").next().unwrap_or(&why).to_string();
                *rejected.entry(reason).or_insert(0) += 1;
                continue;
            }
            Outcome::Agree(a) => {
                if let Some(w) = cases.as_mut() {
                    writeln!(w, "{}", fz.case_line(&a, &start)).expect("writing AARCHX_FUZZ_CASES");
                }
            }
            Outcome::Differ(d) => {
                *differing.entry(if d.blame == Blame::Lifter { "lifter" } else { "passes" }).or_insert(0) += 1;
                if reports.len() < MAX_REPORTS && seen.insert(d.signature()) {
                    let (small, start) = fz.shrink(&seq, &start, d.blame);
                    let code = small.assemble(layout.insn).expect("a shrunk sequence assembles");
                    let origin = format!(
                        "sequence {} of seed {seed} ({} items, shrunk from {})",
                        k - 1,
                        small.items.len(),
                        seq.items.len()
                    );
                    reports.push(fz.report(&code, &start, &origin));
                }
            }
        }
        run += 1;
    }
    for r in &reports {
        println!("{r}");
    }
    println!(
        "fuzz_translate: {run} sequences (seed {seed}, {} forms) in {:.1?}; {} regressions; \
         rejected {} drawn sequences:",
        fz.forms(),
        started.elapsed(),
        REGRESSIONS.len(),
        rejected.values().sum::<usize>()
    );
    for (why, n) in &rejected {
        println!("  {n:>7}  {why}");
    }
    let c = &fz.coverage;
    println!(
        "regions translated by the full pipeline: {} in {} runs (shrinking included), {} runs with two or more",
        c.regions, c.sequences, c.multi_region
    );
    println!("differing sequences: {differing:?}");
    assert!(
        reports.is_empty(),
        "{} sequences differ from the CPU ({differing:?}), {} reported above (shrunk)",
        differing.values().sum::<usize>(),
        reports.len()
    );
}

#[test]
fn sequences_match_the_cpu() {
    fuzz(20_000);
}

/// The long run: `AARCHX_FUZZ_SEQUENCES=N AARCHX_FUZZ_SEED=S cargo test
/// --release -p aarchx --test fuzz_translate -- --ignored --nocapture`.
#[test]
#[ignore]
fn long_run() {
    fuzz(200_000);
}

/// The harness can fail: with the CPU running one instruction and the
/// translations the lift of another, the sequence must differ (blamed on
/// the lifter), so a harness that compares nothing is caught.
#[test]
fn fuzzer_detects_a_wrong_translation() {
    let mut fz = Fuzzer::new(None);
    let layout = fz.layout();
    // (run natively, translated instead): add/sub eax,ecx; stc/clc;
    // je +0 / jne +0 followed by a mov that only one of them skips.
    let pairs: [(&[u8], &[u8]); 3] = [
        (&[0x01, 0xc8], &[0x29, 0xc8]),
        (&[0xf9], &[0xf8]),
        (&[0x74, 0x05, 0xb8, 1, 0, 0, 0], &[0x75, 0x05, 0xb8, 1, 0, 0, 0]),
    ];
    for (native, lifted) in pairs {
        let mut differ = 0;
        for s in 0..50 {
            let mut start = Start::random(&layout, s);
            start.state.gpr[1] |= 1;
            match fz.check_code(native, lifted, &start) {
                Outcome::Differ(d) if d.blame == Blame::Lifter => differ += 1,
                Outcome::Invalid(why) => panic!("{native:02x?}: not valid: {why}"),
                _ => {}
            }
        }
        // stc/clc and je/jne agree when the flag already had one value
        // (about half the states); add/sub always differ (ecx is odd).
        assert!(differ >= 15, "{native:02x?} vs {lifted:02x?}: only {differ} of 50 states differ");
    }
}

/// A printed `Regression` holds the code moved to an arena at 0: moved
/// back, it is the code that ran, byte for byte.
#[test]
fn printed_code_moves_back_exactly() {
    let fz = Fuzzer::new(None);
    let layout = fz.layout();
    let canonical = native::layout_at(0);
    for s in 0..500 {
        let Some(code) = fz.generate(&mut Rng::new(s)).assemble(layout.insn) else { continue };
        let printed = sequence::relocate(&code, &layout, &canonical);
        assert_eq!(sequence::relocate(&printed, &canonical, &layout), code, "sequence {s}");
    }
}
