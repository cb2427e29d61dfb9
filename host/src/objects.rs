//! Mapped objects: which guest memory holds, unchanged, the bytes of which
//! file. The persistent translation cache (`crate::disk_cache`) keeps a
//! region only when every byte its translation read lies in one object's
//! clean mapping, and finds the object's entries by its content.
//!
//! A *record* is a file-backed range of guest memory: the file's object
//! and the position in it at its start: the file offset for a mapping of
//! the file, the ELF virtual address for an image aarchx's loader built
//! from it (either a function of the file's content). It is *clean* while the memory still
//! holds the file's bytes: mapped without write permission from a file
//! opened read-only, never made writable since. The records of one object
//! give its *layout* (where each mapping lies relative to the others),
//! part of a cache entry's key: code is relocated by one distance, which
//! is right only if the object's mappings moved together.
//!
//! An object's identity in this process is its file's device, inode, size
//! and times (one object for the several mappings of a library); its
//! content hash, computed when the cache first asks, reads the file again
//! by the path it was mapped from and checks that identity first.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use std::sync::{Mutex, OnceLock, PoisonError};

use rustc_hash::{FxHashMap, FxHashSet};
use sha2::{Digest, Sha256};

use crate::symbols::ObjectSymbols;

/// An object: an index into [`Objects`]' table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectId(u32);

/// What identifies a file's content in this process without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// Whether two metadata of a file name the same content (see
/// [`Identity`]): nothing changed it between them.
pub fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    Identity::of(a) == Identity::of(b)
}

/// Where a mapping's first byte is in its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// A mapping of the file: its file offset.
    File(u64),
    /// An image aarchx's loader built from the file: its ELF virtual
    /// address. (One file mapped both ways is two objects: the two kinds
    /// of position do not mix in one cache file.)
    Image(u64),
}

impl Identity {
    pub fn of(m: &std::fs::Metadata) -> Identity {
        Identity {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// One mapped file.
#[derive(Debug)]
struct Object {
    path: PathBuf,
    identity: Identity,
    /// Its content's SHA-256, once asked for; `Some(None)` when the file
    /// could not be read again as it was.
    hash: Option<Option<[u8; 32]>>,
    /// Mapped as an image aarchx's loader built ([`Position::Image`]).
    image: bool,
    /// Its function names, once asked for.
    symbols: OnceLock<ObjectSymbols>,
}

/// A file-backed range; the key in the map is its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Record {
    end: u64,
    object: ObjectId,
    /// The position in the object of the range's start.
    offset: u64,
    clean: bool,
}

/// Where a guest address's code comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub object: ObjectId,
    /// The guest address of the file's offset 0 as this mapping places
    /// it: an address minus the anchor is its file offset.
    pub anchor: u64,
    /// The clean range holding the address (adjacent clean records of the
    /// same object and anchor merged).
    pub range: (u64, u64),
}

/// The file-backed ranges of guest memory and their objects.
#[derive(Debug, Default)]
pub struct Objects {
    records: BTreeMap<u64, Record>,
    objects: Vec<Object>,
    by_identity: FxHashMap<(Identity, bool), ObjectId>,
    generation: u64,
    /// Counts the calls of [`Objects::forget`] that removed a record:
    /// what [`Bound`] found stays right while this is unchanged.
    removals: u64,
    /// IFUNC variants found through other objects' GOT slots.
    bound: Mutex<Bound>,
}

/// How many failed lookups [`Objects::bound_variant`] lets pass between
/// two reads of the slots not yet bound.
const REREAD_EVERY: u32 = 16;

/// What [`Objects::bound_variant`] found, while no record has been
/// removed since (`removals`).
#[derive(Debug, Default)]
struct Bound {
    removals: u64,
    /// Variants by guest address, named by the IFUNC symbol a slot bound.
    by_addr: FxHashMap<u64, String>,
    /// The objects whose imports have been looked at, and how many objects'
    /// symbols had been read then.
    scanned: FxHashSet<ObjectId>,
    parsed: usize,
    /// Lookups since the pending slots were last read.
    since_read: u32,
    /// Slots (guest address) of imports of IFUNC names not bound yet (a
    /// lazily bound PLT slot until its first call).
    pending: Vec<(u64, String)>,
}

impl Objects {
    /// The file `path` (with metadata `meta`) was mapped at `[start, end)`
    /// from file offset `offset`; `clean` when the memory holds the file's
    /// bytes and the mapping cannot write them.
    pub fn mapped(
        &mut self,
        start: u64,
        end: u64,
        path: &Path,
        meta: &std::fs::Metadata,
        position: Position,
        clean: bool,
    ) {
        self.forget(start, end);
        self.generation += 1;
        if !meta.is_file() || start >= end {
            return;
        }
        let identity = Identity::of(meta);
        let (offset, image) = match position {
            Position::File(at) => (at, false),
            Position::Image(at) => (at, true),
        };
        let next = ObjectId(self.objects.len() as u32);
        let object = *self.by_identity.entry((identity, image)).or_insert(next);
        if object == next {
            self.objects.push(Object {
                path: path.to_path_buf(),
                identity,
                hash: None,
                image,
                symbols: OnceLock::new(),
            });
        }
        self.records.insert(start, Record { end, object, offset, clean });
    }

    /// `[start, end)` no longer holds what was mapped there (unmapped,
    /// mapped over, moved).
    pub fn forget(&mut self, start: u64, end: u64) {
        if self.records.is_empty() {
            return;
        }
        self.generation += 1;
        self.split(start);
        self.split(end);
        let inside: Vec<u64> = self.records.range(start..end).map(|(s, _)| *s).collect();
        if !inside.is_empty() {
            self.removals += 1;
        }
        for s in inside {
            self.records.remove(&s);
        }
    }

    /// `[start, end)` became writable: what it holds may no longer be the
    /// file's bytes.
    pub fn dirty(&mut self, start: u64, end: u64) {
        if self.records.is_empty() {
            return;
        }
        self.generation += 1;
        self.split(start);
        self.split(end);
        for (_, r) in self.records.range_mut(start..end) {
            r.clean = false;
        }
    }

    /// Splits the record holding `at` (if any) in two at `at`.
    fn split(&mut self, at: u64) {
        let Some((&s, &r)) = self.records.range(..at).next_back() else { return };
        if r.end > at {
            self.records.insert(s, Record { end: at, ..r });
            self.records.insert(at, Record { offset: r.offset + (at - s), ..r });
        }
    }

    /// Where the code at `addr` comes from, if from a clean mapping.
    pub fn origin(&self, addr: u64) -> Option<Origin> {
        let (&s, r) = self.records.range(..=addr).next_back()?;
        if r.end <= addr || !r.clean {
            return None;
        }
        let anchor = s.wrapping_sub(r.offset);
        let same = |start: u64, q: &Record| q.clean && q.object == r.object && start.wrapping_sub(q.offset) == anchor;
        let (mut lo, mut hi) = (s, r.end);
        for (&qs, q) in self.records.range(..s).rev() {
            if q.end != lo || !same(qs, q) {
                break;
            }
            lo = qs;
        }
        for (&qs, q) in self.records.range(r.end..) {
            if qs != hi || !same(qs, q) {
                break;
            }
            hi = q.end;
        }
        Some(Origin { object: r.object, anchor, range: (lo, hi) })
    }

    /// The name of the function that starts at `addr` in a clean mapping,
    /// from its object's symbols ([`ObjectSymbols::function_at`], reading
    /// guest memory with `read_u64`).
    pub fn function_at(&self, addr: u64, read_u64: impl Fn(u64) -> Option<u64>) -> Option<String> {
        let origin = self.origin(addr)?;
        let o = &self.objects[origin.object.0 as usize];
        let symbols = o.symbols.get_or_init(|| ObjectSymbols::of_file(&o.path, o.identity));
        let base = symbols.base(addr, addr.wrapping_sub(origin.anchor), o.image)?;
        if let Some(name) = symbols.function_at(addr, base, &read_u64) {
            return Some(name);
        }
        if !symbols.has_ifuncs() {
            return None;
        }
        self.bound_variant(addr, &read_u64)
    }

    /// The IFUNC symbol whose variant at `addr` some object's GOT slot
    /// holds: each object's imports of IFUNC names (of the objects whose
    /// symbols have been read) are collected once, and a slot is read
    /// until it holds an address whose object has the IFUNC symbol of its
    /// name (bound by the dynamic loader; before, it holds the object's own
    /// PLT entry or nothing).
    fn bound_variant(&self, addr: u64, read_u64: impl Fn(u64) -> Option<u64>) -> Option<String> {
        let mut bound = self.bound.lock().unwrap_or_else(PoisonError::into_inner);
        if bound.removals != self.removals {
            *bound = Bound { removals: self.removals, ..Bound::default() };
        }
        if let Some(name) = bound.by_addr.get(&addr) {
            return Some(name.clone());
        }
        let parsed = |id: ObjectId| self.objects[id.0 as usize].symbols.get();
        let now_parsed = self.objects.iter().filter(|o| o.symbols.get().is_some()).count();
        let mut grew = false;
        if now_parsed != bound.parsed {
            bound.parsed = now_parsed;
            let is_ifunc = |name: &str| self.objects.iter().filter_map(|o| o.symbols.get()).any(|s| s.is_ifunc(name));
            for (&start, r) in &self.records {
                if bound.scanned.contains(&r.object) {
                    continue;
                }
                let Some(symbols) = parsed(r.object) else { continue };
                bound.scanned.insert(r.object);
                let Some(base) = symbols.base(start, r.offset, self.objects[r.object.0 as usize].image) else {
                    continue;
                };
                let imports = symbols.imports.iter().filter(|(_, name)| is_ifunc(name));
                bound.pending.extend(imports.map(|(slot, name)| (base.wrapping_add(*slot), name.clone())));
                grew = true;
            }
        }
        // Slots still unbound are read again every few lookups only (most
        // lookups are of code that is no routine): a routine first called
        // between two reads is found when its region is translated again
        // as a superblock.
        bound.since_read += 1;
        if !grew && bound.since_read < REREAD_EVERY {
            return None;
        }
        bound.since_read = 0;
        let Bound { by_addr, pending, .. } = &mut *bound;
        pending.retain(|(slot, name)| {
            let Some(target) = read_u64(*slot) else { return true };
            let defines = self.origin(target).and_then(|o| parsed(o.object)).is_some_and(|s| s.is_ifunc(name));
            if defines {
                by_addr.insert(target, name.clone());
            }
            !defines
        });
        by_addr.get(&addr).cloned()
    }

    /// The object's layout: where each of its mappings lies (start and
    /// length relative to the lowest one's anchor, file offset; adjacent
    /// records that continue one another counted as one), hashed.
    pub fn layout(&self, object: ObjectId) -> u64 {
        let mut runs: Vec<(u64, u64, u64)> = Vec::new();
        for (&s, r) in self.records.iter().filter(|(_, r)| r.object == object) {
            match runs.last_mut() {
                Some(last) if last.1 == s && last.2 + (s - last.0) == r.offset => last.1 = r.end,
                _ => runs.push((s, r.end, r.offset)),
            }
        }
        let anchor = runs.first().map_or(0, |r| r.0.wrapping_sub(r.2));
        let mut h = Sha256::new();
        for (s, e, offset) in runs {
            h.update(s.wrapping_sub(anchor).to_le_bytes());
            h.update((e - s).to_le_bytes());
            h.update(offset.to_le_bytes());
        }
        u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
    }

    /// Counts changes to the records: a layout computed before is still
    /// right while this is unchanged.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The object's file and the identity it was mapped with.
    pub fn file(&self, object: ObjectId) -> (&Path, Identity) {
        let o = &self.objects[object.0 as usize];
        (&o.path, o.identity)
    }

    /// The SHA-256 of the object's file (once): `None` when it is no
    /// longer the file that was mapped (replaced, changed) or cannot be
    /// read. Hashing a library takes as long as translating a few dozen
    /// regions, so hashes are remembered in `memo` (a folder, one file per
    /// identity: device, inode, size, modification and change times; a
    /// file written in place gets a new change time, which no user can set
    /// back).
    pub fn content_hash(&mut self, object: ObjectId, memo: Option<&Path>) -> Option<[u8; 32]> {
        let o = &mut self.objects[object.0 as usize];
        *o.hash.get_or_insert_with(|| {
            let now = std::fs::metadata(&o.path).ok().map(|m| Identity::of(&m));
            if now != Some(o.identity) {
                tracing::debug!(path = %o.path.display(), "mapped file changed since: not cached");
                return None;
            }
            let memo = memo.map(|dir| dir.join(o.identity.name()));
            if let Some(hash) = memo.as_ref().and_then(|m| std::fs::read(m).ok()).and_then(|b| b.try_into().ok()) {
                return Some(hash);
            }
            let hash = hash_file(&o.path, o.identity)?;
            // A change time this recent may not be the last one (file
            // times tick coarsely): the file could still change within it,
            // keeping its identity. Remembered only once it is older.
            let settled = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .is_ok_and(|now| now.as_secs() as i64 > o.identity.ctime.0 + 2);
            if let Some(memo) = memo.filter(|_| settled) {
                write_atomically(&memo, &hash);
            }
            Some(hash)
        })
    }
}

impl Identity {
    /// A file name for this identity.
    fn name(&self) -> String {
        let mut h = Sha256::new();
        for v in [self.dev, self.ino, self.size] {
            h.update(v.to_le_bytes());
        }
        for (s, ns) in [self.mtime, self.ctime] {
            h.update(s.to_le_bytes());
            h.update(ns.to_le_bytes());
        }
        h.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Writes `bytes` to `path` through a temporary file renamed into place
/// (a reader sees all of it or nothing); failures are ignored (a memo).
fn write_atomically(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        std::fs::remove_file(&tmp).ok();
    }
}

/// The SHA-256 of the file at `path`, if it still has `identity`.
fn hash_file(path: &Path, identity: Identity) -> Option<[u8; 32]> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    if Identity::of(&f.metadata().ok()?) != identity {
        return None;
    }
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    // Changed while it was read: not the bytes that were mapped.
    if Identity::of(&f.metadata().ok()?) != identity {
        return None;
    }
    Some(h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn objects_with(file: &Path) -> (Objects, std::fs::Metadata) {
        (Objects::default(), std::fs::metadata(file).expect("metadata"))
    }

    #[test]
    fn records_split_merge_and_give_the_anchor() {
        let exe = std::env::current_exe().expect("exe");
        let (mut o, meta) = objects_with(&exe);
        // A library as ld.so maps it: text at +0x1000 from offset 0x1000,
        // data further on.
        o.mapped(0x10000, 0x20000, &exe, &meta, Position::File(0), false);
        o.mapped(0x11000, 0x15000, &exe, &meta, Position::File(0x1000), true);
        o.mapped(0x17000, 0x18000, &exe, &meta, Position::File(0x6000), false);
        let at = o.origin(0x12345).expect("text is clean");
        assert_eq!((at.anchor, at.range), (0x10000, (0x11000, 0x15000)));
        assert_eq!(o.origin(0x10000), None, "the first mapping's head is not clean (mapped writable)");
        // Made writable in the middle: both sides stay.
        o.dirty(0x12000, 0x13000);
        assert_eq!(o.origin(0x12800), None);
        assert_eq!(o.origin(0x11800).map(|a| a.range), Some((0x11000, 0x12000)));
        let right = o.origin(0x13800).expect("clean");
        assert_eq!((right.anchor, right.range), (0x10000, (0x13000, 0x15000)));
        o.forget(0x14000, 0x30000);
        assert_eq!(o.origin(0x13800).map(|a| a.range), Some((0x13000, 0x14000)));
        assert_eq!(o.origin(0x14800), None);
    }

    #[test]
    fn the_layout_changes_when_a_mapping_moves_relative_to_the_others() {
        let exe = std::env::current_exe().expect("exe");
        let (mut a, meta) = objects_with(&exe);
        a.mapped(0x11000, 0x15000, &exe, &meta, Position::File(0x1000), true);
        a.mapped(0x17000, 0x18000, &exe, &meta, Position::File(0x6000), false);
        let (mut b, _) = objects_with(&exe);
        b.mapped(0x91000, 0x95000, &exe, &meta, Position::File(0x1000), true);
        b.mapped(0x97000, 0x98000, &exe, &meta, Position::File(0x6000), false);
        let (mut c, _) = objects_with(&exe);
        c.mapped(0x91000, 0x95000, &exe, &meta, Position::File(0x1000), true);
        c.mapped(0x98000, 0x99000, &exe, &meta, Position::File(0x6000), false);
        let id = a.origin(0x11000).expect("clean").object;
        assert_eq!(a.layout(id), b.layout(id), "moved together");
        assert_ne!(a.layout(id), c.layout(id), "data moved apart from text");
        let before = a.layout(id);
        a.dirty(0x12000, 0x13000);
        assert_eq!(a.layout(id), before, "a mapping made writable has not moved");
    }

    #[test]
    fn the_content_hash_is_the_files_and_none_for_a_changed_file() {
        let dir = std::env::temp_dir().join(format!("aarchx-objects-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("lib.so");
        std::fs::write(&file, b"some code").expect("write");
        let (mut o, meta) = objects_with(&file);
        o.mapped(0x1000, 0x2000, &file, &meta, Position::File(0), true);
        let id = o.origin(0x1000).expect("clean").object;
        let want: [u8; 32] = Sha256::digest(b"some code").into();
        assert_eq!(o.content_hash(id, None), Some(want));
        // A file changed this recently is not remembered (its identity
        // may yet name other content); an older one is, and read back.
        let memo = dir.join("memo");
        let (mut again, meta) = objects_with(&file);
        again.mapped(0x1000, 0x2000, &file, &meta, Position::File(0), true);
        assert_eq!(again.content_hash(id, Some(&memo)), Some(want));
        assert_eq!(std::fs::read_dir(&memo).map(|d| d.count()).unwrap_or(0), 0, "too recent to remember");
        let old = Path::new("/bin/sh");
        let (mut system, meta) = objects_with(old);
        system.mapped(0x1000, 0x2000, old, &meta, Position::File(0), true);
        let sh: [u8; 32] = Sha256::digest(std::fs::read(old).expect("/bin/sh")).into();
        assert_eq!(system.content_hash(id, Some(&memo)), Some(sh));
        assert_eq!(std::fs::read_dir(&memo).map(|d| d.count()).unwrap_or(0), 1, "one memo file");
        // Read back: a memo of other bytes is what a second process takes.
        let name = std::fs::read_dir(&memo).expect("memo").next().expect("file").expect("entry").path();
        std::fs::write(&name, [7u8; 32]).expect("memo");
        let (mut second, meta) = objects_with(old);
        second.mapped(0x1000, 0x2000, old, &meta, Position::File(0), true);
        assert_eq!(second.content_hash(id, Some(&memo)), Some([7u8; 32]), "taken from the memo");
        let (mut changed, meta) = objects_with(&file);
        changed.mapped(0x1000, 0x2000, &file, &meta, Position::File(0), true);
        std::fs::write(&file, b"other code!").expect("rewrite");
        let id = changed.origin(0x1000).expect("clean").object;
        assert_eq!(changed.content_hash(id, Some(&memo)), None, "rewritten after it was mapped");
        std::fs::remove_dir_all(&dir).ok();
    }
}
