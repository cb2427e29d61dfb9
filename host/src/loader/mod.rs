//! The program loader: maps an x86-64 Linux executable (ET_EXEC, or an
//! ET_DYN: PIE or static-pie) into guest memory (identity-mapped), and for
//! a dynamic executable also the dynamic loader its PT_INTERP names, looked
//! up in the guest root; builds the initial stack, and hands back what
//! running it needs: entry point (the loader's, for a dynamic executable,
//! which then does the linking itself), initial rsp and the memory map.
//!
//! Segments are copied into one anonymous mapping of the image's span rather
//! than mapped from the file, so any host page size works; pages between
//! segments stay guest-owned with no access. PT_GNU_STACK and PT_TLS need
//! nothing here (the stack is never executable; the C runtime sets up TLS).

pub mod elf;
pub mod rootfs;
pub mod stack;

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use aarchx_ir::GuestState;

use crate::mem::{Errno, GuestMemory, GUEST_PAGE};
use crate::objects::Position;
use elf::{Elf, ElfError, ElfKind};
use rootfs::{LastLink, Rootfs};
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
    #[error("{}: is {what}, not a program", path.display())]
    NotAFile { path: PathBuf, what: &'static str },
    #[error("{}: not a runnable x86-64 ELF: {reason}", path.display())]
    NotRunnable { path: PathBuf, reason: ElfError },
    #[error(
        "{}: dynamic loader {} not found at {} (set the x86-64 guest root with --rootfs DIR)",
        program.display(),
        interp.display(),
        looked_for.display()
    )]
    NoInterpreter { program: PathBuf, interp: PathBuf, looked_for: PathBuf },
    #[error("{}: the dynamic loader {} is itself dynamic", program.display(), interp.display())]
    NestedInterpreter { program: PathBuf, interp: PathBuf },
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
    /// Where the guest starts: the program's entry, or its dynamic loader's.
    pub entry: u64,
    /// The initial rsp: it points at argc.
    pub stack_pointer: u64,
    /// The executable's absolute path (what /proc/self/exe names).
    pub exe: PathBuf,
    /// The guest memory map: image, brk heap (empty, starting at the
    /// page-aligned end of the program's highest segment), the dynamic
    /// loader's image if any, and stack.
    pub memory: GuestMemory,
    /// The auxiliary vector given to the guest (AT_NULL included), for
    /// /proc/self/auxv.
    pub auxv: Vec<(u64, u64)>,
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

/// A file's bytes as read, and its metadata when it did not change while
/// it was read (the same before and after: what the persistent cache may
/// name those bytes by).
struct FileBytes {
    data: Vec<u8>,
    meta: Option<std::fs::Metadata>,
}

/// Reads the file at `path`, which must be a regular file (as for
/// execve: reading a device or a FIFO might never end).
fn read_file(path: &Path) -> Result<FileBytes, LoadError> {
    let error = |source: io::Error| match source.kind() {
        io::ErrorKind::NotFound => LoadError::NotFound(path.to_path_buf()),
        _ => LoadError::Read { path: path.to_path_buf(), source },
    };
    let kind = std::fs::metadata(path).map_err(error)?.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() { "a directory" } else { "a device, FIFO or socket" };
        return Err(LoadError::NotAFile { path: path.to_path_buf(), what });
    }
    let mut file = std::fs::File::open(path).map_err(error)?;
    let before = file.metadata().map_err(error)?;
    let mut data = Vec::with_capacity(before.len() as usize);
    io::Read::read_to_end(&mut file, &mut data).map_err(error)?;
    let meta = file.metadata().ok().filter(|after| crate::objects::same_file(&before, after));
    Ok(FileBytes { data, meta })
}

/// Where an image's pages go and with which protections, computed from
/// its headers alone (nothing is mapped).
#[derive(Debug, PartialEq, Eq)]
pub struct ImageLayout {
    /// The image's lowest address as its headers give it, aligned down to
    /// `align`.
    pub lo: u64,
    /// Its size from `lo`, up to the end of the highest segment's last page.
    pub len: u64,
    /// What an ET_DYN's load address is aligned to (a page for ET_EXEC).
    pub align: u64,
    /// The protection of the image's pages from `lo` on, run by run:
    /// (bytes, `mem::PROT_*`). A page shared by two segments gets both
    /// their permissions; a page no segment covers, none.
    pub runs: Vec<(u64, u32)>,
}

/// Lays out the load segments of `elf`. The work is proportional to the
/// number of segments, whatever their addresses span.
pub fn image_layout(elf: &Elf) -> ImageLayout {
    let align = match elf.kind {
        ElfKind::Exec => GUEST_PAGE,
        ElfKind::Dyn => elf
            .segments
            .iter()
            .map(|s| s.align)
            .filter(|a| a.is_power_of_two() && *a <= 1 << 30)
            .fold(GUEST_PAGE, u64::max),
    };
    let lo = elf.segments.iter().map(|s| s.vaddr).min().unwrap_or(0) & !(align - 1);
    // `elf::parse` keeps every segment below 2^47: no sum here overflows.
    let end = elf.segments.iter().map(|s| s.vaddr + s.memsz).max().unwrap_or(0).next_multiple_of(GUEST_PAGE);
    // Each segment adds its protection bits where its first page starts
    // and takes them away where its last page ends (after it started: a
    // segment covering no page has no edges); a count per bit says which
    // are on between two such edges.
    let mut edges: Vec<(u64, u32, bool)> = elf
        .segments
        .iter()
        .map(|s| (s.vaddr & !(GUEST_PAGE - 1), (s.vaddr + s.memsz).next_multiple_of(GUEST_PAGE), s.prot))
        .filter(|(first, last, _)| first < last)
        .flat_map(|(first, last, prot)| [(first, prot, true), (last, prot, false)])
        .collect();
    edges.sort_unstable();
    let mut counts = [0u32; 3];
    let mut runs: Vec<(u64, u32)> = Vec::new();
    let mut at = lo;
    for (i, &(addr, prot, starts)) in edges.iter().enumerate() {
        for (bit, count) in counts.iter_mut().enumerate() {
            if prot & (1 << bit) != 0 {
                *count = if starts { *count + 1 } else { *count - 1 };
            }
        }
        let next = edges.get(i + 1).map_or(end, |e| e.0);
        if next == addr {
            continue;
        }
        let prot = (0..3).filter(|&bit| counts[bit] > 0).fold(0, |acc, bit| acc | 1 << bit);
        if addr > at {
            push_run(&mut runs, addr - at, 0);
        }
        push_run(&mut runs, next - addr, prot);
        at = next;
    }
    if end > at {
        push_run(&mut runs, end - at, 0);
    }
    ImageLayout { lo, len: end - lo, align, runs }
}

/// Appends `len` bytes of protection `prot`, extending the last run when
/// it has the same.
fn push_run(runs: &mut Vec<(u64, u32)>, len: u64, prot: u32) {
    match runs.last_mut() {
        Some(last) if last.1 == prot => last.0 += len,
        _ => runs.push((len, prot)),
    }
}

/// Maps the load segments of `elf` (read from `data`, the file at `path`)
/// with their final protections: an ET_EXEC at its addresses, an ET_DYN
/// anywhere, aligned to its segments' alignment. `brk` places the brk heap
/// after it (the main program). Returns the load bias.
fn map_elf(memory: &mut GuestMemory, path: &Path, elf: &Elf, file: &FileBytes, brk: bool) -> Result<u64, LoadError> {
    let data = &file.data;
    let map_err = |what| move |errno| LoadError::Map { path: path.to_path_buf(), what, errno };
    let layout = image_layout(elf);
    let at = (elf.kind == ElfKind::Exec).then_some(layout.lo);
    let contents: Vec<(u64, &[u8])> = elf
        .segments
        .iter()
        .map(|seg| (seg.vaddr.wrapping_sub(layout.lo), &data[seg.offset as usize..][..seg.filesz as usize]))
        .collect();
    let base = memory.map_image(at, layout.len, layout.align, brk, &contents).map_err(map_err("the program image"))?;
    // Wrapping, as the kernel's sums are: header values are the file's.
    let bias = base.wrapping_sub(layout.lo);
    let mut start = base;
    for &(len, prot) in &layout.runs {
        memory.mprotect(start, len, u64::from(prot)).map_err(map_err("a segment"))?;
        start += len;
    }
    // The image is the file's (for the persistent cache): each run of
    // pages a function of its content, at a position in it (its virtual
    // address) that moves with the load bias; the pages the program cannot
    // write stay so. A file that cannot be named again is not cached.
    if let (Ok(name), Some(meta)) = (std::fs::canonicalize(path), &file.meta) {
        let mut start = base;
        for &(len, prot) in &layout.runs {
            let clean = prot != 0 && prot & crate::mem::PROT_WRITE == 0;
            let at = start.wrapping_sub(bias);
            memory.objects_mut().mapped(start, start + len, &name, meta, Position::Image(at), clean);
            start += len;
        }
    }
    tracing::debug!(path = %path.display(), kind = ?elf.kind, base = format_args!("{base:#x}"), "mapped");
    Ok(bias)
}

/// Maps the dynamic loader `interp` names, looked up in `root`, for the
/// program at `program`. Returns its load bias (AT_BASE) and entry.
fn map_interpreter(
    memory: &mut GuestMemory,
    program: &Path,
    interp: &[u8],
    root: &Rootfs,
) -> Result<(u64, u64), LoadError> {
    let interp = Path::new(OsStr::from_bytes(interp));
    let looked_for = root.named(interp);
    let not_found = || LoadError::NoInterpreter {
        program: program.to_path_buf(),
        interp: interp.to_path_buf(),
        looked_for: looked_for.clone(),
    };
    let path = root.resolve(interp.as_os_str().as_bytes(), LastLink::Follow).map_err(|source| {
        match source.raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR) => not_found(),
            _ => LoadError::Read { path: looked_for.clone(), source },
        }
    })?;
    let file = read_file(&path).map_err(|e| match e {
        LoadError::NotFound(_) => not_found(),
        e => e,
    })?;
    let elf = elf::parse(&file.data).map_err(|reason| LoadError::NotRunnable { path: path.clone(), reason })?;
    if elf.interp.is_some() {
        return Err(LoadError::NestedInterpreter { program: program.to_path_buf(), interp: path });
    }
    let bias = map_elf(memory, &path, &elf, &file, false)?;
    Ok((bias, elf.entry.wrapping_add(bias)))
}

/// Loads the x86-64 executable at `path`, with its argument vector
/// (`argv[0]` included) and environment (`NAME=value` strings); a dynamic
/// executable's loader comes from `root`.
pub fn load(path: &Path, argv: &[OsString], envp: &[OsString], root: &Rootfs) -> Result<LoadedProgram, LoadError> {
    let file = read_file(path)?;
    let elf = elf::parse(&file.data).map_err(|reason| LoadError::NotRunnable { path: path.to_path_buf(), reason })?;
    let mut memory = GuestMemory::new();
    let bias = map_elf(&mut memory, path, &elf, &file, true)?;
    let (interp_base, entry) = match &elf.interp {
        Some(interp) => map_interpreter(&mut memory, path, interp, root)?,
        None => (0, elf.entry.wrapping_add(bias)),
    };

    let map_err = |what| move |errno| LoadError::Map { path: path.to_path_buf(), what, errno };
    let top = memory.map_stack(STACK_SIZE).map_err(map_err("the stack"))?;
    let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
    let envp: Vec<&[u8]> = envp.iter().map(|e| e.as_bytes()).collect();
    let ids = crate::syscall::host_ids();
    let aux = [
        (stack::AT_PHDR, elf.phdr_vaddr.wrapping_add(bias)),
        (stack::AT_PHENT, 56),
        (stack::AT_PHNUM, u64::from(elf.phnum)),
        (stack::AT_PAGESZ, GUEST_PAGE),
        (stack::AT_BASE, interp_base),
        (stack::AT_FLAGS, 0),
        (stack::AT_ENTRY, elf.entry.wrapping_add(bias)),
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
        entry = format_args!("{entry:#x}"),
        at_base = format_args!("{interp_base:#x}"),
        rsp = format_args!("{:#x}", image.rsp),
        "loaded"
    );
    Ok(LoadedProgram { entry, stack_pointer: image.rsp, exe, memory, auxv: image.auxv })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aarchx_pass::GuestCode;
    use std::io::Write;

    fn host_root() -> Rootfs {
        Rootfs::new(Path::new("/")).unwrap()
    }

    fn write_temp(name: &str, data: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!("aarchx-loader-{}-{name}", std::process::id()));
        std::fs::File::create(&path).unwrap().write_all(data).unwrap();
        path
    }

    /// An executable of kind `kind` with the load segments `segs`:
    /// (vaddr, memsz, prot, align).
    fn image(kind: ElfKind, segs: &[(u64, u64, u32, u64)]) -> Elf {
        let segments = segs
            .iter()
            .map(|&(vaddr, memsz, prot, align)| elf::Segment { vaddr, memsz, offset: 0, filesz: 0, prot, align })
            .collect();
        Elf { kind, entry: 0x401000, phnum: 1, phdr_vaddr: 0, segments, interp: None }
    }

    #[test]
    fn lays_out_pages_and_protections() {
        use crate::mem::{PROT_EXEC as X, PROT_READ as R, PROT_WRITE as W};
        let elf = elf::parse(&elf::testimage::static_exec(2, 0x400000, &[0xc3])).unwrap();
        let layout = image_layout(&elf);
        assert_eq!((layout.lo, layout.len, layout.align), (0x400000, 0x5000, GUEST_PAGE));
        assert_eq!(layout.runs, [(0x1000, R), (0x1000, R | X), (0x3000, R | W)], "bss to its last page");
        let shared = image(ElfKind::Exec, &[(0x400000, 0x800, R | X, 0x1000), (0x400800, 0x1000, R | W, 0x1000)]);
        assert_eq!(image_layout(&shared).runs, [(0x1000, R | W | X), (0x1000, R | W)], "a shared page gets both");
        let gap = image(ElfKind::Exec, &[(0x403000, 0x10, R, 0x1000), (0x400000, 0x1000, R, 0x1000)]);
        assert_eq!(image_layout(&gap).runs, [(0x1000, R), (0x2000, 0), (0x1000, R)], "no access between");
        let empty = image(ElfKind::Exec, &[(0x400000, 0x1000, R, 0x1000), (0x402000, 0, R | W, 0x1000)]);
        assert_eq!(image_layout(&empty).runs, [(0x1000, R), (0x1000, 0)], "a segment of no page adds none");
        let aligned = image(ElfKind::Dyn, &[(0x201000, 0x1000, R | X, 0x200000)]);
        let layout = image_layout(&aligned);
        assert_eq!((layout.lo, layout.len, layout.align), (0x200000, 0x2000, 0x200000));
        assert_eq!(layout.runs, [(0x1000, 0), (0x1000, R | X)]);
    }

    #[test]
    fn lays_out_a_huge_span_in_few_runs() {
        use crate::mem::PROT_READ as R;
        // Once a vector of one entry per page: 2^35 of them.
        let top = (1 << 47) - 0x1000;
        let elf = image(ElfKind::Exec, &[(0x1000, 0x1000, R, 0x1000), (top, 0x1000, R, 0x1000)]);
        let layout = image_layout(&elf);
        assert_eq!((layout.lo, layout.len), (0x1000, top));
        assert_eq!(layout.runs, [(0x1000, R), (top - 0x2000, 0), (0x1000, R)]);
    }

    #[test]
    fn missing_and_unrunnable_files() {
        let err = load(Path::new("/nonexistent/aarchx-test"), &[], &[], &host_root()).unwrap_err();
        assert_eq!(err.exit_status(), 127);
        assert_eq!(err.to_string(), "/nonexistent/aarchx-test: no such file or directory");
        let path = write_temp("script", b"#!/bin/sh\n");
        let err = load(&path, &[], &[], &host_root()).unwrap_err();
        assert_eq!(err.exit_status(), 126);
        assert!(err.to_string().ends_with(": not a runnable x86-64 ELF: not an ELF file (bad magic)"), "{err}");
        std::fs::remove_file(path).unwrap();
        let dir = load(Path::new("/"), &[], &[], &host_root()).unwrap_err();
        assert_eq!((dir.exit_status(), dir.to_string().as_str()), (126, "/: is a directory, not a program"));
        let device = load(Path::new("/dev/zero"), &[], &[], &host_root()).unwrap_err();
        assert_eq!(device.to_string(), "/dev/zero: is a device, FIFO or socket, not a program", "never read");
    }

    #[test]
    fn loads_a_static_pie() {
        let code = [0x48, 0x31, 0xc0, 0xc3];
        let path = write_temp("pie", &elf::testimage::static_exec(3, 0x400000, &code));
        let argv = [OsString::from("prog"), OsString::from("arg")];
        let prog = load(&path, &argv, &[OsString::from("X=1")], &host_root()).unwrap();
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
        let memory = prog.memory;
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

    /// The auxiliary vector entry `key` of a loaded program's stack.
    fn aux(prog: &LoadedProgram, key: u64) -> Option<u64> {
        let word = |addr: u64| {
            let mut w = [0u8; 8];
            prog.memory.read_bytes(addr, &mut w).unwrap();
            u64::from_le_bytes(w)
        };
        let mut at = prog.stack_pointer + 8 * (word(prog.stack_pointer) + 2);
        while word(at) != 0 {
            at += 8;
        }
        at += 8;
        while word(at) != stack::AT_NULL {
            if word(at) == key {
                return Some(word(at + 8));
            }
            at += 16;
        }
        None
    }

    #[test]
    fn loads_the_dynamic_loader_from_the_root() {
        let root_dir = std::env::temp_dir().join(format!("aarchx-loader-{}-root", std::process::id()));
        std::fs::create_dir_all(root_dir.join("lib")).unwrap();
        std::fs::write(root_dir.join("lib/ld.so"), elf::testimage::static_exec(3, 0, &[0x90, 0xc3])).unwrap();
        let path = write_temp("dyn", &elf::testimage::dynamic_exec(b"/lib/ld.so"));
        let root = Rootfs::new(&root_dir).unwrap();
        let prog = load(&path, &[OsString::from("prog")], &[], &root).unwrap();
        let mut code = [0u8; 2];
        assert_eq!(prog.memory.read(prog.entry, &mut code), 2);
        assert_eq!(code, [0x90, 0xc3], "starts in the loader");
        assert_eq!(aux(&prog, stack::AT_BASE), Some(prog.entry - 0x1000), "AT_BASE: the loader's base");
        let entry = aux(&prog, stack::AT_ENTRY).unwrap();
        assert_ne!(entry, prog.entry);
        assert_eq!(prog.memory.read(entry, &mut code[..1]), 1);
        assert_eq!(code[0], 0xc3, "AT_ENTRY: the program's own entry");
        assert_eq!(aux(&prog, stack::AT_PHDR), Some(entry - 0x1000 + 0x40));
        assert_eq!(aux(&prog, stack::AT_PHNUM), Some(4));

        std::fs::remove_file(root_dir.join("lib/ld.so")).unwrap();
        let err = load(&path, &[], &[], &root).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        std::fs::remove_dir_all(&root_dir).unwrap();
        assert_eq!(err.exit_status(), 126);
        let msg = err.to_string();
        assert!(msg.contains("/lib/ld.so") && msg.contains(&format!("{}/lib/ld.so", root.dir().display())), "{msg}");
        assert!(msg.contains("--rootfs"), "{msg}");
    }

    #[test]
    fn loads_a_static_executable_at_its_address() {
        // An address nothing else in the test process uses.
        let base = 0x2345_0000_0000;
        let path = write_temp("exec", &elf::testimage::static_exec(2, base, &[0xc3]));
        let prog = load(&path, &[OsString::from("prog")], &[], &host_root()).unwrap();
        assert_eq!(prog.entry, base + 0x1000);
        let state = prog.initial_state();
        assert_eq!((state.rip, state.gpr[4]), (prog.entry, prog.stack_pointer));
        let mut byte = [0u8];
        assert_eq!(prog.memory.read(base + 0x1000, &mut byte), 1);
        assert_eq!(byte, [0xc3]);
        let again = load(&path, &[], &[], &host_root()).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(again.exit_status(), 126);
        assert!(again.to_string().contains("cannot map the program image"), "{again}");
    }
}
