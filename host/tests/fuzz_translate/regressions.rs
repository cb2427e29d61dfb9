//! Sequences the fuzzer once found differing, shrunk and pasted here as the
//! report prints them (code assembled for an arena whose code page is at 0,
//! see `native::layout_at`; rsp in that arena's buffer). Each runs before
//! every batch and must agree with the CPU.

/// One pasted case.
pub struct Regression {
    /// What went wrong, and where it was fixed.
    pub what: &'static str,
    pub code: &'static [u8],
    pub gpr: [u64; 16],
    /// cf pf af zf sf of df.
    pub flags: [u8; 7],
    /// The XMM registers that are not zero.
    pub xmm: &'static [(usize, u128)],
    /// The buffer: `states::random_case`'s bytes for this seed, or zeros.
    pub buffer: Option<u64>,
}

pub static REGRESSIONS: &[Regression] = &[
    Regression {
        what: "dead-flags took the flags at a jcc target for dead because iced says shrd by cl writes them \
               all; with cl == 0 it writes none (found before b11c48b: the pipeline lost the cmp's flags)",
        // +0x000  48 bd f9 ff ff ff ff ff ff ff    mov rbp,0FFFFFFFFFFFFFFF9h
        // +0x00a  48 bf c2 35 00 00 00 00 00 00    mov rdi,35C2h  ; buf+0x5c2
        // +0x014  81 7c af 82 3d 94 92 40          cmp dword ptr [rdi+rbp*4-7Eh],4092943Dh
        // +0x01c  7e 00                            jle +0x1e
        // +0x01e  45 0f ad ff                      shrd r15d,r15d,cl
        // +0x022  (end)
        code: &[
            0x48, 0xbd, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x48, 0xbf, 0xc2, 0x35, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x81, 0x7c, 0xaf, 0x82, 0x3d, 0x94, 0x92, 0x40, 0x7e, 0x00, 0x45, 0x0f, 0xad, 0xff,
        ],
        gpr: [0x0, 0x0, 0x0, 0x0, 0x3618, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
        flags: [0, 0, 0, 0, 0, 0, 0],
        xmm: &[],
        buffer: None,
    },
    Regression {
        what: "const-fold evaluated a concat of two constants and panicked (the shld si,si,cl lift; \
               found before a3d94f2)",
        // +0x000  48 bf ec ff ff ff ff ff ff ff    mov rdi,0FFFFFFFFFFFFFFECh
        // +0x00a  48 be 98 3a 00 00 00 00 00 00    mov rsi,3A98h  ; buf+0xa98
        // +0x014  f0 48 19 4c be f0                lock sbb [rsi+rdi*4-10h],rcx
        // +0x01a  48 b9 e2 00 00 00 00 00 00 00    mov rcx,0E2h
        // +0x024  66 0f a5 f6                      shld si,si,cl
        // +0x028  (end)
        code: &[
            0x48, 0xbf, 0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x48, 0xbe, 0x98, 0x3a, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0xf0, 0x48, 0x19, 0x4c, 0xbe, 0xf0, 0x48, 0xb9, 0xe2, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x66, 0x0f, 0xa5, 0xf6,
        ],
        gpr: [0x0, 0x0, 0x0, 0x0, 0x36d8, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0],
        flags: [0, 0, 0, 0, 0, 0, 0],
        xmm: &[],
        buffer: None,
    },
];
