//! Native plugins end to end: the example plugins load from a policy, a
//! no-op plugin pass leaves the guests' behaviour identical to native, and
//! every way a plugin can be wrong (at load or at run time) ends in the
//! documented one-line error and exit status, never a panic.
//!
//! The example plugins are built by this test with cargo into
//! `target/plugin-tests` (a target directory of their own, so the build
//! does not wait on the lock of the `cargo test` that runs this), always
//! fresh and whatever profile or package selection runs the test.
//!
//! A statically linked aarchx (the aarch64 build) cannot load native
//! plugins and says so at load; these tests need the dynamic host build.
#![cfg(not(target_feature = "crt-static"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{aarchx, guest_dir, run, Outcome};

const EXAMPLES: [&str; 5] = ["noop", "nop-counter", "faulty", "bad-abi", "no-entry"];

/// The folder holding the example plugins' shared libraries, built once
/// per test run.
fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test binary path");
        // target/<profile>/deps/plugins-<hash>
        let target = exe.ancestors().nth(3).expect("test binary inside a target directory");
        let target = target.join("plugin-tests");
        let root = common::repo_root();
        let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cmd.arg("build")
            .arg("--quiet")
            .arg("--manifest-path")
            .arg(root.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target);
        for e in EXAMPLES {
            cmd.arg("-p").arg(format!("aarchx-example-{e}"));
        }
        let out = cmd.output().expect("run cargo");
        assert!(out.status.success(), "building the example plugins failed:\n{}", String::from_utf8_lossy(&out.stderr));
        target.join("debug")
    })
}

/// The shared library of example `name`.
fn plugin(name: &str) -> PathBuf {
    plugin_dir().join(format!("libaarchx_example_{}.so", name.replace('-', "_")))
}

/// A plugin entry of a policy: path and `on_failure`.
struct Load<'a>(&'a Path, &'a str);

/// Writes a policy (interpreter backend) loading `plugins` and running
/// `passes` (each a RON pass entry) and returns its path.
fn policy(test: &str, plugins: &[Load<'_>], passes: &[&str]) -> PathBuf {
    let dir = plugin_dir().parent().expect("target dir").join("policies");
    std::fs::create_dir_all(&dir).expect("policy dir");
    let plugins: Vec<String> =
        plugins.iter().map(|Load(p, f)| format!("(path: {:?}, on_failure: {f})", p.display().to_string())).collect();
    let text =
        format!("(\n  backend: Interp,\n  plugins: [{}],\n  passes: [{}],\n)\n", plugins.join(", "), passes.join(", "));
    let path = dir.join(format!("{test}.ron"));
    std::fs::write(&path, text).expect("write policy");
    path
}

fn guest(name: &str) -> PathBuf {
    guest_dir().join("static").join(name)
}

fn under(policy: &Path, program: &Path, args: &[&str]) -> Outcome {
    run(aarchx(&["--policy", policy.to_str().expect("UTF-8 path")]).arg(program).args(args))
}

/// Asserts the run ended with exit `code` and exactly one stderr line,
/// `aarchx: ` followed by `message`, with no panic.
fn assert_error(o: &Outcome, code: i32, message: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.code, Some(code), "exit status; stderr: {err}");
    assert_eq!(err.lines().count(), 1, "expected one line, got: {err}");
    assert!(err.starts_with(&format!("aarchx: {message}")), "expected `aarchx: {message}...`, got: {err}");
    assert!(!err.contains("thread '"), "aarchx panicked: {err}");
}

fn file(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn noop_plugin_keeps_guests_matching_native() {
    let policy = policy(
        "noop",
        &[Load(&plugin("noop"), "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "noop")"#, r#"(name: "memory-order")"#],
    );
    for (name, args) in [("hello", &[][..]), ("hash", &[]), ("argv", &["alpha", "beta", "gamma"])] {
        let native = run(Command::new(guest(name)).args(args));
        assert_eq!(under(&policy, &guest(name), args), native, "{name}");
    }
}

#[test]
fn nop_counter_reports_at_exit_and_changes_nothing() {
    let policy = policy(
        "nop-counter",
        &[Load(&plugin("nop-counter"), "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "nop-counter", options: { "report": true })"#],
    );
    let native = run(&mut Command::new(guest("hello")));
    let got = under(&policy, &guest("hello"), &[]);
    assert_eq!((got.code, &got.stdout), (native.code, &native.stdout));
    let err = String::from_utf8_lossy(&got.stderr);
    let line =
        err.lines().find(|l| l.starts_with("aarchx: nop-counter: ")).unwrap_or_else(|| panic!("no report in: {err}"));
    assert!(!line.starts_with("aarchx: nop-counter: 0 regions"), "{line}");
}

#[test]
fn wrong_abi_version() {
    let so = plugin("bad-abi");
    let p = policy("bad-abi", &[Load(&so, "Abort")], &[r#"(name: "decode")"#]);
    let o = under(&p, &guest("hello"), &[]);
    assert_error(
        &o,
        2,
        &format!(
            "plugin {}: built for plugin ABI version 99, but this aarchx speaks version {}",
            file(&so),
            aarchx_plugin_abi::ABI_VERSION
        ),
    );
}

#[test]
fn missing_entry_symbol() {
    let so = plugin("no-entry");
    let p = policy("no-entry", &[Load(&so, "Abort")], &[r#"(name: "decode")"#]);
    let o = under(&p, &guest("hello"), &[]);
    assert_error(&o, 2, &format!("plugin {}: no entry point `aarchx_plugin_v1`", file(&so)));
}

#[test]
fn unloadable_file() {
    let not_a_library = common::repo_root().join("guest/expect.txt");
    let p = policy("unloadable", &[Load(&not_a_library, "Abort")], &[r#"(name: "decode")"#]);
    assert_error(&under(&p, &guest("hello"), &[]), 2, &format!("plugin {}: cannot load: ", file(&not_a_library)));
    let missing = common::repo_root().join("no/such/plugin.so");
    let p = policy("missing", &[Load(&missing, "Abort")], &[r#"(name: "decode")"#]);
    assert_error(&under(&p, &guest("hello"), &[]), 2, &format!("plugin {}: cannot load: ", file(&missing)));
}

#[test]
fn invalid_ir_is_rejected() {
    let so = plugin("faulty");
    let p = policy(
        "invalid",
        &[Load(&so, "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "faulty", options: { "mode": "invalid" })"#],
    );
    let o = under(&p, &guest("hello"), &[]);
    assert_error(&o, 4, &format!("pass `faulty` of plugin {} failed on the region at 0x", file(&so)));
    assert!(String::from_utf8_lossy(&o.stderr).contains(": returned IR the verifier rejects: "), "{o:?}");
}

#[test]
fn failing_pass_aborts_by_default() {
    let so = plugin("faulty");
    let p = policy("error-abort", &[Load(&so, "Abort")], &[r#"(name: "decode")"#, r#"(name: "faulty")"#]);
    let o = under(&p, &guest("hello"), &[]);
    assert_error(&o, 4, &format!("pass `faulty` of plugin {} failed on the region at 0x", file(&so)));
    assert!(String::from_utf8_lossy(&o.stderr).contains(": refusing the region at 0x"), "{o:?}");
}

#[test]
fn failing_pass_is_skipped_and_counted() {
    let so = plugin("faulty");
    for mode in ["error", "invalid", "panic"] {
        let entry = format!(r#"(name: "faulty", options: {{ "mode": "{mode}" }})"#);
        let p = policy(&format!("skip-{mode}"), &[Load(&so, "Skip")], &[r#"(name: "decode")"#, &entry]);
        let native = run(&mut Command::new(guest("hello")));
        let got = under(&p, &guest("hello"), &[]);
        assert_eq!((got.code, &got.stdout), (native.code, &native.stdout), "{mode}");
        let err = String::from_utf8_lossy(&got.stderr);
        let prefix = format!("aarchx: plugin pass `faulty` ({}) failed on ", file(&so));
        assert_eq!(err.lines().count(), 1, "{mode}: {err}");
        assert!(
            err.starts_with(&prefix) && err.trim_end().ends_with(" regions, translated without it"),
            "{mode}: {err}"
        );
    }
}

#[test]
fn panicking_pass_is_an_error_not_a_crash() {
    let so = plugin("faulty");
    let p = policy(
        "panic",
        &[Load(&so, "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "faulty", options: { "mode": "panic" })"#],
    );
    let o = under(&p, &guest("hello"), &[]);
    assert_error(&o, 4, &format!("pass `faulty` of plugin {} failed on the region at 0x", file(&so)));
    assert!(String::from_utf8_lossy(&o.stderr).contains("faulty pass panicked on purpose"), "{o:?}");
}

#[test]
fn create_refusing_its_options() {
    let so = plugin("faulty");
    let p = policy(
        "bad-mode",
        &[Load(&so, "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "faulty", options: { "mode": "bogus" })"#],
    );
    assert_error(
        &under(&p, &guest("hello"), &[]),
        2,
        &format!("plugin {}: pass `faulty` could not be created: unknown mode `bogus`", file(&so)),
    );
}

#[test]
fn pass_no_plugin_provides() {
    let p = policy("unknown", &[Load(&plugin("noop"), "Abort")], &[r#"(name: "decode")"#, r#"(name: "nope")"#]);
    let o = under(&p, &guest("hello"), &[]);
    assert_error(&o, 2, &format!("{}:4:", file(&p)));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unknown pass `nope`; known passes: `decode`, ") && err.trim_end().ends_with(", `noop`"),
        "{err}"
    );
}

#[test]
fn ordering_cycle() {
    let p = policy(
        "cycle",
        &[Load(&plugin("faulty"), "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "cycle-a")"#, r#"(name: "cycle-b")"#],
    );
    assert_error(
        &under(&p, &guest("hello"), &[]),
        2,
        &format!("{}: ordering constraints form a cycle: `cycle-a` before `cycle-b` before `cycle-a`", file(&p)),
    );
}

#[test]
fn unsatisfiable_and_broken_order() {
    let p = policy(
        "late",
        &[Load(&plugin("faulty"), "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "late")"#, r#"(name: "memory-order")"#],
    );
    assert_error(
        &under(&p, &guest("hello"), &[]),
        2,
        &format!(
            "{}: `memory-order` must run before `late` (declared by `late`), but `memory-order` is a lowering-stage",
            file(&p)
        ),
    );
    // nop-counter runs after decode and before memory-order; twice listed,
    // the second copy comes after memory-order.
    let p = policy(
        "broken",
        &[Load(&plugin("nop-counter"), "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "nop-counter")"#, r#"(name: "memory-order")"#, r#"(name: "nop-counter")"#],
    );
    let o = under(&p, &guest("hello"), &[]);
    assert_eq!(o.code, Some(2), "{o:?}");
}

#[test]
fn duplicate_pass_names() {
    let so = plugin("noop");
    let p = policy("duplicate", &[Load(&so, "Abort"), Load(&so, "Skip")], &[r#"(name: "decode")"#]);
    assert_error(
        &under(&p, &guest("hello"), &[]),
        2,
        &format!("plugin {}: pass `noop` is already provided by {}", file(&so), file(&so)),
    );
}

#[test]
fn plugin_entry_syntax_errors_have_positions() {
    let dir = plugin_dir().parent().expect("target dir").join("policies");
    std::fs::create_dir_all(&dir).expect("policy dir");
    let cases = [
        (
            "(\n  plugins: [(path: \"x.so\", on_failure: Sometimes)],\n  passes: [(name: \"decode\")],\n)\n",
            "2:40: unknown value `Sometimes` for `on_failure`, expected one of `Abort`, `Skip`",
        ),
        (
            "(\n  plugins: [(pth: \"x.so\")],\n  passes: [(name: \"decode\")],\n)\n",
            "2:14: unknown field `pth` in a plugin entry, expected one of `path`, `on_failure`",
        ),
    ];
    for (i, (text, message)) in cases.iter().enumerate() {
        let path = dir.join(format!("syntax-{i}.ron"));
        std::fs::write(&path, text).expect("write policy");
        assert_error(&under(&path, &guest("hello"), &[]), 2, &format!("{}:{message}", file(&path)));
    }
}

#[test]
fn verify_mode_catches_a_pass_that_computes_the_wrong_thing() {
    // `miscompile` turns 64-bit adds into subtracts: valid IR, which the
    // interpreter (and the JIT) run faithfully, so only a comparison with
    // the reference translation (decode alone) sees it.
    let so = plugin("faulty");
    let passes = [r#"(name: "decode")"#, r#"(name: "faulty", options: { "mode": "miscompile" })"#];
    let p = policy("miscompile", &[Load(&so, "Abort")], &passes);
    let native = run(&mut Command::new(guest("hash")));
    let wrong = under(&p, &guest("hash"), &[]);
    assert_ne!((wrong.code, &wrong.stdout), (native.code, &native.stdout), "the miscompiled run differs");
    let text = std::fs::read_to_string(&p).expect("policy");
    let verify = p.with_file_name("miscompile-verify.ron");
    std::fs::write(&verify, text.replacen("backend: Interp,", "backend: Interp,\n  verify: (first: 1, every: 1),", 1))
        .expect("write policy");
    let o = under(&verify, &guest("hash"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.code, Some(3), "{err}");
    assert!(err.contains("aarchx: verify: mismatch in the block at 0x"), "{err}");
    for part in
        ["the policy's translation and the reference translation differ", "the policy's IR:", "the reference IR:"]
    {
        assert!(err.contains(part), "no `{part}` in: {err}");
    }
}

#[test]
fn passes_lists_a_policys_plugin_passes_with_their_options() {
    let policy = policy(
        "passes-listing",
        &[Load(&plugin("nop-counter"), "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "dce")"#],
    );
    let o = run(&mut aarchx(&["passes", "--policy", policy.to_str().expect("UTF-8 path")]));
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let header = format!("nop-counter  (transform stage, plugin {})", file(&plugin("nop-counter")));
    assert!(text.contains(&header), "no `{header}` in:\n{text}");
    for line in
        ["    runs before: memory-order", "    runs after: decode", "    report (bool, default true): print the totals"]
    {
        assert!(text.contains(line), "no `{line}` in:\n{text}");
    }
    // The built-in passes are listed too.
    assert!(text.contains("decode  (decode stage, built in)"), "{text}");
}

/// The persistent cache keys by each plugin's file content: the same
/// plugin finds its translations, a rebuilt one (other bytes at the same
/// path) misses them.
#[test]
fn a_rebuilt_plugin_misses_the_persistent_cache() {
    let dir = plugin_dir().parent().expect("target dir").join(format!("cache-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).expect("cache dir");
    let so = dir.join("libnoop.so");
    std::fs::copy(plugin("noop"), &so).expect("copy the plugin");
    let p = policy("cached", &[Load(&so, "Abort")], &[r#"(name: "decode")"#, r#"(name: "noop")"#]);
    let cached_run = || {
        let o = run(aarchx(&["--policy", p.to_str().expect("UTF-8 path")])
            .arg(guest("hello"))
            .env("XDG_CACHE_HOME", &dir)
            .env("AARCHX_CACHE", "readwrite")
            .env("AARCHX_STATS", "1"));
        assert_eq!(o.code, Some(0), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let hits = err.split_whitespace().find_map(|w| w.strip_prefix("cache_hits=")).map(|v| v.parse::<u64>());
        hits.expect("a stats line").expect("a number")
    };
    assert_eq!(cached_run(), 0, "cold");
    assert!(cached_run() > 0, "the same plugin finds its translations");
    // Rebuilt: other bytes (a section's padding) that load just the same.
    let mut bytes = std::fs::read(&so).expect("plugin");
    bytes.extend_from_slice(b"rebuilt");
    std::fs::write(&so, bytes).expect("rewrite the plugin");
    assert_eq!(cached_run(), 0, "a rebuilt plugin misses");
    std::fs::remove_dir_all(&dir).ok();
}
