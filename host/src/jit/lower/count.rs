//! `count`: adds its amount to an instrumentation counter, addressed
//! absolutely (the counter table never moves, see [`crate::counters`]).
//! One atomic add (LSE `stadd`, which the JIT's locked accesses use too),
//! so that counts from several guest threads are not lost, as the
//! interpreter's `fetch_add` does not lose them. The counter is the
//! runtime's memory, so the journal does not record it.

use aarchx_ir::InstData;
use dynasmrt::DynasmApi;

use super::frame::{T0, T1};
use super::{a64, Decline, Lowerer};

impl Lowerer<'_> {
    pub(super) fn count_op(&mut self, d: &InstData) -> Result<(), Decline> {
        self.mov64(T0, crate::counters::address(d.args[0]));
        self.mov64(T1, u64::from(d.args[1]));
        a64!(self.ops; stadd X(T1), [X(T0)]);
        Ok(())
    }
}
