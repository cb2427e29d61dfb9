/* Freestanding program that executes ud2 after a write: must die with SIGILL. No libc. */
        .intel_syntax noprefix
        .section .rodata
msg:    .ascii "about to execute ud2\n"
        .set msg_len, . - msg

        .text
        .globl _start
_start:
        mov     eax, 1                  /* SYS_write */
        mov     edi, 2                  /* fd = stderr */
        lea     rsi, [rip + msg]
        mov     edx, msg_len
        syscall
        ud2
        mov     eax, 231                /* not reached: exit_group(0) */
        xor     edi, edi
        syscall

        .section .note.GNU-stack, "", @progbits
