//! `aarchx binfmt`: the registration line checked byte for byte against
//! the kernel's format (the x86-64 magic and mask qemu-user, FEX and box64
//! register), install/uninstall against a fake root holding a fake
//! binfmt_misc folder (the hidden `--root DIR`), and a real registration
//! only where the machine allows it (an arm64 host, root, binfmt_misc
//! mounted, no other x86-64 handler; skipped with the reason otherwise).

mod common;

use std::path::{Path, PathBuf};

use common::{aarchx, assert_one_line_error, path_str, run};

/// The registration for interpreter `/usr/bin/aarchx`, written out by hand:
/// `:name:type:offset:magic:mask:interpreter:flags` (the kernel's
/// Documentation/admin-guide/binfmt-misc.rst), magic and mask as FEX's
/// and box64's (ET_EXEC and ET_DYN, e_machine 62), flags P and F.
const EXPECTED: &str = ":aarchx:M::\
\\x7f\\x45\\x4c\\x46\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\x3e\\x00:\
\\xff\\xff\\xff\\xff\\xff\\xfe\\xfe\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:\
/usr/bin/aarchx:PF\n";

/// A fake root with an empty binfmt_misc folder (its `register` file a
/// plain file that records what is written to it).
fn fake_root(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("aarchx-binfmt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(misc(&root)).expect("fake binfmt_misc");
    std::fs::write(misc(&root).join("register"), "").expect("fake register");
    std::fs::write(misc(&root).join("status"), "enabled\n").expect("fake status");
    root
}

fn misc(root: &Path) -> PathBuf {
    root.join("proc/sys/fs/binfmt_misc")
}

fn conf(root: &Path) -> PathBuf {
    root.join("etc/binfmt.d/aarchx.conf")
}

fn binfmt(root: &Path, args: &[&str]) -> common::Outcome {
    let mut c = aarchx(&["binfmt"]);
    c.args(args).args(["--interpreter", "/usr/bin/aarchx", "--root", path_str(root)]);
    run(&mut c)
}

#[test]
fn print_is_the_kernels_format_byte_for_byte() {
    let o = run(&mut aarchx(&["binfmt", "print", "--interpreter", "/usr/bin/aarchx"]));
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), EXPECTED);
    // Each of magic and mask decodes to 20 bytes; the kernel takes at most
    // 1920 bytes for a registration.
    let fields: Vec<&str> = EXPECTED.trim_end().split(':').collect();
    assert_eq!(fields.len(), 8);
    assert_eq!(fields[4].len() / 4, 20);
    assert_eq!(fields[5].len() / 4, 20);
    assert!(EXPECTED.len() < 1920);
    // Without --interpreter it names this aarchx.
    let o = run(&mut aarchx(&["binfmt", "print"]));
    let exe = std::fs::canonicalize(common::host_aarchx()).expect("aarchx path");
    assert!(String::from_utf8_lossy(&o.stdout).ends_with(&format!(":{}:PF\n", exe.display())));
}

#[test]
fn a_bad_interpreter_is_2() {
    let o = run(&mut aarchx(&["binfmt", "print", "--interpreter", "relative/aarchx"]));
    assert_one_line_error(&o, 2, &["relative/aarchx", "absolute"]);
}

#[test]
fn install_writes_binfmt_d_and_registers_uninstall_removes_both() {
    let root = fake_root("install");
    let o = binfmt(&root, &["install"]);
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read_to_string(conf(&root)).expect("binfmt.d file");
    assert!(written.starts_with('#') && written.ends_with(EXPECTED), "{written}");
    assert_eq!(std::fs::read_to_string(misc(&root).join("register")).expect("register"), EXPECTED);
    // The kernel now shows the entry (empty here, as a plain file is not
    // truncated by a write); uninstall writes -1 to it.
    std::fs::write(misc(&root).join("aarchx"), "").expect("fake entry");
    let o = binfmt(&root, &["uninstall"]);
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!conf(&root).exists());
    assert_eq!(std::fs::read_to_string(misc(&root).join("aarchx")).expect("entry"), "-1");
    // Nothing left: uninstall says so and succeeds.
    std::fs::remove_file(misc(&root).join("aarchx")).expect("remove fake entry");
    let o = binfmt(&root, &["uninstall"]);
    assert_eq!(o.code, Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing to uninstall"));
}

#[test]
fn install_refuses_over_another_x86_64_handler_unless_forced() {
    let root = fake_root("other");
    // What the kernel shows for qemu-user-static's x86-64 entry.
    std::fs::write(
        misc(&root).join("qemu-x86_64"),
        "enabled\ninterpreter /usr/libexec/qemu-binfmt/x86_64-binfmt-P\nflags: POCF\noffset 0\n\
         magic 7f454c4602010100000000000000000002003e00\nmask fffffffffffefe00fffffffffffffffffeffffff\n",
    )
    .expect("fake qemu entry");
    // An arm64 handler is no conflict, and neither is a disabled x86-64 one.
    std::fs::write(
        misc(&root).join("qemu-aarch64"),
        "enabled\ninterpreter /usr/bin/qemu-aarch64\nflags: F\noffset 0\n\
         magic 7f454c460201010000000000000000000200b700\nmask ffffffffffffff00fffffffffffffffffeffffff\n",
    )
    .expect("fake arm64 entry");
    let o = binfmt(&root, &["install"]);
    assert_one_line_error(&o, 1, &["qemu-x86_64", "/usr/libexec/qemu-binfmt/x86_64-binfmt-P", "--force"]);
    assert!(!conf(&root).exists(), "a refused install wrote the binfmt.d file");
    assert_eq!(std::fs::read_to_string(misc(&root).join("register")).expect("register"), "");
    let o = binfmt(&root, &["install", "--force"]);
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(misc(&root).join("register")).expect("register"), EXPECTED);
    // Disabled, the x86-64 entry is no conflict.
    std::fs::write(misc(&root).join("qemu-x86_64"), "disabled\ninterpreter /q\nflags: \noffset 0\nmagic 7f454c46\n")
        .expect("disable");
    let o = binfmt(&root, &["install"]);
    assert_eq!(o.code, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn install_without_binfmt_misc_writes_the_file_and_says_it_cannot_register() {
    let root = fake_root("unmounted");
    std::fs::remove_dir_all(misc(&root)).expect("unmount the fake");
    let o = binfmt(&root, &["install"]);
    assert_one_line_error(&o, 1, &["cannot register now", "register", "mounted"]);
    assert!(conf(&root).exists());
}

/// A real registration where the machine allows it: an arm64 host, root,
/// binfmt_misc mounted and no x86-64 handler there yet (a test replaces
/// none). The static aarch64 build registers itself (its binfmt.d file in
/// a temporary root whose `proc` is the real one), `./argv` then runs
/// through it with the path and argv[0] the kernel passes, and the entry is
/// removed. Skipped with the reason elsewhere: on an x86-64 host a handler
/// for x86-64 executables would take every native program.
#[test]
fn a_real_registration_runs_an_x86_64_program_as_dot_slash_prog() {
    let what = "a real binfmt_misc registration running ./prog";
    if std::env::consts::ARCH != "aarch64" {
        return common::skip(what, "not an arm64 host (on x86-64 the handler would take every native program)");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return common::skip(what, "not root");
    }
    let live = Path::new("/proc/sys/fs/binfmt_misc");
    if !live.join("register").exists() {
        return common::skip(what, "binfmt_misc is not mounted");
    }
    let x86_64 = "magic 7f454c4602010100000000000000000002003e00";
    let entries = std::fs::read_dir(live).expect("binfmt_misc folder");
    for entry in entries.filter_map(Result::ok) {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        if text.contains(x86_64) || entry.file_name() == "aarchx" {
            let name = entry.file_name().to_string_lossy().into_owned();
            return common::skip(what, &format!("an x86-64 handler (`{name}`) is registered; a test replaces none"));
        }
    }
    let Some((_, bin)) = common::arm64_aarchx(what) else { return };
    let root = std::env::temp_dir().join(format!("aarchx-binfmt-{}-live", std::process::id()));
    std::fs::create_dir_all(&root).expect("temp root");
    let _ = std::fs::remove_file(root.join("proc"));
    std::os::unix::fs::symlink("/proc", root.join("proc")).expect("proc link");
    let binfmt = |action: &str| {
        let mut c = std::process::Command::new(&bin);
        c.args(["binfmt", action, "--interpreter", path_str(&bin), "--root", path_str(&root)]);
        run(&mut c)
    };
    let installed = binfmt("install");
    assert_eq!(installed.code, Some(0), "{}", common::describe(&installed));
    let prog = common::guest_dir().join("static/argv");
    let direct = run(std::process::Command::new(&prog).arg("alpha"));
    let through = run(std::process::Command::new(&bin).arg(&prog).arg("alpha"));
    let removed = binfmt("uninstall");
    assert_eq!(removed.code, Some(0), "{}", common::describe(&removed));
    assert_eq!(direct, through, "./argv through the kernel's handler and through `aarchx argv` differ");
    assert!(
        String::from_utf8_lossy(&direct.stdout).contains("argv[0] basename=argv\n"),
        "{}",
        common::describe(&direct)
    );
}
