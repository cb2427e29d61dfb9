//! getdents, which arm64 lacks: getdents64, with each `struct
//! linux_dirent64` (d_ino, d_off, d_reclen, d_type at 18, d_name at 19)
//! rewritten in place as the x86-64 `struct linux_dirent` (d_ino, d_off,
//! d_reclen, d_name at 18, d_type in the record's last byte). A name's two
//! records have the same length (20 + the name's length, rounded up to 8),
//! so the buffer sizes and d_off positions are the same.

use super::{Errno, Process};

const RECLEN: usize = 16;
const TYPE64: usize = 18;
const NAME64: usize = 19;
const NAME: usize = 18;
/// The largest buffer one getdents fills: a larger one gets fewer
/// records, and the next call the rest, as getdents allows.
const MAX_BUFFER: usize = 1 << 16;

/// Rewrites the linux_dirent64 records in `buf` as linux_dirent ones.
fn to_linux_dirent(buf: &mut [u8]) -> Result<(), Errno> {
    let mut at = 0;
    while at < buf.len() {
        let bad = Errno(libc::EIO);
        let reclen = buf.get(at + RECLEN..at + RECLEN + 2).ok_or(bad)?;
        let reclen = usize::from(u16::from_le_bytes([reclen[0], reclen[1]]));
        let rec = buf.get_mut(at..at + reclen).filter(|r| r.len() > NAME64).ok_or(bad)?;
        let d_type = rec[TYPE64];
        let len = rec[NAME64..].iter().position(|&b| b == 0).ok_or(bad)?;
        rec.copy_within(NAME64..NAME64 + len, NAME);
        rec[NAME + len..].fill(0);
        rec[reclen - 1] = d_type;
        at += reclen;
    }
    Ok(())
}

impl Process {
    /// getdents(fd, dirp, count). As the kernel's: a count that is
    /// negative as an `int` holds no record (EINVAL, or 0 at the end of
    /// the directory), and a buffer the records cannot be written to is
    /// EFAULT with the directory's position unchanged.
    pub(super) fn getdents(&mut self, fd: u64, dirp: u64, count: u64) -> Result<u64, Errno> {
        let count = if (count as u32 as i32) < 0 { 1 } else { count as u32 as usize };
        let mut buf = vec![0u8; count.min(MAX_BUFFER)];
        // Not a directory (a pipe cannot seek): getdents64 says which error.
        let at = host!(libc::SYS_lseek, fd, 0u64, libc::SEEK_CUR as u64).ok();
        let n = host!(libc::SYS_getdents64, fd, buf.as_mut_ptr() as u64, buf.len() as u64)? as usize;
        to_linux_dirent(&mut buf[..n])?;
        let written = self.mem.lock().write_bytes(dirp, &buf[..n]);
        if let Err(e) = written {
            if let Some(at) = at {
                host!(libc::SYS_lseek, fd, at, libc::SEEK_SET as u64)?;
            }
            return Err(e);
        }
        Ok(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keep_their_length_and_move_d_type_last() {
        let mut buf = vec![0u8; 48];
        buf[..8].copy_from_slice(&7u64.to_le_bytes());
        buf[8..16].copy_from_slice(&1u64.to_le_bytes());
        buf[16..18].copy_from_slice(&24u16.to_le_bytes());
        buf[18] = 4; // DT_DIR
        buf[19..21].copy_from_slice(b"..");
        buf[24 + 16..24 + 18].copy_from_slice(&24u16.to_le_bytes());
        buf[24 + 18] = 8; // DT_REG
        buf[24 + 19..24 + 23].copy_from_slice(b"abcd");
        to_linux_dirent(&mut buf).unwrap();
        assert_eq!(&buf[..8], 7u64.to_le_bytes());
        assert_eq!(&buf[18..24], b"..\0\0\0\x04");
        assert_eq!(&buf[24 + 18..48], b"abcd\0\x08");
        assert_eq!(to_linux_dirent(&mut [0u8; 10]), Err(Errno(libc::EIO)), "truncated");
    }
}
