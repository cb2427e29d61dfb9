//! `count`: adds its amount to an instrumentation counter, addressed
//! absolutely (the counter table never moves, see [`crate::counters`]).
//! A plain load, add and store: the guest is single-threaded, and the
//! counter is the runtime's memory, so the journal does not record it.

use aarchx_ir::InstData;
use dynasmrt::DynasmApi;

use super::frame::{T0, T1, T2};
use super::{a64, Decline, Lowerer};

impl Lowerer<'_> {
    pub(super) fn count_op(&mut self, d: &InstData) -> Result<(), Decline> {
        let amount = d.args[1];
        self.mov64(T0, crate::counters::address(d.args[0]));
        a64!(self.ops; ldr X(T1), [X(T0)]);
        if amount < 4096 {
            a64!(self.ops; add XSP(T1), XSP(T1), #amount);
        } else {
            self.mov64(T2, u64::from(amount));
            a64!(self.ops; add X(T1), X(T1), X(T2));
        }
        a64!(self.ops; str X(T1), [X(T0)]);
        Ok(())
    }
}
