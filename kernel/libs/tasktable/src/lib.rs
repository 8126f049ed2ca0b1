//! # tally-tasktable — the task table and the process tree
//!
//! Who exists, who is whose child, which threads make up a process, how each one ended, and
//! where their numbers go when they are gone: the bookkeeping under `fork`, `clone`, `exit`,
//! `exit_group` and `wait`, with Linux's semantics, as safe code tested on the host. The
//! kernel owns the hardware side (stacks, contexts, run queues, wait queues), and whatever
//! else it keeps per task rides in the payload `T` this table carries for it (Tally's kernel:
//! a process's memory map and descriptors; its scheduler keeps the CPU side by slot).
//!
//! Read in this order:
//!
//! * `slab.rs` — task records and the [`TaskKey`]s that name them (stale keys are detected);
//! * `pid.rs` — pids, allocated without early reuse;
//! * `task.rs` — the per-thread record;
//! * `group.rs` — thread groups, i.e. processes;
//! * `accum.rs` — where the accounting numbers of dead tasks go;
//! * `table.rs` — the table: creation and queries;
//! * `tree.rs` — parents, children, adoption by init;
//! * `exit.rs` — ending threads and processes;
//! * `jobs.rs` — process groups, sessions, ignored signals, stopped and continued processes;
//! * `wait.rs` — reaping, and reporting stopped and continued children;
//! * `status.rs` — the wait-status encoding and its `W*` decoders.
//!
//! ## How the kernel drives it
//!
//! * boot: `create_idle` (pid 0, optional) then `create_init` (pid 1);
//! * `fork`/`clone`: `create(current, Process | Thread, now, payload)`;
//! * `exit(code)` / a fatal signal / `exit_group`: `exit` or `exit_group` with an
//!   [`ExitStatus`] and a harvest closure `|payload| numbers`; then act on the
//!   [`ExitReport`]: stop `killed`, free `released` payloads once off their stacks, and on
//!   `process` wake `wake_parent` / `wake_init` (and write the acct / taskstats-tgid record
//!   from `total`, the zombie leader's record and `ppid`);
//! * `wait4`: `wait(current, which, nohang)`; on `Sleep { queue }` sleep on that process's
//!   wait queue and call again when woken; on `Reaped` copy `pid`/`status` out and free the
//!   payload.
//!
//! Errors are Linux errno values (`tally_uapi::errno`), positive; nothing here panics on a
//! bad key, pid or request.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

mod accum;
mod exit;
mod group;
mod jobs;
mod pid;
mod slab;
mod status;
mod table;
mod task;
mod tree;
mod wait;

pub use accum::Accumulate;
pub use exit::{ExitReport, Released};
pub use jobs::{JobReport, SpawnGroup};
pub use pid::{PID_MAX_DEFAULT, RESERVED_PIDS};
pub use slab::TaskKey;
pub use status::{wcoredump, wexitstatus, wifexited, wifsignaled, wtermsig, ExitStatus, NSIG};
pub use table::{CreateKind, TaskTable, IDLE_PID, INIT_PID};
pub use task::{make_comm, AcctFlags, ExitState, Task, TASK_COMM_LEN};
pub use tree::ProcessExit;
pub use wait::{Reaped, WaitFor, WaitOpts, WaitOutcome};

/// A Linux errno value (positive), one of `tally_uapi::errno`.
pub type Errno = i32;
