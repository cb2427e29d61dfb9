//! Dynamic executables and the guest root: the program's PT_INTERP loader
//! comes from `--rootfs` (or `AARCHX_ROOTFS`); a missing loader and a root
//! that is not a directory end in one line and a documented exit status.

mod common;

use std::path::{Path, PathBuf};

use common::{aarchx, assert_one_line_error, path_str, run};

/// A fresh, empty temporary directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aarchx-dynamic-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A minimal x86-64 PIE whose PT_INTERP names `interp`: one read-execute
/// page holding the headers, the path and a `ret` at the entry.
fn pie_with_interp(interp: &str) -> Vec<u8> {
    let mut d = vec![0u8; 0x1000];
    d[..4].copy_from_slice(b"\x7fELF");
    d[4] = 2; // 64-bit
    d[5] = 1; // little endian
    d[6] = 1; // version
    d[16..18].copy_from_slice(&3u16.to_le_bytes()); // ET_DYN
    d[18..20].copy_from_slice(&62u16.to_le_bytes()); // x86-64
    d[24..32].copy_from_slice(&0x800u64.to_le_bytes()); // entry
    d[32..40].copy_from_slice(&64u64.to_le_bytes()); // phoff
    d[52..54].copy_from_slice(&64u16.to_le_bytes());
    d[54..56].copy_from_slice(&56u16.to_le_bytes());
    d[56..58].copy_from_slice(&2u16.to_le_bytes());
    let len = interp.len() as u64 + 1;
    // (type, flags, offset, vaddr, filesz, memsz)
    let phdrs = [(3u32, 4u32, 0x200u64, 0x200u64, len, len), (1, 5, 0, 0, 0x1000, 0x1000)];
    for (n, (ty, flags, off, vaddr, filesz, memsz)) in phdrs.into_iter().enumerate() {
        let ph = &mut d[64 + 56 * n..][..56];
        ph[0..4].copy_from_slice(&ty.to_le_bytes());
        ph[4..8].copy_from_slice(&flags.to_le_bytes());
        for (at, v) in [(8, off), (16, vaddr), (24, vaddr), (32, filesz), (40, memsz), (48, 0x1000)] {
            ph[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
    }
    d[0x200..0x200 + interp.len()].copy_from_slice(interp.as_bytes());
    d[0x800] = 0xc3;
    d
}

#[test]
fn missing_loader_is_126_and_names_where_it_looked() {
    let dir = temp_dir("missing");
    let prog = dir.join("prog");
    std::fs::write(&prog, pie_with_interp("/nonexistent/ld-aarchx-test.so")).expect("write program");
    let o = run(&mut aarchx(&[path_str(&prog)]));
    assert_one_line_error(&o, 126, &["/nonexistent/ld-aarchx-test.so", "--rootfs"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn loader_is_looked_up_inside_the_rootfs() {
    let root = temp_dir("empty-root");
    let prog_dir = temp_dir("empty-root-prog");
    let prog = prog_dir.join("prog");
    std::fs::write(&prog, pie_with_interp("/lib64/ld-linux-x86-64.so.2")).expect("write program");
    let looked_for = root.canonicalize().expect("root").join("lib64/ld-linux-x86-64.so.2");
    let o = run(&mut aarchx(&["--rootfs", path_str(&root), path_str(&prog)]));
    assert_one_line_error(&o, 126, &[path_str(&looked_for), "--rootfs"]);
    let o = run(aarchx(&[path_str(&prog)]).env("AARCHX_ROOTFS", &root));
    assert_one_line_error(&o, 126, &[path_str(&looked_for)]);
    std::fs::remove_dir_all(&root).ok();
    std::fs::remove_dir_all(&prog_dir).ok();
}

#[test]
fn rootfs_that_is_a_file_is_2() {
    let dir = temp_dir("file-root");
    let file = dir.join("plain");
    std::fs::write(&file, b"not a directory").expect("write file");
    let o = run(&mut aarchx(&["--rootfs", path_str(&file), "/bin/true"]));
    assert_one_line_error(&o, 2, &[path_str(&file), "not a directory"]);
    let o = run(&mut aarchx(&[&format!("--rootfs={}", path_str(&file)), "/bin/true"]));
    assert_one_line_error(&o, 2, &["not a directory"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn missing_rootfs_is_2() {
    let o = run(&mut aarchx(&["--rootfs", "/nonexistent/aarchx-root", "/bin/true"]));
    assert_one_line_error(&o, 2, &["/nonexistent/aarchx-root"]);
    let o = run(&mut aarchx(&["--rootfs"]));
    assert_one_line_error(&o, 2, &["--rootfs needs a DIR"]);
}

/// With only the loader in the root, the libraries it opens by absolute
/// path are not there and come from the host: the program runs as natively.
#[test]
fn dynamic_program_runs_with_its_loader_from_the_rootfs() {
    let host_loader = Path::new("/lib64/ld-linux-x86-64.so.2");
    let is_x86_64 = std::fs::read(host_loader).is_ok_and(|d| d.len() > 20 && d[..4] == *b"\x7fELF" && d[18] == 62);
    if !is_x86_64 {
        eprintln!("skipped: this host has no x86-64 loader to copy into a rootfs");
        return;
    }
    let root = temp_dir("loader-root");
    std::fs::create_dir_all(root.join("lib64")).expect("lib64");
    std::fs::copy(host_loader, root.join("lib64/ld-linux-x86-64.so.2")).expect("copy loader");
    let prog = common::guest_dir().join("dyn/argv");
    let native = run(std::process::Command::new(&prog).args(["one", "two"]));
    let policy = common::repo_root().join("policies/interp.ron");
    let o =
        run(&mut aarchx(&["--policy", path_str(&policy), "--rootfs", path_str(&root), path_str(&prog), "one", "two"]));
    std::fs::remove_dir_all(&root).ok();
    assert_eq!(o, native, "stderr: {}", String::from_utf8_lossy(&o.stderr));
}
