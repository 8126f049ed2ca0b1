//! Self-tests of processes and threads from user space: `spawn` from the ramdisk, `wait4`
//! and its rusage, `thread_create`, and how a multi-threaded process dies.
//!
//! The programs are the real ones of the ramdisk (`/bin/hello`, `/bin/spin`) and the test
//! fixtures `/test/spawner`, `/test/waiter` and `/test/threads` (`userland/src/test/`; their
//! contract, arguments and result area are `tally_uapi::fixture`). A fixture's exit status
//! names the check it failed (0: none). Where a fixture reports what a system call told it,
//! the test reads its result area through the process's memory map while it waits for the
//! go word, and compares with what the kernel knows — exactly, in TSC ticks converted the
//! same way. Every test also checks that the frames in use return to their baseline
//! (`user::frames_unchanged`).

use alloc::vec::Vec;
use tally_microstate::{MicroState, MsaTimes, NR_MICROSTATES};
use tally_tasktable::{wexitstatus, wifexited, wifsignaled, wtermsig};
use tally_uapi::errno::{E2BIG, EINVAL, ENOENT};
use tally_uapi::fixture::{
    AREA_CHILD_PID, AREA_DONE, AREA_GO, AREA_MSA_A, AREA_MSA_B, AREA_RUSAGE, AREA_TIDS, RESULT_AREA,
    THREADS_EXIT_GROUP, THREADS_EXIT_GROUP_STATUS, THREADS_FAULT, THREADS_LEADER_FIRST, THREADS_LEADER_STATUS,
    THREADS_REPORT, THREADS_THREAD_EXIT_GROUP, THREADS_THREAD_EXIT_GROUP_STATUS,
};
use tally_uapi::syscall::Rusage;

use super::ring3::{expect_exit, frames_unchanged, run_fixture, start_fixture, t, us};
use crate::proc;
use crate::proc::vm::Vm;
use crate::proc::WaitResult;
use crate::{acct, sched};

fn read_u64(vm: &Vm, offset: u64) -> Result<u64, &'static str> {
    let mut b = [0u8; 8];
    vm.read(RESULT_AREA + offset, &mut b).map_err(|_| "cannot read the result area")?;
    Ok(u64::from_le_bytes(b))
}

fn read_msa(vm: &Vm, offset: u64) -> Result<MsaTimes, &'static str> {
    let mut m = [0u64; NR_MICROSTATES];
    for (i, v) in m.iter_mut().enumerate() {
        *v = read_u64(vm, offset + 8 * i as u64)?;
    }
    Ok(m)
}

/// Wait until program `pid` has set its *done* word (or has died: its status is reported).
pub(super) fn await_done(pid: i32, vm: &Vm) -> Result<(), &'static str> {
    for _ in 0..10_000 {
        if proc::is_zombie(pid) {
            let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
            println!("  pid {} ended early with status {:#x}", r.pid, r.status.raw());
            return Err("the program failed a check before reporting");
        }
        // The area is there only once the fixture has mapped it and written to it.
        if read_u64(vm, AREA_DONE).is_ok_and(|done| done == 1) {
            return Ok(());
        }
        sched::sleep_ns(1_000_000);
    }
    Err("the program never reported")
}

/// Let a program that reported go on.
pub(super) fn release(vm: &Vm) -> Result<(), &'static str> {
    vm.write(RESULT_AREA + AREA_GO, &1u64.to_le_bytes()).map_err(|_| "cannot write the go word")
}

fn ns(ticks: u64) -> u64 {
    crate::base::time::clock().ticks_to_ns(ticks)
}

fn sum_msa<'a>(it: impl Iterator<Item = &'a MsaTimes>) -> MsaTimes {
    let mut s = [0u64; NR_MICROSTATES];
    for m in it {
        for (a, b) in s.iter_mut().zip(m) {
            *a = a.wrapping_add(*b);
        }
    }
    s
}

/// `spawn` from the kernel side and from user space: arguments arrive, errors are right.
pub fn spawn() -> Result<(), &'static str> {
    frames_unchanged("user_spawn", || {
        let pid =
            proc::spawn_program("/bin/hello", &[b"hello", b"one", b"two"]).map_err(|_| "spawn /bin/hello failed")?;
        let comm = acct::snapshot()
            .tasks
            .iter()
            .find(|(p, ..)| *p == pid)
            .map(|(_, comm, ..)| *comm)
            .ok_or("the spawned task is not in the table")?;
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        println!(
            "user_spawn: /bin/hello as pid {pid}, comm \"{}\", status {:#x}",
            core::str::from_utf8(&comm).unwrap_or("?").trim_end_matches('\0'),
            r.status.raw()
        );
        expect_exit(&r, 0)?;
        if &comm[..6] != b"hello\0" {
            return Err("the child is not named after its program");
        }
        let big = alloc::vec![b'x'; 200_000];
        let cases: [(&str, &[&[u8]], i32); 5] = [
            ("/bin/nope", &[b"nope"], ENOENT),
            ("/bin", &[b"bin"], ENOENT),
            ("", &[], ENOENT),
            ("/bin/hello", &[b"hel\0lo"], EINVAL),
            ("/bin/hello", &[&big], E2BIG),
        ];
        for (path, argv, want) in cases {
            match proc::spawn_program(path, argv) {
                Err(e) if e == want => {}
                Err(e) => {
                    println!("  spawn {path:?}: errno {e}, expected {want}");
                    return Err("spawn failed with the wrong errno");
                }
                Ok(_) => return Err("spawn of a bad request succeeded"),
            }
        }
        println!("user_spawn: ENOENT, EINVAL (NUL in an argument), E2BIG as expected");
        let r = run_fixture("spawner", &["20"])?;
        println!("user_spawn: spawner (spawn + wait4 from ring 3, 20 times) status {:#x}", r.status.raw());
        expect_exit(&r, 0)
    })
}

/// 1000 × spawn + exit + wait4 of a small program, from ring 3: frames back to baseline.
pub fn stress() -> Result<(), &'static str> {
    const N: u64 = 1000;
    let frames_before = crate::base::memory::stats().frames_in_use;
    frames_unchanged("spawn_stress", || {
        let t0 = crate::base::time::monotonic_ns().unwrap_or(0);
        let r = run_fixture("spawner", &[&alloc::format!("{N}")])?;
        let ms = (crate::base::time::monotonic_ns().unwrap_or(0) - t0) / 1_000_000;
        println!("spawn_stress: {N} spawn/exit/wait4 cycles of /bin/hello in {ms} ms, status {:#x}", r.status.raw());
        expect_exit(&r, 0)?;
        // The kernel heap reaches a steady state (the exit-record log is full by now): 200
        // more cycles must not make it grow.
        super::ring3::settle();
        let heap = crate::base::memory::stats().heap_bytes;
        let r = run_fixture("spawner", &["200"])?;
        expect_exit(&r, 0)?;
        super::ring3::settle();
        let heap2 = crate::base::memory::stats().heap_bytes;
        println!("spawn_stress: kernel heap {heap} bytes, {heap2} after 200 more cycles");
        if heap2 > heap + 4096 {
            return Err("the kernel heap grows with every spawned process");
        }
        Ok(())
    })?;
    println!(
        "spawn_stress: frames in use {} before the first test program, {} now",
        frames_before,
        crate::base::memory::stats().frames_in_use
    );
    Ok(())
}

/// `wait4`: errors, `WNOHANG`, EFAULT before reaping, the rusage and MSA_CHILDREN.
pub fn wait4() -> Result<(), &'static str> {
    frames_unchanged("user_wait4", || {
        let (pid, vm) = start_fixture("waiter", &[])?;
        await_done(pid, &vm)?;
        let child = read_u64(&vm, AREA_CHILD_PID)? as i32;
        let seen_msa = read_msa(&vm, AREA_MSA_A)?;
        let mut ru = [0u8; Rusage::SIZE];
        vm.read(RESULT_AREA + AREA_RUSAGE, &mut ru).map_err(|_| "cannot read the rusage")?;
        let seen_ru = Rusage::from_bytes(&ru);
        let kernel = acct::children_totals(Some(pid)).map_err(|_| "no children total")?;
        release(&vm)?;
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        expect_exit(&r, 0)?;
        println!(
            "user_wait4: waiter pid {pid} reaped /bin/spin (pid {child}): ru_utime {}.{:06} s, ru_stime {}.{:06} s, \
                maxrss {} KiB, minflt {}, nvcsw {}, nivcsw {}",
            seen_ru.ru_utime.tv_sec,
            seen_ru.ru_utime.tv_usec,
            seen_ru.ru_stime.tv_sec,
            seen_ru.ru_stime.tv_usec,
            seen_ru.ru_maxrss,
            seen_ru.ru_minflt,
            seen_ru.ru_nvcsw,
            seen_ru.ru_nivcsw
        );
        if seen_ru != crate::syscall::rusage(&kernel) {
            return Err("the rusage wait4 wrote differs from the kernel's totals of the child");
        }
        let want: Vec<u64> = kernel.msa.iter().map(|&t| ns(t)).collect();
        if seen_msa[..] != want[..] {
            return Err("msa(MSA_CHILDREN) differs from the kernel's children total");
        }
        let records = proc::recent_exits(child);
        let exited = sum_msa(records.iter().map(|r| &r.totals.msa));
        println!(
            "user_wait4: msa(MSA_CHILDREN) = the children total to the ns; = the sum of {} exit record(s) of pid \
                {child} to the tick",
            records.len()
        );
        if records.is_empty() || exited != kernel.msa {
            return Err("the children total is not the sum of what the child's threads left");
        }
        if seen_ru.ru_maxrss <= 0 {
            return Err("the child's memory use is missing from the rusage");
        }
        // The CPU time must be there, and can be no more than the child's life. (Not "about
        // 30 ms": how much of its 30 ms of wall time the child got depends on the load.)
        let cpu = t(&kernel.msa, MicroState::OncpuUsr) + t(&kernel.msa, MicroState::OncpuSys);
        let life: u64 = kernel.msa.iter().sum();
        if tally_microstate::ACCOUNTING_ENABLED && (cpu == 0 || cpu > life) {
            return Err("spin's user + system time is missing from its totals, or exceeds its life");
        }
        Ok(())
    })
}

fn expect_status(r: &WaitResult, what: &str, exited: Option<i32>, signal: Option<i32>) -> Result<(), &'static str> {
    let s = r.status.raw();
    let ok = match (exited, signal) {
        (Some(code), _) => wifexited(s) && wexitstatus(s) == code,
        (_, Some(sig)) => wifsignaled(s) && wtermsig(s) == sig,
        _ => false,
    };
    if !ok {
        println!("  {what}: status {s:#x}");
        return Err("a threaded process ended with the wrong status");
    }
    Ok(())
}

/// Run `threads` in `mode` to its end: the status, how long it took, its exit records.
fn threads_mode(
    mode: &str,
    what: &str,
    exited: Option<i32>,
    signal: Option<i32>,
    threads: usize,
) -> Result<(), &'static str> {
    let t0 = crate::base::time::monotonic_ns().unwrap_or(0);
    let r = run_fixture("threads", &[mode])?;
    let ms = (crate::base::time::monotonic_ns().unwrap_or(0) - t0) / 1_000_000;
    let records = proc::recent_exits(r.pid);
    println!(
        "user_threads: {what}: status {:#x} after {ms} ms; {} thread exit(s) recorded",
        r.status.raw(),
        records.len()
    );
    expect_status(&r, what, exited, signal)?;
    if ms > 2_000 {
        return Err("the process took too long to die: a thread was not stopped");
    }
    if records.len() != threads {
        return Err("not every thread of the process exited");
    }
    if sum_msa(records.iter().map(|r| &r.totals.msa)) != r.totals.msa {
        return Err("the process total is not the sum of its threads' exit clocks");
    }
    Ok(())
}

/// Threads: the process total is its threads' sum (exactly); exit_group and a fatal
/// signal stop every thread wherever it is; a leader that exits first.
pub fn threads() -> Result<(), &'static str> {
    frames_unchanged("user_threads", || {
        // Mode `report`: three workers, then MSA_SELF / MSA_THREAD with the process still alive.
        let (pid, vm) = start_fixture("threads", &[THREADS_REPORT])?;
        await_done(pid, &vm)?;
        let b = acct::msa_breakdown(pid).map_err(|_| "no such process")?;
        let seen_self = read_msa(&vm, AREA_MSA_A)?;
        let seen_thread = read_msa(&vm, AREA_MSA_B)?;
        let tids: Vec<u64> = (0..3).map(|i| read_u64(&vm, AREA_TIDS + 8 * i)).collect::<Result<_, _>>()?;
        let records = proc::recent_exits(pid);
        // The memory numbers: the RSS counted at every map/unmap is what the page tables
        // hold, and the process's usage reports it.
        let usage = acct::process_usage(pid).map_err(|_| "no usage for the process")?;
        let (rss, walked) = (vm.rss(), vm.mapped_pages());
        println!(
            "user_threads: RSS {rss} pages (page-table walk: {walked}), usage RSS {} / VM {} pages, {} minor faults \
                so far",
            usage.mem.rss_pages, usage.mem.vm_pages, usage.counters.minflt
        );
        if rss != walked || usage.mem.rss_pages != rss || usage.mem.vm_pages < rss {
            return Err("the RSS counter disagrees with the page tables");
        }
        // What proc_stat (prstat) reports: the one live thread of the process, by name.
        let (stats, _) = acct::task_stats();
        let mine: Vec<_> = stats.iter().filter(|s| s.tgid == pid).collect();
        if mine.len() != 1 || mine[0].pid != pid || &mine[0].comm[..8] != b"threads\0" || mine[0].zombie {
            return Err("task_stats does not show the process's live thread");
        }
        release(&vm)?;
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        expect_exit(&r, 0)?;
        println!(
            "user_threads: pid {pid} ran workers {tids:?}; {} exited, {} live at the snapshot",
            records.len(),
            b.live.len()
        );
        if records.len() != 3 || b.live.len() != 1 || tids.iter().any(|&t| t == pid as u64 || t == 0) {
            return Err("the three workers did not run as threads of the process");
        }
        let dead = sum_msa(records.iter().map(|r| &r.totals.msa));
        let mut total = dead;
        for (a, x) in total.iter_mut().zip(&b.live[0].1) {
            *a += x;
        }
        if b.dead != dead || b.total != total {
            return Err("MSA_SELF is not exactly the dead threads' exit clocks plus the live thread's");
        }
        println!("user_threads: MSA_SELF = exit clocks of 3 threads + the live thread's clocks, to the tick");
        let all = proc::recent_exits(pid);
        if all.len() != 4 || sum_msa(all.iter().map(|r| &r.totals.msa)) != r.totals.msa {
            return Err("at exit, the process total is not the sum of its 4 threads' exit clocks");
        }
        let minflt: u64 = all.iter().map(|r| r.totals.counters.minflt).sum();
        if minflt != r.totals.counters.minflt {
            return Err("the process's minor faults are not the sum of its threads'");
        }
        println!(
            "user_threads: process total = sum of 4 threads' exit clocks, to the tick (ONCPU_USR {} us)",
            us(t(&r.totals.msa, MicroState::OncpuUsr))
        );
        if tally_microstate::ACCOUNTING_ENABLED {
            // What the program saw: its MSA_SELF includes the workers' user time.
            let workers_usr = ns(t(&dead, MicroState::OncpuUsr));
            if seen_self[0] < workers_usr || seen_self[0] < seen_thread[0] {
                return Err("msa(MSA_SELF) in the program misses the workers' user time");
            }
        }
        // How the other modes end.
        let (group, leader) = (Some(THREADS_EXIT_GROUP_STATUS), Some(THREADS_LEADER_STATUS));
        let what = "exit_group(7) while threads spin, sleep 100 s and read the console";
        threads_mode(THREADS_EXIT_GROUP, what, group, None, 4)?;
        threads_mode(THREADS_FAULT, "a thread executes ud2 while the others sleep 100 s", None, Some(4), 3)?;
        threads_mode(THREADS_LEADER_FIRST, "the leader exits (5) before its thread (9)", leader, None, 2)?;
        let (what, thread) =
            ("a thread calls exit_group(3) while the leader sleeps", Some(THREADS_THREAD_EXIT_GROUP_STATUS));
        threads_mode(THREADS_THREAD_EXIT_GROUP, what, thread, None, 2)?;
        Ok(())
    })
}
