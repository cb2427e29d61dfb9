//! The guest root: the directory holding the guest's x86-64 files (its
//! dynamic loader and libraries). A dynamic executable's PT_INTERP is looked
//! up inside it; an absolute path the guest opens resolves inside it first,
//! then on the host (nothing is redirected when the root is `/`).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Where an x86-64 development host keeps the x86-64 dynamic loader.
pub const X86_64_LOADER: &str = "/lib64/ld-linux-x86-64.so.2";
/// Debian's `libc6-amd64-cross` root, the default on other hosts.
pub const CROSS_ROOT: &str = "/usr/x86_64-linux-gnu";

const EM_X86_64: u16 = 62;

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

    /// The host path of guest path `guest` inside the root: an absolute
    /// path is taken below the root, a relative one is left as it is.
    pub fn inside(&self, guest: &Path) -> PathBuf {
        match guest.strip_prefix("/") {
            Ok(rest) => self.dir.join(rest),
            Err(_) => guest.to_path_buf(),
        }
    }

    /// The host path a guest system call should use for `guest`: the path
    /// inside the root when `guest` is absolute and exists there, else
    /// `None` (the path as the guest gave it, on the host).
    pub fn redirect(&self, guest: &[u8]) -> Option<CString> {
        if self.is_host() || !guest.starts_with(b"/") {
            return None;
        }
        let inside = self.inside(Path::new(std::ffi::OsStr::from_bytes(guest)));
        std::fs::symlink_metadata(&inside).ok()?;
        CString::new(inside.into_os_string().into_vec()).ok()
    }
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

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("aarchx-rootfs-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn paths_resolve_inside_the_root_first() {
        let dir = temp_dir("redirect");
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/libfoo.so"), b"").unwrap();
        let root = Rootfs::new(&dir).unwrap();
        assert!(!root.is_host());
        let inside = root.redirect(b"/lib/libfoo.so").unwrap();
        assert_eq!(inside.as_bytes(), dir.canonicalize().unwrap().join("lib/libfoo.so").as_os_str().as_bytes());
        assert_eq!(root.redirect(b"/lib/libbar.so"), None, "missing in the root: the host's");
        assert_eq!(root.redirect(b"lib/libfoo.so"), None, "relative paths are the guest's own");
        assert_eq!(root.inside(Path::new("/lib64/ld.so")), root.dir().join("lib64/ld.so"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_host_root_redirects_nothing() {
        let root = Rootfs::new(Path::new("/")).unwrap();
        assert!(root.is_host());
        assert_eq!(root.redirect(b"/etc"), None);
        assert_eq!(root.inside(Path::new("/etc")), Path::new("/etc"));
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
