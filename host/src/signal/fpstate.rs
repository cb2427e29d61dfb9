//! The FP area of a signal frame: saved and restored by the lifter's own
//! `fxsave64 [rdi]` and `fxrstor64 [rdi]`, run on the interpreter, so the
//! frame holds exactly what the guest's fxsave would store and the layout
//! is defined once (in the lifter). Each is translated once per thread
//! from the instruction bytes followed by `ud2`, which ends the region.

use std::rc::Rc;

use aarchx_ir::{ExitKind, GuestState, Region, TrapKind};
use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, Options, PassContext, TranslationConfig};

use crate::interp;
use crate::machine::RegionExit;
use crate::mem::{GuestAccess, GuestMemory};

/// `fxsave64 [rdi]; ud2`.
const FXSAVE: [u8; 6] = [0x48, 0x0f, 0xae, 0x07, 0x0f, 0x0b];
/// `fxrstor64 [rdi]; ud2`.
const FXRSTOR: [u8; 6] = [0x48, 0x0f, 0xae, 0x0f, 0x0f, 0x0b];
const RDI: usize = 7;
/// Where the `ud2` after either instruction is: a trap there (or, after
/// fxrstor, an `exit fenv` to it) means the instruction completed.
const UD2_AT: u64 = 4;

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
        cpu_level: CpuLevel::V1,
        superblocks: true,
    };
    let mut region = Region::new(0);
    (info.create)(&options)
        .run(&PassContext { code: &Bytes(bytes), config: &config }, &mut region)
        .expect("the lifter lifts fxsave64 and fxrstor64");
    Rc::new(region)
}

thread_local! {
    static SAVE: Rc<Region> = lift(&FXSAVE);
    static RESTORE: Rc<Region> = lift(&FXRSTOR);
}

/// Runs `region` with rdi = `area` on a copy of `state`; returns the copy,
/// or None when the area is not writable guest memory (the region faulted).
fn run(region: &Region, state: &GuestState, area: u64) -> Option<GuestState> {
    let mut s = *state;
    s.gpr[RDI] = area;
    match interp::run_region(region, &mut s, &mut GuestAccess) {
        RegionExit::Trap { kind: TrapKind::Ill } if s.rip == UD2_AT => Some(s),
        // fxrstor ends its region after writing MXCSR.
        RegionExit::Jump { kind: ExitKind::Fenv } if s.rip == UD2_AT => Some(s),
        _ => None,
    }
}

/// Stores the FP state of `state` at `area` (512 bytes, zeroed first).
pub fn save(state: &GuestState, mem: &GuestMemory, area: u64) -> Option<()> {
    mem.write_bytes(area, &[0; super::frame::FPSTATE_SIZE as usize]).ok()?;
    SAVE.with(|r| run(r, state, area)).map(|_| ())
}

/// Loads the FP state saved at `area` into `state`. None when the area
/// cannot be read or holds a state the guest could not load (as fxrstor
/// would refuse it); `state` is then unchanged.
pub fn restore(state: &mut GuestState, mem: &GuestMemory, area: u64) -> Option<()> {
    let mut readable = [0u8; super::frame::FPSTATE_SIZE as usize];
    mem.read_bytes(area, &mut readable).ok()?;
    let mut restored = RESTORE.with(|r| run(r, state, area))?;
    // Only the FP state comes from the area: rdi and rip were the
    // region's own, and so is the x87 helpers' scratch.
    restored.gpr[RDI] = state.gpr[RDI];
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
}
