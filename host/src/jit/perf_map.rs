//! The perf map: with `AARCHX_PERF_MAP` set, every compiled block is
//! described in `/tmp/perf-PID.map`, the file Linux perf reads for JIT code
//! (one `START SIZE NAME` line per symbol, hexadecimal). Each guest
//! instruction's arm64 code is a symbol named by its guest address and
//! its region, so `perf report` on an arm64 host, and `bench/profile.py
//! --guest` under qemu, attribute the arm64 instructions executed to the
//! guest instructions they were translated from.
//!
//! Addresses are reused after the cache is reset (a full cache): a later
//! line for the same range describes the code there from then on. A forked
//! child keeps writing to its parent's file.

use std::fs::File;
use std::io::{BufWriter, Write as _};

use super::lower::Lowered;

/// The open map file.
pub struct PerfMap {
    file: BufWriter<File>,
}

impl PerfMap {
    /// The map of this process when `AARCHX_PERF_MAP` is set (not empty);
    /// `None` otherwise, or with a warning when the file cannot be made.
    pub fn from_env() -> Option<PerfMap> {
        std::env::var_os("AARCHX_PERF_MAP").filter(|v| !v.is_empty())?;
        let path = format!("/tmp/perf-{}.map", std::process::id());
        match File::create(&path) {
            Ok(file) => Some(PerfMap { file: BufWriter::new(file) }),
            Err(e) => {
                eprintln!("aarchx: warning: AARCHX_PERF_MAP: cannot create {path}: {e}");
                None
            }
        }
    }

    /// Describes the block of region `entry` placed at `start`: its
    /// prologue, each guest instruction's code, its out-of-line code.
    pub fn record(&mut self, start: usize, entry: u64, lowered: &Lowered) {
        let body_end = lowered.body_end as usize;
        let mut spans: Vec<(usize, usize, String)> = Vec::with_capacity(lowered.guest_marks.len() + 2);
        let first = lowered.guest_marks.first().map_or(body_end, |&(at, _)| at as usize);
        spans.push((0, first, format!("aarchx region {entry:#x} entry")));
        for (i, &(at, guest)) in lowered.guest_marks.iter().enumerate() {
            let end = lowered.guest_marks.get(i + 1).map_or(body_end, |&(next, _)| next as usize);
            spans.push((at as usize, end, format!("x86 {guest:#x} region {entry:#x}")));
        }
        spans.push((body_end, lowered.code.len(), format!("aarchx region {entry:#x} out of line")));
        for (from, to, name) in spans.into_iter().filter(|(from, to, _)| to > from) {
            // A write that fails loses profile lines only, never the run.
            let _ = writeln!(self.file, "{:x} {:x} {name}", start + from, to - from);
        }
        let _ = self.file.flush();
    }
}
