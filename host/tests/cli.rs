//! The command-line contract: bad input ends in one line on stderr naming
//! the problem and a documented exit status, never a panic.

mod common;

use std::io::Write;
use std::path::PathBuf;

use common::{aarchx, assert_one_line_error, path_str, run};

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aarchx-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).expect("temp file");
    f.write_all(bytes).expect("write temp file");
    path
}

/// A 64-byte ELF header with the given class, machine and type.
fn elf_header(class: u8, machine: u16, etype: u16) -> Vec<u8> {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = class;
    h[5] = 1; // little endian
    h[6] = 1; // version
    h[16..18].copy_from_slice(&etype.to_le_bytes());
    h[18..20].copy_from_slice(&machine.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h
}

#[test]
fn missing_program_is_127() {
    let o = run(&mut aarchx(&["/nonexistent/prog"]));
    assert_one_line_error(&o, 127, &["/nonexistent/prog"]);
}

#[test]
fn text_file_is_126() {
    let p = temp_file("text", b"hello, not an ELF\n");
    let o = run(&mut aarchx(&[path_str(&p)]));
    assert_one_line_error(&o, 126, &[path_str(&p)]);
}

#[test]
fn truncated_elf_is_126() {
    let p = temp_file("truncated", &elf_header(2, 62, 2)[..20]);
    let o = run(&mut aarchx(&[path_str(&p)]));
    assert_one_line_error(&o, 126, &[path_str(&p)]);
}

#[test]
fn arm64_elf_is_126_and_names_the_machine() {
    let p = temp_file("arm64", &elf_header(2, 183, 2));
    let o = run(&mut aarchx(&[path_str(&p)]));
    assert_one_line_error(&o, 126, &["aarch64"]);
}

#[test]
fn x86_32bit_elf_is_126() {
    let p = temp_file("i386", &elf_header(1, 3, 2));
    let o = run(&mut aarchx(&[path_str(&p)]));
    assert_one_line_error(&o, 126, &["32-bit"]);
}

#[test]
fn truncated_segments_are_126() {
    // A whole header and program header table, but the PT_LOAD segment it
    // describes lies past the end of the file.
    let mut elf = elf_header(2, 62, 2);
    elf[24..32].copy_from_slice(&0x401000u64.to_le_bytes()); // entry
    elf[32..40].copy_from_slice(&64u64.to_le_bytes()); // phoff
    elf[54..56].copy_from_slice(&56u16.to_le_bytes()); // phentsize
    elf[56..58].copy_from_slice(&1u16.to_le_bytes()); // phnum
    let mut phdr = vec![0u8; 56];
    phdr[0..4].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    phdr[16..24].copy_from_slice(&0x400000u64.to_le_bytes()); // vaddr
    phdr[32..40].copy_from_slice(&0x10000u64.to_le_bytes()); // filesz
    phdr[40..48].copy_from_slice(&0x10000u64.to_le_bytes()); // memsz
    elf.extend_from_slice(&phdr);
    let p = temp_file("truncated-segment", &elf);
    let o = run(&mut aarchx(&[path_str(&p)]));
    assert_one_line_error(&o, 126, &[path_str(&p), "segment 0 lies outside the file"]);
}

#[test]
fn directory_and_device_are_126_and_never_read() {
    let dir = std::env::temp_dir();
    let o = run(&mut aarchx(&[path_str(&dir)]));
    assert_one_line_error(&o, 126, &[path_str(&dir), "is a directory"]);
    // Reading /dev/zero would never end.
    let o = run(&mut aarchx(&["/dev/zero"]));
    assert_one_line_error(&o, 126, &["/dev/zero: is a device, FIFO or socket"]);
}

#[test]
fn dynamic_executable_runs() {
    let prog = common::guest_dir().join("dyn/argv");
    let o = run(&mut aarchx(&[path_str(&prog), "x"]));
    assert_eq!(o, run(std::process::Command::new(&prog).arg("x")), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("argv[1]=\"x\""));
}

#[test]
fn policy_typo_names_file_line_and_field() {
    let p = temp_file("typo.ron", b"(\n    backend: Interp,\n    pases: [],\n)\n");
    let o = run(&mut aarchx(&["--policy", path_str(&p), "/bin/true"]));
    assert_one_line_error(&o, 2, &["typo.ron:3:", "pases"]);
}

#[test]
fn unknown_pass_is_2() {
    let p = temp_file(
        "unknown.ron",
        b"(\n    passes: [\n        (name: \"decode\"),\n        (name: \"frobnicate\"),\n    ],\n)\n",
    );
    let o = run(&mut aarchx(&["--policy", path_str(&p), "/bin/true"]));
    assert_one_line_error(&o, 2, &["unknown.ron:4", "frobnicate"]);
}

#[test]
fn wrong_option_type_names_file_line_and_option() {
    let p = temp_file(
        "kind.ron",
        b"(\n    passes: [\n        (name: \"decode\", options: { \"max_insns\": \"many\" }),\n    ],\n)\n",
    );
    let o = run(&mut aarchx(&["--policy", path_str(&p), "/bin/true"]));
    assert_one_line_error(&o, 2, &["kind.ron:3:", "option `max_insns` takes an integer, not a string"]);
}

#[test]
fn endless_policy_file_is_2() {
    let o = run(&mut aarchx(&["--policy", "/dev/zero", "/bin/true"]));
    assert_one_line_error(&o, 2, &["/dev/zero: not a policy: larger than 1024 KiB"]);
}

#[test]
fn missing_policy_file_is_2() {
    let o = run(&mut aarchx(&["--policy", "/nonexistent/policy.ron", "/bin/true"]));
    assert_one_line_error(&o, 2, &["/nonexistent/policy.ron"]);
}

#[test]
fn unknown_option_is_2() {
    let o = run(&mut aarchx(&["--frob", "/bin/true"]));
    assert_one_line_error(&o, 2, &["--frob"]);
}

#[test]
fn help_lists_options_and_exit_statuses() {
    let o = run(&mut aarchx(&["--help"]));
    assert_eq!(o.code, Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    for needle in ["--policy", "AARCHX_LOG", "126", "127"] {
        assert!(text.contains(needle), "--help lacks {needle}");
    }
}

#[test]
fn set_overrides_a_pass_option() {
    let hello = common::guest_dir().join("static/hello");
    let policy = common::repo_root().join("policies/interp.ron");
    let ok = run(&mut aarchx(&["--policy", path_str(&policy), "--set", "decode.max_insns=1", path_str(&hello)]));
    assert_eq!(ok.code, Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let kind = run(&mut aarchx(&["--policy", path_str(&policy), "--set=decode.max_insns=many", path_str(&hello)]));
    assert_one_line_error(&kind, 2, &["max_insns", "integer"]);
    let pass = run(&mut aarchx(&["--policy", path_str(&policy), "--set", "frob.x=1", path_str(&hello)]));
    assert_one_line_error(&pass, 2, &["--set frob.x=1", "frob"]);
    let form = run(&mut aarchx(&["--set", "nodot", path_str(&hello)]));
    assert_one_line_error(&form, 2, &["PASS.OPTION=VALUE"]);
}

#[test]
fn stats_line_reports_translation() {
    let hello = common::guest_dir().join("static/hello");
    let o = run(aarchx(&[path_str(&hello)]).env("AARCHX_STATS", "1"));
    assert_eq!(o.code, Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err.lines().find(|l| l.starts_with("aarchx-stats: ")).unwrap_or_else(|| panic!("no stats in: {err}"));
    // hello.S is two regions: its write and its exit_group system calls.
    assert!(line.contains("regions=2 "), "{line}");
    let quiet = run(&mut aarchx(&[path_str(&hello)]));
    assert!(quiet.stderr.is_empty(), "stats printed without AARCHX_STATS");
}
