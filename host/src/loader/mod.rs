//! The program loader: maps a static x86-64 Linux executable (ET_EXEC, or
//! static-pie ET_DYN without PT_INTERP) into guest memory at its addresses
//! (identity-mapped), builds its initial stack, and hands back what running
//! it needs: entry point, initial rsp and the guest memory map.
//!
//! Segments are copied into one anonymous mapping of the image's span rather
//! than mapped from the file, so any host page size works; pages between
//! segments stay guest-owned with no access. PT_GNU_STACK and PT_TLS need
//! nothing here (the stack is never executable; the C runtime sets up TLS).

pub mod elf;
pub mod stack;

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use aarchx_ir::GuestState;

use crate::mem::{Errno, GuestMemory, GUEST_PAGE};
use elf::{ElfError, ElfKind};
use stack::StackContents;

/// The guest stack's size.
pub const STACK_SIZE: u64 = 8 << 20;

/// Why a program could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: no such file or directory", .0.display())]
    NotFound(PathBuf),
    #[error("{}: cannot read: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{}: not a runnable x86-64 ELF: {reason}", path.display())]
    NotRunnable { path: PathBuf, reason: ElfError },
    #[error("{}: cannot map {what}: {errno}", path.display())]
    Map { path: PathBuf, what: &'static str, errno: Errno },
    #[error("{}: argument list too long", .0.display())]
    ArgumentsTooLong(PathBuf),
}

impl LoadError {
    /// The exit status a shell gives this failure: 127 when the program
    /// does not exist, 126 when it cannot be run.
    pub fn exit_status(&self) -> u8 {
        match self {
            LoadError::NotFound(_) => 127,
            _ => 126,
        }
    }
}

/// A program in memory, ready to run.
#[derive(Debug)]
pub struct LoadedProgram {
    pub entry: u64,
    /// The initial rsp: it points at argc.
    pub stack_pointer: u64,
    /// The executable's absolute path (what /proc/self/exe names).
    pub exe: PathBuf,
    /// The guest memory map: image, brk heap (empty, starting at the
    /// page-aligned end of the highest segment) and stack.
    pub memory: GuestMemory,
}

impl LoadedProgram {
    /// The registers at the program's first instruction, as the kernel
    /// leaves them: rip at the entry, rsp at argc, everything else zero
    /// (rdx = 0: no exit handler from a dynamic linker).
    pub fn initial_state(&self) -> GuestState {
        let mut state = GuestState { rip: self.entry, ..GuestState::default() };
        state.gpr[4] = self.stack_pointer;
        state
    }
}

/// Loads the static x86-64 executable at `path`, with its argument vector
/// (`argv[0]` included) and environment (`NAME=value` strings).
pub fn load(path: &Path, argv: &[OsString], envp: &[OsString]) -> Result<LoadedProgram, LoadError> {
    let data = std::fs::read(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => LoadError::NotFound(path.to_path_buf()),
        _ => LoadError::Read { path: path.to_path_buf(), source },
    })?;
    let not_runnable = |reason| LoadError::NotRunnable { path: path.to_path_buf(), reason };
    let map_err = |what| move |errno| LoadError::Map { path: path.to_path_buf(), what, errno };
    let elf = elf::parse(&data).map_err(not_runnable)?;

    let lo = elf.segments.iter().map(|s| s.vaddr).min().unwrap_or(0) & !(GUEST_PAGE - 1);
    let hi = elf.segments.iter().map(|s| s.vaddr + s.memsz).max().unwrap_or(0);
    let mut memory = GuestMemory::new();
    let (base, bias) = match elf.kind {
        ElfKind::Exec => (memory.map_image(Some(lo), hi - lo, GUEST_PAGE).map_err(map_err("the program image"))?, 0),
        ElfKind::Dyn => {
            let align = elf
                .segments
                .iter()
                .map(|s| s.align)
                .filter(|a| a.is_power_of_two() && *a <= 1 << 30)
                .fold(GUEST_PAGE, u64::max);
            let lo = lo & !(align - 1);
            let base = memory.map_image(None, hi - lo, align).map_err(map_err("the program image"))?;
            (base, base - lo)
        }
    };
    for seg in &elf.segments {
        let bytes = &data[seg.offset as usize..][..seg.filesz as usize];
        memory.write_bytes(seg.vaddr + bias, bytes).map_err(map_err("a segment"))?;
    }
    // Final protections, page by page: a page shared by two segments gets
    // both their permissions; pages no segment covers, none.
    let image_end = (hi + bias).next_multiple_of(GUEST_PAGE);
    let mut prots = vec![0u32; ((image_end - base) / GUEST_PAGE) as usize];
    for seg in &elf.segments {
        let first = ((seg.vaddr + bias) & !(GUEST_PAGE - 1)) - base;
        let last = (seg.vaddr + bias + seg.memsz).next_multiple_of(GUEST_PAGE) - base;
        for p in &mut prots[(first / GUEST_PAGE) as usize..(last / GUEST_PAGE) as usize] {
            *p |= seg.prot;
        }
    }
    let mut page = 0;
    for run in prots.chunk_by(|a, b| a == b) {
        let start = base + page as u64 * GUEST_PAGE;
        memory.mprotect(start, run.len() as u64 * GUEST_PAGE, u64::from(run[0])).map_err(map_err("a segment"))?;
        page += run.len();
    }

    let top = memory.map_stack(STACK_SIZE).map_err(map_err("the stack"))?;
    let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
    let envp: Vec<&[u8]> = envp.iter().map(|e| e.as_bytes()).collect();
    let ids = crate::syscall::host_ids();
    let aux = [
        (stack::AT_PHDR, elf.phdr_vaddr + bias),
        (stack::AT_PHENT, 56),
        (stack::AT_PHNUM, u64::from(elf.phnum)),
        (stack::AT_PAGESZ, GUEST_PAGE),
        (stack::AT_BASE, 0),
        (stack::AT_FLAGS, 0),
        (stack::AT_ENTRY, elf.entry + bias),
        (stack::AT_UID, u64::from(ids.uid)),
        (stack::AT_EUID, u64::from(ids.euid)),
        (stack::AT_GID, u64::from(ids.gid)),
        (stack::AT_EGID, u64::from(ids.egid)),
        (stack::AT_SECURE, 0),
        (stack::AT_HWCAP, u64::from(crate::cpuid::LEAF1_EDX)),
        (stack::AT_HWCAP2, 0),
        (stack::AT_CLKTCK, 100),
    ];
    let contents = StackContents {
        argv: &argv,
        envp: &envp,
        execfn: path.as_os_str().as_bytes(),
        random: crate::syscall::random_bytes(),
        aux: &aux,
    };
    let image = stack::build(top, &contents);
    if image.bytes.len() as u64 > STACK_SIZE / 4 {
        return Err(LoadError::ArgumentsTooLong(path.to_path_buf()));
    }
    memory.write_bytes(image.rsp, &image.bytes).map_err(map_err("the stack"))?;

    let exe = std::fs::canonicalize(path)
        .or_else(|_| std::env::current_dir().map(|d| d.join(path)))
        .unwrap_or_else(|_| path.to_path_buf());
    tracing::debug!(
        path = %exe.display(),
        kind = ?elf.kind,
        base = format_args!("{base:#x}"),
        entry = format_args!("{:#x}", elf.entry + bias),
        rsp = format_args!("{:#x}", image.rsp),
        "loaded"
    );
    Ok(LoadedProgram { entry: elf.entry + bias, stack_pointer: image.rsp, exe, memory })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aarchx_pass::GuestCode;
    use std::io::Write;

    fn write_temp(name: &str, data: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!("aarchx-loader-{}-{name}", std::process::id()));
        std::fs::File::create(&path).unwrap().write_all(data).unwrap();
        path
    }

    #[test]
    fn missing_and_unrunnable_files() {
        let err = load(Path::new("/nonexistent/aarchx-test"), &[], &[]).unwrap_err();
        assert_eq!(err.exit_status(), 127);
        assert_eq!(err.to_string(), "/nonexistent/aarchx-test: no such file or directory");
        let path = write_temp("script", b"#!/bin/sh\n");
        let err = load(&path, &[], &[]).unwrap_err();
        assert_eq!(err.exit_status(), 126);
        assert!(err.to_string().ends_with(": not a runnable x86-64 ELF: not an ELF file (bad magic)"), "{err}");
        std::fs::remove_file(path).unwrap();
        assert_eq!(load(Path::new("/"), &[], &[]).unwrap_err().exit_status(), 126);
    }

    #[test]
    fn loads_a_static_pie() {
        let code = [0x48, 0x31, 0xc0, 0xc3];
        let path = write_temp("pie", &elf::testimage::static_exec(3, 0x400000, &code));
        let argv = [OsString::from("prog"), OsString::from("arg")];
        let prog = load(&path, &argv, &[OsString::from("X=1")]).unwrap();
        std::fs::remove_file(&path).unwrap();
        let bias = prog.entry - 0x401000;
        assert_eq!(bias % GUEST_PAGE, 0);
        let mut buf = [0u8; 8];
        assert_eq!(prog.memory.read(prog.entry, &mut buf), 8);
        assert_eq!(buf[..4], code);
        assert_eq!(prog.memory.read(prog.entry + 0xffc, &mut buf), 4, "code readable up to its last page's end");
        assert_eq!(prog.memory.read(bias + 0x400000, &mut buf), 0, "headers are not executable");
        let mut data = [0u8; 0x20];
        prog.memory.read_bytes(bias + 0x402010, &mut data).unwrap();
        assert_eq!(data[..0x10], [0xab; 0x10]);
        assert_eq!(data[0x10..], [0; 0x10], "bss is zero");
        let mut memory = prog.memory;
        memory.write_bytes(bias + 0x403000, b"bss").unwrap();
        assert_eq!(memory.write_bytes(prog.entry, b"x"), Err(Errno::EFAULT), "code is read-only");
        let brk = memory.brk_start();
        assert!(brk % GUEST_PAGE == 0 && (bias + 0x404010..bias + 0x404010 + (64 << 10)).contains(&brk));
        let mut word = [0u8; 8];
        memory.read_bytes(prog.stack_pointer, &mut word).unwrap();
        assert_eq!(u64::from_le_bytes(word), 2, "argc");
        assert_eq!(prog.stack_pointer % 16, 0);
        assert!(prog.exe.is_absolute());
    }

    #[test]
    fn loads_a_static_executable_at_its_address() {
        // An address nothing else in the test process uses.
        let base = 0x2345_0000_0000;
        let path = write_temp("exec", &elf::testimage::static_exec(2, base, &[0xc3]));
        let prog = load(&path, &[OsString::from("prog")], &[]).unwrap();
        assert_eq!(prog.entry, base + 0x1000);
        let state = prog.initial_state();
        assert_eq!((state.rip, state.gpr[4]), (prog.entry, prog.stack_pointer));
        let mut byte = [0u8];
        assert_eq!(prog.memory.read(base + 0x1000, &mut byte), 1);
        assert_eq!(byte, [0xc3]);
        let again = load(&path, &[], &[]).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(again.exit_status(), 126);
        assert!(again.to_string().contains("cannot map the program image"), "{again}");
    }
}
