//! The guest root: the directory holding the guest's x86-64 files (its
//! dynamic loader and libraries). A dynamic executable's PT_INTERP is looked
//! up inside it; an absolute path the guest names resolves inside it first,
//! then on the host (nothing is redirected when the root is `/`).
//!
//! Containment: a guest path is resolved within the root as the kernel's
//! `openat2(RESOLVE_IN_ROOT)` would: `..` at the root stays at the root, an
//! absolute symbolic link target starts again at the root, a relative one
//! at the link's directory, and more than [`MAX_LINKS`] links is `ELOOP`.
//! So no path of the root leads outside it through `..` or a link (Debian's
//! cross roots hold absolute links). When the path does not resolve to a
//! file in the root (`ENOENT`/`ENOTDIR`, a dangling link included), the
//! guest's path is used on the host as it is: the host file of that name is
//! what the guest asked for.
//!
//! The resolver walks the path in user space, one `lstat` (and `readlink`
//! for a link) per component, and hands the host call a path holding no
//! symbolic link but, where the call does not follow one, the last. The
//! kernel's own `openat2` would only serve open (stat, access, readlink,
//! execve and the loader's PT_INTERP read need a path, not a descriptor),
//! and qemu-aarch64 7.2, under which the arm64 build is tested, answers it
//! with `ENOSYS`. What this does not defend against is the root being
//! changed while the guest runs (a directory swapped for a link between
//! the walk and the call): the root is the user's, not an adversary's.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Where an x86-64 development host keeps the x86-64 dynamic loader.
pub const X86_64_LOADER: &str = "/lib64/ld-linux-x86-64.so.2";
/// Debian's `libc6-amd64-cross` root, the default on other hosts.
pub const CROSS_ROOT: &str = "/usr/x86_64-linux-gnu";
/// The symbolic links one lookup follows before `ELOOP`: the kernel's
/// MAXSYMLINKS.
pub const MAX_LINKS: usize = 40;

const EM_X86_64: u16 = 62;

/// Whether a lookup follows its last component when that is a symbolic
/// link: open without `O_NOFOLLOW`, stat, access, execve do; lstat,
/// readlink, `AT_SYMLINK_NOFOLLOW`, `O_NOFOLLOW`, `O_CREAT|O_EXCL` and the
/// calls that make or remove a name (unlink, rename, mkdir, ...) do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LastLink {
    Follow,
    Keep,
}

/// Why a requested guest root cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RootfsError {
    #[error("rootfs {}: not a directory (see --rootfs)", .0.display())]
    NotADirectory(PathBuf),
    #[error("rootfs {}: {source} (see --rootfs)", path.display())]
    Unusable { path: PathBuf, source: io::Error },
}

/// The guest root directory (absolute).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rootfs {
    dir: PathBuf,
}

impl Rootfs {
    /// The root at `dir`, which must be a directory.
    pub fn new(dir: &Path) -> Result<Rootfs, RootfsError> {
        let unusable = |source| RootfsError::Unusable { path: dir.to_path_buf(), source };
        if !std::fs::metadata(dir).map_err(unusable)?.is_dir() {
            return Err(RootfsError::NotADirectory(dir.to_path_buf()));
        }
        Ok(Rootfs { dir: std::fs::canonicalize(dir).map_err(unusable)? })
    }

    /// The default root: `/` when it holds an x86-64 loader (an x86-64
    /// host), else [`CROSS_ROOT`] (whether or not it exists: a missing
    /// loader is reported when a dynamic program needs it).
    pub fn host_default() -> Rootfs {
        let dir = if is_x86_64_elf(Path::new(X86_64_LOADER)) { "/" } else { CROSS_ROOT };
        Rootfs { dir: PathBuf::from(dir) }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the root is the host's own `/` (no path is redirected).
    pub fn is_host(&self) -> bool {
        self.dir == Path::new("/")
    }

    /// Guest path `guest` written below the root, unresolved: what error
    /// messages name as the place looked at. Never open it (a link on the
    /// way may lead outside the root); [`Rootfs::resolve`] is the lookup.
    pub fn named(&self, guest: &Path) -> PathBuf {
        match guest.strip_prefix("/") {
            Ok(rest) => self.dir.join(rest),
            Err(_) => guest.to_path_buf(),
        }
    }

    /// The host path of the file guest path `guest` names in the root,
    /// resolved within the root (see the module comment; a relative path
    /// is taken from the root too). It holds no symbolic link, but for
    /// the last component when `last` keeps it. With the host's `/` as the
    /// root it is `guest` unchanged: the kernel resolves the same.
    pub fn resolve(&self, guest: &[u8], last: LastLink) -> io::Result<PathBuf> {
        if self.is_host() {
            return Ok(PathBuf::from(OsStr::from_bytes(guest)));
        }
        // A trailing slash makes the last component a directory to enter.
        let mut trailing_slash = guest.ends_with(b"/");
        let last = if trailing_slash { LastLink::Follow } else { last };
        let mut todo = components(guest);
        let mut at = self.dir.clone();
        let mut depth = 0;
        let mut links = 0;
        while let Some(name) = todo.pop() {
            match name.as_slice() {
                b"." => continue,
                b".." => {
                    if depth > 0 {
                        at.pop();
                        depth -= 1;
                    }
                    continue;
                }
                _ => {}
            }
            let next = at.join(OsStr::from_bytes(&name));
            let is_link = std::fs::symlink_metadata(&next)?.file_type().is_symlink();
            if !is_link || (todo.is_empty() && last == LastLink::Keep) {
                at = next;
                depth += 1;
                continue;
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
            let target = std::fs::read_link(&next)?.into_os_string().into_vec();
            if target.is_empty() {
                return Err(io::Error::from_raw_os_error(libc::ENOENT));
            }
            if target.starts_with(b"/") {
                at = self.dir.clone();
                depth = 0;
            }
            trailing_slash |= todo.is_empty() && target.ends_with(b"/");
            todo.extend(components(&target));
        }
        if trailing_slash {
            let mut with_slash = at.into_os_string();
            with_slash.push("/");
            at = PathBuf::from(with_slash);
        }
        Ok(at)
    }

    /// The host path a guest system call should use for `guest`: the file
    /// it names in the root when `guest` is absolute and resolves there,
    /// `None` when it is relative or not in the root (the path as the guest
    /// gave it, on the host), or the error that stopped the walk in the
    /// root when the name is there but cannot be reached (`ELOOP`,
    /// `EACCES`, ...).
    pub fn redirect(&self, guest: &[u8], last: LastLink) -> io::Result<Option<CString>> {
        if self.is_host() || !guest.starts_with(b"/") {
            return Ok(None);
        }
        match self.resolve(guest, last) {
            Ok(inside) => Ok(CString::new(inside.into_os_string().into_vec()).ok()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The names in `path`, last first (a stack to pop), without empty ones.
fn components(path: &[u8]) -> Vec<Vec<u8>> {
    path.split(|b| *b == b'/').filter(|c| !c.is_empty()).rev().map(<[u8]>::to_vec).collect()
}

/// Whether `path` is an x86-64 ELF file.
fn is_x86_64_elf(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 20];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut header));
    read.is_ok() && header.starts_with(b"\x7fELF") && u16::from_le_bytes([header[18], header[19]]) == EM_X86_64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("aarchx-rootfs-{}-{name}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn bytes(path: &Path) -> &[u8] {
        path.as_os_str().as_bytes()
    }

    /// A root shaped like Debian's: `lib` a relative link to `usr/lib`,
    /// absolute links to files and directories, links that climb with
    /// `..` past the root, a dangling link and a loop. Returns the root's
    /// canonical directory and the root.
    fn debian_like_root(name: &str) -> (PathBuf, Rootfs) {
        let dir = temp_dir(name).canonicalize().unwrap();
        for d in ["etc", "usr/lib/x86_64-linux-gnu", "usr/bin"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        std::fs::write(dir.join("etc/passwd"), b"the root's passwd\n").unwrap();
        std::fs::write(dir.join("usr/lib/x86_64-linux-gnu/libc.so.6"), b"the root's libc").unwrap();
        symlink("usr/lib", dir.join("lib")).unwrap();
        symlink("/usr/lib/x86_64-linux-gnu", dir.join("usr/lib64")).unwrap();
        symlink("/etc/passwd", dir.join("usr/bin/passwd-abs")).unwrap();
        symlink("../../../../../../../etc", dir.join("usr/bin/etc-up")).unwrap();
        symlink("/nowhere/aarchx-missing", dir.join("dangling")).unwrap();
        symlink("loop-b", dir.join("loop-a")).unwrap();
        symlink("loop-a", dir.join("loop-b")).unwrap();
        let root = Rootfs::new(&dir).unwrap();
        (dir, root)
    }

    #[test]
    fn dot_dot_stays_at_the_root() {
        let (dir, root) = debian_like_root("dotdot");
        let passwd = dir.join("etc/passwd");
        for guest in [&b"/../../etc/passwd"[..], b"/etc/../../../etc/./passwd", b"/usr/bin/../../../etc/passwd"] {
            let at = root.resolve(guest, LastLink::Follow).unwrap();
            assert_eq!(at, passwd, "{}", String::from_utf8_lossy(guest));
        }
        let inside = root.redirect(b"/../etc/passwd", LastLink::Follow).unwrap().unwrap();
        assert_eq!(std::fs::read(OsStr::from_bytes(inside.as_bytes())).unwrap(), b"the root's passwd\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn absolute_links_start_again_at_the_root() {
        let (dir, root) = debian_like_root("absolute");
        let at = root.resolve(b"/usr/bin/passwd-abs", LastLink::Follow).unwrap();
        assert_eq!(at, dir.join("etc/passwd"));
        assert_eq!(std::fs::read(&at).unwrap(), b"the root's passwd\n", "not the host's /etc/passwd");
        let at = root.resolve(b"/usr/lib64/libc.so.6", LastLink::Follow).unwrap();
        assert_eq!(at, dir.join("usr/lib/x86_64-linux-gnu/libc.so.6"), "an absolute link to a directory mid-path");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn relative_links_resolve_from_their_directory() {
        let (dir, root) = debian_like_root("relative");
        let libc = dir.join("usr/lib/x86_64-linux-gnu/libc.so.6");
        assert_eq!(root.resolve(b"/lib/x86_64-linux-gnu/libc.so.6", LastLink::Follow).unwrap(), libc);
        assert_eq!(root.resolve(b"/lib/../lib/x86_64-linux-gnu/libc.so.6", LastLink::Follow).unwrap(), libc);
        let climbing = root.resolve(b"/usr/bin/etc-up/passwd", LastLink::Follow).unwrap();
        assert_eq!(climbing, dir.join("etc/passwd"), "a relative link's `..` stops at the root");
        assert_eq!(
            root.resolve(b"/lib/", LastLink::Keep).unwrap(),
            PathBuf::from(format!("{}/", dir.join("usr/lib").display()))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_kept_last_link_is_the_link_itself() {
        let (dir, root) = debian_like_root("keep");
        // `lib` is `usr/lib`, so `lib/..` is `usr`, for the kernel too.
        assert!(std::fs::symlink_metadata(dir.join("lib/../bin/passwd-abs")).is_ok_and(|m| m.is_symlink()));
        let link = root.resolve(b"/lib/../bin/passwd-abs", LastLink::Keep).unwrap();
        assert_eq!(link, dir.join("usr/bin/passwd-abs"));
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/etc/passwd"), "readlink sees the link's text");
        let via_link = root.resolve(b"/lib/x86_64-linux-gnu", LastLink::Keep).unwrap();
        assert_eq!(via_link, dir.join("usr/lib/x86_64-linux-gnu"), "links before the last are followed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn loops_end_in_eloop_after_as_many_links_as_the_kernel_follows() {
        let (dir, root) = debian_like_root("loop");
        let err = root.resolve(b"/loop-a", LastLink::Follow).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
        assert_eq!(root.resolve(b"/loop-a", LastLink::Keep).unwrap(), dir.join("loop-a"));
        assert_eq!(root.redirect(b"/loop-a/x", LastLink::Keep).unwrap_err().raw_os_error(), Some(libc::ELOOP));
        // chain/0 -> chain/1 -> ... -> chain/41 -> the root's passwd, so
        // opening chain/n follows 42 - n links.
        std::fs::create_dir(dir.join("chain")).unwrap();
        for n in 0..=40 {
            symlink(format!("{}", n + 1), dir.join(format!("chain/{n}"))).unwrap();
        }
        symlink("../etc/passwd", dir.join("chain/41")).unwrap();
        for n in [0, 1, 2, 3] {
            let kernel = std::fs::read(dir.join(format!("chain/{n}"))).map_err(|e| e.raw_os_error());
            let ours = root.resolve(format!("/chain/{n}").as_bytes(), LastLink::Follow).map_err(|e| e.raw_os_error());
            assert_eq!(ours.is_ok(), kernel.is_ok(), "chain/{n}: kernel {kernel:?}, resolver {ours:?}");
            if let Err(errno) = kernel {
                assert_eq!(ours.unwrap_err(), errno, "chain/{n}");
            }
        }
        assert!(std::fs::read(dir.join("chain/2")).is_ok() && std::fs::read(dir.join("chain/1")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_does_not_resolve_in_the_root_is_the_hosts() {
        let (dir, root) = debian_like_root("fallback");
        assert_eq!(root.redirect(b"/dangling", LastLink::Follow).unwrap(), None, "a dangling link: the host's path");
        let kept = root.redirect(b"/dangling", LastLink::Keep).unwrap().unwrap();
        assert_eq!(kept.as_bytes(), bytes(&dir.join("dangling")), "lstat sees the link");
        assert_eq!(root.redirect(b"/lib/libbar.so", LastLink::Follow).unwrap(), None, "missing in the root");
        assert_eq!(root.redirect(b"/etc/passwd/x", LastLink::Follow).unwrap(), None, "ENOTDIR in the root");
        assert_eq!(root.redirect(b"lib/libc.so.6", LastLink::Follow).unwrap(), None, "relative: the guest's own");
        let inside = root.redirect(b"/lib/x86_64-linux-gnu/libc.so.6", LastLink::Follow).unwrap().unwrap();
        assert_eq!(inside.as_bytes(), bytes(&dir.join("usr/lib/x86_64-linux-gnu/libc.so.6")));
        assert_eq!(root.named(Path::new("/lib64/ld.so")), dir.join("lib64/ld.so"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_host_root_redirects_nothing() {
        let root = Rootfs::new(Path::new("/")).unwrap();
        assert!(root.is_host());
        assert_eq!(root.redirect(b"/etc", LastLink::Follow).unwrap(), None);
        assert_eq!(root.resolve(b"/lib/../etc", LastLink::Follow).unwrap(), Path::new("/lib/../etc"), "unchanged");
        assert_eq!(root.named(Path::new("/etc")), Path::new("/etc"));
    }

    #[test]
    fn a_root_must_be_a_directory() {
        let dir = temp_dir("file");
        let file = dir.join("plain");
        std::fs::write(&file, b"x").unwrap();
        let err = Rootfs::new(&file).unwrap_err();
        assert!(matches!(err, RootfsError::NotADirectory(_)), "{err}");
        assert!(err.to_string().contains("--rootfs"), "{err}");
        assert!(matches!(Rootfs::new(&dir.join("missing")), Err(RootfsError::Unusable { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
