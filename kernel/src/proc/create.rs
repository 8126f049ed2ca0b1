//! Entering a task: in the task table (who it is, whose child, which process) and on the run
//! queue (how it runs), in that order, under the table's lock.
//!
//! Everything that can fail for lack of memory — the kernel stack, the memory map — is made
//! before the task is entered, so a failure leaves no trace. Kernel threads ([`spawn`],
//! [`spawn_thread`]) run a function and exit with status 0 when it returns; user tasks
//! (`user.rs`) drop to ring 3. [`init`] makes the first two tasks: the idle task (the boot
//! thread) and init, pid 1.

use tally_tasktable::{CreateKind, SpawnGroup, Task, TaskKey, TaskTable};
use tally_uapi::errno::ENOTTY;
use tally_uapi::errno::{EAGAIN, EINTR, EINVAL, EPERM};

use super::{Payload, Procs, Totals, PROCS};
use crate::base::config::MAX_TASKS;
use crate::base::time;
use crate::sched::{self, SchedParams, TaskIds, ThreadStart};

/// Make the boot thread the idle task (pid 0) and create init (pid 1), which runs
/// `init_main`. The boot thread has been running in the kernel since TSC `entry_tsc`.
pub fn init(entry_tsc: u64, init_main: fn(u64)) {
    let mut table: TaskTable<Payload, super::Totals> = TaskTable::new();
    let idle = table.create_idle(b"idle", Payload::kernel()).expect("fresh table");
    sched::init(idle, entry_tsc);
    let procs = Procs {
        table,
        waiters: Default::default(),
        exit_log: Default::default(),
        console: Default::default(),
        signals: Default::default(),
    };
    hal::cpu::without_interrupts(|| *PROCS.lock() = Some(procs));
    let thread = sched::new_thread(None).expect("no memory for init's stack");
    super::with(|p| {
        let now = hal::tsc::read();
        let key = p
            .table
            .create_init(b"init", 0, 0, time::boot_unix_seconds(), Payload::kernel())
            .expect("init created twice");
        let entity = SchedParams::Normal(0).entity().expect("nice 0 is valid");
        let ids = p.table.get(key).map(ids_of).expect("init just created");
        sched::admit(key, ids, entity, false, thread, kernel_thread(init_main, 0), now);
    });
}

/// A kernel thread's start: `entry(arg)`, then exit with status 0.
fn kernel_thread(entry: fn(u64), arg: u64) -> ThreadStart {
    ThreadStart { body: entry, arg, exit: exit_zero }
}

fn exit_zero() -> ! {
    super::exit(0)
}

/// Start a kernel thread running `entry(arg)` as a new process, child of the current task.
/// Returns its pid.
pub fn spawn(name: &str, params: SchedParams, entry: fn(u64), arg: u64) -> Result<i32, i32> {
    let thread = sched::new_thread(None)?;
    let start = kernel_thread(entry, arg);
    start_task(name, params, Payload::kernel(), thread, start, (CreateKind::Process, SpawnAttr::NONE), false)
}

/// Start a kernel daemon running `entry(arg)`: a process outside the process tree (no
/// parent, so init never waits for it; see `TaskTable::create_daemon`). `entry` must never
/// return. Returns its pid.
pub fn spawn_daemon(name: &str, params: SchedParams, entry: fn(u64), arg: u64) -> Result<i32, i32> {
    let thread = sched::new_thread(None)?;
    let start = kernel_thread(entry, arg);
    let entity = params.entity()?;
    super::with(|p| {
        let now = hal::tsc::read();
        let begin = time::boot_unix_seconds() + time::clock().monotonic_ns(now) / 1_000_000_000;
        let key = p.table.create_daemon(name.as_bytes(), begin, Payload::kernel())?;
        let ids = ids_of(p.table.get(key)?);
        sched::admit(key, ids, entity, false, thread, start, now);
        Ok(ids.tid)
    })
}

/// Start a kernel thread running `entry(arg)` as a new thread of the current task's process
/// (same tgid, same parent); returns its tid.
pub fn spawn_thread(params: SchedParams, entry: fn(u64), arg: u64) -> Result<i32, i32> {
    let thread = sched::new_thread(None)?;
    let start = kernel_thread(entry, arg);
    start_task("", params, Payload::kernel(), thread, start, (CreateKind::Thread, SpawnAttr::NONE), false)
}

/// `spawn`'s attributes for a new process (`tally_uapi::syscall`'s `spawn`): its process
/// group, and whether that group becomes the console's foreground group before the child
/// runs (glibc's `posix_spawn_file_actions_addtcsetpgrp_np`), so that a shell's foreground
/// job can never read the console before it is in the foreground.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpawnAttr {
    pub group: SpawnGroup,
    pub foreground: bool,
}

impl SpawnAttr {
    /// Nothing asked: the creator's group.
    pub const NONE: SpawnAttr = SpawnAttr { group: SpawnGroup::Inherit, foreground: false };
}

/// Enter a task whose `thread` has not run yet in the task table — a new process, child of
/// the current task, or (`kind`) a thread of the current task's process — and queue it to
/// run `start`; a new process starts in the process group `group` says (`spawn`'s
/// attribute: `EPERM`/`EINVAL` as `setpgid`, checked before anything is created). `exec`
/// marks a program that was loaded (not a copy of its creator, so the
/// accounting flag AFORK is cleared and the name is the program's). A payload with user
/// state makes a user task. `EAGAIN` beyond `MAX_TASKS`; `EINTR` for a thread of a process
/// being killed; the errno of invalid `params`.
pub(super) fn start_task(
    name: &str,
    params: SchedParams,
    payload: Payload,
    thread: sched::NewThread,
    start: ThreadStart,
    (kind, attr): (CreateKind, SpawnAttr),
    exec: bool,
) -> Result<i32, i32> {
    let group = attr.group;
    super::with(|p| {
        if p.table.len() >= MAX_TASKS {
            return Err(EAGAIN);
        }
        let now = hal::tsc::read();
        let entity = params.entity()?;
        let user = payload.is_user();
        let creator = sched::current();
        if kind == CreateKind::Thread && p.group_exiting(creator) {
            // Checked under the same lock exit_group marks threads under: a process being
            // killed cannot gain a thread the kill did not see.
            return Err(EINTR);
        }
        if let SpawnGroup::Join(pgid) = group {
            // A group the child could not join is refused before the child exists.
            let valid = pgid == 0 || (pgid > 0 && p.table.session_of_group(pgid) == p.table.sid(creator).ok());
            if !valid {
                return Err(if pgid < 0 { EINVAL } else { EPERM });
            }
        }
        if attr.foreground && !p.console_is_controlling(creator) {
            return Err(ENOTTY);
        }
        let begin = time::boot_unix_seconds() + time::clock().monotonic_ns(now) / 1_000_000_000;
        let key = p.table.create(creator, kind, begin, payload)?;
        if kind == CreateKind::Process {
            if let Err(e) = p.table.spawn_group(creator, key, group) {
                log::warn!("spawn: the child's process group {group:?}: errno {e}");
            }
            if attr.foreground {
                p.make_foreground(key);
            }
        }
        let t = p.table.get_mut(key)?;
        match (kind, exec) {
            (CreateKind::Thread, _) => {}
            (_, true) => t.exec(name.as_bytes()),
            (_, false) => t.set_comm(name.as_bytes()),
        }
        let ids = ids_of(t);
        let pid = ids.tid;
        if kind == CreateKind::Process && user {
            // Before the child is queued: whoever keeps track of processes (CSA's jobs)
            // knows of it before it can run and exit.
            let parent = p.table.get(creator).map(|c| c.tgid()).unwrap_or(0);
            super::notify::spawned(parent, pid);
        }
        sched::admit(key, ids, entity, user, thread, start, now);
        Ok(pid)
    })
}

/// The ids the scheduler publishes while `t` runs (`getpid` and `gettid` read them there).
fn ids_of(t: &Task<Payload, Totals>) -> TaskIds {
    TaskIds { tid: t.pid(), tgid: t.tgid() }
}

impl Procs {
    /// Is `member`'s process being killed (an `exit_group` or fatal signal in progress)?
    pub(super) fn group_exiting(&self, member: TaskKey) -> bool {
        self.table.leader(member).and_then(|l| self.table.get(l)).is_ok_and(|l| l.payload().group_exit.is_some())
    }
}
