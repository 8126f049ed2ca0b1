//! Self-tests of tasks and the O(1) scheduler, with their microstate accounting.
//!
//! Each test runs in init (pid 1), spawns kernel threads, waits for them, and checks what
//! the scheduler did through what the accounting says: who ran, who waited on which array,
//! who slept how. Clocks are in TSC ticks; `ms()` converts for printing.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tally_microstate::{MicroState, MsaTimes};
use tally_tasktable::{wexitstatus, wifexited};

use crate::base::time;
use crate::sched;
use crate::sched::SchedParams;
use crate::{acct, proc};
use crate::{drivers, irq};

fn ms(ticks: u64) -> u64 {
    time::clock().ticks_to_ns(ticks) / 1_000_000
}

fn t(m: &MsaTimes, s: MicroState) -> u64 {
    m[s as usize]
}

fn spin_for_ms(duration_ms: u64) {
    let until = hal::tsc::read() + time::clock().ns_to_ticks(duration_ms * 1_000_000);
    while hal::tsc::read() < until {
        core::hint::spin_loop();
    }
}

const CONTENDERS: usize = 3;
static PROGRESS: [AtomicU64; CONTENDERS] = [const { AtomicU64::new(0) }; CONTENDERS];
static STOP: AtomicBool = AtomicBool::new(false);

/// A CPU-bound thread: count until told to stop.
fn burner(i: u64) {
    while !STOP.load(Ordering::Relaxed) {
        PROGRESS[i as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// Three CPU-bound threads at nice 0 for 600 ms: the tick preempts them, each makes
/// progress, and they spend time waiting on the expired array: a thread whose 100 ms slice
/// runs out while another still has its slice waits there. (The last of the three to expire
/// may not: the arrays swap at the instant it expires — the lazy flip moves it to
/// ONACTIVEQUEUE at once. So at least two of them must show expired time.)
pub fn contention() -> Result<(), &'static str> {
    STOP.store(false, Ordering::Relaxed);
    let mut pids = [0; CONTENDERS];
    let mut waited_expired = 0;
    for (i, pid) in pids.iter_mut().enumerate() {
        *pid = proc::spawn("burner", SchedParams::Normal(0), burner, i as u64).map_err(|_| "spawn failed")?;
    }
    sched::sleep_ns(600_000_000);
    STOP.store(true, Ordering::Relaxed);
    for pid in pids {
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        let m = &r.totals.msa;
        let i = pids.iter().position(|&p| p == pid).unwrap_or(0);
        println!(
            "contention: pid {pid}: progress {} on-cpu {} ms, active-queue {} ms, expired-queue {} ms, interrupted {} \
                ms",
            PROGRESS[i].load(Ordering::Relaxed),
            ms(t(m, MicroState::OncpuSys)),
            ms(t(m, MicroState::OnActiveQueue)),
            ms(t(m, MicroState::OnExpiredQueue)),
            ms(t(m, MicroState::Interrupted))
        );
        if PROGRESS[i].load(Ordering::Relaxed) == 0 {
            return Err("a CPU-bound thread never ran: no preemption");
        }
        if t(m, MicroState::OnExpiredQueue) > 0 {
            waited_expired += 1;
        }
    }
    if tally_microstate::ACCOUNTING_ENABLED && waited_expired < CONTENDERS - 1 {
        return Err("CPU-bound threads under contention did not wait on the expired array");
    }
    println!(
        "contention: all {CONTENDERS} CPU-bound threads progressed; {} context switches so far",
        sched::nr_switches()
    );
    Ok(())
}

/// `sleep(50 ms)` lasts 50 ms within two ticks, and the time goes to INTERRUPTIBLE_SLEEP.
pub fn sleep() -> Result<(), &'static str> {
    let clock = time::clock();
    let tick_ns = 1_000_000_000 / crate::base::config::HZ as u64;
    let before = sched::current_msa();
    let t0 = hal::tsc::read();
    sched::sleep_ns(50_000_000);
    let slept_ns = clock.ticks_to_ns(hal::tsc::read() - t0);
    let after = sched::current_msa();
    let asleep = t(&after, MicroState::InterruptibleSleep) - t(&before, MicroState::InterruptibleSleep);
    println!(
        "sleep: asked 50 ms, slept {}.{:03} ms; INTERRUPTIBLE_SLEEP grew by {} us",
        slept_ns / 1_000_000,
        slept_ns / 1000 % 1000,
        clock.ticks_to_ns(asleep) / 1000
    );
    if slept_ns < 50_000_000 || slept_ns > 50_000_000 + 2 * tick_ns {
        return Err("the sleep was not 50 ms within two ticks");
    }
    if tally_microstate::ACCOUNTING_ENABLED && (asleep == 0 || clock.ticks_to_ns(asleep) > slept_ns) {
        return Err("the sleep's time did not go to INTERRUPTIBLE_SLEEP");
    }
    Ok(())
}

fn exit_seven(_: u64) {
    proc::exit(7)
}

/// A child that exits stays a zombie until waited for; wait returns its status; its
/// ZOMBIE time is accounted; a second wait finds no child.
pub fn zombie() -> Result<(), &'static str> {
    let pid = proc::spawn("short", SchedParams::Normal(0), exit_seven, 0).map_err(|_| "spawn failed")?;
    sched::sleep_ns(30_000_000);
    if !proc::is_zombie(pid) {
        return Err("the exited child is not a zombie");
    }
    println!("zombie: pid {pid} is a zombie while its parent sleeps");
    let r = proc::wait(None).map_err(|_| "wait failed")?;
    println!(
        "zombie: reaped pid {} status {:#x} (exit code {}), ZOMBIE for {} ms",
        r.pid,
        r.status.raw(),
        wexitstatus(r.status.raw()),
        ms(t(&r.at_reap, MicroState::Zombie))
    );
    if r.pid != pid || !wifexited(r.status.raw()) || wexitstatus(r.status.raw()) != 7 {
        return Err("wait returned the wrong pid or status");
    }
    if tally_microstate::ACCOUNTING_ENABLED && ms(t(&r.at_reap, MicroState::Zombie)) < 20 {
        return Err("the zombie's time was not accounted as ZOMBIE");
    }
    if proc::wait(None).err() != Some(tally_uapi::errno::ECHILD) {
        return Err("a second wait did not fail with ECHILD");
    }
    println!("zombie: a second wait returns -ECHILD");
    Ok(())
}

static GRANDCHILD: AtomicU64 = AtomicU64::new(0);

fn orphan_grandchild(_: u64) {
    sched::sleep_ns(100_000_000);
    proc::exit(3)
}

fn orphan_parent(_: u64) {
    let pid = proc::spawn("grandchild", SchedParams::Normal(0), orphan_grandchild, 0).unwrap_or(0);
    GRANDCHILD.store(pid as u64, Ordering::Relaxed);
    proc::exit(0)
}

/// A parent that exits before its child: the child is re-parented to init, which reaps it.
pub fn orphan() -> Result<(), &'static str> {
    let parent = proc::spawn("parent", SchedParams::Normal(0), orphan_parent, 0).map_err(|_| "spawn failed")?;
    let r = proc::wait(Some(parent)).map_err(|_| "wait for the parent failed")?;
    let child = GRANDCHILD.load(Ordering::Relaxed) as i32;
    let ppid = proc::ppid(child);
    println!("orphan: parent {} exited (status {:#x}); its child {child} now has ppid {ppid:?}", r.pid, r.status.raw());
    if child <= 0 || ppid != Some(1) {
        return Err("the orphan was not re-parented to init");
    }
    let r = proc::wait(Some(child)).map_err(|_| "init could not reap the orphan")?;
    println!("orphan: init reaped {} with exit code {}", r.pid, wexitstatus(r.status.raw()));
    if wexitstatus(r.status.raw()) != 3 {
        return Err("wrong exit status from the orphan");
    }
    Ok(())
}

static NORMAL_PROGRESS: AtomicU64 = AtomicU64::new(0);
static FIFO_SAW: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

fn normal_burner(_: u64) {
    while !STOP.load(Ordering::Relaxed) {
        NORMAL_PROGRESS.fetch_add(1, Ordering::Relaxed);
    }
}

fn fifo_runner(_: u64) {
    FIFO_SAW[0].store(NORMAL_PROGRESS.load(Ordering::Relaxed), Ordering::Relaxed);
    spin_for_ms(300);
    FIFO_SAW[1].store(NORMAL_PROGRESS.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// A SCHED_FIFO thread that runs for 300 ms (three normal timeslices) is never preempted
/// by the normal CPU-bound thread beside it: the normal one makes no progress meanwhile.
pub fn rt_fifo() -> Result<(), &'static str> {
    STOP.store(false, Ordering::Relaxed);
    let normal = proc::spawn("normal", SchedParams::Normal(0), normal_burner, 0).map_err(|_| "spawn failed")?;
    sched::sleep_ns(20_000_000);
    let fifo = proc::spawn("fifo", SchedParams::Fifo(50), fifo_runner, 0).map_err(|_| "spawn failed")?;
    let r = proc::wait(Some(fifo)).map_err(|_| "wait failed")?;
    STOP.store(true, Ordering::Relaxed);
    proc::wait(Some(normal)).map_err(|_| "wait failed")?;
    let (a, b) = (FIFO_SAW[0].load(Ordering::Relaxed), FIFO_SAW[1].load(Ordering::Relaxed));
    let m = &r.totals.msa;
    println!(
        "rt_fifo: normal thread progress during the FIFO thread's 300 ms: {} -> {}; FIFO on-cpu {} ms, on queues {} ms",
        a,
        b,
        ms(t(m, MicroState::OncpuSys)),
        ms(t(m, MicroState::OnActiveQueue) + t(m, MicroState::OnExpiredQueue))
    );
    if a == 0 {
        return Err("the normal thread never ran before the FIFO thread");
    }
    if a != b {
        return Err("a normal thread ran while the FIFO thread was runnable");
    }
    Ok(())
}

const DISK_READS: u64 = 20;
static DISK_OK: AtomicBool = AtomicBool::new(false);

fn disk_reader(_: u64) {
    let Some(disk) = drivers::ata::disk(drivers::ata::DATA_DISK) else { return };
    let mut buf = [0u8; 512];
    let ok = (0..DISK_READS).all(|lba| disk.read(lba, &mut buf).is_ok());
    DISK_OK.store(ok, Ordering::Relaxed);
}

/// A thread reading the disk sleeps UNINTERRUPTIBLE while each request is in flight, and
/// IRQ 14's timer counts exactly one interrupt per one-sector request.
pub fn disk_sleep() -> Result<(), &'static str> {
    let line = irq::count(14);
    let before = acct::snapshot().irq_lines[14].timer.num_events;
    let pid = proc::spawn("reader", SchedParams::Normal(0), disk_reader, 0).map_err(|_| "spawn failed")?;
    let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    let after = acct::snapshot().irq_lines[14].timer.num_events;
    let m = &r.totals.msa;
    println!(
        "disk_sleep: {DISK_READS} one-sector reads; UNINTERRUPTIBLE_SLEEP {} us, on-cpu {} us; IRQ 14 interrupts {} \
            (timer events {})",
        time::clock().ticks_to_ns(t(m, MicroState::UninterruptibleSleep)) / 1000,
        time::clock().ticks_to_ns(t(m, MicroState::OncpuSys)) / 1000,
        irq::count(14) - line,
        after - before
    );
    if !DISK_OK.load(Ordering::Relaxed) {
        return Err("disk reads failed");
    }
    if irq::count(14) - line != DISK_READS {
        return Err("IRQ 14 did not fire exactly once per request");
    }
    if tally_microstate::ACCOUNTING_ENABLED {
        if after - before != DISK_READS {
            return Err("IRQ 14's timer did not count exactly one interrupt per request");
        }
        if t(m, MicroState::UninterruptibleSleep) == 0 {
            return Err("waiting for the disk did not accrue UNINTERRUPTIBLE_SLEEP");
        }
    }
    Ok(())
}

static CONTENDED_OK: [AtomicBool; 2] = [const { AtomicBool::new(false) }; 2];

fn contending_reader(i: u64) {
    let Some(disk) = drivers::ata::disk(drivers::ata::DATA_DISK) else { return };
    let mut buf = [0u8; 512];
    let ok = (0..DISK_READS).all(|lba| disk.read(lba + 100 * i, &mut buf).is_ok());
    CONTENDED_OK[i as usize].store(ok, Ordering::Relaxed);
}

/// A normal-priority reader and a SCHED_FIFO reader share the disk channel. The channel lock
/// is held across each request's sleep, so the FIFO reader often finds it taken; it must
/// sleep (not spin, which would starve the holder forever) and both must finish. Their
/// overlapping requests show in the disk's io kstat as wait-queue time.
pub fn disk_contention() -> Result<(), &'static str> {
    let disk = drivers::ata::disk(drivers::ata::DATA_DISK).ok_or("no data disk")?;
    let before = disk.stats();
    let irqs = irq::count(14);
    let normal = proc::spawn("reader", SchedParams::Normal(0), contending_reader, 0).map_err(|_| "spawn failed")?;
    sched::sleep_ns(1_000_000);
    let fifo = proc::spawn("rt-reader", SchedParams::Fifo(20), contending_reader, 1).map_err(|_| "spawn failed")?;
    let r_fifo = proc::wait(Some(fifo)).map_err(|_| "wait failed")?;
    let r_normal = proc::wait(Some(normal)).map_err(|_| "wait failed")?;
    let after = disk.stats();
    println!(
        "disk_contention: both readers done: {}; IRQ 14 +{}; reads +{}; wait-queue time +{} ns, wlentime +{} ns; FIFO \
            reader DISK {} us, normal reader DISK {} us",
        CONTENDED_OK.iter().all(|o| o.load(Ordering::Relaxed)),
        irq::count(14) - irqs,
        after.reads - before.reads,
        after.wtime - before.wtime,
        after.wlentime - before.wlentime,
        time::clock().ticks_to_ns(t(&r_fifo.totals.msa, MicroState::UninterruptibleSleep)) / 1000,
        time::clock().ticks_to_ns(t(&r_normal.totals.msa, MicroState::UninterruptibleSleep)) / 1000,
    );
    if !CONTENDED_OK.iter().all(|o| o.load(Ordering::Relaxed)) {
        return Err("a contending reader's requests failed");
    }
    if after.reads - before.reads != 2 * DISK_READS as u32 || irq::count(14) - irqs != 2 * DISK_READS {
        return Err("not every request was served exactly once");
    }
    Ok(())
}

const GROUP_THREADS: usize = 2;
const BURN_MS: u64 = 30;
static GROUP_IDS: [AtomicU64; GROUP_THREADS] = [const { AtomicU64::new(0) }; GROUP_THREADS];
static GROUP_DONE: AtomicU64 = AtomicU64::new(0);

/// Burn until this thread's own ONCPU_SYS clock has grown by BURN_MS (so the process total
/// must contain at least that much of this thread), then exit the thread.
fn group_member(i: u64) {
    let ids = proc::current_ids();
    GROUP_IDS[i as usize].store(((ids.pid as u64) << 32) | ids.tid as u64, Ordering::Relaxed);
    let want = time::clock().ns_to_ticks(BURN_MS * 1_000_000);
    let start = t(&sched::current_msa(), MicroState::OncpuSys);
    while t(&sched::current_msa(), MicroState::OncpuSys) - start < want {
        spin_for_ms(1);
    }
    GROUP_DONE.fetch_add(1, Ordering::Relaxed);
}

/// The leader of a kernel process: starts its threads and exits at once.
fn group_leader(_: u64) {
    for i in 0..GROUP_THREADS {
        let _ = proc::spawn_thread(SchedParams::Normal(0), group_member, i as u64);
    }
    proc::exit(5)
}

/// Kernel threads that join an existing thread group: they share the leader's tgid; the
/// leader exits first and stays a zombie, and its parent's wait completes only when the
/// last thread has gone, with the process's status and a total that includes every thread.
pub fn thread_group() -> Result<(), &'static str> {
    GROUP_DONE.store(0, Ordering::Relaxed);
    let leader = proc::spawn("group", SchedParams::Normal(0), group_leader, 0).map_err(|_| "spawn failed")?;
    let r = proc::wait(Some(leader)).map_err(|_| "wait failed")?;
    let done = GROUP_DONE.load(Ordering::Relaxed);
    let cpu = t(&r.totals.msa, MicroState::OncpuSys);
    println!(
        "thread_group: leader {leader} reaped with exit code {} after {done} of {GROUP_THREADS} threads finished; \
            process ONCPU_SYS {} ms",
        wexitstatus(r.status.raw()),
        ms(cpu)
    );
    for (i, ids) in GROUP_IDS.iter().enumerate() {
        let v = ids.load(Ordering::Relaxed);
        let (tid, tgid) = ((v & 0xffff_ffff) as i32, (v >> 32) as i32);
        println!("thread_group: thread {i}: tid {tid}, tgid {tgid}");
        if tgid != leader || tid == leader {
            return Err("a thread did not join the leader's thread group");
        }
    }
    if done != GROUP_THREADS as u64 {
        return Err("the process was reaped before its last thread exited");
    }
    if wexitstatus(r.status.raw()) != 5 {
        return Err("the process's status is not its leader's");
    }
    if tally_microstate::ACCOUNTING_ENABLED
        && cpu < time::clock().ns_to_ticks(GROUP_THREADS as u64 * BURN_MS * 1_000_000)
    {
        return Err("the process total lacks its threads' CPU time");
    }
    Ok(())
}

/// User processes side by side — a user-mode spinner, a two-thread process, a sleeper and a
/// page toucher — so that interrupts land in ring 3, in system calls and in page faults, and
/// preemption hands the CPU between user tasks. Returns how many threads exited.
fn user_mix() -> Result<u64, &'static str> {
    let programs: [(&str, &[&[u8]], u64); 4] = [
        ("/bin/spin", &[b"spin", b"40"], 1),
        ("/bin/threads", &[b"threads", b"2", b"20"], 2),
        ("/bin/sleeper", &[b"sleeper", b"30"], 1),
        ("/bin/memhog", &[b"memhog", b"64"], 1),
    ];
    let mut pids = Vec::new();
    for (path, argv, _) in &programs {
        pids.push(proc::spawn_program(path, argv).map_err(|_| "cannot spawn a user program")?);
    }
    for pid in pids {
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        super::ring3::expect_exit(&r, 0)?;
    }
    println!("invariants: user processes spin, threads 2, sleeper, memhog ran side by side");
    Ok(programs.iter().map(|p| p.2).sum())
}

/// Everything at once, then both invariants: (a) checked at every exit, (b) over the whole
/// system (live tasks and released ones) against all IRQ lines' handler time.
pub fn invariants() -> Result<(), &'static str> {
    contention()?;
    zombie()?;
    orphan()?;
    disk_sleep()?;
    let user_exits = user_mix()?;
    let (checked, broken) = sched::exit_invariant_counts();
    let s = acct::snapshot();
    let mut interrupted = s.released[MicroState::Interrupted as usize];
    for (pid, _, clocks, age) in &s.tasks {
        if tally_microstate::ACCOUNTING_ENABLED && clocks.iter().sum::<u64>() != *age {
            println!("invariants: pid {pid} breaks invariant (a)");
            return Err("invariant (a) broken for a live task");
        }
        interrupted += clocks[MicroState::Interrupted as usize];
    }
    println!(
        "invariants: (a) checked at {checked} exits, broken at {broken}; (b) INTERRUPTED over all tasks {interrupted} \
            ticks, handler time {} ticks",
        s.total_handler_ticks
    );
    if !tally_microstate::ACCOUNTING_ENABLED {
        return Ok(());
    }
    // Exits so far: the contenders, the zombie, the orphan's parent and child, the reader,
    // and the user programs' threads.
    let expected_exits = CONTENDERS as u64 + 1 + 2 + 1 + user_exits;
    if checked != expected_exits || broken != 0 {
        return Err("invariant (a) was not checked, or broken, at task exit");
    }
    if interrupted != s.total_handler_ticks {
        return Err("invariant (b) broken: INTERRUPTED differs from total handler time");
    }
    println!("invariants: both hold exactly");
    Ok(())
}
