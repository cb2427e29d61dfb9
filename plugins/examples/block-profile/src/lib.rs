//! The `block-profile` plugin: counts how often each block (region) of
//! guest code runs and, at exit, has the host write the profile as a TSV to
//! the path of its `output` option, one row per block, most executed first:
//!
//! ```text
//! address	hash	bytes	insns	executions
//! 0x401020	0x9f1c2d3e4b5a6978	23	7	100000
//! ```
//!
//! `hash` is FNV-1a 64 of the block's guest bytes (read through the pass
//! context when the block is translated); `bytes` spans its first to the
//! end of its last instruction; `insns` counts its guest instructions. A
//! block whose code changes is a new row (same address, new hash). On
//! stderr it prints how many blocks cover 50, 90 and 99 % of executions.
//!
//! Each region gets one `count` (its own counter) at its start: the number
//! of times it was entered. Builds as a native `cdylib` and as a
//! `wasm32-unknown-unknown` module.
#![no_std]

extern crate alloc;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::Write;
use core::hash::Hasher;

use aarchx_plugin_sdk::ir::{InstData, Opcode, Region, Type, Value};
use aarchx_plugin_sdk::pass::{Report, ReportFile};
use aarchx_plugin_sdk::{OptionDescriptor, Options, Pass, PassContext, PassError, PassMeta, PluginPass, Stage, Str};

/// What is known of a block from its translation.
struct Block {
    addr: u64,
    hash: u64,
    bytes: u64,
    insns: u64,
}

pub struct BlockProfile {
    output: String,
    /// The blocks, by counter id.
    blocks: Vec<Block>,
    /// Counter id by (address, hash): a block translated again (after a
    /// cache flush) keeps its counter.
    ids: BTreeMap<(u64, u64), u32>,
}

impl Pass for BlockProfile {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        let addr = region.entry;
        let (mut end, mut insns) = (addr, 0u64);
        for (a, len) in region.guest_insns() {
            end = end.max(a + u64::from(len));
            insns += 1;
        }
        let mut code = vec![0u8; (end - addr) as usize];
        let got = cx.code.read(addr, &mut code);
        if got != code.len() {
            return Err(PassError(format!("could read only {got} of the {} bytes at {addr:#x}", code.len())));
        }
        let mut h = fnv::FnvHasher::default();
        h.write(&code);
        let hash = h.finish();
        let next = self.blocks.len() as u32;
        let id = *self.ids.entry((addr, hash)).or_insert(next);
        if id == next {
            self.blocks.push(Block { addr, hash, bytes: code.len() as u64, insns });
        }
        let Some(entry) = region.blocks.first_mut() else {
            return Err(PassError(format!("the region at {addr:#x} has no blocks")));
        };
        entry.insts.insert(0, Value(region.insts.len() as u32));
        region.insts.push(InstData { op: Opcode::Count, ty: Type::I64, aux: 0, args: [id, 1, 0] });
        Ok(())
    }

    fn finish(&mut self, counters: &[u64]) -> Result<Report, PassError> {
        let executions = |id: usize| counters.get(id).copied().unwrap_or(0);
        let mut order: Vec<usize> = (0..self.blocks.len()).collect();
        order.sort_by_key(|&id| (core::cmp::Reverse(executions(id)), self.blocks[id].addr));
        let mut tsv = String::from("address\thash\tbytes\tinsns\texecutions\n");
        for &id in &order {
            let b = &self.blocks[id];
            let _ = writeln!(tsv, "{:#x}\t{:#018x}\t{}\t{}\t{}", b.addr, b.hash, b.bytes, b.insns, executions(id));
        }
        let total: u64 = order.iter().map(|&id| executions(id)).sum();
        let cover = |percent: u64| {
            let (mut sum, mut n) = (0u64, 0usize);
            // The fewest blocks (most executed first) with at least
            // `percent` % of all executions: sum / total >= percent / 100.
            while u128::from(sum) * 100 < u128::from(total) * u128::from(percent) {
                sum += executions(order[n]);
                n += 1;
            }
            n
        };
        let text = format!(
            "aarchx: block-profile: {} blocks, {total} executions; 50% in {} blocks, 90% in {}, 99% in {}; \
             profile in {}\n",
            self.blocks.len(),
            cover(50),
            cover(90),
            cover(99),
            self.output
        );
        Ok(Report { text, file: Some(ReportFile { path: self.output.clone(), bytes: tsv.into_bytes() }) })
    }
}

impl PluginPass for BlockProfile {
    const META: PassMeta = PassMeta {
        name: "block-profile",
        version: 1,
        stage: Stage::Transform,
        doc: "Counts executions per block; writes them as a TSV at exit, with a coverage summary.",
        options: &[OptionDescriptor::string("output", "block-profile.tsv", "where the host writes the TSV at exit")],
        before: &[],
        after: &[Str::new("decode")],
    };

    fn create(options: &Options) -> Result<BlockProfile, PassError> {
        let output = match options.0.get("output") {
            Some(aarchx_plugin_sdk::pass::OptionValue::Str(s)) if !s.is_empty() => s.clone(),
            _ => return Err(PassError(String::from("option `output` must name a file"))),
        };
        Ok(BlockProfile { output, blocks: Vec::new(), ids: BTreeMap::new() })
    }
}

aarchx_plugin_sdk::export_plugin!(BlockProfile);
