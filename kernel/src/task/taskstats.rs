//! # Taskstats records: a task's accounting in Linux's `struct taskstats`
//!
//! The TASKSTATS bus family (`crate::bus`) needs, for a pid or a tgid, everything
//! `tally_taskstats::fill` turns into a `struct taskstats`: identity, microstate clocks,
//! delay episodes, counters and memory numbers — gathered here, inside the task layer,
//! with one TSC value per record so the parts agree to the tick.
//!
//! * [`of_pid`]: one thread (live, or a zombie leader) as it stands now.
//! * [`of_tgid`]: a whole process, "past and present": the totals its exited threads left
//!   (tally-tasktable's dead-threads accumulator) plus every live thread now — seed 001's
//!   per-tgid sum.
//! * At exit (`lifecycle.rs`), [`exiting_thread`] builds the record of the thread that is
//!   leaving, and [`exited_group`] the process's when it was the last thread, from the same
//!   harvest the accumulators receive — so a tgid record is exactly the sum of the pid
//!   records its threads left.
//!
//! Memory numbers live in the process's `Vm`, which has its own lock: readers collect the
//! `Vm` under the kernel lock and ask it for its numbers after releasing it.

use alloc::sync::Arc;
use tally_microstate::{DelayStats, MsaTimes};
use tally_tasktable::{wcoredump, wifsignaled, ExitStatus, TaskKey};
use tally_taskstats::{Memory, TaskAccounting};
use tally_uapi::errno::ESRCH;
use tally_uapi::taskstats::{ACORE, AFORK, AXSIG};

use super::memacct::MemUsage;
use super::vm::Vm;
use super::{with_kernel, HotStore, Kernel, Totals};

fn memory(m: &MemUsage) -> Memory {
    Memory {
        hiwater_rss_kb: m.hiwater_rss_kb(),
        hiwater_vm_kb: m.hiwater_vm_kb(),
        rss_page_ticks: m.rss_page_ticks,
        vm_page_ticks: m.vm_page_ticks,
    }
}

/// `ac_flag` bits a wait status adds (AXSIG, ACORE).
fn status_flags(status: Option<ExitStatus>) -> u8 {
    match status.map(|s| s.raw()) {
        Some(raw) if wifsignaled(raw) => AXSIG | if wcoredump(raw) { ACORE } else { 0 },
        _ => 0,
    }
}

impl Kernel {
    /// Identity and scheduling of task `key` into `a` (its numbers are filled later; `group`
    /// is set false), written in place: a record is ~450 bytes, not worth copying around.
    fn identity(&mut self, key: TaskKey, now: u64, a: &mut TaskAccounting) -> Result<(), i32> {
        let s = Kernel::sched_key(key);
        let mut store = HotStore(&mut self.hot);
        let (nice, policy) = {
            let se = tally_runqueue::TaskStore::entity(&mut store, s);
            (se.nice(), se.policy() as u8)
        };
        let created = tally_runqueue::TaskStore::clock(&mut store, s).created();
        let ppid = self.tasks.ppid(key).unwrap_or(0);
        let leader = self.tasks.leader(key).unwrap_or(key);
        let group_created = tally_runqueue::TaskStore::clock(&mut HotStore(&mut self.hot), Kernel::sched_key(leader)).created();
        let t = self.tasks.get(key)?;
        // With accounting compiled out no creation time is kept: elapsed times read 0.
        let created_or_now = |c: u64| if tally_microstate::ACCOUNTING_ENABLED { c } else { now };
        a.pid = t.pid() as u32;
        a.tgid = t.tgid() as u32;
        a.ppid = ppid as u32;
        a.uid = t.uid();
        a.gid = t.gid();
        a.comm = *t.comm();
        a.nice = nice;
        a.policy = policy;
        a.exit_code = t.exit_status().map_or(0, |s| s.raw() as u32);
        // As Linux's bacct_add_tsk: AFORK ("forked, never exec'd") only on a thread-group
        // leader. Every thread was created without an exec, but that says nothing about its
        // process, so a thread's own record leaves the bit out.
        let fork_bits = if leader == key { !0 } else { !AFORK };
        a.flags = (t.flags().bits() & fork_bits) | status_flags(t.exit_status());
        a.group = false;
        a.created_tsc = created_or_now(created);
        a.now_tsc = now;
        a.group_created_tsc = created_or_now(group_created);
        Ok(())
    }

    /// The clocks and delays of task `key` at `now`, into `a`.
    fn clocks_into(&mut self, key: TaskKey, now: u64, a: &mut TaskAccounting) {
        let s = Kernel::sched_key(key);
        a.msa_ticks = self.rq.msa_snapshot(&mut HotStore(&mut self.hot), s, now);
        a.delays = tally_runqueue::TaskStore::clock(&mut HotStore(&mut self.hot), s).delays(now);
    }

    /// The clocks and delays of task `key` at `now`.
    fn clocks_of(&mut self, key: TaskKey, now: u64) -> (MsaTimes, DelayStats) {
        let s = Kernel::sched_key(key);
        let msa = self.rq.msa_snapshot(&mut HotStore(&mut self.hot), s, now);
        let delays = tally_runqueue::TaskStore::clock(&mut HotStore(&mut self.hot), s).delays(now);
        (msa, delays)
    }

    fn vm_of(&self, key: TaskKey) -> Option<Arc<Vm>> {
        self.tasks.threads(key).ok()?.iter().find_map(|&t| {
            self.tasks.get(t).ok().and_then(|t| t.payload().user.as_ref().map(|u| Arc::clone(u.vm())))
        })
    }
}

/// Memory numbers of a live process (none: zeros), read after the kernel lock is released.
fn fill_memory(a: &mut TaskAccounting, vm: Option<Arc<Vm>>, cpu_ticks: u64) {
    a.memory = vm.map_or_else(Memory::default, |vm| memory(&vm.usage(cpu_ticks)));
}

fn on_cpu(m: &MsaTimes) -> u64 {
    use tally_microstate::MicroState::*;
    m[OncpuUsr as usize].wrapping_add(m[OncpuSys as usize]).wrapping_add(m[OncpuTrap as usize])
}

/// Taskstats input for thread `pid` now (`ESRCH` if there is none).
pub fn of_pid(pid: i32) -> Result<TaskAccounting, i32> {
    let mut a = TaskAccounting::default();
    of_pid_into(pid, &mut a)?;
    Ok(a)
}

/// [`of_pid`] written into `a` (every field), where the caller keeps it: what a GET uses,
/// so that the record is built once, in place, and only read afterwards. (On an error `a`
/// holds nothing meaningful.)
pub fn of_pid_into(pid: i32, a: &mut TaskAccounting) -> Result<(), i32> {
    let (vm, cpu) = with_kernel(|k| {
        let now = hal::tsc::read();
        let key = k.tasks.lookup(pid).map_err(|_| ESRCH)?;
        k.identity(key, now, a)?;
        k.clocks_into(key, now, a);
        a.counters = k.tasks.get(key)?.payload().counters;
        let cpu = on_cpu(&k.process_msa_total(key, now));
        Ok::<_, i32>((k.vm_of(key), cpu))
    })?;
    fill_memory(a, vm, cpu);
    Ok(())
}

/// Taskstats input for process `tgid` now: exited threads' totals plus the live threads.
pub fn of_tgid(tgid: i32) -> Result<TaskAccounting, i32> {
    let (mut a, vm, cpu) = with_kernel(|k| {
        let now = hal::tsc::read();
        let key = k.tasks.lookup(tgid).map_err(|_| ESRCH)?;
        let leader = k.tasks.leader(key)?;
        if k.tasks.get(leader)?.pid() != tgid {
            return Err(ESRCH); // a thread id is not a tgid
        }
        let mut a = TaskAccounting::default();
        k.identity(leader, now, &mut a)?;
        a.group = true;
        let dead: Totals = k.tasks.dead_total(leader)?.clone();
        a.msa_ticks = dead.msa;
        a.delays = dead.delays;
        let mut c = dead.counters;
        let threads: alloc::vec::Vec<TaskKey> = k.tasks.threads(leader)?.to_vec();
        for t in threads {
            let (msa, delays) = k.clocks_of(t, now);
            for (x, y) in a.msa_ticks.iter_mut().zip(msa) {
                *x = x.wrapping_add(y);
            }
            a.delays.add(&delays);
            c.add(&k.tasks.get(t)?.payload().counters);
        }
        a.counters = c;
        a.memory = memory(&dead.mem); // a dead process's numbers (a live one's come from its Vm)
        Ok::<_, i32>((a, k.vm_of(leader), on_cpu(&dead.msa)))
    })?;
    if vm.is_some() {
        let cpu = on_cpu(&a.msa_ticks).max(cpu);
        fill_memory(&mut a, vm, cpu);
    }
    Ok(a)
}

/// Identity of `key`, numbers from `totals`, ended with `status`.
fn at_exit(k: &mut Kernel, key: TaskKey, now: u64, status: ExitStatus, totals: &Totals, group: bool) -> Option<TaskAccounting> {
    let mut a = TaskAccounting::default();
    k.identity(key, now, &mut a).ok()?;
    a.group = group;
    a.exit_code = status.raw() as u32;
    a.flags |= status_flags(Some(status));
    a.msa_ticks = totals.msa;
    a.delays = totals.delays;
    a.counters = totals.counters;
    a.memory = memory(&totals.mem);
    Some(a)
}

/// The record of the current thread as it exits at `now` with `status`, from the numbers
/// it leaves (`totals`: the same harvest its process's accumulator receives).
pub(super) fn exiting_thread(k: &mut Kernel, key: TaskKey, now: u64, status: ExitStatus, totals: &Totals) -> Option<TaskAccounting> {
    at_exit(k, key, now, status, totals, false)
}

/// The record of a whole process whose last thread just exited: `total` is every thread's,
/// past and present; identity is the leader's.
pub(super) fn exited_group(k: &mut Kernel, leader: TaskKey, now: u64, status: ExitStatus, total: &Totals) -> Option<TaskAccounting> {
    at_exit(k, leader, now, status, total, true)
}
