//! Replays the fuzz corpora: every file of `fuzz/corpus/TARGET/` goes
//! through that target's entry point (`aarchx::fuzz::TARGETS`), which must
//! return, without a panic, within a time bound. The corpora hold the
//! fuzzers' seeds, the inputs they found that reach new code, and each
//! input that once crashed or hung (`regress-*`), so a fixed bug stays
//! fixed. See docs/fuzzing.md.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// How long one input may take. A Lua policy may run for 1 s and its hook
/// for another; everything else takes microseconds.
const PER_INPUT: Duration = Duration::from_secs(10);

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    files
}

/// Runs `entry` on `data` on its own thread: `Err` with what went wrong if
/// it panicked or did not return in time.
fn replay(entry: fn(&[u8]), data: Vec<u8>) -> Result<(), String> {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(|| entry(&data));
        let _ = done.send(outcome.is_ok());
    });
    match finished.recv_timeout(PER_INPUT) {
        Ok(true) => Ok(()),
        Ok(false) | Err(mpsc::RecvTimeoutError::Disconnected) => Err("panicked".into()),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("still running after {PER_INPUT:?}")),
    }
}

#[test]
fn every_corpus_input_comes_back() {
    let mut failures = Vec::new();
    for (target, entry) in aarchx::fuzz::TARGETS {
        let files = corpus(target);
        assert!(files.len() >= 3, "fuzz/corpus/{target}: fewer than 3 inputs");
        for file in files {
            let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            if let Err(why) = replay(*entry, data) {
                failures.push(format!("{target}: {}: {why}", file.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{} corpus inputs failed:\n{}", failures.len(), failures.join("\n"));
}
