//! Native plugins in the arm64 builds: the dynamically linked aarch64
//! aarchx (the one the package ships) loads the example plugins built for
//! aarch64 and runs them in the JIT pipeline, with every documented error;
//! the static aarch64 build (the one the other qemu tests run) refuses a
//! native plugin with its one-line error.
//!
//! Where this runs: on an x86-64 host the aarch64 builds run under
//! qemu-aarch64, the dynamic one with the cross toolchain's C library
//! (`-L /usr/aarch64-linux-gnu`) and single-threaded guests only (under
//! this machine's qemu a dynamically linked aarch64 program hangs when it
//! starts a thread; the threaded guests run under the static build in
//! `guests.rs`); on an arm64 host both run directly. `plugins.rs` checks
//! the same plugins against the host build, with the interpreter.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{arm64_aarchx, arm64_dynamic_aarchx, assert_one_line_error, describe, guest_dir, run, Outcome};

const EXAMPLES: [&str; 5] = ["noop", "insn-count", "faulty", "bad-abi", "no-entry"];

/// The example plugins built for aarch64, once, into a target directory
/// of their own. `RUSTFLAGS` replaces .cargo/config.toml's flags for the
/// target, whose `+crt-static` is for executables, not shared libraries.
fn plugin(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test binary path");
        let target = exe.ancestors().nth(3).expect("inside a target directory").join("arm64-plugin-tests");
        let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cmd.args(["build", "--quiet", "--release", "--target", "aarch64-unknown-linux-gnu", "--manifest-path"])
            .arg(common::repo_root().join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            .env("RUSTFLAGS", "");
        for e in EXAMPLES {
            cmd.arg("-p").arg(format!("aarchx-example-{e}"));
        }
        let o = run(&mut cmd);
        assert_eq!(o.code, Some(0), "building the aarch64 example plugins\n{}", describe(&o));
        target.join("aarch64-unknown-linux-gnu/release")
    });
    dir.join(format!("libaarchx_example_{}.so", name.replace('-', "_")))
}

/// Writes a JIT policy loading `plugins` (path, on_failure) and running
/// `passes`; returns its path.
fn policy(test: &str, plugins: &[(&Path, &str)], passes: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.ancestors().nth(3).expect("inside a target directory").join("arm64-plugin-tests/policies");
    std::fs::create_dir_all(&dir).expect("policy dir");
    let plugins: Vec<String> =
        plugins.iter().map(|(p, f)| format!("(path: {:?}, on_failure: {f})", p.display().to_string())).collect();
    let text =
        format!("(\n  backend: Jit,\n  plugins: [{}],\n  passes: [{}],\n)\n", plugins.join(", "), passes.join(", "));
    let path = dir.join(format!("{test}.ron"));
    std::fs::write(&path, text).expect("write policy");
    path
}

fn guest(name: &str) -> PathBuf {
    guest_dir().join("static").join(name)
}

/// The dynamic aarch64 aarchx under `policy` on `program`, or `None` when
/// that build is not there (recorded as skipped).
fn dynamic(what: &str, policy: &Path, program: &Path, args: &[&str]) -> Option<Outcome> {
    let mut words = vec![OsStr::new("--policy"), policy.as_os_str(), program.as_os_str()];
    words.extend(args.iter().map(OsStr::new));
    let mut cmd = arm64_dynamic_aarchx(what, &words)?;
    Some(run(cmd.env("AARCHX_CACHE", "off")))
}

#[test]
fn the_dynamic_build_runs_the_noop_plugin_and_guests_match_native() {
    let p = policy(
        "noop",
        &[(&plugin("noop"), "Abort")],
        &[r#"(name: "decode")"#, r#"(name: "noop")"#, r#"(name: "memory-order")"#],
    );
    for (name, args) in [("hello", &[][..]), ("hash", &[]), ("argv", &["alpha", "beta", "gamma"])] {
        let native = run(Command::new(guest(name)).args(args));
        let Some(got) = dynamic("native plugins in the arm64 build", &p, &guest(name), args) else { return };
        assert_eq!(got, native, "{name}:\n{}", describe(&got));
    }
}

/// The `insn-count` report lines on stderr.
fn reports(o: &Outcome) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("aarchx: insn-count: "))
        .map(String::from)
        .collect()
}

#[test]
fn the_insn_count_plugin_counts_what_the_builtin_pass_counts() {
    let pass = r#"(name: "insn-count")"#;
    let with_plugin = policy("insn-count", &[(&plugin("insn-count"), "Abort")], &[r#"(name: "decode")"#, pass]);
    let builtin = policy("insn-count-builtin", &[], &[r#"(name: "decode")"#, pass]);
    for name in ["hello", "hash"] {
        let what = "the insn-count plugin in the arm64 build";
        let Some(a) = dynamic(what, &with_plugin, &guest(name), &[]) else { return };
        let Some(b) = dynamic(what, &builtin, &guest(name), &[]) else { return };
        let native = run(&mut Command::new(guest(name)));
        assert_eq!((&a.stdout, a.code), (&native.stdout, native.code), "{name}: {}", describe(&a));
        assert_eq!((&b.stdout, b.code), (&native.stdout, native.code), "{name}: {}", describe(&b));
        assert!(!reports(&a).is_empty(), "{name}: no report: {}", describe(&a));
        assert_eq!(reports(&a), reports(&b), "{name}: plugin and built-in pass disagree");
    }
}

#[test]
fn the_dynamic_build_reports_a_wrong_plugin_in_one_line() {
    let what = "plugin errors in the arm64 build";
    let hello = guest("hello");
    let bad_abi = plugin("bad-abi");
    let p = policy("bad-abi", &[(&bad_abi, "Abort")], &[r#"(name: "decode")"#]);
    let Some(o) = dynamic(what, &p, &hello, &[]) else { return };
    assert_one_line_error(&o, 2, &["bad_abi", "built for plugin ABI version 99"]);
    let p = policy("no-entry", &[(&plugin("no-entry"), "Abort")], &[r#"(name: "decode")"#]);
    let Some(o) = dynamic(what, &p, &hello, &[]) else { return };
    assert_one_line_error(&o, 2, &["no_entry", "no entry point `aarchx_plugin_v1`"]);
    let faulty = plugin("faulty");
    let p = policy("faulty-abort", &[(&faulty, "Abort")], &[r#"(name: "decode")"#, r#"(name: "faulty")"#]);
    let Some(o) = dynamic(what, &p, &hello, &[]) else { return };
    assert_one_line_error(&o, 4, &["pass `faulty` of plugin", "failed on the region at 0x"]);
    // Skipped: the guest runs as natively, one line counts the regions.
    let entry = r#"(name: "faulty", options: { "mode": "panic" })"#;
    let p = policy("faulty-skip", &[(&faulty, "Skip")], &[r#"(name: "decode")"#, entry]);
    let Some(o) = dynamic(what, &p, &hello, &[]) else { return };
    let native = run(&mut Command::new(&hello));
    assert_eq!((o.code, &o.stdout), (native.code, &native.stdout), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("plugin pass `faulty`") && err.trim_end().ends_with("regions, translated without it"),
        "{err}"
    );
}

#[test]
fn the_static_build_refuses_native_plugins_in_one_line() {
    let Some((qemu, bin)) = arm64_aarchx("the static arm64 build refusing native plugins") else { return };
    let p = policy("static-refuses", &[(&plugin("noop"), "Abort")], &[r#"(name: "decode")"#, r#"(name: "noop")"#]);
    let mut cmd = match qemu {
        Some(q) => {
            let mut c = Command::new(q);
            c.arg(&bin);
            c
        }
        None => Command::new(&bin),
    };
    let o = run(cmd.arg("--policy").arg(&p).arg(guest("hello")));
    assert_one_line_error(&o, 2, &["libaarchx_example_noop.so", "statically linked and cannot load native plugins"]);
}
