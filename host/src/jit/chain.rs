//! Block chaining. Each direct `exit jump/call ADDR` is compiled as a
//! stub (see `lower/term.rs`):
//!
//! ```text
//!         add  sp, sp, #frame      ; leave the block's frame
//! patch:  b    slow                ; linked: b <target block>
//! slow:   rip = ADDR; x0 = exit code with the stub index; b <trampoline exit>
//! ```
//!
//! and an exit that counts against the chain budget (below) as
//!
//! ```text
//!         subs x26, x26, #1        ; chain budget
//! patch:  b.ne far                 ; linked: b.ne <target block>
//! slow:   rip = ADDR; x0 = exit code with the stub index; b <trampoline exit>
//! far:    b    slow                ; linked, target out of b.ne's reach: b <target block>
//! ```
//!
//! so a linked loop's back edge is two instructions, and the budget's
//! last step falls through to the slow path whatever the links.
//!
//! Only an exit whose target is at or below its region's entry address
//! counts against the budget: in a cycle of chained regions some exit
//! goes to an address no higher than its own region's entry (the entries
//! cannot all increase around a cycle), so every chained loop still meets
//! a budget check, and the forward exits of straight-line code cost two
//! instructions less. Indirect exits probing the target cache do not
//! count: a signal to deliver empties the table they probe, and sets the
//! budget of an interrupted block to its last step (`crate::signals`).
//!
//! Linking rewrites the one aligned instruction at `patch` (or `far`) to
//! branch into the target block's code; unlinking writes the original
//! branches back. Each is a single 4-byte store plus cache maintenance (see
//! [`super::cache`]). The table records, for each stub, its owner, where
//! it is, its guest target and what it is linked to; the blocks keep the
//! reverse lists so invalidation can unlink everything that enters a
//! dropped block.

use std::ops::Range;

use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{dynasm, DynasmLabelApi, VecAssembler};

use super::cache::CodeCache;
use super::exit::StubId;
use super::lower::StubSite;
use super::BlockId;

#[derive(Debug)]
struct Stub {
    patch_addr: usize,
    slow_addr: usize,
    far_addr: Option<usize>,
    target: u64,
    linked: Option<BlockId>,
    dead: bool,
}

/// Every stub ever compiled (until a reset), indexed by [`StubId`].
#[derive(Debug, Default)]
pub struct StubTable {
    stubs: Vec<Stub>,
}

impl StubTable {
    /// The id the next added stub gets.
    pub fn next_id(&self) -> u32 {
        self.stubs.len() as u32
    }

    /// Records the stubs of a block whose code starts at `code`.
    pub fn add(&mut self, code: usize, sites: &[StubSite]) -> Range<u32> {
        let first = self.next_id();
        self.stubs.extend(sites.iter().map(|s| Stub {
            patch_addr: code + s.patch as usize,
            slow_addr: code + s.slow as usize,
            far_addr: s.far.map(|f| code + f as usize),
            target: s.target,
            linked: None,
            dead: false,
        }));
        first..self.next_id()
    }

    /// Points `stub` at `code`, the block `target` for guest address
    /// `guest`. False (nothing done) when the stub is dead, already
    /// linked, or exits to another address.
    pub fn link(&mut self, cache: &mut CodeCache, stub: StubId, guest: u64, code: usize, target: BlockId) -> bool {
        let Some(s) = self.stubs.get_mut(stub.0 as usize) else { return false };
        if s.dead || s.linked.is_some() || s.target != guest {
            return false;
        }
        match s.far_addr {
            None => cache.patch_u32(s.patch_addr, branch(s.patch_addr, code)),
            Some(far) => match branch_ne(s.patch_addr, code) {
                Some(insn) => cache.patch_u32(s.patch_addr, insn),
                None => cache.patch_u32(far, branch(far, code)),
            },
        }
        s.linked = Some(target);
        true
    }

    /// Restores the stub's exit to Rust.
    pub fn unlink(&mut self, cache: &mut CodeCache, stub: StubId) {
        if let Some(s) = self.stubs.get_mut(stub.0 as usize) {
            if s.linked.take().is_some() && !s.dead {
                match s.far_addr {
                    None => cache.patch_u32(s.patch_addr, branch(s.patch_addr, s.slow_addr)),
                    Some(far) => {
                        let insn = branch_ne(s.patch_addr, far).expect("far lies inside its own stub");
                        cache.patch_u32(s.patch_addr, insn);
                        cache.patch_u32(far, branch(far, s.slow_addr));
                    }
                }
            }
        }
    }

    /// The block a stub is linked to.
    pub fn linked_target(&self, stub: StubId) -> Option<BlockId> {
        self.stubs.get(stub.0 as usize).and_then(|s| s.linked)
    }

    /// Whether the stub is linked (for tests and statistics).
    pub fn is_linked(&self, stub: StubId) -> bool {
        self.linked_target(stub).is_some()
    }

    /// Retires the stub of a dropped block: unlinked, never linked again.
    pub fn kill(&mut self, cache: &mut CodeCache, stub: StubId) {
        self.unlink(cache, stub);
        if let Some(s) = self.stubs.get_mut(stub.0 as usize) {
            s.dead = true;
        }
    }
}

/// The encoding of `b to` placed at `from` (both inside the cache, so
/// within the ±128 MiB reach).
pub(super) fn branch(from: usize, to: usize) -> u32 {
    let mut ops = VecAssembler::<Aarch64Relocation>::new(from);
    dynasm!(ops
        ; .arch aarch64
        ; b extern to
    );
    let bytes = ops.finalize().expect("a branch inside the code cache");
    u32::from_le_bytes(bytes[..4].try_into().expect("one instruction"))
}

/// The encoding of `b.ne to` placed at `from`, if `to` is within its
/// ±1 MiB reach.
fn branch_ne(from: usize, to: usize) -> Option<u32> {
    const REACH: i64 = 1 << 20;
    let delta = to as i64 - from as i64;
    if !(-REACH..REACH).contains(&delta) {
        return None;
    }
    let mut ops = VecAssembler::<Aarch64Relocation>::new(from);
    dynasm!(ops
        ; .arch aarch64
        ; b.ne extern to
    );
    let bytes = ops.finalize().ok()?;
    Some(u32::from_le_bytes(bytes[..4].try_into().expect("one instruction")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_encoding() {
        assert_eq!(branch(0x1000, 0x1000), 0x1400_0000);
        assert_eq!(branch(0x1000, 0x1008), 0x1400_0002);
        assert_eq!(branch(0x1008, 0x1000), 0x17ff_fffe);
        assert_eq!(branch_ne(0x1000, 0x1008), Some(0x5400_0041));
        assert_eq!(branch_ne(0x1008, 0x1000), Some(0x54ff_ffc1));
        assert_eq!(branch_ne(0x10_0000, 0x20_0000), None);
        assert_eq!(branch_ne(0x20_0000, 0x10_0000), Some(0x5480_0001));
    }
}
