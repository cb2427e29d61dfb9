//! `count`: every executor adds the amount to the counter each time the
//! instruction runs, small and large amounts alike, and leaves guest state
//! and memory alone.

use aarchx_ir::ExitKind;

use super::{region, state_with, GuestMem, Prepared};
use crate::counters;
use crate::machine::RegionExit;

/// Adds 3 to counter A per loop iteration (rcx of them) and 5000 to
/// counter B once, on the way out.
fn looping(a: u32, b: u32) -> String {
    format!(
        "region 0x1000
block0:
  insn 0x1000, 3
  jump block1
block1:
  v0 = get rcx
  v1 = iconst.i64 0x0
  v2 = icmp.i64 eq v0, v1
  brif v2, block3, block2
block2:
  count global {a}, 3
  v3 = iconst.i64 0x1
  v4 = sub.i64 v0, v3
  set rcx, v4
  jump block1
block3:
  count global {b}, 5000
  exit jump 0x2000
"
    )
}

#[test]
fn counts_every_execution_on_every_executor() {
    let (a, b) = (counters::allocate().unwrap(), counters::allocate().unwrap());
    let r = region(&looping(a, b));
    let mut p = Prepared::new(&r);
    let runs = p.executors.len() as u64;
    let out = p.check(&state_with(&[("rcx", 7)]), &mut GuestMem::new());
    assert_eq!(out.exit, RegionExit::Jump { kind: ExitKind::Jump });
    assert_eq!(out.state.gpr[1], 0);
    assert_eq!(counters::value(a), runs * 7 * 3);
    assert_eq!(counters::value(b), runs * 5000);
}

/// Four threads, each with its own executors (on aarch64 its own JIT), run
/// the loop on one counter at once: no count is lost.
#[test]
fn counts_from_threads_add_up() {
    let (a, b) = (counters::allocate().unwrap(), counters::allocate().unwrap());
    const THREADS: u64 = 4;
    const ITERATIONS: u128 = 20_000;
    let runs: Vec<u64> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(move || {
                    let r = region(&looping(a, b));
                    let mut p = Prepared::new(&r);
                    p.check(&state_with(&[("rcx", ITERATIONS)]), &mut GuestMem::new());
                    p.executors.len() as u64
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a counting thread")).collect()
    });
    let runs: u64 = runs.iter().sum();
    assert_eq!(counters::value(a), runs * ITERATIONS as u64 * 3);
    assert_eq!(counters::value(b), runs * 5000);
}
