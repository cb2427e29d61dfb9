//! `insn` marks, `call` and the terminators.
//!
//! `insn` writes `rip` only when the region has a `call` (a helper may
//! read it), and lazily: the last mark's address is stored before a call
//! and before each branch between IR blocks. Exits and traps write `rip`
//! on their way back to Rust (a chained exit or a target-cache hit goes
//! on without it: only the dispatcher reads it). A helper `call` stores
//! the pinned guest registers its helper reads or writes into the state
//! struct first and reloads the ones it writes after (see
//! `crate::jit::regs`).
//!
//! An `exit` of kind jump or call becomes a chainable stub (see
//! [`crate::jit::chain`]) unless the block is journaled; every other exit
//! and every trap returns to Rust through the trampoline with its exit
//! code in x0, except that an `exit_indirect` (other than a syscall) first
//! probes the indirect branch target cache ([`crate::jit::ibtc`]) and
//! branches straight to the target's block when it is there. A
//! `probe_indirect` probes the same way but branches only to a target
//! whose entry address says it reads no incoming status flag
//! ([`ibtc::FLAGS_DEAD_BIT`]), and otherwise goes on to its fallback
//! block, which writes the flags and leaves with `exit_indirect`.
//!
//! A quick block that counts its runs (see `crate::jit::run_counts`)
//! starts with the count and has its tier-up exit after its blocks.

use aarchx_ir::cond::Helper;
use aarchx_ir::{ExitKind, Format, GuestState, InstData, MemFlags, Opcode, Reg, TrapKind};
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi};

use super::alloc::Fold;
use super::StubSite;
use super::{a64, Decline, Lowerer};
use crate::jit::context::{OFF_CALL_HELPER, OFF_IBTC};
use crate::jit::exit::StubId;
use crate::jit::exit::{exit_code, tier_up_code, trap_code};
use crate::jit::ibtc;
use crate::jit::regs::{pinned_v, BUDGET_REG, CTX_REG, PINNED, SPILL_AREA, STATE_REG};

const OFF_RIP: u32 = GuestState::OFFSET_RIP as u32;
const OFF_LEAF_DONE: u32 = GuestState::OFFSET_LEAF_DONE as u32;

impl Lowerer<'_> {
    pub(super) fn term_op(&mut self, d: &InstData, b: usize) -> Result<(), Decline> {
        match d.op {
            Opcode::Insn => {
                self.guest_marks.push((self.ops.offset().0 as u32, d.imm64()));
                if self.needs_rip {
                    self.pending_rip = Some(d.imm64());
                }
            }
            Opcode::Call if Helper::from_u16(d.aux).is_some_and(Helper::is_leaf) => {
                // The routine reads and writes the pinned registers
                // themselves; it reports in x0 whether it ran.
                let helper = Helper::from_u16(d.aux).ok_or_else(|| self.decline(d))?;
                let ordered = d.args[0] == MemFlags::Ordered as u32;
                self.call_leaf(self.leaf.entry(helper), ordered);
                a64!(self.ops; strb w0, [X(STATE_REG), #OFF_LEAF_DONE]);
            }
            Opcode::Call => {
                self.flush_rip();
                let helper = Helper::from_u16(d.aux).ok_or_else(|| self.decline(d))?;
                // What it writes too: it may leave a register as it was.
                self.pinned_to_state(&[helper.reads(), helper.writes()], true);
                let id = u32::from(d.aux);
                a64!(self.ops
                    ; movz w0, #id
                    ; mov x1, X(STATE_REG)
                    ; mov x2, X(CTX_REG)
                );
                self.call_ctx(OFF_CALL_HELPER);
                self.pinned_to_state(&[helper.writes()], false);
            }
            Opcode::Jump => {
                self.flush_rip();
                let target = d.args[0] as usize;
                if target != b + 1 {
                    let label = self.labels[target];
                    a64!(self.ops; b =>label);
                }
            }
            Opcode::Brif => {
                self.flush_rip();
                let (then, els) = (d.args[1] as usize, d.args[2] as usize);
                let (lt, le) = (self.labels[then], self.labels[els]);
                if self.alloc.fold[d.arg(0).index()] == Fold::Compare {
                    let cc = self.select_cc(d.arg(0));
                    if then == b + 1 {
                        self.b_cond(cc.invert(), le);
                    } else {
                        self.b_cond(cc, lt);
                        if els != b + 1 {
                            a64!(self.ops; b =>le);
                        }
                    }
                } else {
                    let c = self.xsrc(d.arg(0), 0);
                    if then == b + 1 {
                        a64!(self.ops; cbz X(c), =>le);
                    } else {
                        a64!(self.ops; cbnz X(c), =>lt);
                        if els != b + 1 {
                            a64!(self.ops; b =>le);
                        }
                    }
                }
            }
            Opcode::Exit => {
                let kind = ExitKind::from_u16(d.aux).ok_or_else(|| self.decline(d))?;
                self.exit(kind, d.imm64());
            }
            Opcode::ExitIndirect => {
                let kind = ExitKind::from_u16(d.aux).ok_or_else(|| self.decline(d))?;
                let t = self.xsrc(d.arg(0), 0);
                self.pop_frame();
                if kind != ExitKind::Syscall && !self.options.journal {
                    if self.probed_before(b) {
                        // x16/x17 still hold the entry the probe loaded.
                        a64!(self.ops
                            ; cmp x17, X(t)
                            ; b.ne >miss
                            ; br x16
                            ; miss:
                        );
                    } else {
                        self.probe_ibtc(t);
                    }
                }
                // Only the dispatcher reads rip: translated code reached
                // through the cache does not need it.
                a64!(self.ops; str X(t), [X(STATE_REG), #OFF_RIP]);
                self.leave(exit_code(kind, None));
            }
            Opcode::ProbeIndirect => {
                let kind = ExitKind::from_u16(d.aux).ok_or_else(|| self.decline(d))?;
                let fallback = d.args[1] as usize;
                self.flush_rip();
                if kind != ExitKind::Syscall && !self.options.journal {
                    let t = self.xsrc(d.arg(0), 0);
                    let label = self.labels[fallback];
                    self.ibtc_way(t, 0);
                    a64!(self.ops
                        ; b.ne >way1
                        ; hit:
                        ; tbz x16, #ibtc::FLAGS_DEAD_BIT, =>label
                    );
                    self.pop_frame();
                    a64!(self.ops; br x16; way1:);
                    self.ibtc_way(t, 1);
                    a64!(self.ops; b.eq <hit; b =>label);
                } else if fallback != b + 1 {
                    let label = self.labels[fallback];
                    a64!(self.ops; b =>label);
                }
            }
            Opcode::Trap => {
                let kind = TrapKind::from_u16(d.aux).ok_or_else(|| self.decline(d))?;
                self.mov64(0, d.imm64());
                a64!(self.ops; str x0, [X(STATE_REG), #OFF_RIP]);
                self.pop_frame();
                self.leave(trap_code(kind));
            }
            _ => return Err(self.decline(d)),
        }
        Ok(())
    }

    /// Stores (`store`) the pinned registers in any of `sets` into the
    /// state struct, or loads them from it.
    fn pinned_to_state(&mut self, sets: &[&[Reg]], store: bool) {
        for (reg, host) in PINNED {
            if !sets.iter().any(|s| s.contains(&reg)) {
                continue;
            }
            let off = GuestState::offset_of(reg) as u32;
            if store {
                a64!(self.ops; str X(host), [X(STATE_REG), #off]);
            } else {
                a64!(self.ops; ldr X(host), [X(STATE_REG), #off]);
            }
        }
        for &reg in sets.iter().flat_map(|s| s.iter()) {
            let Some(host) = pinned_v(reg) else { continue };
            let off = GuestState::offset_of(reg) as u32;
            if store {
                a64!(self.ops; str Q(host), [X(STATE_REG), #off]);
            } else {
                a64!(self.ops; ldr Q(host), [X(STATE_REG), #off]);
            }
        }
    }

    /// Writes the pending `insn` address to `rip`.
    fn flush_rip(&mut self) {
        if let Some(addr) = self.pending_rip.take() {
            self.mov64(0, addr);
            a64!(self.ops; str x0, [X(STATE_REG), #OFF_RIP]);
        }
    }

    /// `exit KIND target`: a chainable stub for jumps and calls.
    fn exit(&mut self, kind: ExitKind, target: u64) {
        self.pop_frame();
        let chainable = matches!(kind, ExitKind::Jump | ExitKind::Call) && !self.options.journal;
        // Only a backward exit counts (see `crate::jit::chain`).
        let backward = target <= self.r.entry;
        let site = chainable.then(|| {
            if backward {
                a64!(self.ops; subs X(BUDGET_REG), XSP(BUDGET_REG), #1);
            }
            let patch = self.ops.offset().0 as u32;
            if backward {
                a64!(self.ops; b.ne >far);
            } else {
                a64!(self.ops; b >slow);
            }
            a64!(self.ops; slow:);
            (patch, self.ops.offset().0 as u32)
        });
        let stub = site.map(|_| StubId(self.first_stub + self.stubs.len() as u32));
        self.mov64(0, target);
        a64!(self.ops; str x0, [X(STATE_REG), #OFF_RIP]);
        self.leave(exit_code(kind, stub));
        if let Some((patch, slow)) = site {
            let far = backward.then(|| {
                a64!(self.ops; far:);
                let far = self.ops.offset().0 as u32;
                a64!(self.ops; b <slow);
                far
            });
            self.stubs.push(StubSite { patch, slow, far, target });
        }
    }

    /// Branches to the translated block of guest address `X(t)` when the
    /// indirect branch target cache has it (see [`crate::jit::ibtc`]), and
    /// falls through otherwise. No chain budget: nothing but a signal needs
    /// an indirect loop back in the dispatcher, and a signal empties the
    /// table the probe reads (`crate::signals`).
    fn probe_ibtc(&mut self, t: u8) {
        for way in 0..ibtc::WAYS as u32 {
            self.ibtc_way(t, way);
            a64!(self.ops
                ; b.ne >miss
                ; br x16
                ; miss:
            );
        }
    }

    /// Loads way `way` of the target cache set guest address `X(t)`
    /// hashes to into x17 (guest) and x16 (host) and compares x17 with
    /// `X(t)`: `eq` when it is a hit. (The set address is computed again
    /// for the second way, off the first way's hit path: the `ldp` that
    /// reads a way overwrites it.)
    fn ibtc_way(&mut self, t: u8, way: u32) {
        let mask = (ibtc::SETS - 1) as u64;
        let set_shift = (ibtc::WAYS * 16).trailing_zeros();
        let offset = way as i32 * 16;
        a64!(self.ops
            ; ldr x16, [X(CTX_REG), #OFF_IBTC]
            ; eor x17, X(t), X(t), lsr #ibtc::SHIFT
            ; and x17, x17, #mask
            ; add x16, x16, x17, lsl #set_shift
            ; ldp x17, x16, [x16, #offset]
            ; cmp x17, X(t)
        );
    }

    /// Whether block `b` is entered only from a `probe_indirect`, with the
    /// entry that probe loaded still in x16/x17 at its end: none of its
    /// instructions touches them (integer arithmetic and state writes do
    /// not; helper calls, float constants and slots out of an
    /// instruction's reach would).
    fn probed_before(&self, b: usize) -> bool {
        let r = self.r;
        let mut preds = r
            .blocks
            .iter()
            .filter_map(|blk| blk.insts.last())
            .map(|v| r.inst(*v))
            .filter(|t| t.successors().contains(&(b as u32)));
        let only_probe = matches!((preds.next(), preds.next()), (Some(t), None) if t.op == Opcode::ProbeIndirect);
        let body = &r.blocks[b].insts;
        let keeps_scratch = body[..body.len() - 1].iter().all(|v| {
            let d = r.inst(*v);
            let int = |ty: aarchx_ir::Type| ty.is_int() && ty.bits() <= 64;
            match d.op.format() {
                Format::Set => int(r.value_type(d.arg(0))),
                Format::Get | Format::Load => false,
                _ => !d.op.has_side_effect() && int(d.ty) && d.values().all(|a| int(r.value_type(a))),
            }
        });
        only_probe && keeps_scratch && self.alloc.frame <= SPILL_AREA
    }

    /// A quick block's run count (see `crate::jit::run_counts`), at its
    /// entry before the frame: the word at `word` is tested and
    /// decremented, and at zero the block leaves by the tier-up exit (the
    /// returned label, placed by [`Lowerer::tier_up_exit`]). x16 and x17
    /// hold nothing at a block's entry; NZCV is left alone.
    pub(super) fn count_run(&mut self, word: usize) -> DynamicLabel {
        let tier_up = self.ops.new_dynamic_label();
        self.mov64(16, word as u64);
        a64!(self.ops
            ; ldr w17, [x16]
            ; cbz w17, =>tier_up
            ; sub w17, w17, #1
            ; str w17, [x16]
        );
        tier_up
    }

    /// The tier-up exit of [`Lowerer::count_run`]: nothing of the region
    /// has run, and it leaves as a jump to its own entry would.
    pub(super) fn tier_up_exit(&mut self, label: DynamicLabel) {
        a64!(self.ops; =>label);
        self.mov64(0, self.r.entry);
        a64!(self.ops; str x0, [X(STATE_REG), #OFF_RIP]);
        self.leave(tier_up_code());
    }

    /// Returns to Rust with `code` (the frame already popped).
    fn leave(&mut self, code: u64) {
        self.mov64(0, code);
        let exit = self.exit_addr;
        a64!(self.ops; b extern exit);
    }
}
