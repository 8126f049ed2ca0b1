//! Self-tests of threads as musl makes them, futexes and poll, from user space: the fixture
//! `/test/usync` (`userland/src/test/usync.rs`; its exit status names the check it failed)
//! runs each part, and the kernel checks what it cannot see from ring 3 — where the time
//! went (FUTEX_SLEEP, POLL_SLEEP: the new microstates are reached), that the process's
//! total is exactly its threads' exit clocks, that no futex sleeper is left behind, and both
//! exact invariants: (a) every task's clocks sum to its age, at every exit and for the live
//! ones; (b) the INTERRUPTED time of all tasks equals the handler time of all IRQ lines.

use tally_microstate::{MicroState, MsaTimes};

use super::ring3::{expect_exit, frames_unchanged, run_fixture, start_fixture, t, us};
use crate::proc::{self, WaitResult};
use crate::{acct, sched};

fn sum(records: &[proc::ExitLogEntry]) -> MsaTimes {
    let mut total = MsaTimes::default();
    for r in records {
        for (a, b) in total.iter_mut().zip(r.totals.msa.iter()) {
            *a += b;
        }
    }
    total
}

/// Invariant (a) for every live task now, (b) over the whole system.
fn both_invariants(what: &str) -> Result<(), &'static str> {
    let s = acct::snapshot();
    let mut interrupted = s.released[MicroState::Interrupted as usize];
    for (pid, _, clocks, age) in &s.tasks {
        if tally_microstate::ACCOUNTING_ENABLED && clocks.iter().sum::<u64>() != *age {
            println!("{what}: pid {pid} breaks invariant (a)");
            return Err("invariant (a) broken for a live task");
        }
        interrupted += clocks[MicroState::Interrupted as usize];
    }
    let (checked, broken) = sched::exit_invariant_counts();
    println!("{what}: invariant (a) checked at {checked} exits, broken at {broken}");
    if tally_microstate::ACCOUNTING_ENABLED && (broken != 0 || interrupted != s.total_handler_ticks) {
        return Err("an invariant is broken");
    }
    println!("{what}: both invariants hold exactly");
    Ok(())
}

/// Run `/test/usync MODE`: its status must be 0, its total the sum of its threads' exits.
fn run(what: &str, mode: &str, threads: usize) -> Result<WaitResult, &'static str> {
    let r = run_fixture("usync", &[mode])?;
    let records = proc::recent_exits(r.pid);
    println!("{what}: /test/usync {mode}: status {:#x}, {} thread exit(s)", r.status.raw(), records.len());
    expect_exit(&r, 0)?;
    if records.len() != threads || sum(&records) != r.totals.msa {
        return Err("the process total is not the sum of its threads' exit clocks");
    }
    Ok(r)
}

/// Threads made with musl's `clone` flags contend on a futex and are joined through
/// `CLONE_CHILD_CLEARTID`; the futex errors; FUTEX_SLEEP reached.
pub fn futex() -> Result<(), &'static str> {
    frames_unchanged("user_futex", || {
        // The main thread, 4 workers, one gate sleeper, two bitset sleepers.
        let r = run("user_futex", "futex", 8)?;
        let futex = t(&r.totals.msa, MicroState::FutexSleep);
        println!(
            "user_futex: FUTEX_SLEEP {} us over the process's threads; futex sleepers left: {}",
            us(futex),
            proc::futex::sleepers()
        );
        if tally_microstate::ACCOUNTING_ENABLED && futex == 0 {
            return Err("no time in FUTEX_SLEEP");
        }
        if proc::futex::sleepers() != 0 {
            return Err("a futex sleeper was left queued");
        }
        Ok(())
    })?;
    both_invariants("user_futex")
}

/// `exit_group` while one thread sleeps in a futex and one in `poll`, neither with a
/// timeout: the kill ends both sleeps (FUTEX_SLEEP and POLL_SLEEP are interruptible), the
/// process ends with the main thread's status, and no futex sleeper is left queued.
pub fn exit_group() -> Result<(), &'static str> {
    frames_unchanged("user_sync_kill", || {
        let r = run("user_sync_kill", "exit_group", 3)?;
        let (futex, poll) = (t(&r.totals.msa, MicroState::FutexSleep), t(&r.totals.msa, MicroState::PollSleep));
        println!(
            "user_sync_kill: FUTEX_SLEEP {} us, POLL_SLEEP {} us; futex sleepers left: {}",
            us(futex),
            us(poll),
            proc::futex::sleepers()
        );
        if tally_microstate::ACCOUNTING_ENABLED && (futex == 0 || poll == 0) {
            return Err("the threads did not sleep in the futex and in poll");
        }
        if proc::futex::sleepers() != 0 {
            return Err("a killed futex sleeper was left queued");
        }
        Ok(())
    })?;
    both_invariants("user_sync_kill")
}

/// poll and ppoll on pipes, a bus socket, a directory and the console's output; POLL_SLEEP.
pub fn poll() -> Result<(), &'static str> {
    frames_unchanged("user_poll", || {
        let r = run("user_poll", "poll", 2)?;
        let poll = t(&r.totals.msa, MicroState::PollSleep);
        println!("user_poll: POLL_SLEEP {} us", us(poll));
        if tally_microstate::ACCOUNTING_ENABLED && poll == 0 {
            return Err("no time in POLL_SLEEP");
        }
        Ok(())
    })?;
    both_invariants("user_poll")
}

/// poll on the console: nothing typed, then a sleep in POLL_SLEEP until a line arrives
/// (typed through the UART's loopback once the fixture sleeps).
pub fn poll_console() -> Result<(), &'static str> {
    frames_unchanged("user_poll_console", || {
        crate::drivers::tty::discard();
        let (pid, vm) = start_fixture("usync", &["console"])?;
        // Wait until the fixture sleeps in poll (POLL_SLEEP has started to count).
        let mut waited = 0;
        let polling = || {
            acct::snapshot()
                .tasks
                .iter()
                .any(|(p, _, clocks, _)| *p == pid && clocks[MicroState::PollSleep as usize] > 0)
        };
        while !polling() && waited < 2000 {
            sched::sleep_ns(1_000_000);
            waited += 1;
        }
        if tally_microstate::ACCOUNTING_ENABLED && !polling() {
            return Err("the fixture never slept in poll");
        }
        super::stop_accounting::type_on_console(b"hi\r");
        let r = super::ring3::reap(pid, &vm)?;
        let poll = t(&r.totals.msa, MicroState::PollSleep);
        println!("user_poll_console: status {:#x}, POLL_SLEEP {} us", r.status.raw(), us(poll));
        expect_exit(&r, 0)
    })?;
    both_invariants("user_poll_console")
}
