//! Instrumentation end to end: the `insn-count` pass (built in, and as the
//! example plugin) counts the guest instructions valgrind counts for a
//! native run; the built-in on the aarch64 JIT counts what the interpreter
//! counts; `block-profile`'s TSV adds up to the same count and its hashes
//! are those of the program's bytes.
//!
//! The native count is valgrind's lackey (`guest instrs`), which counts an
//! instruction when it starts, as insn-count does. Both runs get the same
//! environment (the one valgrind gives its guest, read with `env` under
//! valgrind) and `GLIBC_TUNABLES` masking every CPU feature beyond
//! x86-64-v1, so glibc picks the same string routines natively as on
//! aarchx's baseline CPU. What is left is glibc's start-up reading a
//! different CPU (cache descriptors of CPUID leaf 2, feature masks): a few
//! thousand instructions, see docs/plugins.md.
//!
//! Native plugins need the dynamic host build; the aarch64 build (static)
//! runs the built-in pass only.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{arm64_aarchx, describe, guest_dir, guest_programs, host_aarchx, run, Outcome};

/// Every feature glibc 2.36 selects routines by, beyond x86-64-v1.
const TUNABLES: &str = "glibc.cpu.hwcaps=-AVX2,-AVX,-SSE4_2,-SSE4_1,-SSSE3,-SSE3,-BMI1,-BMI2,-ERMS,-FSRM,-POPCNT,\
-LZCNT,-MOVBE,-AVX512F,-AVX512VL,-AVX512BW,-FMA,-F16C,-XSAVE,-XSAVEC,-RTM,-AVX_Fast_Unaligned_Load,\
-Fast_Unaligned_Load,-Fast_Unaligned_Copy,-Fast_Rep_String,-Prefer_PMINUB_for_stringop,-Fast_Copy_Backward";

/// The most glibc's start-up may differ by between the CPU valgrind shows
/// and aarchx's (measured: 5,100 to 5,600 instructions, plus up to 4,500 in
/// the libm and memset paths of fpmath, numeric, malloc_churn and
/// printf_double, all well inside 1 % of those).
const STARTUP_SLACK: u64 = 6_000;

/// Programs left out of the comparisons: `sig_alarm` spins until a timer
/// fires (its count depends on speed); `sig_raise` kills itself with a
/// signal, which ends aarchx before its report; the others run several
/// processes whose interleaving (pipe reads, wait polling, which child
/// reports) changes from run to run, and `fork_exec`, `files`, `fdevents`,
/// `getdents` and `sockets` make randomly named files (mkstemp/mkdtemp
/// draw their names by rejection sampling, so the work done changes from
/// run to run); `sig_syscall_race`'s rounds take as many tries as the timer's
/// races make them; `codegen_churn` parses its own resident set from
/// /proc, whose digits differ from run to run; `threads`,
/// `threads_signals`, `threads_stress` and `smc` run several threads, whose instructions
/// depend on the scheduling (a contended lock retries, a waiter spins
/// before it sleeps), and the counters are not yet added atomically
/// across threads; `shm_fork`'s two processes spin waiting for each
/// other.
const NOT_COMPARABLE: [&str; 18] = [
    "sig_alarm",
    "sig_raise",
    "fork_exec",
    "fork_pipe_wait",
    "waitpid_nohang",
    "sig_chld",
    "sig_wait",
    "files",
    "fdevents",
    "getdents",
    "sockets",
    "sig_syscall_race",
    "codegen_churn",
    "threads",
    "threads_signals",
    "threads_stress",
    "smc",
    "shm_fork",
];

/// Left out of the valgrind comparison, which they behave differently
/// under than natively: valgrind computes x87 at 64-bit precision
/// (`longdouble` prints other digits) and does not keep the fault state
/// `sig_precise` and `sig_rmw_fault` check; `procfs` parses /proc/cpuinfo, which natively
/// describes the host's CPU (more processors' worth of longer flag
/// lines) and under aarchx the advertised one, so it runs other code;
/// valgrind models neither MXCSR's rounding modes, FTZ, DAZ and unmasked
/// exceptions (the `fenv_*` programs) nor the kernel's own answers to bad
/// pointers, which it checks itself (`syscall_badptr`); `leaf_routines`
/// forks children that die of SIGABRT (glibc's buffer-overflow check),
/// whose counts valgrind reports and aarchx, whose passes report when the
/// guest exits, does not.
const NOT_UNDER_VALGRIND: [&str; 13] = [
    "longdouble",
    "sig_precise",
    "sig_rmw_fault",
    "procfs",
    "fenv_round",
    "fenv_flags",
    "fenv_ftz",
    "fenv_trap",
    "fenv_gp",
    "fenv_x87_pending",
    "fenv_fastmath",
    "syscall_badptr",
    "leaf_routines",
];

fn static_guest(name: &str) -> PathBuf {
    guest_dir().join("static").join(name)
}

/// The environment valgrind gives its guest, with `GLIBC_TUNABLES` set.
fn guest_env() -> &'static Vec<(String, String)> {
    static ENV: OnceLock<Vec<(String, String)>> = OnceLock::new();
    ENV.get_or_init(|| {
        let o = run(Command::new("valgrind")
            .args(["--tool=none", "-q", "/usr/bin/env"])
            .env_clear()
            .env("GLIBC_TUNABLES", TUNABLES)
            .current_dir("/"));
        assert_eq!(o.code, Some(0), "valgrind runs env (valgrind must be on PATH)\n{}", describe(&o));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    })
}

/// `cmd` with exactly [`guest_env`], run from `/`.
fn with_guest_env(cmd: &mut Command) -> &mut Command {
    cmd.env_clear().envs(guest_env().iter().map(|(k, v)| (k, v))).current_dir("/")
}

/// lackey's instruction counts, one per process it followed, sorted.
fn lackey(name: &str, args: &[String]) -> Vec<u64> {
    let o = run(with_guest_env(Command::new("valgrind").arg("--tool=lackey").arg(static_guest(name)).args(args)));
    let mut counts: Vec<u64> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| l.split_once("guest instrs:"))
        .map(|(_, n)| n.trim().replace(',', "").parse().expect("a count"))
        .collect();
    counts.sort_unstable();
    counts
}

/// The `insn-count` reports on stderr, sorted.
fn reported(o: &Outcome) -> Vec<u64> {
    let mut counts: Vec<u64> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("aarchx: insn-count: "))
        .map(|l| l.strip_suffix(" guest instructions").expect("report format").parse().expect("a count"))
        .collect();
    counts.sort_unstable();
    counts
}

/// A folder for this test binary's policies and profiles.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test binary path");
        let dir = exe.ancestors().nth(3).expect("inside a target directory").join("instrument-tests");
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    })
}

/// Writes a policy with `backend`, the given plugin files and passes.
fn policy(name: &str, backend: &str, plugins: &[&Path], passes: &[&str]) -> PathBuf {
    let plugins: Vec<String> = plugins.iter().map(|p| format!("(path: {:?})", p.display().to_string())).collect();
    let text = format!(
        "(\n  backend: {backend},\n  plugins: [{}],\n  passes: [(name: \"decode\"), {}, (name: \"dead-flags\"), (name: \"dce\")],\n)\n",
        plugins.join(", "),
        passes.join(", ")
    );
    // Tests running at once may write the same policy (the same text):
    // each writes a file of its own and renames it into place, so a guest
    // never reads one half-written.
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = scratch().join(format!("{name}.ron"));
    let partial = scratch().join(format!("{name}.ron.{}.{n}", std::process::id()));
    std::fs::write(&partial, text).expect("write policy");
    std::fs::rename(&partial, &path).expect("move the policy into place");
    path
}

/// Runs guest `name` under the host build with `policy`.
fn under(policy: &Path, name: &str, args: &[String]) -> Outcome {
    run(with_guest_env(Command::new(host_aarchx()).arg("--policy").arg(policy).arg(static_guest(name)).args(args)))
}

#[cfg(not(target_feature = "crt-static"))]
mod plugins {
    use super::*;

    /// The example plugins, built once into a target directory of their own.
    pub fn plugin(name: &str) -> PathBuf {
        static DIR: OnceLock<PathBuf> = OnceLock::new();
        let dir = DIR.get_or_init(|| {
            let target = scratch().join("target");
            let o = run(Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
                .args(["build", "--quiet", "--release", "--manifest-path"])
                .arg(common::repo_root().join("Cargo.toml"))
                .arg("--target-dir")
                .arg(&target)
                .args(["-p", "aarchx-example-insn-count", "-p", "aarchx-example-block-profile"]));
            assert_eq!(o.code, Some(0), "building the example plugins\n{}", describe(&o));
            target.join("release")
        });
        dir.join(format!("libaarchx_example_{}.so", name.replace('-', "_")))
    }
}

/// The plugin and the built-in pass give one count per process, equal to
/// each other and, within 1 % plus the start-up difference, to lackey's.
#[cfg(not(target_feature = "crt-static"))]
#[test]
fn insn_count_matches_valgrind_and_the_builtin() {
    let builtin = policy("builtin-interp", "Interp", &[], &[r#"(name: "insn-count")"#]);
    let so = plugins::plugin("insn-count");
    let plugin = policy("plugin-interp", "Interp", &[&so], &[r#"(name: "insn-count")"#]);
    let mut table = String::new();
    let mut compared = 0;
    for (name, args) in guest_programs() {
        if NOT_COMPARABLE.contains(&name.as_str()) {
            continue;
        }
        let a = under(&builtin, &name, &args);
        let b = under(&plugin, &name, &args);
        let (n, m) = (reported(&a), reported(&b));
        assert_eq!(n, m, "{name}: built-in and plugin counts differ\n{}\n{}", describe(&a), describe(&b));
        if NOT_UNDER_VALGRIND.contains(&name.as_str()) {
            continue;
        }
        let v = lackey(&name, &args);
        table.push_str(&format!("{name}: aarchx {n:?} valgrind {v:?}\n"));
        assert_eq!(n.len(), v.len(), "{name}: one count per process");
        for (n, v) in n.iter().zip(&v) {
            assert!(n.abs_diff(*v) <= v / 100 + STARTUP_SLACK, "{name}: aarchx {n}, valgrind {v}\n{table}");
        }
        compared += 1;
    }
    eprintln!("{table}");
    assert!(compared >= 24, "only {compared} programs compared\n{table}");
}

/// One FNV-1a 64 (independent of the plugin's `fnv` crate).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3))
}

/// The bytes of the static ELF `file` at virtual address `addr`, from its
/// PT_LOAD program headers.
fn elf_bytes(file: &[u8], addr: u64, len: usize) -> Vec<u8> {
    let word = |at: usize, n: usize| {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&file[at..at + n]);
        u64::from_le_bytes(b)
    };
    let (phoff, phentsize, phnum) = (word(0x20, 8) as usize, word(0x36, 2) as usize, word(0x38, 2) as usize);
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        let (kind, offset, vaddr, filesz) = (word(ph, 4), word(ph + 8, 8), word(ph + 16, 8), word(ph + 32, 8));
        if kind == 1 && (vaddr..vaddr + filesz).contains(&addr) {
            let at = (offset + addr - vaddr) as usize;
            return file[at..at + len].to_vec();
        }
    }
    panic!("{addr:#x} is in no PT_LOAD segment");
}

/// block-profile's rows, weighted by their instructions, add up to the
/// count of insn-count without rep iterations (both count a region's
/// instructions once per entry); each row's hash is that of the program's
/// bytes; the hottest block's first instruction runs as often as valgrind
/// runs it natively.
#[cfg(not(target_feature = "crt-static"))]
#[test]
fn block_profile_adds_up_and_hashes_the_programs_bytes() {
    let (count, profile) = (plugins::plugin("insn-count"), plugins::plugin("block-profile"));
    for name in ["hash", "sort_search", "strings", "printf_int", "jumptable"] {
        let tsv = scratch().join(format!("{name}.tsv"));
        let _ = std::fs::remove_file(&tsv);
        // Without superblocks: a block's instructions are then one range
        // of bytes, all of which run each time the block does.
        let p = policy(
            &format!("profile-{name}"),
            "Interp",
            &[&count, &profile],
            &[
                r#"(name: "insn-count", options: {"rep-iterations": false})"#,
                &format!(r#"(name: "block-profile", options: {{"output": {:?}}})"#, tsv.display().to_string()),
            ],
        );
        let text = std::fs::read_to_string(&p)
            .expect("policy")
            .replace(r#"(name: "decode")"#, r#"(name: "decode", options: {"follow": false})"#);
        std::fs::write(&p, text).expect("write policy");
        let o = under(&p, name, &[]);
        let n = *reported(&o).first().unwrap_or_else(|| panic!("{name}: no insn-count report\n{}", describe(&o)));
        let err = String::from_utf8_lossy(&o.stderr);
        let summary = err.lines().find(|l| l.starts_with("aarchx: block-profile: ")).expect("summary line");
        let text = std::fs::read_to_string(&tsv).expect("the TSV was written");
        let elf = std::fs::read(static_guest(name)).expect("guest file");
        let mut weighted = 0u64;
        let mut rows = Vec::new();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex");
            let (addr, hash, bytes) = (hex(f[0]), hex(f[1]), f[2].parse::<usize>().expect("size"));
            let (insns, executions) = (f[3].parse::<u64>().expect("insns"), f[4].parse::<u64>().expect("executions"));
            assert_eq!(fnv1a(&elf_bytes(&elf, addr, bytes)), hash, "{name}: block {addr:#x}");
            weighted += insns * executions;
            rows.push((addr, bytes as u64, executions));
        }
        assert_eq!(weighted, n, "{name}: profile vs insn-count\n{summary}");
        assert!(summary.contains(&format!("{} blocks", rows.len())), "{summary}");
        assert!(rows.windows(2).all(|w| w[0].2 >= w[1].2), "{name}: rows most executed first");
        // Blocks overlap (a region may start inside another), so the
        // hottest block's first instruction ran once per execution of
        // every block that holds it.
        let hot = rows[0].0;
        let runs: u64 = rows.iter().filter(|(a, b, _)| (*a..a + b).contains(&hot)).map(|r| r.2).sum();
        assert_eq!(callgrind_executions(name, hot), runs, "{name}: hottest block {hot:#x}");
    }
}

/// A report file that cannot be written is one line naming the pass and
/// the file, and the guest's exit status stands; an empty `output` is
/// refused when the pass is created (exit 2).
#[cfg(not(target_feature = "crt-static"))]
#[test]
fn report_failures_are_one_line() {
    let so = plugins::plugin("block-profile");
    let p = policy(
        "profile-unwritable",
        "Interp",
        &[&so],
        &[r#"(name: "block-profile", options: {"output": "/nonexistent/dir/p.tsv"})"#],
    );
    let o = under(&p, "exit42", &[]);
    assert_eq!(o.code, Some(42), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err.lines().find(|l| l.contains("cannot write")).unwrap_or_else(|| panic!("{}", describe(&o)));
    assert!(line.starts_with("aarchx: pass `block-profile`: cannot write /nonexistent/dir/p.tsv: "), "{line}");
    let p = policy("profile-empty", "Interp", &[&so], &[r#"(name: "block-profile", options: {"output": ""})"#]);
    let o = under(&p, "exit42", &[]);
    common::assert_one_line_error(&o, 2, &["block-profile", "option `output` must name a file"]);
}

/// How often valgrind (callgrind, per instruction) ran the instruction at
/// `addr` natively.
fn callgrind_executions(name: &str, addr: u64) -> u64 {
    let out = scratch().join(format!("{name}.callgrind"));
    let o = run(with_guest_env(Command::new("valgrind").args([
        "--tool=callgrind",
        "--dump-instr=yes",
        "--compress-pos=no",
        "--compress-strings=no",
    ]))
    .arg(format!("--callgrind-out-file={}", out.display()))
    .arg(static_guest(name)));
    assert!(o.signal.is_none(), "{}", describe(&o));
    let text = std::fs::read_to_string(&out).expect("callgrind output");
    let mut per_addr: BTreeMap<u64, u64> = BTreeMap::new();
    let mut after_calls = false;
    for line in text.lines() {
        if line.starts_with("calls=") {
            after_calls = true;
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if let (3, Some(a)) = (f.len(), f.first().and_then(|a| a.strip_prefix("0x"))) {
            // The line after `calls=` is the call's inclusive cost.
            if !after_calls {
                *per_addr.entry(u64::from_str_radix(a, 16).expect("hex")).or_default() +=
                    f[2].parse::<u64>().expect("Ir");
            }
        }
        after_calls = false;
    }
    per_addr.get(&addr).copied().unwrap_or(0)
}

/// The built-in pass counts the same on the aarch64 JIT, plain and in
/// verify mode, as on the interpreter of the same build (both under qemu: the guest's files, and
/// so glibc's start-up, depend on the build's guest root).
#[test]
fn jit_counts_what_the_interpreter_counts() {
    let Some((qemu, bin)) = arm64_aarchx("the JIT's instruction counts") else { return };
    let guests = std::env::var_os("AARCHX_GUEST_DIR").map(PathBuf::from).unwrap_or_else(guest_dir);
    let count = |(label, backend): (&str, &str), name: &str, args: &[String]| {
        let p = policy(&format!("builtin-{label}"), backend, &[], &[r#"(name: "insn-count")"#]);
        let mut cmd = match &qemu {
            Some(q) => {
                let mut c = Command::new(q);
                c.arg(&bin);
                c
            }
            None => Command::new(&bin),
        };
        let o = run(with_guest_env(cmd.arg("--policy").arg(&p).arg(guests.join("static").join(name)).args(args)));
        (reported(&o), o)
    };
    for (name, args) in guest_programs() {
        if NOT_COMPARABLE.contains(&name.as_str()) {
            continue;
        }
        let (want, _) = count(("interp", "Interp"), &name, &args);
        let (got, o) = count(("jit", "Jit"), &name, &args);
        assert_eq!(got, want, "{name} on the JIT\n{}", describe(&o));
        // Verify mode re-runs sampled executions on the interpreter, which
        // must not count them again.
        let (got, o) = count(("verify", "Jit,\n  verify: (first: 8, every: 8, on_mismatch: Count)"), &name, &args);
        assert_eq!(got, want, "{name} in verify mode\n{}", describe(&o));
    }
}
