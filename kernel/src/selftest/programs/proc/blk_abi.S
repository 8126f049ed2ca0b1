// Ring-3 contract-check program `blk_abi` (see `proc.rs`): transitional, raw numbers.
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
    sub rsp, 0x2000
    mov rbx, rsp
    mov edi, 100                        // 0 sectors: nothing to do
    mov rsi, rbx
    xor edx, edx
    TP_SYS 506
    TP_EXPECT 0, 1
    xor edi, edi                        // more than BLK_MAX_SECTORS
    mov rsi, rbx
    mov edx, 2049
    TP_SYS 505
    TP_EXPECT -22, 2
    mov edi, 8191                       // past the end of the 8192-sector disk
    mov rsi, rbx
    mov edx, 2
    TP_SYS 505
    TP_EXPECT -22, 3
    mov rdi, -1                         // lba + sectors overflows
    mov rsi, rbx
    mov edx, 1
    TP_SYS 505
    TP_EXPECT -22, 4
    xor edi, edi                        // buffer at nothing
    mov esi, 0xdead0000
    mov edx, 1
    TP_SYS 505
    TP_EXPECT -14, 5
    xor edi, edi                        // reading into read-only code
    lea rsi, [rip + tally_uprog_blk_abi_start]
    mov edx, 1
    TP_SYS 505
    TP_EXPECT -14, 6
    mov edi, 100                        // writing from the kernel
    mov rsi, 0xffff800000000000
    mov edx, 1
    TP_SYS 506
    TP_EXPECT -14, 7
    xor ecx, ecx                        // a pattern in 8 sectors
.Lbk_fill:
    imul eax, ecx, 7
    add eax, 3
    mov [rbx + rcx], al
    inc ecx
    cmp ecx, 4096
    jb .Lbk_fill
    mov edi, 200                        // write them at LBA 200
    mov rsi, rbx
    mov edx, 8
    TP_SYS 506
    TP_EXPECT 8, 8
    mov edi, 200                        // read them back
    lea rsi, [rbx + 0x1000]
    mov edx, 8
    TP_SYS 505
    TP_EXPECT 8, 9
    mov rsi, rbx
    lea rdi, [rbx + 0x1000]
    mov ecx, 4096
    repe cmpsb
    TP_CHECK e, 10
    xor edi, edi                        // 40 sectors: several driver requests
    mov esi, 0x5000
    mov edx, 3
    mov r10d, 0x22
    mov r8, -1
    xor r9d, r9d
    TP_SYS 9
    cmp rax, 0
    TP_CHECK g, 11
    mov r12, rax
    mov edi, 180
    mov rsi, r12
    mov edx, 40
    TP_SYS 505
    TP_EXPECT 40, 12
    lea rsi, [r12 + 20 * 512]           // LBA 200 is sector 20 of that read
    mov rdi, rbx
    mov ecx, 4096
    repe cmpsb
    TP_CHECK e, 13
    xor edi, edi
    TP_SYS 60
    ud2
.purgem TP_SYS
.purgem TP_FAIL
.purgem TP_EXPECT
.purgem TP_CHECK
.purgem TP_HANDSHAKE
.purgem TP_SLEEP
