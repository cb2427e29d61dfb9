//! execve: replacing the guest program. An x86-64 ELF executable (or a
//! `#!` script whose interpreter is one) re-enters aarchx: the host process
//! executes the aarchx binary again with the command line's policy file
//! and `--set`s and the same guest root, `--argv0` carrying the argv[0]
//! the guest passed (a policy from `AARCHX_POLICY` or a per-program rule
//! is resolved again, for the new program). Anything else (a
//! native host program, or a script for a native interpreter) is executed
//! by the host kernel directly, with the guest's argv and envp untouched.
//!
//! How aarchx was started is recorded once at start-up ([`init`]). When
//! aarchx is an aarch64 binary run by `qemu-aarch64` on a host without
//! binfmt_misc, executing it directly fails with ENOEXEC; it is then run
//! through `$AARCHX_QEMU`, or else `qemu-aarch64` found in `PATH`.

use std::ffi::{CString, OsString};
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{Errno, Process};
use crate::loader::rootfs::LastLink;

const PATH_MAX: usize = 4096;
/// The most argv or envp entries read from the guest (the kernel's limit
/// is in bytes; this bounds a runaway array).
const MAX_STRINGS: usize = 1 << 17;
/// The kernel reads this much of a `#!` line (BINPRM_BUF_SIZE).
const SHEBANG_MAX: usize = 256;
const EM_X86_64: u16 = 62;

/// How this aarchx was started: what re-entering it needs.
#[derive(Clone, Debug)]
struct Relaunch {
    /// The aarchx executable.
    exe: PathBuf,
    /// The policy file (absolute), or `None` for the built-in policy.
    policy: Option<PathBuf>,
    /// The `--set` overrides, in order.
    sets: Vec<String>,
}

static RELAUNCH: OnceLock<Relaunch> = OnceLock::new();

/// Records how aarchx was started, for execve to start it again: `policy`
/// is the `--policy` file, if one was given, `sets` the `--set` overrides.
/// Call once, before running the
/// guest (later calls are ignored). Without it, execve re-enters
/// `std::env::current_exe()` with the built-in policy.
pub fn init(policy: Option<&Path>, sets: &[String]) {
    let policy = policy.map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()));
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    // A second call keeps the first record, as documented.
    let _ = RELAUNCH.set(Relaunch { exe, policy, sets: sets.to_vec() });
}

fn relaunch() -> Relaunch {
    RELAUNCH.get().cloned().unwrap_or_else(|| Relaunch {
        exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe")),
        policy: None,
        sets: Vec::new(),
    })
}

/// What a file to be executed is.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// An x86-64 ELF file.
    X86_64,
    /// A `#!` script: its interpreter and optional argument.
    Script { interp: Vec<u8>, arg: Option<Vec<u8>> },
    /// Anything else: the host kernel decides.
    Other,
}

fn kind_of(path: &Path) -> Result<Kind, Errno> {
    let mut head = Vec::with_capacity(SHEBANG_MAX);
    let file = std::fs::File::open(path).map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::ENOEXEC)))?;
    file.take(SHEBANG_MAX as u64).read_to_end(&mut head).map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
    Ok(classify(&head))
}

fn classify(head: &[u8]) -> Kind {
    if head.len() >= 20 && head.starts_with(b"\x7fELF") && u16::from_le_bytes([head[18], head[19]]) == EM_X86_64 {
        return Kind::X86_64;
    }
    let Some(line) = head.strip_prefix(b"#!") else { return Kind::Other };
    let line = line.split(|b| *b == b'\n').next().unwrap_or_default();
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let line = trim(line, blank);
    let interp_len = line.iter().position(blank).unwrap_or(line.len());
    let (interp, rest) = line.split_at(interp_len);
    if interp.is_empty() {
        return Kind::Other;
    }
    let rest = trim(rest, blank);
    Kind::Script { interp: interp.to_vec(), arg: (!rest.is_empty()).then(|| rest.to_vec()) }
}

fn trim(bytes: &[u8], blank: impl Fn(&u8) -> bool) -> &[u8] {
    let start = bytes.iter().position(|b| !blank(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !blank(b)).map_or(start, |e| e + 1);
    &bytes[start..end]
}

fn cstring(bytes: Vec<u8>) -> CString {
    // Guest strings were read up to their NUL; host paths never hold one.
    CString::new(bytes).unwrap_or_default()
}

impl Process {
    /// execve(path, argv, envp). Returns only on failure.
    pub(super) fn execve(&mut self, path: u64, argv: u64, envp: u64) -> Result<u64, Errno> {
        let guest_path = self.mem.lock().read_cstr(path, PATH_MAX)?;
        let host_path = if self.is_proc_exe(&guest_path) { self.exe.clone() } else { self.host_path(&guest_path)? };
        host!(libc::SYS_faccessat, super::fs::AT_FDCWD, host_path.as_ptr() as u64, libc::X_OK as u64)?;
        let host = PathBuf::from(OsString::from_vec(host_path.as_bytes().to_vec()));
        if std::fs::metadata(&host).is_ok_and(|m| m.is_dir()) {
            return Err(Errno(libc::EACCES));
        }
        // As the kernel: the file is opened before the arrays are read, so
        // a missing file is ENOENT even with a bad argv or envp.
        let argv = self.read_strings(argv)?;
        let envp = self.read_strings(envp)?;
        match kind_of(&host)? {
            Kind::X86_64 => {
                let argv0 = argv.first().cloned().unwrap_or_else(|| guest_path.clone());
                let rest = argv.into_iter().skip(1).collect();
                self.reenter(host_path.into_bytes(), argv0, rest, envp)
            }
            Kind::Script { interp, arg } => {
                let interp_host = self.host_path(&interp)?;
                let interp_path = PathBuf::from(OsString::from_vec(interp_host.as_bytes().to_vec()));
                if kind_of(&interp_path) != Ok(Kind::X86_64) {
                    return native_exec(&host_path, argv, envp);
                }
                let mut rest: Vec<Vec<u8>> = arg.into_iter().collect();
                rest.push(guest_path);
                rest.extend(argv.into_iter().skip(1));
                self.reenter(interp_host.into_bytes(), interp, rest, envp)
            }
            Kind::Other => native_exec(&host_path, argv, envp),
        }
    }

    /// The host path for a guest path: the file it names in the guest
    /// root (links followed) when it is absolute and resolves there.
    fn host_path(&self, guest: &[u8]) -> Result<CString, Errno> {
        Ok(self.in_root(guest, LastLink::Follow)?.unwrap_or_else(|| cstring(guest.to_vec())))
    }

    /// A NULL-terminated guest array of string pointers.
    fn read_strings(&self, array: u64) -> Result<Vec<Vec<u8>>, Errno> {
        let mut out = Vec::new();
        if array == 0 {
            return Ok(out);
        }
        for i in 0..MAX_STRINGS as u64 {
            let mut word = [0u8; 8];
            self.mem.lock().read_bytes(array + 8 * i, &mut word)?;
            let ptr = u64::from_le_bytes(word);
            if ptr == 0 {
                return Ok(out);
            }
            out.push(self.mem.lock().read_cstr(ptr, 1 << 20)?);
        }
        Err(Errno(libc::E2BIG))
    }

    /// Executes aarchx again on the x86-64 program at host path `program`.
    fn reenter(&self, program: Vec<u8>, argv0: Vec<u8>, rest: Vec<Vec<u8>>, envp: Vec<Vec<u8>>) -> Result<u64, Errno> {
        let relaunch = relaunch();
        let mut args: Vec<Vec<u8>> = vec![relaunch.exe.as_os_str().as_bytes().to_vec()];
        if let Some(policy) = &relaunch.policy {
            args.push(b"--policy".to_vec());
            args.push(policy.as_os_str().as_bytes().to_vec());
        }
        for set in &relaunch.sets {
            args.push(b"--set".to_vec());
            args.push(set.as_bytes().to_vec());
        }
        args.push(b"--rootfs".to_vec());
        args.push(self.root.dir().as_os_str().as_bytes().to_vec());
        args.push(b"--argv0".to_vec());
        args.push(argv0);
        args.push(b"--".to_vec());
        args.push(program);
        args.extend(rest);
        let exe = cstring(relaunch.exe.as_os_str().as_bytes().to_vec());
        let direct = native_exec(&exe, args.clone(), envp.clone());
        if direct != Err(Errno(libc::ENOEXEC)) {
            return direct;
        }
        let qemu = qemu().ok_or(Errno(libc::ENOEXEC))?;
        let mut via_qemu = vec![qemu.as_os_str().as_bytes().to_vec()];
        via_qemu.extend(args);
        native_exec(&cstring(qemu.into_os_string().into_vec()), via_qemu, envp)
    }
}

/// The qemu-aarch64 to run an aarch64 aarchx with on a host that cannot
/// execute it: `$AARCHX_QEMU` (a bare name is looked up in `PATH`), else
/// `qemu-aarch64` in `PATH`.
fn qemu() -> Option<PathBuf> {
    let name =
        std::env::var_os("AARCHX_QEMU").filter(|q| !q.is_empty()).map_or_else(|| "qemu-aarch64".into(), PathBuf::from);
    if name.components().count() > 1 {
        return Some(name);
    }
    // A bare name is looked up in PATH, as a shell would (execve does not).
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(&name)).find(|p| p.is_file())
}

/// The host execve. Returns only on failure.
fn native_exec(path: &CString, argv: Vec<Vec<u8>>, envp: Vec<Vec<u8>>) -> Result<u64, Errno> {
    let argv: Vec<CString> = argv.into_iter().map(cstring).collect();
    let envp: Vec<CString> = envp.into_iter().map(cstring).collect();
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|s| s.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut envp_ptrs: Vec<*const libc::c_char> = envp.iter().map(|s| s.as_ptr()).collect();
    envp_ptrs.push(std::ptr::null());
    host!(libc::SYS_execve, path.as_ptr() as u64, argv_ptrs.as_ptr() as u64, envp_ptrs.as_ptr() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_elf_and_scripts() {
        let mut elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0".to_vec();
        elf.extend_from_slice(&EM_X86_64.to_le_bytes());
        assert_eq!(classify(&elf), Kind::X86_64);
        elf[18] = 183;
        assert_eq!(classify(&elf), Kind::Other, "aarch64 ELF");
        assert_eq!(classify(b"#!/bin/sh\necho"), Kind::Script { interp: b"/bin/sh".to_vec(), arg: None });
        assert_eq!(
            classify(b"#! /usr/bin/env  python3 -u \n"),
            Kind::Script { interp: b"/usr/bin/env".to_vec(), arg: Some(b"python3 -u".to_vec()) }
        );
        assert_eq!(classify(b"#!\n"), Kind::Other);
        assert_eq!(classify(b"plain text"), Kind::Other);
    }
}
