// Ring-3 contract-check program `msa_abi` (see `proc.rs`): transitional, raw numbers.
    // ---- macros -----------------------------------------------------------------------
.macro TP_SYS nr
    mov eax, \nr
    syscall
.endm
.macro TP_FAIL code
    mov edi, \code
    mov eax, 231
    syscall
    ud2
.endm
.macro TP_EXPECT value, code
    cmp rax, \value
    je .Ltp_ok\@
    TP_FAIL \code
.Ltp_ok\@:
.endm
.macro TP_CHECK cc, code
    j\cc .Ltp_ck\@
    TP_FAIL \code
.Ltp_ck\@:
.endm
    // rbx = result area: set done, sleep 1 ms at a time until go.
.macro TP_HANDSHAKE
    mov qword ptr [rbx + 0xf00], 1
.Ltp_hs\@:
    cmp qword ptr [rbx + 0xf08], 0
    jne .Ltp_hsd\@
    mov qword ptr [rbx + 0x400], 0
    mov qword ptr [rbx + 0x408], 1000000
    lea rdi, [rbx + 0x400]
    xor esi, esi
    TP_SYS 35
    jmp .Ltp_hs\@
.Ltp_hsd\@:
.endm
    // nanosleep(sec, nsec) with the timespec at [rsp] (rsp must have 16 free bytes).
.macro TP_SLEEP sec, nsec
    mov qword ptr [rsp], \sec
    mov qword ptr [rsp + 8], \nsec
    mov rdi, rsp
    xor esi, esi
    TP_SYS 35
.endm
    // ---- spawner ----------------------------------------------------------------------
    mov r15, rdi                        // 1: accounting compiled in
    sub rsp, 0x200
    mov rbx, rsp
    mov edi, 13                         // unknown which
    mov esi, 3
    mov rdx, rbx
    TP_SYS 502
    TP_EXPECT -22, 1
    mov edi, 14                         // more timers than there are
    xor esi, esi
    mov rdx, rbx
    TP_SYS 502
    TP_EXPECT -22, 2
    mov edi, -1                         // negative
    xor esi, esi
    mov rdx, rbx
    TP_SYS 502
    TP_EXPECT -22, 3
    xor edi, edi                        // none at all: fine, even with NULL
    xor esi, esi
    xor edx, edx
    TP_SYS 502
    TP_EXPECT 0, 4
    mov edi, 13                         // NULL
    xor esi, esi
    xor edx, edx
    TP_SYS 502
    TP_EXPECT -14, 5
    mov edi, 13                         // the kernel
    mov esi, 2
    mov rdx, 0xffff800000000000
    TP_SYS 502
    TP_EXPECT -14, 6
    mov edi, 13                         // read-only code
    mov esi, 2
    lea rdx, [rip + tally_uprog_msa_abi_start]
    TP_SYS 502
    TP_EXPECT -14, 7
    mov rax, 0xaaaaaaaaaaaaaaaa         // fill, ask for 3
    mov ecx, 13
    mov rdi, rbx
    rep stosq
    mov edi, 3
    mov esi, 2
    mov rdx, rbx
    TP_SYS 502
    TP_EXPECT 0, 8
    mov rcx, 0xaaaaaaaaaaaaaaaa
    cmp [rbx + 24], rcx
    TP_CHECK e, 9
    cmp [rbx + 16], rcx
    TP_CHECK ne, 10
    mov ecx, 2000000                    // some user time
.Lma_spin:
    dec ecx
    jnz .Lma_spin
    mov edi, 13
    mov esi, 2
    mov rdx, rbx
    TP_SYS 502
    TP_EXPECT 0, 11
    test r15, r15
    jz .Lma_noacct
    cmp qword ptr [rbx], 0
    TP_CHECK ne, 12
    cmp qword ptr [rbx + 8], 0
    TP_CHECK ne, 13
.Lma_noacct:
    mov edi, 13                         // no children: all zero
    mov esi, 1
    lea rdx, [rbx + 0x100]
    TP_SYS 502
    TP_EXPECT 0, 14
    xor eax, eax
    mov ecx, 13
.Lma_zero:
    or rax, [rbx + rcx * 8 + 0xf8]
    dec ecx
    jnz .Lma_zero
    TP_EXPECT 0, 15
    mov edi, 13                         // the process: at least the thread's user time
    xor esi, esi
    lea rdx, [rbx + 0x100]
    TP_SYS 502
    TP_EXPECT 0, 16
    mov rax, [rbx + 0x100]
    cmp rax, [rbx]
    TP_CHECK ae, 17
    mov rax, 0xaaaaaaaaaaaaaaaa         // int arguments: only the low 32 bits count
    mov [rbx + 16], rax
    mov rdi, 0x100000002
    mov rsi, 0x500000002
    mov rdx, rbx
    TP_SYS 502
    TP_EXPECT 0, 18
    mov rcx, 0xaaaaaaaaaaaaaaaa
    cmp [rbx + 16], rcx
    TP_CHECK e, 19
    xor edi, edi
    TP_SYS 60
    ud2
.purgem TP_SYS
.purgem TP_FAIL
.purgem TP_EXPECT
.purgem TP_CHECK
.purgem TP_HANDSHAKE
.purgem TP_SLEEP
