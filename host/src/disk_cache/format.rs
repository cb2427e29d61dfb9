//! The persistent cache's file format: one file per object and policy,
//! a fixed header then the entries, each a region's IR with its guest
//! addresses relative to the object's anchor (see `crate::objects`), in
//! the plugin ABI's stable region encoding (`aarchx_plugin_abi::encoding`,
//! which carries its own version of the op and type numbering).
//!
//! ```text
//! header (104 bytes, little-endian)
//!   magic "AARCHXTC", format version u32, entry count u32,
//!   policy fingerprint [32], object content hash [32], layout u64,
//!   body length u64, body CRC-32 u32, header CRC-32 u32
//! body: entries back to back
//!   position in the object u64, shape u8, memory model u8, 0 u16,
//!   length u32, the encoded region (that many bytes)
//! ```
//!
//! Reading checks the two checksums and every length against the file's;
//! decoding an entry checks its encoding; the runtime then runs the IR
//! verifier on each region it takes. A file that fails is [`FormatError`],
//! never half-used.

use aarchx_ir::Region;
use aarchx_pass::MemoryModel;
use aarchx_plugin_abi::encoding::{decode_region, encode_region, DecodeError};

use crate::translate::Shape;

const MAGIC: &[u8; 8] = b"AARCHXTC";
/// Bumped whenever the layout of the file changes.
pub const VERSION: u32 = 1;
pub const HEADER_LEN: usize = 104;
/// An entry's key and length, before its encoded region.
const ENTRY_HEAD: usize = 16;

/// What a file is for: every part must match for its entries to be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub fingerprint: [u8; 32],
    pub object: [u8; 32],
    pub layout: u64,
}

/// Which translation of which code an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The region entry's position in the object.
    pub offset: u64,
    pub shape: u8,
    pub model: u8,
}

impl Key {
    pub fn new(offset: u64, shape: Shape, model: MemoryModel) -> Key {
        let shape = match shape {
            Shape::Quick => 0,
            Shape::Superblock => 1,
        };
        let model = match model {
            MemoryModel::Plain => 0,
            MemoryModel::Ordered => 1,
        };
        Key { offset, shape, model }
    }
}

/// Why a file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("not an aarchx cache file")]
    Magic,
    #[error("format version {0}, this aarchx reads {VERSION}")]
    Version(u32),
    #[error("truncated: {0} bytes where the header says more")]
    Truncated(usize),
    #[error("checksum mismatch")]
    Checksum,
    #[error("entry {0} runs past the end")]
    Entry(usize),
    #[error("a region: {0}")]
    Region(#[from] DecodeError),
    #[error("a region: {0}")]
    Invalid(String),
    #[error("made for another object, layout or policy than its name says")]
    Header,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Appends the entry for `region`, whose addresses are already relative
/// to the anchor (`Region::relocate`).
pub fn encode_entry(out: &mut Vec<u8>, key: Key, region: &Region) {
    let encoded = encode_region(region);
    out.extend_from_slice(&key.offset.to_le_bytes());
    out.extend_from_slice(&[key.shape, key.model, 0, 0]);
    out.extend_from_slice(&(encoded.len() as u32).to_le_bytes());
    out.extend_from_slice(&encoded);
}

/// The key and length of the entry at the start of `bytes`, if it fits.
pub fn entry_at(bytes: &[u8]) -> Option<(Key, usize)> {
    let head = bytes.get(..ENTRY_HEAD)?;
    let len = ENTRY_HEAD.checked_add(u32_at(head, 12) as usize).filter(|&l| l <= bytes.len())?;
    Some((Key { offset: u64_at(head, 0), shape: head[8], model: head[9] }, len))
}

/// The whole file: `header`, then `entries` (encoded by [`encode_entry`]).
pub fn encode_file(header: &Header, count: u32, entries: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + entries.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&header.fingerprint);
    out.extend_from_slice(&header.object);
    out.extend_from_slice(&header.layout.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(entries).to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_LEN);
    out.extend_from_slice(entries);
    out
}

/// A checked file: its header and where each entry is in its bytes.
pub struct Parsed {
    pub header: Header,
    /// Each entry's key and byte range (key included).
    pub entries: Vec<(Key, std::ops::Range<usize>)>,
}

/// Checks `bytes` as a cache file and indexes its entries.
pub fn parse(bytes: &[u8]) -> Result<Parsed, FormatError> {
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(if bytes.len() < HEADER_LEN { FormatError::Truncated(bytes.len()) } else { FormatError::Magic });
    }
    let version = u32_at(bytes, 8);
    if version != VERSION {
        return Err(FormatError::Version(version));
    }
    if bytes.len() < HEADER_LEN {
        return Err(FormatError::Truncated(bytes.len()));
    }
    if crc32fast::hash(&bytes[..HEADER_LEN - 4]) != u32_at(bytes, HEADER_LEN - 4) {
        return Err(FormatError::Checksum);
    }
    let count = u32_at(bytes, 12) as usize;
    let header = Header {
        fingerprint: bytes[16..48].try_into().expect("32 bytes"),
        object: bytes[48..80].try_into().expect("32 bytes"),
        layout: u64_at(bytes, 80),
    };
    let body = &bytes[HEADER_LEN..];
    if body.len() as u64 != u64_at(bytes, 88) {
        return Err(FormatError::Truncated(bytes.len()));
    }
    if crc32fast::hash(body) != u32_at(bytes, 96) {
        return Err(FormatError::Checksum);
    }
    let mut entries = Vec::with_capacity(count.min(body.len() / ENTRY_HEAD));
    let mut at = HEADER_LEN;
    for i in 0..count {
        let (key, len) = entry_at(&bytes[at..]).ok_or(FormatError::Entry(i))?;
        entries.push((key, at..at + len));
        at += len;
    }
    if at != bytes.len() {
        return Err(FormatError::Entry(count));
    }
    Ok(Parsed { header, entries })
}

/// The region of an entry (its byte range of a file [`parse`] accepted),
/// its addresses relative to the anchor. The file's checksums stand
/// for the IR's validity on the fast path; `verify` also runs the IR
/// verifier on it (`aarchx cache verify`).
pub fn decode_entry(entry: &[u8], verify: bool) -> Result<Region, FormatError> {
    let region = decode_region(&entry[ENTRY_HEAD..])?;
    if verify {
        aarchx_ir::verify::verify(&region).map_err(|e| FormatError::Invalid(e.to_string()))?;
    }
    Ok(region)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region() -> Region {
        aarchx_ir::parse::parse(
            "region 0x1000\n\
             block0:\n\
             insn 0x1000 7\n\
             v0 = iconst.i64 addr 0x2000\n\
             v1 = load.i64 v0\n\
             set rax, v1\n\
             exit jump 0x1007\n",
        )
        .expect("parses")
    }

    fn file() -> (Vec<u8>, Header) {
        let header = Header { fingerprint: [1; 32], object: [2; 32], layout: 3 };
        let mut body = Vec::new();
        encode_entry(&mut body, Key::new(0x1000, Shape::Quick, MemoryModel::Plain), &region());
        encode_entry(&mut body, Key::new(0x1000, Shape::Superblock, MemoryModel::Ordered), &region());
        (encode_file(&header, 2, &body), header)
    }

    #[test]
    fn entries_read_back_as_written() {
        let (bytes, header) = file();
        let parsed = parse(&bytes).expect("parses");
        assert_eq!(parsed.header, header);
        assert_eq!(parsed.entries.len(), 2);
        assert_eq!(parsed.entries[1].0, Key { offset: 0x1000, shape: 1, model: 1 });
        assert_eq!(entry_at(&bytes[parsed.entries[0].1.start..]).map(|(_, n)| n), Some(parsed.entries[0].1.len()));
        for (_, range) in &parsed.entries {
            assert_eq!(decode_entry(&bytes[range.clone()], true).expect("decodes"), region());
        }
    }

    #[test]
    fn truncation_and_every_bit_flip_are_caught() {
        let (bytes, _) = file();
        for len in 0..bytes.len() {
            assert!(parse(&bytes[..len]).is_err(), "truncated to {len} bytes");
        }
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(parse(&b).is_err(), "bit {bit} flipped");
        }
        let mut other = bytes.clone();
        other[8] = 2;
        assert_eq!(parse(&other).err(), Some(FormatError::Version(2)));
    }
}
