//! # Tiny user programs, in assembly, for the ring-3 self-tests
//!
//! The ring-3 self-tests need programs that do exactly one odd thing each (fault in a given
//! way, preserve every register, ...), independent of the userland runtime and the ramdisk.
//! Each is a position-independent routine in a `.S` file of this folder, assembled into the
//! kernel image as read-only data by `hal::user_program!` (the kernel never executes it). A
//! self-test copies one into fresh user pages at the image base, gives it a stack, and starts
//! it with one argument in `rdi` (`super::ring3::load`). Each talks to the kernel only through
//! `syscall` and reports through its exit status; the system-call numbers and errno values
//! in the text are `{NAME}` operands filled in from `tally_uapi` below.
//!
//! Each `.S` file begins with what its program does and what its `rdi` argument means:
//! `smoke` (write, getpid, gettid, `exit(42)`), `syscalls` (the contracts of the basic calls
//! and the registers a call preserves), `fault` (one fault of each kind), `read_at` and
//! `write_at` (one access at an address), `efault` (bad pointers to every kind of call),
//! `demand` (demand-zero heap and stack pages), `spin` (registers and `xmm0` surviving
//! preemption).

use tally_uapi::errno::{EBADF, EFAULT, EINVAL, ENOSYS, EPERM};
use tally_uapi::syscall::*;

/// A number no system call has: the `syscalls` program checks it gets `-ENOSYS`.
const NO_SUCH_SYSCALL: usize = 9999;

hal::user_program!(
    pub fn smoke = include_str!("smoke.S"),
    SYS_EXIT = const SYS_EXIT,
    SYS_GETPID = const SYS_GETPID,
    SYS_GETTID = const SYS_GETTID,
    SYS_WRITE = const SYS_WRITE,
);
hal::user_program!(
    pub fn syscalls = include_str!("syscalls.S"),
    ARCH_GET_FS = const ARCH_GET_FS,
    ARCH_SET_FS = const ARCH_SET_FS,
    ARCH_SET_GS = const ARCH_SET_GS,
    CLOCK_MONOTONIC = const CLOCK_MONOTONIC,
    EBADF = const EBADF,
    EINVAL = const EINVAL,
    EPERM = const EPERM,
    ENOSYS = const ENOSYS,
    NO_SUCH_SYSCALL = const NO_SUCH_SYSCALL,
    SYS_CLOCK_GETTIME = const SYS_CLOCK_GETTIME,
    SYS_EXIT_GROUP = const SYS_EXIT_GROUP,
    SYS_GETPID = const SYS_GETPID,
    SYS_GETPPID = const SYS_GETPPID,
    SYS_GETUID = const SYS_GETUID,
    SYS_NANOSLEEP = const SYS_NANOSLEEP,
    SYS_ARCH_PRCTL = const SYS_ARCH_PRCTL,
    SYS_GETTID = const SYS_GETTID,
    SYS_SCHED_YIELD = const SYS_SCHED_YIELD,
    SYS_SET_TID_ADDRESS = const SYS_SET_TID_ADDRESS,
    SYS_WRITE = const SYS_WRITE,
);
hal::user_program!(
    pub fn fault = include_str!("fault.S"),
    SYS_EXIT = const SYS_EXIT,
    SYS_GETPID = const SYS_GETPID,
);
hal::user_program!(
    pub fn read_at = include_str!("read_at.S"),
    SYS_EXIT = const SYS_EXIT,
);
hal::user_program!(
    pub fn write_at = include_str!("write_at.S"),
    SYS_EXIT = const SYS_EXIT,
);
hal::user_program!(
    pub fn efault = include_str!("efault.S"),
    CLOCK_MONOTONIC = const CLOCK_MONOTONIC,
    EFAULT = const EFAULT,
    SYS_CLOCK_GETTIME = const SYS_CLOCK_GETTIME,
    SYS_EXIT = const SYS_EXIT,
    SYS_NANOSLEEP = const SYS_NANOSLEEP,
    SYS_WRITE = const SYS_WRITE,
);
hal::user_program!(
    pub fn demand = include_str!("demand.S"),
    SYS_BRK = const SYS_BRK,
    SYS_EXIT = const SYS_EXIT,
);
hal::user_program!(
    pub fn spin = include_str!("spin.S"),
    CLOCK_MONOTONIC = const CLOCK_MONOTONIC,
    SYS_CLOCK_GETTIME = const SYS_CLOCK_GETTIME,
    SYS_EXIT = const SYS_EXIT,
);

/// The test program called `name`, if there is one.
pub fn program(name: &str) -> Option<&'static [u8]> {
    Some(match name {
        "smoke" => smoke(),
        "syscalls" => syscalls(),
        "fault" => fault(),
        "read_at" => read_at(),
        "write_at" => write_at(),
        "efault" => efault(),
        "demand" => demand(),
        "spin" => spin(),
        _ => return None,
    })
}
