// Ring-3 test program `syscalls` (argument in rdi: the parent's pid).
//
// Checks getppid, getuid, both clocks, nanosleep, sched_yield, ENOSYS for an unknown
// number, EINVAL and EBADF, that every register but rax, rcx and r11 survives a call, the
// FS base (arch_prctl SET/GET, an fs-relative load, EPERM and EINVAL), set_tid_address's
// tid, and a 261-byte write with a two-byte character across the kernel's copy buffer; then
// exit_group(0), or exit_group(N) with N the number of the check that failed.
//
// Position-independent, loaded at USER_IMAGE_BASE by the self-tests (`programs/mod.rs`);
// {{NAME}} operands are system-call numbers and errno values from tally_uapi.
    mov r12, rdi
    mov eax, {SYS_GETPPID}              // getppid
    syscall
    mov edi, 10
    cmp rax, r12
    jne .Lsc_fail
    mov eax, {SYS_GETUID}               // getuid
    syscall
    mov edi, 11
    test rax, rax
    jnz .Lsc_fail
    sub rsp, 64                         // [rsp] t1, [rsp+16] t2, [rsp+32] request
    mov eax, {SYS_CLOCK_GETTIME}        // clock_gettime(MONOTONIC, rsp)
    mov edi, {CLOCK_MONOTONIC}
    mov rsi, rsp
    syscall
    mov edi, 12
    test rax, rax
    jnz .Lsc_fail
    mov qword ptr [rsp + 32], 0
    mov qword ptr [rsp + 40], 20000000
    mov eax, {SYS_NANOSLEEP}            // nanosleep(20 ms)
    lea rdi, [rsp + 32]
    xor esi, esi
    syscall
    mov edi, 13
    test rax, rax
    jnz .Lsc_fail
    mov eax, {SYS_CLOCK_GETTIME}
    mov edi, {CLOCK_MONOTONIC}
    lea rsi, [rsp + 16]
    syscall
    mov edi, 14
    test rax, rax
    jnz .Lsc_fail
    imul rax, qword ptr [rsp + 16], 1000000000
    add rax, qword ptr [rsp + 24]
    imul rcx, qword ptr [rsp], 1000000000
    add rcx, qword ptr [rsp + 8]
    sub rax, rcx
    mov edi, 15
    cmp rax, 20000000
    jb .Lsc_fail
    mov eax, {SYS_CLOCK_GETTIME}        // clock_gettime(REALTIME)
    xor edi, edi
    mov rsi, rsp
    syscall
    mov edi, 16
    test rax, rax
    jnz .Lsc_fail
    mov edi, 17
    cmp qword ptr [rsp], 1000000000
    jl .Lsc_fail
    mov eax, {SYS_CLOCK_GETTIME}        // an unknown clock
    mov edi, 12345
    mov rsi, rsp
    syscall
    mov edi, 18
    cmp rax, -{EINVAL}
    jne .Lsc_fail
    mov eax, {SYS_SCHED_YIELD}          // sched_yield
    syscall
    mov edi, 19
    test rax, rax
    jnz .Lsc_fail
    mov eax, {NO_SUCH_SYSCALL}          // no such call
    syscall
    mov edi, 20
    cmp rax, -{ENOSYS}
    jne .Lsc_fail
    mov qword ptr [rsp + 32], 0
    mov qword ptr [rsp + 40], 1000000000
    mov eax, {SYS_NANOSLEEP}            // nanosleep with tv_nsec out of range
    lea rdi, [rsp + 32]
    xor esi, esi
    syscall
    mov edi, 21
    cmp rax, -{EINVAL}
    jne .Lsc_fail
    mov eax, {SYS_WRITE}                // write to an fd that is not open
    mov edi, 5
    mov rsi, rsp
    mov edx, 1
    syscall
    mov edi, 22
    cmp rax, -{EBADF}
    jne .Lsc_fail
    // Registers other than rax, rcx, r11 survive a system call.
    mov rbx, 0x1111
    mov rbp, 0x2222
    mov r12, 0x3333
    mov r13, 0x4444
    mov r14, 0x5555
    mov r15, 0x6666
    mov r8, 0x7777
    mov r9, 0x8888
    mov r10, 0x9999
    mov rdx, 0xaaaa
    mov rsi, 0xbbbb
    mov rdi, 0xcccc
    mov eax, {SYS_GETPID}
    syscall
    cmp rbx, 0x1111
    jne .Lsc_regs
    cmp rbp, 0x2222
    jne .Lsc_regs
    cmp r12, 0x3333
    jne .Lsc_regs
    cmp r13, 0x4444
    jne .Lsc_regs
    cmp r14, 0x5555
    jne .Lsc_regs
    cmp r15, 0x6666
    jne .Lsc_regs
    cmp r8, 0x7777
    jne .Lsc_regs
    cmp r9, 0x8888
    jne .Lsc_regs
    cmp r10, 0x9999
    jne .Lsc_regs
    cmp rdx, 0xaaaa
    jne .Lsc_regs
    cmp rsi, 0xbbbb
    jne .Lsc_regs
    cmp rdi, 0xcccc
    jne .Lsc_regs
    // The FS base: fs:[8] reads the word 8 bytes above it; GET_FS returns it.
    mov qword ptr [rsp + 8], 0x5eed
    mov eax, {SYS_ARCH_PRCTL}           // arch_prctl(ARCH_SET_FS, rsp)
    mov edi, {ARCH_SET_FS}
    mov rsi, rsp
    syscall
    mov edi, 25
    test rax, rax
    jnz .Lsc_fail
    mov edi, 26
    cmp qword ptr fs:[8], 0x5eed
    jne .Lsc_fail
    mov eax, {SYS_SCHED_YIELD}          // the base survives a trip through the scheduler
    syscall
    mov edi, 27
    cmp qword ptr fs:[8], 0x5eed
    jne .Lsc_fail
    mov eax, {SYS_ARCH_PRCTL}           // arch_prctl(ARCH_GET_FS, rsp + 16)
    mov edi, {ARCH_GET_FS}
    lea rsi, [rsp + 16]
    syscall
    mov edi, 28
    test rax, rax
    jnz .Lsc_fail
    cmp qword ptr [rsp + 16], rsp
    jne .Lsc_fail
    mov eax, {SYS_ARCH_PRCTL}           // a kernel address: EPERM
    mov edi, {ARCH_SET_FS}
    mov rsi, 0xffff800000000000
    syscall
    mov edi, 29
    cmp rax, -{EPERM}
    jne .Lsc_fail
    mov eax, {SYS_ARCH_PRCTL}           // no user GS base: EINVAL
    mov edi, {ARCH_SET_GS}
    mov rsi, rsp
    syscall
    mov edi, 30
    cmp rax, -{EINVAL}
    jne .Lsc_fail
    mov eax, {SYS_SET_TID_ADDRESS}      // set_tid_address returns gettid()
    lea rdi, [rsp + 16]
    syscall
    mov rbx, rax
    mov eax, {SYS_GETTID}
    syscall
    mov edi, 31
    cmp rax, rbx
    jne .Lsc_fail
    // A write longer than the kernel's copy buffer, with a two-byte character across it.
    mov eax, {SYS_WRITE}
    mov edi, 1
    lea rsi, [rip + .Lsc_msg]
    mov edx, 261
    syscall
    mov edi, 24
    cmp rax, 261
    jne .Lsc_fail
    mov eax, {SYS_EXIT_GROUP}           // exit_group(0)
    xor edi, edi
    syscall
    ud2
.Lsc_msg:
    .ascii "syscalls: "
    .fill 245, 1, 0x2d
    .byte 0xc3, 0xa9
    .ascii " ok\n"
.Lsc_msg_end:
.Lsc_regs:
    mov edi, 23
.Lsc_fail:
    mov eax, {SYS_EXIT_GROUP}
    syscall
    ud2
