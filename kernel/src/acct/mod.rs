//! # acct — the readers of the accounting
//!
//! Where a task's time and resources went, read from where they are kept: the microstate
//! clocks and counters (the scheduler's), the task table's accumulators of dead threads and
//! reaped children, and each process's memory map (memory integrals and high-water marks,
//! `tally_memacct`). Every reader takes one TSC value per answer, so the parts of an answer
//! agree to the tick. This layer only reads; the numbers are kept by `sched` and `proc`.
//!
//! | file | what |
//! |---|---|
//! | `clocks.rs` | `msa()`: a thread's, a process's or its reaped children's microstate clocks |
//! | `usage.rs` | a process's totals so far and its children's (`getrusage`, `wait4`) |
//! | `all_tasks.rs` | every task at one instant (`proc_stat`, `prstat`) |
//! | `system.rs` | system-wide clocks and interrupt time (the invariants, the kstats) |
//! | `task_records.rs` | Linux `struct taskstats` records: GET by pid/tgid, and at every exit |
//! | `process_acct.rs` | Linux process accounting (`acct(2)`): a v3 record per process, appended to a file |
//! | `job_acct.rs` | SGI CSA: jobs, their records at exit, `csa_ctl`, the system and ja files |
//!
//! The last two are the only parts of this floor that write: they hand finished records to
//! the file layer's record files (`fs::record_file`), which the disk's owner thread appends.
//!
//! What the numbers mean: `docs/microstate-accounting.md`, `docs/taskstats.md` and
//! `docs/process-accounting.md`.

mod all_tasks;
mod clocks;
pub mod job_acct;
pub mod process_acct;
mod system;
mod task_records;
mod usage;

pub use all_tasks::{task_stats, TaskStat};
pub use clocks::{msa_breakdown, msa_of, MsaWhich};
pub use system::snapshot;
pub use task_records::{current_sender, of_pid, of_pid_into, open_socket, send, Record, EXIT_RECORDS};
pub use usage::{children_totals, process_usage};
