//! Shared by the integration tests: where the guest programs and the aarchx
//! binaries are, and running a command to completion with its outputs.

#![allow(dead_code, reason = "each test binary uses a different part of this module")]

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Captured result of a process run.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Exit code, or `None` when killed by a signal.
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

pub fn run(cmd: &mut Command) -> Outcome {
    let out = cmd.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    Outcome { stdout: out.stdout, stderr: out.stderr, code: out.status.code(), signal: out.status.signal() }
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("host/ is inside the repo").to_path_buf()
}

/// The directory holding `static/` and `dyn/` guest builds.
pub fn guest_dir() -> PathBuf {
    let dir =
        std::env::var_os("AARCHX_GUEST_DIR").map(PathBuf::from).unwrap_or_else(|| repo_root().join("guest/build"));
    assert!(
        dir.join("static").is_dir(),
        "guest programs not built in {}: run `./x test` (or `make -C guest`)",
        dir.display()
    );
    dir
}

/// The host build of aarchx that cargo built for this test.
pub fn host_aarchx() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_aarchx"))
}

/// The aarch64 build and how to run it: (qemu or none, binary), when
/// `AARCHX_ARM64_BIN` names one (`./x test` always does; a name that is
/// not a file fails the test). Without it, the part of `what` that needs
/// it is recorded as skipped (see [`skip`]).
pub fn arm64_aarchx(what: &str) -> Option<(Option<PathBuf>, PathBuf)> {
    let Some(bin) = std::env::var_os("AARCHX_ARM64_BIN").map(PathBuf::from) else {
        skip(what, "AARCHX_ARM64_BIN is not set (./x test sets it)");
        return None;
    };
    assert!(bin.is_file(), "AARCHX_ARM64_BIN names {}, which is not a file", bin.display());
    let qemu = std::env::var_os("AARCHX_QEMU").filter(|q| !q.is_empty()).map(PathBuf::from);
    Some((qemu, bin))
}

/// Where qemu-aarch64 finds the arm64 C library for a dynamically linked
/// aarch64 program on an x86-64 host: the cross toolchain's.
pub const ARM64_SYSROOT: &str = "/usr/aarch64-linux-gnu";

/// A command running the dynamically linked aarch64 aarchx
/// (`AARCHX_ARM64_DYNAMIC_BIN`, which `./x test` builds and names) with
/// `args`: under qemu-aarch64 with the cross C library when
/// `AARCHX_QEMU` is set, directly otherwise. Only single-threaded guests:
/// under this machine's qemu a dynamically linked aarch64 program hangs
/// when it starts a thread. Without the variable, `what` is recorded as
/// skipped.
pub fn arm64_dynamic_aarchx(what: &str, args: &[&std::ffi::OsStr]) -> Option<Command> {
    let Some(bin) = std::env::var_os("AARCHX_ARM64_DYNAMIC_BIN").map(PathBuf::from) else {
        skip(what, "AARCHX_ARM64_DYNAMIC_BIN is not set (./x test sets it)");
        return None;
    };
    assert!(bin.is_file(), "AARCHX_ARM64_DYNAMIC_BIN names {}, which is not a file", bin.display());
    let mut c = match std::env::var_os("AARCHX_QEMU").filter(|q| !q.is_empty()) {
        Some(qemu) => {
            let mut c = Command::new(qemu);
            c.arg("-L").arg(ARM64_SYSROOT).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    c.args(args);
    Some(c)
}

/// Records that `what` was not checked, and `why`: on stderr, and as a
/// line of the file `AARCHX_SKIP_LOG` names, whose lines `./x test` counts
/// as skipped and lists in its summary.
pub fn skip(what: &str, why: &str) {
    use std::io::Write as _;
    eprintln!("skipped: {what}: {why}");
    if let Some(log) = std::env::var_os("AARCHX_SKIP_LOG") {
        let line = format!("{what}: {why}\n");
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        appended.unwrap_or_else(|e| panic!("cannot append to AARCHX_SKIP_LOG {}: {e}", Path::new(&log).display()));
    }
}

/// A command running `aarchx` (the host build) with `args`.
pub fn aarchx(args: &[&str]) -> Command {
    let mut c = Command::new(host_aarchx());
    c.args(args);
    c
}

/// The guest programs and their arguments, from guest/expect.txt.
pub fn guest_programs() -> Vec<(String, Vec<String>)> {
    programs_in("guest/expect.txt")
}

/// The programs and their arguments listed in `list` (a path in the
/// repository: guest/expect.txt, guest/expect-v2.txt).
pub fn programs_in(list: &str) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(repo_root().join(list)).unwrap_or_else(|e| panic!("{list}: {e}"));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut words = l.split_whitespace().map(String::from);
            let name = words.next().expect("non-empty line");
            (name, words.collect())
        })
        .collect()
}

/// Asserts a single-line error on stderr, `aarchx: ...`, containing every
/// one of `needles`, with exit status `code`.
pub fn assert_one_line_error(o: &Outcome, code: i32, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.code, Some(code), "exit status; stderr: {err}");
    assert_eq!(err.lines().count(), 1, "expected one line, got: {err}");
    assert!(err.starts_with("aarchx: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

/// A path as text (test temp paths are UTF-8).
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// qemu-aarch64 reports a guest killed by a signal on stderr
/// ("qemu: uncaught target signal 8 ..."); that line is qemu's, not the
/// guest's, and is removed before comparing.
pub fn without_qemu_notes(mut o: Outcome) -> Outcome {
    let text = String::from_utf8_lossy(&o.stderr).into_owned();
    let kept: Vec<&str> =
        text.split_inclusive('\n').filter(|l| !l.starts_with("qemu: uncaught target signal")).collect();
    o.stderr = kept.concat().into_bytes();
    o
}

/// An outcome as text, for a failure message.
pub fn describe(o: &Outcome) -> String {
    format!(
        "code {:?} signal {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        o.code,
        o.signal,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
