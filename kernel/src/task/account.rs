//! # Reading the accounting: a thread, a process, its children
//!
//! The numbers live in three places, and every reader combines them the same way:
//!
//! ```text
//!   a live thread        its MsaClock (Hot, by slot) + its Counters (payload)
//!   a process            the dead-threads total (tally-tasktable's group.dead)
//!                          + every live thread, read at ONE instant
//!                          + its Vm's memory numbers (memacct.rs)
//!   its reaped children  tally-tasktable's children total (added to at each reap)
//! ```
//!
//! That is what `msa()` answers for `MSA_THREAD`, `MSA_SELF` and `MSA_CHILDREN`
//! ([`msa_of`]), what `wait4` turns into a `struct rusage`, and what the memory integrals
//! are clocked by ([`current_process_cpu_ticks`]). All clocks are read with one TSC value
//! per query, so a process total is the exact sum of its threads at that instant
//! ([`msa_breakdown`] shows the parts, for the self-tests). Values stay in TSC ticks here;
//! the system calls convert to nanoseconds.
//!
//! **Exit records.** Every thread's final numbers (what its process total received when it
//! exited) are also kept in a short log of the last [`EXIT_LOG_LEN`] exits — the per-thread
//! records Linux's taskstats sends at each exit — so a test can check that a process's
//! total is exactly the sum of what its threads left.

use alloc::vec::Vec;
use tally_microstate::{MicroState, MsaTimes, NR_MICROSTATES};
use tally_tasktable::TaskKey;

use super::{with_kernel, HotStore, Kernel, Totals};
use tally_taskstats::Counters;

/// How many exit records are kept.
pub const EXIT_LOG_LEN: usize = 256;

/// What one thread left when it exited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitRecord {
    pub pid: i32,
    pub tgid: i32,
    pub totals: Totals,
}

/// Whose clocks (`msa()`'s `which`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsaWhich {
    /// The calling thread.
    Thread,
    /// Every thread of the calling process, past and present.
    SelfProcess,
    /// The reaped children of the calling process.
    Children,
}

pub(super) fn log_exit(k: &mut Kernel, pid: i32, tgid: i32, totals: Totals) {
    if k.exit_log.len() >= EXIT_LOG_LEN {
        k.exit_log.pop_front();
    }
    k.exit_log.push_back(ExitRecord { pid, tgid, totals });
}

/// The exit records of process `tgid` still in the log, oldest first.
pub fn recent_exits(tgid: i32) -> Vec<ExitRecord> {
    with_kernel(|k| k.exit_log.iter().filter(|r| r.tgid == tgid).cloned().collect())
}

fn add_msa(sum: &mut MsaTimes, x: &MsaTimes) {
    for (a, b) in sum.iter_mut().zip(x) {
        *a = a.wrapping_add(*b);
    }
}

fn on_cpu(m: &MsaTimes) -> u64 {
    m[MicroState::OncpuUsr as usize]
        .wrapping_add(m[MicroState::OncpuSys as usize])
        .wrapping_add(m[MicroState::OncpuTrap as usize])
}

/// The parts of a process's `MSA_SELF` at one instant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MsaBreakdown {
    /// What `MSA_SELF` answers: `dead` + every entry of `live`.
    pub total: MsaTimes,
    /// The threads that have exited.
    pub dead: MsaTimes,
    /// (tid, clocks) of each live thread.
    pub live: Vec<(i32, MsaTimes)>,
}

impl Kernel {
    /// The process of `key` at TSC `now`: dead-threads total plus each live thread.
    fn process_msa(&mut self, key: TaskKey, now: u64) -> Result<MsaBreakdown, i32> {
        let dead = self.tasks.dead_total(key)?.msa;
        let threads: Vec<TaskKey> = self.tasks.threads(key)?.to_vec();
        let mut b = MsaBreakdown { total: dead, dead, live: Vec::with_capacity(threads.len()) };
        for t in threads {
            let tid = self.tasks.get(t).map(|t| t.pid()).unwrap_or(0);
            let clocks = self.rq.msa_snapshot(&mut HotStore(&mut self.hot), Kernel::sched_key(t), now);
            add_msa(&mut b.total, &clocks);
            b.live.push((tid, clocks));
        }
        Ok(b)
    }

    /// `MSA_SELF` of the process of `key` at TSC `now` — [`Kernel::process_msa`]'s total,
    /// without collecting the parts; all zero if `key` is stale.
    pub(super) fn process_msa_total(&mut self, key: TaskKey, now: u64) -> MsaTimes {
        let mut total = [0; NR_MICROSTATES];
        self.process_msa_into(key, now, &mut total);
        total
    }

    /// [`Kernel::process_msa_total`] written into `total`; false (`total` untouched) if
    /// `key` is stale. This is the `msa()` fast path: no allocation, one group lookup, each
    /// live thread's clocks added in place, and the total built where the caller wants it.
    #[inline]
    fn process_msa_into(&mut self, key: TaskKey, now: u64, total: &mut MsaTimes) -> bool {
        let Ok((dead, threads)) = self.tasks.process_parts(key) else { return false };
        *total = dead.msa;
        let mut store = HotStore(&mut self.hot);
        for &t in threads {
            self.rq.msa_add_to(&mut store, Kernel::sched_key(t), now, total);
        }
        true
    }

    /// The current process's CPU time (on-CPU microstates of all its threads) at `now`.
    pub(super) fn process_cpu(&mut self, now: u64) -> u64 {
        let cur = self.current();
        on_cpu(&self.process_msa_total(cur, now))
    }
}

/// `msa()`: the clocks of the current thread, process or reaped children, in TSC ticks,
/// written into `out` (in place: a 13-word result is not copied on its way back).
#[inline]
pub fn msa_of(which: MsaWhich, out: &mut MsaTimes) {
    with_kernel(|k| {
        let now = hal::tsc::read();
        let cur = k.current();
        let found = match which {
            MsaWhich::Thread => {
                *out = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), k.rq.current(), now);
                true
            }
            MsaWhich::SelfProcess => k.process_msa_into(cur, now, out),
            MsaWhich::Children => k.tasks.children_total(cur).map(|t| *out = t.msa).is_ok(),
        };
        if !found {
            *out = [0; NR_MICROSTATES];
        }
    })
}

/// `MSA_SELF` of process `pid` with its parts, all read at one instant (for tests).
pub fn msa_breakdown(pid: i32) -> Result<MsaBreakdown, i32> {
    with_kernel(|k| {
        let key = k.tasks.lookup(pid)?;
        k.process_msa(key, hal::tsc::read())
    })
}

/// The current process's CPU time now (TSC ticks): the clock of its memory integrals.
pub fn current_process_cpu_ticks() -> u64 {
    with_kernel(|k| k.process_cpu(hal::tsc::read()))
}

/// What the reaped children of process `pid` (or, with `None`, of the current process)
/// left: the `MSA_CHILDREN`/`RUSAGE_CHILDREN` total.
pub fn children_totals(pid: Option<i32>) -> Result<Totals, i32> {
    with_kernel(|k| {
        let key = match pid {
            Some(p) => k.tasks.lookup(p)?,
            None => k.current(),
        };
        k.tasks.children_total(key).cloned()
    })
}

/// Process `pid`'s totals so far ("past and present": exited threads, live threads'
/// clocks and counters now, its memory numbers now), like `getrusage(RUSAGE_SELF)`.
pub fn process_usage(pid: i32) -> Result<Totals, i32> {
    let (mut totals, vm, cpu) = with_kernel(|k| {
        let now = hal::tsc::read();
        let key = k.tasks.lookup(pid)?;
        let b = k.process_msa(key, now)?;
        let mut t = k.tasks.dead_total(key)?.clone();
        t.msa = b.total;
        let threads: Vec<TaskKey> = k.tasks.threads(key)?.to_vec();
        let mut vm = None;
        for th in threads {
            if let Ok(task) = k.tasks.get(th) {
                t.counters.add(&task.payload().counters);
                if vm.is_none() {
                    vm = task.payload().user.as_ref().map(|u| alloc::sync::Arc::clone(u.vm()));
                }
            }
        }
        Ok::<_, i32>((t, vm, on_cpu(&b.total)))
    })?;
    if let Some(vm) = vm {
        // Exited threads left no memory numbers (only the last thread does): the Vm has
        // them all.
        totals.mem = vm.usage(cpu);
    }
    Ok(totals)
}

/// One task as `proc_stat` (prstat) reports it: identity, scheduling, clocks, counters.
#[derive(Clone)]
pub struct TaskStat {
    pub pid: i32,
    pub tgid: i32,
    pub ppid: i32,
    pub uid: u32,
    pub comm: [u8; 16],
    /// Exited, not yet reaped.
    pub zombie: bool,
    pub nice: i32,
    /// Linux's policy number (SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3).
    pub policy: u32,
    pub rt_priority: u32,
    /// Microstate clocks, TSC ticks.
    pub msa: MsaTimes,
    pub counters: Counters,
    /// TSC when the task was created.
    pub created: u64,
    /// Its process's memory map (none for a kernel thread), read after the kernel lock is
    /// released, as the taskstats readers do.
    pub vm: Option<alloc::sync::Arc<super::vm::Vm>>,
}

/// Every task in the table (idle, kernel threads, user threads, zombies), all read at one
/// TSC value, which is returned with them.
pub fn task_stats() -> (Vec<TaskStat>, u64) {
    with_kernel(|k| {
        let now = hal::tsc::read();
        let keys: Vec<TaskKey> = k.tasks.iter().map(|(key, _)| key).collect();
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let s = Kernel::sched_key(key);
            let msa = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), s, now);
            let mut store = HotStore(&mut k.hot);
            let (nice, policy, rt_priority) = {
                let se = tally_runqueue::TaskStore::entity(&mut store, s);
                (se.nice(), se.policy() as u32, se.rt_priority())
            };
            let created = tally_runqueue::TaskStore::clock(&mut store, s).created();
            let ppid = k.tasks.ppid(key).unwrap_or(0);
            let Ok(t) = k.tasks.get(key) else { continue };
            out.push(TaskStat {
                pid: t.pid(),
                tgid: t.tgid(),
                ppid,
                uid: t.uid(),
                comm: *t.comm(),
                zombie: t.exit_state() == tally_tasktable::ExitState::Zombie,
                nice,
                policy,
                rt_priority,
                msa,
                counters: t.payload().counters,
                created,
                vm: t.payload().user.as_ref().map(|u| alloc::sync::Arc::clone(u.vm())),
            });
        }
        (out, now)
    })
}
