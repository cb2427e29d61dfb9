//! The FP area of a signal frame: saved and restored by the lifter's own
//! `fxsave64 [rdi]` and `fxrstor64 [rdi]`, or on a CPU that reports XSAVE
//! (cpu_level V3) `xsave64 [rdi]` and `xrstor64 [rdi]` of every component
//! (x87, SSE, AVX) with the kernel's software bytes around the area (the
//! `_fpx_sw_bytes` at 464 with FP_XSTATE_MAGIC1, FP_XSTATE_MAGIC2 after
//! it), run on the interpreter, so the frame holds exactly what the
//! guest's own instruction would store and the layout is defined once (in
//! the lifter). Each is translated once per thread from the instruction
//! bytes followed by `ud2`, which ends the region.

use std::rc::Rc;

use aarchx_ir::{ExitKind, GuestState, Region, TrapKind};
use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, Options, PassContext, TranslationConfig};
use aarchx_passes::decode::{XCR0, XSAVE_AREA};

use crate::interp;
use crate::machine::RegionExit;
use crate::mem::{GuestAccess, GuestMemory};

/// `fxsave64 [rdi]; ud2`.
const FXSAVE: [u8; 6] = [0x48, 0x0f, 0xae, 0x07, 0x0f, 0x0b];
/// `fxrstor64 [rdi]; ud2`.
const FXRSTOR: [u8; 6] = [0x48, 0x0f, 0xae, 0x0f, 0x0f, 0x0b];
/// `xsave64 [rdi]; ud2`.
const XSAVE: [u8; 6] = [0x48, 0x0f, 0xae, 0x27, 0x0f, 0x0b];
/// `xrstor64 [rdi]; ud2`.
const XRSTOR: [u8; 6] = [0x48, 0x0f, 0xae, 0x2f, 0x0f, 0x0b];
const RAX: usize = 0;
const RDX: usize = 2;
const RDI: usize = 7;
/// Where the `ud2` after each instruction is: a trap there (or, after
/// a restore, an `exit fenv` to it) means the instruction completed.
const UD2_AT: u64 = 4;
/// The fxsave-format area (`struct _fpstate_64`).
const FXSAVE_AREA: u64 = 512;
/// Where the kernel's `_fpx_sw_bytes` sit in the legacy area.
const SW_BYTES: u64 = 464;
const FP_XSTATE_MAGIC1: u32 = 0x4650_5853;
const FP_XSTATE_MAGIC2: u32 = 0x4650_5845;

/// Instruction bytes at address 0, as guest code for the lifter.
struct Bytes(&'static [u8]);

impl GuestCode for Bytes {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let from = (addr as usize).min(self.0.len());
        let n = buf.len().min(self.0.len() - from);
        buf[..n].copy_from_slice(&self.0[from..from + n]);
        n
    }
}

fn lift(bytes: &'static [u8]) -> Rc<Region> {
    let info = &aarchx_passes::decode::INFO;
    let declared: Vec<(&str, _)> = info.options.iter().map(|o| (o.name, (o.default)())).collect();
    let options = Options::validate(&declared, &Default::default()).expect("the lifter's defaults are valid");
    let config = TranslationConfig {
        memory_model: MemoryModel::Plain,
        tso_vector: false,
        cpu_level: CpuLevel::V3,
        superblocks: true,
    };
    let mut region = Region::new(0);
    (info.create)(&options)
        .run(&PassContext { code: &Bytes(bytes), config: &config }, &mut region)
        .expect("the lifter lifts fxsave64, fxrstor64, xsave64 and xrstor64");
    Rc::new(region)
}

thread_local! {
    static FX_SAVE: Rc<Region> = lift(&FXSAVE);
    static FX_RESTORE: Rc<Region> = lift(&FXRSTOR);
    static X_SAVE: Rc<Region> = lift(&XSAVE);
    static X_RESTORE: Rc<Region> = lift(&XRSTOR);
}

/// Whether frames use the XSAVE format: the guest's CPU reports XSAVE.
pub fn xstate() -> bool {
    crate::cpuid::level() == CpuLevel::V3
}

/// The size of the FP area of a frame (the XSAVE area and FP_XSTATE_MAGIC2,
/// or the fxsave area).
pub fn size() -> u64 {
    size_in(xstate())
}

/// The size of an FP area in XSAVE format (`xstate`) or fxsave format.
fn size_in(xstate: bool) -> u64 {
    if xstate {
        XSAVE_AREA + 4
    } else {
        FXSAVE_AREA
    }
}

/// Runs `region` with rdi = `area` (and edx:eax = `features`) on a copy
/// of `state`; returns the copy, or None when the area is not writable
/// guest memory or the instruction refused it (the region trapped
/// elsewhere).
fn run(region: &Region, state: &GuestState, area: u64, features: u64) -> Option<GuestState> {
    let mut s = *state;
    s.gpr[RDI] = area;
    s.gpr[RAX] = features & 0xffff_ffff;
    s.gpr[RDX] = features >> 32;
    match interp::run_region(region, &mut s, &mut GuestAccess) {
        RegionExit::Trap { kind: TrapKind::Ill } if s.rip == UD2_AT => Some(s),
        // A restore ends its region after writing MXCSR.
        RegionExit::Jump { kind: ExitKind::Fenv } if s.rip == UD2_AT => Some(s),
        _ => None,
    }
}

/// Stores the FP state of `state` at `area` ([`size`] bytes, zeroed first).
pub fn save(state: &GuestState, mem: &GuestMemory, area: u64) -> Option<()> {
    save_in(xstate(), state, mem, area)
}

/// [`save`] in XSAVE format (`xstate`) or fxsave format.
fn save_in(xstate: bool, state: &GuestState, mem: &GuestMemory, area: u64) -> Option<()> {
    mem.write_bytes(area, &vec![0; size_in(xstate) as usize]).ok()?;
    if !xstate {
        return FX_SAVE.with(|r| run(r, state, area, 0)).map(|_| ());
    }
    X_SAVE.with(|r| run(r, state, area, XCR0))?;
    let mut sw = [0u8; 48];
    sw[0..4].copy_from_slice(&FP_XSTATE_MAGIC1.to_le_bytes());
    sw[4..8].copy_from_slice(&((XSAVE_AREA + 4) as u32).to_le_bytes());
    sw[8..16].copy_from_slice(&XCR0.to_le_bytes());
    sw[16..20].copy_from_slice(&(XSAVE_AREA as u32).to_le_bytes());
    mem.write_bytes(area + SW_BYTES, &sw).ok()?;
    mem.write_bytes(area + XSAVE_AREA, &FP_XSTATE_MAGIC2.to_le_bytes()).ok()
}

/// The components an XSAVE-format area at `area` says it holds (the
/// kernel's check of `_fpx_sw_bytes`: both magics, a sane size), or None
/// for a plain fxsave area.
fn xfeatures(mem: &GuestMemory, area: u64) -> Option<u64> {
    let mut sw = [0u8; 20];
    mem.read_bytes(area + SW_BYTES, &mut sw).ok()?;
    let word = |i: usize| u32::from_le_bytes([sw[i], sw[i + 1], sw[i + 2], sw[i + 3]]);
    let (magic1, extended, xstate_size) = (word(0), u64::from(word(4)), u64::from(word(16)));
    if magic1 != FP_XSTATE_MAGIC1 || xstate_size < FXSAVE_AREA + 64 || extended != xstate_size + 4 {
        return None;
    }
    let mut magic2 = [0u8; 4];
    mem.read_bytes(area + xstate_size, &mut magic2).ok()?;
    (u32::from_le_bytes(magic2) == FP_XSTATE_MAGIC2)
        .then(|| u64::from_le_bytes(sw[8..16].try_into().unwrap_or_default()))
}

/// Loads the FP state saved at `area` into `state`. None when the area
/// cannot be read or holds a state the guest could not load (as fxrstor
/// or xrstor would refuse it); `state` is then unchanged. On a CPU with
/// XSAVE an area the kernel would take as plain fxsave format (no magics)
/// leaves the AVX state in its initial configuration, as the kernel does.
pub fn restore(state: &mut GuestState, mem: &GuestMemory, area: u64) -> Option<()> {
    restore_in(xstate(), state, mem, area)
}

/// [`restore`] on a CPU with XSAVE (`xstate`) or without.
fn restore_in(xstate: bool, state: &mut GuestState, mem: &GuestMemory, area: u64) -> Option<()> {
    let mut readable = [0u8; FXSAVE_AREA as usize];
    mem.read_bytes(area, &mut readable).ok()?;
    let features = if xstate { xfeatures(mem, area) } else { None };
    let mut restored = match features {
        Some(f) => X_RESTORE.with(|r| run(r, state, area, f & XCR0))?,
        None => {
            let mut s = FX_RESTORE.with(|r| run(r, state, area, 0))?;
            if xstate {
                s.ymm_hi = [0; 16];
            }
            s
        }
    };
    // Only the FP state comes from the area: rax, rdx, rdi and rip were
    // the region's own, and so is the x87 helpers' scratch.
    for r in [RAX, RDX, RDI] {
        restored.gpr[r] = state.gpr[r];
    }
    restored.rip = state.rip;
    restored.x87_op = state.x87_op;
    restored.x87_addr = state.x87_addr;
    *state = restored;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_then_restore_is_the_identity_on_fp_state() {
        let mut mem = GuestMemory::new();
        let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let a = mem.mmap(0, 4096, 3, flags, -1, 0).unwrap();
        let mut s = GuestState { rip: 0x1234, ..GuestState::default() };
        for (i, x) in s.xmm.iter_mut().enumerate() {
            *x = 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10u128.wrapping_mul(i as u128 + 1);
        }
        s.mxcsr = 0x1fa0;
        save(&s, &mut mem, a).unwrap();
        let mut mxcsr = [0u8; 4];
        mem.read_bytes(a + 24, &mut mxcsr).unwrap();
        assert_eq!(u32::from_le_bytes(mxcsr), 0x1fa0, "fxsave puts MXCSR at byte 24");
        let mut t = GuestState { rip: 0x1234, ..GuestState::default() };
        t.gpr[RDI] = 77;
        restore(&mut t, &mut mem, a).unwrap();
        assert_eq!((t.xmm, t.mxcsr, t.rip, t.gpr[RDI]), (s.xmm, s.mxcsr, 0x1234, 77));
    }

    #[test]
    fn the_xsave_format_carries_the_ymm_upper_halves_and_the_kernels_magics() {
        let mut mem = GuestMemory::new();
        let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let a = mem.mmap(0, 4096, 3, flags, -1, 0).unwrap();
        let mut s = GuestState { rip: 0x1234, ..GuestState::default() };
        for (i, x) in s.ymm_hi.iter_mut().enumerate() {
            *x = 0x1111_2222_3333_4444_5555_6666_7777_8888u128.wrapping_mul(i as u128 + 3);
        }
        s.xmm[5] = 55;
        save_in(true, &s, &mut mem, a).unwrap();
        let word = |off: u64| {
            let mut b = [0u8; 4];
            mem.read_bytes(a + off, &mut b).unwrap();
            u32::from_le_bytes(b)
        };
        // The kernel's layout: magic1 and sizes at 464, XSTATE_BV 7 at
        // 512, ymm1's upper half at 576 + 16, magic2 after 832 bytes.
        assert_eq!((word(464), word(468), word(472), word(480)), (0x4650_5853, 836, 7, 832));
        assert_eq!(word(512), 7);
        assert_eq!(word(592), s.ymm_hi[1] as u32);
        assert_eq!(word(832), 0x4650_5845);
        let mut t = GuestState { rip: 0x1234, ..GuestState::default() };
        restore_in(true, &mut t, &mut mem, a).unwrap();
        assert_eq!((t.ymm_hi, t.xmm[5]), (s.ymm_hi, 55));
        // Without magic1 the area is plain fxsave format: AVX state reset.
        mem.write_bytes(a + 464, &[0; 4]).unwrap();
        restore_in(true, &mut t, &mut mem, a).unwrap();
        assert_eq!((t.ymm_hi, t.xmm[5]), ([0; 16], 55));
    }
}
