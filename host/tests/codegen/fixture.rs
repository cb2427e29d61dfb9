//! The fixture files: one per instruction family, each a list of forms
//! (`== hex bytes`, the only part read back) and, generated under each,
//! the form's disassembly and per policy variant the count and the arm64
//! code, one word and its disassembly a line (or the earlier variant it
//! is identical to).
//! Everything but the `==` lines' bytes is rewritten by blessing.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};

use crate::arm64;
use crate::pipeline::{self, GUEST, VARIANTS};

/// One x86 instruction form, or a short sequence (to show what the
/// optimisation passes remove when a later instruction overwrites flags).
pub struct Form {
    pub bytes: Vec<u8>,
    /// Intel-syntax disassembly at [`GUEST`], instructions joined by ` ; `.
    pub text: String,
}

/// A fixture file as found on disk.
pub struct Fixture {
    pub path: PathBuf,
    pub text: String,
    pub forms: Vec<Form>,
}

impl Fixture {
    pub fn load(path: &Path) -> Fixture {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let forms = text
            .lines()
            .filter_map(|l| l.strip_prefix("== "))
            .map(|l| {
                let hex = l.split(';').next().unwrap_or_default();
                let bytes = hex
                    .split_whitespace()
                    .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|_| panic!("{}: bad byte {b:?}", path.display())))
                    .collect::<Vec<_>>();
                Form { text: disassemble(&bytes), bytes }
            })
            .collect();
        Fixture { path: path.to_owned(), text, forms }
    }

    /// The file as the backend would have it now.
    pub fn render(&self) -> String {
        let family = self.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut out = format!(
            "# {family}: the arm64 code of each x86-64 form per policy variant (see docs/codegen.md).\n\
             # Lines other than the `==` bytes are generated: AARCHX_BLESS=1 cargo test -p aarchx --test codegen\n"
        );
        for form in &self.forms {
            let hex: Vec<String> = form.bytes.iter().map(|b| format!("{b:02x}")).collect();
            let _ = write!(out, "\n== {} ; {}\n", hex.join(" "), form.text);
            let mut done: Vec<(&str, Result<Vec<u32>, String>)> = Vec::new();
            for v in VARIANTS {
                let code = pipeline::lower(&form.bytes, v);
                match (&code, done.iter().find(|(_, c)| *c == code)) {
                    (Ok(words), Some((same, _))) => {
                        let _ = writeln!(out, "{}: {}, same as {same}", v.name, words.len());
                    }
                    (Ok(words), None) => {
                        let _ = writeln!(out, "{}: {}", v.name, words.len());
                        for w in words {
                            let _ = writeln!(out, "    {w:08x}  {}", arm64::disassemble(*w));
                        }
                    }
                    (Err(why), _) => {
                        let _ = writeln!(out, "{}: not lowered: {why}", v.name);
                    }
                }
                done.push((v.name, code));
            }
        }
        out
    }
}

/// The first line where `old` and `new` differ, both versions.
pub fn first_difference(old: &str, new: &str) -> String {
    let (mut a, mut b) = (old.lines(), new.lines());
    for n in 1.. {
        match (a.next(), b.next()) {
            (None, None) => break,
            (x, y) if x == y => continue,
            (x, y) => return format!("  line {n}:\n  - {}\n  + {}", x.unwrap_or("<end>"), y.unwrap_or("<end>")),
        }
    }
    String::from("  (same lines, different line ends)")
}

fn disassemble(bytes: &[u8]) -> String {
    let mut decoder = Decoder::with_ip(64, bytes, GUEST, DecoderOptions::NONE);
    let mut formatter = IntelFormatter::new();
    let mut insn = Instruction::default();
    let mut texts = Vec::new();
    while decoder.can_decode() {
        decoder.decode_out(&mut insn);
        let mut text = String::new();
        formatter.format(&insn, &mut text);
        texts.push(text);
    }
    texts.join(" ; ")
}
