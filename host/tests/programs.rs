//! Per-program rules (`programs.ron`) and policy resolution: precedence
//! system rule < user rule < AARCHX_POLICY < command line, matching by
//! basename, path and glob, a bad rules file named with its line, a rule's
//! overrides and guest environment reaching a run, and `policy show`
//! naming the rule that applied. The system folder comes from
//! `AARCHX_SYSCONFDIR`, the user's from `XDG_CONFIG_HOME`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{aarchx, assert_one_line_error, path_str, run};

/// A fresh system and user configuration folder pair for one test.
fn config(name: &str) -> (PathBuf, PathBuf) {
    let base = std::env::temp_dir().join(format!("aarchx-programs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (sys, user) = (base.join("etc"), base.join("home"));
    std::fs::create_dir_all(sys.join("aarchx")).expect("system dir");
    std::fs::create_dir_all(user.join("aarchx")).expect("user dir");
    (sys, user)
}

fn write_rules(dir: &Path, text: &str) {
    std::fs::write(dir.join("aarchx/programs.ron"), text).expect("rules file");
}

fn with_config(mut c: Command, (sys, user): &(PathBuf, PathBuf)) -> Command {
    c.env("AARCHX_SYSCONFDIR", sys).env("XDG_CONFIG_HOME", user).env_remove("AARCHX_POLICY");
    c
}

fn show(cfg: &(PathBuf, PathBuf), args: &[&str]) -> String {
    let mut cmd = aarchx(&["policy", "show"]);
    cmd.args(args);
    let o = run(&mut with_config(cmd, cfg));
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("UTF-8")
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[test]
fn precedence_system_user_environment_command_line() {
    let cfg = config("precedence");
    write_rules(&cfg.0, r#"(rules: [(match: "tool", policy: "ordered", set: ["decode.max_insns=8"])])"#);
    let sys_rule = format!("{}/aarchx/programs.ron rule 1 (`tool`)", path_str(&cfg.0));
    let text = show(&cfg, &["/opt/x/tool"]);
    assert!(first_line(&text).ends_with(&format!("policies/ordered.ron  (from {sys_rule})")), "{text}");
    assert!(text.contains(&format!("    max_insns = 8  (--set decode.max_insns=8 ({sys_rule}))")), "{text}");

    write_rules(&cfg.1, r#"(rules: [(match: "tool", policy: "interp", set: ["decode.max_insns=16"])])"#);
    let user_rule = format!("{}/aarchx/programs.ron rule 1 (`tool`)", path_str(&cfg.1));
    let text = show(&cfg, &["/opt/x/tool"]);
    assert!(first_line(&text).ends_with(&format!("policies/interp.ron  (from {user_rule})")), "{text}");
    assert!(text.contains(&format!("    max_insns = 16  (--set decode.max_insns=16 ({user_rule}))")), "{text}");
    // Both rules are named, the system's first.
    assert!(text.contains(&format!("rule: {sys_rule}\nrule: {user_rule}\n")), "{text}");

    let mut cmd = aarchx(&["policy", "show", "/opt/x/tool"]);
    let o = run(with_config(std::mem::replace(&mut cmd, Command::new("true")), &cfg).env("AARCHX_POLICY", "plain"));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(first_line(&text).ends_with("policies/plain.ron  (from AARCHX_POLICY)"), "{text}");

    let text = show(&cfg, &["--policy", "verify", "--set", "decode.max_insns=32", "/opt/x/tool"]);
    assert!(first_line(&text).ends_with("policies/verify.ron  (from command line)"), "{text}");
    assert!(text.contains("    max_insns = 32  (--set decode.max_insns=32)"), "{text}");
}

#[test]
fn basename_path_and_glob_rules_match_and_the_first_in_a_file_wins() {
    let cfg = config("matching");
    write_rules(
        &cfg.0,
        r#"(rules: [
            (match: "/opt/app/bin/app", policy: "interp", reason: "by path"),
            (match: "python3*", policy: "ordered", reason: "by glob"),
            (match: "python3.11", policy: "plain", reason: "shadowed"),
        ])"#,
    );
    let text = show(&cfg, &["/opt/app/bin/app"]);
    assert!(text.contains("rule 1 (`/opt/app/bin/app`): by path"), "{text}");
    let text = show(&cfg, &["/usr/bin/python3.11"]);
    assert!(text.contains("rule 2 (`python3*`): by glob"), "{text}");
    let text = show(&cfg, &["/elsewhere/app"]);
    assert!(text.contains("rule: none matches"), "{text}");
    assert!(first_line(&text).starts_with("policy: <built-in default policy>  (from built in)"), "{text}");
}

#[test]
fn a_bad_rules_file_is_one_line_naming_its_line() {
    let cfg = config("bad");
    write_rules(&cfg.1, "(rules: [\n  (match: \"x\",\n   polcy: \"ordered\"),\n])\n");
    let o = run(&mut with_config(aarchx(&["/bin/true"]), &cfg));
    assert_one_line_error(&o, 2, &[&format!("{}/aarchx/programs.ron:3:", path_str(&cfg.1)), "polcy"]);
    write_rules(&cfg.1, r#"(rules: [(match: "true", policy: "no-such-policy")])"#);
    let o = run(&mut with_config(aarchx(&["/bin/true"]), &cfg));
    assert_one_line_error(&o, 2, &["policy `no-such-policy`", "rule 1 (`true`)", "not found"]);
}

#[test]
fn a_rules_overrides_and_environment_reach_the_run() {
    let cfg = config("run");
    write_rules(&cfg.0, r#"(rules: [(match: "true", set: ["decode.max_insns=many"])])"#);
    let o = run(&mut with_config(aarchx(&["/bin/true"]), &cfg));
    assert_one_line_error(&o, 2, &["rule 1 (`true`)", "max_insns", "integer"]);
    write_rules(
        &cfg.0,
        r#"(rules: [(match: "env", env: { "AARCHX_RULE_TEST": "from-rule", "AARCHX_RULE_KEPT": "from-rule" })])"#,
    );
    // The machine's own env(1) prints the guest's environment: an x86-64
    // program only on an x86-64 host.
    if !cfg!(target_arch = "x86_64") {
        common::skip("a rule's environment reaching the guest", "/usr/bin/env is not an x86-64 program here");
        return;
    }
    let mut cmd = with_config(aarchx(&["/usr/bin/env"]), &cfg);
    let o = run(cmd.env("AARCHX_RULE_KEPT", "from-environment"));
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l == "AARCHX_RULE_TEST=from-rule"), "{out}");
    assert!(out.lines().any(|l| l == "AARCHX_RULE_KEPT=from-environment"), "{out}");
}

#[test]
fn the_shipped_rules_parse_and_apply() {
    let etc = common::repo_root().join("etc");
    let cfg = config("shipped");
    let mut cmd = aarchx(&["policy", "show", "/usr/lib/jvm/bin/java"]);
    cmd.env("AARCHX_SYSCONFDIR", &etc).env("XDG_CONFIG_HOME", &cfg.1).env_remove("AARCHX_POLICY");
    let o = run(&mut cmd);
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("memory_model: Ordered"), "{text}");
    assert!(text.contains("(`java`): HotSpot"), "{text}");
}
