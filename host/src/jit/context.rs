//! The JIT context: the `#[repr(C)]` struct translated code reaches
//! through x27. It holds the x86 parity table (a flag's PF in one load),
//! the addresses of the Rust helpers generated code calls (so a call is
//! one load and a `blr`), the journal cursor, the chain budget and the
//! helper closure of the current run. Field offsets
//! are the contract with [`super::lower`]; a test pins them.

use std::ffi::c_void;
use std::mem::offset_of;
use std::sync::atomic::AtomicUsize;

use aarchx_ir::cond::Helper;
use aarchx_ir::GuestState;

use super::journal::JournalEntry;
use super::runtime;

/// The closure `Jit::run` receives, as translated code's `call` reaches it.
pub type HelperFn<'a> = &'a mut dyn FnMut(Helper, &mut GuestState);

/// Reached by translated code through x27.
#[repr(C)]
pub struct JitContext {
    /// x86's PF of each byte value: 1 when it has an even number of set
    /// bits. First, so `ldrb wd, [x27, xbyte]` reads it.
    pub parity: [u8; 256],
    /// `call HELPER`: `(helper, state, ctx)`.
    pub call_helper: unsafe extern "C" fn(u32, *mut GuestState, *mut JitContext),
    /// x86 NaN fix-up of a float result: `(desc, operands, result)`.
    pub fix_nan: unsafe extern "C" fn(u32, *const u8, *mut u8),
    /// 128-bit integer division: `(op, a, b, result)`.
    pub int128: unsafe extern "C" fn(u32, *const u8, *const u8, *mut u8),
    /// Grows the journal when `journal_cur` reaches `journal_end`.
    pub journal_grow: unsafe extern "C" fn(*mut JitContext),
    pub journal_cur: *mut JournalEntry,
    pub journal_end: *mut JournalEntry,
    /// Chained transitions left in this run (copied into x26 on entry).
    pub budget: u64,
    /// `*mut HelperFn` of the current run, null between runs.
    pub helpers: *mut c_void,
    /// The stack pointer the trampoline leaves for blocks (after saving
    /// the callee-saved registers): where a faulting block is sent back to
    /// the exit sequence from (see `crate::signals`).
    pub entry_sp: u64,
    /// The indirect branch target cache translated code probes (see
    /// [`super::ibtc`]), a `*const IbtcEntry`; 0 until the JIT sets it.
    /// Atomic: other threads' fault handlers empty it
    /// (`crate::thread::cut_every_run`).
    pub ibtc: AtomicUsize,
    /// The journal's storage: always fully initialised (`len` is the
    /// capacity in entries); `journal_cur` points into it.
    journal: Vec<JournalEntry>,
}

pub const OFF_PARITY: u32 = offset_of!(JitContext, parity) as u32;
pub const OFF_CALL_HELPER: u32 = offset_of!(JitContext, call_helper) as u32;
pub const OFF_FIX_NAN: u32 = offset_of!(JitContext, fix_nan) as u32;
pub const OFF_INT128: u32 = offset_of!(JitContext, int128) as u32;
pub const OFF_JOURNAL_GROW: u32 = offset_of!(JitContext, journal_grow) as u32;
pub const OFF_JOURNAL_CUR: u32 = offset_of!(JitContext, journal_cur) as u32;
pub const OFF_JOURNAL_END: u32 = offset_of!(JitContext, journal_end) as u32;
pub const OFF_BUDGET: u32 = offset_of!(JitContext, budget) as u32;
pub const OFF_ENTRY_SP: u32 = offset_of!(JitContext, entry_sp) as u32;
pub const OFF_IBTC: u32 = offset_of!(JitContext, ibtc) as u32;

/// Journal entries allocated at first.
const JOURNAL_INITIAL: usize = 256;

impl JitContext {
    pub fn new() -> JitContext {
        let mut ctx = JitContext {
            parity: std::array::from_fn(|b| u8::from((b as u8).count_ones() % 2 == 0)),
            call_helper: runtime::call_helper,
            fix_nan: runtime::fix_nan,
            int128: runtime::int128,
            journal_grow: runtime::journal_grow,
            journal_cur: std::ptr::null_mut(),
            journal_end: std::ptr::null_mut(),
            budget: 0,
            helpers: std::ptr::null_mut(),
            entry_sp: 0,
            ibtc: AtomicUsize::new(0),
            journal: vec![JournalEntry::default(); JOURNAL_INITIAL],
        };
        ctx.journal_reset();
        ctx
    }

    /// Points the helper slot at `helpers` for one run.
    pub fn set_helpers(&mut self, helpers: &mut HelperFn<'_>) {
        self.helpers = (helpers as *mut HelperFn<'_>).cast();
    }

    pub fn clear_helpers(&mut self) {
        self.helpers = std::ptr::null_mut();
    }

    /// Empties the journal.
    pub fn journal_reset(&mut self) {
        let range = self.journal.as_mut_ptr_range();
        self.journal_cur = range.start;
        self.journal_end = range.end;
    }

    /// Entries recorded since the last reset.
    pub fn journal(&self) -> &[JournalEntry] {
        &self.journal[..self.journal_len()]
    }

    fn journal_len(&self) -> usize {
        (self.journal_cur as usize - self.journal.as_ptr() as usize) / size_of::<JournalEntry>()
    }

    /// Doubles the journal's storage, keeping the recorded entries.
    pub fn journal_double(&mut self) {
        let len = self.journal_len();
        let new_len = self.journal.len() * 2;
        self.journal.resize(new_len, JournalEntry::default());
        let range = self.journal.as_mut_ptr_range();
        // `len` entries are recorded, so the cursor stays inside the storage.
        self.journal_cur = range.start.wrapping_add(len);
        self.journal_end = range.end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_pinned() {
        assert_eq!(OFF_PARITY, 0);
        assert_eq!(OFF_CALL_HELPER, 256);
        assert_eq!(OFF_FIX_NAN, 264);
        assert_eq!(OFF_INT128, 272);
        assert_eq!(OFF_JOURNAL_GROW, 280);
        assert_eq!(OFF_JOURNAL_CUR, 288);
        assert_eq!(OFF_JOURNAL_END, 296);
        assert_eq!(OFF_BUDGET, 304);
        assert_eq!(OFF_ENTRY_SP, 320);
        assert_eq!(OFF_IBTC, 328);
    }

    #[test]
    fn parity_table_is_x86_pf() {
        let ctx = JitContext::new();
        // PF is set for an even number of one bits in the low byte.
        for (byte, pf) in [(0x00, 1), (0x01, 0), (0x03, 1), (0x07, 0), (0xfe, 0), (0xff, 1), (0x80, 0)] {
            assert_eq!(ctx.parity[byte], pf, "byte {byte:#x}");
        }
    }

    #[test]
    fn journal_grows_keeping_entries() {
        let mut ctx = JitContext::new();
        ctx.journal_cur = ctx.journal_cur.wrapping_add(3);
        ctx.journal_double();
        assert_eq!(ctx.journal().len(), 3);
        assert_eq!(ctx.journal.len(), 2 * JOURNAL_INITIAL);
    }
}
