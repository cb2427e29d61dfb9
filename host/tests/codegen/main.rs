//! Codegen-count fixtures (FEX's InstructionCountCI idea, see
//! `docs/codegen.md`): for every x86-64 instruction form listed in
//! `host/tests/codegen/*.txt`, the arm64 code the backend emits under each
//! policy variant, pinned word for word with its count; and the check
//! that the ordered memory model turns every guest scalar load and store
//! into its acquire/release form. Runs on any host: only the lowering is
//! exercised, nothing is executed. `AARCHX_BLESS=1` rewrites the fixtures.

mod all_forms;
mod arm64;
mod fixture;
mod pipeline;

// The oracle's form enumeration, shared (the oracle also uses the parts
// that steer random states, which this test does not).
#[allow(dead_code)]
#[path = "../oracle/forms.rs"]
mod forms;
#[allow(dead_code)]
#[path = "../oracle/layout.rs"]
mod layout;
#[allow(dead_code)]
#[path = "../oracle/states.rs"]
mod states;
#[allow(dead_code)]
#[path = "../oracle/x87.rs"]
mod x87;

use std::path::PathBuf;

use aarchx_pass::MemoryModel;

use fixture::Fixture;
use pipeline::VARIANTS;

fn fixtures() -> Vec<Fixture> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/codegen");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the fixture folder")
        .map(|e| e.expect("a fixture entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files.into_iter().map(|p| Fixture::load(&p)).collect()
}

#[test]
fn fixtures_match_the_backend() {
    let bless = std::env::var_os("AARCHX_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for f in fixtures() {
        let text = f.render();
        if text == f.text {
            continue;
        }
        if bless {
            std::fs::write(&f.path, &text).expect("writing a fixture");
        } else {
            stale.push(format!("{}\n{}", f.path.display(), fixture::first_difference(&f.text, &text)));
        }
    }
    assert!(
        stale.is_empty(),
        "the backend's code differs from these fixtures (rerun with AARCHX_BLESS=1 and review the diff):\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_lifted_forms_count_is_pinned() {
    let forms = all_forms::forms();
    assert!(forms.len() > 4000, "the oracle's form list shrank to {} forms", forms.len());
    let text = all_forms::render(&forms);
    let path = all_forms::path();
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    if text == old {
        return;
    }
    if std::env::var_os("AARCHX_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &text).expect("writing the count table");
        return;
    }
    panic!(
        "the backend's code length differs from {} (rerun with AARCHX_BLESS=1 and review the diff):\n{}",
        path.display(),
        fixture::first_difference(&old, &text)
    );
}

#[test]
fn ordered_mode_orders_every_guest_scalar_access() {
    let mut problems = Vec::new();
    let mut ordered_accesses = 0;
    let chosen = fixtures().into_iter().flat_map(|f| {
        let path = f.path.display().to_string();
        f.forms.into_iter().map(move |form| (path.clone(), form.text, form.bytes))
    });
    let every =
        all_forms::forms().into_iter().map(|form| (all_forms::path().display().to_string(), form.text, form.bytes));
    for (path, text, bytes) in chosen.chain(every) {
        for v in VARIANTS {
            let Ok(words) = pipeline::lower(&bytes, v) else { continue };
            let found = match v.model {
                MemoryModel::Ordered => {
                    ordered_accesses += arm64::ordered_loads_and_stores(&words).len();
                    arm64::unordered_guest_accesses(&words)
                }
                MemoryModel::Plain => arm64::ordered_loads_and_stores(&words),
            };
            for i in found {
                problems.push(format!("{path}: {text} [{}]: word {i} ({:08x})", v.name, words[i]));
            }
        }
    }
    assert!(ordered_accesses > 0, "no acquire/release load or store in any ordered fixture: the check is vacuous");
    assert!(problems.is_empty(), "guest accesses in the wrong order form:\n{}", problems.join("\n"));
}

#[test]
fn the_access_classifier_knows_the_backends_forms() {
    const LDR_X3_X0: u32 = 0xf940_0003;
    const STR_X1_X0: u32 = 0xf900_0001;
    const LDR_X3_SP: u32 = 0xf940_07e3;
    const LDAR_X3_X0: u32 = 0xc8df_fc03;
    const STLR_X1_X0: u32 = 0xc89f_fc01;
    const CASAL_X0: u32 = 0xc8e3_fc02;
    const LDADDAL_X0: u32 = 0xf8e1_0003;
    const DMB_ISH: u32 = 0xd503_3bbf;
    const NOP: u32 = 0xd503_201f;
    assert_eq!(arm64::unordered_guest_accesses(&[LDR_X3_X0, LDR_X3_SP, STR_X1_X0]), [0, 2]);
    assert_eq!(arm64::unordered_guest_accesses(&[LDAR_X3_X0, STLR_X1_X0, CASAL_X0, LDADDAL_X0]), [0usize; 0]);
    assert_eq!(arm64::unordered_guest_accesses(&[DMB_ISH, NOP, STR_X1_X0, LDR_X3_X0, DMB_ISH]), [0usize; 0]);
    assert_eq!(arm64::ordered_loads_and_stores(&[LDR_X3_X0, LDAR_X3_X0, CASAL_X0, STLR_X1_X0]), [1, 3]);
}

#[test]
fn variants_follow_the_policies() {
    for file in ["policies/plain.ron", "policies/ordered.ron"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
        let text = std::fs::read_to_string(&path).expect("the policy file");
        let policy = aarchx::policy::parse(&text, file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let names: Vec<&str> = policy.passes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, pipeline::POLICY_PASSES, "{file}: update POLICY_PASSES in host/tests/codegen/pipeline.rs");
    }
}
