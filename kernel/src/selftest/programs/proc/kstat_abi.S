// Ring-3 contract-check program `kstat_abi` (see `proc.rs`): transitional, raw numbers.
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
    mov r15, rdi                        // a KID that was deleted
    sub rsp, 0x400
    mov rbx, rsp
    xor edi, edi                        // 64 KiB for the data
    mov esi, 0x10000
    mov edx, 3
    mov r10d, 0x22
    mov r8, -1
    xor r9d, r9d
    TP_SYS 9
    cmp rax, 0
    TP_CHECK g, 30
    mov r14, rax
    xor edi, edi                        // kstat_chain(NULL, 0, &needed): ENOMEM + size
    xor esi, esi
    mov rdx, rbx
    TP_SYS 503
    TP_EXPECT -12, 1
    mov r12, [rbx]
    cmp r12, 136
    TP_CHECK ae, 2
    mov rax, r12
    xor edx, edx
    mov ecx, 136
    div rcx
    test rdx, rdx
    TP_CHECK z, 3
    mov rdi, r14                        // the chain: KCID, headers, KID 0 first
    mov esi, 0x10000
    mov rdx, rbx
    TP_SYS 503
    cmp rax, 0
    TP_CHECK ge, 4
    mov r13, rax
    mov rax, [rbx]
    xor edx, edx
    mov ecx, 136
    div rcx
    test rdx, rdx
    TP_CHECK z, 5
    cmp qword ptr [r14 + 8], 0
    TP_CHECK e, 6
    cmp qword ptr [r14 + 136 + 8], 1
    TP_CHECK e, 7
    mov rdi, r14                        // one byte short
    mov rsi, [rbx]
    dec rsi
    xor edx, edx
    TP_SYS 503
    TP_EXPECT -12, 8
    mov edi, 0xdead0000                 // bad buffer
    mov esi, 0x10000
    xor edx, edx
    TP_SYS 503
    TP_EXPECT -14, 9
    mov rdi, r14                        // bad size pointer
    mov esi, 0x10000
    mov rdx, 0xffff800000000000
    TP_SYS 503
    TP_EXPECT -14, 10
    mov rdi, -1                         // negative KID
    mov rsi, r14
    mov edx, 4096
    xor r10d, r10d
    TP_SYS 504
    TP_EXPECT -6, 11
    mov rdi, 0x10000000000              // a KID never made
    mov rsi, r14
    mov edx, 4096
    xor r10d, r10d
    TP_SYS 504
    TP_EXPECT -6, 12
    mov rdi, r15                        // a KID deleted before we started
    mov rsi, r14
    mov edx, 4096
    xor r10d, r10d
    TP_SYS 504
    TP_EXPECT -6, 13
    mov edi, 1                          // kstat_types with no room: ENOMEM + header
    mov rsi, r14
    xor edx, edx
    lea r10, [rbx + 16]
    TP_SYS 504
    TP_EXPECT -12, 14
    cmp qword ptr [rbx + 32], 1         // info.header.ks_kid
    TP_CHECK e, 15
    cmp qword ptr [rbx + 144], 240      // info.header.ks_data_size: 5 named records
    TP_CHECK e, 16
    mov edi, 1                          // read it
    mov rsi, r14
    mov edx, 0x10000
    lea r10, [rbx + 16]
    TP_SYS 504
    TP_EXPECT 240, 17
    cmp [rbx + 16], r13                 // info.kcid
    TP_CHECK ge, 18
    mov r12, [rbx + 152]                // info.header.ks_snaptime
    mov ecx, 200000
.Lka_spin:
    dec ecx
    jnz .Lka_spin
    mov edi, 1                          // again: a later snaptime
    mov rsi, r14
    mov edx, 0x10000
    lea r10, [rbx + 16]
    TP_SYS 504
    TP_EXPECT 240, 19
    cmp [rbx + 152], r12
    TP_CHECK g, 20
    mov edi, 1                          // bad buffer, bad info
    mov esi, 0xdead0000
    mov edx, 0x10000
    xor r10d, r10d
    TP_SYS 504
    TP_EXPECT -14, 21
    mov edi, 1
    mov rsi, r14
    mov edx, 0x10000
    mov r10d, 0xdead0000
    TP_SYS 504
    TP_EXPECT -14, 22
    xor edi, edi                        // first disk request: IRQ 14 fires, kstats appear
    mov rsi, r14
    mov edx, 1
    TP_SYS 505
    TP_EXPECT 1, 23
    mov edi, 1
    mov rsi, r14
    mov edx, 0x10000
    lea r10, [rbx + 16]
    TP_SYS 504
    TP_EXPECT 240, 24
    cmp [rbx + 16], r13                 // the chain changed: our copy is stale
    TP_CHECK g, 25
    xor edi, edi
    TP_SYS 60
    ud2
.purgem TP_SYS
.purgem TP_FAIL
.purgem TP_EXPECT
.purgem TP_CHECK
.purgem TP_HANDSHAKE
.purgem TP_SLEEP
