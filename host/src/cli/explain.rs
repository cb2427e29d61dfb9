//! `aarchx explain --at ADDR PROGRAM`: one region of a program's code the
//! way a developer inspects it (QEMU's `-d in_asm,op,out_asm`, FEX's IR
//! dumps): the guest x86-64 instructions it holds, its IR after each pass
//! of the policy, and the arm64 code the JIT makes of it with its size.
//!
//! The region is translated from the program file's bytes at the
//! addresses the file gives (a PIE's as if loaded at 0), by the same
//! pipeline a run uses, with the verifier after every pass; it is lowered
//! for a fixed host address, so the words are the same on every host. ADDR
//! is an address (`0x401000`, decimal) or a symbol of the file's `.symtab`
//! or `.dynsym` (`main`, `main+0x10`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use aarchx_ir::Region;
use aarchx_pass::GuestCode;
use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};
use yaxpeax_arch::{Decoder as _, U8Reader};
use yaxpeax_arm::armv8::a64::InstDecoder;

use crate::jit::leaf::LeafRoutines;
use crate::jit::lower::lower;
use crate::jit::{CompileOptions, NanRules};
use crate::loader::elf::{self, ElfError, Segment};
use crate::mem::PROT_EXEC;
use crate::plugin::Registry;
use crate::policy::{Backend, MemoryModelSetting, Policy};
use crate::run::RunError;
use crate::symbols::{ElfSymbols, Symbol};
use crate::translate::{PassFailure, Pipeline, TranslateError};

/// Where the arm64 code is lowered for, and the dispatcher exit it
/// branches to: fixed, so the output does not depend on the host.
const CODE_AT: usize = 0x1000_0000;
const EXIT_AT: usize = 0x0ff0_0000;
/// Where the listing places a quick block's run count.
const RUN_COUNT_AT: usize = 0x0fe0_0000;

/// What keeps a region from being explained.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: not a runnable x86-64 ELF: {source}", path.display())]
    Elf { path: PathBuf, source: ElfError },
    #[error("{}: no symbol `{name}` in its .symtab or .dynsym", path.display())]
    NoSymbol { path: PathBuf, name: String },
    #[error("--at {0}: not an address (0x..., decimal) or a symbol (NAME or NAME+OFFSET)")]
    BadAddress(String),
    #[error("{}: {addr:#x} is not in an executable segment", path.display())]
    NotCode { path: PathBuf, addr: u64 },
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Translate(#[from] TranslateError),
}

impl ExplainError {
    /// The exit status (see `aarchx --help`): 127 no such program, 126 not
    /// an x86-64 program, 2 an address that names no code, 4 a pass failed.
    pub fn exit_status(&self) -> u8 {
        match self {
            ExplainError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
            ExplainError::Read { .. } | ExplainError::Elf { .. } => 126,
            ExplainError::NoSymbol { .. } | ExplainError::BadAddress(_) | ExplainError::NotCode { .. } => 2,
            ExplainError::Run(e) => e.exit_status(),
            ExplainError::Translate(_) => 4,
        }
    }
}

/// The file's executable segments as guest code: bytes past a segment's
/// file size read as zeros, as the loader maps them.
struct Image<'a> {
    data: &'a [u8],
    segments: Vec<Segment>,
    symbols: &'a [Symbol],
}

impl GuestCode for Image<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(s) = self.segments.iter().find(|s| addr >= s.vaddr && addr - s.vaddr < s.memsz) else { return 0 };
        let off = addr - s.vaddr;
        let n = buf.len().min(usize::try_from(s.memsz - off).unwrap_or(usize::MAX));
        for (i, b) in buf[..n].iter_mut().enumerate() {
            let at = off + i as u64;
            *b = if at < s.filesz { self.data[(s.offset + at) as usize] } else { 0 };
        }
        n
    }

    /// A function symbol of the file (a static program's names glibc's
    /// IFUNC variants; a dynamic one's libc is not loaded here).
    fn function_at(&self, addr: u64) -> Option<String> {
        self.symbols.iter().find(|s| s.addr == addr && !s.ifunc).map(|s| s.name.clone())
    }
}

/// The file's symbols with an address (functions, IFUNC resolvers, an
/// assembly file's labels), from `.symtab` and `.dynsym`; empty when the
/// file has neither.
fn symbols(data: &[u8]) -> Vec<Symbol> {
    ElfSymbols::parse(data).map_or_else(Vec::new, |e| e.symbols)
}

/// `at` as an address: a number, or a symbol with an optional `+OFFSET`.
fn resolve(at: &str, path: &Path, symbols: &[Symbol]) -> Result<u64, ExplainError> {
    let number = |t: &str| match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    };
    if let Some(addr) = number(at) {
        return Ok(addr);
    }
    let (name, offset) = match at.split_once('+') {
        Some((name, off)) => (name, number(off).ok_or_else(|| ExplainError::BadAddress(at.into()))?),
        None => (at, 0),
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(ExplainError::BadAddress(at.into()));
    }
    symbols
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.addr.wrapping_add(offset))
        .ok_or_else(|| ExplainError::NoSymbol { path: path.into(), name: name.into() })
}

/// `addr` as `symbol+0xN` when a function symbol covers it.
fn label(addr: u64, symbols: &[Symbol]) -> Option<String> {
    symbols
        .iter()
        .filter(|s| addr >= s.addr && addr - s.addr < s.size.max(1))
        // The nearest start; of aliases, the one with fewest leading `_`.
        .min_by_key(|s| (addr - s.addr, s.name.len() - s.name.trim_start_matches('_').len()))
        .map(|s| if addr == s.addr { s.name.clone() } else { format!("{}+{:#x}", s.name, addr - s.addr) })
}

/// The explanation of the region at `at` in `program` under `policy`;
/// `quick` for the translation a region first gets under tiering (no
/// branch followed) instead of its superblock.
pub fn explain(policy: &Policy, program: &Path, at: &str, quick: bool) -> Result<String, ExplainError> {
    let data = std::fs::read(program).map_err(|source| ExplainError::Read { path: program.into(), source })?;
    let elf = elf::parse(&data).map_err(|source| ExplainError::Elf { path: program.into(), source })?;
    let symbols = symbols(&data);
    let entry = resolve(at, program, &symbols)?;
    let code = Image {
        data: &data,
        segments: elf.segments.iter().copied().filter(|s| s.prot & PROT_EXEC != 0).collect(),
        symbols: &symbols,
    };
    if code.read(entry, &mut [0]) == 0 {
        return Err(ExplainError::NotCode { path: program.into(), addr: entry });
    }

    let registry =
        Registry::with_plugins(aarchx_passes::BUILTIN, &policy.plugins, policy.base_dir()).map_err(RunError::from)?;
    let passes = policy.validate(&registry).map_err(RunError::Policy)?;
    let mut pipeline =
        Pipeline::new(&passes, policy.translation_config(), policy.region_hook.clone(), PassFailure::Fail)
            .map_err(RunError::from)?;
    let config = pipeline.config().clone();

    let mut out = String::new();
    let place = label(entry, &symbols).map_or(String::new(), |l| format!(" ({l})"));
    let model = match policy.memory_model {
        MemoryModelSetting::Auto => format!("Auto (translated {:?}, as before the first thread)", config.memory_model),
        other => format!("{other:?}"),
    };
    let _ = writeln!(
        out,
        "region at {entry:#x}{place} of {}: {}, memory model {model}, cpu level {:?}",
        program.display(),
        if quick { "quick translation (no branch followed)" } else { "superblock" },
        config.cpu_level,
    );
    let mut stages: Vec<(String, String)> = Vec::new();
    let region = pipeline.translate_observed(entry, &code, !quick, &mut |pass, region| {
        stages.push((pass.to_string(), aarchx_ir::print::print(region)));
    })?;

    guest_listing(&mut out, &region, &code, &symbols);
    let mut last = String::new();
    for (pass, ir) in stages {
        if ir == last {
            let _ = writeln!(out, "\n== IR after {pass}: unchanged");
        } else {
            let _ = writeln!(out, "\n== IR after {pass}: {} instructions", region_size(&ir));
            for line in ir.lines() {
                let _ = writeln!(out, "  {line}");
            }
            last = ir;
        }
    }
    // A quick translation that may be promoted counts its runs.
    let counts = quick && crate::translate::leaves_directly(&region);
    arm64_listing(&mut out, &region, policy.backend, crate::engine::nan_rules(policy.afp), counts);
    Ok(out)
}

/// IR instructions in a printed region: its lines but block headers.
fn region_size(ir: &str) -> usize {
    ir.lines().filter(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty()).count()
}

/// The guest instructions the region holds, in address order, with their
/// bytes and Intel syntax.
fn guest_listing(out: &mut String, region: &Region, code: &Image<'_>, symbols: &[Symbol]) {
    let mut insns: Vec<(u64, u16)> = region.guest_insns().collect();
    insns.sort_unstable();
    insns.dedup();
    let bytes: u64 = insns.iter().map(|&(_, len)| u64::from(len)).sum();
    let _ = writeln!(out, "\n== guest x86-64: {} instructions, {bytes} bytes", insns.len());
    let mut formatter = IntelFormatter::new();
    let mut insn = Instruction::default();
    for (addr, len) in insns {
        let mut buf = vec![0; usize::from(len)];
        code.read(addr, &mut buf);
        let mut decoder = Decoder::with_ip(64, &buf, addr, DecoderOptions::NONE);
        decoder.decode_out(&mut insn);
        let mut text = String::new();
        formatter.format(&insn, &mut text);
        let hex: Vec<String> = buf.iter().map(|b| format!("{b:02x}")).collect();
        let name = label(addr, symbols).filter(|l| !l.contains('+')).map_or(String::new(), |l| format!("{l}:\n"));
        let _ = writeln!(out, "{name}  {addr:#x}  {:<30} {text}", hex.join(" "));
    }
}

/// The arm64 code of the region, a word and its disassembly a line, its
/// float code under `nan_rules` (what a run on this host would use),
/// counting its runs at the entry when it `counts` them (a quick block).
fn arm64_listing(out: &mut String, region: &Region, backend: Backend, nan_rules: NanRules, counts: bool) {
    if backend == Backend::Interp {
        let _ = writeln!(out, "\n== arm64: none (the policy's backend is the interpreter, which runs the IR)");
        return;
    }
    // As the run compiles it: an entry that reads the flags it is entered
    // with is the first word, else the second (see `probe_indirect`).
    let reads_flags = aarchx_passes::dead_flags::reads_status_flags(region);
    match lower(
        region,
        CODE_AT,
        EXIT_AT,
        &LeafRoutines::placed_at(EXIT_AT),
        0,
        CompileOptions::default(),
        reads_flags,
        nan_rules,
        counts.then_some(RUN_COUNT_AT),
    ) {
        Ok(lowered) => {
            let _ = writeln!(
                out,
                "\n== arm64: {} instructions, {} bytes (lowered at {CODE_AT:#x}, entry +{:#x}: {}, dispatcher exit at {EXIT_AT:#x}{})",
                lowered.code.len() / 4,
                lowered.code.len(),
                lowered.entry,
                if reads_flags { "reads the status flags it is entered with" } else { "status flags dead at entry" },
                if counts { format!(", run count at {RUN_COUNT_AT:#x}") } else { String::new() },
            );
            let decoder = InstDecoder::default();
            for (i, w) in lowered.code.chunks_exact(4).enumerate() {
                let text = match decoder.decode(&mut U8Reader::new(w)) {
                    Ok(insn) => insn.to_string(),
                    Err(e) => format!("<{e}>"),
                };
                let word = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                let _ = writeln!(out, "  {:#06x}  {word:08x}  {text}", i * 4);
            }
        }
        Err(why) => {
            let _ = writeln!(out, "\n== arm64: not lowered ({why}); a run executes this region in the interpreter");
        }
    }
}
