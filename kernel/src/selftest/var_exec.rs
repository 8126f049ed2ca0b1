//! Programs on `/var`, paged in on demand (`proc/vm_file.rs`): major faults and PAGING_SLEEP.
//!
//! `/var` has no `cp`, so the test's first step copies `/bin/hello` from the ramdisk to
//! `/var/HELLO` through `fsd` (what a shell's `cp` would ask). Then it spawns `/var/HELLO`
//! twice and checks, from each exit's totals: the program ran (exit 0, its arguments
//! printed); it took **major** faults — one per page it touched that holds file bytes, each
//! a read through fsd — and as many as the kernel's page-in counter says; the waits for
//! those reads are PAGING_SLEEP (non-zero), not UNINTERRUPTIBLE_SLEEP; the second run
//! takes exactly as many major faults as the first (there is no page cache: every run
//! reads its pages again). The fixture `/test/paging`, copied to `/var/PAGING`, has pages of
//! its read-only data brought in first by a system call's copy (`write` from them into a
//! pipe: the kernel's copy faults the page in, in ONCPU_SYS) and then by its own code, and
//! checks the bytes. The same program from the ramdisk takes none. Refusals: a
//! directory (`EACCES`), a file that is not an ELF (`ENOEXEC`), a missing one (`ENOENT`).
//! Then the frames come back to their baseline and both exact invariants hold: (a) each
//! task's clocks sum to its age — at every exit and for every live task — and (b) the
//! INTERRUPTED time of all tasks equals the handler time of all lines.

use tally_microstate::MicroState;
use tally_uapi::errno::{EACCES, ENOENT, ENOEXEC};
use tally_uapi::fs::{O_CREAT, O_RDWR, O_TRUNC};

use super::ring3::{expect_exit, frames_unchanged, reap, t, us};
use crate::fs::{self, Done, Op};
use crate::{acct, proc, sched};

fn path(p: &[u8]) -> Result<tally_uapi::fs::path::VarPath, &'static str> {
    tally_uapi::fs::path::parse(p).map_err(|_| "bad path")
}

/// Write `data` to the file `p` on `/var`, created or truncated.
fn write_file(p: &[u8], data: &[u8]) -> Result<(), &'static str> {
    let node = match fs::call(Op::Open { path: path(p)?, flags: O_CREAT | O_RDWR | O_TRUNC }) {
        Ok(Done::Opened { node, .. }) => node,
        _ => return Err("cannot create a file on /var"),
    };
    let mut at = 0;
    for chunk in data.chunks(16 * 1024) {
        match fs::call(Op::Write { node, pos: Some(at), data: chunk.to_vec() }) {
            Ok(Done::Wrote { n, .. }) if n == chunk.len() as u64 => at += n,
            _ => return Err("cannot write a file on /var"),
        }
    }
    fs::call(Op::Close { node }).map_err(|_| "close failed")?;
    Ok(())
}

/// One run of `path` with `argv`: (major faults, PAGING_SLEEP ticks, UNINTERRUPTIBLE ticks,
/// minor faults, sectors read).
fn run(path: &str, argv: &[&[u8]]) -> Result<(u64, u64, u64, u64, u64), &'static str> {
    let (ins, _) = proc::vm_file::counts();
    let (pid, vm) = proc::spawn_program_vm(path, argv).map_err(|e| {
        println!("var_exec: spawn {path}: errno {e}");
        "cannot spawn"
    })?;
    let r = reap(pid, &vm)?;
    expect_exit(&r, 0)?;
    let (ins2, _) = proc::vm_file::counts();
    let (c, m) = (&r.totals.counters, &r.totals.msa);
    let (paging, unint) = (t(m, MicroState::PagingSleep), t(m, MicroState::UninterruptibleSleep));
    println!(
        "var_exec: {path}: {} major faults ({} pages read by faults), {} minor, PAGING_SLEEP {} us, \
            UNINTERRUPTIBLE_SLEEP {} us, inblock {}",
        c.majflt,
        ins2 - ins,
        c.minflt,
        us(paging),
        us(unint),
        c.inblock
    );
    if c.majflt != ins2 - ins {
        return Err("the process's major faults differ from the pages read in for it");
    }
    Ok((c.majflt, paging, unint, c.minflt, c.inblock))
}

pub fn demand_paged() -> Result<(), &'static str> {
    if !fs::present() {
        return Err("no /var disk");
    }
    let hello = proc::ramdisk::find("/bin/hello").map_err(|_| "no /bin/hello in the ramdisk")?;
    write_file(b"/var/HELLO", hello)?;
    let paging = proc::ramdisk::find("/test/paging").map_err(|_| "no /test/paging in the ramdisk")?;
    write_file(b"/var/PAGING", paging)?;
    write_file(b"/var/TEXT", b"#!/bin/sh\necho not an ELF\n")?;
    println!("var_exec: copied /bin/hello ({} bytes) to /var/HELLO", hello.len());
    frames_unchanged("var_exec", || {
        let argv: &[&[u8]] = &[b"hello", b"paged", b"in"];
        let (maj, paging, _, _, inblock) = run("/var/HELLO", argv)?;
        if maj == 0 || inblock == 0 {
            return Err("a program on /var took no major fault (or read nothing)");
        }
        if tally_microstate::ACCOUNTING_ENABLED && paging == 0 {
            return Err("the page-ins' waits were not PAGING_SLEEP");
        }
        let (maj2, paging2, ..) = run("/var/HELLO", argv)?;
        if maj2 != maj || (tally_microstate::ACCOUNTING_ENABLED && paging2 == 0) {
            return Err("a second run did not read its pages again");
        }
        println!("var_exec: second run: {maj2} major faults again (no page cache)");
        // Pages brought in by a system call's copy (ONCPU_SYS), then by user code.
        let (majp, pagingp, ..) = run("/var/PAGING", &[b"paging"])?;
        if majp < 3 || (tally_microstate::ACCOUNTING_ENABLED && pagingp == 0) {
            return Err("the paging fixture's pages were not read in by major faults");
        }
        let (maj3, paging3, ..) = run("/bin/hello", argv)?;
        if maj3 != 0 || paging3 != 0 {
            return Err("a ramdisk program took a major fault");
        }
        for (p, want) in [("/var/TEXT", ENOEXEC), ("/var", EACCES), ("/var/NOPE", ENOENT)] {
            match proc::spawn_program(p, &[b"x"]) {
                Err(e) if e == want => println!("var_exec: spawn {p}: errno {e}, as expected"),
                _ => return Err("spawn of a bad /var path did not fail as expected"),
            }
        }
        Ok(())
    })?;
    both_invariants()?;
    fs::call(Op::Unlink { path: path(b"/var/HELLO")? }).map_err(|_| "unlink failed")?;
    fs::call(Op::Unlink { path: path(b"/var/TEXT")? }).map_err(|_| "unlink failed")?;
    fs::call(Op::Unlink { path: path(b"/var/PAGING")? }).map_err(|_| "unlink failed")?;
    println!("var_exec: ok");
    Ok(())
}

/// (a) for every live task now (every exit was checked as it happened: `frames_unchanged`),
/// and (b) over all tasks, live and released, against all IRQ lines.
fn both_invariants() -> Result<(), &'static str> {
    if !tally_microstate::ACCOUNTING_ENABLED {
        return Ok(());
    }
    let s = hal::cpu::without_interrupts(acct::snapshot);
    let mut interrupted = s.released[MicroState::Interrupted as usize];
    for (_, _, clocks, age) in &s.tasks {
        if clocks.iter().sum::<u64>() != *age {
            return Err("invariant (a) broken for a live task");
        }
        interrupted += clocks[MicroState::Interrupted as usize];
    }
    if interrupted != s.total_handler_ticks {
        return Err("invariant (b): INTERRUPTED differs from the handler time");
    }
    let (checked, broken) = sched::exit_invariant_counts();
    println!(
        "var_exec: invariants hold exactly: (a) at {checked} exits (broken {broken}) and for {} live tasks, (b) \
            INTERRUPTED {interrupted} ticks = handler time",
        s.tasks.len()
    );
    Ok(())
}
