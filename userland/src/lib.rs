//! # tally_rt — the runtime every Tally user program is linked with
//!
//! A user program on Tally is a static ELF executable with no C library underneath. This
//! crate is the little that a program needs between the kernel and `main`, the part a libc's
//! `crt0` and a few of its wrappers play on Linux:
//!
//! * [`start`]: `_start`, the first instruction the kernel jumps to. It finds `argc` and `argv`
//!   on the stack (laid out by `tally-loader`, System V style), calls the program's `main`
//!   (declared with [`entry!`]), and passes the result to `exit_group`.
//! * [`sys`]: one wrapper per system call in `tally_uapi::syscall`, each a `syscall`
//!   instruction with the Linux register convention, returning `Result<usize, Errno>`.
//!   A kernel that does not implement a call answers `-ENOSYS`; programs print that as
//!   `ENOSYS (function not implemented)` and carry on or stop cleanly.
//! * [`io`]: `print!`/`println!` to fd 1 and `eprint!`/`eprintln!` to fd 2. Each call is
//!   formatted into a buffer and written with one `write`, so lines of different processes
//!   sharing the console do not interleave mid-line.
//! * [`acct`]: what the accounting tools share: default files, GNU acct's message for a
//!   file it cannot read, billing-unit weights.
//! * [`bus`]: a client of the kernel's message bus (generic-netlink framing): a bound
//!   socket, family lookup, a request and its answer.
//! * [`thread`]: more threads in the process: a stack from `mmap` and `thread_create`.
//! * [`heap`]: a global allocator (so `alloc::vec::Vec`, `String`, `format!` work), a
//!   free-list allocator whose memory comes from growing the program break with `brk`.
//! * The panic handler: prints `NAME: panic: MESSAGE at FILE:LINE` and exits with 101.
//! * [`fs`]: files on `/var` the way a C library wraps them: a descriptor closed on drop,
//!   whole-file reads, directory listings from `getdents64`.
//! * [`msa`]: the runtime's `msa()`, which reads the calling thread's own clocks
//!   (`MSA_THREAD`) from the page the kernel maps for it (the vvar), without a system call.
//! * [`signal`]: signal actions with handlers, masks, `sigtimedwait`, the alternate stack,
//!   the restorer a handler returns through.
//! * [`fixture`]: what the kernel self-tests' ring-3 fixtures (`userland/src/test/`, packed
//!   as `/test/NAME`) share: numbered checks and the result area.
//!
//! A program:
//!
//! ```ignore
//! #![no_std]
//! #![no_main]
//! tally_rt::entry!(main);
//! fn main() -> i32 {
//!     tally_rt::println!("hello from pid {}", tally_rt::sys::getpid().unwrap_or(0));
//!     0
//! }
//! ```
//!
//! `unsafe` lives in six modules only: [`start`] (reading the initial stack), [`sys`]
//! (the `syscall` instruction, and [`sys::Mapping`]'s view of mapped memory), [`heap`]
//! (handing out raw memory), [`thread`] (giving a fresh stack to a new thread) and [`msa`]
//! (the kernel's read-only clock pages, and `rdtsc`), and [`signal`] (the restorer and a
//! recording handler in assembly, registers checked across a handled signal).
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;

pub mod acct;
pub mod bus;
pub mod errno;
pub mod fixture;
pub mod fs;
pub mod heap;
pub mod io;
pub mod msa;
mod panic;
pub mod process;
pub mod rand;
pub mod signal;
pub mod start;
pub mod sys;
pub mod thread;

pub use errno::Errno;
pub use start::{arg, argc, args, program_name};
pub use tally_uapi as uapi;

/// Declares the program's `main`: `tally_rt::entry!(main);` with `fn main() -> i32`.
/// The value returned is the exit status (0 for success).
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub fn __tally_main() -> i32 {
            let main: fn() -> i32 = $main;
            main()
        }
    };
}
