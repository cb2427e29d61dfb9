//! Reading the emitted words: their disassembly (yaxpeax-arm) for the
//! fixtures, and, for the ordered-memory check, which words are loads
//! and stores of guest memory (every general-register access not based
//! on one of the backend's own base registers: sp for frame slots and
//! saved registers, x28 for the guest state, x27 for the JIT context,
//! x16 for the journal, x17 for far slots; guest addresses are in
//! whichever register the allocator gave them), which of those are the
//! acquire/release forms, and which words are `dmb` barriers. The check
//! matches encodings rather than disassembly text, so it does not depend
//! on the disassembler's spelling.

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::InstDecoder;

/// The base registers of the backend's own memory (sp, x28, x27, x16,
/// x17; see `host/src/jit/lower/frame.rs`).
const BACKEND_BASES: &[u32] = &[31, 28, 27, 16, 17];

/// `(mask, value)` of the acquire/release loads and stores: `ldar*`,
/// `stlr*`, `ldapr*`, any size.
const ORDERED_LOAD_STORE: &[(u32, u32)] =
    &[(0x3fff_fc00, 0x08df_fc00), (0x3fff_fc00, 0x089f_fc00), (0x3fff_fc00, 0x38bf_c000)];

/// `(mask, value)` of the atomics with both acquire and release, which
/// x86's locked instructions become in every memory model: the LSE
/// `ldaddal`, `ldclral`, `ldeoral`, `ldsetal`, `swpal` and `casal`, any size.
const ATOMIC_ACQUIRE_RELEASE: &[(u32, u32)] = &[(0x3fe0_0c00, 0x38e0_0000), (0x3fe0_fc00, 0x08e0_fc00)];

/// `(mask, value)` of the single-register and pair loads and stores, any
/// addressing mode, general or SIMD register.
const LOAD_STORE: &[(u32, u32)] = &[(0x3a00_0000, 0x3800_0000), (0x3a00_0000, 0x2800_0000)];

/// Bit 26 of a load/store: the SIMD&FP register file.
const SIMD: u32 = 1 << 26;

fn matches(word: u32, table: &[(u32, u32)]) -> bool {
    table.iter().any(|&(mask, value)| word & mask == value)
}

fn is_dmb(word: u32) -> bool {
    word & 0xffff_f0ff == 0xd503_30bf
}

/// A scalar (general-register) guest memory access.
fn is_guest_scalar_access(word: u32) -> bool {
    let guest = !BACKEND_BASES.contains(&((word >> 5) & 31));
    guest
        && (matches(word, ORDERED_LOAD_STORE)
            || matches(word, ATOMIC_ACQUIRE_RELEASE)
            || (matches(word, LOAD_STORE) && word & SIMD == 0))
}

/// Indices of the acquire/release loads and stores (not atomics) in `words`.
pub fn ordered_loads_and_stores(words: &[u32]) -> Vec<usize> {
    (0..words.len()).filter(|&i| is_guest_scalar_access(words[i]) && matches(words[i], ORDERED_LOAD_STORE)).collect()
}

/// Indices of the guest scalar accesses that are neither acquire/release
/// (loads, stores and atomics) nor the fenced fallback of a misaligned
/// access (a plain access with a `dmb` at most two instructions before or
/// after it).
pub fn unordered_guest_accesses(words: &[u32]) -> Vec<usize> {
    (0..words.len())
        .filter(|&i| is_guest_scalar_access(words[i]))
        .filter(|&i| !matches(words[i], ORDERED_LOAD_STORE) && !matches(words[i], ATOMIC_ACQUIRE_RELEASE))
        .filter(|&i| !words[i.saturating_sub(2)..words.len().min(i + 3)].iter().any(|w| is_dmb(*w)))
        .collect()
}

/// `word` in assembly syntax (branch targets relative, as `$+0xc`).
pub fn disassemble(word: u32) -> String {
    let bytes = word.to_le_bytes();
    match InstDecoder::default().decode(&mut U8Reader::new(&bytes)) {
        Ok(insn) => insn.to_string(),
        Err(e) => format!("<{e}>"),
    }
}
