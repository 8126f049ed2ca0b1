//! `fork`, `vfork` and `execve` from ring 3: the kernel half of the scenarios that run the
//! fixture `/test/forks` (`userland/src/test/forks.rs`, whose checks are numbered there).
//! Each runs between two readings of the frames in use, which must agree: shared frames go
//! back to the pool with their last reference, whichever process lets go last.
//!
//! * [`cow`] (`tests/user_fork.toml`): parent and child see their own writes; a write to a
//!   shared page is exactly one minor fault, in ONCPU_TRAP;
//! * [`exec`] (`tests/fork_exec.toml`): `execve`'s errors, fork + execve + wait, vfork +
//!   execve, descriptors across fork and exec;
//! * [`bomb`] (`tests/fork_bomb.toml`): a fork bomb meets the task limit (`EAGAIN`), its
//!   children end, and the kernel starts a program as before (twice: the first bomb's
//!   thousand kernel stacks need page tables that stay, as the smoke run's do for one);
//! * [`accounting`] (`tests/fork_acct.toml`): process accounting's records of a child that
//!   forked but did not exec (AFORK, its parent's name) and of two that exec'd (no AFORK,
//!   the program's name).

use alloc::vec::Vec;
use tally_uapi::acct::AFORK;

use super::acct_files::{comm, create, read_all};
use super::ring3::{expect_exit, frames_unchanged, run_fixture};

fn fixture(what: &'static str, args: &[&str]) -> Result<(), &'static str> {
    frames_unchanged(what, || {
        let r = run_fixture("forks", args)?;
        println!("{what}: /test/forks {} ended with status {:#x}", args[0], r.status.raw());
        expect_exit(&r, 0)
    })
}

pub fn cow() -> Result<(), &'static str> {
    fixture("user_fork", &["cow"])
}

pub fn exec() -> Result<(), &'static str> {
    fixture("fork_exec", &["exec"])
}

pub fn bomb() -> Result<(), &'static str> {
    // A first bomb settles the one-time allocations of a thousand tasks at once (the page
    // tables of the kernel stacks' slots, which stay); the second must leave nothing.
    let first = run_fixture("forks", &["bomb"])?;
    expect_exit(&first, 0)?;
    fixture("fork_bomb", &["bomb"])?;
    // The kernel carries on: a new program starts and ends as before.
    let r = run_fixture("forks", &["cow"])?;
    expect_exit(&r, 0)?;
    println!("fork_bomb: a program runs after the bomb");
    Ok(())
}

pub fn accounting() -> Result<(), &'static str> {
    const FILE: &[u8] = b"/var/TMP/FORKS";
    create(FILE)?;
    let r = run_fixture("forks", &["acct", "/var/TMP/FORKS"])?;
    println!("fork_acct: status {:#x}", r.status.raw());
    expect_exit(&r, 0)?;
    let bytes = read_all(FILE)?;
    let mut recs = Vec::new();
    for rec in tally_pacct::records(&bytes) {
        recs.push(rec.map_err(|_| "a record is not a v3 record")?);
    }
    for a in &recs {
        println!(
            "fork_acct: {:<8} status {:#06x} flags {:#04x} {}",
            comm(&a.ac_comm),
            a.ac_exitcode,
            a.ac_flag,
            if a.ac_flag & AFORK != 0 { "AFORK" } else { "exec'd" }
        );
    }
    let mine: Vec<_> = recs.iter().filter(|a| a.ac_ppid == r.pid as u32).collect();
    let want: [(&str, u32, u8); 3] = [("forks", 3 << 8, AFORK), ("hello", 0, 0), ("hello", 0, 0)];
    if mine.len() != 3 {
        return Err("not exactly one record per child");
    }
    for (a, (name, status, flags)) in mine.iter().zip(want) {
        if comm(&a.ac_comm) != name || a.ac_exitcode != status || a.ac_flag != flags {
            return Err("a child's name, status or AFORK flag is wrong");
        }
    }
    println!("fork_acct: AFORK on the child that did not exec, not on those that did");
    Ok(())
}
