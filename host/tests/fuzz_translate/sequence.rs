//! Random x86-64 instruction sequences: the pool of the oracle's forms a
//! sequence draws from (sorted into flag producers, flag consumers, shifts
//! by cl, other integer and SSE forms), the items a sequence is made of (a
//! form after the instructions that make it valid, a shift-count setter, a
//! forward jcc, jmp or call to a later item), their assembly at an address, the
//! relocation of assembled code to another arena, and the listing.

use std::collections::HashMap;

use iced_x86::{Code, Decoder, DecoderOptions, Encoder, Instruction, Mnemonic, OpKind, Register};

use crate::forms::{self, Form};
use crate::layout::Layout;
use crate::native::CODE_SLOT;
use crate::states::{self, Rng};

/// What a form does with the status flags, for weighting the draw.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// shl/sal/shr/sar/rol/ror/rcl/rcr/shld/shrd by cl.
    ShiftCl,
    /// Writes status flags (and reads none but CF for adc/sbb).
    Producer,
    /// Reads status flags: setcc, cmovcc, adc, sbb, lahf, pushfq, cmc.
    Consumer,
    /// Other integer forms: moves, push/pop, exchanges, not, bswap...
    Integer,
    Sse,
}

const KINDS: [Kind; 5] = [Kind::ShiftCl, Kind::Producer, Kind::Consumer, Kind::Integer, Kind::Sse];

/// How an item is drawn: (what, weight).
const DRAW: [(Draw, u64); 7] = [
    (Draw::Branch, 14),
    (Draw::CountSetter, 6),
    (Draw::Form(Kind::ShiftCl), 10),
    (Draw::Form(Kind::Producer), 30),
    (Draw::Form(Kind::Consumer), 20),
    (Draw::Form(Kind::Integer), 12),
    (Draw::Form(Kind::Sse), 8),
];

#[derive(Clone, Copy)]
enum Draw {
    Branch,
    CountSetter,
    Form(Kind),
}

/// Shift counts a setter gives ecx: 0 and the values that mask to 0 (32,
/// 64, 256), 1, the widths and their neighbours.
const COUNTS: [u32; 15] = [0, 0, 32, 64, 256, 1, 2, 7, 8, 15, 16, 17, 31, 33, 63];

fn kind(form: &Form) -> Option<Kind> {
    use Mnemonic as M;
    let m = form.insn.mnemonic();
    let vsib = form.insn.memory_index().is_xmm() || form.insn.memory_index().is_ymm();
    if form.string || vsib || matches!(m, M::Leave | M::Popfq | M::Maskmovq | M::Maskmovdqu | M::Vmaskmovdqu) {
        // Their state needs steering a sequence cannot give (rsi/rdi in
        // the buffer, rbp the stack, a popped rflags without TF and AC, a
        // gather's index elements that keep each address in the buffer).
        return None;
    }
    let shift = matches!(m, M::Shl | M::Sal | M::Shr | M::Sar | M::Rol | M::Ror | M::Rcl | M::Rcr | M::Shld | M::Shrd);
    let by_cl = (0..form.insn.op_count())
        .any(|n| form.insn.op_kind(n) == OpKind::Register && form.insn.op_register(n) == Register::CL);
    Some(if shift && by_cl {
        Kind::ShiftCl
    } else if forms::SETCC.contains(&m)
        || forms::CMOVCC.contains(&m)
        || matches!(m, M::Adc | M::Sbb | M::Lahf | M::Pushfq | M::Cmc)
    {
        Kind::Consumer
    } else if shift
        || matches!(
            m,
            M::Add
                | M::Sub
                | M::Cmp
                | M::And
                | M::Or
                | M::Xor
                | M::Test
                | M::Inc
                | M::Dec
                | M::Neg
                | M::Bt
                | M::Bts
                | M::Btr
                | M::Btc
                | M::Bsf
                | M::Bsr
                | M::Tzcnt
                | M::Lzcnt
                | M::Popcnt
                | M::Mul
                | M::Imul
                | M::Div
                | M::Idiv
                | M::Xadd
                | M::Cmpxchg
                | M::Clc
                | M::Stc
                | M::Sahf
                | M::Ucomiss
                | M::Ucomisd
                | M::Comiss
                | M::Comisd
        )
    {
        Kind::Producer
    } else if forms::INTEGER.contains(&m) {
        Kind::Integer
    } else if forms::SSE.contains(&m) || forms::V2.contains(&m) || forms::MMX.contains(&m) || forms::is_avx(m) {
        Kind::Sse
    } else {
        return None; // x87
    })
}

/// The forms sequences are made of: the oracle's, but for the x87 and
/// string forms, leave and popfq.
pub struct Pool {
    forms: Vec<Form>,
    by_kind: Vec<Vec<usize>>,
}

impl Pool {
    pub fn new(layout: &Layout) -> Pool {
        let forms: Vec<Form> = forms::all(layout).into_iter().filter(|f| kind(f).is_some()).collect();
        let by_kind =
            KINDS.iter().map(|k| (0..forms.len()).filter(|&i| kind(&forms[i]) == Some(*k)).collect()).collect();
        Pool { forms, by_kind }
    }

    pub fn len(&self) -> usize {
        self.forms.len()
    }

    fn pick(&self, k: Kind, rng: &mut Rng) -> &Form {
        let list = &self.by_kind[KINDS.iter().position(|x| *x == k).expect("a kind")];
        &self.forms[list[rng.below(list.len() as u64) as usize]]
    }
}

/// How a branch item goes to its target.
#[derive(Clone, Copy, Debug)]
pub enum Jump {
    /// jcc with this condition (0-15).
    If(u8),
    Always,
    /// call: the return address is pushed and never popped (the decoder
    /// follows the call into the region).
    Call,
}

/// One unit of a sequence; shrinking removes whole items.
#[derive(Clone, Debug)]
pub enum Item {
    /// Instructions placed one after the other: a form after the
    /// instructions that keep it valid (its address registers, divide's
    /// high half, bt's bit offset, a 16-bit double shift's count), or a
    /// shift-count setter.
    Insns(Vec<Instruction>),
    /// A jcc, jmp or call to the start of item `target`, a later one (the
    /// number of items: the sequence's end).
    Branch { jump: Jump, target: usize },
}

#[derive(Clone, Debug)]
pub struct Sequence {
    pub items: Vec<Item>,
}

fn mov64(r: Register, v: u64) -> Instruction {
    Instruction::with2(Code::Mov_r64_imm64, r.full_register(), v).expect("mov r64, imm64")
}

/// The instructions before `form` that make it valid in any state.
fn setup(form: &Form, layout: &Layout, rng: &mut Rng) -> Vec<Instruction> {
    use Mnemonic as M;
    let insn = &form.insn;
    let mut out = Vec::new();
    if form.accesses_memory() {
        out.extend(states::memory_registers(form, layout, rng).into_iter().map(|(r, v)| mov64(r, v)));
    }
    let m = insn.mnemonic();
    let reg = |n: u32| insn.op_kind(n) == OpKind::Register;
    let op = |code: Code, a: Register, b: Register| Instruction::with2(code, a, b).expect("a setup instruction");
    match m {
        M::Bt | M::Bts | M::Btr | M::Btc if insn.op_kind(0) == OpKind::Memory && reg(1) => {
            out.push(mov64(insn.op_register(1), states::bit_offset(rng) as u64));
        }
        M::Shld | M::Shrd if states::op_size(insn, 0) == 2 && reg(2) => {
            out.push(mov64(Register::RCX, states::double_shift_count(rng)));
        }
        // The dividend's high half: zero (div) or the sign of the low half
        // (idiv), so only a zero divisor or idiv's MIN / -1 fault.
        M::Div => out.push(match states::op_size(insn, 0) {
            1 => op(Code::Movzx_r32_rm8, Register::EAX, Register::AL),
            _ => op(Code::Xor_rm32_r32, Register::EDX, Register::EDX),
        }),
        M::Idiv => out.push(Instruction::with(match states::op_size(insn, 0) {
            1 => Code::Cbw,
            2 => Code::Cwd,
            4 => Code::Cdq,
            _ => Code::Cqo,
        })),
        _ => {}
    }
    out
}

/// A random sequence of 2 to 24 items.
pub fn generate(pool: &Pool, layout: &Layout, rng: &mut Rng) -> Sequence {
    let n = 2 + rng.below(23) as usize;
    let total: u64 = DRAW.iter().map(|(_, w)| w).sum();
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        let mut x = rng.below(total);
        let mut draw = DRAW[0].0;
        for (d, w) in DRAW {
            if x < w {
                draw = d;
                break;
            }
            x -= w;
        }
        items.push(match draw {
            Draw::Branch => Item::Branch {
                jump: match rng.below(8) {
                    0 => Jump::Always,
                    1 => Jump::Call,
                    _ => Jump::If(rng.below(16) as u8),
                },
                target: i + 1 + rng.below((n - i) as u64) as usize,
            },
            Draw::CountSetter => Item::Insns(vec![if rng.one_in(4) {
                Instruction::with2(Code::Xor_rm32_r32, Register::ECX, Register::ECX).expect("xor ecx,ecx")
            } else {
                Instruction::with2(Code::Mov_r32_imm32, Register::ECX, rng.pick(&COUNTS)).expect("mov ecx,imm32")
            }]),
            Draw::Form(k) => {
                let form = pool.pick(k, rng);
                let mut insns = setup(form, layout, rng);
                insns.push(form.insn);
                Item::Insns(insns)
            }
        });
    }
    Sequence { items }
}

impl Sequence {
    /// The sequence without item `i`; branches to it go to the item after.
    pub fn without(&self, i: usize) -> Sequence {
        let items = (0..self.items.len())
            .filter(|&k| k != i)
            .map(|k| match &self.items[k] {
                Item::Branch { jump, target } => {
                    Item::Branch { jump: *jump, target: if *target > i { target - 1 } else { *target } }
                }
                insns => insns.clone(),
            })
            .collect();
        Sequence { items }
    }

    /// Machine code for address `at`, or `None` when it does not fit the
    /// arena's code slot. Branches are short where the displacement fits.
    pub fn assemble(&self, at: u64) -> Option<Vec<u8>> {
        let lens: Vec<usize> = self
            .items
            .iter()
            .map(|item| match item {
                Item::Insns(insns) => insns.iter().map(|i| encode(i, at).len()).sum(),
                Item::Branch { jump: Jump::If(_), .. } => 6,
                Item::Branch { .. } => 5,
            })
            .collect();
        let starts = |lens: &[usize]| -> Vec<u64> {
            let mut s = vec![at];
            for l in lens {
                s.push(s.last().expect("a start") + *l as u64);
            }
            s
        };
        // Shortening a branch only brings its own and other forward
        // targets closer, so a displacement that fitted still fits.
        let long = starts(&lens);
        let short: Vec<bool> = (0..self.items.len())
            .map(|k| match self.items[k] {
                Item::Branch { jump: Jump::If(_) | Jump::Always, target } => {
                    i8::try_from(long[target] as i64 - (long[k] as i64 + 2)).is_ok()
                }
                _ => false,
            })
            .collect();
        let lens: Vec<usize> = lens.iter().zip(&short).map(|(l, s)| if *s { 2 } else { *l }).collect();
        let starts = starts(&lens);
        let mut bytes = Vec::new();
        for (k, item) in self.items.iter().enumerate() {
            match item {
                Item::Insns(insns) => {
                    for i in insns {
                        let ip = at + bytes.len() as u64;
                        bytes.extend(encode(i, ip));
                    }
                }
                Item::Branch { jump, target } => {
                    let end = starts[k] + lens[k] as u64;
                    let rel = starts[*target] as i64 - end as i64;
                    match (jump, short[k]) {
                        (Jump::If(c), true) => bytes.extend([0x70 | c, rel as u8]),
                        (_, true) => bytes.extend([0xeb, rel as u8]),
                        (Jump::If(c), false) => bytes.extend([0x0f, 0x80 | c]),
                        (Jump::Always, false) => bytes.push(0xe9),
                        (Jump::Call, false) => bytes.push(0xe8),
                    }
                    if !short[k] {
                        bytes.extend((rel as i32).to_le_bytes());
                    }
                }
            }
            debug_assert_eq!(at + bytes.len() as u64, starts[k + 1]);
        }
        (bytes.len() <= CODE_SLOT).then_some(bytes)
    }
}

/// `insn` encoded at `ip` (RIP-relative operands keep their target).
fn encode(insn: &Instruction, ip: u64) -> Vec<u8> {
    let mut enc = Encoder::new(64);
    enc.encode(insn, ip).unwrap_or_else(|e| panic!("{} does not encode: {e}", forms::format_insn(insn)));
    enc.take_buffer()
}

/// The instructions of `code` placed at `at`, by address.
pub fn decode(code: &[u8], at: u64) -> Vec<Instruction> {
    let mut d = Decoder::with_ip(64, code, at, DecoderOptions::NONE);
    let mut out = Vec::new();
    while d.can_decode() {
        out.push(d.decode());
    }
    out
}

/// The instructions of `code` at `at`, keyed by address.
pub fn by_address(code: &[u8], at: u64) -> HashMap<u64, Instruction> {
    decode(code, at).into_iter().map(|i| (i.ip(), i)).collect()
}

/// `code` assembled for the arena `from`, moved to the arena `to` (both
/// below 4 GiB): every address into the arena (RIP-relative and absolute
/// operands, branch targets, a `mov r64, imm64` of a buffer address, or
/// of one in its low half) moves with it.
pub fn relocate(code: &[u8], from: &Layout, to: &Layout) -> Vec<u8> {
    let delta = to.code.wrapping_sub(from.code);
    let mut out = Vec::new();
    for mut i in decode(code, from.insn) {
        let len = i.len();
        let absolute = (0..i.op_count()).any(|n| i.op_kind(n) == OpKind::Memory)
            && i.memory_base() == Register::None
            && i.memory_index() == Register::None;
        if i.is_ip_rel_memory_operand() || absolute {
            i.set_memory_displacement64(i.memory_displacement64().wrapping_add(delta));
        }
        if matches!(i.op0_kind(), OpKind::NearBranch64) {
            i.set_near_branch64(i.near_branch64().wrapping_add(delta));
        }
        if i.code() == Code::Mov_r64_imm64 && buffer_address(from, i.immediate64()).is_some() {
            let imm = i.immediate64();
            i.set_immediate64((imm & !0xffff_ffff) | (imm as u32).wrapping_add(delta as u32) as u64);
        }
        let bytes = encode(&i, to.insn + out.len() as u64);
        assert_eq!(bytes.len(), len, "{} changed length when moved", forms::format_insn(&i));
        out.extend(bytes);
    }
    out
}

/// The buffer address `v` holds as a base or index register: all of it,
/// or its low half (32-bit addressing ignores the upper one, which setup
/// fills with garbage). Arenas lie below 4 GiB.
fn buffer_address(layout: &Layout, v: u64) -> Option<u64> {
    let low = v & 0xffff_ffff;
    layout.in_buf(low, 1).then_some(low)
}

/// The listing of `code` at `at`: offset, bytes, disassembly, and where
/// branches go.
pub fn listing(code: &[u8], at: u64, layout: &Layout) -> String {
    let mut out = String::new();
    for i in decode(code, at) {
        let off = i.ip() - at;
        let bytes = &code[off as usize..off as usize + i.len()];
        let mut text = forms::format_insn(&i);
        if i.is_jcc_short_or_near() || i.is_jmp_short_or_near() || i.is_call_near() {
            text = format!("{} +{:#x}", format!("{:?}", i.mnemonic()).to_lowercase(), i.near_branch_target() - at);
        }
        let mem = if (0..i.op_count()).any(|n| i.op_kind(n) == OpKind::Memory) && i.is_ip_rel_memory_operand() {
            format!("  ; buf+{:#x}", i.ip_rel_memory_address().wrapping_sub(layout.buf))
        } else if let Some(a) = buffer_address(layout, i.immediate64()).filter(|_| i.code() == Code::Mov_r64_imm64) {
            format!("  ; buf+{:#x}", a - layout.buf)
        } else {
            String::new()
        };
        out.push_str(&format!("    +{off:#05x}  {:<32} {text}{mem}\n", crate::compare::hex(bytes)));
    }
    out.push_str(&format!("    +{:#05x}  (end)\n", code.len()));
    out
}
