//! Relocated regions against regions translated in place: what makes a
//! persistent cache entry usable wherever its object is loaded. The same
//! code loaded at two bases, translated by the default pipeline (every
//! built-in pass), must give regions that differ exactly by the distance
//! between the bases: `Region::relocate` moves one onto the other. A pass
//! that turned a guest address into a plain constant (folded it with
//! something, dropped its marking) fails this.
//!
//! The code is real: function entries of this machine's libc (the targets
//! of its direct calls), in both shapes a region is translated in.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use aarchx::loader::elf;
use aarchx::mem::PROT_EXEC;
use aarchx::plugin::Registry;
use aarchx::policy;
use aarchx::translate::{PassFailure, Pipeline, Variant};
use aarchx_pass::{CpuLevel, GuestCode};
use iced_x86::{Decoder, DecoderOptions, FlowControl};

const LIBC: &str = "/lib/x86_64-linux-gnu/libc.so.6";
/// How many entries are translated (spread over the whole text).
const ENTRIES: usize = 400;

/// An ELF's load segments at a base, as guest code.
struct Loaded {
    base: u64,
    /// The image from its lowest address, zero where no segment is.
    image: Vec<u8>,
}

impl Loaded {
    fn new(file: &[u8], e: &elf::Elf, base: u64) -> Loaded {
        let end = e.segments.iter().map(|s| s.vaddr + s.memsz).max().expect("segments");
        let mut image = vec![0u8; end as usize];
        for s in &e.segments {
            image[s.vaddr as usize..][..s.filesz as usize]
                .copy_from_slice(&file[s.offset as usize..][..s.filesz as usize]);
        }
        Loaded { base, image }
    }
}

impl GuestCode for Loaded {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(src) = addr.checked_sub(self.base).and_then(|o| self.image.get(o as usize..)) else { return 0 };
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        n
    }
}

/// The targets of the direct calls in the executable segments, as
/// offsets from the image's start.
fn call_targets(file: &[u8], e: &elf::Elf) -> Vec<u64> {
    let mut targets = BTreeSet::new();
    for s in e.segments.iter().filter(|s| s.prot & PROT_EXEC != 0) {
        let text = &file[s.offset as usize..][..s.filesz as usize];
        let mut d = Decoder::with_ip(64, text, s.vaddr, DecoderOptions::NONE);
        for insn in &mut d {
            let t = insn.near_branch_target();
            if insn.flow_control() == FlowControl::Call && t >= s.vaddr && t < s.vaddr + s.filesz {
                targets.insert(t);
            }
        }
    }
    let all: Vec<u64> = targets.into_iter().collect();
    let step = (all.len() / ENTRIES).max(1);
    all.into_iter().step_by(step).collect()
}

#[test]
fn regions_relocated_equal_regions_translated_at_the_other_base() {
    if !Path::new(LIBC).is_file() {
        common::skip("relocation of libc's regions", &format!("{LIBC} is not on this machine"));
        return;
    }
    let file = std::fs::read(LIBC).expect("libc readable");
    let e = elf::parse(&file).expect("libc parses");
    let entries = call_targets(&file, &e);
    assert!(entries.len() > ENTRIES / 2, "found {} call targets in {LIBC}", entries.len());
    // Bases as ASLR gives them, a distance that is not a multiple of 4 GiB.
    let (a, b) = (0x7f12_3456_7000_u64, 0x5555_8765_4000_u64);
    let (at_a, at_b) = (Loaded::new(&file, &e, a), Loaded::new(&file, &e, b));
    let mut p = policy::builtin_default();
    p.cpu_level = CpuLevel::V3;
    let registry = Registry::builtin(aarchx_passes::BUILTIN);
    let passes = p.validate(&registry).expect("the default policy validates");
    let mut pipeline =
        Pipeline::new(&passes, p.translation_config(), None, PassFailure::Fail).expect("the default pipeline");
    let (mut compared, mut with_addresses) = (0, 0);
    for &offset in &entries {
        for superblock in [false, true] {
            let translate = |pipeline: &mut Pipeline, code: &Loaded| {
                let mut r = pipeline
                    .translate(code.base + offset, code, 0, Variant::Policy, superblock)
                    .unwrap_or_else(|e| panic!("{e}"));
                r.compact();
                r
            };
            let (mut from_a, in_b) = (translate(&mut pipeline, &at_a), translate(&mut pipeline, &at_b));
            if from_a.insts.iter().any(|d| d.is_guest_addr()) {
                with_addresses += 1;
                assert_ne!(from_a, in_b, "a region with guest addresses is the same at both bases");
            }
            from_a.relocate(b.wrapping_sub(a));
            assert!(
                from_a == in_b,
                "libc+{offset:#x} (superblock {superblock}) relocated from {a:#x} to {b:#x}:\n{}\ntranslated at {b:#x}:\n{}",
                aarchx_ir::print::print(&from_a),
                aarchx_ir::print::print(&in_b)
            );
            compared += 1;
        }
    }
    // The check is not vacuous: many regions hold guest addresses.
    assert!(with_addresses * 4 > compared, "{with_addresses} of {compared} regions hold guest addresses");
}
