//! The initial guest stack, laid out as the x86-64 Linux kernel does at
//! execve: argc, argv pointers, NULL, envp pointers, NULL, the auxiliary
//! vector ending in AT_NULL, then the strings and AT_RANDOM's bytes above,
//! with rsp (pointing at argc) 16-byte aligned as the SysV ABI requires.
//! Built as a byte image in ordinary memory; the loader copies it in.

/// Auxiliary vector entry types (the same numbers on every Linux ABI).
pub const AT_NULL: u64 = 0;
pub const AT_PHDR: u64 = 3;
pub const AT_PHENT: u64 = 4;
pub const AT_PHNUM: u64 = 5;
pub const AT_PAGESZ: u64 = 6;
pub const AT_BASE: u64 = 7;
pub const AT_FLAGS: u64 = 8;
pub const AT_ENTRY: u64 = 9;
pub const AT_UID: u64 = 11;
pub const AT_EUID: u64 = 12;
pub const AT_GID: u64 = 13;
pub const AT_EGID: u64 = 14;
pub const AT_PLATFORM: u64 = 15;
pub const AT_HWCAP: u64 = 16;
pub const AT_CLKTCK: u64 = 17;
pub const AT_SECURE: u64 = 23;
pub const AT_RANDOM: u64 = 25;
pub const AT_HWCAP2: u64 = 26;
pub const AT_EXECFN: u64 = 31;

/// What goes on the initial stack besides the auxiliary entries that point
/// into it (AT_RANDOM, AT_PLATFORM, AT_EXECFN), which are added here.
pub struct StackContents<'a> {
    pub argv: &'a [&'a [u8]],
    pub envp: &'a [&'a [u8]],
    /// The program path as passed to execve, for AT_EXECFN.
    pub execfn: &'a [u8],
    /// AT_RANDOM's bytes.
    pub random: [u8; 16],
    /// The other auxiliary entries, in order, without AT_NULL.
    pub aux: &'a [(u64, u64)],
}

/// The stack image: its bytes occupy `[rsp, top)`.
pub struct StackImage {
    pub rsp: u64,
    pub bytes: Vec<u8>,
    /// The auxiliary vector as placed, AT_NULL included.
    pub auxv: Vec<(u64, u64)>,
}

const PLATFORM: &[u8] = b"x86_64";

/// Lays out the initial stack for a stack whose highest address is `top`
/// (16-byte aligned).
pub fn build(top: u64, c: &StackContents<'_>) -> StackImage {
    debug_assert_eq!(top % 16, 0);
    let strings_len: u64 = c.argv.iter().chain(c.envp).chain([&c.execfn]).map(|s| s.len() as u64 + 1).sum();
    // From the top down: an 8-byte end marker, the argv, envp and execfn
    // strings (ascending), the platform string, the random bytes.
    let strings_at = top - 8 - strings_len;
    let platform_at = strings_at - PLATFORM.len() as u64 - 1;
    let random_at = (platform_at - 16) & !15;

    let mut aux: Vec<(u64, u64)> = c.aux.to_vec();
    let mut at = strings_at;
    let mut place = |s: &[u8]| {
        let addr = at;
        at += s.len() as u64 + 1;
        addr
    };
    let argv: Vec<u64> = c.argv.iter().map(|s| place(s)).collect();
    let envp: Vec<u64> = c.envp.iter().map(|s| place(s)).collect();
    let execfn_at = place(c.execfn);
    aux.extend([(AT_RANDOM, random_at), (AT_PLATFORM, platform_at), (AT_EXECFN, execfn_at), (AT_NULL, 0)]);

    let words = 1 + argv.len() + 1 + envp.len() + 1 + 2 * aux.len();
    let rsp = (random_at - 8 * words as u64) & !15;

    let mut bytes = vec![0u8; (top - rsp) as usize];
    let mut put = |addr: u64, data: &[u8]| {
        let off = (addr - rsp) as usize;
        bytes[off..off + data.len()].copy_from_slice(data);
    };
    let mut vector: Vec<u64> = vec![argv.len() as u64];
    vector.extend(&argv);
    vector.push(0);
    vector.extend(&envp);
    vector.push(0);
    vector.extend(aux.iter().flat_map(|&(k, v)| [k, v]));
    let vector: Vec<u8> = vector.iter().flat_map(|w| w.to_le_bytes()).collect();
    put(rsp, &vector);
    put(random_at, &c.random);
    put(platform_at, PLATFORM);
    let mut at = strings_at;
    for s in c.argv.iter().chain(c.envp).chain([&c.execfn]) {
        put(at, s);
        at += s.len() as u64 + 1;
    }
    StackImage { rsp, bytes, auxv: aux }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads back a stack image the way a C runtime would.
    struct Parsed {
        argv: Vec<Vec<u8>>,
        envp: Vec<Vec<u8>>,
        aux: Vec<(u64, u64)>,
    }

    fn parse(img: &StackImage) -> Parsed {
        let word = |addr: u64| {
            let off = (addr - img.rsp) as usize;
            u64::from_le_bytes(img.bytes[off..off + 8].try_into().unwrap())
        };
        let string = |addr: u64| {
            let off = (addr - img.rsp) as usize;
            let len = img.bytes[off..].iter().position(|b| *b == 0).unwrap();
            img.bytes[off..off + len].to_vec()
        };
        let argc = word(img.rsp);
        let mut at = img.rsp + 8;
        let argv = (0..argc).map(|i| string(word(at + 8 * i))).collect();
        at += 8 * argc;
        assert_eq!(word(at), 0, "argv ends in NULL");
        at += 8;
        let mut envp = Vec::new();
        while word(at) != 0 {
            envp.push(string(word(at)));
            at += 8;
        }
        at += 8;
        let mut aux = Vec::new();
        loop {
            let (k, v) = (word(at), word(at + 8));
            aux.push((k, v));
            at += 16;
            if k == AT_NULL {
                break;
            }
        }
        Parsed { argv, envp, aux }
    }

    #[test]
    fn layout_parses_back() {
        let top = 0x7fff_0000_0000;
        let argv: [&[u8]; 3] = [b"/bin/prog", b"one", b""];
        let envp: [&[u8]; 2] = [b"HOME=/root", b"A=b"];
        let random = *b"0123456789abcdef";
        let aux = [(AT_PAGESZ, 4096), (AT_ENTRY, 0x401000)];
        let img = build(top, &StackContents { argv: &argv, envp: &envp, execfn: b"prog", random, aux: &aux });
        assert_eq!(img.rsp % 16, 0, "rsp is 16-byte aligned at entry");
        assert_eq!(img.rsp + img.bytes.len() as u64, top);
        assert_eq!(&img.bytes[img.bytes.len() - 8..], &[0; 8], "end marker");
        let p = parse(&img);
        assert_eq!(p.argv, argv.map(<[u8]>::to_vec));
        assert_eq!(p.envp, envp.map(<[u8]>::to_vec));
        let get = |k| p.aux.iter().find(|(key, _)| *key == k).map(|(_, v)| *v).unwrap();
        assert_eq!(get(AT_PAGESZ), 4096);
        assert_eq!(get(AT_ENTRY), 0x401000);
        assert_eq!(p.aux.last(), Some(&(AT_NULL, 0)));
        let bytes_at = |addr: u64, n: usize| img.bytes[(addr - img.rsp) as usize..][..n].to_vec();
        assert_eq!(bytes_at(get(AT_RANDOM), 16), random);
        assert_eq!(bytes_at(get(AT_PLATFORM), 7), b"x86_64\0");
        assert_eq!(bytes_at(get(AT_EXECFN), 5), b"prog\0");
        assert!(get(AT_RANDOM) >= img.rsp + 8 * (1 + 4 + 3 + 2 * p.aux.len() as u64), "vectors below the data");
    }

    #[test]
    fn alignment_holds_for_any_string_lengths() {
        for n in 0..20 {
            let arg = vec![b'x'; n];
            let argv: Vec<&[u8]> = (0..n % 4 + 1).map(|_| &arg[..]).collect();
            let img =
                build(0x10_0000, &StackContents { argv: &argv, envp: &[], execfn: &arg, random: [0; 16], aux: &[] });
            assert_eq!(img.rsp % 16, 0);
            assert_eq!(parse(&img).argv.len(), argv.len());
        }
    }
}
