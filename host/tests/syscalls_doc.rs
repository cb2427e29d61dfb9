//! docs/syscalls.md is generated from the table of system calls and their
//! handling (`aarchx::syscall::numbers::markdown`); `AARCHX_BLESS=1`
//! regenerates it.

mod common;

#[test]
fn syscalls_doc_is_generated_from_the_table() {
    let path = common::repo_root().join("docs/syscalls.md");
    let want = aarchx::syscall::numbers::markdown();
    if std::env::var_os("AARCHX_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/syscalls.md");
        return;
    }
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "docs/syscalls.md is not what host/src/syscall/numbers.rs generates; regenerate it with \
         AARCHX_BLESS=1 cargo test -p aarchx --test syscalls_doc"
    );
}
