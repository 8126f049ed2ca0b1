// Ring-3 test program `read_at` (argument in rdi: an address).
//
// Reads a word at the address, then exit(0).
//
// Position-independent, loaded at USER_IMAGE_BASE by the self-tests (`programs/mod.rs`);
// {{NAME}} operands are system-call numbers and errno values from tally_uapi.
    mov rax, qword ptr [rdi]
    mov eax, {SYS_EXIT}
    xor edi, edi
    syscall
    ud2
