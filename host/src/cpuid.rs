//! The CPU the guest sees: what `cpuid` answers and what `rdtsc` counts.
//!
//! The guest sees the x86-64 level of the policy's `cpu_level`, set once
//! by [`set_level`] before the guest runs. V1 is a baseline x86-64 CPU
//! (fpu, tsc, cx8, cmov, clflush, mmx, fxsr, sse, sse2; long mode,
//! syscall, nx, lahf) and nothing newer, so glibc picks its baseline
//! string and math routines; V2 adds exactly the features of x86-64-v2 the
//! lifter implements, with AES-NI and PCLMULQDQ where the host can run
//! them ([`LEAF1_ECX_V2`]); V3 adds x86-64-v3's AVX, AVX2, FMA, F16C,
//! BMI1, BMI2, LZCNT, MOVBE and XSAVE (with the OS's enabling of it,
//! OSXSAVE, and leaf 0xd describing the x87, SSE and AVX components the
//! lifter's xsave handles). The vendor is
//! "GenuineIntel" so glibc takes its usual Intel paths, and leaves 2 and 4 describe a plain cache
//! hierarchy (32 KiB L1, 256 KiB L2, 8 MiB L3) so glibc's memcpy thresholds
//! come out as on real hardware. Unknown leaves read as zero.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use aarchx_ir::GuestState;
use aarchx_pass::CpuLevel;

const RAX: usize = 0;
const RCX: usize = 1;
const RDX: usize = 2;
const RBX: usize = 3;

/// Highest basic leaf answered.
const MAX_BASIC_LEAF: u32 = 0xd;
/// Highest extended leaf answered.
const MAX_EXTENDED_LEAF: u32 = 0x8000_0008;

/// Leaf 1 EDX: fpu, tsc, cx8, cmov, clflush, mmx, fxsr, sse, sse2.
pub const LEAF1_EDX: u32 = 1 << 0 | 1 << 4 | 1 << 8 | 1 << 15 | 1 << 19 | 1 << 23 | 1 << 24 | 1 << 25 | 1 << 26;

/// Leaf 1 ECX at V2: sse3, pclmulqdq, ssse3, cx16, sse4_1, sse4_2,
/// popcnt, aes. AES-NI and PCLMULQDQ are not part of x86-64-v2, but every
/// CPU of that level from Westmere on has them, and libraries (OpenSSL,
/// zlib-ng, libgcrypt) test the CPUID bits, not the level.
pub const LEAF1_ECX_V2: u32 = 1 << 0 | 1 << 1 | 1 << 9 | 1 << 13 | 1 << 19 | 1 << 20 | 1 << 23 | 1 << 25;

/// Leaf 1 ECX: pclmulqdq, aes. Left out on a host whose JIT cannot emit
/// them (no FEAT_AES/FEAT_PMULL, see `jit::crypto_extension`): those
/// instructions would run on the interpreter there, and libraries that
/// test the bits take their table-based code, which translates well.
const LEAF1_ECX_CRYPTO: u32 = 1 << 1 | 1 << 25;

/// Leaf 1 ECX added at V3: fma, movbe, xsave, osxsave, avx, f16c.
const LEAF1_ECX_V3: u32 = 1 << 12 | 1 << 22 | 1 << 26 | 1 << 27 | 1 << 28 | 1 << 29;

/// Leaf 7 EBX at V3: bmi1, avx2, bmi2.
const LEAF7_EBX_V3: u32 = 1 << 3 | 1 << 5 | 1 << 8;

/// 0x8000_0001 ECX added at V3: abm (lzcnt).
const EXT1_ECX_V3: u32 = 1 << 5;

/// The level [`cpuid`] answers for (a [`CpuLevel`] as its index).
static LEVEL: AtomicU8 = AtomicU8::new(CpuLevel::V1 as u8);

/// Sets the level the guest's `cpuid` and `/proc/cpuinfo` report: the
/// policy's, once before the guest runs.
pub fn set_level(level: CpuLevel) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// The level [`set_level`] set.
pub fn level() -> CpuLevel {
    match LEVEL.load(Ordering::Relaxed) {
        l if l == CpuLevel::V3 as u8 => CpuLevel::V3,
        l if l == CpuLevel::V2 as u8 => CpuLevel::V2,
        _ => CpuLevel::V1,
    }
}

/// Family 6, model 15, stepping 1: a generic x86-64 part.
const LEAF1_EAX: u32 = 0x6f1;
/// clflush line size 8 x 8 bytes, one logical processor, APIC id 0.
const LEAF1_EBX: u32 = 8 << 8 | 1 << 16;

/// 0x8000_0001 ECX: lahf_lm.
const EXT1_ECX: u32 = 1 << 0;
/// 0x8000_0001 EDX: syscall, nx, lm.
const EXT1_EDX: u32 = 1 << 11 | 1 << 20 | 1 << 29;

const BRAND: &[u8] = b"aarchx virtual x86-64 CPU";

/// The guest's answer to `cpuid` with `eax = leaf`, `ecx = subleaf`:
/// `[eax, ebx, ecx, edx]`, at the level [`set_level`] set.
pub fn cpuid(leaf: u32, subleaf: u32) -> [u32; 4] {
    cpuid_at(level(), leaf, subleaf)
}

/// The answer of a CPU of `level` to `cpuid`.
fn cpuid_at(level: CpuLevel, leaf: u32, subleaf: u32) -> [u32; 4] {
    let v3 = level == CpuLevel::V3;
    let crypto = if crate::jit::crypto_extension() { LEAF1_ECX_V2 } else { LEAF1_ECX_V2 & !LEAF1_ECX_CRYPTO };
    let leaf1_ecx = match level {
        CpuLevel::V1 => 0,
        CpuLevel::V2 => crypto,
        CpuLevel::V3 => crypto | LEAF1_ECX_V3,
    };
    let xcr0 = aarchx_passes::decode::XCR0 as u32;
    let area = aarchx_passes::decode::XSAVE_AREA as u32;
    match leaf {
        0 => {
            let v = b"GenuineIntel";
            let word = |i: usize| u32::from_le_bytes([v[i], v[i + 1], v[i + 2], v[i + 3]]);
            [MAX_BASIC_LEAF, word(0), word(8), word(4)]
        }
        1 => [LEAF1_EAX, LEAF1_EBX, leaf1_ecx, LEAF1_EDX],
        // One round of descriptors; 0xff says "see leaf 4".
        2 => [0x0000_ff01, 0, 0, 0],
        4 => cache_parameters(subleaf),
        0x8000_0000 => [MAX_EXTENDED_LEAF, 0, 0, 0],
        7 if v3 && subleaf == 0 => [0, LEAF7_EBX_V3, 0, 0],
        // The XSAVE components of XCR0 (x87, SSE, AVX), the area's size for
        // them, no XSAVEOPT/XSAVEC/XGETBV(1)/XSAVES (subleaf 1), and the AVX
        // component's size and offset (subleaf 2).
        0xd if v3 => match subleaf {
            0 => [xcr0, area, area, 0],
            2 => [256, aarchx_passes::decode::AVX_AREA as u32, 0, 0],
            _ => [0; 4],
        },
        0x8000_0001 => [0, 0, EXT1_ECX | if v3 { EXT1_ECX_V3 } else { 0 }, EXT1_EDX],
        0x8000_0002..=0x8000_0004 => brand_words(leaf - 0x8000_0002),
        // 40 physical and 48 virtual address bits.
        0x8000_0008 => [0x3028, 0, 0, 0],
        _ => [0; 4],
    }
}

/// Leaf 4 (deterministic cache parameters), one subleaf per cache level.
fn cache_parameters(subleaf: u32) -> [u32; 4] {
    // (type: 1 data, 2 instruction, 3 unified; level; ways; sets), 64-byte lines.
    const CACHES: [(u32, u32, u32, u32); 4] = [(1, 1, 8, 64), (2, 1, 8, 64), (3, 2, 4, 1024), (3, 3, 16, 8192)];
    match CACHES.get(subleaf as usize) {
        Some(&(kind, level, ways, sets)) => {
            let eax = kind | level << 5 | 1 << 8;
            let ebx = (ways - 1) << 22 | 63;
            [eax, ebx, sets - 1, 0]
        }
        None => [0; 4],
    }
}

/// Part `part` (0..3) of the 48-byte, NUL-padded brand string.
fn brand_words(part: u32) -> [u32; 4] {
    let mut out = [0u32; 4];
    for (i, word) in out.iter_mut().enumerate() {
        let base = part as usize * 16 + i * 4;
        let byte = |k: usize| BRAND.get(base + k).copied().unwrap_or(0);
        *word = u32::from_le_bytes([byte(0), byte(1), byte(2), byte(3)]);
    }
    out
}

/// Flag names of `/proc/cpuinfo` for the `cpuid` bits the guest CPU can
/// have: (leaf, register index in `[eax, ebx, ecx, edx]`, bit, name), in
/// the kernel's order.
const FLAG_NAMES: &[(u32, usize, u32, &str)] = &[
    (1, 3, 0, "fpu"),
    (1, 3, 4, "tsc"),
    (1, 3, 8, "cx8"),
    (1, 3, 15, "cmov"),
    (1, 3, 19, "clflush"),
    (1, 3, 23, "mmx"),
    (1, 3, 24, "fxsr"),
    (1, 3, 25, "sse"),
    (1, 3, 26, "sse2"),
    (0x8000_0001, 3, 11, "syscall"),
    (0x8000_0001, 3, 20, "nx"),
    (0x8000_0001, 3, 29, "lm"),
    (1, 2, 0, "pni"),
    (1, 2, 1, "pclmulqdq"),
    (1, 2, 9, "ssse3"),
    (1, 2, 12, "fma"),
    (1, 2, 13, "cx16"),
    (1, 2, 19, "sse4_1"),
    (1, 2, 20, "sse4_2"),
    (1, 2, 22, "movbe"),
    (1, 2, 23, "popcnt"),
    (1, 2, 25, "aes"),
    (1, 2, 26, "xsave"),
    (1, 2, 28, "avx"),
    (1, 2, 29, "f16c"),
    (0x8000_0001, 2, 0, "lahf_lm"),
    (0x8000_0001, 2, 5, "abm"),
    (7, 1, 3, "bmi1"),
    (7, 1, 5, "avx2"),
    (7, 1, 8, "bmi2"),
];

/// The text of `/proc/cpuinfo` for the CPU [`cpuid`] describes, one entry
/// per host processor this process may run on (what the guest's
/// `sched_getaffinity` and `sysconf` report too).
pub fn cpuinfo() -> String {
    use std::fmt::Write;
    let [max_leaf, ..] = cpuid(0, 0);
    let [sig, ..] = cpuid(1, 0);
    let (stepping, model, family) = (sig & 0xf, sig >> 4 & 0xf, sig >> 8 & 0xf);
    let brand: Vec<u8> = (0x8000_0002..=0x8000_0004u32)
        .flat_map(|l| cpuid(l, 0))
        .flat_map(u32::to_le_bytes)
        .take_while(|b| *b != 0)
        .collect();
    let flags: Vec<&str> =
        FLAG_NAMES.iter().filter(|(leaf, reg, bit, _)| cpuid(*leaf, 0)[*reg] >> bit & 1 != 0).map(|f| f.3).collect();
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut out = String::new();
    for cpu in 0..n {
        let _ = write!(
            out,
            "processor\t: {cpu}\nvendor_id\t: GenuineIntel\ncpu family\t: {family}\nmodel\t\t: {model}\n\
             model name\t: {}\nstepping\t: {stepping}\ncache size\t: 8192 KB\nphysical id\t: 0\n\
             siblings\t: {n}\ncore id\t\t: {cpu}\ncpu cores\t: {n}\nfpu\t\t: yes\nfpu_exception\t: yes\n\
             cpuid level\t: {max_leaf}\nwp\t\t: yes\nflags\t\t: {}\nclflush size\t: 64\n\
             cache_alignment\t: 64\naddress sizes\t: 40 bits physical, 48 bits virtual\n\n",
            String::from_utf8_lossy(&brand),
            flags.join(" ")
        );
    }
    out
}

/// The `cpuid` helper: reads eax and ecx, writes eax, ebx, ecx and edx
/// (zero-extended, as a 32-bit result is in 64-bit mode).
pub fn run_cpuid(state: &mut GuestState) {
    let [a, b, c, d] = cpuid(state.gpr[RAX] as u32, state.gpr[RCX] as u32);
    state.gpr[RAX] = u64::from(a);
    state.gpr[RBX] = u64::from(b);
    state.gpr[RCX] = u64::from(c);
    state.gpr[RDX] = u64::from(d);
}

/// The `rdtsc` helper: a monotonic count of nanoseconds since the first
/// `rdtsc` into edx:eax.
pub fn run_rdtsc(state: &mut GuestState) {
    static START: OnceLock<Instant> = OnceLock::new();
    let ns = START.get_or_init(Instant::now).elapsed().as_nanos() as u64;
    state.gpr[RAX] = ns & 0xffff_ffff;
    state.gpr[RDX] = ns >> 32;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string_of(words: &[u32]) -> String {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        String::from_utf8(bytes).unwrap().trim_end_matches('\0').to_string()
    }

    #[test]
    fn vendor_and_brand() {
        let [max, b, c, d] = cpuid(0, 0);
        assert_eq!(max, MAX_BASIC_LEAF);
        assert_eq!(string_of(&[b, d, c]), "GenuineIntel");
        let brand: Vec<u32> = (0x8000_0002..=0x8000_0004).flat_map(|l| cpuid(l, 0)).collect();
        assert_eq!(string_of(&brand), "aarchx virtual x86-64 CPU");
        assert_eq!(cpuid(0x8000_0000, 0)[0], MAX_EXTENDED_LEAF);
    }

    #[test]
    fn v2_adds_what_the_lifter_implements() {
        let [_, _, ecx, edx] = cpuid_at(CpuLevel::V2, 1, 0);
        assert_eq!(edx, LEAF1_EDX);
        // sse3, pclmulqdq, ssse3, cx16, sse4_1, sse4_2, popcnt, aes; not
        // avx (28). (The machines that run the tests have FEAT_AES.)
        assert!(crate::jit::crypto_extension());
        assert_eq!(ecx, 0x0298_2203);
        assert_eq!(cpuid_at(CpuLevel::V2, 7, 0), [0; 4]);
    }

    #[test]
    fn v3_adds_avx_fma_f16c_bmi_and_the_xsave_area_the_lifter_writes() {
        let cpuid = |leaf, subleaf| cpuid_at(CpuLevel::V3, leaf, subleaf);
        let [_, _, ecx, _] = cpuid(1, 0);
        assert_eq!(ecx & 0x3c40_1000, 0x3c40_1000, "fma movbe xsave osxsave avx f16c");
        assert_eq!(ecx & cpuid_at(CpuLevel::V2, 1, 0)[2], cpuid_at(CpuLevel::V2, 1, 0)[2]);
        assert_eq!(cpuid(7, 0), [0, 1 << 3 | 1 << 5 | 1 << 8, 0, 0]);
        assert_eq!(cpuid(0x8000_0001, 0)[2], 1 | 1 << 5);
        // x87, SSE and AVX; 512 + 64 + 256 bytes; AVX's 256 bytes at 576.
        assert_eq!(cpuid(0xd, 0), [7, 832, 832, 0]);
        assert_eq!(cpuid(0xd, 1), [0; 4]);
        assert_eq!(cpuid(0xd, 2), [256, 576, 0, 0]);
    }

    /// xgetbv (`0f 01 d0`) lifted at V3 and run on the interpreter from
    /// a state with ecx = `ecx`.
    fn xgetbv(ecx: u64) -> (crate::machine::RegionExit, GuestState) {
        use aarchx_pass::{GuestCode, MemoryModel, Pass, PassContext, TranslationConfig};
        struct Code;
        impl GuestCode for Code {
            fn read(&self, addr: u64, buf: &mut [u8]) -> usize {
                let bytes = [0x0f, 0x01, 0xd0, 0x0f, 0x0b];
                let from = (addr.saturating_sub(0x1000) as usize).min(bytes.len());
                let n = buf.len().min(bytes.len() - from);
                buf[..n].copy_from_slice(&bytes[from..from + n]);
                n
            }
        }
        let config = TranslationConfig {
            memory_model: MemoryModel::Plain,
            tso_vector: false,
            cpu_level: CpuLevel::V3,
            superblocks: false,
        };
        let mut region = aarchx_ir::Region::new(0x1000);
        aarchx_passes::decode::Decode { max_insns: 1, follow: false }
            .run(&PassContext { code: &Code, config: &config }, &mut region)
            .expect("lifts xgetbv");
        let mut s = GuestState { rip: 0x1000, ..GuestState::default() };
        s.gpr[RCX] = ecx;
        s.gpr[RAX] = u64::MAX;
        s.gpr[RDX] = u64::MAX;
        let exit = crate::interp::run_region(&region, &mut s, &mut crate::mem::GuestAccess);
        (exit, s)
    }

    #[test]
    fn xgetbv_reads_the_xcr0_leaf_0xd_reports() {
        // ecx's upper half is not read.
        let (_, s) = xgetbv(0xffff_ffff_0000_0000);
        assert_eq!((s.gpr[RAX], s.gpr[RDX]), (u64::from(cpuid_at(CpuLevel::V3, 0xd, 0)[0]), 0));
        assert_eq!(s.gpr[RAX], 7, "x87, SSE, AVX");
        let (exit, _) = xgetbv(1);
        assert!(matches!(exit, crate::machine::RegionExit::Trap { kind: aarchx_ir::TrapKind::Privileged }), "{exit:?}");
    }

    #[test]
    fn baseline_features_only() {
        let cpuid = |leaf, subleaf| cpuid_at(CpuLevel::V1, leaf, subleaf);
        let [eax, _, ecx, edx] = cpuid(1, 0);
        assert_eq!((eax >> 8) & 0xf, 6);
        assert_eq!(ecx, 0, "no sse3, ssse3, sse4, popcnt, avx, xsave");
        for bit in [0, 4, 8, 15, 19, 23, 24, 25, 26] {
            assert_ne!(edx & (1 << bit), 0, "leaf 1 edx bit {bit}");
        }
        assert_eq!(cpuid(7, 0), [0; 4]);
        assert_eq!(cpuid(0xd, 0), [0; 4]);
        assert_eq!(cpuid(0x4000_0000, 0), [0; 4]);
        let ext = cpuid(0x8000_0001, 0);
        assert_eq!(ext[2] & 1, 1, "lahf_lm");
        assert_eq!(ext[3] & (1 << 29 | 1 << 11 | 1 << 20), 1 << 29 | 1 << 11 | 1 << 20);
    }

    #[test]
    fn cache_leaf_sizes() {
        let size = |sub| {
            let [_, ebx, ecx, _] = cpuid(4, sub);
            ((ebx >> 22) + 1) * ((ebx >> 12 & 0x3ff) + 1) * ((ebx & 0xfff) + 1) * (ecx + 1)
        };
        assert_eq!(size(0), 32 << 10);
        assert_eq!(size(1), 32 << 10);
        assert_eq!(size(2), 256 << 10);
        assert_eq!(size(3), 8 << 20);
        assert_eq!(cpuid(4, 4), [0; 4]);
    }

    #[test]
    fn helper_zero_extends() {
        let mut s = GuestState::default();
        s.gpr[RAX] = 0xffff_ffff_0000_0000;
        s.gpr[RCX] = 0xdead_beef_0000_0000;
        s.gpr[RBX] = u64::MAX;
        s.gpr[RDX] = u64::MAX;
        run_cpuid(&mut s);
        assert_eq!(s.gpr[RAX], u64::from(MAX_BASIC_LEAF));
        assert_eq!(s.gpr[RBX] >> 32, 0);
        assert_eq!(s.gpr[RDX] >> 32, 0);
    }

    #[test]
    fn rdtsc_is_monotonic() {
        let mut s = GuestState::default();
        run_rdtsc(&mut s);
        let first = s.gpr[RDX] << 32 | s.gpr[RAX];
        run_rdtsc(&mut s);
        let second = s.gpr[RDX] << 32 | s.gpr[RAX];
        assert!(second >= first);
        assert!(s.gpr[RAX] <= 0xffff_ffff);
    }

    #[test]
    fn cpuinfo_flags_are_the_cpuid_bits() {
        let text = cpuinfo();
        let flags = text.lines().find_map(|l| l.strip_prefix("flags\t\t: ")).expect("a flags line");
        assert_eq!(flags, "fpu tsc cx8 cmov clflush mmx fxsr sse sse2 syscall nx lm lahf_lm");
        assert!(text.contains("model name\t: aarchx virtual x86-64 CPU\n"));
        assert!(text.contains("cpu family\t: 6\nmodel\t\t: 15\n"));
    }
}
