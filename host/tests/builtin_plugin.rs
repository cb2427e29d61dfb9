//! The built-in passes built as a native plugin (`plugins/builtin`, the
//! source in `passes/`) translate exactly like the built-ins: a policy that
//! loads the plugin (whose passes then replace the built-in ones of the
//! same names) runs each guest with the same output and the same
//! translation statistics (regions, guest and IR instructions).
//!
//! Needs the dynamic host build: a static aarchx cannot load plugins.
#![cfg(not(target_feature = "crt-static"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{aarchx, describe, guest_dir, run, Outcome};

/// Builds `plugins/builtin` into `target/plugin-tests` (as the plugin
/// tests build theirs) and returns the shared library.
fn builtin_plugin() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe.ancestors().nth(3).expect("test binary inside a target directory").join("plugin-tests");
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["build", "--quiet", "-p", "aarchx-builtin-plugin", "--manifest-path"])
        .arg(common::repo_root().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target);
    let out = cmd.output().expect("run cargo");
    assert!(out.status.success(), "building plugins/builtin failed:\n{}", String::from_utf8_lossy(&out.stderr));
    target.join("debug/libaarchx_builtin_plugin.so")
}

/// A policy of decode, dead-flags, dce and memory-order, with `plugins`.
/// Tiering is off: the runtime tiers only its built-in decode stage (the
/// plugin ABI does not tell a plugin's which shape to build).
fn write_policy(name: &str, plugins: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aarchx-builtin-plugin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("policy dir");
    let text = format!(
        "(\n  backend: Interp,\n  plugins: [{plugins}],\n  passes: [\n    (name: \"decode\", options: {{ \"tier_up\": 0 }}),\n    \
         (name: \"dead-flags\"),\n    (name: \"dce\"),\n    (name: \"memory-order\"),\n  ],\n)\n"
    );
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write policy");
    path
}

fn stats(o: &Outcome) -> String {
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err.lines().find(|l| l.starts_with("aarchx-stats: ")).unwrap_or_else(|| panic!("{}", describe(o)));
    // Everything but the translation times.
    line.split_whitespace()
        .filter(|w| !w.starts_with("translate_ns=") && !w.starts_with("ns."))
        .collect::<Vec<_>>()
        .join(" ")
}

fn under(policy: &Path, guest: &str, args: &[&str], log: bool) -> Outcome {
    let mut cmd = aarchx(&["--policy", policy.to_str().expect("UTF-8 path")]);
    cmd.arg(guest_dir().join("static").join(guest)).args(args).env("AARCHX_STATS", "1");
    if log {
        cmd.env("AARCHX_LOG", "debug");
    }
    run(&mut cmd)
}

#[test]
fn builtin_passes_as_a_plugin_translate_like_the_builtins() {
    let so = builtin_plugin();
    let builtin = write_policy("builtin.ron", "");
    let plugin = write_policy("plugin.ron", &format!("(path: {:?})", so.display().to_string()));
    // The plugin's passes are the ones that run.
    let o = under(&plugin, "hello", &[], true);
    let log = String::from_utf8_lossy(&o.stderr);
    for pass in ["decode", "dead-flags", "dce", "memory-order"] {
        assert!(
            log.lines().any(|l| l.contains("a plugin pass replaces the built-in one") && l.contains(pass)),
            "{pass} not replaced: {log}"
        );
    }
    for (guest, args) in
        [("hello", vec![]), ("argv", vec!["alpha", "beta"]), ("sort_search", vec![]), ("fpmath", vec![])]
    {
        let want = under(&builtin, guest, &args, false);
        let got = under(&plugin, guest, &args, false);
        assert!(want.signal.is_none() && stats(&want).contains("regions="), "{guest}: {}", describe(&want));
        assert_eq!((want.code, &want.stdout), (got.code, &got.stdout), "{guest}: {}", describe(&got));
        assert_eq!(stats(&want), stats(&got), "{guest}");
    }
}
