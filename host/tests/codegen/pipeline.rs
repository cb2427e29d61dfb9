//! One instruction form through the pipeline: lifted alone at a fixed
//! guest address (the region is the form and an `exit jump` to the next
//! address), the variant's built-in passes, then lowered for a fixed
//! host address, so the words are the same on every host.

use std::collections::BTreeMap;

use aarchx::jit::leaf::LeafRoutines;
use aarchx::jit::lower::lower as lower_region;
use aarchx::jit::{CompileOptions, NanRules};
use aarchx_ir::verify::verify;
use aarchx_ir::Region;
use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, Options, PassContext, TranslationConfig};
use aarchx_passes::BUILTIN;

/// Where the form is placed in guest memory.
pub const GUEST: u64 = 0x40_1000;
/// Where the code is assembled for, and the trampoline exit it branches to.
const CODE_AT: usize = 0x1000_0000;
const EXIT_AT: usize = 0x0ff0_0000;

/// A policy variant: its memory model, whether the optimisation passes
/// run, and how float code gets x86's NaNs (FEAT_AFP or checks).
pub struct Variant {
    pub name: &'static str,
    pub model: MemoryModel,
    pub passes: &'static [&'static str],
    pub nan_rules: NanRules,
}

/// The optimising pipeline of `policies/plain.ron` and
/// `policies/ordered.ron` (the test `variants_follow_the_policies` keeps
/// them equal).
pub const POLICY_PASSES: &[&str] = &[
    "decode",
    "leaf-inline",
    "state-forward",
    "store-forward",
    "const-fold",
    "cse",
    "cond-fusion",
    "dead-flags",
    "sink",
    "dce",
    "memory-order",
];

/// Plain and ordered, each with the lifter alone and with the policy's
/// optimisation passes, and `afp`: plain.ron on a host with FEAT_AFP.
pub const VARIANTS: &[Variant] = &[
    Variant {
        name: "plain",
        model: MemoryModel::Plain,
        passes: &["decode", "memory-order"],
        nan_rules: NanRules::Checked,
    },
    Variant { name: "plain.ron", model: MemoryModel::Plain, passes: POLICY_PASSES, nan_rules: NanRules::Checked },
    Variant {
        name: "ordered",
        model: MemoryModel::Ordered,
        passes: &["decode", "memory-order"],
        nan_rules: NanRules::Checked,
    },
    Variant { name: "ordered.ron", model: MemoryModel::Ordered, passes: POLICY_PASSES, nan_rules: NanRules::Checked },
    Variant { name: "afp", model: MemoryModel::Plain, passes: POLICY_PASSES, nan_rules: NanRules::Afp },
];

/// The form's bytes at [`GUEST`], nothing around them.
struct Form<'a>(&'a [u8]);

impl GuestCode for Form<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
        let Some(start) = addr.checked_sub(GUEST).and_then(|o| usize::try_from(o).ok()) else { return 0 };
        let rest = self.0.get(start..).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        n
    }
}

/// The arm64 words the backend emits for `bytes` under `variant`, or why
/// it emits none.
pub fn lower(bytes: &[u8], variant: &Variant) -> Result<Vec<u32>, String> {
    let config = TranslationConfig {
        memory_model: variant.model,
        tso_vector: false,
        cpu_level: CpuLevel::V3,
        superblocks: true,
    };
    let code = Form(bytes);
    let cx = PassContext { code: &code, config: &config };
    let mut region = Region::new(GUEST);
    for name in variant.passes {
        let info = BUILTIN.iter().find(|p| p.name == *name).expect("a built-in pass");
        let options =
            Options(info.options.iter().map(|o| (String::from(o.name), (o.default)())).collect::<BTreeMap<_, _>>());
        (info.create)(&options).run(&cx, &mut region).map_err(|e| format!("{name}: {}", e.0))?;
    }
    verify(&region).map_err(|e| format!("verify: {e}"))?;
    let lowered = lower_region(
        &region,
        CODE_AT,
        EXIT_AT,
        &LeafRoutines::placed_at(EXIT_AT),
        0,
        CompileOptions::default(),
        true,
        variant.nan_rules,
        None,
    )
    .map_err(|e| e.to_string())?;
    Ok(lowered.code.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
}
