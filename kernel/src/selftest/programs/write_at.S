// Ring-3 test program `write_at` (argument in rdi: an address).
//
// Writes a byte at the address, then exit(0).
//
// Position-independent, loaded at USER_IMAGE_BASE by the self-tests (`programs/mod.rs`);
// {{NAME}} operands are system-call numbers and errno values from tally_uapi.
    mov byte ptr [rdi], 1
    mov eax, {SYS_EXIT}
    xor edi, edi
    syscall
    ud2
