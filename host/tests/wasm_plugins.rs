//! WASM plugins end to end: the example plugins built for
//! `wasm32-unknown-unknown` load from a policy, a no-op WASM pass leaves
//! the guests' behaviour identical to native, and a WASM pass that traps,
//! loops forever, outgrows its memory or returns IR the verifier rejects
//! ends in the documented one-line error and exit status (or, under
//! `Skip`, is counted), never a panic or a hang.
//!
//! The test builds the examples itself with cargo into
//! `target/plugin-tests/wasm32-unknown-unknown/release` (Debian's rustc
//! has no wasm32 `core`: then it builds `core` and `alloc` from
//! `rust-web-src` with `-Zbuild-std`, linking with `wasm-ld-19` when that
//! is on PATH). With `AARCHX_ARM64_BIN` set, the no-op and `insn-count`
//! cases also run on the aarch64 build: the static aarch64 aarchx cannot
//! load native plugins, but it runs WASM ones.
#![cfg(feature = "wasm")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use aarchx_plugin_abi::{ABI_VERSION, IR_ENCODING_VERSION, PLUGIN_MAGIC};
use common::{aarchx, arm64_aarchx, guest_dir, run, without_qemu_notes, Outcome};

const EXAMPLES: [&str; 3] = ["noop", "faulty", "insn-count"];

/// The folder holding the example plugins' `.wasm` files, built once per
/// test run.
fn wasm_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let target = test_dir();
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cmd.args(["build", "--quiet", "--release", "--target", "wasm32-unknown-unknown", "--manifest-path"])
            .arg(common::repo_root().join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            .env("RUSTC", &rustc);
        if !has_wasm32_core(&rustc) {
            cmd.arg("-Zbuild-std=core,alloc").env("RUSTC_BOOTSTRAP", "1");
        }
        if std::env::var_os("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER").is_none() && on_path("wasm-ld-19") {
            cmd.env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", "wasm-ld-19");
        }
        for e in EXAMPLES {
            cmd.arg("-p").arg(format!("aarchx-example-{e}"));
        }
        let out = cmd.output().expect("run cargo");
        assert!(
            out.status.success(),
            "building the WASM example plugins failed (see docs/plugins.md, \"WASM plugins\"):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        target.join("wasm32-unknown-unknown/release")
    })
}

/// `target/plugin-tests`, next to this test's own target directory.
fn test_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/wasm_plugins-<hash>
    exe.ancestors().nth(3).expect("test binary inside a target directory").join("plugin-tests")
}

/// Whether `rustc` ships a prebuilt wasm32 `core` (rustup with the target
/// added does; Debian's rustc does not).
fn has_wasm32_core(rustc: &std::ffi::OsStr) -> bool {
    let out = Command::new(rustc).args(["--print", "target-libdir", "--target", "wasm32-unknown-unknown"]).output();
    let Ok(out) = out else { return false };
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    std::fs::read_dir(dir).is_ok_and(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with("libcore-")))
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// The `.wasm` file of example `name`.
fn plugin(name: &str) -> PathBuf {
    wasm_dir().join(format!("aarchx_example_{}.wasm", name.replace('-', "_")))
}

/// Writes a policy (interpreter backend) loading `plugin` (a path and its
/// `on_failure`), if any, and running `decode`, `pass` (a RON pass entry)
/// and `memory-order`; returns its path.
fn policy(test: &str, plugin: Option<(&Path, &str)>, pass: &str) -> PathBuf {
    let dir = test_dir().join("wasm-policies");
    std::fs::create_dir_all(&dir).expect("policy dir");
    let plugins =
        plugin.map_or(String::new(), |(p, f)| format!("(path: {:?}, on_failure: {f})", p.display().to_string()));
    let text = format!(
        "(\n  backend: Interp,\n  plugins: [{plugins}],\n  passes: [(name: \"decode\"), {pass}, (name: \"memory-order\")],\n)\n"
    );
    let path = dir.join(format!("{test}.ron"));
    std::fs::write(&path, text).expect("write policy");
    path
}

/// A policy running `faulty` in `mode`.
fn faulty(test: &str, on_failure: &str, mode: &str) -> PathBuf {
    let pass = format!(r#"(name: "faulty", options: {{ "mode": "{mode}" }})"#);
    policy(test, Some((&plugin("faulty"), on_failure)), &pass)
}

fn guest(name: &str) -> PathBuf {
    guest_dir().join("static").join(name)
}

fn under(policy: &Path, program: &Path, args: &[&str]) -> Outcome {
    run(aarchx(&["--policy", policy.to_str().expect("UTF-8 path")]).arg(program).args(args))
}

fn native(name: &str, args: &[&str]) -> Outcome {
    run(Command::new(guest(name)).args(args))
}

/// Asserts the run ended with exit `code` and exactly one stderr line,
/// `aarchx: ` followed by `start`, containing `then`.
fn assert_error(o: &Outcome, code: i32, start: &str, then: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.code, Some(code), "exit status; stderr: {err}");
    assert_eq!(err.lines().count(), 1, "expected one line, got: {err}");
    assert!(err.starts_with(&format!("aarchx: {start}")), "expected `aarchx: {start}...`, got: {err}");
    assert!(err.contains(then), "expected `{then}` in: {err}");
    assert!(!err.contains("thread '"), "aarchx panicked: {err}");
}

/// The run-time failure line of the `faulty` pass.
fn faulty_failed() -> String {
    format!("pass `faulty` of plugin {} failed on the region at 0x", plugin("faulty").display())
}

#[test]
fn noop_plugin_keeps_guests_matching_native() {
    let p = policy("noop", Some((&plugin("noop"), "Abort")), r#"(name: "noop")"#);
    for (name, args) in [("hello", &[][..]), ("hash", &[]), ("argv", &["alpha", "beta", "gamma"])] {
        assert_eq!(under(&p, &guest(name), args), native(name, args), "{name}");
    }
}

/// The `aarchx: insn-count: ...` line of a run.
fn insn_count_line(o: &Outcome) -> String {
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err.lines().find(|l| l.starts_with("aarchx: insn-count: ")).map(String::from);
    line.unwrap_or_else(|| panic!("no insn-count report in: {err}"))
}

/// A policy running `insn-count` from `plugin`, or the built-in one.
fn insn_count_policy(test: &str, plugin: Option<&Path>) -> PathBuf {
    policy(test, plugin.map(|p| (p, "Abort")), r#"(name: "insn-count")"#)
}

/// The native `insn-count` plugin, built like `tests/plugins.rs` builds
/// its examples.
fn native_insn_count() -> PathBuf {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--quiet", "-p", "aarchx-example-insn-count", "--manifest-path"])
        .arg(common::repo_root().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(test_dir())
        .output()
        .expect("run cargo");
    assert!(out.status.success(), "building insn-count failed:\n{}", String::from_utf8_lossy(&out.stderr));
    test_dir().join("debug/libaarchx_example_insn_count.so")
}

/// One source, three forms: the WASM plugin counts what the built-in pass
/// and the native plugin count, and the guest's output does not change.
#[test]
fn insn_count_as_wasm_plugin_matches_builtin_and_native() {
    let wasm = insn_count_policy("insn-count-wasm", Some(&plugin("insn-count")));
    let builtin = insn_count_policy("insn-count-builtin", None);
    let native_plugin = cfg!(not(target_feature = "crt-static"))
        .then(|| insn_count_policy("insn-count-so", Some(&native_insn_count())));
    for (name, args) in [("hello", &[][..]), ("hash", &[]), ("sort_search", &[])] {
        let got = under(&wasm, &guest(name), args);
        let want = native(name, args);
        assert_eq!((got.code, &got.stdout), (want.code, &want.stdout), "{name}");
        let line = insn_count_line(&got);
        assert_eq!(line, insn_count_line(&under(&builtin, &guest(name), args)), "{name}: built-in");
        if let Some(p) = &native_plugin {
            assert_eq!(line, insn_count_line(&under(p, &guest(name), args)), "{name}: native plugin");
        }
    }
}

/// The aarch64 build (under qemu on an x86-64 machine) with `args`.
fn arm64(args: &[&std::ffi::OsStr]) -> Option<Command> {
    let (qemu, bin) = arm64_aarchx("WASM plugins on the aarch64 build")?;
    let mut cmd = match qemu {
        Some(q) => {
            let mut c = Command::new(q);
            c.arg(bin);
            c
        }
        None => Command::new(bin),
    };
    cmd.args(args);
    Some(cmd)
}

#[test]
fn wasm_plugins_run_on_the_aarch64_build() {
    let noop = policy("noop-arm64", Some((&plugin("noop"), "Abort")), r#"(name: "noop")"#);
    let Some(mut cmd) = arm64(&["--policy".as_ref(), noop.as_ref(), guest("hash").as_ref()]) else { return };
    assert_eq!(without_qemu_notes(run(&mut cmd)), native("hash", &[]));
    let count = insn_count_policy("insn-count-arm64", Some(&plugin("insn-count")));
    let mut cmd = arm64(&["--policy".as_ref(), count.as_ref(), guest("hello").as_ref()]).expect("checked above");
    let got = without_qemu_notes(run(&mut cmd));
    assert_eq!(insn_count_line(&got), insn_count_line(&under(&count, &guest("hello"), &[])));
}

/// A module by hand, not through the SDK: its descriptor (wasm32 layout,
/// at address 16) declares `abi`; with `entry` false it lacks the entry
/// point.
fn hand_made_module(abi: u32, entry: bool) -> Vec<u8> {
    fn section(id: u8, body: &[u8]) -> Vec<u8> {
        assert!(body.len() < 128, "one-byte LEB128 lengths only");
        [&[id, body.len() as u8][..], body].concat()
    }
    fn name(s: &str) -> Vec<u8> {
        [&[s.len() as u8][..], s.as_bytes()].concat()
    }
    let entry_name = if entry { "aarchx_plugin_v1" } else { "aarchx_plugin_v0" };
    let descriptor: Vec<u8> =
        [PLUGIN_MAGIC, abi, IR_ENCODING_VERSION, 0, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut exports = vec![2];
    exports.extend([name("memory"), vec![2, 0], name(entry_name), vec![0, 0]].concat());
    let mut data = vec![1, 0, 0x41, 16, 0x0b, descriptor.len() as u8];
    data.extend(&descriptor);
    [
        &b"\0asm\x01\0\0\0"[..],
        &section(1, &[1, 0x60, 0, 1, 0x7f]),      // type 0: () -> i32
        &section(3, &[1, 0]),                     // function 0 has type 0
        &section(5, &[1, 0, 1]),                  // one memory of one page
        &section(7, &exports),                    // memory, entry point
        &section(10, &[1, 4, 0, 0x41, 16, 0x0b]), // function 0: i32.const 16
        &section(11, &data),                      // the descriptor at 16
    ]
    .concat()
}

fn write_module(test: &str, bytes: &[u8]) -> PathBuf {
    let dir = test_dir().join("wasm-policies");
    std::fs::create_dir_all(&dir).expect("module dir");
    let path = dir.join(format!("{test}.wasm"));
    std::fs::write(&path, bytes).expect("write module");
    path
}

#[test]
fn wrong_abi_version() {
    let m = write_module("bad-abi", &hand_made_module(99, true));
    let p = policy("bad-abi", Some((&m, "Abort")), r#"(name: "dce")"#);
    let want = format!("built for plugin ABI version 99, but this aarchx speaks version {ABI_VERSION}");
    assert_error(&under(&p, &guest("hello"), &[]), 2, &format!("plugin {}: ", m.display()), &want);
}

#[test]
fn missing_entry_point_and_not_a_module() {
    let m = write_module("no-entry", &hand_made_module(ABI_VERSION, false));
    let p = policy("no-entry", Some((&m, "Abort")), r#"(name: "dce")"#);
    let want = format!("plugin {}: no entry point `aarchx_plugin_v1`", m.display());
    assert_error(&under(&p, &guest("hello"), &[]), 2, &want, "");
    let m = write_module("garbage", b"not a module");
    let p = policy("garbage", Some((&m, "Abort")), r#"(name: "dce")"#);
    assert_error(&under(&p, &guest("hello"), &[]), 2, &format!("plugin {}: cannot load: ", m.display()), "");
}

#[test]
fn trapping_pass() {
    let o = under(&faulty("trap", "Abort", "trap"), &guest("hello"), &[]);
    assert_error(&o, 4, &faulty_failed(), ": wasm trap: wasm `unreachable` instruction executed");
}

#[test]
fn panicking_pass_reports_its_message() {
    let o = under(&faulty("panic", "Abort", "panic"), &guest("hello"), &[]);
    assert_error(&o, 4, &faulty_failed(), "faulty pass panicked on purpose");
}

#[test]
fn looping_pass_is_stopped_within_a_second() {
    let p = faulty("loop", "Abort", "loop");
    let start = Instant::now();
    let mut child = aarchx(&["--policy", p.to_str().expect("UTF-8 path")])
        .arg(guest("hello"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start aarchx");
    // A pass that is never stopped must fail this test, not hang it.
    while child.try_wait().expect("wait for aarchx").is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().expect("kill aarchx");
            panic!("the looping pass was not stopped in 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = start.elapsed();
    let out = child.wait_with_output().expect("aarchx's output");
    let o = Outcome { stdout: out.stdout, stderr: out.stderr, code: out.status.code(), signal: None };
    assert_error(&o, 4, &faulty_failed(), ": did not return within 1 s and was stopped");
    // One second for the pass, the rest for starting aarchx and compiling
    // the module.
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn pass_outgrowing_its_memory_limit() {
    let o = under(&faulty("hog", "Abort", "hog"), &guest("hello"), &[]);
    assert_error(&o, 4, &faulty_failed(), ": needed 1074987008 bytes of memory, more than its limit of 64 MiB");
}

#[test]
fn invalid_ir_is_rejected() {
    let o = under(&faulty("invalid", "Abort", "invalid"), &guest("hello"), &[]);
    assert_error(&o, 4, &faulty_failed(), ": returned IR the verifier rejects: ");
}

#[test]
fn failing_pass_is_skipped_and_counted() {
    let want = native("hello", &[]);
    let summary = format!("aarchx: plugin pass `faulty` ({}) failed on ", plugin("faulty").display());
    for (mode, broken) in [("error", false), ("invalid", false), ("trap", true), ("loop", true)] {
        let got = under(&faulty(&format!("skip-{mode}"), "Skip", mode), &guest("hello"), &[]);
        assert_eq!((got.code, &got.stdout), (want.code, &want.stdout), "{mode}");
        let err = String::from_utf8_lossy(&got.stderr);
        let lines: Vec<&str> = err.lines().collect();
        // A trap or timeout leaves the instance unusable: its `finish`
        // fails too, with the reason (otherwise only in the debug log).
        let (at_exit, last) = match (broken, &lines[..]) {
            (false, [last]) => (None, last),
            (true, [at_exit, last]) => (Some(at_exit), last),
            _ => panic!("{mode}: {err}"),
        };
        if let Some(l) = at_exit {
            assert!(l.starts_with("aarchx: pass `faulty` failed at exit: stopped after an earlier failure: "), "{l}");
        }
        assert!(last.starts_with(&summary) && last.ends_with(" regions, translated without it"), "{mode}: {err}");
    }
}

#[test]
fn create_refusing_its_options_stops_at_load() {
    let o = under(&faulty("bad-mode", "Abort", "bogus"), &guest("hello"), &[]);
    let want =
        format!("plugin {}: pass `faulty` could not be created: unknown mode `bogus`", plugin("faulty").display());
    assert_error(&o, 2, &want, "");
}
