// Ring-3 contract-check program `waiter` (see `proc.rs`): transitional, raw numbers.
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
    mov rbx, 0x7ffffffef000
    lea rsp, [rbx - 0x1000]
    sub rsp, 0x100
    mov rdi, -1                         // no children yet
    xor esi, esi
    xor edx, edx
    xor r10d, r10d
    TP_SYS 61
    TP_EXPECT -10, 1
    xor edi, edi                        // pid 0: a process group
    TP_SYS 61
    TP_EXPECT -22, 2
    mov rdi, -7                         // pid < -1: a process group
    TP_SYS 61
    TP_EXPECT -22, 3
    mov rdi, -1                         // an unknown option
    mov edx, 0x100
    TP_SYS 61
    TP_EXPECT -22, 4
    lea rax, [rip + .Ltw_spin]          // spawn /bin/spin 30
    mov [rsp], rax
    mov qword ptr [rsp + 8], 4
    lea rax, [rip + .Ltw_30]
    mov [rsp + 16], rax
    mov qword ptr [rsp + 24], 2
    lea rdi, [rip + .Ltw_path]
    mov esi, 9
    mov rdx, rsp
    mov r10d, 2
    TP_SYS 500
    cmp rax, 0
    TP_CHECK g, 5
    mov r12, rax
    mov rdi, r12                        // WNOHANG: still running
    lea rsi, [rbx + 0x300]
    mov edx, 1
    xor r10d, r10d
    TP_SYS 61
    TP_EXPECT 0, 6
    mov rdi, r12                        // a bad status pointer: EFAULT, child kept
    mov esi, 0xdead0000
    xor edx, edx
    xor r10d, r10d
    TP_SYS 61
    TP_EXPECT -14, 7
    mov rdi, r12                        // a bad rusage pointer: the same
    lea rsi, [rbx + 0x300]
    xor edx, edx
    mov r10, 0xffff800000000000
    TP_SYS 61
    TP_EXPECT -14, 8
    mov rdi, r12                        // reap it, with its rusage
    lea rsi, [rbx + 0x300]
    xor edx, edx
    lea r10, [rbx]
    TP_SYS 61
    TP_EXPECT r12, 9
    mov [rbx + 0x308], r12              // the child's pid, for the test
    cmp dword ptr [rbx + 0x300], 0
    TP_CHECK e, 10
    mov rdi, r12                        // gone now
    lea rsi, [rbx + 0x300]
    xor edx, edx
    xor r10d, r10d
    TP_SYS 61
    TP_EXPECT -10, 11
    mov edi, 13                         // msa(13, MSA_CHILDREN, area + 0x100)
    mov esi, 1
    lea rdx, [rbx + 0x100]
    TP_SYS 502
    TP_EXPECT 0, 12
    mov rax, [rbx + 0x100]              // ONCPU_USR ns / 1000 == ru_utime in us
    xor edx, edx
    mov ecx, 1000
    div rcx
    imul rcx, qword ptr [rbx], 1000000
    add rcx, qword ptr [rbx + 8]
    cmp rax, rcx
    TP_CHECK e, 13
    TP_HANDSHAKE
    xor edi, edi
    TP_SYS 231
    ud2
.Ltw_path:
    .ascii "/bin/spin"
.Ltw_spin:
    .ascii "spin"
.Ltw_30:
    .ascii "30"
.purgem TP_SYS
.purgem TP_FAIL
.purgem TP_EXPECT
.purgem TP_CHECK
.purgem TP_HANDSHAKE
.purgem TP_SLEEP
