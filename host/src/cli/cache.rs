//! `aarchx cache stats | clear | verify`: the persistent translation
//! cache's folder as a user inspects it (docs/cache.md).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::disk_cache::{self, CacheFile};
use crate::policy::Policy;

/// The cache folder `policy` uses.
pub fn folder(policy: &Policy) -> Option<PathBuf> {
    policy.cache.dir.as_ref().map(PathBuf::from).or_else(disk_cache::default_dir)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// The folder's size, per policy fingerprint and in all.
pub fn stats(root: &Path, max_mib: u64) -> String {
    let files = disk_cache::cache_files(root);
    let mut by_policy: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    for f in &files {
        let policy = f.path.parent().and_then(Path::file_name).map_or_else(String::new, |n| n.to_string_lossy().into());
        let e = by_policy.entry(policy).or_default();
        e.0 += 1;
        e.1 += f.size;
    }
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut out = format!("{}: {} files, {} (kept under {max_mib} MiB)\n", root.display(), files.len(), mib(total));
    for (policy, (n, size)) in by_policy {
        writeln!(out, "  policy {policy}: {n} objects, {}", mib(size)).ok();
    }
    out
}

/// Removes every cache file (and its lock) and the emptied folders;
/// returns what was removed.
pub fn clear(root: &Path) -> std::io::Result<(usize, u64)> {
    let files: Vec<CacheFile> = disk_cache::cache_files(root);
    let (mut n, mut bytes) = (0, 0);
    for f in &files {
        std::fs::remove_file(&f.path)?;
        std::fs::remove_file(f.path.with_extension("lock")).ok();
        n += 1;
        bytes += f.size;
        if let Some(dir) = f.path.parent() {
            // Only once empty: other files (another's being written) stay.
            std::fs::remove_dir(dir).ok();
        }
    }
    std::fs::remove_dir_all(root.join(disk_cache::MEMO)).ok();
    Ok((n, bytes))
}

/// Checks every cache file whole; the report and whether all are intact.
pub fn verify(root: &Path) -> (String, bool) {
    let files = disk_cache::cache_files(root);
    let (mut out, mut entries, mut damaged) = (String::new(), 0, 0);
    for f in &files {
        match disk_cache::verify_file(&f.path) {
            Ok(n) => entries += n,
            Err(e) => {
                damaged += 1;
                writeln!(out, "{}: damaged: {e}", f.path.display()).ok();
            }
        }
    }
    writeln!(
        out,
        "{}: {} files, {entries} regions checked, {}",
        root.display(),
        files.len(),
        if damaged == 0 { "all intact".to_string() } else { format!("{damaged} damaged") }
    )
    .ok();
    (out, damaged == 0)
}
