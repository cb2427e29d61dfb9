//! SSE and SSE2: moves, packed integer, scalar and packed float arithmetic,
//! conversions and compares.

use iced_x86::Mnemonic;

use super::lift::Outcome;
use super::operand::L;

impl L<'_, '_> {
    pub fn sse(&mut self, _m: Mnemonic) -> Outcome {
        Outcome::Unsupported
    }
}
