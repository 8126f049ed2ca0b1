// Ring-3 test program `efault` (argument in rdi: –).
//
// Passes bad pointers to write, clock_gettime and nanosleep: kernel, unmapped,
// non-canonical, wrapping, read-only and half-mapped ranges, and NULL. Each must give -EFAULT
// (a zero-length write 0); exit(N) names the first that did not, exit(0) after printing a line.
//
// Position-independent, loaded at USER_IMAGE_BASE by the self-tests (`programs/mod.rs`);
// {{NAME}} operands are system-call numbers and errno values from tally_uapi.
.Lefault_image:
    mov eax, {SYS_WRITE}                // write(1, kernel address, 10)
    mov edi, 1
    mov rsi, 0xffff800000000000
    mov edx, 10
    syscall
    mov edi, 1
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_WRITE}                // write(1, unmapped, 10)
    mov edi, 1
    mov esi, 0xdead0000
    mov edx, 10
    syscall
    mov edi, 2
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_WRITE}                // write(1, first non-canonical address, 4)
    mov edi, 1
    mov rsi, 0x0000800000000000
    mov edx, 4
    syscall
    mov edi, 3
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_WRITE}                // write(1, above the stack, 16)
    mov edi, 1
    mov rsi, 0x00007ffffffff000
    mov edx, 16
    syscall
    mov edi, 4
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_WRITE}                // write(1, range wrapping around, 32)
    mov edi, 1
    mov rsi, -16
    mov edx, 32
    syscall
    mov edi, 5
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_CLOCK_GETTIME}        // clock_gettime into read-only code
    mov edi, {CLOCK_MONOTONIC}
    lea rsi, [rip + .Lefault_image]
    syscall
    mov edi, 6
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_NANOSLEEP}            // nanosleep(unmapped request)
    mov edi, 0xdead0000
    xor esi, esi
    syscall
    mov edi, 7
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_WRITE}                // write(1, valid, 0) writes nothing
    mov edi, 1
    lea rsi, [rip + .Lef_msg]
    xor edx, edx
    syscall
    mov edi, 8
    test rax, rax
    jnz .Lef_fail
    lea rsi, [rip + .Lefault_image_end] // the last 4 bytes of the image's last
    add rsi, 4095                       // page, and 12 beyond it: unmapped
    and rsi, -4096
    sub rsi, 4
    mov eax, {SYS_WRITE}
    mov edi, 1
    mov edx, 16
    syscall
    mov edi, 9
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_CLOCK_GETTIME}        // clock_gettime(MONOTONIC, NULL)
    mov edi, {CLOCK_MONOTONIC}
    xor esi, esi
    syscall
    mov edi, 10
    cmp rax, -{EFAULT}
    jne .Lef_fail
    mov eax, {SYS_WRITE}
    mov edi, 1
    lea rsi, [rip + .Lef_msg]
    mov edx, 39
    syscall
    mov eax, {SYS_EXIT}
    xor edi, edi
    syscall
    ud2
.Lef_fail:
    mov eax, {SYS_EXIT}
    syscall
    ud2
.Lef_msg:
    .ascii "efault: every bad pointer gave -EFAULT\n"
.Lef_msg_end:
.Lefault_image_end:
