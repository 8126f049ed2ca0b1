// Ring-3 contract-check program `spawner` (see `proc.rs`): transitional, raw numbers.
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
    mov r12, rdi
    sub rsp, 0x200
    mov rbx, rsp
    lea rax, [rip + .Ltps_hello]
    mov [rbx + 0x10], rax
    mov qword ptr [rbx + 0x18], 5
    lea rdi, [rip + .Ltps_nope]         // no such program
    mov esi, 9
    lea rdx, [rbx + 0x10]
    mov r10d, 1
    TP_SYS 500
    TP_EXPECT -2, 10
    lea rdi, [rip + .Ltps_path]         // "/bin": a directory
    mov esi, 4
    lea rdx, [rbx + 0x10]
    mov r10d, 1
    TP_SYS 500
    TP_EXPECT -2, 11
    lea rdi, [rip + .Ltps_path]         // path too long
    mov esi, 5000
    lea rdx, [rbx + 0x10]
    mov r10d, 1
    TP_SYS 500
    TP_EXPECT -36, 12
    lea rdi, [rip + .Ltps_path]         // too many arguments
    mov esi, 10
    lea rdx, [rbx + 0x10]
    mov r10d, 300
    TP_SYS 500
    TP_EXPECT -7, 13
    mov edi, 0xdead0000                 // path at nothing
    mov esi, 4
    lea rdx, [rbx + 0x10]
    mov r10d, 1
    TP_SYS 500
    TP_EXPECT -14, 14
    mov rax, 0xffff800000000000         // an argument in the kernel
    mov [rbx + 0x20], rax
    mov qword ptr [rbx + 0x28], 4
    lea rdi, [rip + .Ltps_path]
    mov esi, 10
    lea rdx, [rbx + 0x20]
    mov r10d, 1
    TP_SYS 500
    TP_EXPECT -14, 15
    lea rax, [rip + .Ltps_path]         // one argument longer than ARG_MAX
    mov [rbx + 0x30], rax
    mov qword ptr [rbx + 0x38], 200000
    lea rdi, [rip + .Ltps_path]
    mov esi, 10
    lea rdx, [rbx + 0x30]
    mov r10d, 1
    TP_SYS 500
    TP_EXPECT -7, 16
    lea rdi, [rip + .Ltps_path]         // argv array at nothing
    mov esi, 10
    mov edx, 0xdead0000
    mov r10d, 1
    TP_SYS 500
    TP_EXPECT -14, 17
    xor r13d, r13d
.Ltps_loop:
    cmp r13, r12
    jae .Ltps_done
    lea rdi, [rip + .Ltps_path]
    mov esi, 10
    lea rdx, [rbx + 0x10]
    mov r10d, 1
    TP_SYS 500
    cmp rax, 0
    TP_CHECK g, 1
    mov r14, rax
    mov rdi, r14
    lea rsi, [rbx]
    xor edx, edx
    xor r10d, r10d
    TP_SYS 61
    TP_EXPECT r14, 2
    cmp dword ptr [rbx], 0
    TP_CHECK e, 3
    inc r13
    jmp .Ltps_loop
.Ltps_done:
    xor edi, edi
    TP_SYS 231
    ud2
.Ltps_path:
    .ascii "/bin/hello"
.Ltps_nope:
    .ascii "/bin/nope"
.Ltps_hello:
    .ascii "hello"
.purgem TP_SYS
.purgem TP_FAIL
.purgem TP_EXPECT
.purgem TP_CHECK
.purgem TP_HANDSHAKE
.purgem TP_SLEEP
