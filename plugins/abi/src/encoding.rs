//! The stable byte encoding of a region, the form in which IR crosses the
//! plugin boundary. Little-endian throughout:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `AXIR` |
//! | 4 | 4 | encoding version ([`IR_ENCODING_VERSION`]) |
//! | 8 | 8 | entry: guest address |
//! | 16 | 4 | `n_insts` |
//! | 20 | 4 | `n_blocks` |
//! | 24 | 16 × `n_insts` | instructions: op u8, type u8, aux u16, args 3 × u32 |
//! | … | | per block: `n` u32, then `n` × u32 instruction indices |
//!
//! Decoding checks the layout, every opcode and every type byte; whether
//! the region is well-formed IR is the verifier's job.

use alloc::vec::Vec;

use aarchx_ir::region::BlockData;
use aarchx_ir::{InstData, Opcode, Region, Type, Value};

/// The first four bytes of an encoded region.
pub const IR_MAGIC: [u8; 4] = *b"AXIR";

/// The version of this encoding and of the op and type numbering. Bumped
/// whenever an opcode or type byte changes meaning.
pub const IR_ENCODING_VERSION: u32 = 2;

const HEADER: usize = 24;
const INST: usize = 16;

/// An encoded region that cannot be read back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("encoded region does not start with the magic `AXIR`")]
    Magic,
    #[error("encoded region has IR encoding version {got}, expected {want}")]
    Version { got: u32, want: u32 },
    #[error("encoded region ends early, at byte {0}")]
    Truncated(usize),
    #[error("encoded region has {0} bytes after its last block")]
    Trailing(usize),
    #[error("instruction {inst} has unknown opcode {byte}")]
    Opcode { inst: usize, byte: u8 },
    #[error("instruction {inst} has unknown type {byte}")]
    Type { inst: usize, byte: u8 },
}

/// Encodes `region`.
pub fn encode_region(region: &Region) -> Vec<u8> {
    let layout: usize = region.blocks.iter().map(|b| 4 + 4 * b.insts.len()).sum();
    let mut out = Vec::with_capacity(HEADER + INST * region.insts.len() + layout);
    out.extend_from_slice(&IR_MAGIC);
    out.extend_from_slice(&IR_ENCODING_VERSION.to_le_bytes());
    out.extend_from_slice(&region.entry.to_le_bytes());
    out.extend_from_slice(&(region.insts.len() as u32).to_le_bytes());
    out.extend_from_slice(&(region.blocks.len() as u32).to_le_bytes());
    for d in &region.insts {
        out.push(d.op as u8);
        out.push(d.ty as u8);
        out.extend_from_slice(&d.aux.to_le_bytes());
        for a in d.args {
            out.extend_from_slice(&a.to_le_bytes());
        }
    }
    for b in &region.blocks {
        out.extend_from_slice(&(b.insts.len() as u32).to_le_bytes());
        for v in &b.insts {
            out.extend_from_slice(&v.0.to_le_bytes());
        }
    }
    out
}

/// Reads an encoded region back.
pub fn decode_region(bytes: &[u8]) -> Result<Region, DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != IR_MAGIC {
        return Err(DecodeError::Magic);
    }
    let version = r.u32()?;
    if version != IR_ENCODING_VERSION {
        return Err(DecodeError::Version { got: version, want: IR_ENCODING_VERSION });
    }
    let entry = r.u64()?;
    let n_insts = r.u32()? as usize;
    let n_blocks = r.u32()? as usize;
    let mut region = Region::new(entry);
    // Bounded by the input's length, so a corrupt count cannot make us
    // allocate more than the bytes could describe.
    region.insts.reserve(n_insts.min(bytes.len() / INST));
    for inst in 0..n_insts {
        let rec = r.take(INST)?;
        let op = Opcode::from_u8(rec[0]).ok_or(DecodeError::Opcode { inst, byte: rec[0] })?;
        let ty = Type::from_u8(rec[1]).ok_or(DecodeError::Type { inst, byte: rec[1] })?;
        let word = |i: usize| u32::from_le_bytes([rec[i], rec[i + 1], rec[i + 2], rec[i + 3]]);
        region.insts.push(InstData {
            op,
            ty,
            aux: u16::from_le_bytes([rec[2], rec[3]]),
            args: [word(4), word(8), word(12)],
        });
    }
    for _ in 0..n_blocks {
        let n = r.u32()? as usize;
        let mut insts = Vec::with_capacity(n.min(bytes.len() / 4));
        for _ in 0..n {
            insts.push(Value(r.u32()?));
        }
        region.blocks.push(BlockData { insts });
    }
    if r.at != bytes.len() {
        return Err(DecodeError::Trailing(bytes.len() - r.at));
    }
    Ok(region)
}

/// A cursor over the input.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let s = self.bytes.get(self.at..self.at + n).ok_or(DecodeError::Truncated(self.bytes.len()))?;
        self.at += n;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from(self.u32()?) | (u64::from(self.u32()?) << 32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aarchx_ir::{Builder, ExitKind, Reg};

    fn sample() -> Region {
        let mut r = Region::new(0x401000);
        let mut b = Builder::new(&mut r);
        b.insn(0x401000, 3);
        let x = b.get(Reg::RAX);
        let one = b.iconst(Type::I64, 1);
        let y = b.binary(Opcode::Add, Type::I64, x, one);
        b.set(Reg::RAX, y);
        b.exit(ExitKind::Jump, 0x401003);
        r
    }

    #[test]
    fn round_trips() {
        let r = sample();
        let bytes = encode_region(&r);
        assert_eq!(&bytes[..4], b"AXIR");
        assert_eq!(decode_region(&bytes), Ok(r));
    }

    #[test]
    fn rejects_bad_input() {
        let good = encode_region(&sample());
        let mut b = good.clone();
        b[0] = b'X';
        assert_eq!(decode_region(&b), Err(DecodeError::Magic));
        let mut b = good.clone();
        b[4] = 9;
        assert_eq!(decode_region(&b), Err(DecodeError::Version { got: 9, want: IR_ENCODING_VERSION }));
        let mut b = good.clone();
        b[HEADER + INST] = 0xff;
        assert_eq!(decode_region(&b), Err(DecodeError::Opcode { inst: 1, byte: 0xff }));
        let mut b = good.clone();
        b[HEADER + 1] = 0xee;
        assert_eq!(decode_region(&b), Err(DecodeError::Type { inst: 0, byte: 0xee }));
        assert!(matches!(decode_region(&good[..good.len() - 1]), Err(DecodeError::Truncated(_))));
        let mut b = good;
        b.push(0);
        assert_eq!(decode_region(&b), Err(DecodeError::Trailing(1)));
    }
}
