//! # Taskstats records: a task's accounting in Linux's `struct taskstats`
//!
//! The TASKSTATS family of the message bus needs, for a pid or a tgid, everything
//! `tally_taskstats::fill` turns into a `struct taskstats`: identity, microstate clocks,
//! delay episodes, counters and memory numbers — gathered here, with one TSC value per record
//! so the parts agree to the tick.
//!
//! * [`of_pid`]: one thread (live, or a zombie leader) as it stands now.
//! * [`of_tgid`]: a whole process, "past and present": the totals its exited threads left
//!   plus every live thread now — Linux taskstats' per-tgid sum.
//! * [`Taskstats`] answers the bus's GET requests with those (the bus is handed it by the
//!   system call that carries the request).
//! * [`EXIT_RECORDS`] hears of every exit (`proc`'s exit observers, registered in
//!   `main.rs`) and hands the bus the thread's record, and its process's when it was the
//!   last thread, built from the event's numbers — the same harvest the process's
//!   accumulators received, so a tgid record is exactly the sum of the pid records its
//!   threads left.
//!
//! Memory numbers live in the process's memory map, which has its own lock: readers collect
//! the map under the table's lock and ask it for its numbers after releasing it.

use alloc::sync::Arc;
use tally_memacct::MemUsage;
use tally_msgbus::taskstats::{GroupRecord, RecordOut, TaskstatsSource, WriteRecord};
use tally_msgbus::Sender;
use tally_taskstats::{Memory, TaskAccounting};
use tally_tasktable::{wcoredump, wifsignaled, ExitStatus, TaskKey};
use tally_uapi::errno::ESRCH;
use tally_uapi::taskstats::{ACORE, AFORK, AXSIG};

use crate::base::time;
use crate::bus::Socket;
use crate::proc::vm::Vm;
use crate::proc::{self, ExitEvent, ExitObserver, Identity, Procs, Totals};
use crate::sched::{self, slot_of};

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

/// Identity and scheduling of a task into `a` at TSC `now` (its numbers are filled
/// separately; `group` is set false), written in place: a record is ~450 bytes, not worth
/// copying around.
fn identity_into(id: &Identity, now: u64, a: &mut TaskAccounting) {
    // With accounting compiled out no creation time is kept: elapsed times read 0.
    let created_or_now = |c: u64| if tally_microstate::ACCOUNTING_ENABLED { c } else { now };
    a.pid = id.pid as u32;
    a.tgid = id.tgid as u32;
    a.ppid = id.ppid as u32;
    a.uid = id.uid;
    a.gid = id.gid;
    a.comm = id.comm;
    a.nice = id.nice;
    a.policy = id.policy;
    a.exit_code = id.exit_status.map_or(0, |s| s.raw() as u32);
    // As Linux's bacct_add_tsk: AFORK ("forked, never exec'd") only on a thread-group
    // leader. Every thread was created without an exec, but that says nothing about its
    // process, so a thread's own record leaves the bit out.
    let fork_bits = if id.leader { !0 } else { !AFORK };
    a.flags = (id.flags & fork_bits) | status_flags(id.exit_status);
    a.group = false;
    a.created_tsc = created_or_now(id.created_tsc);
    a.now_tsc = now;
    a.group_created_tsc = created_or_now(id.group_created_tsc);
}

impl Procs {
    fn vm_of(&self, key: TaskKey) -> Option<Arc<Vm>> {
        let table = self.table();
        table.threads(key).ok()?.iter().find_map(|&t| table.get(t).ok().and_then(|t| t.payload().vm().cloned()))
    }
}

/// Memory numbers of a live process (none: zeros), read after the locks are released.
fn fill_memory(a: &mut TaskAccounting, vm: Option<Arc<Vm>>, cpu_ticks: u64) {
    a.memory = vm.map_or_else(Memory::default, |vm| memory(&vm.usage(cpu_ticks)));
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
    let (vm, cpu) = proc::with(|p| {
        let key = p.table().lookup(pid).map_err(|_| ESRCH)?;
        let cpu = sched::with(|s| {
            let now = hal::tsc::read();
            identity_into(&p.identity_in(s, key)?, now, a);
            a.msa_ticks = s.msa_snapshot(slot_of(key), now);
            a.delays = s.delays(slot_of(key), now);
            a.counters = s.counters(slot_of(key));
            Ok::<_, i32>(p.process_cpu_in(s, key, now))
        })?;
        Ok::<_, i32>((p.vm_of(key), cpu))
    })?;
    fill_memory(a, vm, cpu);
    Ok(())
}

/// Taskstats input for process `tgid` now: exited threads' totals plus the live threads.
pub fn of_tgid(tgid: i32) -> Result<TaskAccounting, i32> {
    let (mut a, vm, cpu) = proc::with(|p| {
        let now = hal::tsc::read();
        let table = p.table();
        let key = table.lookup(tgid).map_err(|_| ESRCH)?;
        let leader = table.leader(key)?;
        if table.get(leader)?.pid() != tgid {
            return Err(ESRCH); // a thread id is not a tgid
        }
        let mut a = TaskAccounting::default();
        let dead: Totals = table.dead_total(leader)?.clone();
        let mut c = dead.counters;
        sched::with(|s| {
            identity_into(&p.identity_in(s, leader)?, now, &mut a);
            a.group = true;
            a.msa_ticks = dead.msa;
            a.delays = dead.delays;
            for &t in table.threads(leader).unwrap_or(&[]) {
                // BEGIN LAB 7: add live thread t's clocks (wrapping), delay episodes and counters to the group's
                // STUB: // your code here
                let msa = s.msa_snapshot(slot_of(t), now);
                for (x, y) in a.msa_ticks.iter_mut().zip(msa) {
                    *x = x.wrapping_add(y);
                }
                a.delays.add(&s.delays(slot_of(t), now));
                c.add(&s.counters(slot_of(t)));
                // END LAB 7
            }
            Ok::<_, i32>(())
        })?;
        a.counters = c;
        a.memory = memory(&dead.mem); // a dead process's numbers (a live one's come from its map)
        Ok::<_, i32>((a, p.vm_of(leader), proc::on_cpu(&dead.msa)))
    })?;
    if vm.is_some() {
        let cpu = proc::on_cpu(&a.msa_ticks).max(cpu);
        fill_memory(&mut a, vm, cpu);
    }
    Ok(a)
}

/// The record of an exited task: identity `id` at TSC `now`, numbers from `totals`, ended
/// with `status`; `group`: its process's.
fn at_exit(id: &Identity, now: u64, status: ExitStatus, totals: &Totals, group: bool) -> TaskAccounting {
    let mut a = TaskAccounting::default();
    identity_into(id, now, &mut a);
    a.group = group;
    a.exit_code = status.raw() as u32;
    a.flags |= status_flags(Some(status));
    a.msa_ticks = totals.msa;
    a.delays = totals.delays;
    a.counters = totals.counters;
    a.memory = memory(&totals.mem);
    a
}

/// Do identities `a` and `b` give the same record at an exit with `status` ([`at_exit`])?
/// Their exit statuses may differ as long as each is none yet or `status`: the record's
/// status is `status` either way (the process's leader is read after it ended, its thread
/// before).
fn same_at_exit(a: &Identity, b: &Identity, status: ExitStatus) -> bool {
    let settled = |id: &Identity| id.exit_status.is_none_or(|s| s == status);
    settled(a) && settled(b) && Identity { exit_status: None, ..*a } == Identity { exit_status: None, ..*b }
}

/// The record of one task or process as the bus carries it: converted once, written
/// straight into the message (`fill_into` → the `struct taskstats` image in the STATS attribute,
/// each clock in nanoseconds into the MSA attribute), with no image built and copied first.
pub struct Record<'a>(pub &'a TaskAccounting);

impl WriteRecord for Record<'_> {
    fn write_record(&self, out: &mut RecordOut<'_>) {
        let clock = time::clock();
        let boot_ns = time::boot_unix_seconds().saturating_mul(1_000_000_000);
        out.stats(tally_taskstats::Taskstats::SIZE, |b| {
            if let Ok(image) = <&mut [u8; tally_taskstats::Taskstats::SIZE]>::try_from(b) {
                tally_taskstats::fill_into(self.0, &clock, boot_ns, image); // `b` comes zeroed
            }
        });
        out.msa(8 * self.0.msa_ticks.len(), |b| tally_taskstats::write_msa_ns(&self.0.msa_ticks, &clock, b));
    }
}

/// The kernel's tasks as the TASKSTATS family reads them, for a GET by pid or tgid: what a
/// system call hands the bus along with a request (`bus::Socket::send`).
pub struct Taskstats;

impl TaskstatsSource for Taskstats {
    fn pid_stats(&mut self, pid: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
        let pid = i32::try_from(pid).map_err(|_| ESRCH)?;
        let mut a = TaskAccounting::default();
        of_pid_into(pid, &mut a)?;
        Record(&a).write_record(out);
        Ok(())
    }

    fn tgid_stats(&mut self, tgid: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
        let tgid = i32::try_from(tgid).map_err(|_| ESRCH)?;
        Record(&of_tgid(tgid)?).write_record(out);
        Ok(())
    }
}

/// The running task as the bus names a sender (its tid, tgid and uid).
pub fn current_sender() -> Sender {
    let ids = proc::current_ids();
    Sender { pid: ids.tid as u32, tgid: ids.pid as u32, uid: ids.uid }
}

/// A bus socket for the running task's process: `socket(domain, type, protocol)`.
pub fn open_socket(domain: u32, ty: u32, protocol: u32, nonblock: bool) -> Result<Socket, i32> {
    Socket::open(domain, ty, protocol, nonblock, proc::current_pid() as u32)
}

/// Hand `bytes` to the bus from socket `s` for the running task: a taskstats GET among them
/// is answered from the records of this module ([`Taskstats`]).
pub fn send(s: &Socket, bytes: &[u8]) -> Result<usize, i32> {
    s.send(bytes, current_sender(), &mut Taskstats)
}

/// Taskstats exit records: listens whenever a bus socket listens for exits, and delivers
/// the records of each exit to the bus.
pub struct ExitRecords;

/// The one [`ExitRecords`] observer, registered in `main.rs`.
pub static EXIT_RECORDS: ExitRecords = ExitRecords;

impl ExitObserver for ExitRecords {
    fn listening(&self) -> bool {
        crate::bus::exit_listeners()
    }

    fn exited(&self, e: &ExitEvent) {
        let thread = at_exit(&e.thread, e.now, e.status, &e.thread_totals, false);
        // A process whose one thread this was has the thread's identity and totals, so its
        // record is the thread's with AGROUP: the bus copies the encoded one instead of
        // building and encoding it again (`GroupRecord::ThreadsOwn`).
        let one_thread = matches!(&e.process, Some((id, total)) if same_at_exit(id, &e.thread, e.status) && *total == e.thread_totals);
        let process =
            e.process.as_ref().filter(|_| !one_thread).map(|(id, total)| at_exit(id, e.now, e.status, total, true));
        let process_record = process.as_ref().map(|t| (t.tgid, Record(t)));
        let tgid = match &process_record {
            Some((tgid, r)) => Some((*tgid, GroupRecord::Own(r as &dyn WriteRecord))),
            None if one_thread => Some((thread.tgid, GroupRecord::ThreadsOwn)),
            None => None,
        };
        crate::bus::deliver_exit(thread.pid, &Record(&thread), tgid);
    }
}

/// The per-process (`AGROUP`) taskstats record of an exit that ended a process — `None`
/// for a thread that was not its process's last — with the exit's wall clock (ns since
/// 1970). Process accounting (`process_acct.rs`) and CSA (`job_acct.rs`) read their numbers from it, so
/// the three accountings of one exit agree. `ASU` is the leader's or the last thread's
/// (a thread that used privilege and exited earlier left no flag behind: Tally's totals
/// carry no flags).
pub(super) fn process_record_at_exit(e: &ExitEvent) -> Option<(tally_uapi::taskstats::Taskstats, u64)> {
    let (id, total) = e.process.as_ref()?;
    let mut a = at_exit(id, e.now, e.status, total, true);
    a.flags |= e.thread.flags & tally_uapi::taskstats::ASU;
    let clock = time::clock();
    let boot_ns = time::boot_unix_seconds().saturating_mul(1_000_000_000);
    let ts = tally_taskstats::fill(&a, &clock, boot_ns);
    Some((ts, boot_ns.saturating_add(clock.monotonic_ns(e.now))))
}
