//! Self-test of job control's STOPPED microstate (`proc/job_stop.rs`, `sched/stop.rs`): a
//! spinner (stopped at its return to user mode) and a sleeper (stopped in its sleep) are
//! stopped with SIGSTOP and continued with SIGCONT; a third process is killed while
//! stopped. Checked, exactly, in TSC ticks:
//!
//! * the parent's `wait4(WUNTRACED)` reports each stop (`0x7f | SIGSTOP << 8`) and
//!   `WCONTINUED` each continue (`0xffff`), with a SIGCHLD counted for the parent each time;
//! * STOPPED lies between what the test saw: at least from the reported stop to the SIGCONT
//!   sent, at most from the SIGSTOP sent to the SIGCONT done — logical bounds, no threshold;
//! * a taskstats GET (`acct::of_pid`) during the stop shows STOPPED;
//! * the sleeper still gets its wake-up and finishes its sleep (it reports the time asked);
//! * invariant (a) (the 13 clocks sum to the task's age) for every live task while one is
//!   stopped, after the continue, and at every exit; invariant (b) (Σ INTERRUPTED == Σ IRQ
//!   handler time) at the end;
//! * the exit record (the exit log, which the taskstats exit record is built from) and the
//!   reaped totals carry the same STOPPED clock;
//! * SIGKILL ends a stopped process (status 9).

use tally_microstate::MicroState;
use tally_tasktable::WaitFor;
use tally_uapi::signal::{SIGCONT, SIGKILL, SIGSTOP};

use crate::proc::{self, WaitOptions, Waited};
use crate::{acct, sched};

const STOPPED: usize = MicroState::Stopped as usize;

/// Wait for `pid`'s stop or continue report; its status.
fn job_report(pid: i32) -> Result<i32, &'static str> {
    let how = WaitOptions { nohang: false, untraced: true, continued: true };
    match proc::wait_child(WaitFor::Pid(pid), how) {
        Ok(Some(Waited::Job { pid: p, status })) if p == pid => Ok(status),
        Ok(Some(Waited::Reaped(_))) => Err("the child ended instead of stopping"),
        _ => Err("wait4(WUNTRACED | WCONTINUED) failed"),
    }
}

/// Invariant (a) for every live task now.
fn clocks_sum_to_age() -> Result<(), &'static str> {
    if !tally_microstate::ACCOUNTING_ENABLED {
        return Ok(());
    }
    for (pid, _, clocks, age) in &acct::snapshot().tasks {
        if clocks.iter().sum::<u64>() != *age {
            println!("stop: pid {pid} breaks invariant (a)");
            return Err("invariant (a) broken for a live task");
        }
    }
    Ok(())
}

/// The STOPPED clock of thread `pid` now.
fn stopped_ticks(pid: i32) -> u64 {
    acct::snapshot().tasks.iter().find(|t| t.0 == pid).map_or(0, |t| t.2[STOPPED])
}

fn signals_of(pid: i32) -> u64 {
    acct::task_stats().0.into_iter().find(|t| t.pid == pid).map_or(0, |t| t.counters.signals)
}

/// Stop `pid` for about `ns`, continue it; returns its STOPPED clock's bounds (lo, hi) in
/// ticks, checking the reports, a GET and invariant (a) on the way.
fn stop_for(pid: i32, ns: u64) -> Result<(u64, u64), &'static str> {
    let chld_before = signals_of(1);
    let t0 = hal::tsc::read();
    proc::kill(pid, i32::from(SIGSTOP)).map_err(|_| "kill SIGSTOP failed")?;
    if job_report(pid)? != 0x7f | i32::from(SIGSTOP) << 8 {
        return Err("the stop was not reported as stopped by SIGSTOP");
    }
    let t1 = hal::tsc::read();
    // A stopped process cannot exit: exactly one SIGCHLD so far, the stop's.
    if signals_of(1) != chld_before + 1 {
        return Err("the parent did not receive SIGCHLD for the stop");
    }
    sched::sleep_ns(ns);
    clocks_sum_to_age()?;
    let got = acct::of_pid(pid).map_err(|_| "taskstats GET failed")?;
    if tally_microstate::ACCOUNTING_ENABLED && got.msa_ticks[STOPPED] == 0 {
        return Err("a taskstats GET of a stopped task shows no STOPPED time");
    }
    let t2 = hal::tsc::read();
    proc::kill(pid, i32::from(SIGCONT)).map_err(|_| "kill SIGCONT failed")?;
    let t3 = hal::tsc::read();
    if job_report(pid)? != 0xffff {
        return Err("the continue was not reported as 0xffff");
    }
    // The continue's (the child may also have ended since: its exit's SIGCHLD).
    if signals_of(1) < chld_before + 2 {
        return Err("the parent did not receive SIGCHLD for the continue");
    }
    clocks_sum_to_age()?;
    Ok((t2 - t1, t3 - t0))
}

/// Reap `pid` (exit 0) and check that its reaped totals and its exit record (the exit log,
/// from which the taskstats exit record is built) both carry STOPPED = `expected` ticks.
fn reap_with_stopped(pid: i32, expected: u64) -> Result<(), &'static str> {
    let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    super::ring3::expect_exit(&r, 0)?;
    let exit_record = proc::recent_exits(pid).last().map(|e| e.totals.msa[STOPPED]);
    if exit_record != Some(r.totals.msa[STOPPED]) || r.totals.msa[STOPPED] != expected {
        return Err("the exit record and the reaped totals do not carry the STOPPED clock");
    }
    Ok(())
}

pub fn stopped() -> Result<(), &'static str> {
    let spin = proc::spawn_program("/bin/spin", &[b"spin", b"1500"]).map_err(|_| "cannot spawn spin")?;
    let sleeper = proc::spawn_program("/bin/sleeper", &[b"sleeper", b"300"]).map_err(|_| "cannot spawn sleeper")?;
    let victim = proc::spawn_program("/bin/spin", &[b"spin", b"100000"]).map_err(|_| "cannot spawn a victim")?;
    sched::sleep_ns(30_000_000);

    // The sleeper is asleep: stopped in its sleep, whose deadline passes meanwhile; its
    // wake-up waits for the SIGCONT. (Each child is reaped before the next is stopped, so
    // no other child's exit adds to the SIGCHLD count stop_for checks.)
    let (sl_lo, sl_hi) = stop_for(sleeper, 500_000_000)?;
    let sleeper_now = stopped_ticks(sleeper);
    reap_with_stopped(sleeper, sleeper_now)?;
    // The spinner runs in user mode: it stops at its next return there (a tick).
    let (spin_lo, spin_hi) = stop_for(spin, 100_000_000)?;
    let spin_now = stopped_ticks(spin);
    println!(
        "stop: spin STOPPED {spin_now} ticks in [{spin_lo}, {spin_hi}]; sleeper {sleeper_now} in [{sl_lo}, {sl_hi}]"
    );
    if tally_microstate::ACCOUNTING_ENABLED
        && !((spin_lo..=spin_hi).contains(&spin_now) && (sl_lo..=sl_hi).contains(&sleeper_now))
    {
        return Err("STOPPED is not within the stop the test saw");
    }
    reap_with_stopped(spin, spin_now)?;
    println!("stop: exit records carry STOPPED; the sleeper finished its sleep");

    // SIGKILL ends a stopped process.
    proc::kill(victim, i32::from(SIGSTOP)).map_err(|_| "kill SIGSTOP failed")?;
    job_report(victim)?;
    proc::kill(victim, i32::from(SIGKILL)).map_err(|_| "kill SIGKILL failed")?;
    let r = proc::wait(Some(victim)).map_err(|_| "the stopped victim was not reaped")?;
    if r.status.raw() != i32::from(SIGKILL) {
        return Err("a stopped process killed by SIGKILL does not say SIGKILL");
    }
    println!("stop: a stopped process killed by SIGKILL: status {:#x}", r.status.raw());

    let (checked, broken) = sched::exit_invariant_counts();
    let s = acct::snapshot();
    let mut interrupted = s.released[MicroState::Interrupted as usize];
    for (_, _, clocks, _) in &s.tasks {
        interrupted += clocks[MicroState::Interrupted as usize];
    }
    println!("stop: invariant (a) checked at {checked} exits, broken at {broken}");
    if tally_microstate::ACCOUNTING_ENABLED && (broken != 0 || interrupted != s.total_handler_ticks) {
        return Err("an invariant is broken after stop and continue");
    }
    println!("stop: both invariants hold exactly");
    Ok(())
}

/// Send `bytes` through the UART's loopback (as if typed) and wait until the console's
/// interrupt has taken them all (nothing may print meanwhile: in loopback the UART's output
/// comes back as input, so the line discipline's echo — `^C` — is off while typing).
pub(super) fn type_on_console(bytes: &[u8]) {
    let (before, _) = crate::drivers::tty::stats();
    let saved = crate::drivers::tty::termios();
    let mut quiet = saved;
    quiet.c_lflag &= !tally_uapi::tty::ECHO;
    crate::drivers::tty::set_termios(quiet, false);
    hal::serial::set_loopback(true);
    hal::serial::send_raw(bytes);
    let mut waited = 0;
    while crate::drivers::tty::stats().0 < before + bytes.len() as u64 && waited < 1000 {
        sched::sleep_ns(1_000_000);
        waited += 1;
    }
    hal::serial::set_loopback(false);
    crate::drivers::tty::set_termios(saved, false);
}

/// Start `argv` as a job of its own (a new process group), in the console's foreground if
/// `foreground`.
fn job(path: &str, argv: &[&[u8]], foreground: bool) -> Result<i32, &'static str> {
    let attr = proc::SpawnAttr { group: tally_tasktable::SpawnGroup::Join(0), foreground };
    proc::spawn_program_in(path, argv, attr).map_err(|_| "cannot spawn a job")
}

/// The console's job control through its input (`proc/job_control.rs`, the tty's ISIG
/// hook): the self-test (pid 1, a session leader) takes the console; ^C typed (through the
/// UART's loopback) kills the foreground job with SIGINT, ^\ one with SIGQUIT; ^Z sends
/// SIGTSTP, which POSIX discards for a job in an orphaned group — and a job whose parent is
/// init is one — so the job is not stopped (counted only); the three bytes never reach the
/// input buffer; a background job of an orphaned group reading the console gets `EIO`
/// instead of SIGTTIN; `tcsetpgrp` refuses a group that does not exist; `TIOCNOTTY` gives
/// the console up. (^Z stopping a job and SIGTTIN are the shell's scenario, `job_control`.)
pub fn console() -> Result<(), &'static str> {
    use tally_uapi::errno::ESRCH;
    use tally_uapi::signal::{SIGINT, SIGQUIT};
    crate::drivers::tty::discard();
    proc::set_controlling_tty(false).map_err(|_| "TIOCSCTTY refused to a session leader")?;
    if proc::tcgetpgrp() != Ok(1) {
        return Err("the console's foreground group is not the session leader's");
    }
    let spin = job("/bin/spin", &[b"spin", b"100000"], true)?;
    if proc::tcgetpgrp() != Ok(spin) {
        return Err("spawn's SPAWN_TCSETPGRP did not make the job the foreground group");
    }
    sched::sleep_ns(20_000_000);
    // ^Z, then ^C: an orphaned job is not stopped by the first, and dies of the second.
    type_on_console(b"\x1a\x03");
    let how = WaitOptions { nohang: false, untraced: true, continued: true };
    let r = match proc::wait_child(WaitFor::Pid(spin), how) {
        Ok(Some(Waited::Reaped(r))) => r,
        Ok(Some(Waited::Job { .. })) => return Err("^Z stopped a job of an orphaned group"),
        _ => return Err("wait failed"),
    };
    if r.status.raw() != i32::from(SIGINT) || r.totals.counters.signals != 2 {
        return Err("^C did not kill the foreground job with SIGINT after a counted ^Z");
    }
    println!("console: ^Z counted and discarded (orphaned group), ^C killed the foreground job (SIGINT)");
    let spin = job("/bin/spin", &[b"spin", b"100000"], true)?;
    sched::sleep_ns(20_000_000);
    type_on_console(b"\x1c");
    let r = proc::wait(Some(spin)).map_err(|_| "wait failed")?;
    if r.status.raw() != i32::from(SIGQUIT) | 0x80 {
        return Err("^\\ did not kill the foreground job with SIGQUIT");
    }
    println!("console: ^\\ killed the foreground job (SIGQUIT, core flag)");
    if crate::drivers::tty::pending() != 0 {
        return Err("an ISIG character reached the input buffer");
    }
    proc::tcsetpgrp(1).map_err(|_| "tcsetpgrp back to the session leader failed")?;
    if proc::tcsetpgrp(999_999) != Err(ESRCH) {
        return Err("tcsetpgrp to a group that does not exist is not ESRCH");
    }
    // A background reader of an orphaned group: EIO, no stop.
    let cat = job("/bin/cat", &[b"cat"], false)?;
    let r = match proc::wait_child(WaitFor::Pid(cat), how) {
        Ok(Some(Waited::Reaped(r))) => r,
        Ok(Some(Waited::Job { .. })) => return Err("a reader of an orphaned group was stopped"),
        _ => return Err("wait failed"),
    };
    if r.status.raw() == 0 {
        return Err("a background reader of an orphaned group read the console");
    }
    println!("console: a background reader of an orphaned group got EIO (status {:#x})", r.status.raw());
    proc::give_up_tty().map_err(|_| "TIOCNOTTY failed")?;
    if proc::tcgetpgrp().is_ok() {
        return Err("the console still has a session after TIOCNOTTY");
    }
    Ok(())
}
