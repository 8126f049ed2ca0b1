// Ring-3 test program `smoke` (argument in rdi: –).
//
// Spins a little, writes "hello from ring 3\n", checks that getpid and gettid agree (a
// one-thread process), then exit(42). Exit status 1 or 2 names the check that failed.
//
// Position-independent, loaded at USER_IMAGE_BASE by the self-tests (`programs/mod.rs`);
// {{NAME}} operands are system-call numbers and errno values from tally_uapi.
    mov ecx, 200000
.Lsm_spin:
    dec ecx
    jnz .Lsm_spin
    mov eax, {SYS_WRITE}
    mov edi, 1
    lea rsi, [rip + .Lsm_msg]
    mov edx, 18
    syscall
    mov edi, 1
    cmp rax, 18
    jne .Lsm_fail
    mov eax, {SYS_GETPID}
    syscall
    mov r12, rax
    mov eax, {SYS_GETTID}
    syscall
    mov edi, 2
    cmp rax, r12
    jne .Lsm_fail
    mov eax, {SYS_EXIT}
    mov edi, 42
    syscall
    ud2
.Lsm_fail:
    mov eax, {SYS_EXIT}
    syscall
    ud2
.Lsm_msg:
    .ascii "hello from ring 3\n"
.Lsm_msg_end:
