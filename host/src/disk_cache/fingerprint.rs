//! The fingerprint of what a translation depends on besides the guest's
//! bytes: this aarchx build (its ELF build id: any change to the lifter,
//! a pass or this format makes another), the pipeline (each pass's name,
//! stage, every option with defaults filled in, whether it runs on quick
//! translations, a plugin's file content), and the translation settings
//! fixed for a run (cpu level, SSE ordering). The memory model, which a
//! run may change (`Auto`), is part of each entry's key instead.

use std::sync::OnceLock;

use aarchx_pass::TranslationConfig;
use sha2::{Digest, Sha256};

use crate::policy::ValidatedPass;

/// The fingerprint, or `None` when a part cannot be known (a plugin file
/// that cannot be read again, no way to identify this build).
pub fn fingerprint(passes: &[ValidatedPass<'_>], config: &TranslationConfig) -> Option<[u8; 32]> {
    let mut h = Sha256::new();
    h.update(b"aarchx translation cache\0");
    h.update(build_id()?);
    for p in passes {
        h.update(p.info.name.as_bytes());
        h.update([0]);
        h.update(p.info.stage.name().as_bytes());
        h.update(format!("{:?} quick={}", p.options, p.quick).as_bytes());
        h.update([0]);
        if let Some(plugin) = p.info.plugin() {
            h.update(Sha256::digest(std::fs::read(&plugin.file).ok()?));
        }
    }
    h.update(format!("{:?} {}", config.cpu_level, config.tso_vector).as_bytes());
    Some(h.finalize().into())
}

/// This executable's GNU build id, or else its content's hash.
fn build_id() -> Option<&'static [u8]> {
    static ID: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    ID.get_or_init(|| {
        use std::io::Read;
        // The note is near the start (after the program headers): the
        // whole file is read only when it is not there.
        let mut head = Vec::new();
        std::fs::File::open("/proc/self/exe").ok()?.take(1 << 16).read_to_end(&mut head).ok()?;
        if let Some(id) = gnu_build_id(&head) {
            return Some(id.to_vec());
        }
        let exe = std::fs::read("/proc/self/exe").ok()?;
        Some(gnu_build_id(&exe).map_or_else(|| Sha256::digest(&exe).to_vec(), <[u8]>::to_vec))
    })
    .as_deref()
}

/// The `NT_GNU_BUILD_ID` note of a 64-bit little-endian ELF file.
fn gnu_build_id(elf: &[u8]) -> Option<&[u8]> {
    const PT_NOTE: u32 = 4;
    const NT_GNU_BUILD_ID: u32 = 3;
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let (phoff, phentsize, phnum) = (u64_at(0x20)? as usize, u16_at(0x36)? as usize, u16_at(0x38)? as usize);
    for i in 0..phnum {
        let ph = phoff.checked_add(i.checked_mul(phentsize)?)?;
        if u32_at(ph)? != PT_NOTE {
            continue;
        }
        let (mut at, end) = (u64_at(ph + 8)? as usize, (u64_at(ph + 8)? + u64_at(ph + 32)?) as usize);
        while at + 12 <= end {
            let (namesz, descsz, kind) = (u32_at(at)? as usize, u32_at(at + 4)? as usize, u32_at(at + 8)?);
            let name = at + 12;
            let desc = name + namesz.next_multiple_of(4);
            if kind == NT_GNU_BUILD_ID && elf.get(name..name + namesz)? == b"GNU\0" {
                return elf.get(desc..desc + descsz);
            }
            at = desc + descsz.next_multiple_of(4);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_has_a_build_id() {
        // Debian's linker writes one; it is what tells builds apart.
        let exe = std::fs::read("/proc/self/exe").expect("exe");
        let id = gnu_build_id(&exe).expect("a GNU build id note");
        assert!(id.len() >= 16, "{id:?}");
        assert_eq!(gnu_build_id(b"\x7fELF\x01"), None);
    }
}
