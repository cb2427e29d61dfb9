//! File and file-descriptor system calls, and the x86-64 layouts and flag
//! values they convert: `struct stat` (144 bytes on x86-64; the host's is
//! converted field by field, so the same code is right on arm64), the
//! open(2) flags whose bits differ between x86-64 and the generic ABI of
//! arm64 (O_DIRECTORY, O_NOFOLLOW, O_DIRECT, O_LARGEFILE), and the
//! terminal ioctls (same numbers and `struct termios`/`struct winsize` on
//! both: x86 and arm64 use the asm-generic definitions).
//!
//! The x86-64 calls arm64 lacks (open, stat, access, mkdir, rename, ...)
//! become their `*at` forms. Path and buffer pointers go to the host as
//! they are (guest memory is identity-mapped), so the kernel checks them,
//! except that an absolute path that resolves to a file in the guest root
//! (`loader::rootfs`: contained, links followed as the call would) is
//! replaced by that file's host path, in every call taking a path: the
//! lookups and the calls that make, remove or change a name alike.

use std::ffi::CString;

use super::{procfs, Errno, Process};
use crate::loader::rootfs::LastLink;
use crate::mem::SharedMemory;

pub const AT_FDCWD: u64 = -100i64 as u64;
pub const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
pub const AT_REMOVEDIR: u64 = 0x200;
const AT_SYMLINK_FOLLOW: u64 = 0x400;
/// PATH_MAX: the longest path read from the guest.
const PATH_MAX: usize = 4096;

/// The open(2) flag bits whose values differ between Linux ABIs. The four
/// positions are the same set on both ABIs, only permuted.
struct OpenBits {
    directory: u32,
    nofollow: u32,
    direct: u32,
    largefile: u32,
}

const X86_64_BITS: OpenBits =
    OpenBits { directory: 0o200000, nofollow: 0o400000, direct: 0o40000, largefile: 0o100000 };
/// The generic ABI, which arm64 uses.
#[cfg(any(target_arch = "aarch64", test))]
const GENERIC_BITS: OpenBits =
    OpenBits { directory: 0o40000, nofollow: 0o100000, direct: 0o200000, largefile: 0o400000 };

#[cfg(target_arch = "x86_64")]
const HOST_BITS: OpenBits = X86_64_BITS;
#[cfg(target_arch = "aarch64")]
const HOST_BITS: OpenBits = GENERIC_BITS;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("aarchx runs on x86-64 and aarch64 Linux hosts only");

fn translate_open_flags(flags: u32, from: &OpenBits, to: &OpenBits) -> u32 {
    let pairs = [
        (from.directory, to.directory),
        (from.nofollow, to.nofollow),
        (from.direct, to.direct),
        (from.largefile, to.largefile),
    ];
    let moved = pairs.iter().fold(0, |acc, (f, _)| acc | f);
    pairs.iter().filter(|(f, _)| flags & f != 0).fold(flags & !moved, |acc, (_, t)| acc | t)
}

/// Guest (x86-64) open/fcntl/pipe2 flags to the host's.
pub fn open_flags_to_host(flags: u64) -> u64 {
    u64::from(translate_open_flags(flags as u32, &X86_64_BITS, &HOST_BITS))
}

/// Host open flags (as F_GETFL returns them) to the guest's.
pub fn open_flags_to_guest(flags: u64) -> u64 {
    u64::from(translate_open_flags(flags as u32, &HOST_BITS, &X86_64_BITS))
}

/// Size of the x86-64 `struct stat`.
pub const X86_64_STAT_SIZE: usize = 144;

/// The host's `struct stat` in the x86-64 layout: st_dev 0, st_ino 8,
/// st_nlink 16, st_mode 24, st_uid 28, st_gid 32, st_rdev 40, st_size 48,
/// st_blksize 56, st_blocks 64, then seconds and nanoseconds of st_atime
/// 72/80, st_mtime 88/96, st_ctime 104/112, and 24 reserved bytes.
pub fn stat_to_x86_64(st: &libc::stat) -> [u8; X86_64_STAT_SIZE] {
    let mut b = [0u8; X86_64_STAT_SIZE];
    let mut put64 = |off: usize, v: u64| b[off..off + 8].copy_from_slice(&v.to_le_bytes());
    put64(0, st.st_dev as u64);
    put64(8, st.st_ino as u64);
    put64(16, st.st_nlink as u64);
    put64(40, st.st_rdev as u64);
    put64(48, st.st_size as u64);
    put64(56, st.st_blksize as u64);
    put64(64, st.st_blocks as u64);
    put64(72, st.st_atime as u64);
    put64(80, st.st_atime_nsec as u64);
    put64(88, st.st_mtime as u64);
    put64(96, st.st_mtime_nsec as u64);
    put64(104, st.st_ctime as u64);
    put64(112, st.st_ctime_nsec as u64);
    for (off, v) in [(24, st.st_mode), (28, st.st_uid), (32, st.st_gid)] {
        b[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// Runs a host stat-family call into a host `struct stat` and writes the
/// x86-64 conversion to the guest's `buf`.
fn stat_into(
    mem: &SharedMemory,
    buf: u64,
    call: impl FnOnce(*mut libc::stat) -> Result<u64, Errno>,
) -> Result<u64, Errno> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    call(st.as_mut_ptr())?;
    // SAFETY: all-zero bytes are a valid `libc::stat` (integers only), and
    // the kernel filled it in.
    let st = unsafe { st.assume_init() };
    mem.lock().write_bytes(buf, &stat_to_x86_64(&st))?;
    Ok(0)
}

/// Terminal ioctls passed through: the same numbers and argument layouts
/// on x86-64 and arm64.
const PASSTHROUGH_IOCTLS: [u64; 14] = [
    0x5401, // TCGETS
    0x5402, // TCSETS
    0x5403, // TCSETSW
    0x5404, // TCSETSF
    0x540a, // TCXONC
    0x540b, // TCFLSH
    0x540f, // TIOCGPGRP
    0x5410, // TIOCSPGRP
    0x5413, // TIOCGWINSZ
    0x5414, // TIOCSWINSZ
    0x541b, // FIONREAD
    0x5421, // FIONBIO
    0x5450, // FIONCLEX
    0x5451, // FIOCLEX
];

const F_GETFD: u64 = 1;
const F_GETFL: u64 = 3;
const F_SETFL: u64 = 4;
/// fcntl commands passed through: the same numbers and argument layouts
/// (`struct flock`, `struct f_owner_ex`) on x86-64 and arm64.
const PASSTHROUGH_FCNTLS: [u64; 21] =
    [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 15, 16, 36, 37, 38, 1024, 1025, 1026, 1030, 1031, 1032];
const F_ADD_SEALS: u64 = 1033;
const F_GET_SEALS: u64 = 1034;

/// A guest path argument as a host call takes it: the guest's own pointer,
/// or the path inside the guest root it resolves to.
pub(super) struct PathArg {
    guest: u64,
    inside_root: Option<CString>,
}

impl PathArg {
    pub(super) fn ptr(&self) -> u64 {
        self.inside_root.as_ref().map_or(self.guest, |p| p.as_ptr() as u64)
    }
}

impl Process {
    /// Whether a guest path names this process's executable through /proc.
    pub(super) fn is_proc_exe(&self, path: &[u8]) -> bool {
        path == b"/proc/self/exe" || path == format!("/proc/{}/exe", std::process::id()).as_bytes()
    }

    /// The host path for the guest path at `path`: the file it names in
    /// the guest root when it is absolute and resolves there (`last`: whether
    /// the call follows a link as its last component), else the guest's
    /// path on the host. Memory is only read when the root is not the
    /// host's `/`, and a NULL `path` (utimensat's) is passed on as it is.
    pub(super) fn path_arg(&self, path: u64, last: LastLink) -> Result<PathArg, Errno> {
        if self.root.is_host() || path == 0 {
            return Ok(PathArg { guest: path, inside_root: None });
        }
        let inside_root = self.in_root(&self.mem.lock().read_cstr(path, PATH_MAX)?, last)?;
        Ok(PathArg { guest: path, inside_root })
    }

    /// The host path of the file guest path `guest` names in the guest
    /// root, if it is absolute and resolves there.
    pub(super) fn in_root(&self, guest: &[u8], last: LastLink) -> Result<Option<CString>, Errno> {
        self.root.redirect(guest, last).map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))
    }

    pub(super) fn openat(&mut self, dirfd: u64, path: u64, flags: u64, mode: u64) -> Result<u64, Errno> {
        let flags = open_flags_to_host(flags);
        let name = self.mem.lock().read_cstr(path, PATH_MAX);
        if name.as_ref().is_ok_and(|p| self.is_proc_exe(p)) {
            let exe = self.exe.as_ptr() as u64;
            return host!(libc::SYS_openat, AT_FDCWD, exe, flags, mode);
        }
        if let Some(contents) = name.ok().and_then(|p| procfs::contents(&p, &self.auxv)) {
            return procfs::open(&contents, flags);
        }
        let path = self.path_arg(path, open_last_link(flags))?;
        host!(libc::SYS_openat, dirfd, path.ptr(), flags, mode)
    }

    pub(super) fn fstatat(&mut self, dirfd: u64, path: u64, buf: u64, flags: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, at_last_link(flags))?;
        stat_into(&self.mem, buf, |st| host!(libc::SYS_newfstatat, dirfd, path.ptr(), st as u64, flags))
    }

    pub(super) fn statx(&mut self, dirfd: u64, path: u64, flags: u64, mask: u64, buf: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, at_last_link(flags))?;
        host!(libc::SYS_statx, dirfd, path.ptr(), flags, mask, buf)
    }

    pub(super) fn statfs(&mut self, path: u64, buf: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, LastLink::Follow)?;
        host!(libc::SYS_statfs, path.ptr(), buf)
    }

    /// faccessat2 (faccessat and access are it with no flags).
    pub(super) fn faccessat(&mut self, dirfd: u64, path: u64, mode: u64, flags: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, at_last_link(flags))?;
        if flags == 0 {
            return host!(libc::SYS_faccessat, dirfd, path.ptr(), mode);
        }
        host!(libc::SYS_faccessat2, dirfd, path.ptr(), mode, flags)
    }

    pub(super) fn chdir(&mut self, path: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, LastLink::Follow)?;
        host!(libc::SYS_chdir, path.ptr())
    }

    pub(super) fn fstat(&mut self, fd: u64, buf: u64) -> Result<u64, Errno> {
        stat_into(&self.mem, buf, |st| host!(libc::SYS_fstat, fd, st as u64))
    }

    /// readlinkat; "/proc/self/exe" names the guest program, not aarchx.
    pub(super) fn readlinkat(&mut self, dirfd: u64, path: u64, buf: u64, size: u64) -> Result<u64, Errno> {
        // The kernel checks the size before it looks at either pointer.
        if size as i32 <= 0 {
            return Err(Errno::EINVAL);
        }
        let name = self.mem.lock().read_cstr(path, PATH_MAX)?;
        if !self.is_proc_exe(&name) {
            let path = self.path_arg(path, LastLink::Keep)?;
            return host!(libc::SYS_readlinkat, dirfd, path.ptr(), buf, size);
        }
        let exe = self.exe.as_bytes();
        let n = exe.len().min(size as i32 as usize);
        self.mem.lock().write_bytes(buf, &exe[..n])?;
        Ok(n as u64)
    }

    pub(super) fn fcntl(&mut self, fd: u64, cmd: u64, arg: u64) -> Result<u64, Errno> {
        match cmd {
            F_GETFL => host!(libc::SYS_fcntl, fd, cmd).map(open_flags_to_guest),
            F_SETFL => host!(libc::SYS_fcntl, fd, cmd, open_flags_to_host(arg)),
            F_ADD_SEALS | F_GET_SEALS => host!(libc::SYS_fcntl, fd, cmd, arg),
            _ if PASSTHROUGH_FCNTLS.contains(&cmd) => host!(libc::SYS_fcntl, fd, cmd, arg),
            _ => Err(Errno::EINVAL),
        }
    }

    pub(super) fn ioctl(&mut self, fd: u64, request: u64, arg: u64) -> Result<u64, Errno> {
        if PASSTHROUGH_IOCTLS.contains(&(request & 0xffff_ffff)) {
            host!(libc::SYS_ioctl, fd, request, arg)
        } else {
            tracing::debug!(fd, request, "unsupported ioctl: returning -ENOTTY");
            Err(Errno(libc::ENOTTY))
        }
    }
}

/// dup2, which arm64 lacks: dup3, except that duplicating a valid
/// descriptor onto itself succeeds.
pub fn dup2(old: u64, new: u64) -> Result<u64, Errno> {
    if old == new {
        return host!(libc::SYS_fcntl, old, F_GETFD).map(|_| new);
    }
    host!(libc::SYS_dup3, old, new, 0)
}

/// Whether open with (host) `flags` follows a link as the last component:
/// not with O_NOFOLLOW, nor with O_CREAT|O_EXCL, which fails on one.
fn open_last_link(flags: u64) -> LastLink {
    let create_new = (libc::O_CREAT | libc::O_EXCL) as u64;
    if flags & libc::O_NOFOLLOW as u64 != 0 || flags & create_new == create_new {
        LastLink::Keep
    } else {
        LastLink::Follow
    }
}

/// Whether a `*at` call with `flags` follows a link as the last component.
fn at_last_link(flags: u64) -> LastLink {
    if flags & AT_SYMLINK_NOFOLLOW != 0 {
        LastLink::Keep
    } else {
        LastLink::Follow
    }
}

/// The calls that make, remove or change a name. Their absolute paths
/// resolve like the lookups': a name the guest sees in the root is the
/// root's (unlink removes what stat showed), a name not in the root (what
/// mkdir, mknod, symlink, link and rename usually make) is the host's. The
/// x86-64 calls arm64 lacks are the `*at` forms with AT_FDCWD.
impl Process {
    pub(super) fn mkdirat(&mut self, dirfd: u64, path: u64, mode: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, LastLink::Keep)?;
        host!(libc::SYS_mkdirat, dirfd, path.ptr(), mode)
    }

    /// unlinkat (and unlink, and rmdir with AT_REMOVEDIR).
    pub(super) fn unlinkat(&mut self, dirfd: u64, path: u64, flags: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, LastLink::Keep)?;
        host!(libc::SYS_unlinkat, dirfd, path.ptr(), flags)
    }

    pub(super) fn renameat(&mut self, olddir: u64, old: u64, newdir: u64, new: u64, flags: u64) -> Result<u64, Errno> {
        let (old, new) = (self.path_arg(old, LastLink::Keep)?, self.path_arg(new, LastLink::Keep)?);
        host!(libc::SYS_renameat2, olddir, old.ptr(), newdir, new.ptr(), flags)
    }

    /// linkat (and link, which does not follow `old` if it is a link).
    pub(super) fn linkat(&mut self, olddir: u64, old: u64, newdir: u64, new: u64, flags: u64) -> Result<u64, Errno> {
        let follow = if flags & AT_SYMLINK_FOLLOW != 0 { LastLink::Follow } else { LastLink::Keep };
        let (old, new) = (self.path_arg(old, follow)?, self.path_arg(new, LastLink::Keep)?);
        host!(libc::SYS_linkat, olddir, old.ptr(), newdir, new.ptr(), flags)
    }

    /// symlinkat (and symlink): `target` is the link's text, kept as is.
    pub(super) fn symlinkat(&mut self, target: u64, dirfd: u64, linkpath: u64) -> Result<u64, Errno> {
        let linkpath = self.path_arg(linkpath, LastLink::Keep)?;
        host!(libc::SYS_symlinkat, target, dirfd, linkpath.ptr())
    }

    /// fchmodat (and chmod): x86-64's has no flags, it follows links.
    pub(super) fn fchmodat(&mut self, dirfd: u64, path: u64, mode: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, LastLink::Follow)?;
        host!(libc::SYS_fchmodat, dirfd, path.ptr(), mode)
    }

    /// fchownat (and chown, and lchown with AT_SYMLINK_NOFOLLOW).
    pub(super) fn fchownat(&mut self, dirfd: u64, path: u64, uid: u64, gid: u64, flags: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, at_last_link(flags))?;
        host!(libc::SYS_fchownat, dirfd, path.ptr(), uid, gid, flags)
    }

    pub(super) fn mknodat(&mut self, dirfd: u64, path: u64, mode: u64, dev: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, LastLink::Keep)?;
        host!(libc::SYS_mknodat, dirfd, path.ptr(), mode, dev)
    }

    pub(super) fn truncate(&mut self, path: u64, length: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, LastLink::Follow)?;
        host!(libc::SYS_truncate, path.ptr(), length)
    }

    /// utimensat; a NULL path is futimens on `dirfd`.
    pub(super) fn utimensat(&mut self, dirfd: u64, path: u64, times: u64, flags: u64) -> Result<u64, Errno> {
        let path = self.path_arg(path, at_last_link(flags))?;
        host!(libc::SYS_utimensat, dirfd, path.ptr(), times, flags)
    }

    /// utime, utimes and futimesat, which arm64 lacks: utimensat with the
    /// guest's times (`struct utimbuf`, seconds, when `micros` is false;
    /// two `struct timeval` when true) as `struct timespec`s.
    pub(super) fn utimes(&mut self, dirfd: u64, path: u64, times: u64, micros: bool) -> Result<u64, Errno> {
        if times == 0 {
            return self.utimensat(dirfd, path, 0, 0);
        }
        let words = if micros { 4 } else { 2 };
        let mut buf = [0u8; 32];
        self.mem.lock().read_bytes(times, &mut buf[..8 * words])?;
        let word = |i: usize| i64::from_le_bytes(buf[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let spec = |i: usize| {
            if micros {
                libc::timespec { tv_sec: word(2 * i), tv_nsec: word(2 * i + 1).saturating_mul(1000) as _ }
            } else {
                libc::timespec { tv_sec: word(i), tv_nsec: 0 }
            }
        };
        let specs = [spec(0), spec(1)];
        self.utimensat(dirfd, path, specs.as_ptr() as u64, 0)
    }
}

/// poll, which arm64 lacks, as ppoll.
pub fn poll(fds: u64, nfds: u64, timeout_ms: u64) -> Result<u64, Errno> {
    let ms = timeout_ms as i32;
    let ts = libc::timespec { tv_sec: (ms / 1000).into(), tv_nsec: ((ms % 1000) * 1_000_000).into() };
    let tsp = if ms < 0 { 0 } else { &ts as *const libc::timespec as u64 };
    host!(libc::SYS_ppoll, fds, nfds, tsp, 0, 8)
}

/// pipe2 (and pipe, with no flags); O_DIRECT differs between the ABIs.
pub fn pipe2(fds: u64, flags: u64) -> Result<u64, Errno> {
    host!(libc::SYS_pipe2, fds, open_flags_to_host(flags))
}

#[cfg(test)]
mod tests {
    use super::*;

    const O_CREAT: u32 = 0o100;
    const O_CLOEXEC: u32 = 0o2000000;
    const O_TMPFILE_X86: u32 = 0o20000000 | 0o200000;

    #[test]
    fn open_flags_x86_64_to_generic() {
        let t = |f| translate_open_flags(f, &X86_64_BITS, &GENERIC_BITS);
        assert_eq!(t(0o200000), 0o40000, "O_DIRECTORY");
        assert_eq!(t(0o400000), 0o100000, "O_NOFOLLOW");
        assert_eq!(t(0o40000), 0o200000, "O_DIRECT");
        assert_eq!(t(0o100000), 0o400000, "O_LARGEFILE");
        assert_eq!(t(O_CREAT | O_CLOEXEC | 2), O_CREAT | O_CLOEXEC | 2, "common bits unchanged");
        assert_eq!(t(O_TMPFILE_X86), 0o20000000 | 0o40000, "O_TMPFILE carries O_DIRECTORY");
        for f in [0o200000 | 0o40000, 0o400000 | 0o100000 | 0o1, 0o777777] {
            assert_eq!(translate_open_flags(t(f), &GENERIC_BITS, &X86_64_BITS), f, "round trip {f:o}");
        }
    }

    #[test]
    fn open_flags_match_the_host_libc() {
        assert_eq!(open_flags_to_host(0o200000), libc::O_DIRECTORY as u64);
        assert_eq!(open_flags_to_host(0o400000), libc::O_NOFOLLOW as u64);
        assert_eq!(open_flags_to_host(0o40000), libc::O_DIRECT as u64);
        assert_eq!(open_flags_to_guest(libc::O_DIRECTORY as u64), 0o200000);
    }

    fn field(b: &[u8], off: usize, len: usize) -> u64 {
        let mut w = [0u8; 8];
        w[..len].copy_from_slice(&b[off..off + len]);
        u64::from_le_bytes(w)
    }

    #[test]
    fn stat_offsets() {
        // SAFETY: all-zero bytes are a valid `libc::stat`.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        st.st_dev = 1;
        st.st_ino = 2;
        st.st_nlink = 3;
        st.st_mode = 4;
        st.st_uid = 5;
        st.st_gid = 6;
        st.st_rdev = 7;
        st.st_size = 8;
        st.st_blksize = 9;
        st.st_blocks = 10;
        st.st_atime = 11;
        st.st_atime_nsec = 12;
        st.st_mtime = 13;
        st.st_mtime_nsec = 14;
        st.st_ctime = 15;
        st.st_ctime_nsec = 16;
        let b = stat_to_x86_64(&st);
        let expect = [
            (0, 8, 1),
            (8, 8, 2),
            (16, 8, 3),
            (24, 4, 4),
            (28, 4, 5),
            (32, 4, 6),
            (36, 4, 0),
            (40, 8, 7),
            (48, 8, 8),
            (56, 8, 9),
            (64, 8, 10),
            (72, 8, 11),
            (80, 8, 12),
            (88, 8, 13),
            (96, 8, 14),
            (104, 8, 15),
            (112, 8, 16),
            (120, 8, 0),
            (128, 8, 0),
            (136, 8, 0),
        ];
        for (off, len, v) in expect {
            assert_eq!(field(&b, off, len), v, "offset {off}");
        }
    }

    /// On an x86-64 host the host's `struct stat` is the x86-64 layout, so
    /// the conversion must reproduce the kernel's bytes exactly.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn stat_matches_the_x86_64_kernel() {
        let mut raw = [0u8; X86_64_STAT_SIZE];
        let path = c"/proc/self/exe";
        let r = host!(libc::SYS_newfstatat, AT_FDCWD, path.as_ptr() as u64, raw.as_mut_ptr() as u64, 0);
        assert_eq!(r, Ok(0));
        // SAFETY: `raw` holds a kernel-filled x86-64 stat, which is
        // `libc::stat` on this host; read unaligned from the byte buffer.
        let st: libc::stat = unsafe { std::ptr::read_unaligned(raw.as_ptr().cast()) };
        assert_eq!(stat_to_x86_64(&st), raw);
        assert_eq!(std::mem::size_of::<libc::stat>(), X86_64_STAT_SIZE);
    }
}
