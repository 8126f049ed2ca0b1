// Ring-3 test program `spin` (argument in rdi: nanoseconds).
//
// Computes in registers and xmm0 for that long (by CLOCK_MONOTONIC), checking that
// they survive every preemption; exit(0), or exit(3) if a register changed under it.
//
// Position-independent, loaded at USER_IMAGE_BASE by the self-tests (`programs/mod.rs`);
// {{NAME}} operands are system-call numbers and errno values from tally_uapi.
    mov r15, rdi                        // how long, ns
    sub rsp, 32
    mov eax, {SYS_CLOCK_GETTIME}
    mov edi, {CLOCK_MONOTONIC}
    mov rsi, rsp
    syscall
    imul rbx, qword ptr [rsp], 1000000000
    add rbx, qword ptr [rsp + 8]
    add rbx, r15                        // deadline
    mov r12, 0x5a5a5a5a
    mov r13, r12
    xor r14d, r14d
.Lsp_outer:
    inc r14
    movq xmm0, r14
    mov ecx, 20000
.Lsp_inner:
    dec ecx
    jnz .Lsp_inner
    movq rax, xmm0
    cmp rax, r14
    jne .Lsp_bad
    cmp r12, r13
    jne .Lsp_bad
    mov eax, {SYS_CLOCK_GETTIME}
    mov edi, {CLOCK_MONOTONIC}
    mov rsi, rsp
    syscall
    imul rax, qword ptr [rsp], 1000000000
    add rax, qword ptr [rsp + 8]
    cmp rax, rbx
    jb .Lsp_outer
    mov eax, {SYS_EXIT}
    xor edi, edi
    syscall
    ud2
.Lsp_bad:
    mov eax, {SYS_EXIT}
    mov edi, 3
    syscall
    ud2
