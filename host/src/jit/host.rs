//! What the host CPU offers the lowering beyond Armv8.0: the crypto
//! extension (FEAT_AES, FEAT_PMULL) and FEAT_AFP's alternate float
//! handling. Code generated on another architecture (the codegen counts)
//! assumes the crypto extension; FEAT_AFP is chosen per run (the policy's
//! `afp`, `crate::engine::nan_rules`).

/// `HWCAP_CPUID`: EL0 may read the ID registers (the kernel emulates it).
#[cfg(target_arch = "aarch64")]
const HWCAP_CPUID: u64 = 1 << 11;
/// `HWCAP2_AFP`.
#[cfg(target_arch = "aarch64")]
const HWCAP2_AFP: u64 = 1 << 20;

/// Whether this host has AESE/AESD/AESMC/AESIMC and the 64-bit PMULL
/// (std caches the answer).
pub fn crypto_extension() -> bool {
    #[cfg(target_arch = "aarch64")]
    return std::arch::is_aarch64_feature_detected!("aes") && std::arch::is_aarch64_feature_detected!("pmull");
    #[cfg(not(target_arch = "aarch64"))]
    return true;
}

/// Whether this host has FEAT_AFP (FPCR.FIZ, FPCR.AH): `HWCAP2_AFP`, or
/// else the AFP field of ID_AA64MMFR1_EL1 where the kernel lets EL0 read
/// it (QEMU's user mode reports the feature only there). No other host
/// runs translated code.
pub fn afp() -> bool {
    #[cfg(target_arch = "aarch64")]
    {
        let (hwcap, hwcap2) = crate::sys::process::hwcaps();
        if hwcap2 & HWCAP2_AFP != 0 {
            return true;
        }
        if hwcap & HWCAP_CPUID == 0 {
            return false;
        }
        let mmfr1: u64;
        // SAFETY: with HWCAP_CPUID the kernel emulates this read for EL0
        // (it has no other effect); it writes only the named register.
        unsafe { std::arch::asm!("mrs {}, ID_AA64MMFR1_EL1", out(reg) mmfr1, options(nomem, nostack)) };
        (mmfr1 >> 44) & 0xf != 0
    }
    #[cfg(not(target_arch = "aarch64"))]
    return false;
}
