/* Freestanding program that exits with status 42 via exit_group. No libc. */
        .intel_syntax noprefix
        .text
        .globl _start
_start:
        mov     edi, 40
        add     edi, 2                  /* status = 42, computed */
        mov     eax, 231                /* SYS_exit_group */
        syscall
        hlt

        .section .note.GNU-stack, "", @progbits
