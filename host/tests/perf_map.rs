//! `AARCHX_PERF_MAP`: the aarch64 build describes its translated code in
//! `/tmp/perf-PID.map` (perf's format for JIT code), one symbol per guest
//! instruction's arm64 code. Checked on the freestanding hello: every
//! instruction objdump lists from `_start` through the second `syscall`
//! (the two regions a run translates) has its span, spans are whole arm64
//! instructions and never overlap.

mod common;

use std::process::{Command, Stdio};

use common::{arm64_aarchx, guest_dir};

#[test]
fn the_perf_map_names_each_guest_instructions_arm64_code() {
    let Some((qemu, bin)) = arm64_aarchx("the perf map") else { return };
    let hello = guest_dir().join("static/hello");
    let mut cmd = match qemu {
        Some(q) => {
            let mut c = Command::new(q);
            c.arg(&bin);
            c
        }
        None => Command::new(&bin),
    };
    let child = cmd
        .arg(&hello)
        .env("AARCHX_PERF_MAP", "1")
        .env("AARCHX_CACHE", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("aarchx starts");
    let pid = child.id();
    let out = child.wait_with_output().expect("aarchx runs");
    assert!(out.status.success(), "{out:?}");
    let path = format!("/tmp/perf-{pid}.map");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let _ = std::fs::remove_file(&path);

    let mut spans: Vec<(u64, u64, String)> = text
        .lines()
        .map(|l| {
            let mut w = l.splitn(3, ' ');
            let start = u64::from_str_radix(w.next().expect("start"), 16).expect("hex start");
            let size = u64::from_str_radix(w.next().expect("size"), 16).expect("hex size");
            (start, size, w.next().expect("name").to_string())
        })
        .collect();
    spans.sort();
    for pair in spans.windows(2) {
        assert!(pair[0].0 + pair[0].1 <= pair[1].0, "overlapping spans: {pair:?}");
    }
    assert!(spans.iter().all(|(start, size, _)| start % 4 == 0 && size % 4 == 0 && *size > 0), "{text}");

    // The guest instructions from _start through the second syscall.
    let listing = Command::new("objdump")
        .args(["-d", "-M", "intel", "--no-show-raw-insn", "--disassemble=_start"])
        .arg(&hello)
        .output()
        .expect("objdump runs");
    let listing = String::from_utf8(listing.stdout).expect("UTF-8");
    let mut addrs = Vec::new();
    for line in listing.lines() {
        let Some((addr, rest)) = line.trim().split_once(":\t") else { continue };
        let Ok(addr) = u64::from_str_radix(addr, 16) else { continue };
        addrs.push(addr);
        if rest.trim() == "syscall" && addrs.len() > 5 {
            break;
        }
    }
    assert!(addrs.len() >= 8, "{listing}");
    for a in addrs {
        let name = format!("x86 {a:#x} region ");
        assert!(spans.iter().any(|(_, _, n)| n.starts_with(&name)), "no span for {a:#x} in:\n{text}");
    }
}
