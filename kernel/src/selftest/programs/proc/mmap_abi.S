// Ring-3 contract-check program `mmap_abi` (see `proc.rs`): transitional, raw numbers.
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
.macro TP_MMAP addr, len, prot, flags, off
    mov rdi, \addr
    mov rsi, \len
    mov edx, \prot
    mov r10d, \flags
    mov r8, -1
    mov r9, \off
    TP_SYS 9
.endm
    TP_MMAP 0, 0, 3, 0x22, 0            // length 0
    TP_EXPECT -22, 1
    TP_MMAP 0, 4096, 3, 0x21, 0         // shared
    TP_EXPECT -22, 2
    TP_MMAP 0, 4096, 3, 0x02, 0         // a file mapping without a file
    TP_EXPECT -9, 3
    TP_MMAP 0, 4096, 8, 0x22, 0         // unknown protection bit
    TP_EXPECT -22, 4
    TP_MMAP 0, 4096, 3, 0x22, 1         // unaligned offset
    TP_EXPECT -22, 5
    TP_MMAP 0, 0x10000, 3, 0x22, 0      // 16 pages
    mov rcx, 0x100000000000
    cmp rax, rcx
    TP_CHECK ae, 6
    mov r12, rax
    xor ecx, ecx                        // touch each page, read it back
.Lmm_touch:
    mov rdx, rcx
    shl rdx, 12
    cmp qword ptr [r12 + rdx], 0
    TP_CHECK e, 20
    mov [r12 + rdx], rcx
    inc ecx
    cmp ecx, 16
    jb .Lmm_touch
    cmp qword ptr [r12 + 0x5000], 5
    TP_CHECK e, 21
    TP_MMAP r12, 4096, 3, 0x100022, 0   // MAP_FIXED_NOREPLACE over it
    TP_EXPECT -17, 7
    TP_MMAP 0x400000, 4096, 3, 0x32, 0  // MAP_FIXED over the program
    TP_EXPECT -22, 8
    TP_MMAP 0x7fffff7ee000, 0x2000, 3, 0x32, 0// MAP_FIXED over the stack's guard page
    TP_EXPECT -22, 27                   // (USER_STACK_GUARD, and the page below it)
    lea r13, [r12 + 0x4000]             // MAP_FIXED over page 4: a fresh zero page
    TP_MMAP r13, 4096, 3, 0x32, 0
    TP_EXPECT r13, 9
    cmp qword ptr [r13], 0
    TP_CHECK e, 10
    cmp qword ptr [r12 + 0x5000], 5     // its neighbour kept its contents
    TP_CHECK e, 22
    lea rdi, [r12 + 1]                  // munmap: unaligned, empty
    mov esi, 4096
    TP_SYS 11
    TP_EXPECT -22, 11
    mov rdi, r12
    xor esi, esi
    TP_SYS 11
    TP_EXPECT -22, 12
    mov rdi, r12                        // all 16 pages
    mov esi, 0x10000
    TP_SYS 11
    TP_EXPECT 0, 13
    TP_MMAP 0, 0x10000, 3, 0x22, 0      // first fit: the same place again
    TP_EXPECT r12, 14
    cmp qword ptr [r12 + 0x5000], 0     // and zeroed
    TP_CHECK e, 23
    mov edi, 1                          // clock_gettime(CLOCK_MONOTONIC) into page 6,
    lea rsi, [r12 + 0x6000]             // untouched since the mmap: the kernel's
    TP_SYS 228                          // copy faults and maps it (uaccess fixup)
    TP_EXPECT 0, 24
    mov rax, [r12 + 0x6000]
    or rax, [r12 + 0x6008]
    TP_CHECK nz, 25
    lea rdi, [r12 + 0x7000]             // nanosleep reading an untouched page: {{0, 0}}
    xor esi, esi
    TP_SYS 35
    TP_EXPECT 0, 26
    mov r13, 0x100000000                // 4 GiB, one page touched
    TP_MMAP 0, r13, 3, 0x22, 0
    cmp rax, 0
    TP_CHECK g, 15
    mov r14, rax
    mov rcx, 0xc0000000
    mov qword ptr [r14 + rcx], 42
    mov rdi, r14
    mov rsi, r13
    TP_SYS 11
    TP_EXPECT 0, 16
    test r15, r15
    jz .Lmm_done
    TP_MMAP 0, 4096, 0, 0x22, 0         // PROT_NONE: reserved, every touch faults
    cmp rax, 0
    TP_CHECK g, 17
    mov rax, [rax]
    TP_FAIL 18
.Lmm_done:
    xor edi, edi
    TP_SYS 60
    ud2
.purgem TP_SYS
.purgem TP_FAIL
.purgem TP_EXPECT
.purgem TP_CHECK
.purgem TP_HANDSHAKE
.purgem TP_SLEEP
