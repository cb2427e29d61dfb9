//! Random initial states for one form: a deterministic xorshift generator,
//! "interesting" integer and float values (boundaries, ±0, ±inf, quiet and
//! signalling NaNs with payloads, denormals, values near integer limits),
//! operand access on a state (registers of every width, XMM, memory in the
//! scratch buffer), and the per-instruction steering that keeps states
//! valid: memory operands inside the buffer, the stack in the buffer,
//! no divide faults, bounded bit offsets and string lengths, and the
//! equal-operand cases (cmpxchg success, zero bsf sources, equal strings)
//! that random values would rarely hit.

use aarchx_ir::GuestState;
use iced_x86::{Instruction, Mnemonic, OpKind, Register};

use crate::forms::Form;
use crate::layout::{Layout, BUF_SIZE};

/// xorshift64*: small, fast and deterministic.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability 1/n.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A 64-bit FNV-1a hash, for per-form seeds.
pub fn hash(s: &[u8]) -> u64 {
    s.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3))
}

/// One initial state: guest registers and the scratch buffer's bytes.
#[derive(Clone)]
pub struct Case {
    pub state: GuestState,
    pub mem: Vec<u8>,
}

const BOUNDARIES: [u64; 20] = [
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX,
    u64::MAX - 1,
    0x8000_0000_0000_0001,
    0x5555_5555_5555_5555,
];

/// An integer that is often a boundary, small, or a sign-extended narrow value.
pub fn interesting_u64(rng: &mut Rng) -> u64 {
    match rng.below(10) {
        0 => rng.below(70),
        1 => rng.pick(&BOUNDARIES),
        2 => rng.pick(&BOUNDARIES) ^ rng.below(4),
        3 => rng.below(70).wrapping_neg(),
        4 => {
            let w = rng.pick(&[8u32, 16, 32]);
            rng.next() & ((1u64 << w) - 1)
        }
        5 => {
            let w = rng.pick(&[8u32, 16, 32]);
            let v = rng.next() << (64 - w);
            ((v as i64) >> (64 - w)) as u64
        }
        _ => rng.next(),
    }
}

const F64_SPECIALS: [u64; 30] = [
    0x0000_0000_0000_0000, // +0
    0x8000_0000_0000_0000, // -0
    0x7ff0_0000_0000_0000, // +inf
    0xfff0_0000_0000_0000, // -inf
    0x7ff8_0000_0000_0000, // default QNaN (positive)
    0xfff8_0000_0000_0000, // x86 default NaN ("indefinite")
    0x7ff0_0000_0000_0001, // SNaN
    0x3ff0_0000_0000_0000, // 1.0
    0xbff0_0000_0000_0000, // -1.0
    0x3fe0_0000_0000_0000, // 0.5
    0x3ff8_0000_0000_0000, // 1.5
    0x4004_0000_0000_0000, // 2.5
    0xc004_0000_0000_0000, // -2.5
    0x0010_0000_0000_0000, // smallest normal
    0x000f_ffff_ffff_ffff, // largest denormal
    0x0000_0000_0000_0001, // smallest denormal
    0x7fef_ffff_ffff_ffff, // largest finite
    0xffef_ffff_ffff_ffff, // most negative finite
    0x41df_ffff_ffc0_0000, // 2^31 - 1
    0x41e0_0000_0000_0000, // 2^31
    0xc1e0_0000_0000_0000, // -2^31
    0xc1e0_0000_0020_0000, // -2^31 - 1
    0x41df_ffff_ffe0_0000, // 2^31 - 0.5
    0x43e0_0000_0000_0000, // 2^63
    0xc3e0_0000_0000_0000, // -2^63
    0x43df_ffff_ffff_ffff, // largest double below 2^63
    0x41f0_0000_0000_0000, // 2^32
    0x4330_0000_0000_0000, // 2^52
    0x40df_ffe0_0000_0000, // 32767.5
    0x47ef_ffff_e000_0000, // f32::MAX as f64
];

const F32_SPECIALS: [u32; 26] = [
    0x0000_0000, // +0
    0x8000_0000, // -0
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x7fc0_0000, // QNaN
    0xffc0_0000, // x86 default NaN
    0x7f80_0001, // SNaN
    0x3f80_0000, // 1.0
    0xbf80_0000, // -1.0
    0x3f00_0000, // 0.5
    0x3fc0_0000, // 1.5
    0x4020_0000, // 2.5
    0xc020_0000, // -2.5
    0x0080_0000, // smallest normal
    0x007f_ffff, // largest denormal
    0x0000_0001, // smallest denormal
    0x7f7f_ffff, // largest finite
    0xff7f_ffff, // most negative finite
    0x4f00_0000, // 2^31
    0xcf00_0000, // -2^31
    0x4eff_ffff, // largest float below 2^31
    0x5f00_0000, // 2^63
    0xdf00_0000, // -2^63
    0x4f80_0000, // 2^32
    0x46ff_fe00, // 32767.0
    0x4b00_0000, // 2^23
];

/// A double that is often special: NaNs get random payloads and signs.
pub fn f64_bits(rng: &mut Rng) -> u64 {
    match rng.below(8) {
        0 | 1 | 2 => rng.pick(&F64_SPECIALS),
        3 => {
            // NaN, quiet or signalling, random payload and sign.
            let quiet = if rng.one_in(2) { 1u64 << 51 } else { 0 };
            let payload = (rng.next() & ((1u64 << 51) - 1)) | if quiet == 0 { 1 } else { 0 };
            (rng.next() & (1 << 63)) | 0x7ff0_0000_0000_0000 | quiet | payload
        }
        4 => (rng.next() & (1 << 63)) | (rng.next() & ((1u64 << 52) - 1)), // denormal
        5 => ((rng.next() as i32) as f64).to_bits(),
        6 => ((rng.next() >> (rng.below(40) + 11)) as f64 * if rng.one_in(2) { -0.25 } else { 1.5 }).to_bits(),
        _ => rng.next(),
    }
}

pub fn f32_bits(rng: &mut Rng) -> u32 {
    match rng.below(8) {
        0 | 1 | 2 => rng.pick(&F32_SPECIALS),
        3 => {
            let quiet = if rng.one_in(2) { 1u32 << 22 } else { 0 };
            let payload = (rng.next() as u32 & ((1u32 << 22) - 1)) | if quiet == 0 { 1 } else { 0 };
            (rng.next() as u32 & (1 << 31)) | 0x7f80_0000 | quiet | payload
        }
        4 => (rng.next() as u32 & (1 << 31)) | (rng.next() as u32 & ((1u32 << 23) - 1)),
        5 => ((rng.next() as i16) as f32).to_bits(),
        6 => ((rng.next() >> (rng.below(50) + 14)) as f32 * if rng.one_in(2) { -0.25 } else { 1.5 }).to_bits(),
        _ => rng.next() as u32,
    }
}

/// 16 bytes seen as doubles, floats, integers or random bits.
pub fn xmm_bits(rng: &mut Rng) -> u128 {
    match rng.below(5) {
        0 => u128::from(rng.next()) | (u128::from(rng.next()) << 64),
        1 => u128::from(f64_bits(rng)) | (u128::from(f64_bits(rng)) << 64),
        2 => (0..4).fold(0u128, |acc, i| acc | (u128::from(f32_bits(rng)) << (32 * i))),
        3 => {
            // Lanes at integer boundaries: saturating arithmetic, packs, compares.
            let lane = rng.pick(&[8u32, 16, 32, 64]);
            (0..128 / lane).fold(0u128, |acc, i| {
                let v = interesting_u64(rng) & if lane == 64 { u64::MAX } else { (1u64 << lane) - 1 };
                acc | (u128::from(v) << (lane * i))
            })
        }
        _ => u128::from(interesting_u64(rng)) | (u128::from(interesting_u64(rng)) << 64),
    }
}

/// An MXCSR: a third of the time the default, else any rounding mode,
/// FTZ and DAZ each half the time, random sticky flags, and now and then
/// unmasked exceptions (the instruction may then raise SIGFPE).
pub fn mxcsr_bits(rng: &mut Rng) -> u32 {
    if rng.one_in(3) {
        return 0x1f80;
    }
    let flags = rng.next() as u32 & 0x3f;
    let masks = if rng.one_in(8) { (rng.next() as u32 & 0x3f) << 7 } else { 0x1f80 };
    let rc = (rng.below(4) as u32) << 13;
    let ftz = if rng.one_in(2) { 0x8000 } else { 0 };
    let daz = if rng.one_in(2) { 0x40 } else { 0 };
    flags | masks | rc | ftz | daz
}

/// The buffer: 8-byte chunks of random bits, special doubles and floats,
/// and interesting integers.
fn fill_buffer(rng: &mut Rng, mem: &mut [u8]) {
    for chunk in mem.chunks_mut(8) {
        let v = match rng.below(6) {
            0 | 1 => rng.next(),
            2 => f64_bits(rng),
            3 => u64::from(f32_bits(rng)) | (u64::from(f32_bits(rng)) << 32),
            _ => interesting_u64(rng),
        };
        chunk.copy_from_slice(&v.to_le_bytes()[..chunk.len()]);
    }
}

// Operand access on a case.

/// Index of a GPR in `GuestState::gpr` and the bit offset (8 for ah..bh).
fn gpr_slot(r: Register) -> (usize, u32) {
    let high = matches!(r, Register::AH | Register::CH | Register::DH | Register::BH);
    (r.full_register().number(), if high { 8 } else { 0 })
}

/// A register's value (an XMM or YMM register: its low 128 bits; an mm
/// register: the significand of its x87 register).
pub fn get_reg(st: &GuestState, r: Register) -> u128 {
    if r.is_xmm() || r.is_ymm() {
        return st.xmm[r.number()];
    }
    if r.is_mm() {
        return st.st[mm_number(r)] & u128::from(u64::MAX);
    }
    let (i, shift) = gpr_slot(r);
    let bits = 8 * r.size() as u32;
    let v = st.gpr[i] >> shift;
    u128::from(if bits == 64 { v } else { v & (1u64.wrapping_shl(bits) - 1) })
}

/// Writes a register at its width; the other bits of the slot are kept
/// (an XMM or YMM register: its low 128 bits).
pub fn set_reg(st: &mut GuestState, r: Register, v: u128) {
    if r.is_xmm() || r.is_ymm() {
        st.xmm[r.number()] = v;
        return;
    }
    if r.is_mm() {
        let p = mm_number(r);
        st.st[p] = st.st[p] & !u128::from(u64::MAX) | v & u128::from(u64::MAX);
        return;
    }
    let (i, shift) = gpr_slot(r);
    let bits = 8 * r.size() as u32;
    let mask = if bits == 64 { u64::MAX } else { (1u64.wrapping_shl(bits) - 1) << shift };
    st.gpr[i] = (st.gpr[i] & !mask) | (((v as u64) << shift) & mask);
}

/// The number of an mm register (mm3: 3), which is its x87 register's.
fn mm_number(r: Register) -> usize {
    r as usize - Register::MM0 as usize
}

/// The effective address of the instruction's memory operand on `st`.
pub fn effective_address(insn: &Instruction, st: &GuestState) -> u64 {
    if insn.is_ip_rel_memory_operand() {
        return insn.ip_rel_memory_address();
    }
    let base = insn.memory_base();
    let index = insn.memory_index();
    let mut a = insn.memory_displacement64();
    if base != Register::None {
        a = a.wrapping_add(get_reg(st, base) as u64);
    }
    if index != Register::None {
        a = a.wrapping_add((get_reg(st, index) as u64).wrapping_mul(u64::from(insn.memory_index_scale())));
    }
    if base.size() == 4 || index.size() == 4 {
        a &= 0xffff_ffff;
    }
    a
}

/// Size in bytes of operand `n` (memory: the memory operand's size).
pub fn op_size(insn: &Instruction, n: u32) -> usize {
    match insn.op_kind(n) {
        OpKind::Register => insn.op_register(n).size(),
        OpKind::Memory => insn.memory_size().size(),
        _ => 0,
    }
}

pub fn read_mem(case: &Case, layout: &Layout, addr: u64, size: usize) -> u128 {
    assert!(layout.in_buf(addr, size as u64), "operand at {addr:#x} outside the buffer");
    let off = (addr - layout.buf) as usize;
    case.mem[off..off + size].iter().rev().fold(0u128, |acc, b| (acc << 8) | u128::from(*b))
}

pub fn write_mem(case: &mut Case, layout: &Layout, addr: u64, size: usize, v: u128) {
    assert!(layout.in_buf(addr, size as u64), "operand at {addr:#x} outside the buffer");
    let off = (addr - layout.buf) as usize;
    for (k, b) in case.mem[off..off + size].iter_mut().enumerate() {
        *b = (v >> (8 * k)) as u8;
    }
}

/// Reads register or memory operand `n`.
pub fn read_op(case: &Case, layout: &Layout, insn: &Instruction, n: u32) -> u128 {
    match insn.op_kind(n) {
        OpKind::Register => get_reg(&case.state, insn.op_register(n)),
        OpKind::Memory => read_mem(case, layout, effective_address(insn, &case.state), op_size(insn, n)),
        _ => u128::from(insn.immediate(n)),
    }
}

/// Writes register or memory operand `n` (immediates are left alone).
pub fn write_op(case: &mut Case, layout: &Layout, insn: &Instruction, n: u32, v: u128) {
    match insn.op_kind(n) {
        OpKind::Register => set_reg(&mut case.state, insn.op_register(n), v),
        OpKind::Memory => {
            let a = effective_address(insn, &case.state);
            write_mem(case, layout, a, op_size(insn, n), v)
        }
        _ => {}
    }
}

fn is_data(insn: &Instruction, n: u32) -> bool {
    matches!(insn.op_kind(n), OpKind::Register | OpKind::Memory)
}

// Where things live in the buffer.

/// Memory operands are placed in [MEM_LO, MEM_HI): a bit-test offset or a
/// stack access beside them stays inside the buffer.
const MEM_LO: u64 = 1024;
const MEM_HI: u64 = 3072;
/// The guest stack pointer lies in [STACK_LO, STACK_HI).
const STACK_LO: u64 = 1536;
const STACK_HI: u64 = 2560;

/// Generates the next random state for `form`.
pub fn generate(form: &Form, layout: &Layout, rng: &mut Rng) -> Case {
    let mut case = random_case(layout, form.insn.ip(), rng);
    // Every SSE form is checked under any MXCSR (rounding, FTZ, DAZ,
    // sticky flags, unmasked exceptions); the fuzzed sequences keep the
    // default.
    case.state.mxcsr = mxcsr_bits(rng);
    if form.accesses_memory() {
        for (r, v) in memory_registers(form, layout, rng) {
            set_reg(&mut case.state, r, u128::from(v));
        }
    }
    steer(form, layout, rng, &mut case);
    crate::x87::steer(form, layout, rng, &mut case);
    steer_mmx(form, layout, rng, &mut case);
    case
}

/// A random state at `rip`, not steered for any instruction: interesting
/// GPRs, flags (DF both ways) and XMM registers, a random buffer, and the
/// guest rsp in the buffer's stack area.
pub fn random_case(layout: &Layout, rip: u64, rng: &mut Rng) -> Case {
    let mut st = GuestState::default();
    for g in st.gpr.iter_mut() {
        *g = interesting_u64(rng);
    }
    let flags = rng.next();
    for (k, f) in st.flags.iter_mut().take(7).enumerate() {
        *f = ((flags >> k) & 1) as u8;
    }
    for x in st.xmm.iter_mut().chain(st.ymm_hi.iter_mut()) {
        *x = xmm_bits(rng);
    }
    st.rip = rip;
    let mut mem = vec![0u8; BUF_SIZE];
    fill_buffer(rng, &mut mem);
    st.gpr[4] = layout.buf + STACK_LO + (rng.below(STACK_HI - STACK_LO) & !7);
    Case { state: st, mem }
}

/// The values of the base and index registers (full registers) that put
/// the memory operand in the buffer; none for RIP-relative and absolute
/// operands, which the form placed there.
pub fn memory_registers(form: &Form, layout: &Layout, rng: &mut Rng) -> Vec<(Register, u64)> {
    let insn = &form.insn;
    let base = insn.memory_base();
    let index = insn.memory_index();
    if insn.is_ip_rel_memory_operand() || (base == Register::None && index == Register::None) {
        return Vec::new();
    }
    let size = crate::forms::memory_bytes(insn.memory_size()).max(1);
    let align = if form.align > 1 {
        form.align
    } else if rng.one_in(2) {
        size.next_power_of_two().min(16)
    } else {
        1
    };
    let ea = (layout.buf + MEM_LO + rng.below(MEM_HI - MEM_LO - size)) & !(align - 1);
    let disp = insn.memory_displacement64();
    let scale = u64::from(insn.memory_index_scale());
    let addr32 = base.size() == 4 || index.size() == 4;
    // The upper half is ignored by 32-bit addressing: make it garbage.
    let put = |r: Register, v: u64, rng: &mut Rng| {
        (r.full_register(), if addr32 { (rng.next() << 32) | (v & 0xffff_ffff) } else { v })
    };
    if base == Register::None {
        // [index*scale + disp]: choose the address so the division is exact.
        let ea = ea - (ea.wrapping_sub(disp) % scale);
        return vec![put(index, ea.wrapping_sub(disp) / scale, rng)];
    }
    let idx = if index == Register::None { 0 } else { (rng.below(129) as i64 - 64) as u64 };
    let mut regs = Vec::new();
    if index != Register::None {
        regs.push(put(index, idx, rng));
    }
    regs.push(put(base, ea.wrapping_sub(disp).wrapping_sub(idx.wrapping_mul(scale)), rng));
    regs
}

/// The accumulator and data registers of a one-operand mul/div of `size` bytes.
fn acc_data(size: usize) -> (Register, Register) {
    match size {
        1 => (Register::AL, Register::AH),
        2 => (Register::AX, Register::DX),
        4 => (Register::EAX, Register::EDX),
        _ => (Register::RAX, Register::RDX),
    }
}

/// Whether div/idiv faults on this case.
pub fn divide_faults(case: &Case, layout: &Layout, insn: &Instruction) -> bool {
    let size = op_size(insn, 0);
    let bits = 8 * size as u32;
    let (acc, data) = acc_data(size);
    let d = read_op(case, layout, insn, 0);
    let (hi, lo) = (get_reg(&case.state, data), get_reg(&case.state, acc));
    if d == 0 {
        return true;
    }
    let signed = insn.mnemonic() == Mnemonic::Idiv;
    if bits == 64 {
        let dividend = (hi << 64) | lo;
        if signed {
            let n = dividend as i128;
            let d = d as u64 as i64 as i128;
            if n == i128::MIN && d == -1 {
                return true;
            }
            let q = n / d;
            q < i128::from(i64::MIN) || q > i128::from(i64::MAX)
        } else {
            dividend / d > u128::from(u64::MAX)
        }
    } else {
        let dividend = (hi << bits) | lo;
        if signed {
            let sh = 128 - 2 * bits;
            let n = ((dividend << sh) as i128) >> sh;
            let dsh = 128 - bits;
            let d = ((d << dsh) as i128) >> dsh;
            let q = n / d;
            let lim = 1i128 << (bits - 1);
            q < -lim || q >= lim
        } else {
            dividend / d >= 1u128 << bits
        }
    }
}

/// Per-instruction adjustments that keep the state valid and reach the
/// cases random values rarely hit.
fn steer(form: &Form, layout: &Layout, rng: &mut Rng, case: &mut Case) {
    use Mnemonic as M;
    let insn = &form.insn;
    let m = insn.mnemonic();
    if form.string {
        steer_string(insn, layout, rng, case);
        return;
    }
    // Equal operands, now and then: ZF, cmov/cmpxchg success, x - x.
    if insn.op_count() >= 2
        && is_data(insn, 0)
        && is_data(insn, 1)
        && op_size(insn, 0) == op_size(insn, 1)
        && !matches!(m, M::Div | M::Idiv | M::Bt | M::Bts | M::Btr | M::Btc | M::Lea)
        && rng.one_in(8)
    {
        let v = read_op(case, layout, insn, 1);
        write_op(case, layout, insn, 0, v);
    }
    match m {
        M::Div | M::Idiv => {
            let size = op_size(insn, 0);
            let (acc, data) = acc_data(size);
            let bits = 8 * size as u32;
            let mask = if bits == 64 { u128::from(u64::MAX) } else { (1u128 << bits) - 1 };
            for attempt in 0..64 {
                if !divide_faults(case, layout, insn) {
                    return;
                }
                let d = read_op(case, layout, insn, 0);
                if d == 0 || attempt > 32 {
                    write_op(case, layout, insn, 0, u128::from(interesting_u64(rng) | 1) & mask);
                }
                let d = read_op(case, layout, insn, 0);
                if m == M::Div {
                    // Half the time a dividend that fits in the low half
                    // (`xor edx, edx`), which the lifter divides alone.
                    let hi = if rng.one_in(2) { 0 } else { (u128::from(rng.next()) & mask) % d.max(1) };
                    set_reg(&mut case.state, data, hi);
                } else {
                    // Sign-extend the low half into the high half: the
                    // quotient then fits unless it is MIN / -1.
                    let lo = get_reg(&case.state, acc);
                    let neg = (lo >> (bits - 1)) & 1 != 0;
                    set_reg(&mut case.state, data, if neg { mask } else { 0 });
                    if attempt > 48 {
                        set_reg(&mut case.state, acc, u128::from(rng.below(1000)));
                        set_reg(&mut case.state, data, 0);
                    }
                }
            }
            assert!(!divide_faults(case, layout, insn), "could not steer {} away from #DE", form.text);
        }
        M::Bt | M::Bts | M::Btr | M::Btc
            if insn.op_kind(0) == OpKind::Memory && insn.op_kind(1) == OpKind::Register =>
        {
            write_op(case, layout, insn, 1, u128::from(bit_offset(rng) as u64));
        }
        M::Bsf | M::Bsr | M::Tzcnt | M::Lzcnt | M::Popcnt if rng.one_in(6) => write_op(case, layout, insn, 1, 0),
        M::Cmpxchg if rng.one_in(2) => {
            let v = read_op(case, layout, insn, 0);
            let (acc, _) = acc_data(op_size(insn, 0));
            set_reg(&mut case.state, acc, v);
        }
        M::Shld | M::Shrd if op_size(insn, 0) == 2 && insn.op_kind(2) == OpKind::Register => {
            set_reg(&mut case.state, Register::CL, u128::from(double_shift_count(rng)));
        }
        M::Pcmpistri | M::Pcmpistrm | M::Pcmpestri | M::Pcmpestrm | M::Pcmpestri64 | M::Pcmpestrm64 => {
            steer_string_compare(insn, layout, rng, case)
        }
        M::Xsave | M::Xsave64 | M::Xrstor | M::Xrstor64 => steer_xsave(insn, layout, rng, case),
        _ if insn.memory_index().is_xmm() || insn.memory_index().is_ymm() => steer_gather(insn, layout, rng, case),
        M::Vcvtph2ps | M::Vcvtps2ph if rng.one_in(4) => {}
        M::Vcvtph2ps => steer_f16c(insn, layout, case, 16, || u128::from(f16_bits(rng))),
        M::Vcvtps2ph => steer_f16c(insn, layout, case, 32, || u128::from(f32_near_f16(rng))),
        // Start, length and index within and around the width, now and then.
        M::Bextr if rng.one_in(2) => write_op(case, layout, insn, 2, u128::from(rng.below(70) | rng.below(70) << 8)),
        M::Bzhi if rng.one_in(2) => write_op(case, layout, insn, 2, u128::from(rng.below(70))),
        M::Blsi | M::Blsmsk | M::Blsr if rng.one_in(6) => write_op(case, layout, insn, 1, 0),
        M::Leave => {
            case.state.gpr[5] = layout.buf + STACK_LO + (rng.below(STACK_HI - STACK_LO) & !7);
        }
        M::Popfq => {
            // Only status flags, DF and IF (ignored in user mode): TF or AC
            // would trap or fault the host code after.
            let v = (rng.next() & 0x0ed7) | 2;
            let sp = case.state.gpr[4];
            write_mem(case, layout, sp, 8, u128::from(v));
        }
        _ => {}
    }
}

/// A gather: the base in the buffer and every index element (dwords or
/// qwords, by the mnemonic) small and now and then negative, so that each
/// element's address lies in the buffer.
fn steer_gather(insn: &Instruction, layout: &Layout, rng: &mut Rng, case: &mut Case) {
    use Mnemonic as M;
    let base = insn.memory_base();
    let at = layout.buf + MEM_LO + 256 + rng.below(512);
    let disp = insn.memory_displacement64();
    case.state.gpr[base.full_register().number()] = at.wrapping_sub(disp);
    let qword_index = matches!(insn.mnemonic(), M::Vgatherqps | M::Vgatherqpd | M::Vpgatherqd | M::Vpgatherqq);
    let (lane, lanes) = if qword_index { (64, 2) } else { (32, 4) };
    let n = insn.memory_index().number();
    let index = |rng: &mut Rng| {
        (0..lanes).fold(0u128, |acc, k| {
            let i = rng.below(64) as i64 - 16;
            acc | (u128::from(i as u64) & ((1u128 << lane) - 1)) << (lane * k)
        })
    };
    case.state.xmm[n] = index(rng);
    case.state.ymm_hi[n] = index(rng);
}

/// An f16, often special: zeros, denormals, the smallest normal, the
/// largest finite, infinities, NaNs quiet and signalling with random
/// payloads, of either sign; else random bits.
fn f16_bits(rng: &mut Rng) -> u16 {
    let sign = if rng.one_in(2) { 0x8000 } else { 0 };
    let fraction = rng.next() as u16 & 0x3ff;
    sign | match rng.below(8) {
        0 => rng.pick(&[0x0000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0x7c00, 0x7e00, 0x7c01, 0x7dff]),
        1 => fraction,
        2 => 0x7c00 | fraction.max(1),
        _ => rng.next() as u16 & 0x7fff,
    }
}

/// An f32 near the edges of the f16 range: about the largest finite
/// (65504) and where rounding reaches infinity (65520), the smallest
/// normal (2^-14) and the smallest denormal (2^-24) and half of it, each
/// give or take a few units in the last place of either format; else as
/// [`f32_bits`].
fn f32_near_f16(rng: &mut Rng) -> u32 {
    let sign = if rng.one_in(2) { 1 << 31 } else { 0 };
    let edge: u32 = rng.pick(&[0x477f_e000, 0x477f_f000, 0x3880_0000, 0x3380_0000, 0x3300_0000]);
    let step = if rng.one_in(2) { 1 } else { 1 << 12 };
    let offset = (rng.below(9) as u32).wrapping_sub(4).wrapping_mul(step);
    match rng.below(3) {
        0 => f32_bits(rng),
        _ => sign | edge.wrapping_add(offset),
    }
}

/// vcvtph2ps, vcvtps2ph: the source's elements of `bits` bits (its YMM
/// upper half too) drawn by `element`.
fn steer_f16c(insn: &Instruction, layout: &Layout, case: &mut Case, bits: u32, mut element: impl FnMut() -> u128) {
    let mut lanes = |count: usize| (0..count).fold(0u128, |acc, i| acc | element() << (bits as usize * i));
    let bytes = op_size(insn, 1);
    let low = lanes(bytes.min(16) * 8 / bits as usize);
    write_op(case, layout, insn, 1, low);
    if insn.op_kind(1) == OpKind::Register && insn.op_register(1).is_ymm() {
        case.state.ymm_hi[insn.op_register(1).number()] = lanes(128 / bits as usize);
    }
}

/// Whether `insn` is an MMX instruction: emms, or one with an mm register
/// operand (or maskmovdqu, which stores to [rdi] as maskmovq).
fn is_mmx(insn: &Instruction) -> bool {
    let mm = (0..insn.op_count()).any(|n| insn.op_kind(n) == OpKind::Register && insn.op_register(n).is_mm());
    mm || matches!(insn.mnemonic(), Mnemonic::Emms | Mnemonic::Maskmovdqu | Mnemonic::Vmaskmovdqu)
}

/// An MMX form: x87 registers of random significands (integers of
/// interest) under sign and exponent words mostly not all ones, any TOP
/// and tags (so the TOP, tag and exponent writes of MMX instructions
/// show), condition codes, and now and then an unmasked exception
/// pending (ES set: the instruction raises #MF); maskmov's [rdi] in the
/// buffer.
fn steer_mmx(form: &Form, layout: &Layout, rng: &mut Rng, case: &mut Case) {
    let insn = &form.insn;
    if !is_mmx(insn) {
        return;
    }
    let st = &mut case.state;
    for r in st.st.iter_mut() {
        let exp = if rng.one_in(8) { 0xffff } else { rng.next() & 0xffff };
        *r = u128::from(exp) << 64 | u128::from(interesting_u64(rng));
    }
    st.fptag = rng.next() as u8;
    let top = rng.below(8) as u16;
    let cc = (rng.next() as u16) & 0x4700;
    st.fpsw = top << 11 | cc;
    if rng.one_in(8) {
        // Precision unmasked and raised: pending.
        st.fpcw = GuestState::FPCW_DEFAULT & !0x20;
        st.fpsw |= 0x20 | 0x80 | 0x8000;
    } else if rng.one_in(4) {
        // Masked flags raised: nothing pending.
        st.fpsw |= rng.next() as u16 & 0x3f;
    }
    if matches!(insn.mnemonic(), Mnemonic::Maskmovq | Mnemonic::Maskmovdqu | Mnemonic::Vmaskmovdqu) {
        st.gpr[7] = layout.buf + MEM_LO + rng.below(MEM_HI - MEM_LO - 16);
    }
}

/// xsave, xrstor: a requested-feature bitmap (edx:eax) within this CPU
/// model's XCR0 (x87, SSE, AVX; the host's enables more), with garbage
/// in the upper halves of rax and rdx, which are not read; an x87 unit in
/// use (a CPU reports one in its initial configuration as not in use in
/// XSTATE_BV, which this model never does); and for xrstor an area the
/// CPU accepts: XSTATE_BV within XCR0, the header's next 16 bytes zero, a
/// valid MXCSR and x87 control word.
fn steer_xsave(insn: &Instruction, layout: &Layout, rng: &mut Rng, case: &mut Case) {
    let st = &mut case.state;
    st.gpr[0] = (st.gpr[0] & !0xffff_ffff) | rng.below(8);
    st.gpr[2] &= !0xffff_ffff;
    st.fptag |= 1 << rng.below(8);
    if !matches!(insn.mnemonic(), Mnemonic::Xrstor | Mnemonic::Xrstor64) {
        return;
    }
    let area = effective_address(insn, &case.state);
    write_mem(case, layout, area + 512, 8, u128::from(rng.below(8)));
    write_mem(case, layout, area + 520, 16, 0);
    write_mem(case, layout, area + 24, 4, u128::from(mxcsr_bits(rng)));
    let pc = [3u16, 3, 2, 0][rng.below(4) as usize];
    let fpcw = 0x007f | pc << 8 | (rng.below(4) as u16) << 10;
    write_mem(case, layout, area, 2, u128::from(fpcw));
}

/// pcmpXstrX: mostly strings over a small alphabet (so elements match
/// and fall in ranges), with nulls and negative elements now and then,
/// and lengths in eax/edx (rax/rdx) mostly near the element count, often
/// negative; random operands are kept now and then.
fn steer_string_compare(insn: &Instruction, layout: &Layout, rng: &mut Rng, case: &mut Case) {
    let words = insn.immediate8() & 1 != 0;
    let (bits, count) = if words { (16, 8) } else { (8, 16) };
    for n in 0..2 {
        if rng.one_in(6) {
            continue;
        }
        let mut v = 0u128;
        for e in 0..count {
            let x: u128 = match rng.below(10) {
                0 => 0,
                1 => (1u128 << (bits - 1)) | u128::from(rng.below(3)),
                2 => u128::from(rng.next()) & ((1 << bits) - 1),
                _ => 0x61 + u128::from(rng.below(4)),
            };
            v |= x << (bits * e);
        }
        write_op(case, layout, insn, n, v);
    }
    for r in [Register::RAX, Register::RDX] {
        match rng.below(6) {
            0 => {}
            1 => set_reg(&mut case.state, r, u128::from(rng.next())),
            _ => {
                // Upper bits that only the REX.W forms read, now and then.
                let len = rng.below(41) as i64 - 20;
                let high = if rng.one_in(4) { rng.next() << 32 } else { 0 };
                let v = if rng.one_in(4) { (len as u32 as u64) | high } else { len as u64 };
                set_reg(&mut case.state, r, u128::from(v));
            }
        }
    }
}

/// A bit offset for bt/bts/btr/btc on memory with a register offset: it
/// addresses memory beside the operand, so it stays within ±64 bytes.
pub fn bit_offset(rng: &mut Rng) -> i64 {
    rng.below(1024) as i64 - 512
}

/// A cl for a 16-bit shld/shrd: masked, at most 16 (a 16-bit double shift
/// by more than 16 has an undefined result).
pub fn double_shift_count(rng: &mut Rng) -> u64 {
    (rng.below(8) << 5) | rng.below(17)
}

/// rsi, rdi in the buffer, a small count for rep forms, and now and then
/// equal operands so repe/repne run more than one step.
fn steer_string(insn: &Instruction, layout: &Layout, rng: &mut Rng, case: &mut Case) {
    fill_string(insn, layout, rng, case);
    if string_addr32(insn) {
        // 32-bit address size: esi, edi and ecx count; the upper halves
        // are garbage the instruction must ignore.
        for k in [1, 6, 7] {
            case.state.gpr[k] = (case.state.gpr[k] & 0xffff_ffff) | (rng.next() << 32);
        }
    }
}

/// Whether a string instruction uses 32-bit addresses (0x67 prefix).
pub fn string_addr32(insn: &Instruction) -> bool {
    (0..insn.op_count()).any(|n| matches!(insn.op_kind(n), OpKind::MemorySegESI | OpKind::MemoryESEDI))
}

fn fill_string(insn: &Instruction, layout: &Layout, rng: &mut Rng, case: &mut Case) {
    let st = &mut case.state;
    st.gpr[6] = layout.buf + MEM_LO + rng.below(MEM_HI - MEM_LO);
    st.gpr[7] = layout.buf + MEM_LO + rng.below(MEM_HI - MEM_LO);
    let rep = insn.has_rep_prefix() || insn.has_repne_prefix();
    if rep {
        st.gpr[1] = if rng.one_in(4) { rng.below(3) } else { rng.below(9) };
    }
    let size = insn.memory_size().size() as u64;
    let count = if rep { st.gpr[1].max(1) } else { 1 };
    let down = st.flags[6] != 0;
    // The lowest address of the `count` elements starting at `start`.
    let lowest = |start: u64| if down { start - (count - 1) * size } else { start };
    let (rsi, rdi) = (st.gpr[6], st.gpr[7]);
    let m = insn.mnemonic();
    if matches!(m, Mnemonic::Movsb | Mnemonic::Movsw | Mnemonic::Movsd | Mnemonic::Movsq) && rng.one_in(3) {
        // Overlapping source and destination: rep movs copies element by element.
        st.gpr[7] = rsi.wrapping_add(rng.below(33)).wrapping_sub(16);
        return;
    }
    let cmps = matches!(m, Mnemonic::Cmpsb | Mnemonic::Cmpsw | Mnemonic::Cmpsd | Mnemonic::Cmpsq);
    let scas = matches!(m, Mnemonic::Scasb | Mnemonic::Scasw | Mnemonic::Scasd | Mnemonic::Scasq);
    if !(cmps || scas) {
        return;
    }
    let mode = rng.below(3);
    if mode == 0 {
        return;
    }
    let len = (count * size) as usize;
    let dst = (lowest(rdi) - layout.buf) as usize;
    // The element values the comparison would call equal.
    let same: Vec<u8> = if cmps {
        let src = (lowest(rsi) - layout.buf) as usize;
        case.mem[src..src + len].to_vec()
    } else {
        let acc = case.state.gpr[0].to_le_bytes();
        (0..len).map(|k| acc[k % size as usize]).collect()
    };
    let k = rng.below(count) as usize * size as usize;
    if mode == 2 && insn.has_repne_prefix() {
        // repne: one element matches.
        case.mem[dst + k..dst + k + size as usize].copy_from_slice(&same[k..k + size as usize]);
    } else {
        // All equal (repe runs to the end), or all but one.
        case.mem[dst..dst + len].copy_from_slice(&same);
        if mode == 2 {
            case.mem[dst + k + rng.below(size) as usize] ^= 1 << rng.below(8);
        }
    }
}
