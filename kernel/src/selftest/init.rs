//! Self-tests of init's exec in place: pid 1 — the kernel thread running these tests —
//! becomes a user program without a new task, as it becomes `/bin/init` after a normal boot
//! (`main.rs`). These tests never return: pid 1's end ends the run (`proc/exit.rs`), so
//! the verdict is the exit status it hands to QEMU and the lines the kernel prints then.
//!
//! * `init_exec`: pid 1 first spends time in the kernel (ONCPU_SYS, asleep), then execs the
//!   `syscalls` test program (`selftest/programs/syscalls.S`), which checks from ring 3 that its
//!   parent is 0 (init has none), its uid 0, its clocks, sleeps and registers, and exits 0:
//!   the run ends with success, and invariant (a) holds for pid 1 across the exec.
//! * `init_fault`: pid 1 execs the `fault` program, which divides by zero: pid 1 dies of
//!   SIGFPE, and the run must end with the failure status rather than hang.

use crate::proc::vm::USER_IMAGE_BASE;

use super::ring3::{load, t, us};
use crate::proc;
use crate::sched;
use tally_microstate::MicroState;

/// Load test program `prog` and exec it in place in pid 1 with `arg` in `rdi`.
fn exec_in_pid1(what: &str, prog: &str, arg: u64) -> Result<(), &'static str> {
    if proc::current_ids().pid != 1 {
        return Err("not running in pid 1");
    }
    let (vm, rsp) = load(prog)?;
    // Some kernel-side life first, so the clocks have more than one state to carry over.
    sched::sleep_ns(20_000_000);
    let m = sched::current_msa();
    println!(
        "{what}: pid 1, a kernel thread so far (ONCPU_SYS {} us, asleep {} us, ONCPU_USR {} us), execs `{prog}` in \
            place",
        us(t(&m, MicroState::OncpuSys)),
        us(t(&m, MicroState::InterruptibleSleep)),
        us(t(&m, MicroState::OncpuUsr)),
    );
    let Err(e) = proc::exec_user(prog, vm, USER_IMAGE_BASE, rsp, arg);
    println!("{what}: exec in place failed: errno {e}");
    Err("exec in place failed")
}

/// Pid 1 becomes the `syscalls` program (its parent's pid, 0, in `rdi`), which exits 0.
pub fn exec() -> Result<(), &'static str> {
    exec_in_pid1("init_exec", "syscalls", 0)
}

/// Pid 1 becomes the `fault` program dividing by zero (kind 0).
pub fn fault() -> Result<(), &'static str> {
    exec_in_pid1("init_fault", "fault", 0)
}
