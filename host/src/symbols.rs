//! The functions an ELF file names: its symbol tables (`.symtab` and
//! `.dynsym`) and, for glibc's IFUNC-selected routines, which variant the
//! dynamic loader chose. An IFUNC symbol (`strlen`) is its resolver's
//! address; the loader calls the resolver and writes the variant it
//! returns (`__strlen_sse2`, `__strlen_avx2`, ...) into each GOT slot an
//! `R_X86_64_IRELATIVE` relocation names with the resolver as addend, and
//! a shared library's local names of the variants are stripped. So once
//! the object is relocated, a slot whose addend is the IFUNC symbol's
//! resolver holds the address of the variant that the symbol's name stands
//! for. An IFUNC symbol libc never calls itself has no such slot
//! (`__memcpy_chk`); the GOT slot of a program that imports it holds the
//! variant once bound ([`ObjectSymbols::imports`], read by
//! `crate::objects`). The translator asks [`ObjectSymbols::function_at`]
//! where a region starts (the `leaf-inline` pass); `aarchx explain` reads
//! the symbols.

use std::path::Path;
use std::sync::OnceLock;

use object::elf::{PF_X, PT_LOAD, R_X86_64_64, R_X86_64_GLOB_DAT, R_X86_64_IRELATIVE, R_X86_64_JUMP_SLOT};
use object::read::elf::{ElfFile64, ProgramHeader};
use object::{Object, ObjectSymbol, ObjectSymbolTable, RelocationFlags, RelocationTarget, SymbolKind};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::objects::Identity;

/// A symbol with an address.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub addr: u64,
    pub size: u64,
    /// An IFUNC symbol: `addr` is its resolver.
    pub ifunc: bool,
    /// A function (`STT_FUNC`) visible outside its file (global or weak),
    /// what a C library routine is: a program's own `static` function
    /// of the same name may mean something else.
    pub exported_function: bool,
}

/// A loadable segment: its file offset, virtual address, sizes in the
/// file and in memory, and whether it is executable.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub exec: bool,
}

/// What an ELF file says about its functions.
#[derive(Debug, Default)]
pub struct ElfSymbols {
    /// Every symbol with an address but sections' (functions, IFUNC
    /// resolvers, objects, an assembly file's labels).
    pub symbols: Vec<Symbol>,
    pub segments: Vec<Segment>,
    /// `R_X86_64_IRELATIVE` relocations: the slot, the resolver and the
    /// slot's content in the file (what it holds until relocated).
    irelative: Vec<(u64, u64, u64)>,
    /// The slots of symbols the file imports (`R_X86_64_GLOB_DAT`,
    /// `R_X86_64_JUMP_SLOT`, and `R_X86_64_64` of a function's address
    /// in data): the slot and the name.
    imports: Vec<(u64, String)>,
}

impl ElfSymbols {
    /// Reads `data` as an x86-64 ELF file; `None` when it is not one.
    pub fn parse(data: &[u8]) -> Option<ElfSymbols> {
        let file = ElfFile64::<object::Endianness>::parse(data).ok()?;
        let symbols = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| !s.is_undefined() && s.address() != 0 && s.kind() != SymbolKind::Section)
            .filter_map(|s| {
                let ifunc = matches!(s.flags(), object::SymbolFlags::Elf { st_info, .. } if st_info & 0xf == object::elf::STT_GNU_IFUNC);
                let exported_function = s.kind() == SymbolKind::Text && !s.is_local() && !ifunc;
                Some(Symbol { name: s.name().ok()?.to_string(), addr: s.address(), size: s.size(), ifunc, exported_function })
            })
            .collect();
        let endian = file.endian();
        let segments: Vec<Segment> = file
            .elf_program_headers()
            .iter()
            .filter(|p| p.p_type(endian) == PT_LOAD)
            .map(|p| Segment {
                offset: p.p_offset(endian),
                vaddr: p.p_vaddr(endian),
                filesz: p.p_filesz(endian),
                memsz: p.p_memsz(endian),
                exec: p.p_flags(endian) & PF_X != 0,
            })
            .collect();
        let irelative = file
            .dynamic_relocations()
            .into_iter()
            .flatten()
            .filter(|(_, r)| matches!(r.flags(), RelocationFlags::Elf { r_type } if r_type == R_X86_64_IRELATIVE))
            .map(|(slot, r)| (slot, r.addend() as u64, initial_word(data, &segments, slot)))
            .collect();
        let imports = match file.dynamic_symbol_table() {
            Some(table) => file
                .dynamic_relocations()
                .into_iter()
                .flatten()
                .filter(|(_, r)| {
                    let word = matches!(r.flags(), RelocationFlags::Elf { r_type } if r_type == R_X86_64_64) && r.addend() == 0;
                    word || matches!(r.flags(), RelocationFlags::Elf { r_type } if r_type == R_X86_64_GLOB_DAT || r_type == R_X86_64_JUMP_SLOT)
                })
                .filter_map(|(slot, r)| {
                    let RelocationTarget::Symbol(index) = r.target() else { return None };
                    let s = table.symbol_by_index(index).ok()?;
                    s.is_undefined().then(|| Some((slot, s.name().ok()?.to_string()))).flatten()
                })
                .collect(),
            None => Vec::new(),
        };
        Some(ElfSymbols { symbols, segments, irelative, imports })
    }
}

/// The 8 bytes the file holds at virtual address `vaddr` (0 past a
/// segment's file content).
fn initial_word(data: &[u8], segments: &[Segment], vaddr: u64) -> u64 {
    segments
        .iter()
        .find(|s| vaddr >= s.vaddr && vaddr - s.vaddr + 8 <= s.filesz)
        .and_then(|s| data.get((s.offset + (vaddr - s.vaddr)) as usize..)?.get(..8))
        .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

/// A mapped object's function names, for looking up region starts.
#[derive(Debug, Default)]
pub struct ObjectSymbols {
    segments: Vec<Segment>,
    /// Functions by virtual address (not IFUNC resolvers): the first name
    /// found for each.
    functions: FxHashMap<u64, String>,
    /// For each IFUNC symbol with `R_X86_64_IRELATIVE` slots: a slot, the
    /// symbol's resolver and name, and the slot's content in the file.
    ifunc_slots: Vec<IfuncSlot>,
    /// The variants the slots hold, once every slot holds one (the object
    /// is relocated), by the address of the object's virtual address 0
    /// they were read at.
    chosen: OnceLock<(u64, FxHashMap<u64, String>)>,
    /// The names of its IFUNC symbols, which other objects' GOT slots may
    /// bind to a variant.
    ifunc_names: FxHashSet<String>,
    /// Its imports' GOT slots (virtual address) and names.
    pub imports: Vec<(u64, String)>,
}

/// An `R_X86_64_IRELATIVE` slot of an IFUNC symbol.
#[derive(Debug)]
struct IfuncSlot {
    slot: u64,
    resolver: u64,
    initial: u64,
    name: String,
}

impl ObjectSymbols {
    /// The functions of the ELF file at `path`; empty when it cannot be
    /// read, is not ELF, or is no longer the file of identity `identity`
    /// that was mapped.
    pub fn of_file(path: &Path, identity: Identity) -> ObjectSymbols {
        let same = std::fs::metadata(path).is_ok_and(|m| Identity::of(&m) == identity);
        let Some(elf) = same.then(|| std::fs::read(path).ok()).flatten().and_then(|d| ElfSymbols::parse(&d)) else {
            return ObjectSymbols::default();
        };
        let mut functions = FxHashMap::default();
        for s in elf.symbols.iter().filter(|s| s.exported_function) {
            functions.entry(s.addr).or_insert_with(|| s.name.clone());
        }
        let resolvers: FxHashMap<u64, &str> =
            elf.symbols.iter().filter(|s| s.ifunc).map(|s| (s.addr, s.name.as_str())).collect();
        let ifunc_slots = elf
            .irelative
            .iter()
            .filter_map(|&(slot, resolver, initial)| {
                Some(IfuncSlot { slot, resolver, initial, name: resolvers.get(&resolver)?.to_string() })
            })
            .collect();
        let ifunc_names = elf.symbols.iter().filter(|s| s.ifunc).map(|s| s.name.clone()).collect();
        ObjectSymbols {
            segments: elf.segments,
            functions,
            ifunc_slots,
            chosen: OnceLock::new(),
            ifunc_names,
            imports: elf.imports,
        }
    }

    /// Whether `name` is one of its IFUNC symbols.
    pub fn is_ifunc(&self, name: &str) -> bool {
        self.ifunc_names.contains(name)
    }

    /// Whether it has IFUNC symbols at all.
    pub fn has_ifuncs(&self) -> bool {
        !self.ifunc_names.is_empty()
    }

    /// The guest address of virtual address 0, for a mapping that puts
    /// `position` (a file offset, or a virtual address for an `image`) at
    /// guest address `addr`.
    pub fn base(&self, addr: u64, position: u64, image: bool) -> Option<u64> {
        if image {
            return Some(addr.wrapping_sub(position));
        }
        let s = self.segments.iter().find(|s| position >= s.offset && position - s.offset < s.memsz)?;
        Some(addr.wrapping_sub(position - s.offset + s.vaddr))
    }

    /// The name of the function starting at guest address `addr` of the
    /// object loaded at `base` (the guest address of its virtual address
    /// 0), reading its GOT slots with `read_u64` (`None` where guest
    /// memory cannot be read).
    pub fn function_at(&self, addr: u64, base: u64, read_u64: impl Fn(u64) -> Option<u64>) -> Option<String> {
        let vaddr = addr.wrapping_sub(base);
        if let Some(name) = self.functions.get(&vaddr) {
            return Some(name.clone());
        }
        if self.ifunc_slots.is_empty() {
            return None;
        }
        if let Some((_, chosen)) = self.chosen.get().filter(|(at, _)| *at == base) {
            return chosen.get(&vaddr).cloned();
        }
        // A slot holds its variant once relocated: no longer what the file
        // put there (a static program's `.iplt` entry), an address in the
        // object's code other than its resolver's.
        let in_code = |v: u64| self.segments.iter().any(|s| s.exec && v >= s.vaddr && v - s.vaddr < s.memsz);
        let mut chosen = FxHashMap::default();
        let mut every = true;
        for s in &self.ifunc_slots {
            match read_u64(base.wrapping_add(s.slot)) {
                Some(word)
                    if word != s.initial
                        && in_code(word.wrapping_sub(base))
                        && word.wrapping_sub(base) != s.resolver =>
                {
                    chosen.entry(word.wrapping_sub(base)).or_insert_with(|| s.name.clone());
                }
                _ => every = false,
            }
        }
        let found = chosen.get(&vaddr).cloned();
        if every {
            // Relocated slots do not change again (RELRO makes them
            // read-only), so the answer is kept.
            let _ = self.chosen.set((base, chosen));
        }
        found
    }
}
