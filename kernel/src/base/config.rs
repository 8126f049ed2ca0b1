//! The kernel's configuration: the tick rate fixed at build time, and the limits that keep
//! one user or one process from exhausting the kernel. One place, so a student changing a
//! limit finds every one of them here.

/// Timer interrupts per second (the PIT's rate), fixed at build time: `TALLY_HZ`, default
/// 1000 (`cargo xtask run --hz N`). The 2.6 scheduler's time slices are counted in ticks.
pub const HZ: u32 = parse_hz(option_env!("TALLY_HZ"));

const fn parse_hz(s: Option<&str>) -> u32 {
    let Some(s) = s else { return 1000 };
    let b = s.as_bytes();
    let mut v = 0u32;
    let mut i = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "TALLY_HZ must be a number");
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    assert!(v >= 19 && v <= 10_000, "TALLY_HZ must be within 19..=10000");
    v
}

/// CPUs the kernel runs on (the message bus's cpumasks name CPUs up to this).
pub const NR_CPUS: u32 = 1;

/// Most tasks (threads, zombies included) the task table may hold: `spawn` and
/// `thread_create` fail with `EAGAIN` beyond it (Linux's `threads-max`/`RLIMIT_NPROC`), long
/// before the kernel heap or the frame pool could run dry.
pub const MAX_TASKS: usize = 1024;

/// Most threads one process may have at once (`EAGAIN` beyond).
pub const MAX_THREADS_PER_PROCESS: usize = 64;

/// Most descriptors a process may have open (Linux's default `RLIMIT_NOFILE` soft limit).
pub const MAX_FDS: usize = 1024;

/// Capacity of a pipe in bytes (Linux has 16 pages; one is enough here), and the size up
/// to which a write is atomic (`PIPE_BUF`).
pub const PIPE_BUF_SIZE: usize = 4096;

/// Bytes of console input the kernel buffers before it drops what is typed.
pub const CONSOLE_INPUT_SIZE: usize = 4096;

/// How many threads' exit records the kernel keeps for the self-tests (`proc`'s exit log).
pub const EXIT_LOG_LEN: usize = 256;
