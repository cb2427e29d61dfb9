//! The persistent translation cache (docs/cache.md) as users meet it:
//! warm runs that match cold runs and native ones and translate nothing
//! again, keys that miss when what the code depends on changes, processes
//! sharing one cold cache, damaged files and unusable folders.
//!
//! Every run here names its own cache folder (`XDG_CACHE_HOME`) and mode
//! (`AARCHX_CACHE`), over what `./x test` sets for the other suites.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{describe, guest_dir, guest_programs, host_aarchx, run, Outcome};

/// A fresh, empty folder for one test's caches.
fn temp(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aarchx-cache-test-{}-{test}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `aarchx` (`prefix`: the host build, or qemu and the aarch64 build) with
/// the cache in `home`'s `aarchx` folder, mode `mode`, and the stats line.
fn cached(prefix: &[PathBuf], home: &Path, mode: &str) -> Command {
    let mut c = Command::new(&prefix[0]);
    c.args(&prefix[1..]).env("XDG_CACHE_HOME", home).env("AARCHX_CACHE", mode).env("AARCHX_STATS", "1");
    c
}

/// The outcome without the stats line, and the line's numbers.
fn split_stats(mut o: Outcome) -> (Outcome, Vec<(String, u64)>) {
    let text = String::from_utf8_lossy(&o.stderr).into_owned();
    let (stats, rest): (Vec<&str>, Vec<&str>) =
        text.split_inclusive('\n').partition(|l| l.starts_with("aarchx-stats:"));
    let numbers = stats
        .iter()
        .flat_map(|l| l.split_whitespace())
        .filter_map(|w| w.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect();
    o.stderr = rest.concat().into_bytes();
    (common::without_qemu_notes(o), numbers)
}

/// The stats line's `name`, summed over the line of each process.
fn stat(stats: &[(String, u64)], name: &str) -> u64 {
    stats.iter().filter(|(k, _)| k == name).map(|(_, v)| v).sum()
}

fn host() -> Vec<PathBuf> {
    vec![host_aarchx()]
}

/// Programs whose warm runs translate what cannot be kept: code a
/// program writes at run time is not a file's (`smc`, `codegen_churn`); a region run while MXCSR
/// unmasks an exception runs its reference translation, never kept
/// (`fenv_trap`).
const TRANSLATE_WARM: &[&str] = &["smc", "codegen_churn", "fenv_trap"];

/// Runs every guest program of the `dyn` build (the C library and the
/// loader shared, as users' programs are) cold, warm, and warm under
/// `Verify`, one cache folder for all: each run must end as the native
/// one; the warm run must take its regions from the cache and translate
/// none, `Verify` must find every region it takes equal to its
/// translation now.
fn warm_runs_match(prefix: &[PathBuf], engine: &str, programs: &[(String, Vec<String>)], home: &Path) {
    let mut failures = Vec::new();
    for (name, args) in programs {
        let prog = guest_dir().join("dyn").join(name);
        // The threads programs print how many threads met in one place,
        // which depends on scheduling run to run (guests.rs has them).
        if !prog.exists() || name.starts_with("threads") {
            continue;
        }
        let native = run(Command::new(&prog).args(args));
        let mut runs = Vec::new();
        for mode in ["readwrite", "readwrite", "verify"] {
            let (got, stats) = split_stats(run(cached(prefix, home, mode).arg(&prog).args(args)));
            if got != native {
                failures.push(format!(
                    "{name} ({mode}) under {engine}:\n{}\nnative:\n{}",
                    describe(&got),
                    describe(&native)
                ));
            }
            runs.push(stats);
        }
        let (cold, warm, verify) = (&runs[0], &runs[1], &runs[2]);
        if stat(cold, "cache_stored") == 0 || stat(warm, "cache_hits") == 0 {
            failures.push(format!("{name} under {engine}: nothing stored or nothing taken: {cold:?} / {warm:?}"));
        }
        // A region translated again would have been a hit: what a warm run
        // translates is code the cold run did not reach (glibc's string
        // routines branch on their pointers' alignment, which ASLR
        // changes), and all of it is kept.
        let (translated, stored) = (stat(warm, "regions"), stat(warm, "cache_stored"));
        if !TRANSLATE_WARM.iter().any(|p| name.starts_with(p)) && translated != stored {
            failures
                .push(format!("{name} under {engine}: the warm run translated {translated} regions, kept {stored}"));
        }
        if stat(verify, "cache_mismatches") != 0 || stat(verify, "cache_verified") == 0 {
            failures.push(format!("{name} under {engine}: verify: {verify:?}"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn warm_runs_match_cold_runs_and_native_and_translate_nothing_again() {
    let home = temp("warm");
    warm_runs_match(&host(), "the interpreter", &guest_programs(), &home);
    std::fs::remove_dir_all(&home).ok();
}

/// The same under the JIT, for a few programs (each run is slow under
/// qemu): the cache keeps IR, which the JIT lowers as it would a fresh
/// translation.
#[test]
fn warm_runs_match_under_the_jit() {
    let Some((qemu, bin)) = common::arm64_aarchx("warm runs under the JIT") else { return };
    let prefix: Vec<PathBuf> = qemu.into_iter().chain([bin]).collect();
    let programs: Vec<_> = guest_programs()
        .into_iter()
        .filter(|(n, _)| ["hash", "sort_search", "strings", "fpmath", "printf_int"].contains(&n.as_str()))
        .collect();
    assert!(programs.len() >= 3, "{programs:?}");
    let home = temp("warm-jit");
    warm_runs_match(&prefix, "the JIT", &programs, &home);
    std::fs::remove_dir_all(&home).ok();
}

/// One run of `prog` with the cache in `home`; its stats.
fn once(home: &Path, prog: &Path, extra: &[&str]) -> (Outcome, Vec<(String, u64)>) {
    split_stats(run(cached(&host(), home, "readwrite").args(extra).arg(prog)))
}

#[test]
fn a_changed_policy_option_cpu_level_or_program_misses() {
    let home = temp("keys");
    let hello = guest_dir().join("static").join("hello");
    let (first, _) = once(&home, &hello, &[]);
    assert_eq!(first.code, Some(0), "{}", describe(&first));
    let (_, again) = once(&home, &hello, &[]);
    assert!(stat(&again, "cache_hits") > 0, "the same run hits: {again:?}");
    for extra in [&["--set", "decode.tier_up=100"][..], &["--set", "decode.max_insns=32"], &["--policy", "v2"]] {
        let (o, stats) = once(&home, &hello, extra);
        assert_eq!(o, first, "{extra:?}");
        assert_eq!(stat(&stats, "cache_hits"), 0, "{extra:?} must miss: {stats:?}");
        assert!(stat(&stats, "cache_stored") > 0, "{extra:?} stores its own: {stats:?}");
    }
    // The program rewritten in place with other content of the same size
    // and times: its greeting changed.
    let copy = home.join("hello");
    let mut bytes = std::fs::read(&hello).expect("hello");
    let at = bytes.windows(5).position(|w| w == b"Hello").expect("a greeting in the program");
    bytes[at] = b'j';
    std::fs::copy(&hello, &copy).expect("copy");
    let (copied, _) = once(&home, &copy, &[]);
    assert_eq!(copied.stdout, first.stdout);
    let times = std::fs::metadata(&copy).expect("metadata");
    std::fs::write(&copy, &bytes).expect("rewrite");
    let f = std::fs::File::options().write(true).open(&copy).expect("open");
    f.set_times(
        std::fs::FileTimes::new()
            .set_modified(times.modified().expect("mtime"))
            .set_accessed(times.accessed().expect("atime")),
    )
    .expect("set times");
    drop(f);
    let native = run(&mut Command::new(&copy));
    assert_ne!(native.stdout, first.stdout, "the rewrite shows");
    let (o, stats) = once(&home, &copy, &[]);
    assert_eq!(o, native);
    assert_eq!(stat(&stats, "cache_hits"), 0, "the rewritten program must miss: {stats:?}");
    std::fs::remove_dir_all(&home).ok();
}

#[test]
fn eight_processes_share_a_cold_cache() {
    let home = temp("eight");
    let prog = guest_dir().join("dyn").join("hash");
    let native = run(&mut Command::new(&prog));
    let children: Vec<_> = (0..8)
        .map(|_| {
            cached(&host(), &home, "readwrite")
                .arg(&prog)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        let (got, _) =
            split_stats(Outcome { stdout: out.stdout, stderr: out.stderr, code: out.status.code(), signal: None });
        assert_eq!(got, native);
    }
    let verify = run(Command::new(host_aarchx()).args(["cache", "verify"]).env("XDG_CACHE_HOME", &home));
    assert_eq!(verify.code, Some(0), "{}", describe(&verify));
    assert!(String::from_utf8_lossy(&verify.stdout).contains("all intact"), "{}", describe(&verify));
    let (got, stats) = once(&home, &prog, &[]);
    assert_eq!(got, native);
    assert_eq!(stat(&stats, "regions"), 0, "the ninth run finds everything: {stats:?}");
    let stats_out = run(Command::new(host_aarchx()).args(["cache", "stats"]).env("XDG_CACHE_HOME", &home));
    assert!(String::from_utf8_lossy(&stats_out.stdout).contains(" files, "), "{}", describe(&stats_out));
    let cleared = run(Command::new(host_aarchx()).args(["cache", "clear"]).env("XDG_CACHE_HOME", &home));
    assert_eq!(cleared.code, Some(0), "{}", describe(&cleared));
    let (_, stats) = once(&home, &prog, &[]);
    assert_eq!(stat(&stats, "cache_hits"), 0, "cleared: {stats:?}");
    std::fs::remove_dir_all(&home).ok();
}

/// The largest cache file under `home` (the C library's).
fn largest_file(home: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(home.join("aarchx"))
        .expect("cache folder")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).expect("policy folder").flatten())
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "tc"))
        .collect();
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    files.pop().expect("a cache file")
}

#[test]
fn truncated_bit_flipped_and_wrong_version_files_are_ignored_with_one_warning() {
    let home = temp("damaged");
    let prog = guest_dir().join("dyn").join("strings");
    let native = run(&mut Command::new(&prog));
    once(&home, &prog, &[]);
    let file = largest_file(&home);
    let good = std::fs::read(&file).expect("cache file");
    let damages: [(&str, Box<dyn Fn(&mut Vec<u8>)>); 3] = [
        ("truncated", Box::new(|b: &mut Vec<u8>| b.truncate(b.len() / 2))),
        (
            "bit-flipped",
            Box::new(|b: &mut Vec<u8>| {
                let mid = b.len() / 2;
                b[mid] ^= 0x10
            }),
        ),
        ("wrong version", Box::new(|b: &mut Vec<u8>| b[8] = b[8].wrapping_add(1))),
    ];
    for (what, damage) in damages {
        let mut bytes = good.clone();
        damage(&mut bytes);
        std::fs::write(&file, &bytes).expect("damage");
        let (got, stats) = once(&home, &prog, &[]);
        let warnings: Vec<String> =
            String::from_utf8_lossy(&got.stderr).lines().filter(|l| l.contains("damaged")).map(String::from).collect();
        assert_eq!(warnings.len(), 1, "{what}: one warning line: {}", describe(&got));
        assert!(warnings[0].starts_with("aarchx: warning: persistent cache: "), "{what}: {warnings:?}");
        let mut without = got;
        without.stderr = String::from_utf8_lossy(&without.stderr)
            .split_inclusive('\n')
            .filter(|l| !l.contains("damaged"))
            .collect::<String>()
            .into_bytes();
        assert_eq!(without, native, "{what}");
        assert!(stat(&stats, "regions") > 0, "{what}: translated again");
        // Rewritten whole by that run.
        let verify = run(Command::new(host_aarchx()).args(["cache", "verify"]).env("XDG_CACHE_HOME", &home));
        assert_eq!(verify.code, Some(0), "{what}: {}", describe(&verify));
    }
    std::fs::remove_dir_all(&home).ok();
}

#[test]
fn an_unusable_cache_folder_degrades_to_no_cache() {
    let home = temp("unusable");
    let prog = guest_dir().join("dyn").join("strings");
    let native = run(&mut Command::new(&prog));
    // A file where the folder should be: no user, root included, can
    // write under it.
    let blocked = home.join("not-a-folder");
    std::fs::write(&blocked, b"x").expect("file");
    for _ in 0..2 {
        let (got, stats) = split_stats(run(cached(&host(), &blocked, "readwrite").arg(&prog)));
        let err = String::from_utf8_lossy(&got.stderr).into_owned();
        assert_eq!(err.lines().count(), 1, "one warning line: {err}");
        assert!(err.starts_with("aarchx: warning: persistent cache: cannot write in "), "{err}");
        assert_eq!((got.stdout, got.code), (native.stdout.clone(), native.code));
        assert_eq!(stat(&stats, "cache_hits"), 0);
    }
    std::fs::remove_dir_all(&home).ok();
}
