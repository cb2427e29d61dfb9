//! `./x demo`: what a newcomer wants to see. A real dynamically linked
//! x86-64 program (guest/c/threads.c: glibc, sixteen pthreads, atomics, a
//! mutex, condition variables, barriers, semaphores, thread-local data)
//! runs natively for reference, then under aarchx with several policies
//! side by side: the default, `policies/ordered.ron`, and the default with
//! superblocks turned off (`--set decode.follow=false`). Each run's output
//! is checked against the reference byte for byte and gets one line of
//! translation stats; on an x86-64 host the arm64 instructions each run
//! executed are counted under qemu-aarch64 with the bench's TCG plugin, and
//! the closing table compares the policies A/B.
//!
//! On an arm64 host there is no native x86-64 run: the interpreter
//! (`policies/interp.ron`) is the reference, and wall time stands in for
//! the instruction count.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::{build, guests, qemu, run, setup, show, Cx, Host, Result};

/// The demo program, under the guest build folder.
const PROGRAM: &str = "dyn/threads";

/// The variants compared: a label and aarchx's arguments before the program.
const VARIANTS: &[(&str, &[&str])] = &[
    ("default policy", &[]),
    ("policies/ordered.ron", &["--policy", "policies/ordered.ron"]),
    ("default, no superblocks", &["--set", "decode.follow=false"]),
];

/// What one run of the program gave.
struct Outcome {
    stdout: Vec<u8>,
    /// aarchx's `AARCHX_STATS` line, as `key=value` pairs.
    stats: Vec<(String, u64)>,
    /// arm64 instructions executed (x86-64 hosts, plugin built).
    arm64_insns: Option<u64>,
    seconds: f64,
}

impl Outcome {
    fn stat(&self, key: &str) -> Option<u64> {
        self.stats.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    /// The one line of stats shown under a run.
    fn summary(&self) -> String {
        let mut s = format!(
            "{} regions, {} guest instructions translated in {:.2} s",
            self.stat("regions").map_or("?".into(), |v| v.to_string()),
            self.stat("guest_insns").map_or("?".into(), |v| v.to_string()),
            self.stat("translate_ns").map_or(f64::NAN, |ns| ns as f64 / 1e9),
        );
        if self.stat("ordered") == Some(1) {
            s.push_str(", x86-TSO ordering on");
        }
        match self.arm64_insns {
            Some(n) => s.push_str(&format!(", {:.3} G arm64 instructions executed", n as f64 / 1e9)),
            None => s.push_str(&format!(", {:.2} s", self.seconds)),
        }
        s
    }
}

/// Runs `cmd` capturing stdout (stderr for the stats line; anything else
/// on it passed through), with `count` the plugin's output file if any.
fn capture(cmd: &mut Command, count: Option<&Path>) -> Result<Outcome> {
    println!("$ {}", show(cmd));
    let start = Instant::now();
    let out = cmd
        .env("AARCHX_STATS", "1")
        .env("AARCHX_CACHE", "off")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", show(cmd)))?;
    let seconds = start.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut stats = Vec::new();
    for line in stderr.lines() {
        match line.strip_prefix("aarchx-stats: ") {
            Some(rest) => stats.extend(rest.split_whitespace().filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.to_string(), v.parse().ok()?))
            })),
            None => eprintln!("{line}"),
        }
    }
    if !out.status.success() {
        return Err(format!("`{}` failed ({})", show(cmd), out.status));
    }
    let arm64_insns = match count {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            text.lines().find_map(|l| l.strip_prefix("insns ")?.parse().ok())
        }
        None => None,
    };
    Ok(Outcome { stdout: out.stdout, stats, arm64_insns, seconds })
}

/// How aarchx is started here: under qemu-aarch64 with the counting plugin
/// on an x86-64 host, directly on an arm64 one.
struct Launcher {
    qemu: Option<PathBuf>,
    plugin: Option<PathBuf>,
    aarchx: PathBuf,
    count: PathBuf,
}

impl Launcher {
    fn command(&self, args: &[&str], program: &Path) -> Command {
        let mut cmd = match &self.qemu {
            Some(qemu) => {
                let mut cmd = Command::new(qemu);
                if let Some(plugin) = &self.plugin {
                    cmd.arg("-plugin").arg(format!("{},out={}", plugin.display(), self.count.display()));
                }
                cmd.arg(&self.aarchx);
                cmd
            }
            None => Command::new(&self.aarchx),
        };
        cmd.args(args).arg(program);
        cmd
    }
}

pub fn demo(cx: &Cx) -> Result {
    setup(cx)?;
    guests(cx)?;
    build(cx)?;
    let program = cx.rel(&cx.guest_dir().join(PROGRAM)).to_path_buf();
    let aarchx = Path::new(".").join(cx.rel(&cx.arm64_bin()));
    let count = cx.target_dir.join("demo.count");
    let launcher = match cx.host {
        Host::X86_64 => {
            let qemu = qemu().ok_or("qemu-aarch64 not found (run `cargo xtask setup`)")?;
            run(Command::new("make").args(["-C", "bench", "plugin"]).current_dir(&cx.root))?;
            let plugin = cx.root.join("bench/build/libinsncount.so");
            Launcher { qemu: Some(qemu), plugin: plugin.is_file().then_some(plugin), aarchx, count }
        }
        Host::Aarch64 => Launcher { qemu: None, plugin: None, aarchx, count },
    };
    let plugin_count = launcher.plugin.as_ref().map(|_| launcher.count.as_path());

    println!(
        "\n== aarchx demo: {}, a dynamically linked x86-64 C program (glibc, sixteen pthreads, atomics,\n   \
         a mutex, condition variables, barriers, semaphores; guest/c/threads.c)",
        program.display()
    );
    let reference = match cx.host {
        Host::X86_64 => {
            println!("\n== native x86-64 run (the reference)");
            capture(Command::new(Path::new(".").join(&program)).current_dir(&cx.root), None)?
        }
        Host::Aarch64 => {
            println!("\n== the aarchx interpreter (the reference: no native x86-64 run on an arm64 host)");
            capture(launcher.command(&["--policy", "policies/interp.ron"], &program).current_dir(&cx.root), None)?
        }
    };
    print!("{}", String::from_utf8_lossy(&reference.stdout));

    let mut results = Vec::new();
    for (i, &(label, args)) in VARIANTS.iter().enumerate() {
        println!("\n== aarchx, {label}");
        let outcome = capture(launcher.command(args, &program).current_dir(&cx.root), plugin_count)?;
        if i == 0 {
            print!("{}", String::from_utf8_lossy(&outcome.stdout));
        }
        let same = outcome.stdout == reference.stdout;
        println!(
            "   output: {}",
            if same { "identical to the reference, byte for byte" } else { "DIFFERS from the reference" }
        );
        println!("   stats: {}", outcome.summary());
        results.push((label, same, outcome));
    }

    println!("\n== A/B: the same program under each policy (first row = 1.00)");
    let measure = |o: &Outcome| o.arm64_insns.map_or(o.seconds, |n| n as f64);
    let unit = if launcher.plugin.is_some() { "arm64 instructions" } else { "wall time" };
    let base = measure(&results[0].2);
    for (label, same, o) in &results {
        println!(
            "   {label:<26} {:>5.2} ({unit})   {} regions   output {}",
            measure(o) / base,
            o.stat("regions").map_or("?".into(), |v| v.to_string()),
            if *same { "ok" } else { "WRONG" }
        );
    }
    let _ = std::fs::remove_file(&launcher.count);
    if results.iter().all(|(_, same, _)| *same) {
        println!("\ndemo: every run's output matched the reference");
        Ok(())
    } else {
        Err("demo: an aarchx run's output differs from the reference (see above)".into())
    }
}
