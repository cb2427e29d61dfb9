//! The `leaf-inline` pass: a region that starts at the entry of a C
//! library routine the runtime has in arm64 (the leaf helpers,
//! [`Helper::is_leaf`]: strlen, strnlen, memchr, rawmemchr, strchr,
//! strrchr, memset, memcpy/memmove, mempcpy, memcmp/bcmp, strcmp, strncmp,
//! strcpy, stpcpy and the checking `__memcpy_chk`, `__memmove_chk`,
//! `__memset_chk`) calls that routine
//! first. When it ran, the region returns as
//! the routine's `ret` would (lifted by the decoder); when it declined (a
//! fault, an overlapping move), the guest's own code follows, unchanged.
//!
//! Entries are found by name ([`aarchx_pass::GuestCode::function_at`]):
//! the C name, or a glibc variant `__NAME_*` (`__strlen_avx2`,
//! `__memmove_sse2_unaligned_erms`; a `_chk` variant only for a `_chk`
//! name, whose arguments differ). The substitution holds at the level of the System V ABI: rax,
//! rsp, rip, the callee-saved registers and memory are what the routine
//! leaves; the caller-saved registers the routine would have clobbered
//! keep their values and the status flags are cleared (DF, which the ABI
//! keeps clear across calls, is left alone): no caller can read either.

use aarchx_ir::cond::Helper;
use aarchx_ir::region::BlockData;
use aarchx_ir::{Block, Builder, InstData, Opcode, Reg, Region, Type};
use aarchx_pass::{OptionSpec, OptionValue, Pass, PassContext, PassError, PassInfo, Report, Stage};

pub static INFO: PassInfo = PassInfo {
    name: "leaf-inline",
    stage: Stage::Region,
    doc: "Calls arm64 versions of glibc's string and memory routines (strlen, memcpy, ...) at their entries.",
    options: &[
        OptionSpec {
            name: "enabled",
            default: || OptionValue::Bool(true),
            doc: "Substitute the routines (false: the pass changes nothing, for A/B runs).",
        },
        OptionSpec {
            name: "counts",
            default: || OptionValue::Bool(false),
            doc: "Count each routine's runs and declines and report them at exit.",
        },
    ],
    create: |o| Box::new(LeafInline { enabled: o.bool("enabled"), counts: o.bool("counts") }),
};

/// The routines by the C names they serve.
const ROUTINES: [(&str, Helper); 26] = [
    ("strlen", Helper::Strlen),
    ("memchr", Helper::Memchr),
    ("memset", Helper::Memset),
    ("memmove", Helper::Memmove),
    ("memcpy", Helper::Memmove),
    ("memcmp", Helper::Memcmp),
    ("bcmp", Helper::Memcmp),
    ("strcmp", Helper::Strcmp),
    ("strchr", Helper::Strchr),
    ("index", Helper::Strchr),
    ("strnlen", Helper::Strnlen),
    ("strncmp", Helper::Strncmp),
    ("__memcpy_chk", Helper::MemmoveChk),
    ("__memmove_chk", Helper::MemmoveChk),
    ("__memset_chk", Helper::MemsetChk),
    ("mempcpy", Helper::Mempcpy),
    ("__mempcpy", Helper::Mempcpy),
    ("rawmemchr", Helper::Rawmemchr),
    ("__rawmemchr", Helper::Rawmemchr),
    ("strrchr", Helper::Strrchr),
    ("rindex", Helper::Strrchr),
    ("strcpy", Helper::Strcpy),
    ("stpcpy", Helper::Stpcpy),
    ("__stpcpy", Helper::Stpcpy),
    ("memrchr", Helper::Memrchr),
    ("__memrchr", Helper::Memrchr),
];

/// The routine a function of this name is: a C name of [`ROUTINES`], or
/// glibc's variant of it, `__NAME_VARIANT` (`__memcpy_chk_VARIANT` for
/// `__memcpy_chk`); a checking variant only of a checking name.
pub fn routine_named(name: &str) -> Option<Helper> {
    ROUTINES.iter().find_map(|&(c, helper)| {
        if name == c {
            return Some(helper);
        }
        let bare = c.strip_prefix("__").unwrap_or(c);
        let variant = name.strip_prefix("__")?.strip_prefix(bare)?.strip_prefix('_')?;
        let checking = variant.starts_with("chk") || variant.contains("_chk");
        (!variant.is_empty() && (c.ends_with("_chk") || !checking)).then_some(helper)
    })
}

pub struct LeafInline {
    enabled: bool,
    counts: bool,
}

/// The pass's counter of `helper`'s runs (its declines: the next one).
fn counter(helper: Helper) -> u32 {
    2 * (helper as u32 - Helper::Strlen as u32)
}

fn count(id: u32) -> InstData {
    InstData { op: Opcode::Count, ty: Type::I64, aux: 0, args: [id, 1, 0] }
}

impl Pass for LeafInline {
    fn run(&mut self, cx: &PassContext<'_>, region: &mut Region) -> Result<(), PassError> {
        if !self.enabled || region.blocks.is_empty() {
            return Ok(());
        }
        let Some(helper) = cx.code.function_at(region.entry).as_deref().and_then(routine_named) else {
            return Ok(());
        };
        // Every block of the guest's code moves one up (keeping the order
        // of forward and backward branches); the new block 0 calls the
        // routine, and the return goes last.
        let first = region.blocks[0].insts.first().map(|v| *region.inst(*v)).filter(|d| d.op == Opcode::Insn);
        for d in &mut region.insts {
            for s in d.successors_mut() {
                *s += 1;
            }
        }
        region.blocks.insert(0, BlockData::default());
        let body = Block(1);
        let mut b = Builder::new(region);
        b.switch_to(Block(0));
        if let Some(mark) = first {
            // A fault of the return's load is the routine's first instruction's.
            b.push(mark);
        }
        b.call(helper);
        let done = b.get(Reg::LEAF_DONE);
        let ret = b.create_block();
        let declined = if self.counts { b.create_block() } else { body };
        b.brif(done, ret, declined);
        if self.counts {
            b.switch_to(declined);
            b.push(count(counter(helper) + 1));
            b.jump(body);
        }
        b.switch_to(ret);
        if self.counts {
            b.push(count(counter(helper)));
        }
        // The status flags a routine returns with are the ABI's to leave
        // undefined; cleared, they make the region an entry that writes
        // every flag before reading one, which an indirect branch (the
        // PLT's `jmp`) enters without computing the caller's flags.
        let zero = b.iconst(Type::I1, 0);
        for flag in Reg::STATUS_FLAGS {
            b.set(flag, zero);
        }
        let entry = b.region.entry;
        crate::decode::lift_ret(&mut b, entry);
        Ok(())
    }

    fn finish(&mut self, counters: &[u64]) -> Result<Report, PassError> {
        let mut text = String::new();
        for &helper in Helper::ALL.iter().filter(|h| h.is_leaf()) {
            let at = |i: u32| counters.get(i as usize).copied().unwrap_or(0);
            let (ran, declined) = (at(counter(helper)), at(counter(helper) + 1));
            if ran + declined > 0 {
                text.push_str(&format!("aarchx: leaf-inline: {helper} ran {ran}, declined {declined}\n"));
            }
        }
        Ok(Report { text, file: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_pass_on;
    use aarchx_ir::parse::parse;
    use aarchx_ir::print::print;
    use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, TranslationConfig};

    /// Guest code whose only function is `__strlen_sse2` at 0x1000.
    struct Strlen;

    impl GuestCode for Strlen {
        fn read(&self, _addr: u64, _buf: &mut [u8]) -> usize {
            0
        }
        fn function_at(&self, addr: u64) -> Option<String> {
            (addr == 0x1000).then(|| "__strlen_sse2".into())
        }
    }

    fn run(enabled: bool, text: &str) -> String {
        let config = TranslationConfig {
            memory_model: MemoryModel::Plain,
            tso_vector: false,
            cpu_level: CpuLevel::V1,
            superblocks: true,
        };
        run_pass_on(&mut LeafInline { enabled, counts: false }, text, &config, &Strlen)
    }

    /// A loop back to the entry, as a routine's code could have.
    const LOOP: &str = "\
region 0x1000
block0:
  insn 0x1000, 4
  v0 = get rdi
  v1 = iconst.i64 0x1
  v2 = add.i64 v0, v1
  set rdi, v2
  v3 = icmp.i64 eq v2, v1
  brif v3, block0, block1
block1:
  exit jump 0x2000
";

    #[test]
    fn the_entry_calls_the_routine_and_returns_when_it_ran() {
        let out = run(true, LOOP);
        assert_eq!(
            out,
            "\
region 0x1000
block0:
  insn 0x1000, 4
  call strlen
  v0 = get leaf_done
  brif v0, block3, block1
block1:
  insn 0x1000, 4
  v1 = get rdi
  v2 = iconst.i64 0x1
  v3 = add.i64 v1, v2
  set rdi, v3
  v4 = icmp.i64 eq v3, v2
  brif v4, block1, block2
block2:
  exit jump 0x2000
block3:
  v5 = iconst.i1 0x0
  set cf, v5
  set pf, v5
  set af, v5
  set zf, v5
  set sf, v5
  set of, v5
  v6 = get rsp
  v7 = load.i64 v6
  v8 = iconst.i64 0x8
  v9 = add.i64 v6, v8
  set rsp, v9
  exit_indirect ret v7
"
        );
    }

    #[test]
    fn disabled_or_elsewhere_it_changes_nothing() {
        let printed = print(&parse(LOOP).expect("parses"));
        assert_eq!(run(false, LOOP), printed);
        let elsewhere = LOOP.replace("region 0x1000", "region 0x1004");
        assert_eq!(run(true, &elsewhere), print(&parse(&elsewhere).expect("parses")));
    }

    #[test]
    fn names_are_the_c_names_and_glibc_variants_but_not_checking_ones() {
        for (name, want) in [
            ("strlen", Some(Helper::Strlen)),
            ("__strlen_avx2", Some(Helper::Strlen)),
            ("__strlen_sse2", Some(Helper::Strlen)),
            ("__memmove_avx_unaligned_erms", Some(Helper::Memmove)),
            ("__memcpy_sse2_unaligned", Some(Helper::Memmove)),
            ("memcpy", Some(Helper::Memmove)),
            ("bcmp", Some(Helper::Memcmp)),
            ("__memcmp_avx2_movbe", Some(Helper::Memcmp)),
            ("__memcpy_chk", Some(Helper::MemmoveChk)),
            ("__memmove_chk_avx_unaligned_erms", Some(Helper::MemmoveChk)),
            ("__memcpy_chk_sse2_unaligned", Some(Helper::MemmoveChk)),
            ("__memset_chk_avx2_unaligned_erms", Some(Helper::MemsetChk)),
            ("__memset_avx2_unaligned_erms_chk", None),
            ("__memcmpeq_avx2", None),
            ("__strnlen_sse2", Some(Helper::Strnlen)),
            ("__strchr_sse2", Some(Helper::Strchr)),
            ("__strchrnul_sse2", None),
            ("__strncmp_sse42", Some(Helper::Strncmp)),
            ("__strncasecmp_l_avx", None),
            ("__mempcpy", Some(Helper::Mempcpy)),
            ("__mempcpy_sse2_unaligned", Some(Helper::Mempcpy)),
            ("__mempcpy_chk", None),
            ("__rawmemchr_sse2", Some(Helper::Rawmemchr)),
            ("__strrchr_avx2", Some(Helper::Strrchr)),
            ("rindex", Some(Helper::Strrchr)),
            ("__strcpy_sse2_unaligned", Some(Helper::Strcpy)),
            ("__stpcpy_evex", Some(Helper::Stpcpy)),
            ("__strcpy_chk", None),
            ("__stpcpy_chk_avx2", None),
            ("__stpncpy_avx2", None),
            ("strlen_helper", None),
            ("__strlen", None),
            ("__strlen_", None),
            ("memrchr", Some(Helper::Memrchr)),
            ("__memrchr_avx2", Some(Helper::Memrchr)),
            ("__memrchr_chk", None),
            ("wmemset", None),
        ] {
            assert_eq!(routine_named(name), want, "{name}");
        }
    }
}
