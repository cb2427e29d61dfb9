//! Whole-program oracle: every guest program under aarchx must produce the
//! same stdout, stderr and exit status (or killing signal) as its native
//! run, byte for byte. Runs the host build with the interpreter (also in
//! verify mode, which checks each optimised block against its reference
//! translation), and, when `AARCHX_ARM64_BIN` names the aarch64 build, the
//! JIT under qemu-aarch64 with the default and the verify policies. The
//! x86-64-v2 programs (guest/expect-v2.txt) run under `cpu_level: V2`
//! (policies/v2.ron) and must match too; under a V1 policy they must die
//! of SIGILL, as on a CPU without x86-64-v2; likewise the x86-64-v3
//! programs (guest/expect-v3.txt) under policies/v3.ron and at V2.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    arm64_aarchx, describe, guest_dir, guest_programs, host_aarchx, programs_in, repo_root, run, skip,
    without_qemu_notes, Outcome,
};

/// Verify mode's summary lines ("aarchx: verify: N blocks, M executions
/// checked, K mismatches", one per process that ends: a forked child
/// prints its own) are removed from stderr; there must be one, each must
/// report no mismatch, and some must report checks.
fn without_verify_summary(mut o: Outcome) -> Result<Outcome, String> {
    let text = String::from_utf8_lossy(&o.stderr).into_owned();
    let (summary, rest): (Vec<&str>, Vec<&str>) =
        text.split_inclusive('\n').partition(|l| l.starts_with("aarchx: verify: "));
    let clean = summary.iter().all(|l| l.trim_end().ends_with(" 0 mismatches"));
    if clean && summary.iter().any(|l| !l.contains(" 0 executions")) {
        o.stderr = rest.concat().into_bytes();
        return Ok(o);
    }
    Err(format!("no clean verify summary in stderr (code {:?}, signal {:?}):\n{text}", o.code, o.signal))
}

/// Runs every guest of `build` under `engine` (a command prefix) and
/// returns the failures.
fn check_all(engine: &str, prefix: &[&Path], policy: &str, build: &str, strip_qemu: bool) -> Vec<String> {
    check_programs(&guest_programs(), engine, prefix, policy, build, strip_qemu, false)
}

/// Runs `programs` of `build` under `engine` and returns the failures:
/// each must end as its native run, or (`ill`) be killed by SIGILL with
/// nothing written.
fn check_programs(
    programs: &[(String, Vec<String>)],
    engine: &str,
    prefix: &[&Path],
    policy: &str,
    build: &str,
    strip_qemu: bool,
    ill: bool,
) -> Vec<String> {
    let dir = guest_dir().join(build);
    let policy = repo_root().join("policies").join(policy);
    let mut failures = Vec::new();
    for (name, args) in programs {
        let prog = dir.join(&name);
        if !prog.exists() {
            // The assembly programs (guest/asm/) exist in the static build
            // only; every other program must be in every build.
            let assembly = repo_root().join("guest/asm").join(format!("{name}.S")).exists();
            if build == "static" || !assembly {
                failures.push(format!("{name} under {engine}: {} was not built", prog.display()));
            }
            continue;
        }
        let native = if ill {
            Outcome { stdout: Vec::new(), stderr: Vec::new(), code: None, signal: Some(libc::SIGILL) }
        } else {
            run(Command::new(&prog).args(args))
        };
        // A translation bug can make a guest loop forever: bound each run
        // (GNU timeout re-raises a child's killing signal, so statuses
        // still compare).
        let mut cmd = Command::new("timeout");
        cmd.args(["-s", "KILL", "600"]).args(prefix).arg("--policy").arg(&policy).arg(&prog).args(args);
        let mut got = run(&mut cmd);
        if strip_qemu {
            got = without_qemu_notes(got);
        }
        if policy.ends_with("verify.ron") {
            got = match without_verify_summary(got) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{name} under {engine}: {e}"));
                    continue;
                }
            };
        }
        if got != native {
            failures.push(format!(
                "{build}/{name} under {engine}:\n=== native: {}\n=== aarchx: {}",
                describe(&native),
                describe(&got)
            ));
        }
    }
    failures
}

fn report(failures: Vec<String>) {
    if !failures.is_empty() {
        panic!("{} guest program(s) differ from native:\n\n{}", failures.len(), failures.join("\n\n"));
    }
}

/// The aarch64 build under qemu (or natively), as a command prefix.
fn arm64_prefix(engine: &str) -> Option<(Vec<std::path::PathBuf>, bool)> {
    let (qemu, bin) = arm64_aarchx(&format!("guests under {engine}"))?;
    let under_qemu = qemu.is_some();
    Some((qemu.into_iter().chain([bin]).collect(), under_qemu))
}

fn check_arm64(engine: &str, policy: &str, builds: &[&str]) {
    let Some((prefix, under_qemu)) = arm64_prefix(engine) else { return };
    let prefix: Vec<&Path> = prefix.iter().map(|p| p.as_path()).collect();
    report(builds.iter().flat_map(|b| check_all(engine, &prefix, policy, b, under_qemu)).collect());
}

#[test]
fn guests_match_native_under_the_interpreter() {
    let bin = host_aarchx();
    report(
        ["static", "static-pie", "dyn"]
            .iter()
            .flat_map(|b| check_all("the interpreter", &[&bin], "interp.ron", b, false))
            .collect(),
    );
}

#[test]
fn guests_match_native_in_verify_mode_on_the_interpreter() {
    // verify.ron asks for the JIT; the x86-64 build runs the interpreter.
    let bin = host_aarchx();
    report(check_all("verify mode on the interpreter", &[&bin], "verify.ron", "static", false));
}

#[test]
fn guests_match_native_under_the_jit() {
    check_arm64("the JIT", "default.ron", &["static", "static-pie", "dyn"]);
}

/// 1,000 short-lived threads, each created and joined in turn, once on
/// the JIT (the suites run guest/c/threads.c with 300 in every
/// configuration; each new thread lowers the code it runs again).
#[test]
fn a_thousand_short_lived_threads_under_the_jit() {
    let Some((prefix, under_qemu)) = arm64_prefix("the JIT, 1000 threads") else { return };
    let prefix: Vec<&Path> = prefix.iter().map(|p| p.as_path()).collect();
    let program = [("threads".to_string(), vec!["1000".to_string()])];
    report(check_programs(&program, "the JIT", &prefix, "default.ron", "static", under_qemu, false));
}

/// guest/c/smc_unarmed.c under the JIT: code a thread rewrites and calls
/// on pages another thread keeps storing to, so that its stores usually
/// find the page already made writable by the other thread's fault. Not in
/// guest/expect.txt: a run showed the bug it is for (a region another
/// thread had dropped compiled after the drop was applied, see
/// docs/threads.md) in about two runs of seven, so each build runs three
/// times here.
#[test]
fn code_rewritten_on_a_page_another_thread_made_writable_runs_new() {
    let Some((prefix, under_qemu)) = arm64_prefix("the JIT, smc_unarmed") else { return };
    let prefix: Vec<&Path> = prefix.iter().map(|p| p.as_path()).collect();
    let program = [("smc_unarmed".to_string(), Vec::new())];
    for build in ["static", "dyn", "static", "dyn", "static", "dyn"] {
        report(check_programs(&program, "the JIT", &prefix, "default.ron", build, under_qemu, false));
    }
}

#[test]
fn guests_match_native_under_the_jit_with_ordered_memory() {
    check_arm64("the JIT (ordered)", "ordered.ron", &["static", "dyn"]);
}

#[test]
fn guests_match_native_in_verify_mode() {
    check_arm64("verify mode", "verify.ron", &["static", "dyn"]);
}

/// The value of `name=N` in the `aarchx-stats:` line of `stderr`.
fn stat(stderr: &[u8], name: &str) -> u64 {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().find(|l| l.starts_with("aarchx-stats: ")).unwrap_or_else(|| panic!("no stats in:\n{text}"));
    let field = line.split(' ').find_map(|f| f.strip_prefix(&format!("{name}=")[..]));
    field.and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no {name} in: {line}"))
}

/// The programs that change MXCSR to what arm64 does exactly (any
/// rounding mode, FTZ with DAZ as `-Ofast` sets them) run translated code
/// under it, not the interpreter: the guest tests above show their output
/// is the native one, this that the JIT produced it.
#[test]
fn rounding_modes_and_ftz_with_daz_run_on_the_jit() {
    let Some((prefix, _)) = arm64_prefix("the JIT under MXCSR") else { return };
    for name in ["fenv_fastmath", "fenv_round"] {
        let prog = guest_dir().join("static").join(name);
        let mut cmd = Command::new(&prefix[0]);
        cmd.args(&prefix[1..]).arg(&prog).env("AARCHX_STATS", "1");
        let out = run(&mut cmd);
        assert_eq!(out.code, Some(0), "{name}: {}", describe(&out));
        let (jit, interp) = (stat(&out.stderr, "fenv_jit_runs"), stat(&out.stderr, "fenv_interp_runs"));
        assert!(
            jit > 0 && interp == 0,
            "{name} under a non-default MXCSR: {jit} JIT runs, {interp} interpreted regions"
        );
    }
}

/// The float programs under FEAT_AFP (policy `afp`): with it on, the JIT
/// runs them under FPCR.AH without NaN checks on add, subtract, multiply,
/// divide, square root and fma; with it off, with the checks. Both must print
/// what the CPU does. On x86-64 they run under QEMU 10 with `-cpu max`
/// (`AARCHX_QEMU_AFP`, which `./x test` fetches; Debian 12's QEMU has no
/// FEAT_AFP); on an arm64 host, natively where the host has it. The log
/// shows the host's feature was found and which rules each run used.
#[test]
fn float_guests_match_native_with_afp_on_and_off() {
    const WHAT: &str = "float guests under FEAT_AFP";
    let Some((qemu, bin)) = arm64_aarchx(WHAT) else { return };
    let mut prefix: Vec<PathBuf> = Vec::new();
    if qemu.is_some() {
        match std::env::var_os("AARCHX_QEMU_AFP").filter(|q| !q.is_empty()) {
            Some(afp) => prefix.extend([PathBuf::from(afp), PathBuf::from("-cpu"), PathBuf::from("max")]),
            None => return skip(WHAT, "AARCHX_QEMU_AFP (QEMU 10) is not set (./x test sets it)"),
        }
    }
    prefix.push(bin);
    let programs: Vec<(String, Vec<String>)> =
        ["sse_nans", "fpmath", "numeric", "printf_double", "fenv_ftz", "fenv_flags", "fenv_fastmath"]
            .iter()
            .map(|p| (p.to_string(), Vec::new()))
            .collect();
    let mut failures = Vec::new();
    for (afp, rules) in [("On", "Afp"), ("Off", "Checked")] {
        let set = format!("afp={afp}");
        let mut probe = Command::new(&prefix[0]);
        probe.args(&prefix[1..]).args(["--set", &set]).arg(guest_dir().join("static/exit42"));
        let out = run(probe.env("AARCHX_LOG", "aarchx::engine=debug"));
        let log = String::from_utf8_lossy(&out.stderr);
        if !log.contains("host_has_afp=true") {
            if qemu.is_none() {
                return skip(WHAT, "this arm64 host does not have FEAT_AFP");
            }
            panic!("QEMU 10 -cpu max should have FEAT_AFP; aarchx logged:\n{log}");
        }
        assert!(log.contains(&format!("rules={rules}")), "afp: {afp} should use the {rules} rules; logged:\n{log}");
        let mut with_set: Vec<PathBuf> = prefix.clone();
        with_set.extend([PathBuf::from("--set"), PathBuf::from(&set)]);
        let with_set: Vec<&Path> = with_set.iter().map(|p| p.as_path()).collect();
        let engine = format!("the JIT with afp: {afp}");
        failures.extend(check_programs(&programs, &engine, &with_set, "default.ron", "static", true, false));
    }
    report(failures);
}

/// glibc's libm translated: guest/c/libm_values.c (86 function forms,
/// 20,000 inputs each: the results', errno's and exception flags' hashes)
/// matches native on the JIT, static and dynamic, under `cpu_level: V1`
/// against glibc's baseline variants (the native run told by
/// GLIBC_TUNABLES to leave out AVX, AVX2 and FMA, which V1's CPUID does not
/// report) and under V3 against this CPU's FMA variants. Hot code lost
/// exception flags here until 2026-12-08 (`dce` dropped unused sums).
#[test]
fn libm_matches_native_at_v1_and_v3() {
    const WHAT: &str = "libm on the JIT";
    let Some((qemu, bin)) = arm64_aarchx(WHAT) else { return };
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let v3_host = [" fma", " avx2"].iter().all(|f| cpuinfo.contains(f));
    let baseline = "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX,-FMA4";
    let mut failures = Vec::new();
    for build in ["static", "dyn"] {
        let prog = guest_dir().join(build).join("libm_values");
        for (policy, tunables) in [("default.ron", Some(baseline)), ("v3.ron", None)] {
            if tunables.is_none() && !v3_host {
                skip(WHAT, "this CPU lacks FMA or AVX2, so its glibc variants are not V3's");
                continue;
            }
            let env = |c: &mut Command| {
                if let Some(t) = tunables {
                    c.env("GLIBC_TUNABLES", t);
                }
                c.env("AARCHX_CACHE", "off");
            };
            let mut native = Command::new(&prog);
            env(&mut native);
            let native = run(&mut native);
            let mut cmd = Command::new("timeout");
            cmd.args(["-s", "KILL", "600"]).args(&qemu).arg(&bin);
            cmd.arg("--policy").arg(repo_root().join("policies").join(policy)).arg(&prog);
            env(&mut cmd);
            let got = without_qemu_notes(run(&mut cmd));
            if got != native {
                failures.push(format!(
                    "{build}/libm_values under {policy}:\n=== native: {}\n=== aarchx: {}",
                    describe(&native),
                    describe(&got)
                ));
            }
        }
    }
    report(failures);
}

/// The leaf routines (the `leaf-inline` pass, on the JIT's arm64 code)
/// against the guest's own: guest/c/leaf_routines.c, static and dynamic,
/// matches native with the pass on and off, and with it on, its counts
/// show that every routine ran in arm64 (and that the faulting and
/// overlapping calls were declined to the x86 code).
#[test]
fn leaf_routines_match_native_with_the_pass_on_and_off() {
    const WHAT: &str = "leaf routines on the JIT";
    let Some((qemu, bin)) = arm64_aarchx(WHAT) else { return };
    let mut prefix: Vec<PathBuf> = qemu.into_iter().collect();
    prefix.push(bin);
    let programs = vec![("leaf_routines".to_string(), Vec::new())];
    let mut failures = Vec::new();
    for build in ["static", "dyn"] {
        for set in ["leaf-inline.enabled=true", "leaf-inline.enabled=false"] {
            let mut with_set = prefix.clone();
            with_set.extend([PathBuf::from("--set"), PathBuf::from(set)]);
            let with_set: Vec<&Path> = with_set.iter().map(|p| p.as_path()).collect();
            let engine = format!("the JIT with {set}");
            failures.extend(check_programs(&programs, &engine, &with_set, "default.ron", build, true, false));
        }
        let mut counted = Command::new(&prefix[0]);
        counted.args(&prefix[1..]).args(["--set", "leaf-inline.counts=true"]);
        let out = run(counted.arg(guest_dir().join(build).join("leaf_routines")).env("AARCHX_CACHE", "off"));
        let report = String::from_utf8_lossy(&out.stderr);
        // Every routine is called thousands of times; all but the checking
        // ones fault once into the inaccessible page (those decline in the
        // children that overflow, which die before reporting). In the
        // dynamic build the checking routines' variants are found only
        // through the program's GOT (libc never calls them itself).
        let routines = [
            "strlen",
            "memchr",
            "memset",
            "memmove",
            "memcmp",
            "strcmp",
            "strchr",
            "strnlen",
            "strncmp",
            "mempcpy",
            "rawmemchr",
            "strrchr",
            "strcpy",
            "stpcpy",
            "memrchr",
        ];
        let checking = ["memmove_chk", "memset_chk"];
        for (routine, declines) in routines.iter().map(|r| (r, 1)).chain(checking.iter().map(|r| (r, 0))) {
            let line = report.lines().find(|l| l.starts_with(&format!("aarchx: leaf-inline: {routine} ran ")));
            let counts: Option<(u64, u64)> = line.and_then(|l| {
                let (ran, declined) = l.split_once(" ran ")?.1.split_once(", declined ")?;
                Some((ran.parse().ok()?, declined.parse().ok()?))
            });
            match counts {
                Some((ran, declined)) if ran >= 1000 && declined >= declines => {}
                _ => failures.push(format!("{build}: {routine} should have run and declined; the report:\n{report}")),
            }
        }
    }
    report(failures);
}

/// The programs built for x86-64 `level` ("v2", "v3": guest/expect-vN.txt,
/// static and dynamic) under `policy` (policies/vN.ron, the JIT's default
/// policy at that level), and under `lower`, a policy of the level below,
/// where they must die of SIGILL.
fn check_level(
    level: &str,
    engine: &str,
    prefix: &[&Path],
    policy: &str,
    lower: &str,
    strip_qemu: bool,
) -> Vec<String> {
    let programs = programs_in(&format!("guest/expect-{level}.txt"));
    let mut failures = Vec::new();
    for build in [format!("{level}-static"), format!("{level}-dyn")] {
        let at = format!("{engine} at {}", level.to_uppercase());
        failures.extend(check_programs(&programs, &at, prefix, policy, &build, strip_qemu, false));
        let below = format!("{engine} below {}", level.to_uppercase());
        failures.extend(check_programs(&programs, &below, prefix, lower, &build, strip_qemu, true));
    }
    failures
}

#[test]
fn v2_guests_match_native_at_v2_on_the_interpreter() {
    // v2.ron asks for the JIT; the x86-64 build runs the interpreter.
    let bin = host_aarchx();
    report(check_level("v2", "the interpreter", &[&bin], "v2.ron", "interp.ron", false));
}

#[test]
fn v2_guests_match_native_at_v2_under_the_jit() {
    let Some((prefix, under_qemu)) = arm64_prefix("the JIT at V2") else { return };
    let prefix: Vec<&Path> = prefix.iter().map(|p| p.as_path()).collect();
    report(check_level("v2", "the JIT", &prefix, "v2.ron", "default.ron", under_qemu));
}

#[test]
fn v3_guests_match_native_at_v3_on_the_interpreter() {
    let bin = host_aarchx();
    report(check_level("v3", "the interpreter", &[&bin], "v3.ron", "v2.ron", false));
}

#[test]
fn v3_guests_match_native_at_v3_under_the_jit() {
    let Some((prefix, under_qemu)) = arm64_prefix("the JIT at V3") else { return };
    let prefix: Vec<&Path> = prefix.iter().map(|p| p.as_path()).collect();
    report(check_level("v3", "the JIT", &prefix, "v3.ron", "v2.ron", under_qemu));
}

/// Programs that stress the dispatcher's tiering (see `Shape` in
/// host/src/run.rs): self-modifying code, threads, precise signals,
/// longjmp, computed jumps, deep calls and float state.
const TIERING_PROGRAMS: &[&str] = &[
    "smc",
    "threads",
    "sig_precise",
    "sig_rmw_fault",
    "setjmp_longjmp",
    "bytecode_vm",
    "jumptable",
    "recursion",
    "fpmath",
    "printf_double",
    "malloc_churn",
];

fn tiering_programs() -> Vec<(String, Vec<String>)> {
    guest_programs().into_iter().filter(|(name, _)| TIERING_PROGRAMS.contains(&name.as_str())).collect()
}

/// `decode.tier_up=1`: every region's superblock replaces its quick
/// translation at its second run, so each program runs through as many
/// promotions as it has regions; in verify mode each checked region is
/// compared with a reference translation of the same shape.
#[test]
fn guests_match_native_when_every_region_tiers_up_at_its_second_run() {
    let bin = host_aarchx();
    let set = [Path::new("--set"), Path::new("decode.tier_up=1")];
    let prefix = [bin.as_path(), set[0], set[1]];
    let programs = tiering_programs();
    let mut failures =
        check_programs(&programs, "the interpreter, tier_up=1", &prefix, "verify.ron", "static", false, false);
    if let Some((arm64, under_qemu)) = arm64_prefix("the JIT with tier_up=1") {
        let prefix: Vec<&Path> = arm64.iter().map(|p| p.as_path()).chain(set).collect();
        for policy in ["default.ron", "verify.ron"] {
            failures.extend(check_programs(
                &programs,
                "the JIT, tier_up=1",
                &prefix,
                policy,
                "static",
                under_qemu,
                false,
            ));
        }
    }
    report(failures);
}

/// Tiering's effect, from the stats line: with it (the default) a
/// program's hot regions are promoted to superblocks and fewer guest
/// instructions are translated in all than with superblocks from the
/// first translation (`tier_up=0`), which promotes nothing.
#[test]
fn tiering_promotes_hot_regions_and_translates_less() {
    let prog = guest_dir().join("static").join("bytecode_vm");
    let stats = |tier_up: &str| {
        let mut cmd = Command::new(host_aarchx());
        cmd.args(["--set", &format!("decode.tier_up={tier_up}")]).arg(&prog).env("AARCHX_STATS", "1");
        let out = run(&mut cmd);
        assert_eq!(out.code, Some(0), "bytecode_vm, tier_up={tier_up}: {}", describe(&out));
        (stat(&out.stderr, "promoted"), stat(&out.stderr, "guest_insns"))
    };
    let (tiered_promoted, tiered_insns) = stats("256");
    let (at_once_promoted, at_once_insns) = stats("0");
    assert!(tiered_promoted > 0, "no region of bytecode_vm was promoted");
    assert_eq!(at_once_promoted, 0, "tier_up=0 promoted regions");
    assert!(
        tiered_insns < at_once_insns,
        "tiering translated {tiered_insns} guest instructions, superblocks at once {at_once_insns}"
    );
}

/// `memory_model: Auto` (the default policy's) goes ordered when the guest
/// starts a thread or maps shared memory writable, and not otherwise; the
/// stats line says which model the translation ended in.
#[test]
fn auto_memory_model_goes_ordered_for_threads_and_shared_memory() {
    for (name, ordered) in [("hello", 0), ("fork_pipe_wait", 0), ("threads", 1), ("shm_fork", 1)] {
        let prog = guest_dir().join("static").join(name);
        let mut cmd = Command::new(host_aarchx());
        cmd.arg(&prog).env("AARCHX_STATS", "1");
        let out = run(&mut cmd);
        assert_eq!(out.code, Some(0), "{name}: {}", describe(&out));
        assert_eq!(stat(&out.stderr, "ordered"), ordered, "{name}: the memory model at exit (1: ordered)");
    }
}
