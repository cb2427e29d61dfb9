//! The subcommands (`passes`, `policy check`, `policy show`, `explain`,
//! `completions`, `man`) and the rule that tells a subcommand from a
//! program: their output, their errors (one line, exit status 2), and
//! `--help` of each.

mod common;

use std::path::PathBuf;

use common::{aarchx, assert_one_line_error, path_str, run};

/// A temporary folder of this test process.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aarchx-subcommands-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `aarchx ARGS` with no per-program rules and no AARCHX_POLICY.
fn isolated(args: &[&str]) -> std::process::Command {
    let empty = temp_dir("empty-config");
    let mut c = aarchx(args);
    c.env("AARCHX_SYSCONFDIR", &empty).env("XDG_CONFIG_HOME", &empty).env_remove("AARCHX_POLICY");
    c
}

fn stdout_of(args: &[&str]) -> String {
    let o = run(&mut isolated(args));
    assert_eq!(o.code, Some(0), "aarchx {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

#[test]
fn passes_lists_every_builtin_pass_with_stage_and_typed_options() {
    let text = stdout_of(&["passes"]);
    for pass in ["decode", "state-forward", "store-forward", "const-fold", "cse", "cond-fusion", "dead-flags"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("{pass}  ("))), "{pass} missing:\n{text}");
    }
    for line in [
        "decode  (decode stage, built in)",
        "    max_insns (integer, default 64): ",
        "    follow (bool, default true): ",
        "dead-flags  (transform stage, built in)",
        "    lookahead (integer, default 16): ",
        "memory-order  (lowering stage, built in)",
    ] {
        assert!(text.contains(line), "no `{line}` in:\n{text}");
    }
}

#[test]
fn policy_check_accepts_a_valid_policy_and_names_the_line_of_a_mistake() {
    let text = stdout_of(&["policy", "check", "ordered"]);
    assert!(text.ends_with("policies/ordered.ron: valid: decode, leaf-inline, state-forward, store-forward, const-fold, cse, cond-fusion, dead-flags, sink, dce, memory-order\n"), "{text}");
    let bad = temp_dir("check").join("bad.ron");
    std::fs::write(
        &bad,
        "(\n  passes: [\n    (name: \"decode\"),\n    (name: \"dce\", options: { \"x\": 1 }),\n  ],\n)\n",
    )
    .expect("write");
    let o = run(&mut isolated(&["policy", "check", path_str(&bad)]));
    assert_one_line_error(&o, 2, &["bad.ron:4:", "pass `dce`: unknown option `x`"]);
    let o = run(&mut isolated(&["policy", "check", "no-such-policy"]));
    assert_one_line_error(&o, 2, &["policy `no-such-policy`", "not found", "no-such-policy.ron"]);
}

#[test]
fn policy_show_tells_where_each_value_came_from() {
    let dir = temp_dir("show");
    let file = dir.join("small.ron");
    std::fs::write(&file, "(\n  memory_model: Ordered,\n  passes: [(name: \"decode\", options: { \"follow\": false }), (name: \"dce\", quick: false)],\n)\n")
        .expect("write");
    let name = path_str(&file);
    let text = stdout_of(&["policy", "show", "--set", "decode.max_insns=7", name]);
    for line in [
        format!("policy: {name}  (from command line)"),
        format!("memory_model: Ordered  ({name})"),
        "backend: Jit  (default)".to_string(),
        format!("passes:  ({name})"),
        format!("    follow = false  ({name})"),
        "    max_insns = 7  (--set decode.max_insns=7)".to_string(),
        "  dce  (not on quick translations)".to_string(),
    ] {
        assert!(text.lines().any(|l| l == line), "no line `{line}` in:\n{text}");
    }
    let o = run(&mut isolated(&["policy", "show", "--set", "decode.max_insns=many", name]));
    assert_one_line_error(&o, 2, &["max_insns", "integer"]);
}

#[test]
fn completions_for_bash_zsh_and_fish_name_the_subcommands() {
    for (shell, marker, option) in [
        ("bash", "complete -F", "--rootfs"),
        ("zsh", "#compdef aarchx", "--rootfs"),
        ("fish", "complete -c aarchx", "-l rootfs"),
    ] {
        let text = stdout_of(&["completions", shell]);
        assert!(text.contains(marker), "{shell}: no `{marker}`");
        for word in ["passes", "policy", "binfmt", option] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
    let o = run(&mut isolated(&["completions", "tcsh"]));
    assert_one_line_error(&o, 2, &["tcsh"]);
}

#[test]
fn man_page_is_roff_with_the_options_and_exit_statuses() {
    let text = stdout_of(&["man"]);
    assert!(text.starts_with(".ie"), "not roff: {}", &text[..text.len().min(80)]);
    for word in [".TH aarchx", "\\-\\-policy", "AARCHX_POLICY", "127"] {
        assert!(text.contains(word), "man page lacks {word}");
    }
}

#[test]
fn every_subcommand_has_help() {
    for args in [
        &["passes", "--help"][..],
        &["policy", "--help"],
        &["policy", "check", "--help"],
        &["policy", "show", "--help"],
        &["binfmt", "--help"],
        &["binfmt", "install", "--help"],
        &["completions", "--help"],
        &["explain", "--help"],
        &["cache", "--help"],
    ] {
        let text = stdout_of(args);
        assert!(text.contains("Usage: aarchx "), "{args:?}: {text}");
    }
    assert!(stdout_of(&["binfmt", "install", "--help"]).contains("--force"));
}

#[test]
fn usage_mistakes_are_one_line_and_2() {
    let o = run(&mut isolated(&["policy"]));
    assert_one_line_error(&o, 2, &["missing COMMAND", "aarchx policy <COMMAND>"]);
    let o = run(&mut isolated(&["passes", "--frob"]));
    assert_one_line_error(&o, 2, &["--frob"]);
    let o = run(&mut isolated(&["policy", "check"]));
    assert_one_line_error(&o, 2, &["<FILE>"]);
    let o = run(&mut isolated(&["--policy"]));
    assert_one_line_error(&o, 2, &["--policy needs a FILE"]);
    let o = run(&mut isolated(&[]));
    assert_one_line_error(&o, 2, &["missing PROGRAM"]);
}

#[test]
fn a_program_named_like_a_subcommand_runs_by_path_or_after_dashes() {
    let dir = temp_dir("named");
    let prog = dir.join("passes");
    // A link, not a copy: a copy's file is open for writing in any child
    // another test forks meanwhile, and running it then fails (ETXTBSY).
    std::os::unix::fs::symlink(common::guest_dir().join("static/argv"), &prog).expect("link argv");
    let native = run(std::process::Command::new(&prog).arg("--policy"));
    assert!(String::from_utf8_lossy(&native.stdout).contains("argv[1]=\"--policy\""));
    // `./passes` by path, from its folder, and `-- passes`: the program,
    // with `--policy` its own argument.
    assert_eq!(run(isolated(&["./passes", "--policy"]).current_dir(&dir)), native);
    assert_eq!(run(isolated(&["--", "passes", "--policy"]).current_dir(&dir)), native);
    // Without either, it is the subcommand.
    let o = run(isolated(&["passes"]).current_dir(&dir));
    assert!(String::from_utf8_lossy(&o.stdout).contains("decode  (decode stage, built in)"));
}

/// The instruction addresses objdump lists for `symbol` in `file`, up to
/// and including the first `syscall`, and the address after it.
fn objdump_until_syscall(file: &std::path::Path, symbol: &str) -> (Vec<u64>, u64) {
    let out = std::process::Command::new("objdump")
        .args(["-d", "-M", "intel", "--no-show-raw-insn"])
        .arg(format!("--disassemble={symbol}"))
        .arg(file)
        .output()
        .expect("objdump runs");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let insns: Vec<(u64, bool)> = text
        .lines()
        .filter_map(|l| {
            let (addr, rest) = l.trim().split_once(":\t")?;
            Some((u64::from_str_radix(addr, 16).ok()?, rest.trim() == "syscall"))
        })
        .collect();
    let end = insns.iter().position(|&(_, syscall)| syscall).expect("a syscall in the listing");
    (insns[..=end].iter().map(|&(a, _)| a).collect(), insns[end + 1].0)
}

#[test]
fn explain_shows_the_guest_code_the_ir_after_each_pass_and_the_arm64_code() {
    let hello = common::guest_dir().join("static/hello");
    let text = stdout_of(&["explain", "--at", "_start", path_str(&hello)]);
    // The guest code: the instructions objdump lists from _start up to the
    // first syscall (where a region ends), by address, their bytes counted.
    let (addrs, after) = objdump_until_syscall(&hello, "_start");
    let heading = format!("== guest x86-64: {} instructions, {} bytes", addrs.len(), after - addrs[0]);
    assert!(text.contains(&heading), "no `{heading}` in:\n{text}");
    for a in &addrs {
        assert!(text.contains(&format!("\n  {a:#x}  ")), "{a:#x} not listed:\n{text}");
    }
    assert!(text.contains("mov eax,1") && text.contains("syscall"), "{text}");
    // The IR after each pass of the default policy, in its order.
    let policy = std::fs::read_to_string(common::repo_root().join("policies/default.ron")).expect("default.ron");
    let passes: Vec<&str> =
        policy.lines().filter_map(|l| l.trim().strip_prefix("(name: \"")?.split('"').next()).collect();
    assert!(passes.len() >= 5, "{passes:?}");
    let mut at = 0;
    for pass in &passes {
        let found = text[at..].find(&format!("\n== IR after {pass}: ")).unwrap_or_else(|| panic!("{pass}:\n{text}"));
        at += found + 1;
    }
    // The arm64 code: as many listed words as the heading says, every one
    // a valid instruction, the last a branch to the dispatcher's exit.
    let arm64 = &text[text.find("\n== arm64: ").expect("an arm64 section") + 1..];
    let words: Vec<&str> = arm64.lines().skip(1).collect();
    let n: usize = arm64["== arm64: ".len()..].split(' ').next().and_then(|n| n.parse().ok()).expect("a count");
    assert!(arm64.starts_with(&format!("== arm64: {n} instructions, {} bytes", 4 * n)), "{arm64}");
    assert_eq!(words.len(), n, "{arm64}");
    assert!(words.iter().all(|w| !w.contains('<')), "an undecodable word:\n{arm64}");
    assert!(words.last().is_some_and(|w| w.split_whitespace().nth(2) == Some("b")), "{arm64}");
}

#[test]
fn explain_follows_the_policy_and_the_tiering_shape() {
    let argv = common::guest_dir().join("static/argv");
    let plain = stdout_of(&["explain", "--at", "main", path_str(&argv)]);
    let ordered = stdout_of(&["explain", "--at", "main", "--policy", "ordered", path_str(&argv)]);
    let orders = |t: &str| t.lines().filter(|l| [" ldar", " stlr", " dmb"].iter().any(|m| l.contains(m))).count();
    assert_eq!(orders(&plain), 0, "{plain}");
    assert!(orders(&ordered) > 0, "{ordered}");
    assert!(ordered.contains("memory model Ordered"));
    // The quick translation follows no branch: it holds fewer guest
    // instructions than the superblock (main calls before it returns).
    let count = |t: &str| -> usize {
        let line = t.lines().find(|l| l.starts_with("== guest x86-64: ")).expect("guest heading");
        line["== guest x86-64: ".len()..].split(' ').next().and_then(|n| n.parse().ok()).expect("a count")
    };
    let quick = stdout_of(&["explain", "--quick", "--at", "main", path_str(&argv)]);
    assert!(quick.contains("quick translation"));
    // It leaves by a direct call, so its block counts its runs.
    assert!(quick.contains("run count at") && !plain.contains("run count at"), "{quick}");
    assert!(count(&quick) < count(&plain), "quick {} superblock {}", count(&quick), count(&plain));
}

#[test]
fn explain_errors_are_one_line() {
    let argv = common::guest_dir().join("static/argv");
    let o = run(&mut isolated(&["explain", "--at", "no_such_symbol", path_str(&argv)]));
    assert_one_line_error(&o, 2, &["argv", "no symbol `no_such_symbol`"]);
    let o = run(&mut isolated(&["explain", "--at", "0x10", path_str(&argv)]));
    assert_one_line_error(&o, 2, &["0x10 is not in an executable segment"]);
    let o = run(&mut isolated(&["explain", "--at", "main", "/no/such/program"]));
    assert_one_line_error(&o, 127, &["/no/such/program"]);
    let readme = common::repo_root().join("README.md");
    let o = run(&mut isolated(&["explain", "--at", "main", path_str(&readme)]));
    assert_one_line_error(&o, 126, &["README.md", "not a runnable x86-64 ELF"]);
    let o = run(&mut isolated(&["explain", path_str(&argv)]));
    assert_one_line_error(&o, 2, &["--at"]);
}
