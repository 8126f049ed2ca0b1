//! `crash KIND` — dies of one CPU exception on purpose, to show how the kernel turns a
//! user-mode fault into the death of that process only (and how its parent learns of it).
//!
//! | KIND        | instruction                         | exception      | Linux kills with |
//! |-------------|-------------------------------------|----------------|------------------|
//! | `divide`    | `div` by zero                       | #DE (vector 0) | SIGFPE           |
//! | `ud2`       | `ud2` (also: `invalid`)             | #UD (6)        | SIGILL           |
//! | `gp`        | load from a non-canonical address   | #GP (13)       | SIGSEGV          |
//! | `pagefault` | store to unmapped 0xdead_b000 (`pf`)| #PF (14)       | SIGSEGV          |
//! | `null`      | load from address 0                 | #PF (14)       | SIGSEGV          |
//! | `kernel`    | load from the kernel half           | #PF (14)       | SIGSEGV          |
//! | `int3`      | `int3` breakpoint                   | #BP (3)        | SIGTRAP          |
//! | `stack`     | unbounded recursion                 | #PF (14) at the stack's guard | SIGSEGV |
//! | `panic`     | a Rust panic (no exception)         | —              | exit status 101  |
//!
//! The faults are raised with inline assembly, not Rust code: the compiler is entitled to
//! assume a division by zero or a null dereference never happens and would remove them.
//! If the program survives its fault it says so and exits with 1.
#![no_std]
#![no_main]

use core::arch::asm;

use tally_rt::{eprintln, println};

tally_rt::entry!(main);

const KINDS: &str = "divide ud2 gp pagefault null kernel int3 stack panic";

fn main() -> i32 {
    let Some(kind) = tally_rt::arg(1) else {
        eprintln!("usage: crash KIND   (KIND: {KINDS})");
        return 2;
    };
    println!("crash: {kind}");
    // Each block below: every instruction faults, and the kernel ends the process, so
    // no Rust code ever runs with the machine state the assembly leaves behind; should the
    // kernel resume instead, the clobbers declared keep the compiler's view correct.
    match kind {
        // SAFETY: as above.
        "divide" => unsafe {
            asm!("xor edx, edx", "xor ecx, ecx", "mov eax, 1", "div ecx", out("eax") _, out("ecx") _, out("edx") _);
        },
        // SAFETY: as above.
        "ud2" | "invalid" => unsafe { asm!("ud2") },
        // SAFETY: as above.
        "gp" => unsafe {
            asm!("mov rax, 0x8000000000000000", "mov rax, [rax]", out("rax") _);
        },
        // SAFETY: as above.
        "pagefault" | "pf" => unsafe {
            asm!("mov rax, 0xdeadb000", "mov byte ptr [rax], 1", out("rax") _);
        },
        // SAFETY: as above.
        "null" => unsafe {
            asm!("xor eax, eax", "mov rax, [rax]", out("rax") _);
        },
        // SAFETY: as above.
        "kernel" => unsafe {
            asm!("mov rax, 0xffff800000000000", "mov rax, [rax]", out("rax") _);
        },
        // SAFETY: as above.
        "int3" => unsafe { asm!("int3") },
        "stack" => {
            let depth = recurse(0);
            println!("crash: recursion returned at depth {depth}");
        }
        "panic" => panic!("crash: asked to panic"),
        _ => {
            eprintln!("crash: unknown KIND {kind:?}; one of: {KINDS}");
            return 2;
        }
    }
    eprintln!("crash: still alive after {kind}");
    1
}

/// Recurses for ever, a page of stack per level.
#[allow(unconditional_recursion)]
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    let mut pad = [0u8; 4096];
    pad[depth as usize % 4096] = depth as u8;
    let pad = core::hint::black_box(pad);
    recurse(depth + 1) + u64::from(pad[0])
}
