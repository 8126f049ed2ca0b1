// Ring-3 contract-check program `threads` (see `proc.rs`): transitional, raw numbers.
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
    mov r15, rdi
    mov rbx, 0x7ffffffef000
    lea rsp, [rbx - 0x1000]
    sub rsp, 0x40
    TP_SYS 39
    mov rbp, rax                        // pid
    xor edi, edi                        // 4 stacks of 64 KiB
    mov esi, 0x40000
    mov edx, 3
    mov r10d, 0x22
    mov r8, -1
    xor r9d, r9d
    TP_SYS 9
    cmp rax, 0
    TP_CHECK g, 4
    mov r14, rax
    cmp r15, 1
    je .Ltt_m1
    cmp r15, 2
    je .Ltt_m2
    cmp r15, 3
    je .Ltt_m3
    cmp r15, 4
    je .Ltt_m4
    // mode 0: bad arguments, then three workers and msa
    mov rdi, 0xffff800000000000
    lea rsi, [r14 + 0x10000]
    xor edx, edx
    TP_SYS 501
    TP_EXPECT -22, 1
    lea rdi, [rip + .Ltt_w0]
    mov esi, 0xdead0000
    xor edx, edx
    TP_SYS 501
    TP_EXPECT -14, 2
    lea rdi, [rip + .Ltt_w0]
    mov rsi, 0x800000000008
    xor edx, edx
    TP_SYS 501
    TP_EXPECT -22, 3
    xor r12d, r12d
.Ltt_m0c:
    lea rdi, [rip + .Ltt_w0]
    lea rsi, [r12 + 1]
    shl rsi, 16
    add rsi, r14
    mov rdx, r12
    TP_SYS 501
    cmp rax, 0
    TP_CHECK g, 5
    cmp rax, rbp
    TP_CHECK ne, 6
    inc r12
    cmp r12, 3
    jb .Ltt_m0c
    mov r12d, 2000000
.Ltt_m0w:
    cmp qword ptr [rbx + 0x800], 3
    je .Ltt_m0d
    TP_SYS 24
    dec r12d
    jnz .Ltt_m0w
    TP_FAIL 7
.Ltt_m0d:
    TP_SYS 39                           // still the same process
    TP_EXPECT rbp, 8
    mov edi, 13                         // msa(13, MSA_SELF, area + 0x100)
    xor esi, esi
    lea rdx, [rbx + 0x100]
    TP_SYS 502
    TP_EXPECT 0, 9
    mov edi, 13                         // msa(13, MSA_THREAD, area + 0x200)
    mov esi, 2
    lea rdx, [rbx + 0x200]
    TP_SYS 502
    TP_EXPECT 0, 10
    TP_HANDSHAKE
    xor edi, edi
    TP_SYS 231
    ud2
    // mode 1: exit_group while a thread spins, one sleeps 100 s, one reads the console
.Ltt_m1:
    lea rdi, [rip + .Ltt_spin_forever]
    lea rsi, [r14 + 0x10000]
    xor edx, edx
    TP_SYS 501
    cmp rax, 0
    TP_CHECK g, 11
    lea rdi, [rip + .Ltt_sleep_long]
    lea rsi, [r14 + 0x20000]
    xor edx, edx
    TP_SYS 501
    cmp rax, 0
    TP_CHECK g, 12
    lea rdi, [rip + .Ltt_read_stdin]
    lea rsi, [r14 + 0x30000]
    xor edx, edx
    TP_SYS 501
    cmp rax, 0
    TP_CHECK g, 13
    TP_SLEEP 0, 30000000
    mov edi, 7
    TP_SYS 231
    ud2
    // mode 2: a thread dies of an invalid opcode while the others sleep
.Ltt_m2:
    lea rdi, [rip + .Ltt_sleep_long]
    lea rsi, [r14 + 0x10000]
    xor edx, edx
    TP_SYS 501
    cmp rax, 0
    TP_CHECK g, 21
    lea rdi, [rip + .Ltt_ud2]
    lea rsi, [r14 + 0x20000]
    xor edx, edx
    TP_SYS 501
    cmp rax, 0
    TP_CHECK g, 22
    TP_SLEEP 100, 0
    TP_FAIL 97
    // mode 3: the leader exits (5) before its thread (9)
.Ltt_m3:
    lea rdi, [rip + .Ltt_late_exit]
    lea rsi, [r14 + 0x10000]
    xor edx, edx
    TP_SYS 501
    cmp rax, 0
    TP_CHECK g, 31
    mov edi, 5
    TP_SYS 60
    ud2
    // mode 4: a thread calls exit_group(3) while the leader sleeps
.Ltt_m4:
    lea rdi, [rip + .Ltt_group_exit]
    lea rsi, [r14 + 0x10000]
    xor edx, edx
    TP_SYS 501
    cmp rax, 0
    TP_CHECK g, 41
    TP_SLEEP 100, 0
    TP_FAIL 96
    // the threads' code
.Ltt_w0:                                // worker: spin, sleep 5 ms, count, exit
    mov r12, rdi
    mov ecx, 3000000
.Ltt_w0s:
    dec ecx
    jnz .Ltt_w0s
    sub rsp, 40
    TP_SLEEP 0, 5000000
    TP_SYS 186
    mov rbx, 0x7ffffffef000
    mov [rbx + r12 * 8 + 0x810], rax
    lock inc qword ptr [rbx + 0x800]
    xor edi, edi
    TP_SYS 60
    ud2
.Ltt_spin_forever:
    pause
    jmp .Ltt_spin_forever
.Ltt_sleep_long:
    sub rsp, 40
    TP_SLEEP 100, 0
    TP_FAIL 99
.Ltt_read_stdin:
    sub rsp, 40
    xor edi, edi
    mov rsi, rsp
    mov edx, 1
    TP_SYS 0
    TP_FAIL 98
.Ltt_ud2:
    mov ecx, 1000000
.Ltt_ud2s:
    dec ecx
    jnz .Ltt_ud2s
    ud2
.Ltt_late_exit:
    sub rsp, 40
    TP_SLEEP 0, 20000000
    mov edi, 9
    TP_SYS 60
    ud2
.Ltt_group_exit:
    sub rsp, 40
    TP_SLEEP 0, 10000000
    mov edi, 3
    TP_SYS 231
    ud2
.purgem TP_SYS
.purgem TP_FAIL
.purgem TP_EXPECT
.purgem TP_CHECK
.purgem TP_HANDSHAKE
.purgem TP_SLEEP
