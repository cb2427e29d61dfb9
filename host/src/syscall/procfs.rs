//! The /proc files aarchx writes itself because the host's would describe
//! the host: `/proc/cpuinfo` (the x86-64 CPU `cpuid` advertises, see
//! [`crate::cpuid::cpuinfo`]) and `/proc/self/auxv` (the auxiliary vector
//! the loader gave the guest). Opening one gives a sealed-content memfd
//! holding the text, read-only like the kernel's file.

use super::Errno;

/// What the guest reads at `path`, when aarchx supplies that file.
pub fn contents(path: &[u8], auxv: &[(u64, u64)]) -> Option<Vec<u8>> {
    if path == b"/proc/cpuinfo" {
        return Some(crate::cpuid::cpuinfo().into_bytes());
    }
    let own = format!("/proc/{}/auxv", std::process::id());
    if path == b"/proc/self/auxv" || path == own.as_bytes() {
        return Some(auxv.iter().flat_map(|&(k, v)| [k, v]).flat_map(u64::to_le_bytes).collect());
    }
    None
}

/// A file descriptor reading `contents` from its start; `flags` are the
/// host open flags (writing is refused with EACCES, as for the kernel's
/// read-only files).
pub fn open(contents: &[u8], flags: u64) -> Result<u64, Errno> {
    let flags = flags as i32;
    if flags & libc::O_ACCMODE != libc::O_RDONLY {
        return Err(Errno(libc::EACCES));
    }
    crate::sys::process::memfd_with(c"aarchx-proc", contents, flags & libc::O_CLOEXEC != 0).map(|fd| fd as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auxv_is_the_pairs_in_order_and_other_paths_are_the_hosts() {
        let bytes = contents(b"/proc/self/auxv", &[(6, 4096), (0, 0)]).unwrap();
        assert_eq!(bytes.len(), 32);
        assert_eq!(&bytes[..16], &[6, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0]);
        assert!(contents(b"/proc/self/maps", &[]).is_none());
        assert!(contents(b"/proc/cpuinfo", &[]).is_some());
    }
}
