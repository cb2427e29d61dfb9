//! The leaf routines in arm64 ([`Helper::is_leaf`]; `crate::leaf` has
//! the contract and the interpreter's versions), generated once after the
//! entry trampoline and reached from translated code by `bl`.
//!
//! The private contract: the arguments are in the host registers pinned
//! to rdi, rsi and rdx (x21, x22, x23); a routine that runs puts its result
//! in rax's (x20) and returns x0 = 1; one that declines leaves x20 alone and
//! returns x0 = 0 (the checking ones read rcx's, x24, too). They use
//! x0-x17, v0-v3 and NZCV only, never x30 and
//! never the stack, so the caller saves nothing but the lowering's own
//! live values in those registers (none at a region's entry, where the
//! `leaf-inline` pass puts the call). A guest memory fault anywhere in them
//! resumes at [`LeafRoutines::decline`] (`crate::signals`): x0 = 0 and
//! `ret` through the untouched x30, so the guest's own code takes the fault.
//!
//! Memory is read in aligned 16-byte chunks where the end is not known in
//! advance (strlen, memchr, strcmp near a page end byte by byte), which
//! never cross a page the guest's own routine would not touch, and by
//! memrchr, from the chunk of its last byte down to that of its first;
//! stores and the other length-bounded reads stay within the C function's
//! range.

#[cfg(target_arch = "aarch64")]
use dynasmrt::aarch64::Aarch64Relocation;
#[cfg(target_arch = "aarch64")]
use dynasmrt::{dynasm, DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

use aarchx_ir::cond::Helper;

#[cfg(target_arch = "aarch64")]
use super::cache::CodeCache;

/// Where the routines are in the code cache.
#[derive(Clone, Copy, Debug, Default)]
pub struct LeafRoutines {
    /// Each leaf helper's entry, by its position among them.
    entries: [usize; LEAVES],
    /// The routines' code, `[start, end)`.
    pub range: (usize, usize),
    /// Where a fault inside them resumes.
    pub decline: usize,
}

const LEAVES: usize = 17;

impl LeafRoutines {
    /// Every routine at `addr`: for lowering code that never runs (the
    /// codegen counts, `aarchx explain`).
    pub fn placed_at(addr: usize) -> LeafRoutines {
        LeafRoutines { entries: [addr; LEAVES], range: (addr, addr), decline: addr }
    }

    /// Assembles the routines into `cache`.
    #[cfg(target_arch = "aarch64")]
    pub fn generate(cache: &mut CodeCache) -> Result<LeafRoutines, String> {
        let at = cache.next_addr();
        let mut ops = VecAssembler::<Aarch64Relocation>::new(at);
        let mut entries = [0usize; LEAVES];
        let leaves = || Helper::ALL.iter().copied().filter(|h| h.is_leaf());
        let labels: Vec<DynamicLabel> = leaves().map(|_| ops.new_dynamic_label()).collect();
        let label = |h: Helper| labels[h as usize - Helper::Strlen as usize];
        let strings = ops.new_dynamic_label();
        let (search, copy) = (ops.new_dynamic_label(), ops.new_dynamic_label());
        for (i, helper) in leaves().enumerate() {
            entries[i] = ops.offset().0;
            dynasm!(ops; .arch aarch64; =>labels[i]);
            match helper {
                Helper::Strlen => strlen(&mut ops),
                Helper::Memchr => memchr(&mut ops, true, search),
                Helper::Rawmemchr => memchr(&mut ops, false, search),
                Helper::Memset => memset(&mut ops),
                Helper::Memmove => memmove(&mut ops, false, copy),
                Helper::Mempcpy => memmove(&mut ops, true, copy),
                Helper::Memcmp => memcmp(&mut ops),
                Helper::Strcmp => strncmp(&mut ops, false, strings),
                Helper::Strchr => strchr(&mut ops),
                Helper::Strnlen => strnlen(&mut ops),
                Helper::Strncmp => strncmp(&mut ops, true, strings),
                Helper::MemmoveChk => checked(&mut ops, label(Helper::Memmove)),
                Helper::MemsetChk => checked(&mut ops, label(Helper::Memset)),
                Helper::Strrchr => strrchr(&mut ops),
                Helper::Strcpy => strcpy(&mut ops, false, copy),
                Helper::Stpcpy => strcpy(&mut ops, true, copy),
                Helper::Memrchr => memrchr(&mut ops),
                _ => unreachable!("{helper} is not a leaf routine"),
            }
        }
        let decline = ops.offset().0;
        dynasm!(ops; .arch aarch64; mov x0, #0; ret);
        let code = ops.finalize().map_err(|e| e.to_string())?;
        let start = cache.push(at, &code).ok_or("no room for the leaf routines")?;
        Ok(LeafRoutines {
            entries: entries.map(|e| start + e),
            range: (start, start + code.len()),
            decline: start + decline,
        })
    }

    /// The entry of leaf routine `helper`.
    pub fn entry(&self, helper: Helper) -> usize {
        let i = helper as usize - Helper::Strlen as usize;
        self.entries[i]
    }
}

#[cfg(target_arch = "aarch64")]
type Ops = VecAssembler<Aarch64Relocation>;

/// x20 = the length of the string at x21.
#[cfg(target_arch = "aarch64")]
fn strlen(ops: &mut Ops) {
    length_of(ops, 21, 20);
    dynasm!(ops; .arch aarch64; mov x0, #1; ret);
}

/// `X(out)` = the length of the string at `X(s)`, read in aligned 16-byte
/// chunks (clobbers x1, x2, x5 and v0, v2); falls through.
#[cfg(target_arch = "aarch64")]
fn length_of(ops: &mut Ops, s: u8, out: u8) {
    first_chunk(ops, s, Lanes::Zero);
    dynasm!(ops; .arch aarch64; cbnz x2, >hit; next:);
    next_chunk(ops, Lanes::Zero);
    dynasm!(ops; .arch aarch64; cbz x2, <next; hit:);
    first_bit(ops, 2);
    dynasm!(ops
        ; .arch aarch64
        ; add x1, x1, x2, lsr #2
        ; sub X(out), x1, X(s)
    );
}

/// x20 = the last byte x22 in the string at x21 (its terminator when
/// x22's byte is 0), or 0: aligned 16-byte chunks up to the one with the
/// terminator, the last match so far in x8.
#[cfg(target_arch = "aarch64")]
fn strrchr(ops: &mut Ops) {
    dynasm!(ops; .arch aarch64; dup v1.b16, w22; mov x8, #0);
    first_chunk(ops, 21, Lanes::ByteAndZero);
    dynasm!(ops; .arch aarch64; b >check; next:);
    next_chunk(ops, Lanes::ByteAndZero);
    dynasm!(ops; .arch aarch64; check:; cbnz x3, >end; cbz x2, <next);
    last_match(ops, 8);
    dynasm!(ops
        ; .arch aarch64
        ; b <next
        ; end:
    );
    first_bit(ops, 3);
    dynasm!(ops
        ; .arch aarch64
        // Matches up to the terminator's nibble (2 << 63 is 0 on arm64's
        // lsl by register, modulo 64: all lanes kept).
        ; add x4, x3, #3
        ; mov x6, #2
        ; lsl x6, x6, x4
        ; sub x6, x6, #1
        ; ands x2, x2, x6
        ; b.eq >earlier
    );
    last_match(ops, 20);
    dynasm!(ops
        ; .arch aarch64
        ; mov x0, #1
        ; ret
        ; earlier:
        ; mov x20, x8
        ; mov x0, #1
        ; ret
    );
}

/// x20 = the last byte x22 in the x23 bytes at x21, or 0: aligned 16-byte
/// chunks from the one holding the last byte down to the one holding the
/// first. Declines when the range wraps.
#[cfg(target_arch = "aarch64")]
fn memrchr(ops: &mut Ops) {
    dynasm!(ops
        ; .arch aarch64
        ; cbz x23, >none
        ; adds x7, x21, x23
        ; b.cc >search
        ; mov x0, #0
        ; ret
        ; search:
        ; dup v1.b16, w22
        ; sub x1, x7, #1
        ; and x1, x1, #0xffff_ffff_ffff_fff0
        ; ldr q0, [x1]
    );
    chunk_masks(ops, Lanes::Byte);
    dynasm!(ops
        ; .arch aarch64
        // The lanes from the end on cleared: the low (x7 - x1) * 4 bits
        // kept (a shift by 64 - that, modulo 64: none for a whole chunk).
        ; sub x3, x7, x1
        ; lsl x3, x3, #2
        ; neg x3, x3
        ; lsl x2, x2, x3
        ; lsr x2, x2, x3
        ; b >check
        ; prev:
        ; ldr q0, [x1, #-16]!
    );
    chunk_masks(ops, Lanes::Byte);
    dynasm!(ops
        ; .arch aarch64
        ; check:
        ; cmp x1, x21
        ; b.hi >whole
    );
    // The chunk holding the first byte: the lanes before it cleared.
    clear_before(ops, 21, &[2]);
    dynasm!(ops
        ; .arch aarch64
        ; cbz x2, >none
        ; b >hit
        ; whole:
        ; cbz x2, <prev
        ; hit:
    );
    last_match(ops, 20);
    dynasm!(ops
        ; .arch aarch64
        ; mov x0, #1
        ; ret
        ; none:
        ; mov x20, #0
        ; mov x0, #1
        ; ret
    );
}

/// Copies the string at x22 with its terminator to x21; x20 = x21, or with
/// `end` (stpcpy) the copy's terminator. Its length first, then memmove's
/// copy at `copy` (declined when the two overlap or wrap).
#[cfg(target_arch = "aarch64")]
fn strcpy(ops: &mut Ops, end: bool, copy: DynamicLabel) {
    length_of(ops, 22, 9);
    dynasm!(ops; .arch aarch64; add x10, x9, #1);
    if !end {
        dynasm!(ops; .arch aarch64; mov x9, #0);
    }
    dynasm!(ops; .arch aarch64; b =>copy);
}

/// x20 = the first byte x22 in the x23 bytes at x21 (`bounded`; else in
/// memory from x21 on: rawmemchr), or 0. The unbounded one enters the
/// bounded one's search at `body` with the length at its maximum.
#[cfg(target_arch = "aarch64")]
fn memchr(ops: &mut Ops, bounded: bool, body: DynamicLabel) {
    if !bounded {
        dynasm!(ops; .arch aarch64; movn x7, #0; b =>body);
        return;
    }
    dynasm!(ops; .arch aarch64; mov x7, x23; =>body; dup v1.b16, w22);
    bounded_scan(ops, Lanes::Byte);
    dynasm!(ops
        ; .arch aarch64
        ; add x20, x1, x2
        ; mov x0, #1
        ; ret
        ; none:
        ; mov x20, #0
        ; mov x0, #1
        ; ret
    );
}

/// Fills the x23 bytes at x21 with byte x22; x20 = x21. Declines when
/// the range wraps.
#[cfg(target_arch = "aarch64")]
fn memset(ops: &mut Ops) {
    dynasm!(ops
        ; .arch aarch64
        ; adds x2, x21, x23
        ; b.cc >fill
        ; mov x0, #0
        ; ret
        ; fill:
        ; dup v0.b16, w22
        ; cmp x23, #16
        ; b.lo >small
        ; cmp x23, #32
        ; b.lo >mid
        ; mov x1, x21
        ; sub x3, x2, #32
        ; loop32:
        ; stp q0, q0, [x1], #32
        ; cmp x1, x3
        ; b.lo <loop32
        ; stp q0, q0, [x3]
        ; b >done
        ; mid:
        ; str q0, [x21]
        ; stur q0, [x2, #-16]
        ; b >done
        ; small:
        ; mov x1, x21
        ; tbz x23, #3, >w4
        ; str d0, [x1], #8
        ; w4:
        ; tbz x23, #2, >w2
        ; str s0, [x1], #4
        ; w2:
        ; tbz x23, #1, >w1
        ; str h0, [x1], #2
        ; w1:
        ; tbz x23, #0, >done
        ; str b0, [x1]
        ; done:
        ; mov x20, x21
        ; mov x0, #1
        ; ret
    );
}

/// Copies the x23 bytes at x22 to x21; x20 = x21, or with `end` (mempcpy)
/// x21 + x23. Declines when the two ranges overlap or wrap. The copy at
/// `body` takes the length in x10 and returns x21 + x9: mempcpy and
/// strcpy/stpcpy enter it with both set.
#[cfg(target_arch = "aarch64")]
fn memmove(ops: &mut Ops, end: bool, body: DynamicLabel) {
    if end {
        dynasm!(ops; .arch aarch64; mov x9, x23; mov x10, x23; b =>body);
        return;
    }
    dynasm!(ops
        ; .arch aarch64
        ; mov x9, #0
        ; mov x10, x23
        ; =>body
        ; cbz x10, >done
        ; adds x4, x22, x10
        ; b.cs >decline
        ; adds x5, x21, x10
        ; b.cs >decline
        ; cmp x21, x4
        ; b.hs >apart
        ; cmp x22, x5
        ; b.hs >apart
        ; decline:
        ; mov x0, #0
        ; ret
        ; apart:
        ; cmp x10, #16
        ; b.lo >small
        ; cmp x10, #32
        ; b.lo >mid
        ; mov x1, x21
        ; mov x2, x22
        ; mov x6, x10
        ; loop32:
        ; ldp q0, q1, [x2], #32
        ; stp q0, q1, [x1], #32
        ; sub x6, x6, #32
        ; cmp x6, #32
        ; b.hs <loop32
        ; ldp q0, q1, [x4, #-32]
        ; stp q0, q1, [x5, #-32]
        ; b >done
        ; mid:
        ; ldr q0, [x22]
        ; ldur q1, [x4, #-16]
        ; str q0, [x21]
        ; stur q1, [x5, #-16]
        ; b >done
        ; small:
        ; tbz x10, #3, >lt8
        ; ldr x7, [x22]
        ; ldur x8, [x4, #-8]
        ; str x7, [x21]
        ; stur x8, [x5, #-8]
        ; b >done
        ; lt8:
        ; tbz x10, #2, >lt4
        ; ldr w7, [x22]
        ; ldur w8, [x4, #-4]
        ; str w7, [x21]
        ; stur w8, [x5, #-4]
        ; b >done
        ; lt4:
        ; ldrb w7, [x22]
        ; strb w7, [x21]
        ; tbz x10, #1, >done
        ; ldurh w7, [x4, #-2]
        ; sturh w7, [x5, #-2]
        ; done:
        ; add x20, x21, x9
        ; mov x0, #1
        ; ret
    );
}

/// x20 = the difference of the first differing bytes of the x23 bytes at
/// x21 and x22 (as a 32-bit int, zero-extended), or 0.
#[cfg(target_arch = "aarch64")]
fn memcmp(ops: &mut Ops) {
    dynasm!(ops
        ; .arch aarch64
        ; mov x1, x21
        ; mov x2, x22
        ; mov x3, x23
        ; loop16:
        ; cmp x3, #16
        ; b.lo >bytes
        ; ldr q0, [x1], #16
        ; ldr q1, [x2], #16
        ; cmeq v0.b16, v0.b16, v1.b16
        ; mvn v0.b16, v0.b16
        ; shrn v0.b8, v0.h8, #4
        ; fmov x4, d0
        ; sub x3, x3, #16
        ; cbz x4, <loop16
    );
    chunk_difference(ops);
    dynasm!(ops
        ; .arch aarch64
        ; bytes:
        ; cbz x3, >equal
        ; ldrb w5, [x1], #1
        ; ldrb w6, [x2], #1
        ; sub x3, x3, #1
        ; cmp w5, w6
        ; b.eq <bytes
        ; sub w20, w5, w6
        ; mov x0, #1
        ; ret
        ; equal:
        ; mov x20, #0
        ; mov x0, #1
        ; ret
    );
}

/// x20 = the first byte x22 in the string at x21 (its terminator when
/// x22's byte is 0), or 0.
#[cfg(target_arch = "aarch64")]
fn strchr(ops: &mut Ops) {
    dynasm!(ops; .arch aarch64; dup v1.b16, w22);
    first_chunk(ops, 21, Lanes::ByteOrZero);
    dynasm!(ops; .arch aarch64; cbnz x2, >hit; next:);
    next_chunk(ops, Lanes::ByteOrZero);
    dynasm!(ops; .arch aarch64; cbz x2, <next; hit:);
    first_bit(ops, 2);
    dynasm!(ops
        ; .arch aarch64
        ; lsr x2, x2, #2
        ; ldrb w3, [x1, x2]
        ; add x4, x1, x2
        ; and w5, w22, #0xff
        ; cmp w3, w5
        ; csel x20, x4, xzr, eq
        ; mov x0, #1
        ; ret
    );
}

/// x20 = the length of the string at x21, or x22 if that is less.
#[cfg(target_arch = "aarch64")]
fn strnlen(ops: &mut Ops) {
    dynasm!(ops; .arch aarch64; mov x7, x22);
    bounded_scan(ops, Lanes::Zero);
    dynasm!(ops
        ; .arch aarch64
        ; add x2, x1, x2
        ; sub x20, x2, x21
        ; mov x0, #1
        ; ret
        ; none:
        ; mov x20, x22
        ; mov x0, #1
        ; ret
    );
}

/// x20 = the difference of the first differing bytes of the strings at
/// x21 and x22 within their first x23 bytes (`bounded`; else unbounded:
/// strcmp) as a 32-bit int, zero-extended, or 0. The unbounded one enters
/// the bounded one's loop at `body` with the bound at its maximum.
#[cfg(target_arch = "aarch64")]
fn strncmp(ops: &mut Ops, bounded: bool, body: DynamicLabel) {
    dynasm!(ops
        ; .arch aarch64
        ; mov x1, x21
        ; mov x2, x22
    );
    if !bounded {
        dynasm!(ops; .arch aarch64; movn x3, #0; b =>body);
        return;
    }
    dynasm!(ops
        ; .arch aarch64
        ; mov x3, x23
        ; =>body
        ; next:
        ; cbz x3, >equal
        ; cmp x3, #16
        ; b.lo >byte
        // Within 16 bytes of a page's end, one byte at a time.
        ; and x4, x1, #0xfff
        ; cmp x4, #0xff0
        ; b.hi >byte
        ; and x4, x2, #0xfff
        ; cmp x4, #0xff0
        ; b.hi >byte
        ; ldr q0, [x1], #16
        ; ldr q1, [x2], #16
        ; cmeq v2.b16, v0.b16, v1.b16
        ; cmeq v3.b16, v0.b16, #0
        ; bic v2.b16, v2.b16, v3.b16
        ; mvn v2.b16, v2.b16
        ; shrn v2.b8, v2.h8, #4
        ; fmov x4, d2
        ; sub x3, x3, #16
        ; cbz x4, <next
    );
    chunk_difference(ops);
    dynasm!(ops
        ; .arch aarch64
        ; byte:
        ; ldrb w5, [x1], #1
        ; ldrb w6, [x2], #1
        ; sub x3, x3, #1
        ; cmp w5, w6
        ; b.ne >end
        ; cbnz w5, <next
        ; end:
        ; sub w20, w5, w6
        ; mov x0, #1
        ; ret
        ; equal:
        ; mov x20, #0
        ; mov x0, #1
        ; ret
    );
}

/// A checking (`_chk`) routine: declines when the destination's size (rcx,
/// in x24) is below the length (x23), else is the routine at `plain`.
#[cfg(target_arch = "aarch64")]
fn checked(ops: &mut Ops, plain: DynamicLabel) {
    dynasm!(ops
        ; .arch aarch64
        ; cmp x24, x23
        ; b.hs =>plain
        ; mov x0, #0
        ; ret
    );
}

/// The end of memcmp's and strncmp's 16-byte step: x4 the nibble mask of
/// the lanes to stop at in the chunks just read at x1 - 16 and x2 - 16;
/// x20 = the difference of the bytes in the first such lane, and return.
#[cfg(target_arch = "aarch64")]
fn chunk_difference(ops: &mut Ops) {
    first_bit(ops, 4);
    dynasm!(ops
        ; .arch aarch64
        ; lsr x4, x4, #2
        ; sub x1, x1, #16
        ; sub x2, x2, #16
        ; ldrb w5, [x1, x4]
        ; ldrb w6, [x2, x4]
        ; sub w20, w5, w6
        ; mov x0, #1
        ; ret
    );
}

/// What the lanes (bytes) of a 16-byte chunk are compared with; the lanes
/// that match give a nibble mask (four bits a lane) in x2.
#[cfg(target_arch = "aarch64")]
#[derive(Clone, Copy)]
enum Lanes {
    /// The terminator.
    Zero,
    /// The byte in v1.
    Byte,
    /// The byte in v1 or the terminator.
    ByteOrZero,
    /// The byte in v1 in x2, the terminator in x3.
    ByteAndZero,
}

/// The nibble masks of `lanes` in the chunk in v0 (through v2 and v3).
#[cfg(target_arch = "aarch64")]
fn chunk_masks(ops: &mut Ops, lanes: Lanes) {
    match lanes {
        Lanes::Zero => dynasm!(ops; .arch aarch64; cmeq v2.b16, v0.b16, #0),
        Lanes::Byte => dynasm!(ops; .arch aarch64; cmeq v2.b16, v0.b16, v1.b16),
        Lanes::ByteOrZero | Lanes::ByteAndZero => dynasm!(ops
            ; .arch aarch64
            ; cmeq v2.b16, v0.b16, v1.b16
            ; cmeq v3.b16, v0.b16, #0
        ),
    }
    match lanes {
        Lanes::ByteOrZero => dynasm!(ops; .arch aarch64; orr v2.b16, v2.b16, v3.b16),
        Lanes::ByteAndZero => dynasm!(ops; .arch aarch64; shrn v3.b8, v3.h8, #4; fmov x3, d3),
        Lanes::Zero | Lanes::Byte => {}
    }
    dynasm!(ops; .arch aarch64; shrn v2.b8, v2.h8, #4; fmov x2, d2);
}

/// x1 = the aligned chunk holding the byte at `X(s)`, its masks of `lanes`
/// with the lanes before `X(s)` cleared. Clobbers x5.
#[cfg(target_arch = "aarch64")]
fn first_chunk(ops: &mut Ops, s: u8, lanes: Lanes) {
    dynasm!(ops
        ; .arch aarch64
        ; and x1, X(s), #0xffff_ffff_ffff_fff0
        ; ldr q0, [x1]
    );
    chunk_masks(ops, lanes);
    match lanes {
        Lanes::ByteAndZero => clear_before(ops, s, &[2, 3]),
        _ => clear_before(ops, s, &[2]),
    }
}

/// Clears the lanes before byte `X(s)` in its chunk from the nibble masks
/// `X(m)` of `masks` (lsl and lsr take the shift modulo 64: (s & 15) * 4,
/// in x5).
#[cfg(target_arch = "aarch64")]
fn clear_before(ops: &mut Ops, s: u8, masks: &[u8]) {
    dynasm!(ops; .arch aarch64; lsl x5, X(s), #2);
    for &m in masks {
        dynasm!(ops; .arch aarch64; lsr X(m), X(m), x5; lsl X(m), X(m), x5);
    }
}

/// x1 = the next chunk up, and its masks of `lanes`.
#[cfg(target_arch = "aarch64")]
fn next_chunk(ops: &mut Ops, lanes: Lanes) {
    dynasm!(ops; .arch aarch64; ldr q0, [x1, #16]!);
    chunk_masks(ops, lanes);
}

/// The scan of memchr and strnlen: the first lane of `lanes` (not
/// `ByteAndZero`) in the x7 bytes at x21. Found, x2 is its offset in the
/// chunk at x1 and the code falls through; else it branches to the
/// caller's `none` label after this code.
#[cfg(target_arch = "aarch64")]
fn bounded_scan(ops: &mut Ops, lanes: Lanes) {
    debug_assert!(!matches!(lanes, Lanes::ByteAndZero), "one mask only");
    dynasm!(ops
        ; .arch aarch64
        ; cbz x7, >none
        // x4: the bytes from the chunk at x1 to the end (at most 2^64 - 1).
        ; and x3, x21, #15
        ; adds x4, x7, x3
        ; csinv x4, x4, xzr, cc
    );
    first_chunk(ops, 21, lanes);
    dynasm!(ops; .arch aarch64; b >check; next:);
    next_chunk(ops, lanes);
    dynasm!(ops
        ; .arch aarch64
        ; check:
        ; cbnz x2, >hit
        ; subs x4, x4, #16
        ; b.hi <next
        ; b >none
        ; hit:
    );
    first_bit(ops, 2);
    dynasm!(ops
        ; .arch aarch64
        ; lsr x2, x2, #2
        ; cmp x2, x4
        ; b.hs >none
    );
}

/// `X(mask)` = the bit number of its lowest set bit: of a nibble mask,
/// four times the first matching lane's offset (64 when none matches).
#[cfg(target_arch = "aarch64")]
fn first_bit(ops: &mut Ops, mask: u8) {
    dynasm!(ops; .arch aarch64; rbit X(mask), X(mask); clz X(mask), X(mask));
}

/// `X(out)` = the address of the last lane set in x2 (not 0) of the chunk
/// at x1: its nibble's highest bit (63 - clz) over four. Clobbers x4.
#[cfg(target_arch = "aarch64")]
fn last_match(ops: &mut Ops, out: u8) {
    dynasm!(ops
        ; .arch aarch64
        ; clz x4, x2
        ; eor x4, x4, #63
        ; add X(out), x1, x4, lsr #2
    );
}
