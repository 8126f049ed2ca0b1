// Ring-3 contract-check program `privs` (see `proc.rs`): transitional, raw numbers.
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
    sub rsp, 0x40
    mov rbx, rsp
.macro TP_PRIO which, who, nice
    mov edi, \which
    mov esi, \who
    mov edx, \nice
    TP_SYS 141
.endm
.macro TP_POLICY pid, policy, prio
    mov dword ptr [rbx + 0x20], \prio
    mov edi, \pid
    mov esi, \policy
    lea rdx, [rbx + 0x20]
    TP_SYS 144
.endm
    TP_SYS 102                          // root
    TP_EXPECT 0, 1
    TP_PRIO 0, 0, 5                     // nicer: anyone may
    TP_EXPECT 0, 2
    TP_PRIO 1, 0, 5                     // PRIO_PGRP
    TP_EXPECT -22, 3
    TP_PRIO 0, 30000, 5                 // nobody
    TP_EXPECT -3, 4
    TP_PRIO 0, 0, -5                    // less nice: root only
    TP_EXPECT 0, 5
    TP_POLICY 0, 1, 10                  // SCHED_FIFO 10: root only
    TP_EXPECT 0, 6
    TP_POLICY 0, 0, 0                   // back to SCHED_OTHER
    TP_EXPECT 0, 7
    TP_POLICY 0, 1, 0                   // FIFO needs 1..99
    TP_EXPECT -22, 8
    TP_POLICY 0, 7, 0                   // no such policy
    TP_EXPECT -22, 9
    xor edi, edi                        // NULL param
    mov esi, 1
    xor edx, edx
    TP_SYS 144
    TP_EXPECT -22, 10
    xor edi, edi                        // param at nothing
    mov esi, 1
    mov edx, 0xdead0000
    TP_SYS 144
    TP_EXPECT -14, 11
    mov r12d, 5                         // voluntary switches: five short sleeps
.Lpv_sleep:
    TP_SLEEP 0, 1000000
    dec r12d
    jnz .Lpv_sleep
    mov edi, 1000                       // become uid 1000
    TP_SYS 105
    TP_EXPECT 0, 12
    TP_SYS 102
    TP_EXPECT 1000, 13
    xor edi, edi                        // and never root again
    TP_SYS 105
    TP_EXPECT -1, 14
    mov edi, 1000                       // "changing" to oneself is fine
    TP_SYS 105
    TP_EXPECT 0, 15
    TP_PRIO 0, 0, -10                   // less nice: EACCES now
    TP_EXPECT -13, 16
    TP_PRIO 0, 0, 10                    // nicer: still fine
    TP_EXPECT 0, 17
    TP_POLICY 0, 1, 10                  // real time: EPERM now
    TP_EXPECT -1, 18
    TP_POLICY 0, 3, 0                   // SCHED_BATCH: fine
    TP_EXPECT 0, 19
    TP_PRIO 0, 1, 10                    // init belongs to root
    TP_EXPECT -1, 20
    xor edi, edi
    TP_SYS 60
    ud2
.purgem TP_SYS
.purgem TP_FAIL
.purgem TP_EXPECT
.purgem TP_CHECK
.purgem TP_HANDSHAKE
.purgem TP_SLEEP
