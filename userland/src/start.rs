//! # `_start`: from the kernel's `iretq`/`sysret` to `main`
//!
//! The kernel starts a program at its ELF entry point, `_start`, with nothing set up but the
//! stack that `tally-loader` built (see `kernel/libs/loader/src/stack.rs`):
//!
//! ```text
//!   rsp -> argc | argv[0] ... argv[argc-1] | NULL | envp... | NULL | auxv pairs... | AT_NULL
//! ```
//!
//! `_start` is a few instructions of assembly because no Rust function may run before the
//! stack is known to be aligned: it clears `rbp` (the end of the frame-pointer chain, for
//! debuggers), passes the address of `argc` as the first argument (`rdi`), aligns `rsp` to
//! 16 as the ABI requires at a `call`, and calls [`rt_start`]. That records where `argc`
//! and `argv` are, runs the program's `main` (declared with [`crate::entry!`]) and exits
//! the whole process with its return value. Nothing returns from `_start`.
//!
//! The argument strings live at the top of the stack for the life of the process, so
//! [`args`] hands them out as `&'static str` without copying.

use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

core::arch::global_asm!(
    ".section .text._start, \"ax\", @progbits",
    ".globl _start",
    ".type _start, @function",
    "_start:",
    "    xor ebp, ebp",
    "    mov rdi, rsp",
    "    and rsp, -16",
    "    call {rt_start}",
    "    ud2",
    ".size _start, . - _start",
    ".text",
    rt_start = sym rt_start,
);

unsafe extern "Rust" {
    /// The program's `main`, defined by [`crate::entry!`].
    safe fn __tally_main() -> i32;
}

static ARGC: AtomicUsize = AtomicUsize::new(0);
static ARGV: AtomicPtr<*const u8> = AtomicPtr::new(core::ptr::null_mut());
static INITIAL_SP: AtomicUsize = AtomicUsize::new(0);

/// Longest argument string believed (the kernel's ARG_MAX): a missing NUL cannot make
/// [`arg`] read on forever.
const MAX_ARG_LEN: usize = 128 * 1024;
/// Most arguments believed, for the same reason.
const MAX_ARGC: usize = 16 * 1024;

/// Called by `_start` with the initial stack pointer (the address of `argc`).
extern "C" fn rt_start(sp: *const usize) -> ! {
    // SAFETY: the kernel starts every program with `rsp` pointing at argc, followed by the
    // argv array (the System V layout tally-loader builds); both are readable.
    let argc = unsafe { sp.read() }.min(MAX_ARGC);
    ARGC.store(argc, Ordering::Relaxed);
    ARGV.store(sp.wrapping_add(1) as *mut *const u8, Ordering::Relaxed);
    INITIAL_SP.store(sp as usize, Ordering::Relaxed);
    let code = __tally_main();
    crate::sys::exit_group(code)
}

/// Number of arguments, including the program name.
pub fn argc() -> usize {
    ARGC.load(Ordering::Relaxed)
}

/// Argument `i` as bytes (without its NUL); `None` past the end.
pub fn arg_bytes(i: usize) -> Option<&'static [u8]> {
    if i >= argc() {
        return None;
    }
    let argv = ARGV.load(Ordering::Relaxed);
    // SAFETY: i < argc, so argv[i] is one of the pointers the kernel wrote; it points at a
    // NUL-terminated string in the stack's top pages, which live as long as the process.
    unsafe {
        let p = argv.add(i).read();
        if p.is_null() {
            return None;
        }
        let mut len = 0;
        while len < MAX_ARG_LEN && p.add(len).read() != 0 {
            len += 1;
        }
        Some(core::slice::from_raw_parts(p, len))
    }
}

/// Argument `i` (`arg(0)` is the program name); arguments that are not UTF-8 read as `"?"`.
pub fn arg(i: usize) -> Option<&'static str> {
    arg_bytes(i).map(|b| core::str::from_utf8(b).unwrap_or("?"))
}

/// All arguments, the program name first (like `std::env::args`).
pub fn args() -> impl Iterator<Item = &'static str> {
    (0..argc()).filter_map(arg)
}

/// The program's name: the last path component of `argv[0]` (`"?"` without one).
pub fn program_name() -> &'static str {
    arg(0).map_or("?", |a| a.rsplit('/').next().unwrap_or(a))
}

/// The stack pointer the program started with (where `argc` is): the top of the stack is
/// a little above it. Used by `syscall_fuzz` to keep its own stack out of reach.
pub fn initial_stack_pointer() -> usize {
    INITIAL_SP.load(Ordering::Relaxed)
}

unsafe extern "C" {
    static __tally_image_start: u8;
    static __tally_image_end: u8;
}

/// The program's memory image `[start, end)` as the linker laid it out (`link.ld`).
pub fn image_bounds() -> (usize, usize) {
    // Only the addresses of the linker-defined symbols are taken, never their contents.
    let start = &raw const __tally_image_start;
    let end = &raw const __tally_image_end;
    (start as usize, end as usize)
}
