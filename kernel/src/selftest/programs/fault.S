// Ring-3 test program `fault` (argument in rdi: which fault).
//
// Takes one fault and should never reach its exit: 0 divide by zero, 1 ud2, 2 int3,
// 3 hlt (privileged), 4 a jump to its (non-executable) stack, 5 single-step (TF), 6 a write
// to its own (read-only) code, 7 single-stepping into syscall.
//
// Position-independent, loaded at USER_IMAGE_BASE by the self-tests (`programs/mod.rs`);
// {{NAME}} operands are system-call numbers and errno values from tally_uapi.
.Lfault_image:
    cmp rdi, 0
    je .Lf_div
    cmp rdi, 1
    je .Lf_ud
    cmp rdi, 2
    je .Lf_int3
    cmp rdi, 3
    je .Lf_hlt
    cmp rdi, 4
    je .Lf_nx
    cmp rdi, 5
    je .Lf_tf
    cmp rdi, 6
    je .Lf_text
    cmp rdi, 7
    je .Lf_tf_syscall
    jmp .Lf_none
.Lf_div:
    xor ecx, ecx
    mov eax, 1
    xor edx, edx
    div ecx
    jmp .Lf_none
.Lf_ud:
    ud2
.Lf_int3:
    int3
    jmp .Lf_none
.Lf_hlt:
    hlt
    jmp .Lf_none
.Lf_nx:
    lea rax, [rsp - 64]
    mov byte ptr [rax], 0xc3            // `ret`, on the (non-executable) stack
    call rax
    jmp .Lf_none
.Lf_tf:
    pushfq
    or qword ptr [rsp], 0x100
    popfq
    nop
    nop
    jmp .Lf_none
.Lf_text:
    lea rax, [rip + .Lfault_image]
    mov byte ptr [rax], 0x90
    jmp .Lf_none
.Lf_tf_syscall:
    mov eax, {SYS_GETPID}
    pushfq
    or qword ptr [rsp], 0x100
    popfq
    syscall
    nop
    jmp .Lf_none
.Lf_none:
    mov eax, {SYS_EXIT}
    xor edi, edi
    syscall
    ud2
