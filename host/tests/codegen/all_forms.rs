//! The count table of every form the lifter implements: the forms the
//! oracle runs on the real CPU (`host/tests/oracle/forms.rs`, enumerated
//! from iced-x86's encoding table), each lowered under every policy
//! variant, one line per form with its arm64 instruction counts. The
//! `*.txt` fixtures show the code of chosen forms word for word; this one
//! pins the length of all of them, so a change that makes any form's code
//! longer shows in review.

use std::fmt::Write;
use std::path::PathBuf;

use crate::forms;
use crate::layout::Layout;
use crate::pipeline::{self, GUEST, VARIANTS};

/// The oracle's forms, generated for an arena at fixed addresses around
/// [`GUEST`] (below 2 GiB, as `[disp32]` forms need).
pub fn forms() -> Vec<forms::Form> {
    let layout =
        Layout { code: GUEST - 0x800, insn: GUEST, epilogue: GUEST + 0x40, data: GUEST + 0x800, buf: GUEST + 0x2800 };
    forms::all(&layout)
}

pub fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/codegen/all-forms.counts")
}

/// The table as the backend would have it now.
pub fn render(forms: &[forms::Form]) -> String {
    let mut out = String::from(
        "# Every form the lifter implements (the oracle's list): arm64 instructions emitted per policy variant\n\
         # (see docs/codegen.md; `-`: not lowered, the region runs on the interpreter), iced's encoding name,\n\
         # the bytes and their disassembly. Generated: AARCHX_BLESS=1 cargo test -p aarchx --test codegen\n#\n",
    );
    let names: Vec<String> = VARIANTS.iter().map(|v| format!("{:>12}", v.name)).collect();
    let _ = writeln!(out, "#{}  form", names.join(""));
    for form in forms {
        let counts: Vec<String> = VARIANTS
            .iter()
            .map(|v| match pipeline::lower(&form.bytes, v) {
                Ok(words) => format!("{:>12}", words.len()),
                Err(_) => format!("{:>12}", "-"),
            })
            .collect();
        let _ = writeln!(out, " {}  {} ; {} ; {}", counts.join(""), form.code, form.hex(), form.text);
    }
    out
}
