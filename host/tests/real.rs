//! Real programs: every case in guest/real/ (a script running the machine's
//! own x86-64 programs on inputs it generates) must give the same stdout,
//! stderr and exit status under aarchx as natively, byte for byte. Runs the
//! host build with the interpreter policy and, when `AARCHX_ARM64_BIN`
//! names the aarch64 build, that build (under `AARCHX_QEMU` if set) with
//! the default policy. Cases marked `# xfail: REASON` are listed with their
//! outcome and do not fail the test; cases whose `# needs:` programs are
//! missing are listed as skipped. See guest/real/README.md.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use common::{arm64_aarchx, describe, host_aarchx, repo_root, run, skip, without_qemu_notes, Outcome};

/// The fixed search path the cases run with.
const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Seconds a case may run under aarchx before it is killed.
const TIMEOUT_SECS: &str = "900";
/// Cases run at the same time.
const WORKERS: usize = 2;

/// One script of guest/real/.
struct Case {
    name: String,
    script: PathBuf,
    /// The interpreter (`# run:`), `/bin/sh` by default.
    interp: String,
    /// Programs that must be installed (`# needs:`).
    needs: Vec<String>,
    /// Why it is expected to fail (`# xfail:`).
    xfail: Option<String>,
    /// The policy of policies/ both engines run it under (`# policy:`),
    /// instead of their own.
    policy: Option<String>,
}

fn cases() -> Vec<Case> {
    let dir = repo_root().join("guest/real");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("guest/real/")
        .map(|e| e.expect("guest/real/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    scripts.sort();
    scripts.into_iter().map(|script| parse_case(&script)).collect()
}

fn parse_case(script: &Path) -> Case {
    let text = std::fs::read_to_string(script).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    let name = script.file_stem().expect("a .sh file").to_string_lossy().into_owned();
    let mut case = Case {
        name,
        script: script.to_path_buf(),
        interp: "/bin/sh".into(),
        needs: Vec::new(),
        xfail: None,
        policy: None,
    };
    for line in text.lines().take_while(|l| l.starts_with('#')) {
        if let Some(v) = line.strip_prefix("# run:") {
            case.interp = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("# needs:") {
            case.needs.extend(v.split_whitespace().map(String::from));
        } else if let Some(v) = line.strip_prefix("# xfail:") {
            case.xfail = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("# policy:") {
            case.policy = Some(v.trim().to_string());
        }
    }
    case
}

fn installed(program: &str) -> bool {
    std::env::split_paths(PATH).any(|dir| dir.join(program).is_file())
}

/// A way to run aarchx: a name, a command prefix and the policy it runs
/// cases under unless they name one.
struct Engine {
    name: &'static str,
    prefix: Vec<PathBuf>,
    policy: &'static str,
    qemu: bool,
}

fn engines() -> Vec<Engine> {
    let interp = Engine { name: "interp", prefix: vec![host_aarchx()], policy: "interp.ron", qemu: false };
    std::iter::once(interp).chain(arm64_engine("arm64", "default.ron")).collect()
}

/// The aarch64 build (under qemu on an x86-64 host) running cases under
/// `policy`, if the tests were given one.
fn arm64_engine(name: &'static str, policy: &'static str) -> Option<Engine> {
    let (qemu, bin) = arm64_aarchx(&format!("real programs on the aarch64 build ({name})"))?;
    let mut prefix: Vec<PathBuf> = qemu.into_iter().collect();
    prefix.push(bin);
    Some(Engine { name, prefix, policy, qemu: true })
}

/// Runs `case` in a fresh directory `dir` with `prefix` before the
/// interpreter (nothing for the native run).
fn run_in(case: &Case, dir: &Path, prefix: &[PathBuf]) -> Outcome {
    if dir.exists() {
        std::fs::remove_dir_all(dir).expect("remove the case directory");
    }
    std::fs::create_dir_all(dir).expect("create the case directory");
    let mut cmd = if prefix.is_empty() {
        Command::new(&case.interp)
    } else {
        let mut c = Command::new("timeout");
        c.arg(TIMEOUT_SECS).args(prefix).arg(&case.interp);
        c
    };
    cmd.arg(&case.script)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .env("HOME", dir)
        .env("PATH", PATH)
        .env_remove("AARCHX_LOG");
    run(&mut cmd)
}

/// How one case went under one engine.
enum Verdict {
    Pass,
    Fail(String),
    Skipped(String),
}

fn check(case: &Case, engine: &Engine, work: &Path) -> Verdict {
    if let Some(missing) = case.needs.iter().find(|p| !installed(p)) {
        return Verdict::Skipped(format!("{missing} is not installed"));
    }
    let dir = work.join(&case.name);
    let native = run_in(case, &dir, &[]);
    // The x86-64 build runs a JIT policy on its interpreter.
    let policy = repo_root().join("policies").join(case.policy.as_deref().unwrap_or(engine.policy));
    let mut prefix = engine.prefix.clone();
    prefix.extend(["--policy".into(), policy]);
    let translated = run_in(case, &dir, &prefix);
    let translated = if engine.qemu { without_qemu_notes(translated) } else { translated };
    // A failed clean-up leaves files in the temp dir only.
    let _ = std::fs::remove_dir_all(&dir);
    if native == translated {
        Verdict::Pass
    } else {
        Verdict::Fail(format!("native: {}\naarchx: {}", describe(&native), describe(&translated)))
    }
}

#[test]
fn real_programs_match_native_runs() {
    let cases = cases();
    assert!(cases.len() >= 20, "guest/real/ has {} cases", cases.len());
    run_cases(&cases, &engines(), "real");
}

/// The cases at x86-64-v3 (policies/v3.ron) on the aarch64 build: glibc
/// then runs its AVX2 string and memory routines, ld.so saves the AVX
/// state with xsave. A fixed batch of the cases that live in those
/// routines (the whole suite at V3 would double its time in CI).
const V3_CASES: &[&str] = &["coreutils", "grep", "sed", "sort", "perl", "python3"];

#[test]
fn real_programs_match_native_runs_at_v3() {
    let Some(engine) = arm64_engine("arm64-v3", "v3.ron") else { return };
    let cases: Vec<Case> = cases().into_iter().filter(|c| V3_CASES.contains(&c.name.as_str())).collect();
    assert_eq!(cases.len(), V3_CASES.len(), "guest/real/ lacks one of {V3_CASES:?}");
    assert!(cases.iter().all(|c| c.policy.is_none()), "a V3 case names its own policy");
    run_cases(&cases, &[engine], "real-v3");
}

/// Runs every case under every engine, `WORKERS` at a time, in a work
/// folder named after `tag`, and fails on any unexpected difference.
fn run_cases(cases: &[Case], engines: &[Engine], tag: &str) {
    let work = std::env::temp_dir().join(format!("aarchx-{tag}-{}", std::process::id()));
    let mut unexpected = Vec::new();
    for engine in engines {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<(usize, Verdict)>> = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..WORKERS {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(case) = cases.get(i) else { break };
                    let verdict = check(case, engine, &work.join(engine.name));
                    results.lock().expect("no worker panicked").push((i, verdict));
                });
            }
        });
        let mut results = results.into_inner().expect("no worker panicked");
        results.sort_by_key(|(i, _)| *i);
        let mut passed = 0;
        println!("real programs under aarchx ({}):", engine.name);
        for (i, verdict) in &results {
            let case = &cases[*i];
            let line = match (verdict, &case.xfail) {
                (Verdict::Pass, None) => {
                    passed += 1;
                    "pass".to_string()
                }
                (Verdict::Pass, Some(reason)) => {
                    passed += 1;
                    format!("pass (marked xfail: {reason}; remove the mark)")
                }
                (Verdict::Fail(_), Some(reason)) => format!("expected to fail: {reason}"),
                (Verdict::Fail(detail), None) => {
                    unexpected.push(format!("{} ({}):\n{detail}", case.name, engine.name));
                    "FAIL".to_string()
                }
                (Verdict::Skipped(why), _) => {
                    skip(&format!("real program case {} ({})", case.name, engine.name), why);
                    format!("skipped: {why}")
                }
            };
            println!("  {:<12} {line}", case.name);
        }
        println!("  {passed} of {} cases pass", cases.len());
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(unexpected.is_empty(), "real programs differ from native runs:\n{}", unexpected.join("\n"));
}
