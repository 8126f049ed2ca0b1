// Ring-3 test program `demand` (argument in rdi: N).
//
// Grows the heap by N pages with brk, touches each page (read first: a zero page must
// appear, then a write), touches N pages of stack below its top, and gives the heap back;
// exit(0), or exit(N) with N the failed check. Each first touch is a demand-zero fault.
//
// Position-independent, loaded at USER_IMAGE_BASE by the self-tests (`programs/mod.rs`);
// {{NAME}} operands are system-call numbers and errno values from tally_uapi.
    mov r12, rdi                        // N
    mov eax, {SYS_BRK}                  // brk(0): the heap's start
    xor edi, edi
    syscall
    mov r13, rax
    mov rdi, r12
    shl rdi, 12
    add rdi, r13
    mov r14, rdi
    mov eax, {SYS_BRK}                  // brk(start + N pages)
    syscall
    mov edi, 1
    cmp rax, r14
    jne .Ld_fail
    mov rcx, r13
.Ld_heap:
    cmp rcx, r14
    jae .Ld_stack_start
    cmp byte ptr [rcx + 1], 0           // first touch is a read: a zero page appears
    jne .Ld_zero_fail
    mov byte ptr [rcx], 1               // then a write to the same page: no second fault
    add rcx, 4096
    jmp .Ld_heap
.Ld_stack_start:
    mov rcx, r12
    lea rdx, [rsp - 1]                  // the (mapped) page holding the top of the stack
    and rdx, -4096
.Ld_stack:
    test rcx, rcx
    jz .Ld_shrink
    sub rdx, 4096
    mov byte ptr [rdx], 1
    dec rcx
    jmp .Ld_stack
.Ld_shrink:
    mov eax, {SYS_BRK}                  // brk(start): give the pages back
    mov rdi, r13
    syscall
    mov edi, 3
    cmp rax, r13
    jne .Ld_fail
    mov eax, {SYS_EXIT}
    xor edi, edi
    syscall
    ud2
.Ld_zero_fail:
    mov edi, 2
.Ld_fail:
    mov eax, {SYS_EXIT}
    syscall
    ud2
