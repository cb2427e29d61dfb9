//! The byte encoding of a pass's [`Report`] at exit, written by a plugin's
//! `finish`. Little-endian: the text (u32 length + UTF-8 bytes), then the
//! file's path (u32 length + UTF-8 bytes; length 0 means no file), then the
//! file's contents: every remaining byte.

use alloc::string::String;
use alloc::vec::Vec;

use aarchx_pass::{Report, ReportFile};

/// An encoded report that cannot be read back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReportDecodeError {
    #[error("encoded report ends early")]
    Truncated,
    #[error("encoded report text is not UTF-8")]
    Utf8,
    #[error("encoded report has {0} bytes of file contents but no path")]
    Trailing(usize),
}

/// Encodes `report`.
pub fn encode_report(report: &Report) -> Vec<u8> {
    let (path, bytes) = report.file.as_ref().map_or(("", &[][..]), |f| (f.path.as_str(), f.bytes.as_slice()));
    let mut out = Vec::with_capacity(8 + report.text.len() + path.len() + bytes.len());
    for s in [report.text.as_str(), path] {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(bytes);
    out
}

/// Reads an encoded report back.
pub fn decode_report(bytes: &[u8]) -> Result<Report, ReportDecodeError> {
    let mut rest = bytes;
    let text = take_str(&mut rest)?;
    let path = take_str(&mut rest)?;
    let file = match (path.is_empty(), rest.len()) {
        (true, 0) => None,
        (true, n) => return Err(ReportDecodeError::Trailing(n)),
        (false, _) => Some(ReportFile { path, bytes: rest.to_vec() }),
    };
    Ok(Report { text, file })
}

fn take_str(rest: &mut &[u8]) -> Result<String, ReportDecodeError> {
    let (len, tail) = rest.split_first_chunk::<4>().ok_or(ReportDecodeError::Truncated)?;
    let len = u32::from_le_bytes(*len) as usize;
    let s = tail.get(..len).ok_or(ReportDecodeError::Truncated)?;
    *rest = &tail[len..];
    core::str::from_utf8(s).map(String::from).map_err(|_| ReportDecodeError::Utf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let none = Report { text: String::from("aarchx: x: 1\n"), file: None };
        assert_eq!(decode_report(&encode_report(&none)), Ok(none));
        let file = Report {
            text: String::new(),
            file: Some(ReportFile { path: String::from("out.tsv"), bytes: Vec::from(&b"a\tb\n"[..]) }),
        };
        assert_eq!(decode_report(&encode_report(&file)), Ok(file));
        assert_eq!(decode_report(&[1, 0, 0]), Err(ReportDecodeError::Truncated));
        assert_eq!(decode_report(&[0, 0, 0, 0, 0, 0, 0, 0, 7]), Err(ReportDecodeError::Trailing(1)));
        assert_eq!(decode_report(&[1, 0, 0, 0, 0xff, 0, 0, 0, 0]), Err(ReportDecodeError::Utf8));
    }
}
