//! The Debian package (`./x package`; `./x test` builds it from its aarch64
//! build and names it in `AARCHX_DEB`): its control fields and scripts,
//! every file docs/usage.md says it installs, and, unpacked into a
//! temporary root, its files matching its md5sums and its aarchx finding
//! the packaged rules file and a policy named without a path in the
//! package, then running a guest program with that policy as the program
//! runs natively.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{describe, guest_dir, path_str, repo_root, run, skip, without_qemu_notes};

/// The .deb `AARCHX_DEB` names; without it `what` is recorded as skipped.
fn deb(what: &str) -> Option<PathBuf> {
    let Some(deb) = std::env::var_os("AARCHX_DEB").map(PathBuf::from) else {
        skip(what, "AARCHX_DEB is not set (./x test builds the package and sets it)");
        return None;
    };
    assert!(deb.is_file(), "AARCHX_DEB names {}, which is not a file (did `./x package` fail?)", deb.display());
    Some(deb)
}

/// A temporary folder of this test process, empty.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aarchx-package-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The stdout of `dpkg-deb ARGS`, which must succeed.
fn dpkg_deb<S: AsRef<OsStr>>(args: &[S]) -> String {
    let o = run(Command::new("dpkg-deb").args(args));
    assert_eq!(o.code, Some(0), "dpkg-deb {:?}: {}", args.iter().map(AsRef::as_ref).collect::<Vec<_>>(), describe(&o));
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// The names of the files directly in the repository's `dir`.
fn files_in(dir: &str) -> Vec<String> {
    let entries = std::fs::read_dir(repo_root().join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
    entries.map(|e| e.expect("dir entry").path()).filter(|p| p.is_file()).map(|p| file_name(&p)).collect()
}

fn file_name(p: &Path) -> String {
    p.file_name().expect("a file name").to_string_lossy().into_owned()
}

#[test]
fn control_fields_contents_and_maintainer_scripts() {
    let Some(deb) = deb("package contents") else { return };
    let fields = dpkg_deb(&[OsStr::new("-f"), deb.as_os_str()]);
    let field = |name: &str| fields.lines().find_map(|l| l.strip_prefix(&format!("{name}: "))).map(str::trim);
    assert_eq!(field("Package"), Some("aarchx"), "{fields}");
    assert_eq!(field("Version"), Some(env!("CARGO_PKG_VERSION")), "{fields}");
    assert_eq!(field("Architecture"), Some("arm64"), "{fields}");
    for name in ["Maintainer", "Section", "Priority", "Description"] {
        assert!(field(name).is_some_and(|v| !v.is_empty()), "no {name}: {fields}");
    }
    // The binary is dynamically linked: the C library (at least the
    // newest GLIBC_ version it uses, checked in the unpacked test) and
    // libgcc's unwinder.
    let depends = field("Depends").unwrap_or_else(|| panic!("no Depends: {fields}"));
    assert!(depends.starts_with("libc6 (>= 2.") && depends.contains("libgcc-s1"), "{depends}");

    // `PERMS OWNER SIZE DATE TIME ./PATH` per entry.
    let listing = dpkg_deb(&[OsStr::new("-c"), deb.as_os_str()]);
    let entries: Vec<(&str, &str, u64, &str)> = listing
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 6, "unexpected listing line: {l}");
            (w[0], w[1], w[2].parse().expect("a size"), w[5].trim_start_matches('.'))
        })
        .collect();
    let mut expected: Vec<String> = [
        "/usr/bin/aarchx",
        "/usr/libexec/aarchx-static",
        "/etc/aarchx/programs.ron",
        "/usr/lib/binfmt.d/aarchx.conf",
        "/usr/share/man/man1/aarchx.1.gz",
        "/usr/share/bash-completion/completions/aarchx",
        "/usr/share/zsh/vendor-completions/_aarchx",
        "/usr/share/fish/vendor_completions.d/aarchx.fish",
        "/usr/share/doc/aarchx/README.md",
        "/usr/share/doc/aarchx/copyright",
    ]
    .map(String::from)
    .to_vec();
    expected.extend(files_in("policies").iter().map(|f| format!("/usr/share/aarchx/policies/{f}")));
    expected.extend(
        files_in("docs").iter().filter(|f| f.ends_with(".md")).map(|f| format!("/usr/share/doc/aarchx/docs/{f}")),
    );
    for path in &expected {
        let Some((perms, _, size, _)) = entries.iter().find(|e| e.3 == path) else {
            panic!("{path} is not in the package:\n{listing}")
        };
        let program = ["/usr/bin/aarchx", "/usr/libexec/aarchx-static"].contains(&path.as_str());
        let mode = if program { "-rwxr-xr-x" } else { "-rw-r--r--" };
        assert_eq!(*perms, mode, "{path}");
        assert!(*size > 0, "{path} is empty");
    }
    assert!(entries.iter().all(|e| e.1 == "root/root"), "not all owned by root:\n{listing}");
    // Installed-Size as dpkg counts it: each file in KiB rounded up, each folder 1.
    let kib: u64 =
        entries.iter().filter(|e| e.3 != "/").map(|e| if e.0.starts_with('d') { 1 } else { e.2.div_ceil(1024) }).sum();
    assert_eq!(field("Installed-Size"), Some(kib.to_string().as_str()), "{fields}");

    let control = temp_dir("control");
    dpkg_deb(&[OsStr::new("-e"), deb.as_os_str(), control.as_os_str()]);
    let conffiles = std::fs::read_to_string(control.join("conffiles")).expect("DEBIAN/conffiles");
    assert_eq!(conffiles, "/etc/aarchx/programs.ron\n");
    for script in ["postinst", "postrm"] {
        let path = control.join(script);
        let o = run(Command::new("sh").arg("-n").arg(&path));
        assert_eq!(o.code, Some(0), "{script} is not valid sh: {}", describe(&o));
    }
    std::fs::remove_dir_all(&control).expect("remove temp dir");
}

#[test]
fn unpacked_aarchx_runs_a_guest_with_a_packaged_policy_named_without_a_path() {
    let Some(deb) = deb("the packaged aarchx") else { return };
    let root = temp_dir("root");
    dpkg_deb(&[OsStr::new("-x"), deb.as_os_str(), root.as_os_str()]);
    let root = root.canonicalize().expect("canonical root");
    // The sums dpkg and debsums check the installed files against.
    dpkg_deb(&[OsStr::new("-e"), deb.as_os_str(), root.join("DEBIAN").as_os_str()]);
    let sums =
        run(Command::new("md5sum").args(["--check", "--quiet", "--strict", "DEBIAN/md5sums"]).current_dir(&root));
    assert_eq!(sums.code, Some(0), "DEBIAN/md5sums: {}", describe(&sums));
    // Dynamically linked against the arm64 C library, needing no newer
    // symbol version than Depends names (objdump's view of the binary).
    let bin = root.join("usr/bin/aarchx");
    let headers = run(Command::new("objdump").arg("-p").arg(&bin));
    assert!(
        String::from_utf8_lossy(&headers.stdout).contains("NEEDED               libc.so.6"),
        "{}",
        describe(&headers)
    );
    let fields = dpkg_deb(&[OsStr::new("-f"), deb.as_os_str(), OsStr::new("Depends")]);
    let version = |v: &str| -> Vec<u32> { v.split('.').map_while(|p| p.parse().ok()).collect() };
    let depends =
        fields.split("libc6 (>= ").nth(1).and_then(|v| v.split(')').next()).map(version).expect("libc6 version");
    let symbols = run(Command::new("objdump").arg("-T").arg(&bin));
    let symbols = String::from_utf8_lossy(&symbols.stdout);
    let used = symbols.split("GLIBC_").skip(1).map(|v| version(v.split_whitespace().next().unwrap_or(""))).max();
    assert!(used.as_ref().is_some_and(|u| *u <= depends), "uses GLIBC_{used:?}, Depends names {depends:?}");

    let empty = temp_dir("empty");
    let qemu = std::env::var_os("AARCHX_QEMU").filter(|q| !q.is_empty());
    // The packaged aarchx, with the packaged rules as the system's and no user's.
    let aarchx_at = |bin: &Path, args: &[&OsStr]| {
        let mut c = qemu.as_ref().map_or_else(
            || Command::new(bin),
            |q| {
                // The arm64 C library of the cross toolchain.
                let mut c = Command::new(q);
                c.arg("-L").arg(common::ARM64_SYSROOT).arg(bin);
                c
            },
        );
        c.args(args)
            .env("AARCHX_SYSCONFDIR", root.join("etc"))
            .env("XDG_CONFIG_HOME", &empty)
            .env_remove("AARCHX_POLICY");
        c
    };
    let aarchx = |args: &[&OsStr]| aarchx_at(&bin, args);
    let stdout = |args: &[&OsStr]| {
        let o = run(&mut aarchx(args));
        assert_eq!(o.code, Some(0), "{args:?}: {}", describe(&o));
        String::from_utf8(o.stdout).expect("UTF-8 output")
    };

    // Found in the package, not in the source tree the binary was built from.
    let ordered = root.join("usr/share/aarchx/policies/ordered.ron");
    let named = stdout(&["policy", "show", "--policy", "ordered"].map(OsStr::new));
    assert!(named.starts_with(&format!("policy: {}  (from command line)\n", ordered.display())), "{named}");
    // So does the static binfmt_misc handler in /usr/libexec.
    let handler = run(&mut aarchx_at(
        &root.join("usr/libexec/aarchx-static"),
        &["policy", "show", "--policy", "ordered"].map(OsStr::new),
    ));
    let handler = String::from_utf8_lossy(&handler.stdout);
    assert!(handler.starts_with(&format!("policy: {}  (from command line)\n", ordered.display())), "{handler}");
    // The packaged rules file gives java the packaged ordered policy.
    let rule = stdout(&["policy", "show", "java"].map(OsStr::new));
    let rules = root.join("etc/aarchx/programs.ron");
    assert!(rule.starts_with(&format!("policy: {}  (from {} rule ", ordered.display(), rules.display())), "{rule}");

    let prog = guest_dir().join("dyn/printf_double");
    let native = run(&mut Command::new(&prog));
    let got = without_qemu_notes(run(&mut aarchx(&[OsStr::new("--policy"), OsStr::new("ordered"), prog.as_os_str()])));
    assert_eq!(
        got,
        native,
        "{}:\n=== native: {}\n=== packaged aarchx: {}",
        prog.display(),
        describe(&native),
        describe(&got)
    );

    let binfmt = std::fs::read_to_string(root.join("usr/lib/binfmt.d/aarchx.conf")).expect("binfmt.d file");
    let line = binfmt.lines().find(|l| !l.starts_with('#')).expect("a registration line");
    assert!(
        line.starts_with(r":aarchx:M::\x7f\x45\x4c\x46\x02\x01\x01")
            && line.ends_with(":/usr/libexec/aarchx-static:PF"),
        "{binfmt}"
    );
    let man = run(Command::new("gzip").arg("-dc").arg(root.join("usr/share/man/man1/aarchx.1.gz")));
    let man = String::from_utf8_lossy(&man.stdout);
    assert!(man.contains(".TH aarchx 1") && man.contains("binfmt"), "not aarchx's man page:\n{man}");
    for (path, needle) in [
        ("usr/share/bash-completion/completions/aarchx", "complete -F _aarchx"),
        ("usr/share/zsh/vendor-completions/_aarchx", "#compdef aarchx"),
        ("usr/share/fish/vendor_completions.d/aarchx.fish", "complete -c aarchx"),
    ] {
        let text = std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(text.contains(needle), "{path} lacks `{needle}`");
    }
    for dir in [&root, &empty] {
        std::fs::remove_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", path_str(dir)));
    }
}
