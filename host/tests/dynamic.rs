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

/// The host's x86-64 program `name` (from /bin), when this host has an
/// x86-64 userland to build a root from.
fn host_x86_64_program(name: &str) -> Option<PathBuf> {
    let is_x86_64 = |p: &Path| std::fs::read(p).is_ok_and(|d| d.len() > 20 && d[..4] == *b"\x7fELF" && d[18] == 62);
    let prog = Path::new("/bin").join(name);
    (is_x86_64(Path::new("/lib64/ld-linux-x86-64.so.2")) && is_x86_64(&prog)).then_some(prog)
}

/// Links in the root lead nowhere outside it: an absolute link starts
/// again at the root, `..` (in the guest's path or a relative link's
/// text) stops there. The guest reads the root's copy of a file that
/// also exists, with other contents, at the same path on the host (where
/// joining the paths as text would lead); a file only on the host is the
/// host's; readlink gives a link's text as it is.
#[test]
fn links_and_dot_dot_in_the_rootfs_stay_inside_it() {
    let (Some(cat), Some(readlink)) = (host_x86_64_program("cat"), host_x86_64_program("readlink")) else {
        eprintln!("skipped: this host has no x86-64 cat and readlink to run in a rootfs");
        return;
    };
    let host_dir = temp_dir("escape-host").canonicalize().expect("host dir");
    std::fs::write(host_dir.join("message"), "the host's file\n").expect("host message");
    std::fs::write(host_dir.join("host-only"), "only on the host\n").expect("host-only");
    let root = temp_dir("escape-root");
    let libc = Path::new("/lib/x86_64-linux-gnu/libc.so.6");
    for (from, to) in [
        (Path::new("/lib64/ld-linux-x86-64.so.2"), "lib64/ld-linux-x86-64.so.2"),
        (libc, "usr/lib/x86_64-linux-gnu/libc.so.6"),
    ] {
        std::fs::create_dir_all(root.join(to).parent().expect("parent")).expect("root dirs");
        std::fs::copy(from, root.join(to)).expect("copy into the root");
    }
    std::os::unix::fs::symlink("usr/lib", root.join("lib")).expect("lib link");
    // The host directory's path, inside the root, with the root's message.
    let mirror = root.join(host_dir.strip_prefix("/").expect("absolute"));
    std::fs::create_dir_all(&mirror).expect("mirror");
    std::fs::write(mirror.join("message"), "the root's file\n").expect("root message");
    std::os::unix::fs::symlink(&host_dir, root.join("absolute")).expect("absolute link");
    // More `..` than the root is deep: as text, they would reach the host's `/`.
    let climb = "../".repeat(root.components().count() + 2);
    std::os::unix::fs::symlink(&climb, root.join("usr/up")).expect("relative link");
    let host = path_str(&host_dir);
    let via_dot_dot = format!("/{climb}{}/message", &host[1..]);
    let via_relative_link = format!("/usr/up{host}/message");
    let guest_paths = ["/absolute/message", &via_dot_dot, &via_relative_link, &format!("{host}/host-only")];
    let policy = common::repo_root().join("policies/interp.ron");
    let args = ["--policy", path_str(&policy), "--rootfs", path_str(&root), path_str(&cat)];
    let o = run(aarchx(&args).args(guest_paths));
    let link = run(&mut aarchx(&[
        "--policy",
        path_str(&policy),
        "--rootfs",
        path_str(&root),
        path_str(&readlink),
        "/absolute",
    ]));
    std::fs::remove_dir_all(&root).ok();
    std::fs::remove_dir_all(&host_dir).ok();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let expected = "the root's file\n".repeat(3) + "only on the host\n";
    assert_eq!((String::from_utf8_lossy(&o.stdout).as_ref(), o.code), (expected.as_str(), Some(0)), "stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&link.stdout), format!("{host}\n"), "readlink: {:?}", link);
}
