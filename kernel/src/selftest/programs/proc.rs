//! # More tiny user programs: processes, threads, and the accounting system calls
//!
//! The companions of `user_programs.rs` for the self-tests of `spawn`, `wait4`,
//! `thread_create`, `exit_group`, `msa`, the kstat calls, `mmap`/`munmap` and the
//! privilege checks (`crate::selftest::user_proc`). Same rules: position-independent
//! machine code in a read-only section, loaded at the image base by a test, one argument in
//! `rdi`, talking to the kernel only through `syscall`. Each check is one macro:
//!
//! ```text
//!   TP_EXPECT value, n    rax must equal value (e.g. -22 for -EINVAL), else exit_group(n)
//!   TP_CHECK  cc, n       after a cmp: the condition code cc must hold, else exit_group(n)
//! ```
//!
//! so a failing program's exit status names the check that failed (0: all passed).
//!
//! Programs that hand results to the test use the top page of their stack as a shared
//! **result area** ([`RESULT_AREA`]; the test started them with an empty stack image, so
//! their initial `rsp` is `USER_STACK_TOP` and that page is mapped): they move `rsp` below
//! it, write their results there, set the *done* word and sleep (1 ms at a time) until the
//! test — which holds the process's `Vm` and reads and writes the page directly — sets the
//! *go* word. That is how a test compares, to the nanosecond, what a process saw through a
//! system call with what the kernel knows.
//!
//! | program | `rdi` | does |
//! |---|---|---|
//! | `spawner` | N | `spawn` error cases (ENOENT, ENAMETOOLONG, E2BIG, EFAULT), then N × (`spawn /bin/hello` + `wait4`) |
//! | `waiter` | – | `wait4` error cases, `WNOHANG`, EFAULT before reaping, then reaps `/bin/spin 30` with a rusage, `msa(MSA_CHILDREN)`; results in the area |
//! | `threads` | mode | 0: three threads + `msa(MSA_SELF/THREAD)` (area); 1: `exit_group(7)` while threads spin, sleep, read the console; 2: a thread dies of `ud2`; 3: the leader exits first (5), the last thread with 9; 4: a thread calls `exit_group(3)` |
//! | `msa_abi` | accounting on? | the `msa()` contract: EINVAL, EFAULT, partial fills, `int` arguments |
//! | `kstat_abi` | a deleted KID | the kstat calls' contract: sizing with ENOMEM, ENXIO, EFAULT, snaptime, KCID change after a new IRQ line |
//! | `mmap_abi` | 1: end with a PROT_NONE touch | `mmap`/`munmap` contract and demand paging (by user code and by system calls), a 4 GiB region |
//! | `privs` | – | `setpriority`, `sched_setscheduler`, `setuid` as root and as uid 1000 |
//! | `blk_abi` | – | `blk_read`/`blk_write`: errors, a pattern written and read back, a 40-sector read |

/// Where programs that report to a test keep their results: the top page of the stack.
pub const RESULT_AREA: u64 = 0x0000_7fff_fffe_f000;
/// Offsets in the area.
pub const AREA_RUSAGE: u64 = 0x000;
pub const AREA_MSA_A: u64 = 0x100;
pub const AREA_MSA_B: u64 = 0x200;
pub const AREA_CHILD_PID: u64 = 0x308;
pub const AREA_TIDS: u64 = 0x810;
pub const AREA_DONE: u64 = 0xf00;
pub const AREA_GO: u64 = 0xf08;

hal::user_program!(pub fn spawner = include_str!("proc/spawner.S"));
hal::user_program!(pub fn waiter = include_str!("proc/waiter.S"));
hal::user_program!(pub fn threads = include_str!("proc/threads.S"));
hal::user_program!(pub fn msa_abi = include_str!("proc/msa_abi.S"));
hal::user_program!(pub fn kstat_abi = include_str!("proc/kstat_abi.S"));
hal::user_program!(pub fn mmap_abi = include_str!("proc/mmap_abi.S"));
hal::user_program!(pub fn privs = include_str!("proc/privs.S"));
hal::user_program!(pub fn blk_abi = include_str!("proc/blk_abi.S"));

/// The program called `name`, if it is one of these.
pub fn program(name: &str) -> Option<&'static [u8]> {
    Some(match name {
        "spawner" => spawner(),
        "waiter" => waiter(),
        "threads" => threads(),
        "msa_abi" => msa_abi(),
        "kstat_abi" => kstat_abi(),
        "mmap_abi" => mmap_abi(),
        "privs" => privs(),
        "blk_abi" => blk_abi(),
        _ => return None,
    })
}
