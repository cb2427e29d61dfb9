//! `cargo xtask`: the project's automation (set-up, guest builds, the two
//! aarchx builds, demo, tests, the Debian package: `package.rs`), plain
//! std Rust. `./x CMD` at the repository root runs it on a fresh machine;
//! `.ci/run` is `./x test`.
//!
//! Every child cargo is Debian's `/usr/bin/cargo` with `RUSTC=/usr/bin/rustc`
//! (the only toolchain here with an aarch64 std), even when xtask itself was
//! started by rustup's cargo: mixing the two rebuilds everything.

mod demo;
mod package;

use std::env;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The target triple of the arm64 build.
const AARCH64: &str = "aarch64-unknown-linux-gnu";

const USAGE: &str = "\
usage: cargo xtask <command>      (or ./x <command> on a fresh machine)

commands:
  setup    install what is missing (Debian: apt packages for the toolchain,
           the aarch64 cross build, qemu-aarch64, the guest compiler; on
           x86-64 also QEMU 10's qemu-aarch64 from bookworm-backports,
           unpacked into the target folder, for the FEAT_AFP tests)
  guests   build the x86-64 guest test programs (make -C guest)
  build    build aarchx for the host (x86-64 only) and for aarch64 (static)
  demo     setup + guests + build, then a dynamically linked x86-64 program
           with threads natively and under aarchx with three policies:
           outputs checked against the native run, stats and an A/B table
  test     setup + guests + build (also the dynamically linked aarch64
           aarchx) + the package's .deb, then cargo test
           --workspace --release (and on x86-64 aarchx's unit tests built
           for aarch64, under qemu, and again under QEMU 10 with -cpu max,
           which has FEAT_AFP)
  package  setup + the aarch64 builds, then the Debian package
           aarchx_VERSION_arm64.deb in the target folder's debian/
           (see docs/usage.md)
  bench    setup + bench set-up (peer, plugin, kernels) + build, then the
           benchmark harness; arguments after `bench` go to bench/run.py
           (see docs/benchmarks.md)
  fuzz TARGET [SECONDS]
           build the libFuzzer binary of one fuzz target (fuzz/) and run it
           for SECONDS (default 300); inputs that reach new code join
           fuzz/corpus/TARGET (see docs/fuzzing.md)
";

type Result<T = (), E = String> = std::result::Result<T, E>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let cx = match Cx::new() {
        Ok(cx) => cx,
        Err(e) => {
            eprintln!("xtask: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup(&cx),
        Some("guests") => guests(&cx),
        Some("build") => build(&cx),
        Some("demo") => demo::demo(&cx),
        Some("test") => test(&cx),
        Some("package") => package::package(&cx),
        Some("bench") => bench(&cx, &args[1..]),
        Some("fuzz") => fuzz(&cx, &args[1..]),
        Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{USAGE}")),
        None => Err(format!("no command given\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The host's architecture: it decides what is cross-built and how.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Host {
    X86_64,
    Aarch64,
}

/// Paths and facts every command needs.
struct Cx {
    root: PathBuf,
    target_dir: PathBuf,
    host: Host,
}

impl Cx {
    fn new() -> Result<Cx> {
        let host = match env::consts::ARCH {
            "x86_64" => Host::X86_64,
            "aarch64" => Host::Aarch64,
            other => return Err(format!("unsupported host architecture `{other}` (x86_64 or aarch64 only)")),
        };
        // host/xtask -> repository root.
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .ok_or("cannot find the repository root")?
            .to_path_buf();
        let target_dir = match env::var_os("CARGO_TARGET_DIR") {
            Some(d) if !d.is_empty() => root.join(d),
            _ => root.join("target"),
        };
        Ok(Cx { root, target_dir, host })
    }

    /// The static aarch64 aarchx.
    fn arm64_bin(&self) -> PathBuf {
        self.target_dir.join(AARCH64).join("release/aarchx")
    }

    /// The target folder of the dynamically linked aarch64 build.
    fn arm64_dynamic_dir(&self) -> PathBuf {
        self.target_dir.join("aarch64-dynamic")
    }

    /// The dynamically linked aarch64 aarchx: the package's, which loads
    /// native plugins.
    fn arm64_dynamic_bin(&self) -> PathBuf {
        self.arm64_dynamic_dir().join(AARCH64).join("release/aarchx")
    }

    /// Where the tests record what they skipped (see `skip` in
    /// host/tests/common/mod.rs), one line each.
    fn skip_log(&self) -> PathBuf {
        self.target_dir.join("test-skips.txt")
    }

    /// The host (x86-64) aarchx, which runs the interpreter.
    fn host_bin(&self) -> PathBuf {
        self.target_dir.join("release/aarchx")
    }

    fn guest_dir(&self) -> PathBuf {
        self.root.join("guest/build")
    }

    /// A `cargo` command on Debian's toolchain, run from the root.
    fn cargo(&self) -> Command {
        let debian = Path::new("/usr/bin/cargo").exists();
        let mut cmd = Command::new(if debian { "/usr/bin/cargo" } else { "cargo" });
        cmd.current_dir(&self.root);
        if debian {
            cmd.env("RUSTC", "/usr/bin/rustc").env("RUSTDOC", "/usr/bin/rustdoc");
            let mut path = OsString::from("/usr/bin");
            if let Some(old) = env::var_os("PATH") {
                path.push(":");
                path.push(old);
            }
            cmd.env("PATH", path);
            // Left behind by rustup's cargo when it started xtask.
            cmd.env_remove("RUSTUP_TOOLCHAIN").env_remove("CARGO");
        }
        // On an arm64 host the aarch64 build is native: no qemu runner.
        if self.host == Host::Aarch64 {
            cmd.env("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER", "env");
        }
        cmd
    }

    fn rel<'a>(&self, p: &'a Path) -> &'a Path {
        p.strip_prefix(&self.root).unwrap_or(p)
    }
}

// ---------------------------------------------------------------------------
// Running things

/// The command as a shell would show it.
fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        let a = a.to_string_lossy();
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "\"'$&;|<>*?()[]{}".contains(c)) {
            let _ = write!(s, " '{}'", a.replace('\'', r"'\''"));
        } else {
            let _ = write!(s, " {a}");
        }
    }
    s
}

/// Runs `cmd` with no stdin, printing it first; fails on a non-zero exit.
fn run(cmd: &mut Command) -> Result {
    println!("$ {}", show(cmd));
    let status = cmd.stdin(Stdio::null()).status().map_err(|e| format!("cannot run `{}`: {e}", show(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", show(cmd)))
    }
}

/// Whether `prog` is found on PATH (or is an existing path).
fn which(prog: &str) -> Option<PathBuf> {
    if prog.contains('/') {
        return Path::new(prog).is_file().then(|| PathBuf::from(prog));
    }
    let path = env::var_os("PATH").unwrap_or_default();
    env::split_paths(&path).chain([PathBuf::from("/usr/bin")]).map(|d| d.join(prog)).find(|p| p.is_file())
}

fn qemu() -> Option<PathBuf> {
    which("qemu-aarch64").or_else(|| which("qemu-aarch64-static"))
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1}s")
    } else {
        format!("{}m{:02}s", d.as_secs() / 60, d.as_secs() % 60)
    }
}

// ---------------------------------------------------------------------------
// setup

/// Debian packages the host needs, in install order.
fn packages(host: Host) -> &'static [&'static str] {
    match host {
        Host::X86_64 => &[
            "rustc-web",
            "cargo-web",
            "libstd-rust-web-dev:arm64",
            "gcc-aarch64-linux-gnu",
            "libc6-dev-arm64-cross",
            "qemu-user",
            "gcc",
            "make",
            "libc6-dev",
            // WASM plugins: wasm32 core/alloc sources and a wasm-ld new enough for them.
            "rust-web-src",
            "lld-19",
        ],
        // Native build; the guests are x86-64, so a cross gcc builds them.
        Host::Aarch64 => &[
            "rustc-web",
            "cargo-web",
            "gcc",
            "make",
            "libc6-dev",
            "gcc-x86-64-linux-gnu",
            "libc6-dev-amd64-cross",
            "rust-web-src",
            "lld-19",
        ],
    }
}

/// The tools a non-Debian machine must provide itself.
fn tools(host: Host) -> &'static [&'static str] {
    match host {
        Host::X86_64 => &["cargo", "rustc", "gcc", "make", "aarch64-linux-gnu-gcc", "qemu-aarch64"],
        Host::Aarch64 => &["cargo", "rustc", "gcc", "make", "x86_64-linux-gnu-gcc"],
    }
}

fn dpkg_installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "install ok installed")
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A command run as root: directly, or through sudo.
fn as_root(prog: &str) -> Result<Command> {
    if is_root() {
        Ok(Command::new(prog))
    } else if which("sudo").is_some() {
        let mut c = Command::new("sudo");
        c.arg(prog);
        Ok(c)
    } else {
        Err(format!("installing packages needs root: run as root or install sudo (to run `{prog}`)"))
    }
}

fn setup(cx: &Cx) -> Result {
    install_packages(cx)?;
    if cx.host == Host::X86_64 && which("dpkg-query").is_some() {
        // Only the FEAT_AFP tests need it: without it (no network, say)
        // they are skipped, each saying why.
        if let Err(e) = qemu_afp(cx) {
            println!("setup: warning: QEMU 10 not fetched ({e}); the FEAT_AFP tests will be skipped");
        }
    }
    Ok(())
}

/// The Debian suite whose `qemu-user` (QEMU 10) emulates FEAT_AFP with
/// `-cpu max`; Debian 12's own qemu-user (7.2) does not.
const QEMU_AFP_SUITE: &str = "bookworm-backports";

/// `qemu-aarch64` of QEMU 10, for running the JIT's FEAT_AFP code (FPCR.AH)
/// under `-cpu max` in the tests: Debian's `qemu-user` of
/// [`QEMU_AFP_SUITE`], fetched by apt with a sources list of its own
/// (signed by Debian's archive key, the system's lists untouched) and
/// unpacked into the target folder (its `qemu-aarch64` kept, the rest of
/// the package's emulators removed).
fn qemu_afp_bin(cx: &Cx) -> PathBuf {
    cx.target_dir.join("qemu-afp/qemu-aarch64")
}

fn qemu_afp(cx: &Cx) -> Result {
    if qemu_afp_bin(cx).is_file() {
        return Ok(());
    }
    let dir = cx.target_dir.join("qemu-afp");
    let apt = dir.join("apt");
    for sub in ["lists/partial", "cache/archives/partial"] {
        std::fs::create_dir_all(apt.join(sub)).map_err(|e| format!("{}: {e}", apt.join(sub).display()))?;
    }
    // A package left by an earlier, interrupted fetch would be taken for
    // this one's.
    for old in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.filter_map(|e| e.ok()) {
        if old.file_name().to_string_lossy().ends_with(".deb") {
            std::fs::remove_file(old.path()).map_err(|e| format!("{}: {e}", old.path().display()))?;
        }
    }
    let list = apt.join("sources.list");
    let line = format!(
        "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian {QEMU_AFP_SUITE} main\n"
    );
    std::fs::write(&list, line).map_err(|e| format!("{}: {e}", list.display()))?;
    let apt_get = || {
        let mut c = Command::new("apt-get");
        c.arg("-o").arg(format!("Dir::Etc::SourceList={}", list.display()));
        c.arg("-o").arg(format!("Dir::Etc::SourceParts={}", apt.join("none").display()));
        c.arg("-o").arg(format!("Dir::State::Lists={}", apt.join("lists").display()));
        c.arg("-o").arg(format!("Dir::Cache={}", apt.join("cache").display()));
        c.args(["-o", "APT::Architecture=amd64", "-o", "APT::Architectures::=amd64", "-q"]);
        c
    };
    println!("setup: downloading qemu-user from {QEMU_AFP_SUITE} (QEMU 10: FEAT_AFP for the JIT's tests)");
    run(apt_get().arg("update"))?;
    run(apt_get().args(["download", &format!("qemu-user/{QEMU_AFP_SUITE}")]).current_dir(&dir))?;
    let deb = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("qemu-user_")))
        .ok_or("setup: apt-get download left no qemu-user_*.deb")?;
    let unpacked = dir.join("unpacked");
    run(Command::new("dpkg").arg("-x").arg(&deb).arg(&unpacked))?;
    let bin = unpacked.join("usr/bin/qemu-aarch64");
    std::fs::rename(&bin, qemu_afp_bin(cx))
        .map_err(|e| format!("setup: {} (from the qemu-user package): {e}", bin.display()))?;
    for gone in [&unpacked, &apt] {
        std::fs::remove_dir_all(gone).map_err(|e| format!("{}: {e}", gone.display()))?;
    }
    std::fs::remove_file(&deb).map_err(|e| format!("{}: {e}", deb.display()))
}

fn install_packages(cx: &Cx) -> Result {
    let arch = match cx.host {
        Host::X86_64 => "x86_64",
        Host::Aarch64 => "aarch64",
    };
    if which("dpkg-query").is_none() {
        // Not Debian: say what is missing and let the user install it.
        let missing: Vec<&str> = tools(cx.host).iter().copied().filter(|t| which(t).is_none()).collect();
        if missing.is_empty() {
            println!("setup: not a Debian system; the needed tools are all on PATH");
            return Ok(());
        }
        return Err(format!(
            "setup: not a Debian system, and these are missing: {}; install them (Debian package names: {})",
            missing.join(", "),
            packages(cx.host).join(" ")
        ));
    }

    let foreign_arm64 = cx.host == Host::X86_64
        && !Command::new("dpkg")
            .arg("--print-foreign-architectures")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l.trim() == "arm64"));
    let missing: Vec<&str> = packages(cx.host).iter().copied().filter(|p| !dpkg_installed(p)).collect();
    if !foreign_arm64 && missing.is_empty() {
        println!("setup: nothing to do ({arch} host; all of {} installed)", packages(cx.host).join(" "));
        return Ok(());
    }

    if foreign_arm64 {
        println!("setup: enabling the arm64 architecture in dpkg (for the aarch64 Rust std)");
        run(as_root("dpkg")?.args(["--add-architecture", "arm64"]))?;
    }
    println!("setup: installing {}", missing.join(" "));
    run(as_root("apt-get")?.arg("update"))?;
    run(as_root("apt-get")?.env("DEBIAN_FRONTEND", "noninteractive").args(["install", "-y"]).args(&missing))?;
    println!("setup: done");
    Ok(())
}

// ---------------------------------------------------------------------------
// guests, build

fn guests(cx: &Cx) -> Result {
    let dir = cx.root.join("guest");
    if !dir.join("Makefile").is_file() {
        return Err(format!(
            "{} does not exist yet: the guest programs cannot be built",
            cx.rel(&dir.join("Makefile")).display()
        ));
    }
    println!("building the x86-64 guest programs...");
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut make = Command::new("make");
    make.arg("-C").arg(&dir).arg(format!("-j{jobs}"));
    if cx.host == Host::Aarch64 {
        make.arg("CC=x86_64-linux-gnu-gcc");
    }
    run(&mut make)
}

fn build_host(cx: &Cx) -> Result {
    println!("building x86-64 aarchx (the interpreter build for this machine)...");
    run(cx.cargo().args(["build", "--release", "-p", "aarchx"]))?;
    println!("built {}", cx.rel(&cx.host_bin()).display());
    Ok(())
}

fn build_arm64(cx: &Cx) -> Result {
    println!("building aarch64 aarchx (takes several minutes the first time)...");
    run(cx.cargo().args(["build", "--release", "-p", "aarchx", "--target", AARCH64]))?;
    println!("built {}", cx.rel(&cx.arm64_bin()).display());
    Ok(())
}

/// .cargo/config.toml's flags for the aarch64 target without
/// `+crt-static` (keep the two equal): `RUSTFLAGS` replaces them.
const AARCH64_DYNAMIC_RUSTFLAGS: &str = "-C link-arg=-Wl,-Ttext-segment=0x7e0000000000";

/// The dynamically linked aarch64 aarchx, against the arm64 C library of
/// the host it runs on: the build a user runs (libloading works there, so
/// native pass plugins load) and the package ships. The static build stays
/// the one the qemu tests run (under this machine's qemu a dynamically
/// linked aarch64 program hangs when it starts a thread). Other rustflags
/// rebuild every crate, so it has a target folder of its own.
fn build_arm64_dynamic(cx: &Cx) -> Result {
    println!("building the dynamically linked aarch64 aarchx (the package's; a few minutes the first time)...");
    run(cx
        .cargo()
        .env("RUSTFLAGS", AARCH64_DYNAMIC_RUSTFLAGS)
        .args(["build", "--release", "-p", "aarchx", "--target", AARCH64, "--target-dir"])
        .arg(cx.arm64_dynamic_dir()))?;
    println!("built {}", cx.rel(&cx.arm64_dynamic_bin()).display());
    Ok(())
}

/// A step of a command.
type Step = fn(&Cx) -> Result;

/// The builds this host makes: on x86-64 both, on arm64 the native one
/// (still with `--target`, so the static-link flags of `.cargo/config.toml`
/// do not reach build scripts and proc macros).
fn build_steps(cx: &Cx) -> Vec<(&'static str, Step)> {
    match cx.host {
        Host::X86_64 => vec![("build x86-64", build_host as Step), ("build aarch64", build_arm64)],
        Host::Aarch64 => vec![("build aarch64", build_arm64 as Step)],
    }
}

fn build(cx: &Cx) -> Result {
    for (_, step) in build_steps(cx) {
        step(cx)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// test

/// Counts from cargo test's `test result:` lines, and how long each test
/// binary ran (named by the `Running` line cargo prints on stderr before
/// it), so the summary shows where CI's time goes.
#[derive(Default)]
struct Counts {
    passed: u64,
    failed: u64,
    ignored: u64,
    times: Vec<(String, f64)>,
}

impl Counts {
    fn add_line(&mut self, line: &str, running: &str) {
        // "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 3.21s"
        let Some(rest) = line.strip_prefix("test result: ") else { return };
        for part in rest.split(';') {
            if let Some(t) = part.trim().strip_prefix("finished in ").and_then(|t| t.strip_suffix('s')) {
                self.times.push((running.to_string(), t.parse().unwrap_or(0.0)));
                continue;
            }
            let mut words = part.split_whitespace().rev();
            let (Some(what), Some(n)) = (words.next(), words.next()) else { continue };
            let Ok(n) = n.parse::<u64>() else { continue };
            match what {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.ignored += n,
                _ => {}
            }
        }
    }

    /// The test binaries that ran longest, slowest first.
    fn slowest(&self, n: usize) -> Vec<(String, f64)> {
        let mut t = self.times.clone();
        t.sort_by(|a, b| b.1.total_cmp(&a.1));
        t.truncate(n);
        t
    }
}

/// What `./x test` runs under cargo test: the whole workspace for the
/// machine's own target, and on an x86-64 machine also aarchx's unit
/// tests built for aarch64 and run under qemu-aarch64 (the runner of
/// `.cargo/config.toml`), where the IR semantic tests (`exec_tests`) and
/// the JIT's own tests run every region on the JIT against the
/// interpreter, which only arm64 can execute.
/// One `cargo test` run of `./x test`: its name, cargo's arguments, and
/// whether its aarch64 test binary runs under QEMU 10 with `-cpu max`
/// (FEAT_AFP: the JIT's float code under FPCR.AH) instead of cargo's
/// configured runner.
struct TestRun {
    name: &'static str,
    args: Vec<&'static str>,
    afp: bool,
}

/// The test runs of `./x test` on this host. The FEAT_AFP run needs QEMU
/// 10 (see [`qemu_afp`]); without it the run is recorded as skipped.
fn test_runs(cx: &Cx) -> Vec<TestRun> {
    let workspace = vec!["test", "--workspace", "--release", "--no-fail-fast"];
    let arm64_lib = vec!["test", "--release", "--no-fail-fast", "-p", "aarchx", "--lib", "--target", AARCH64];
    match cx.host {
        Host::X86_64 => {
            let mut runs = vec![
                TestRun { name: "cargo test", args: workspace, afp: false },
                TestRun {
                    name: "cargo test aarch64 unit tests (JIT, under qemu)",
                    args: arm64_lib.clone(),
                    afp: false,
                },
            ];
            if qemu_afp_bin(cx).is_file() {
                let name = "cargo test aarch64 unit tests (JIT, under QEMU 10 -cpu max: FEAT_AFP)";
                runs.push(TestRun { name, args: arm64_lib, afp: true });
            } else {
                let line = "aarch64 unit tests under FEAT_AFP: QEMU 10 was not fetched (see the setup step)\n";
                let log = cx.skip_log();
                let appended = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
                if let Err(e) = appended {
                    eprintln!("xtask: {}: {e}", log.display());
                }
            }
            runs
        }
        Host::Aarch64 => {
            vec![TestRun { name: "cargo test", args: [workspace, vec!["--target", AARCH64]].concat(), afp: false }]
        }
    }
}

/// `cargo ARGS`, output passed through and counted.
fn cargo_test(cx: &Cx, test: &TestRun, counts: &mut Counts) -> Result {
    let mut cmd = cx.cargo();
    cmd.args(&test.args);
    if test.afp {
        let runner = format!("{} -cpu max", qemu_afp_bin(cx).display());
        cmd.env("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER", runner);
    }
    cmd.env("AARCHX_ARM64_BIN", cx.arm64_bin())
        .env("AARCHX_ARM64_DYNAMIC_BIN", cx.arm64_dynamic_bin())
        .env(
            "AARCHX_QEMU",
            match cx.host {
                Host::X86_64 => qemu().map(PathBuf::into_os_string).unwrap_or_default(),
                Host::Aarch64 => OsString::new(),
            },
        )
        .env(
            "AARCHX_QEMU_AFP",
            match cx.host {
                Host::X86_64 if qemu_afp_bin(cx).is_file() => qemu_afp_bin(cx).into_os_string(),
                _ => OsString::new(),
            },
        )
        .env("AARCHX_GUEST_DIR", cx.guest_dir())
        .env("AARCHX_SKIP_LOG", cx.skip_log())
        .env("AARCHX_DEB", package::deb_path(cx))
        // The persistent cache off: a suite's runs count translations and
        // must not find another run's (tests/cache.rs turns it on, each
        // test with a folder of its own).
        .env("AARCHX_CACHE", "off");
    println!(
        "running the tests (AARCHX_ARM64_BIN, AARCHX_ARM64_DYNAMIC_BIN, AARCHX_QEMU, AARCHX_QEMU_AFP, AARCHX_GUEST_DIR, AARCHX_SKIP_LOG, AARCHX_DEB, AARCHX_CACHE=off set)..."
    );
    println!("$ {}", show(&cmd));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", show(&cmd)))?;
    // cargo names each test binary on stderr ("Running tests/x.rs (...)")
    // before its output starts on stdout.
    let running = Arc::new(Mutex::new(String::new()));
    let err_reader = child.stderr.take().map(|err| {
        let running = Arc::clone(&running);
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                eprintln!("{line}");
                if let Some(what) = line.trim_start().strip_prefix("Running ") {
                    let name = what.split(" (").next().unwrap_or(what).to_string();
                    *running.lock().unwrap_or_else(|e| e.into_inner()) = name;
                }
            }
        })
    });
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            println!("{line}");
            counts.add_line(&line, &running.lock().unwrap_or_else(|e| e.into_inner()));
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if let Some(r) = err_reader {
        r.join().map_err(|_| "the stderr reader of cargo test panicked".to_string())?;
    }
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo test failed ({status})"))
    }
}

fn test(cx: &Cx) -> Result {
    let started = Instant::now();
    let mut summary: Vec<(String, Result, Duration)> = Vec::new();
    let mut step = |name: &str, f: &mut dyn FnMut() -> Result| {
        let t = Instant::now();
        let r = f();
        if let Err(e) = &r {
            eprintln!("xtask: {e}");
        }
        summary.push((name.to_string(), r, t.elapsed()));
        summary.last().is_some_and(|s| s.1.is_ok())
    };

    let mut slowest = Vec::new();
    let mut totals = None;
    // Without the toolchain nothing else can work; the other steps go on
    // after a failure so the summary shows as much as possible.
    if step("setup", &mut || setup(cx)) {
        step("guests", &mut || guests(cx));
        for (name, f) in build_steps(cx) {
            step(name, &mut || f(cx));
        }
        step("build aarch64 (dynamic)", &mut || build_arm64_dynamic(cx));
        // From the aarch64 build just made; host/tests/package.rs checks it.
        step("package (.deb)", &mut || package::build_deb(cx));
        let mut counts = Counts::default();
        let mut named = Vec::new();
        // A file left by an earlier run would count its skips again.
        let _ = std::fs::remove_file(cx.skip_log());
        for run in test_runs(cx) {
            let before = (counts.passed, counts.failed, counts.ignored);
            let name = run.name;
            step(name, &mut || cargo_test(cx, &run, &mut counts));
            named.push(format!(
                "{name} ({} passed, {} failed, {} ignored)",
                counts.passed - before.0,
                counts.failed - before.1,
                counts.ignored - before.2
            ));
        }
        let first = summary.len() - named.len();
        for (entry, name) in summary[first..].iter_mut().zip(named) {
            entry.0 = name;
        }
        slowest = counts.slowest(8);
        totals = Some(counts);
    }

    println!("\n==== summary ({})", secs(started.elapsed()));
    let mut failed = 0;
    for (name, result, time) in &summary {
        let mark = if result.is_ok() { "ok    " } else { "FAILED" };
        failed += usize::from(result.is_err());
        println!("  {mark}  {name:<55} {:>8}", secs(*time));
    }
    if !slowest.is_empty() {
        println!("  slowest test binaries:");
        for (name, t) in &slowest {
            println!("          {name:<55} {:>8}", secs(Duration::from_secs_f64(*t)));
        }
    }
    // What the tests could not check, each with its reason.
    let skips: Vec<String> =
        std::fs::read_to_string(cx.skip_log()).map(|t| t.lines().map(String::from).collect()).unwrap_or_default();
    if !skips.is_empty() {
        println!("  skipped:");
        for s in &skips {
            println!("          {s}");
        }
    }
    if let Some(c) = totals {
        println!("tests: {} passed, {} failed, {} skipped", c.passed, c.failed, c.ignored + skips.len() as u64);
    }
    if failed == 0 {
        println!("all steps passed");
        Ok(())
    } else {
        Err(format!("{failed} step(s) failed"))
    }
}

// ---------------------------------------------------------------------------
// bench: set-up for bench/run.py (owned by the benchmark work; see docs/benchmarks.md)

/// The peer engine: QEMU's x86-64 user emulator built for arm64, unpacked
/// from Debian's `qemu-user-static:arm64` into bench/build/peer.
fn bench_peer(cx: &Cx) -> Result {
    let build = cx.root.join("bench/build");
    let peer = build.join("peer/usr/bin/qemu-x86_64-static");
    if peer.is_file() {
        return Ok(());
    }
    std::fs::create_dir_all(&build).map_err(|e| format!("{}: {e}", build.display()))?;
    let deb = |b: &Path| {
        std::fs::read_dir(b).ok().and_then(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
                p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.starts_with("qemu-user-static_") && n.ends_with("_arm64.deb")
                })
            })
        })
    };
    if deb(&build).is_none() {
        println!("bench: downloading qemu-user-static:arm64 (the QEMU peer)");
        run(Command::new("apt-get").args(["download", "qemu-user-static:arm64"]).current_dir(&build))?;
    }
    let deb = deb(&build).ok_or("bench: apt-get download left no qemu-user-static_*_arm64.deb")?;
    run(Command::new("dpkg").arg("-x").arg(&deb).arg(build.join("peer")))
}

fn bench(cx: &Cx, args: &[String]) -> Result {
    if cx.host != Host::X86_64 {
        return Err("bench: the harness runs arm64 code under qemu-aarch64 on an x86-64 host; \
                    arm64 hosts are not supported yet"
            .into());
    }
    setup(cx)?;
    let missing: Vec<&str> = ["valgrind", "time", "clang"].into_iter().filter(|p| !dpkg_installed(p)).collect();
    if !missing.is_empty() && which("dpkg-query").is_some() {
        println!("bench: installing {}", missing.join(" "));
        run(as_root("apt-get")?.env("DEBIAN_FRONTEND", "noninteractive").args(["install", "-y"]).args(&missing))?;
    }
    bench_peer(cx)?;
    run(Command::new("make").args(["-C", "bench", "all", "check"]).current_dir(&cx.root))?;
    build(cx)?;
    let python = which("python3").ok_or("bench: python3 not found")?;
    let args = args.strip_prefix(&["--".to_string()]).unwrap_or(args);
    // The harness records `./x bench ARGS` as the command that made the table.
    run(Command::new(python).arg("bench/run.py").args(args).env("AARCHX_BENCH_VIA_XTASK", "1").current_dir(&cx.root))
}

// ---------------------------------------------------------------------------
// fuzz (see docs/fuzzing.md)

/// What cargo-fuzz passes rustc: libFuzzer's coverage instrumentation.
const FUZZ_RUSTFLAGS: &str = "-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing";

fn fuzz(cx: &Cx, args: &[String]) -> Result {
    let corpora = cx.root.join("fuzz/corpus");
    let mut targets: Vec<String> = std::fs::read_dir(&corpora)
        .map_err(|e| format!("{}: {e}", corpora.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    targets.sort();
    let usage = || format!("usage: ./x fuzz TARGET [SECONDS]; targets: {}", targets.join(", "));
    let (target, seconds) = match args {
        [t] => (t, 300),
        [t, s] => (t, s.parse::<u64>().map_err(|_| format!("`{s}` is not a number of seconds; {}", usage()))?),
        _ => return Err(usage()),
    };
    if !targets.contains(target) {
        return Err(format!("unknown fuzz target `{target}`; {}", usage()));
    }
    // Its own target folder: every crate is built with other flags. An
    // explicit --target keeps them off build scripts and proc macros.
    let target_dir = cx.target_dir.join("fuzz");
    let triple = format!("{}-unknown-linux-gnu", env::consts::ARCH);
    run(cx
        .cargo()
        .current_dir(cx.root.join("fuzz"))
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTFLAGS", FUZZ_RUSTFLAGS.split_whitespace().collect::<Vec<_>>().join(" "))
        .args(["build", "--release", "--target", &triple, "--bin", target]))?;
    let bin = target_dir.join(&triple).join("release").join(target);
    // New inputs go to a scratch corpus first; the merge below adds to the
    // repository's only those that reach code no input there reaches.
    let scratch = target_dir.join("corpus").join(target);
    let artifacts = target_dir.join("artifacts").join(target);
    for dir in [&scratch, &artifacts] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let corpus = corpora.join(target);
    let fuzzer = || {
        let mut cmd = Command::new("nice");
        cmd.arg("-n10").arg(&bin).current_dir(&cx.root);
        cmd
    };
    run(fuzzer()
        .arg(format!("-max_total_time={seconds}"))
        .args(["-timeout=10", "-rss_limit_mb=2048", "-max_len=65536", "-print_final_stats=1"])
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg(&scratch)
        .arg(&corpus))
    .map_err(|e| format!("{e}\nthe input that failed is in {}", cx.rel(&artifacts).display()))?;
    run(fuzzer().arg("-merge=1").arg(&corpus).arg(&scratch))
}
