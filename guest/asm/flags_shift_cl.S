/* Shifts and rotates by cl == 0 leave every flag as it was: a translator
 * that thinks they write the flags drops a compare's flags at a region's
 * exit and the jcc after the shift goes the wrong way. Each case: flags
 * made stale by a system call (a region boundary), a compare that sets the
 * flag the jcc reads, a branch to a new region whose first instruction is
 * the shift by cl == 0, then the jcc. Prints one line per case: the shift,
 * and "taken" (what the CPU does) or "not taken". No libc. */
        .intel_syntax noprefix

        .macro  PRINT text, len
        mov     eax, 1                  /* SYS_write */
        mov     edi, 1
        lea     rsi, [rip + \text]
        mov     edx, \len
        syscall
        .endm

        /* \shift by cl == 0 after \compare; \jcc tests the compare's flag. */
        .macro  CASE name, shift, compare, jcc
        .section .rodata
name_\@: .ascii "\name "
        .text
        mov     edx, 1
        test    edx, edx                /* ZF=0, CF=0: the stale flags */
        mov     eax, 39                 /* SYS_getpid: the region ends */
        syscall
        mov     ecx, 0                  /* cl = 0, flags untouched */
        mov     edx, 1
        \compare
        \jcc    1f
        PRINT   broken, 7
        jmp     3f
1:      \shift                          /* a region of its own starts here */
        \jcc    2f
        PRINT   name_\@, 4
        PRINT   not_taken, 10
        jmp     3f
2:      PRINT   name_\@, 4
        PRINT   taken, 6
3:
        .endm

        .section .rodata
taken:  .ascii "taken\n"
not_taken: .ascii "not taken\n"
broken: .ascii "broken\n"

        .text
        .globl _start
_start:
        CASE    shl, "shl edx, cl", "cmp edx, edx", jz
        CASE    shr, "shr edx, cl", "cmp edx, edx", jz
        CASE    sar, "sar edx, cl", "cmp edx, edx", jz
        CASE    shd, "shld edx, eax, cl", "cmp edx, edx", jz
        CASE    srd, "shrd edx, eax, cl", "cmp edx, edx", jz
        CASE    rol, "rol edx, cl", "cmp edx, 2", jc
        CASE    ror, "ror edx, cl", "cmp edx, 2", jc
        CASE    rcl, "rcl edx, cl", "cmp edx, 2", jc
        CASE    rcr, "rcr edx, cl", "cmp edx, 2", jc
        CASE    sal, "sal rdx, cl", "cmp edx, 2", js
        mov     eax, 231                /* SYS_exit_group */
        xor     edi, edi
        syscall
        hlt

        .section .note.GNU-stack, "", @progbits
