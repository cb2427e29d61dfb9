//! The ELF reader: checks that a file is an x86-64 Linux executable (or
//! the dynamic loader it names) and extracts what loading it needs (entry
//! point, program headers, load segments, the PT_INTERP path). Parsed by hand from the ELF64 layout, with every offset and
//! size bounds-checked; nothing here touches memory.

use crate::mem::{PROT_EXEC, PROT_READ, PROT_WRITE};

const EHDR_SIZE: usize = 64;
const PHDR_SIZE: usize = 56;

const ELFCLASS32: u8 = 1;
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const ELFDATA2MSB: u8 = 2;

const ET_REL: u16 = 1;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const ET_CORE: u16 = 4;

const EM_386: u16 = 3;
const EM_X86_64: u16 = 62;

const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_PHDR: u32 = 6;

const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

/// Why a file is not a runnable x86-64 ELF executable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    #[error("file too short for an ELF header")]
    TooShort,
    #[error("not an ELF file (bad magic)")]
    BadMagic,
    #[error("32-bit x86 guests are unsupported")]
    Elf32X86,
    #[error("built for {0}")]
    WrongMachine(String),
    #[error("unknown ELF class {0}")]
    BadClass(u8),
    #[error("{0}, not an executable")]
    NotExecutable(&'static str),
    #[error("PT_INTERP lies outside the file")]
    InterpOutsideFile,
    #[error("PT_INTERP is not a NUL-terminated path")]
    BadInterp,
    #[error("truncated: program headers lie outside the file")]
    PhdrsOutsideFile,
    #[error("program header entry size {0}, expected 56")]
    BadPhentsize(u16),
    #[error("segment {0} lies outside the file")]
    SegmentOutsideFile(usize),
    #[error("segment {0} is larger in the file than in memory")]
    SegmentFileszTooBig(usize),
    #[error("segment {0} does not fit in the address space")]
    SegmentOverflow(usize),
    #[error("no loadable segments")]
    NoLoadSegments,
    #[error("no entry point (a shared library?)")]
    NoEntry,
}

/// The name of an ELF machine, for "built for X".
fn machine_name(machine: u16) -> String {
    let name = match machine {
        2 => "sparc",
        3 => "i386",
        8 => "mips",
        20 => "ppc",
        21 => "ppc64",
        22 => "s390",
        40 => "arm",
        43 => "sparc64",
        50 => "ia64",
        62 => "x86-64",
        183 => "aarch64",
        243 => "riscv",
        247 => "bpf",
        258 => "loongarch",
        _ => return format!("machine type {machine}"),
    };
    name.to_string()
}

/// Whether the executable is loaded where it says (ET_EXEC) or anywhere
/// (ET_DYN: PIE, static-pie or a dynamic loader).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfKind {
    Exec,
    Dyn,
}

/// A PT_LOAD segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    pub offset: u64,
    pub filesz: u64,
    /// Guest protection (`mem::PROT_*`).
    pub prot: u32,
    pub align: u64,
}

/// What loading needs from an executable's headers. Addresses are as in the
/// file (before an ET_DYN's load bias).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elf {
    pub kind: ElfKind,
    pub entry: u64,
    pub phnum: u16,
    /// The program headers' address in memory, for AT_PHDR.
    pub phdr_vaddr: u64,
    pub segments: Vec<Segment>,
    /// The dynamic loader PT_INTERP names (without its NUL), if any.
    pub interp: Option<Vec<u8>>,
}

fn u16_at(d: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([d[off], d[off + 1]])
}

fn u32_at(d: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(d[off..off + 4].try_into().expect("4 bytes"))
}

fn u64_at(d: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(d[off..off + 8].try_into().expect("8 bytes"))
}

/// Parses and checks the headers of an executable image.
pub fn parse(data: &[u8]) -> Result<Elf, ElfError> {
    if data.len() < 4 {
        return Err(ElfError::TooShort);
    }
    if &data[..4] != b"\x7fELF" {
        return Err(ElfError::BadMagic);
    }
    if data.len() < 20 {
        return Err(ElfError::TooShort);
    }
    let machine = match data[5] {
        ELFDATA2MSB => u16::from_be_bytes([data[18], data[19]]),
        _ => u16_at(data, 18),
    };
    match data[4] {
        ELFCLASS32 if machine == EM_386 => return Err(ElfError::Elf32X86),
        ELFCLASS32 => return Err(ElfError::WrongMachine(format!("{} (32-bit)", machine_name(machine)))),
        ELFCLASS64 => {}
        class => return Err(ElfError::BadClass(class)),
    }
    if data[5] != ELFDATA2LSB {
        return Err(ElfError::WrongMachine(format!("{} (big-endian)", machine_name(machine))));
    }
    if machine != EM_X86_64 {
        return Err(ElfError::WrongMachine(machine_name(machine)));
    }
    if data.len() < EHDR_SIZE {
        return Err(ElfError::TooShort);
    }
    let kind = match u16_at(data, 16) {
        ET_EXEC => ElfKind::Exec,
        ET_DYN => ElfKind::Dyn,
        ET_REL => return Err(ElfError::NotExecutable("a relocatable object file")),
        ET_CORE => return Err(ElfError::NotExecutable("a core dump")),
        _ => return Err(ElfError::NotExecutable("an unknown ELF file type")),
    };
    let entry = u64_at(data, 24);
    let phoff = u64_at(data, 32);
    let phentsize = u16_at(data, 54);
    let phnum = u16_at(data, 56);
    if phentsize as usize != PHDR_SIZE {
        return Err(ElfError::BadPhentsize(phentsize));
    }
    let table_end = phoff.checked_add(u64::from(phnum) * PHDR_SIZE as u64);
    if table_end.is_none_or(|end| end > data.len() as u64) {
        return Err(ElfError::PhdrsOutsideFile);
    }
    let mut segments = Vec::new();
    let mut phdr_vaddr = None;
    let mut interp = None;
    for i in 0..usize::from(phnum) {
        let ph = &data[phoff as usize + i * PHDR_SIZE..][..PHDR_SIZE];
        let (p_type, flags) = (u32_at(ph, 0), u32_at(ph, 4));
        let (offset, vaddr, filesz, memsz, align) =
            (u64_at(ph, 8), u64_at(ph, 16), u64_at(ph, 32), u64_at(ph, 40), u64_at(ph, 48));
        match p_type {
            PT_INTERP => interp = Some(interp_path(data, offset, filesz)?),
            PT_PHDR => phdr_vaddr = Some(vaddr),
            PT_LOAD => {
                if offset.checked_add(filesz).is_none_or(|end| end > data.len() as u64) {
                    return Err(ElfError::SegmentOutsideFile(i));
                }
                if filesz > memsz {
                    return Err(ElfError::SegmentFileszTooBig(i));
                }
                if vaddr.checked_add(memsz).is_none_or(|end| end > 1 << 47) {
                    return Err(ElfError::SegmentOverflow(i));
                }
                let prot = [(PF_R, PROT_READ), (PF_W, PROT_WRITE), (PF_X, PROT_EXEC)]
                    .iter()
                    .filter(|(pf, _)| flags & pf != 0)
                    .fold(0, |acc, (_, prot)| acc | prot);
                segments.push(Segment { vaddr, memsz, offset, filesz, prot, align });
            }
            _ => {}
        }
    }
    if segments.is_empty() {
        return Err(ElfError::NoLoadSegments);
    }
    if entry == 0 {
        return Err(ElfError::NoEntry);
    }
    // Without PT_PHDR, the headers are wherever the segment holding them
    // loads them, as the kernel computes it.
    let phdr_vaddr = phdr_vaddr.unwrap_or_else(|| {
        segments
            .iter()
            .find(|s| s.offset <= phoff && phoff < s.offset + s.filesz)
            .map_or(segments[0].vaddr.wrapping_sub(segments[0].offset).wrapping_add(phoff), |s| {
                s.vaddr + (phoff - s.offset)
            })
    });
    Ok(Elf { kind, entry, phnum, phdr_vaddr, segments, interp })
}

/// The PT_INTERP segment's path: bytes up to a NUL that ends the segment.
fn interp_path(data: &[u8], offset: u64, filesz: u64) -> Result<Vec<u8>, ElfError> {
    let end = offset.checked_add(filesz).filter(|end| *end <= data.len() as u64).ok_or(ElfError::InterpOutsideFile)?;
    let bytes = &data[offset as usize..end as usize];
    match bytes.iter().position(|b| *b == 0) {
        Some(nul) if nul > 0 => Ok(bytes[..nul].to_vec()),
        _ => Err(ElfError::BadInterp),
    }
}

/// Builders of ELF images for tests.
#[cfg(test)]
pub mod testimage {
    /// A header with `phnum` program headers right after it.
    pub fn header(class: u8, machine: u16, e_type: u16, phnum: u16) -> Vec<u8> {
        let mut d = vec![0u8; 64];
        d[..4].copy_from_slice(b"\x7fELF");
        d[4] = class;
        d[5] = 1;
        d[6] = 1;
        d[16..18].copy_from_slice(&e_type.to_le_bytes());
        d[18..20].copy_from_slice(&machine.to_le_bytes());
        d[24..32].copy_from_slice(&0x401000u64.to_le_bytes());
        d[32..40].copy_from_slice(&64u64.to_le_bytes());
        d[52..54].copy_from_slice(&64u16.to_le_bytes());
        d[54..56].copy_from_slice(&56u16.to_le_bytes());
        d[56..58].copy_from_slice(&phnum.to_le_bytes());
        d
    }

    /// Appends a program header.
    pub fn phdr(d: &mut Vec<u8>, p_type: u32, flags: u32, offset: u64, vaddr: u64, filesz: u64, memsz: u64) {
        let mut ph = vec![0u8; 56];
        ph[0..4].copy_from_slice(&p_type.to_le_bytes());
        ph[4..8].copy_from_slice(&flags.to_le_bytes());
        ph[8..16].copy_from_slice(&offset.to_le_bytes());
        ph[16..24].copy_from_slice(&vaddr.to_le_bytes());
        ph[24..32].copy_from_slice(&vaddr.to_le_bytes());
        ph[32..40].copy_from_slice(&filesz.to_le_bytes());
        ph[40..48].copy_from_slice(&memsz.to_le_bytes());
        ph[48..56].copy_from_slice(&0x1000u64.to_le_bytes());
        d.extend_from_slice(&ph);
    }

    /// A minimal valid static executable at `base`: a read-only first page
    /// holding the headers, one page of code (`code`, at `base + 0x1000`,
    /// the entry) and a data segment with bss at `base + 0x2010`.
    pub fn static_exec(e_type: u16, base: u64, code: &[u8]) -> Vec<u8> {
        let mut d = header(2, 62, e_type, 3);
        d[24..32].copy_from_slice(&(base + 0x1000).to_le_bytes());
        phdr(&mut d, 1, 4, 0, base, 0x1000, 0x1000);
        phdr(&mut d, 1, 5, 0x1000, base + 0x1000, code.len() as u64, code.len() as u64);
        phdr(&mut d, 1, 6, 0x2000, base + 0x2010, 0x10, 0x2000);
        d.resize(0x1000, 0);
        d.extend_from_slice(code);
        d.resize(0x2000, 0);
        d.extend_from_slice(&[0xab; 0x10]);
        d
    }

    /// `static_exec` as a PIE at 0 whose PT_INTERP names `interp`.
    pub fn dynamic_exec(interp: &[u8]) -> Vec<u8> {
        let mut d = static_exec(3, 0, &[0xc3]);
        d[56..58].copy_from_slice(&4u16.to_le_bytes());
        let mut ph = Vec::new();
        let len = interp.len() as u64 + 1;
        phdr(&mut ph, super::PT_INTERP, 4, 0x300, 0x300, len, len);
        d[64 + 3 * 56..64 + 4 * 56].copy_from_slice(&ph);
        d[0x300..0x300 + interp.len()].copy_from_slice(interp);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::testimage::*;
    use super::*;

    #[test]
    fn parses_a_static_executable() {
        let elf = parse(&static_exec(2, 0x400000, &[0xc3])).unwrap();
        assert_eq!(elf.kind, ElfKind::Exec);
        assert_eq!(elf.entry, 0x401000);
        assert_eq!(elf.phnum, 3);
        assert_eq!(elf.phdr_vaddr, 0x400040);
        assert_eq!(elf.segments.len(), 3);
        assert_eq!(elf.segments[1].prot, PROT_READ | PROT_EXEC);
        assert_eq!(elf.segments[2].prot, PROT_READ | PROT_WRITE);
        assert_eq!(parse(&static_exec(3, 0x400000, &[0xc3])).unwrap().kind, ElfKind::Dyn);
    }

    #[test]
    fn rejects_what_cannot_run() {
        let ok = static_exec(2, 0x400000, &[0xc3]);
        assert_eq!(parse(&ok[..3]), Err(ElfError::TooShort));
        assert_eq!(parse(&ok[..40]), Err(ElfError::TooShort));
        assert_eq!(parse(b"#!/bin/sh\necho hi\n"), Err(ElfError::BadMagic));
        assert_eq!(parse(&header(1, EM_386, 2, 0)), Err(ElfError::Elf32X86));
        assert_eq!(parse(&header(1, 40, 2, 0)).unwrap_err().to_string(), "built for arm (32-bit)");
        let arm = parse(&header(2, 183, 2, 0)).unwrap_err();
        assert_eq!(arm, ElfError::WrongMachine("aarch64".into()));
        assert_eq!(arm.to_string(), "built for aarch64");
        assert_eq!(
            parse(&header(2, 62, ET_REL, 0)).unwrap_err().to_string(),
            "a relocatable object file, not an executable"
        );
        assert_eq!(parse(&header(2, 62, ET_CORE, 0)), Err(ElfError::NotExecutable("a core dump")));
        let mut truncated = ok.clone();
        truncated.truncate(0x2008);
        assert_eq!(parse(&truncated), Err(ElfError::SegmentOutsideFile(2)));
        assert_eq!(parse(&header(2, 62, 2, 3)), Err(ElfError::PhdrsOutsideFile));
        assert_eq!(parse(&header(2, 62, 2, 0)), Err(ElfError::NoLoadSegments));
    }

    #[test]
    fn reads_the_interpreter_path() {
        let loader = b"/lib64/ld-linux-x86-64.so.2\0";
        let mut d = header(2, 62, ET_DYN, 2);
        phdr(&mut d, PT_INTERP, 4, 0xb0, 0xb0, loader.len() as u64, loader.len() as u64);
        phdr(&mut d, PT_LOAD, 5, 0, 0, 0x100, 0x100);
        d.extend_from_slice(loader);
        d.resize(0x100, 0);
        assert_eq!(parse(&d).unwrap().interp.as_deref(), Some(&loader[..loader.len() - 1]));
        d[0xb0] = 0;
        assert_eq!(parse(&d), Err(ElfError::BadInterp), "empty path");
        let mut d = header(2, 62, ET_DYN, 2);
        phdr(&mut d, PT_INTERP, 4, 0xb0, 0xb0, 0x1000, 0x1000);
        phdr(&mut d, PT_LOAD, 5, 0, 0, 0x100, 0x100);
        d.resize(0x100, 0);
        assert_eq!(parse(&d), Err(ElfError::InterpOutsideFile));
        assert_eq!(parse(&static_exec(2, 0x400000, &[0xc3])).unwrap().interp, None);
    }

    #[test]
    fn rejects_bad_segments() {
        let mut d = header(2, 62, ET_EXEC, 1);
        phdr(&mut d, PT_LOAD, 4, 0, 0x400000, 0x200, 0x100);
        d.resize(0x200, 0);
        assert_eq!(parse(&d), Err(ElfError::SegmentFileszTooBig(0)));
        let mut d = header(2, 62, ET_EXEC, 1);
        phdr(&mut d, PT_LOAD, 4, 0, u64::MAX - 10, 0x10, 0x100);
        d.resize(0x200, 0);
        assert_eq!(parse(&d), Err(ElfError::SegmentOverflow(0)));
        let mut d = header(2, 62, ET_EXEC, 1);
        d[54] = 32;
        assert_eq!(parse(&d), Err(ElfError::BadPhentsize(32)));
    }
}
