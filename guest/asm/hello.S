/* Freestanding hello: write(1, msg, len) then exit_group(0). No libc. */
        .intel_syntax noprefix
        .section .rodata
msg:    .ascii "Hello from freestanding x86-64!\n"
        .set msg_len, . - msg

        .text
        .globl _start
_start:
        mov     eax, 1                  /* SYS_write */
        mov     edi, 1                  /* fd = stdout */
        lea     rsi, [rip + msg]
        mov     edx, msg_len
        syscall
        mov     eax, 231                /* SYS_exit_group */
        xor     edi, edi
        syscall
        hlt

        .section .note.GNU-stack, "", @progbits
