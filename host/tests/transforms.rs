//! The optimisation passes keep the lifter's semantics: each sequence of a
//! flag-setting instruction and a flag consumer (jcc, setcc, cmovcc,
//! adc/sbb), lifted, runs on the interpreter before and after
//! `state-forward`, `const-fold`, `cse`, `cond-fusion`, `dead-flags`, `sink` and `dce`, from random
//! states and memory, and must end in the same guest state (every
//! register, flag and vector register, rip; MXCSR's sticky exception flags
//! may be fewer, as a dropped dead float op raises none), store the same
//! bytes and leave the same way. Every flag must match, except on a taken branch
//! whose target (readable guest code here) overwrites the status flags
//! before reading them: `dead-flags` may leave them uncomputed there. (The lifter itself is checked
//! against the CPU by the oracle test.)

use aarchx::interp::run_region;
use aarchx::machine::Machine;
use aarchx::machine::RegionExit;
use std::collections::BTreeMap;

use aarchx_ir::cond::Helper;
use aarchx_ir::print::print;
use aarchx_ir::verify::verify;
use aarchx_ir::{GuestState, Region, Type};
use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, Pass, PassContext, TranslationConfig};
use aarchx_passes::cond_fusion::CondFusion;
use aarchx_passes::const_fold::ConstFold;
use aarchx_passes::cse::Cse;
use aarchx_passes::dce::Dce;
use aarchx_passes::dead_flags::DeadFlags;
use aarchx_passes::decode::Decode;
use aarchx_passes::sink::Sink;
use aarchx_passes::state_forward::StateForward;
use iced_x86::code_asm::*;

const BASE: u64 = 0x10_0000;
const STATES: usize = 300;

struct Bytes(Vec<u8>);

impl GuestCode for Bytes {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(src) = addr.checked_sub(BASE).and_then(|o| self.0.get(o as usize..)) else { return 0 };
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        n
    }
}

/// Memory everywhere: a byte nobody stored is a hash of its address, a
/// stored one is remembered. The sequences call no helper.
#[derive(Default)]
struct Memory {
    stored: BTreeMap<u64, u8>,
}

impl Memory {
    fn byte(&self, addr: u64) -> u8 {
        self.stored.get(&addr).copied().unwrap_or_else(|| (addr.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8)
    }
}

impl Machine for Memory {
    fn load(&mut self, addr: u64, ty: Type) -> u128 {
        (0..u64::from(ty.bits() / 8)).rev().fold(0, |acc, i| acc << 8 | u128::from(self.byte(addr.wrapping_add(i))))
    }
    fn store(&mut self, addr: u64, ty: Type, bits: u128) {
        for i in 0..u64::from(ty.bits() / 8) {
            self.stored.insert(addr.wrapping_add(i), (bits >> (8 * i)) as u8);
        }
    }
    fn helper(&mut self, helper: Helper, _state: &mut GuestState) {
        panic!("unexpected helper {helper:?}")
    }
}

/// xorshift64*: deterministic random states.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Values that make compares interesting: small, extreme, equal-ish.
    fn operand(&mut self) -> u64 {
        match self.next() % 6 {
            0 => self.next() % 4,
            1 => u64::MAX - self.next() % 4,
            2 => 0x8000_0000_0000_0000 ^ (self.next() % 4),
            3 => 0x7fff_ffff ^ (self.next() % 4),
            4 => 0x80 ^ (self.next() % 4),
            _ => self.next(),
        }
    }
}

type Emit = fn(&mut CodeAssembler) -> Result<(), IcedError>;
/// A consumer, given the label a branch takes.
type EmitTo = fn(&mut CodeAssembler, CodeLabel) -> Result<(), IcedError>;

fn setters() -> Vec<(&'static str, Emit)> {
    vec![
        ("cmp rax,rbx", |a| a.cmp(rax, rbx)),
        ("cmp eax,ebx", |a| a.cmp(eax, ebx)),
        ("cmp al,bl", |a| a.cmp(al, bl)),
        ("cmp rax,5", |a| a.cmp(rax, 5)),
        ("sub rax,rbx", |a| a.sub(rax, rbx)),
        ("sub ax,bx", |a| a.sub(ax, bx)),
        ("add rax,rbx", |a| a.add(rax, rbx)),
        ("test rax,rbx", |a| a.test(rax, rbx)),
        ("test ecx,ecx", |a| a.test(ecx, ecx)),
        ("and rax,rbx", |a| a.and(rax, rbx)),
        ("xor eax,ebx", |a| a.xor(eax, ebx)),
        ("or rax,rbx", |a| a.or(rax, rbx)),
        ("inc rcx", |a| a.inc(rcx)),
        ("dec ecx", |a| a.dec(ecx)),
        ("neg rax", |a| a.neg(rax)),
        ("shl rax,cl", |a| a.shl(rax, cl)),
        ("sar eax,1", |a| a.sar(eax, 1)),
        ("shr rax,63", |a| a.shr(rax, 63)),
        ("rol ecx,0", |a| a.rol(ecx, 0)),
        ("lea rdx,[rax+rbx*4]", |a| a.lea(rdx, ptr(rax + rbx * 4))),
        ("imul rax,rbx,1", |a| a.imul_3(rax, rbx, 1)),
        ("xor edx,edx; div rbx", |a| {
            a.xor(edx, edx)?;
            a.div(rbx)
        }),
        ("cqo; idiv rbx", |a| {
            a.cqo()?;
            a.idiv(rbx)
        }),
        ("xor edx,edx; div ebx", |a| {
            a.xor(edx, edx)?;
            a.div(ebx)
        }),
        ("comisd xmm0,xmm1", |a| a.comisd(xmm0, xmm1)),
        ("ucomisd xmm0,xmm1", |a| a.ucomisd(xmm0, xmm1)),
        ("ucomiss xmm0,xmm1", |a| a.ucomiss(xmm0, xmm1)),
        ("add [rsi+8],rax", |a| a.add(qword_ptr(rsi + 8), rax)),
        ("cmp dword [rsi],ebx", |a| a.cmp(dword_ptr(rsi), ebx)),
        ("subsd xmm0,[rsi]; ucomisd xmm0,xmm1", |a| {
            a.subsd(xmm0, qword_ptr(rsi))?;
            a.ucomisd(xmm0, xmm1)
        }),
    ]
}

/// An xmm register's low double or single that makes float compares
/// interesting: zeros of both signs, infinities, NaNs, small integers.
fn float_operand(rng: &mut Rng) -> u128 {
    let d: f64 = match rng.next() % 8 {
        0 => 0.0,
        1 => -0.0,
        2 => f64::INFINITY,
        3 => f64::NEG_INFINITY,
        4 => f64::NAN,
        _ => (rng.next() % 5) as f64 - 2.0,
    };
    // As a double or as a single (the other kind sees odd bits, as a CPU
    // would).
    if rng.next() % 2 == 0 {
        u128::from(d.to_bits())
    } else {
        u128::from((d as f32).to_bits())
    }
}

fn consumers() -> Vec<(&'static str, EmitTo)> {
    vec![
        ("jo", |a, t| a.jo(t)),
        ("jno", |a, t| a.jno(t)),
        ("jb", |a, t| a.jb(t)),
        ("jae", |a, t| a.jae(t)),
        ("je", |a, t| a.je(t)),
        ("jne", |a, t| a.jne(t)),
        ("jbe", |a, t| a.jbe(t)),
        ("ja", |a, t| a.ja(t)),
        ("js", |a, t| a.js(t)),
        ("jns", |a, t| a.jns(t)),
        ("jp", |a, t| a.jp(t)),
        ("jnp", |a, t| a.jnp(t)),
        ("jl", |a, t| a.jl(t)),
        ("jge", |a, t| a.jge(t)),
        ("jle", |a, t| a.jle(t)),
        ("jg", |a, t| a.jg(t)),
        ("setl dl", |a, _| a.setl(dl)),
        ("setbe dl", |a, _| a.setbe(dl)),
        ("setg dl", |a, _| a.setg(dl)),
        ("sete dl", |a, _| a.sete(dl)),
        ("cmovle rdx,rsi", |a, _| a.cmovle(rdx, rsi)),
        ("cmova edx,esi", |a, _| a.cmova(edx, esi)),
        ("cmovge rdx,rsi", |a, _| a.cmovge(rdx, rsi)),
        ("adc rdx,rsi", |a, _| a.adc(rdx, rsi)),
        ("sbb edx,esi", |a, _| a.sbb(edx, esi)),
        ("setb [rsi+1]", |a, _| a.setb(byte_ptr(rsi + 1))),
        ("cmovl rdx,[rsi]", |a, _| a.cmovl(rdx, qword_ptr(rsi))),
        ("adc [rsi],dl", |a, _| a.adc(byte_ptr(rsi), dl)),
    ]
}

fn lift(code: &[u8]) -> (Region, Region) {
    let config = TranslationConfig {
        memory_model: MemoryModel::Plain,
        tso_vector: false,
        cpu_level: CpuLevel::V3,
        superblocks: true,
    };
    let guest = Bytes(code.to_vec());
    let context = PassContext { code: &guest, config: &config };
    let mut region = Region::new(BASE);
    Decode { max_insns: 16, follow: false }.run(&context, &mut region).unwrap();
    let lifted = region.clone();
    let passes: [&mut dyn Pass; 7] = [
        &mut StateForward,
        &mut ConstFold,
        &mut Cse,
        &mut CondFusion,
        &mut DeadFlags { lookahead: 16, abi_calls: false, indirect: true },
        &mut Sink,
        &mut Dce,
    ];
    for p in passes {
        p.run(&context, &mut region).unwrap();
        verify(&region).unwrap_or_else(|e| panic!("{e}\n{}", print(&region)));
    }
    (lifted, region)
}

fn run(region: &Region, state: &GuestState) -> (GuestState, RegionExit, BTreeMap<u64, u8>) {
    let mut s = *state;
    let mut memory = Memory::default();
    let exit = run_region(region, &mut s, &mut memory);
    (s, exit, memory.stored)
}

#[test]
fn passes_keep_the_semantics_of_flag_sequences() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for (sname, setter) in setters() {
        for (cname, consumer) in consumers() {
            // The consumer right after the setter, and with an instruction
            // that touches no flags in between.
            for gap in [false, true] {
                let mut a = CodeAssembler::new(64).unwrap();
                setter(&mut a).unwrap();
                if gap {
                    a.mov(r8, r9).unwrap();
                }
                // A taken branch goes to code that overwrites every status
                // flag (so they are dead on that exit, live on the other).
                let mut taken = a.create_label();
                consumer(&mut a, taken).unwrap();
                // Non-branch consumers run on into a region exit.
                a.jmp(0x5000).unwrap();
                a.set_label(&mut taken).unwrap();
                a.add(r10, 1).unwrap();
                a.jmp(0x6000).unwrap();
                let code = a.assemble(BASE).unwrap();
                let taken_ip = BASE + code.len() as u64 - 4 - 5;
                let (before, after) = lift(&code);
                for _ in 0..STATES {
                    let mut state = GuestState { rip: BASE, ..GuestState::default() };
                    for g in &mut state.gpr {
                        *g = rng.operand();
                    }
                    if rng.next() % 3 == 0 {
                        state.gpr[3] = state.gpr[0];
                    }
                    state.gpr[1] = rng.next() % 70;
                    state.xmm[0] = float_operand(&mut rng);
                    state.xmm[1] = if rng.next() % 3 == 0 { state.xmm[0] } else { float_operand(&mut rng) };
                    for f in &mut state.flags[..7] {
                        *f = (rng.next() & 1) as u8;
                    }
                    let want = run(&before, &state);
                    let mut got = run(&after, &state);
                    // Only DF is live where the taken branch lands.
                    if want.0.rip == taken_ip {
                        got.0.flags[..6].copy_from_slice(&want.0.flags[..6]);
                    }
                    assert!(
                        want == got,
                        "{sname}; {}{cname}: from {state:x?}\nlifted: {:x?} {:?} {:x?}\noptimised: {:x?} {:?} {:x?}\n{}",
                        if gap { "mov r8,r9; " } else { "" },
                        (want.0.gpr, want.0.flags, want.0.rip, want.0.xmm),
                        want.1,
                        want.2,
                        (got.0.gpr, got.0.flags, got.0.rip, got.0.xmm),
                        got.1,
                        got.2,
                        print(&after)
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100_000, "{checked} runs");
}
