//! The persistent translation cache: the IR of regions translated from
//! mapped files (the program, the dynamic loader, every shared library),
//! kept on disk and taken by the next process that maps the same file, so
//! that a program started again skips decoding and the passes for the
//! code it ran before. docs/cache.md tells the whole story.
//!
//! - **Key.** One file per (policy fingerprint, object content hash,
//!   object layout): `DIR/<fingerprint>/<content>-<layout>.tc`; in it,
//!   entries by (file offset of the region's entry, shape, memory model).
//!   The fingerprint ([`fingerprint`]) names this build and the pipeline.
//! - **Position independence.** Entries hold their guest addresses
//!   relative to the anchor of the mapping they came from
//!   (`crate::objects`), moved there and back by `Region::relocate`.
//! - **What is kept.** A region of the policy's own translation
//!   (`Variant::Policy`) whose every read of guest code lay in one clean
//!   mapping of one object, holding no `count` (instrumentation is per
//!   run), under a policy without a region hook (whose answers depend on
//!   the run).
//! - **Concurrency.** Readers read a whole file, which is only ever
//!   replaced by a rename; a writer merges its new entries into the file
//!   as it is now, under an exclusive lock of a `.lock` file beside it, and
//!   renames the result into place. Processes never see half a file and
//!   never lose each other's entries.
//! - **Damage.** A file that fails its checks ([`format::parse`], then the
//!   IR verifier on each region taken) is ignored with one warning line and
//!   replaced by the next write.
//! - **Size.** After a write, files are removed least recently used first
//!   (a file's modification time is set when a run takes entries from it)
//!   until the folder is under `max_mib`.

pub mod fingerprint;
pub mod format;

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use aarchx_ir::{Format, Region};
use aarchx_pass::MemoryModel;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::objects::{Identity, ObjectId, Objects};
use crate::policy::{CacheMode, CacheSettings};
use crate::translate::Shape;
use format::{FormatError, Header, Key};

/// Cache files end in this.
const EXT: &str = "tc";
/// The folder (in the cache's) of the content hashes remembered per file
/// identity (`Objects::content_hash`).
pub const MEMO: &str = "content";

/// The persistent cache as one run uses it.
pub struct DiskCache {
    mode: CacheMode,
    /// The cache folder and this policy's folder in it.
    root: PathBuf,
    dir: PathBuf,
    fingerprint: [u8; 32],
    max_bytes: u64,
    /// Per object: its file's table, or `None` when it cannot be cached
    /// (its content could not be hashed).
    tables: FxHashMap<ObjectId, Option<Table>>,
    warned_write: bool,
    pub stats: Stats,
}

/// What a run did with the cache (the stats line's `cache_*` fields).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Regions taken from the cache, and the guest instructions they hold.
    pub hits: u64,
    pub hit_insns: u64,
    /// Regions added to it.
    pub stored: u64,
    /// Regions taken and translated again under `Verify`, and those that
    /// differed.
    pub verified: u64,
    pub mismatches: u64,
    /// Time spent taking regions (reading files, decoding, verifying,
    /// relocating), keeping them (encoding) and writing the files.
    pub load: Duration,
    pub store: Duration,
    pub write: Duration,
}

/// One object's cache file, as this run has it.
struct Table {
    file: PathBuf,
    /// The object's file and its identity when it was mapped: a file
    /// changed since (written in place during the run) is not written for.
    source: (PathBuf, Identity),
    /// Entries of the file found damaged, or (`Verify`) different from
    /// their translation now: replaced by this run's, never copied on.
    bad: FxHashSet<Key>,
    header: Header,
    /// Its records' generation the layout was computed at.
    generation: u64,
    /// The file as read, and where each entry is in it.
    bytes: Vec<u8>,
    index: FxHashMap<Key, std::ops::Range<usize>>,
    /// Entries this run added, encoded, and their keys.
    added: Vec<u8>,
    added_keys: FxHashSet<Key>,
    added_count: u32,
}

/// What a region's translation read: each read's address, the bytes it
/// asked for and those it got (a read that came short depended on what
/// lies past the code: such a region is not kept).
pub type ReadSet<'a> = &'a [(u64, usize, usize)];

impl DiskCache {
    /// The cache `settings` ask for, for a pipeline with `fingerprint`
    /// (`None`: the policy cannot be cached); `None` when it is off.
    pub fn new(settings: &CacheSettings, fingerprint: Option<[u8; 32]>) -> Option<DiskCache> {
        if settings.mode == CacheMode::Off {
            return None;
        }
        let Some(fingerprint) = fingerprint else {
            tracing::debug!("persistent cache: this policy cannot be cached (see docs/cache.md)");
            return None;
        };
        // Absolute now: the guest may change its directory.
        let root = settings.dir.as_ref().map(PathBuf::from).or_else(default_dir)?;
        let root = std::path::absolute(&root).unwrap_or(root);
        let dir = root.join(hex(&fingerprint[..8]));
        Some(DiskCache {
            mode: settings.mode,
            root,
            dir,
            fingerprint,
            max_bytes: settings.max_mib.saturating_mul(1 << 20),
            tables: FxHashMap::default(),
            warned_write: false,
            stats: Stats::default(),
        })
    }

    /// Whether regions taken from the cache are translated again and
    /// compared.
    pub fn verifies(&self) -> bool {
        self.mode == CacheMode::Verify
    }

    /// The cached translation of the code at `rip`, relocated to where its
    /// object is now.
    pub fn load(&mut self, objects: &mut Objects, rip: u64, shape: Shape, model: MemoryModel) -> Option<Region> {
        let started = Instant::now();
        let region = self.take(objects, rip, shape, model);
        self.stats.load += started.elapsed();
        region
    }

    fn take(&mut self, objects: &mut Objects, rip: u64, shape: Shape, model: MemoryModel) -> Option<Region> {
        let origin = objects.origin(rip)?;
        let table = self.table(objects, origin.object)?;
        let key = Key::new(rip.wrapping_sub(origin.anchor), shape, model);
        let range = table.index.get(&key)?.clone();
        let counts = |r: &Region| r.insts.iter().any(|d| d.op.format() == Format::Count);
        let decoded = format::decode_entry(&table.bytes[range], false).and_then(|r| {
            if counts(&r) {
                Err(FormatError::Invalid("instrumentation in a region".into()))
            } else {
                Ok(r)
            }
        });
        let mut region = match decoded {
            Ok(region) => region,
            Err(e) => {
                table.index.remove(&key);
                table.bad.insert(key);
                warn_damaged(&table.file, &e);
                return None;
            }
        };
        region.relocate(origin.anchor);
        let inside = region.guest_ranges().iter().all(|&(s, e)| s >= origin.range.0 && e <= origin.range.1);
        if region.entry != rip || !inside {
            return None;
        }
        self.stats.hits += 1;
        self.stats.hit_insns += region.guest_insns().count() as u64;
        Some(region)
    }

    /// Under `Verify`: compares the region taken from the cache for the
    /// code at `rip` with the code's translation now (`fresh`, made with
    /// `reads`), reporting a difference with both listings; the fresh
    /// translation then replaces the entry.
    #[allow(clippy::too_many_arguments, reason = "store's arguments and the region compared")]
    pub fn compare(
        &mut self,
        objects: &mut Objects,
        rip: u64,
        shape: Shape,
        model: MemoryModel,
        loaded: &Region,
        fresh: &Region,
        reads: ReadSet<'_>,
    ) {
        self.stats.verified += 1;
        if loaded != fresh {
            self.stats.mismatches += 1;
            if let Some(origin) = objects.origin(rip) {
                let key = Key::new(rip.wrapping_sub(origin.anchor), shape, model);
                if let Some(table) = self.tables.get_mut(&origin.object).and_then(Option::as_mut) {
                    table.index.remove(&key);
                    table.bad.insert(key);
                }
            }
            self.store(objects, rip, shape, model, fresh, reads);
            warn(format_args!(
                "aarchx: persistent cache: the region at {:#x} differs from its translation now\n--- from the cache ---\n{}--- translated now ---\n{}",
                fresh.entry,
                aarchx_ir::print::print(loaded),
                aarchx_ir::print::print(fresh)
            ));
        }
    }

    /// Adds `region`, translated from the code at `rip` with the reads
    /// `reads`, if it can be kept (see the module comment).
    pub fn store(
        &mut self,
        objects: &mut Objects,
        rip: u64,
        shape: Shape,
        model: MemoryModel,
        region: &Region,
        reads: ReadSet<'_>,
    ) {
        let started = Instant::now();
        self.keep(objects, rip, shape, model, region, reads);
        self.stats.store += started.elapsed();
    }

    fn keep(
        &mut self,
        objects: &mut Objects,
        rip: u64,
        shape: Shape,
        model: MemoryModel,
        region: &Region,
        reads: ReadSet<'_>,
    ) {
        if self.mode == CacheMode::Read {
            return;
        }
        let Some(origin) = objects.origin(rip) else { return };
        let (lo, hi) = origin.range;
        let inside = reads
            .iter()
            .all(|&(a, asked, got)| got == asked && a >= lo && a.checked_add(asked as u64).is_some_and(|e| e <= hi));
        let counts = region.blocks.iter().flat_map(|b| &b.insts).any(|v| region.inst(*v).op.format() == Format::Count);
        if !inside || counts {
            return;
        }
        let Some(table) = self.table(objects, origin.object) else { return };
        let key = Key::new(rip.wrapping_sub(origin.anchor), shape, model);
        if table.index.contains_key(&key) || !table.added_keys.insert(key) {
            return;
        }
        let mut relative = region.clone();
        relative.relocate(origin.anchor.wrapping_neg());
        format::encode_entry(&mut table.added, key, &relative);
        table.added_count += 1;
        self.stats.stored += 1;
    }

    /// The table of `object`'s file, read on first use (and again when the
    /// object's layout changed).
    fn table(&mut self, objects: &mut Objects, object: ObjectId) -> Option<&mut Table> {
        let generation = objects.generation();
        let stale = match self.tables.get(&object) {
            None => true,
            Some(None) => false,
            Some(Some(t)) => t.generation != generation && t.header.layout != objects.layout(object),
        };
        if stale {
            let memo = self.root.join(MEMO);
            let table = objects.content_hash(object, Some(&memo)).map(|hash| {
                let header = Header { fingerprint: self.fingerprint, object: hash, layout: objects.layout(object) };
                let file = self.dir.join(format!("{}-{:016x}.{EXT}", hex(&hash[..16]), header.layout));
                let (path, identity) = objects.file(object);
                self.read_table(file, (path.to_path_buf(), identity), header, generation)
            });
            if let Some(Some(old)) = self.tables.insert(object, table) {
                self.write(&old);
            }
        }
        let table = self.tables.get_mut(&object)?.as_mut()?;
        table.generation = generation;
        Some(table)
    }

    /// Reads the cache file `file` for `header` (an empty table when there
    /// is none or it is damaged).
    fn read_table(&self, file: PathBuf, source: (PathBuf, Identity), header: Header, generation: u64) -> Table {
        let mut table = Table {
            file,
            source,
            bad: FxHashSet::default(),
            header,
            generation,
            bytes: Vec::new(),
            index: FxHashMap::default(),
            added: Vec::new(),
            added_keys: FxHashSet::default(),
            added_count: 0,
        };
        let Ok(bytes) = fs::read(&table.file) else { return table };
        match checked_entries(&bytes, &header) {
            Ok(entries) => {
                table.index = entries.into_iter().collect();
                table.bytes = bytes;
                if self.mode != CacheMode::Read {
                    // Least recently used goes first: this one was used now.
                    File::options().append(true).open(&table.file).and_then(|f| f.set_modified(SystemTime::now())).ok();
                }
            }
            Err(e) => warn_damaged(&table.file, &e),
        }
        table
    }

    /// Writes every table's new entries (at the end of the run, before an
    /// exec), then keeps the folder under its size.
    pub fn flush(&mut self) {
        let started = Instant::now();
        self.write_all();
        self.stats.write += started.elapsed();
    }

    fn write_all(&mut self) {
        // A file written in place during the run: what was translated
        // from it may not be its content now.
        let unchanged = |t: &Table| std::fs::metadata(&t.source.0).is_ok_and(|m| Identity::of(&m) == t.source.1);
        let tables: Vec<&Table> =
            self.tables.values().flatten().filter(|t| t.added_count > 0 && unchanged(t)).collect();
        if tables.is_empty() {
            return;
        }
        let mut failed = None;
        for t in &tables {
            if let Err(e) = write_table(&self.dir, t) {
                failed = Some(e);
            }
        }
        for t in self.tables.values_mut().flatten() {
            t.added.clear();
            t.added_keys.clear();
            t.added_count = 0;
        }
        match failed {
            Some(e) => self.warn_write(&e),
            None => evict(&self.root, self.max_bytes),
        }
    }

    /// Writes one table's new entries (a table being replaced).
    fn write(&mut self, table: &Table) {
        let unchanged = std::fs::metadata(&table.source.0).is_ok_and(|m| Identity::of(&m) == table.source.1);
        if table.added_count > 0 && unchanged {
            if let Err(e) = write_table(&self.dir, table) {
                self.warn_write(&e);
            }
        }
    }

    fn warn_write(&mut self, e: &std::io::Error) {
        if !std::mem::replace(&mut self.warned_write, true) {
            warn(format_args!(
                "aarchx: warning: persistent cache: cannot write in {}: {e}; this run's translations are not kept",
                self.dir.display()
            ));
        }
    }
}

/// The entries of a cache file's `bytes`, checked against the `header`
/// wanted.
fn checked_entries(bytes: &[u8], header: &Header) -> Result<Vec<(Key, std::ops::Range<usize>)>, FormatError> {
    let parsed = format::parse(bytes)?;
    if parsed.header != *header {
        return Err(FormatError::Header);
    }
    Ok(parsed.entries)
}

/// Merges `table`'s new entries into its file as the file is now, under
/// the file's lock, and renames the result into place.
fn write_table(dir: &Path, table: &Table) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let lock = File::create(table.file.with_extension("lock"))?;
    lock.lock()?;
    let now = fs::read(&table.file).ok();
    let mut body = Vec::new();
    let mut keys = FxHashSet::default();
    let mut count = 0u32;
    if let Some(bytes) = &now {
        if let Ok(entries) = checked_entries(bytes, &table.header) {
            for (key, range) in entries.into_iter().filter(|(k, _)| !table.bad.contains(k)) {
                keys.insert(key);
                body.extend_from_slice(&bytes[range]);
                count += 1;
            }
        }
    }
    let mut at = 0;
    while let Some((key, len)) = format::entry_at(&table.added[at..]) {
        if keys.insert(key) {
            body.extend_from_slice(&table.added[at..at + len]);
            count += 1;
        }
        at += len;
    }
    let tmp = table.file.with_extension(format!("tmp{}", std::process::id()));
    let written = File::create(&tmp)
        .and_then(|mut f| f.write_all(&format::encode_file(&table.header, count, &body)))
        .and_then(|()| fs::rename(&tmp, &table.file));
    if written.is_err() {
        fs::remove_file(&tmp).ok();
    }
    written
}

/// Removes cache files, least recently used first, until those under
/// `root` take at most `max_bytes`.
fn evict(root: &Path, max_bytes: u64) {
    let mut files = cache_files(root);
    let mut total: u64 = files.iter().map(|f| f.size).sum();
    if total <= max_bytes {
        return;
    }
    files.sort_by_key(|f| f.used);
    for f in files {
        if total <= max_bytes {
            break;
        }
        if fs::remove_file(&f.path).is_ok() {
            tracing::debug!(file = %f.path.display(), "persistent cache: evicted");
            total -= f.size;
        }
    }
}

/// A cache file and what `aarchx cache stats` tells of it.
pub struct CacheFile {
    pub path: PathBuf,
    pub size: u64,
    pub used: SystemTime,
}

/// The cache files under `root` (every policy's folder).
pub fn cache_files(root: &Path) -> Vec<CacheFile> {
    let mut out = Vec::new();
    let Ok(dirs) = fs::read_dir(root) else { return out };
    for dir in dirs.flatten().filter(|d| d.file_type().is_ok_and(|t| t.is_dir())) {
        let Ok(files) = fs::read_dir(dir.path()) else { continue };
        for f in files.flatten() {
            let path = f.path();
            if path.extension().is_some_and(|e| e == EXT) {
                if let Ok(meta) = f.metadata() {
                    out.push(CacheFile {
                        size: meta.len(),
                        used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                        path,
                    });
                }
            }
        }
    }
    out
}

/// Checks one cache file whole (`aarchx cache verify`): its format, and
/// every entry's IR. Returns the number of entries.
pub fn verify_file(path: &Path) -> Result<usize, String> {
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    let parsed = format::parse(&bytes).map_err(|e| e.to_string())?;
    for (i, (_, range)) in parsed.entries.iter().enumerate() {
        format::decode_entry(&bytes[range.clone()], true).map_err(|e| format!("entry {i}: {e}"))?;
    }
    Ok(parsed.entries.len())
}

/// `$XDG_CACHE_HOME/aarchx`, else `$HOME/.cache/aarchx`.
pub fn default_dir() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache"))).map(|d| d.join("aarchx"))
}

/// One message on stderr; a stderr the guest closed or whose reader went
/// away (EPIPE) loses it rather than failing the run.
fn warn(message: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

fn warn_damaged(file: &Path, e: &FormatError) {
    warn(format_args!("aarchx: warning: persistent cache: {} is damaged ({e}): ignored", file.display()));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
