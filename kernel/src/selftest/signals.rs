//! Self-test of signals (`proc/signal.rs`): `kill` ends a process with the signal as its
//! wait status, an ignored signal is only counted, every received signal is counted for
//! prstat's SIG, and a parent receives SIGCHLD when a child ends.

use crate::{acct, proc, sched};
use tally_tasktable::{wifsignaled, wtermsig};
use tally_uapi::errno::{EINVAL, ESRCH};
use tally_uapi::signal::{SIGCHLD, SIGUSR1};

fn signals_of(pid: i32) -> Option<u64> {
    acct::task_stats().0.into_iter().find(|t| t.pid == pid).map(|t| t.counters.signals)
}

pub fn signals() -> Result<(), &'static str> {
    let me = 1; // the kernel's init thread runs the self-tests
    let pid = proc::spawn_program("/bin/sleeper", &[b"sleeper", b"60000"]).map_err(|_| "cannot spawn sleeper")?;
    sched::sleep_ns(20_000_000);
    if proc::kill(pid, 0) != Ok(()) {
        return Err("kill(pid, 0) does not find a live process");
    }
    if proc::kill(pid, 65) != Err(EINVAL) || proc::kill(pid, -1) != Err(EINVAL) {
        return Err("bad signal numbers are not EINVAL");
    }
    if proc::kill(-999_999, SIGUSR1 as i32) != Err(ESRCH) {
        return Err("a process group without members is not ESRCH");
    }
    if proc::kill(999_999, SIGUSR1 as i32) != Err(ESRCH) {
        return Err("a pid that does not exist is not ESRCH");
    }
    // An ignored signal: counted, the process lives on.
    proc::kill(pid, SIGCHLD as i32).map_err(|_| "kill SIGCHLD failed")?;
    sched::sleep_ns(5_000_000);
    if proc::is_zombie(pid) || signals_of(pid) != Some(1) {
        return Err("an ignored signal was not just counted (SIG 1, still alive)");
    }
    let before = signals_of(me).ok_or("init not in the table")?;
    // A terminating one: the sleeper wakes, dies of it, and init receives SIGCHLD.
    proc::kill(pid, SIGUSR1 as i32).map_err(|_| "kill SIGUSR1 failed")?;
    let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    let status = r.status.raw();
    println!("  sleeper killed: status {status:#x}, signals received {}", r.totals.counters.signals);
    if !(wifsignaled(status) && wtermsig(status) == i32::from(SIGUSR1)) {
        return Err("the wait status does not say SIGUSR1");
    }
    if r.totals.counters.signals != 2 {
        return Err("the victim's record does not count both signals");
    }
    let after = signals_of(me).ok_or("init not in the table")?;
    println!("  init's SIGCHLD count: {before} -> {after}");
    if after != before + 1 {
        return Err("the parent did not receive SIGCHLD");
    }
    Ok(())
}
