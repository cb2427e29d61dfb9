//! The AES round ops and the carry-less multiply on the Armv8 Cryptographic
//! Extension (FEAT_AES: AESE/AESD/AESMC/AESIMC, PMULL/PMULL2): the rounds,
//! aesimc and pclmulqdq are one to four arm64 instructions each,
//! aeskeygenassist about a dozen (a TBL picks its words out of AESE's
//! result).
//!
//! The rounds differ in where the key goes: x86's `aesenc` is
//! MixColumns(SubBytes(ShiftRows(state))) XOR key, Arm's AESE is
//! SubBytes(ShiftRows(state XOR key)). So AESE runs with a zero key
//! (AESE Vz, Va with Vz = 0 computes into Vz what AESE Va, Vz would), and
//! the x86 key is XORed in after.
//!
//! A host without FEAT_AES or FEAT_PMULL (the crypto extension is
//! optional) gets a decline for these ops: their regions run on the
//! interpreter. Code generated on another architecture (the codegen
//! counts) assumes the extension.

use aarchx_ir::{InstData, Opcode, Value};
use dynasmrt::DynasmApi;

use super::frame::{T0, T1, VT0, VT1};
use super::{a64, Decline, Lowerer};
use crate::jit::host::crypto_extension;

/// The `tbl` indices that take `aes_keygen`'s bytes out of AESE's result:
/// AESE with a zero key leaves S(v[r + 4((c + r) % 4)]) in byte r + 4c,
/// so S of byte r of column k sits at byte r + 4((k - r) % 4). Dwords 0
/// and 1 come from column 1 (dword 1 rotated: its byte r is the source's
/// byte r + 1), dwords 2 and 3 from column 3.
const KEYGEN_INDICES: u128 = {
    let mut idx = 0u128;
    let mut i = 0;
    while i < 16 {
        let (dword, byte) = (i / 4, i % 4);
        let column = if dword < 2 { 1 } else { 3 };
        let row = if dword % 2 == 1 { (byte + 1) % 4 } else { byte };
        let from = row + 4 * ((column + 4 - row) % 4);
        idx |= (from as u128) << (8 * i);
        i += 1;
    }
    idx
};

impl Lowerer<'_> {
    pub(super) fn crypto_op(&mut self, v: Value, d: &InstData) -> Result<(), Decline> {
        if !crypto_extension() {
            return Err(self.decline(d));
        }
        let a = self.vsrc(d.arg(0), 0);
        match d.op {
            Opcode::AesEnc | Opcode::AesEncLast | Opcode::AesDec | Opcode::AesDecLast => {
                let key = self.vsrc(d.arg(1), 1);
                let r = self.vdst(v, 3);
                a64!(self.ops; movi V(VT0).D2, #0);
                match d.op {
                    Opcode::AesEnc | Opcode::AesEncLast => a64!(self.ops; aese V(VT0).B16, V(a).B16),
                    _ => a64!(self.ops; aesd V(VT0).B16, V(a).B16),
                }
                match d.op {
                    Opcode::AesEnc => a64!(self.ops; aesmc V(VT0).B16, V(VT0).B16),
                    Opcode::AesDec => a64!(self.ops; aesimc V(VT0).B16, V(VT0).B16),
                    _ => {}
                }
                a64!(self.ops; eor V(r).B16, V(VT0).B16, V(key).B16);
                self.vdone(v, r);
            }
            Opcode::AesImc => {
                let r = self.vdst(v, 3);
                a64!(self.ops; aesimc V(r).B16, V(a).B16);
                self.vdone(v, r);
            }
            Opcode::AesKeygen => {
                let r = self.vdst(v, 3);
                a64!(self.ops
                    ; movi V(VT0).D2, #0
                    ; aese V(VT0).B16, V(a).B16
                );
                self.mov64(T0, KEYGEN_INDICES as u64);
                self.mov64(T1, (KEYGEN_INDICES >> 64) as u64);
                a64!(self.ops
                    ; fmov D(VT1), X(T0)
                    ; mov V(VT1).D[1], X(T1)
                    ; tbl V(r).B16, {V(VT0).B16 * 1}, V(VT1).B16
                );
                if d.aux != 0 {
                    // The round constant into dwords 1 and 3.
                    self.mov64(T0, u64::from(d.aux) << 32);
                    a64!(self.ops
                        ; dup V(VT1).D2, X(T0)
                        ; eor V(r).B16, V(r).B16, V(VT1).B16
                    );
                }
                self.vdone(v, r);
            }
            Opcode::Clmul => {
                let b = self.vsrc(d.arg(1), 1);
                let r = self.vdst(v, 3);
                match d.aux {
                    0x00 => a64!(self.ops; pmull V(r).Q1, V(a).D1, V(b).D1),
                    0x11 => a64!(self.ops; pmull2 V(r).Q1, V(a).D2, V(b).D2),
                    // One high half and one low: the high one moved down.
                    0x01 => a64!(self.ops
                        ; ext V(VT0).B16, V(a).B16, V(a).B16, #8
                        ; pmull V(r).Q1, V(VT0).D1, V(b).D1
                    ),
                    _ => a64!(self.ops
                        ; ext V(VT0).B16, V(b).B16, V(b).B16, #8
                        ; pmull V(r).Q1, V(a).D1, V(VT0).D1
                    ),
                }
                self.vdone(v, r);
            }
            _ => return Err(self.decline(d)),
        }
        Ok(())
    }
}
