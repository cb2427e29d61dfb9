//! Lua policies end to end: a script equal to `policies/default.ron` runs
//! the guests exactly as the RON file does; a script computes its policy
//! from the guest's arguments and the environment; `on_region` switches
//! passes off for an address range and nowhere else; and every kind of
//! mistake in a script ends in one line naming the script's file and line,
//! exit status 2 at load and 4 in the hook, never a panic.
//!
//! With `AARCHX_ARM64_BIN` set the equivalence is checked on the aarch64
//! build too (the Lua interpreter cross-compiled into it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{arm64_aarchx, assert_one_line_error, describe, guest_dir, host_aarchx, repo_root, run, Outcome};

/// A folder for this test's scripts.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aarchx-lua-policy-{}", std::process::id())).join(test);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes `text` to `dir/name` and returns the path.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write policy");
    path
}

fn guest(name: &str) -> PathBuf {
    guest_dir().join("static").join(name)
}

/// Runs `guest` with `args` under `policy` through `aarchx` (a command
/// prefix: the binary, or qemu and the binary), with AARCHX_STATS on.
fn under(aarchx: &[PathBuf], policy: &Path, guest: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut cmd = Command::new(&aarchx[0]);
    cmd.args(&aarchx[1..]).arg("--policy").arg(policy).arg(guest).args(args).env("AARCHX_STATS", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

fn host() -> Vec<PathBuf> {
    vec![host_aarchx()]
}

/// The `aarchx-stats:` line's value of `key`.
fn stat(o: &Outcome, key: &str) -> u64 {
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err.lines().find(|l| l.starts_with("aarchx-stats: ")).unwrap_or_else(|| panic!("{}", describe(o)));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {line}"))
}

/// stderr without the stats line.
fn stderr_without_stats(o: &Outcome) -> String {
    String::from_utf8_lossy(&o.stderr).lines().filter(|l| !l.starts_with("aarchx-stats: ")).collect()
}

/// A Lua script returning the policy `policies/default.ron` describes: its
/// top-level settings and pass names, read from the RON text (the default
/// passes take no options there).
fn default_as_lua() -> String {
    let ron = std::fs::read_to_string(repo_root().join("policies/default.ron")).expect("default.ron");
    let code: Vec<&str> = ron.lines().map(|l| l.split("//").next().unwrap_or("")).collect();
    let setting = |key: &str| {
        code.iter().find_map(|l| {
            let v = l.trim().strip_prefix(key)?.strip_prefix(':')?;
            Some(v.trim().trim_end_matches(',').to_string())
        })
    };
    let mut fields = Vec::new();
    for key in ["backend", "memory_model", "cpu_level"] {
        if let Some(v) = setting(key) {
            fields.push(format!("  {key} = \"{v}\","));
        }
    }
    // Each pass entry: its name, and whether it says `quick: false`.
    let entries: Vec<(String, bool)> = code
        .iter()
        .filter_map(|l| {
            let (_, rest) = l.split_once("name: \"")?;
            Some((rest.split('"').next().unwrap_or("").to_string(), rest.contains("quick: false")))
        })
        .collect();
    assert!(ron.matches("options: {}").count() == entries.len(), "default.ron gained pass options: extend this test");
    let passes: Vec<String> = entries
        .iter()
        .map(|(n, quick_off)| {
            let quick = if *quick_off { ", quick = false" } else { "" };
            format!("    {{ name = \"{n}\", options = {{}}{quick} }},")
        })
        .collect();
    format!("return {{\n{}\n  passes = {{\n{}\n  }},\n}}\n", fields.join("\n"), passes.join("\n"))
}

/// Each guest gives the same output, status and translation (IR
/// instruction count) under the Lua twin of the default policy as under
/// default.ron, through `aarchx`.
fn same_as_default(aarchx: &[PathBuf], dir: &Path) {
    let lua = write(dir, "default.lua", &default_as_lua());
    let ron = repo_root().join("policies/default.ron");
    for (name, args) in
        [("hello", vec![]), ("argv", vec!["alpha", "beta"]), ("sort_search", vec![]), ("fpmath", vec![])]
    {
        let want = under(aarchx, &ron, &guest(name), &args, &[]);
        let got = under(aarchx, &lua, &guest(name), &args, &[]);
        assert_eq!(want.code, got.code, "{name}: {}", describe(&got));
        assert_eq!(want.stdout, got.stdout, "{name}");
        assert_eq!(stderr_without_stats(&want), stderr_without_stats(&got), "{name}");
        for key in ["regions", "guest_insns", "ir_insts"] {
            assert_eq!(stat(&want, key), stat(&got, key), "{name}: {key}");
        }
    }
}

#[test]
fn lua_twin_of_default_policy_runs_guests_identically() {
    same_as_default(&host(), &scratch("default"));
}

#[test]
fn lua_twin_of_default_policy_on_arm64() {
    let Some((qemu, bin)) = arm64_aarchx("the Lua default policy on the aarch64 build") else { return };
    let prefix: Vec<PathBuf> = qemu.into_iter().chain([bin]).collect();
    same_as_default(&prefix, &scratch("default-arm64"));
}

#[test]
fn policy_computed_from_arguments_and_environment() {
    let dir = scratch("computed");
    // One instruction per region when the guest gets exactly one argument
    // or MAX_INSNS says so; the lifter's default otherwise.
    let script = r#"
local max = tonumber(os.getenv("AARCHX_TEST_MAX_INSNS") or "")
if not max and #aarchx.args == 1 and aarchx.program:match("argv$") then max = 1 end
return {
  backend = "Interp",
  passes = { { name = "decode", options = { max_insns = max or 64 } } },
}
"#;
    let lua = write(&dir, "computed.lua", script);
    let argv = guest("argv");
    let one_arg = under(&host(), &lua, &argv, &["alpha"], &[]);
    let native = run(Command::new(&argv).arg("alpha"));
    assert_eq!((one_arg.code, &one_arg.stdout), (native.code, &native.stdout), "{}", describe(&one_arg));
    assert_eq!(stat(&one_arg, "regions"), stat(&one_arg, "guest_insns"), "one instruction per region");
    let two_args = under(&host(), &lua, &argv, &["alpha", "beta"], &[]);
    assert!(stat(&two_args, "regions") < stat(&two_args, "guest_insns"), "{}", describe(&two_args));
    let env = under(&host(), &lua, &argv, &["alpha", "beta"], &[("AARCHX_TEST_MAX_INSNS", "1")]);
    assert_eq!(stat(&env, "regions"), stat(&env, "guest_insns"), "{}", describe(&env));
}

#[test]
fn on_region_switches_passes_off_inside_a_range_only() {
    let dir = scratch("range");
    // The passes on a region are the policy's unless its start lies in
    // [lo, hi). (The range is in the script, not the environment: the
    // environment moves the guest's stack strings, and with them the paths
    // its string functions take, and so which regions get translated.)
    let bisect = |lo: u64, hi: u64| {
        let script = format!(
            "function on_region(r)\n  if r.start >= {lo} and r.start < {hi} then return {{ \"dead-flags\", \"dce\" }} end\n\
             end\nreturn {{\n  backend = \"Interp\",\n  passes = {{ {{ name = \"decode\" }}, {{ name = \"dead-flags\" }}, \
             {{ name = \"dce\" }} }},\n}}\n"
        );
        write(&dir, &format!("bisect-{lo:x}-{hi:x}.lua"), &script)
    };
    let plain = write(&dir, "decode-only.ron", "(backend: Interp, passes: [(name: \"decode\")])");
    let optimised = write(
        &dir,
        "optimised.ron",
        "(backend: Interp, passes: [(name: \"decode\"), (name: \"dead-flags\"), (name: \"dce\")])",
    );
    let prog = guest("sort_search");
    let ir = |policy: &Path| {
        let o = under(&host(), policy, &prog, &[], &[]);
        assert_eq!(o.code, Some(0), "{}", describe(&o));
        (o.stdout.clone(), stat(&o, "ir_insts"), stat(&o, "regions"))
    };
    let (want_out, ir_plain, regions) = ir(&plain);
    let (_, ir_opt, _) = ir(&optimised);
    assert!(ir_opt < ir_plain, "the passes remove something ({ir_opt} vs {ir_plain})");
    let (out, ir_all_off, _) = ir(&bisect(0, u64::MAX >> 1));
    assert_eq!((out, ir_all_off), (want_out.clone(), ir_plain), "every region without the passes = decode only");
    assert_eq!(ir(&bisect(0, 0)).1, ir_opt, "no region in range = the passes everywhere");
    // The start of the guest's code (static, from 0x401000: with
    // superblocks, main and its callees start no region of their own, so
    // the range takes in the first 4 KiB) without the passes, the rest with
    // them: strictly in between.
    let (out, ir_low, low_regions) = ir(&bisect(0x400000, 0x402000));
    assert_eq!(out, want_out);
    assert_eq!(low_regions, regions);
    assert!(ir_opt < ir_low && ir_low < ir_plain, "{ir_opt} < {ir_low} < {ir_plain}");
}

#[test]
fn syntax_error_names_file_and_line() {
    let dir = scratch("syntax");
    let lua = write(
        &dir,
        "broken.lua",
        "-- a policy\nreturn {\n  passes = { { name = \"decode\" }\n  backend = \"Jit\",\n}\n",
    );
    let o = under(&host(), &lua, &guest("hello"), &[], &[]);
    let at = format!("aarchx: {}:4: ", lua.display());
    assert_one_line_error(&o, 2, &[&at]);
}

#[test]
fn runtime_error_at_load_names_file_and_line() {
    let dir = scratch("load-error");
    let lua = write(&dir, "fails.lua", "local cpu = aarchx.host\nlocal n = cpu.cores + 1\nreturn {}\n");
    let o = under(&host(), &lua, &guest("hello"), &[], &[]);
    assert_one_line_error(&o, 2, &[&format!("aarchx: {}:2: ", lua.display()), "cores"]);
}

#[test]
fn runtime_error_in_on_region_names_file_and_line_and_exits_4() {
    let dir = scratch("hook-error");
    let script = "return (function()\n  function on_region(r)\n    if r.insns > 0 then\n      error(\"no region for you\")\n    end\n  end\n  return { passes = { { name = \"decode\" }, { name = \"dce\" } } }\nend)()\n";
    let lua = write(&dir, "hook.lua", script);
    let o = under(&host(), &lua, &guest("hello"), &[], &[]);
    assert_one_line_error(&o, 4, &[&format!("aarchx: {}:4: no region for you", lua.display())]);
}

#[test]
fn bad_results_of_on_region_name_its_line_and_exit_4() {
    let dir = scratch("hook-result");
    for (result, needle) in [
        ("{ \"dcee\" }", "on_region returned `dcee`, which is not a pass of this policy"),
        ("{ \"decode\" }", "a decode-stage pass"),
        ("42", "not a number (42)"),
        ("{ skip = \"dce\" }", "keys other than 1..n"),
    ] {
        let script = format!("\n\nfunction on_region(r)\n  return {result}\nend\nreturn {{ passes = {{ {{ name = \"decode\" }}, {{ name = \"dce\" }} }} }}\n");
        let lua = write(&dir, "hook.lua", &script);
        let o = under(&host(), &lua, &guest("hello"), &[], &[]);
        assert_one_line_error(&o, 4, &[&format!("aarchx: {}:3: ", lua.display()), needle]);
    }
}

#[test]
fn field_mistakes_read_as_in_ron() {
    let dir = scratch("typo");
    // The same mistake in RON and in Lua, each in its own syntax, on the
    // third line; the Lua error points at the `return`'s last line (4).
    for (test, ron_line, lua_line, needle) in [
        ("top", "  pases: [(name: \"decode\")],", "  pases = { { name = \"decode\" } },", "unknown field `pases`"),
        (
            "entry",
            "  passes: [(name: \"decode\", optons: {})],",
            "  passes = { { name = \"decode\", optons = {} } },",
            "unknown field `optons` in a pass entry",
        ),
        (
            "verify",
            "  passes: [(name: \"decode\")], verify: (firts: 1),",
            "  passes = { { name = \"decode\" } }, verify = { firts = 1 },",
            "unknown field `firts` in `verify`",
        ),
        (
            "value",
            "  passes: [(name: \"decode\")], backend: Jitt,",
            "  passes = { { name = \"decode\" } }, backend = \"Jitt\",",
            "unknown value `Jitt` for `backend`",
        ),
    ] {
        let ron = write(&dir, &format!("{test}.ron"), &format!("(\n  afp: Off,\n{ron_line}\n)\n"));
        let lua = write(&dir, &format!("{test}.lua"), &format!("return {{\n  afp = \"Off\",\n{lua_line}\n}}\n"));
        let from_ron = under(&host(), &ron, &guest("hello"), &[], &[]);
        let from_lua = under(&host(), &lua, &guest("hello"), &[], &[]);
        assert_one_line_error(&from_ron, 2, &[needle]);
        assert_one_line_error(&from_lua, 2, &[&format!("aarchx: {}:4: ", lua.display())]);
        // Everything after the position is the same.
        let message = |o: &Outcome, file: &Path| {
            let err = String::from_utf8_lossy(&o.stderr).trim_end().to_string();
            let rest = err.strip_prefix(&format!("aarchx: {}:", file.display())).unwrap_or_else(|| panic!("{err}"));
            rest.split_once(": ").map(|(_, m)| m.to_string()).unwrap_or_else(|| panic!("{err}"))
        };
        assert_eq!(message(&from_lua, &lua), message(&from_ron, &ron), "{test}");
    }
}

#[test]
fn unknown_pass_and_bad_option_are_policy_errors() {
    let dir = scratch("validate");
    let lua = write(
        &dir,
        "p.lua",
        "return {\n  passes = { { name = \"decode\", options = { max_insns = \"many\" } } },\n}\n",
    );
    let o = under(&host(), &lua, &guest("hello"), &[], &[]);
    assert_one_line_error(
        &o,
        2,
        &[&format!("{}:3: pass `decode`: option `max_insns` takes an integer", lua.display())],
    );
    let lua = write(&dir, "q.lua", "return { passes = { { name = \"decode\" }, { name = \"superblok\" } } }\n");
    let o = under(&host(), &lua, &guest("hello"), &[], &[]);
    assert_one_line_error(&o, 2, &[&format!("{}:1: unknown pass `superblok`", lua.display())]);
}

#[test]
fn sandbox_has_no_io_and_host_facts_are_given() {
    let dir = scratch("sandbox");
    let script = r#"
assert(io == nil and load == nil and dofile == nil and require == nil and os.execute == nil, "sandbox")
assert(aarchx.host.arch == os.getenv("WANT_ARCH"), aarchx.host.arch)
print("sse2=" .. tostring(aarchx.host.features.sse2 == true))
return { passes = { { name = "decode" } } }
"#;
    let lua = write(&dir, "s.lua", script);
    let o = under(&host(), &lua, &guest("hello"), &[], &[("WANT_ARCH", std::env::consts::ARCH)]);
    assert_eq!(o.code, Some(0), "{}", describe(&o));
    // Every x86-64 CPU has SSE2; /proc/cpuinfo says so independently.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let has_sse2 = cpuinfo.lines().any(|l| l.starts_with("flags") && l.split_whitespace().any(|w| w == "sse2"));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("sse2={has_sse2}")), "{}", describe(&o));
}

#[test]
fn endless_library_call_is_stopped_with_one_line() {
    // string.rep of an empty string loops in C, where Lua's time check
    // never runs: the watchdog ends aarchx shortly after the time limit,
    // in the script, in a finalizer run when its state closes, and in
    // on_region.
    let dir = scratch("overrun");
    for (name, script) in [
        ("rep.lua", "local s = string.rep(\"\", 1 << 60)\nreturn { passes = { { name = \"decode\" } } }\n"),
        (
            "gc.lua",
            "setmetatable({}, { __gc = function() string.rep(\"\", 1 << 60) end })\n\
             return { passes = { { name = \"decode\" } } }\n",
        ),
    ] {
        let lua = write(&dir, name, script);
        let start = std::time::Instant::now();
        let o = under(&host(), &lua, &guest("hello"), &[], &[]);
        assert_one_line_error(&o, 2, &[&format!("aarchx: {}: stopped: ran longer than 1 s", lua.display())]);
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "{name}: {:?}", start.elapsed());
    }
    let hook = write(
        &dir,
        "hook.lua",
        "function on_region(r)\n  string.rep(\"\", 1 << 60)\nend\nreturn { passes = { { name = \"decode\" }, { name = \"dce\" } } }\n",
    );
    let o = under(&host(), &hook, &guest("hello"), &[], &[]);
    assert_one_line_error(&o, 4, &[&format!("aarchx: {}:1: stopped: ran longer than 1 s", hook.display())]);
}
