//! The byte encoding of a pass's validated options, handed to a plugin's
//! `create`. Little-endian: a u32 count, then per option its name (u32
//! length + UTF-8 bytes), a kind byte (0 bool, 1 integer, 2 string) and the
//! value (bool: one byte; integer: i64; string: u32 length + UTF-8 bytes).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use aarchx_pass::{OptionValue, Options};

/// Encoded options that cannot be read back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionsDecodeError {
    #[error("encoded options end early")]
    Truncated,
    #[error("encoded option has unknown kind {0}")]
    Kind(u8),
    #[error("encoded option text is not UTF-8")]
    Utf8,
}

/// Encodes `options`.
pub fn encode_options(options: &Options) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(options.0.len() as u32).to_le_bytes());
    for (name, value) in &options.0 {
        put_str(&mut out, name);
        match value {
            OptionValue::Bool(b) => out.extend_from_slice(&[0, u8::from(*b)]),
            OptionValue::Int(i) => {
                out.push(1);
                out.extend_from_slice(&i.to_le_bytes());
            }
            OptionValue::Str(s) => {
                out.push(2);
                put_str(&mut out, s);
            }
        }
    }
    out
}

/// Reads encoded options back.
pub fn decode_options(bytes: &[u8]) -> Result<Options, OptionsDecodeError> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], OptionsDecodeError> {
        let s = bytes.get(at..at + n).ok_or(OptionsDecodeError::Truncated)?;
        at += n;
        Ok(s)
    };
    let mut map = BTreeMap::new();
    let count = u32_of(take(4)?);
    for _ in 0..count {
        let len = u32_of(take(4)?) as usize;
        let name = string_of(take(len)?)?;
        let value = match take(1)?[0] {
            0 => OptionValue::Bool(take(1)?[0] != 0),
            1 => OptionValue::Int(i64::from_le_bytes(take(8)?.try_into().map_err(|_| OptionsDecodeError::Truncated)?)),
            2 => {
                let len = u32_of(take(4)?) as usize;
                OptionValue::Str(string_of(take(len)?)?)
            }
            k => return Err(OptionsDecodeError::Kind(k)),
        };
        map.insert(name, value);
    }
    Ok(Options(map))
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn u32_of(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn string_of(b: &[u8]) -> Result<String, OptionsDecodeError> {
    core::str::from_utf8(b).map(String::from).map_err(|_| OptionsDecodeError::Utf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut m = BTreeMap::new();
        m.insert(String::from("a"), OptionValue::Bool(true));
        m.insert(String::from("n"), OptionValue::Int(-7));
        m.insert(String::from("s"), OptionValue::Str(String::from("héllo")));
        let o = Options(m);
        assert_eq!(decode_options(&encode_options(&o)), Ok(o));
        assert_eq!(decode_options(&[1, 0, 0]), Err(OptionsDecodeError::Truncated));
        assert_eq!(decode_options(&[1, 0, 0, 0, 0, 0, 0, 0, 9]), Err(OptionsDecodeError::Kind(9)));
    }
}
