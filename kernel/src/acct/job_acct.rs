//! # SGI CSA in the kernel: jobs, records at exit, `csa_ctl`, and the files
//!
//! All of CSA that needs no machine is the `tally-csa` crate: the job table, the switches
//! and thresholds, routing, the records and the `csa_ctl` state machine ([`Csa`]). It
//! never touches a file; every decision returns [`Effects`] — "post these bytes to the
//! system file", "install the file you opened", "close job J's ja file" — and this file is
//! the kernel's side of that contract:
//!
//! ```text
//!   spawn (proc, table lock held, child not yet queued) ──► CSA_SPAWNS: Csa::spawn (inherit)
//!   job_create (syscall/acct_calls.rs) ───────────────────────────► job_create: Csa::job_create ─┐
//!   a process's last thread exits (proc, interrupts off)                                  │
//!     └─► CSA_EXITS: its taskstats record → ProcessExit → Csa::process_exit ─────────────┤
//!   csa_ctl: Csa::prepare ─► RecordFile::open (sleeps) ─► Csa::control ──────────────────┤
//!   the disk owner fails a write ─► on_error ─► Csa::file_error ──────────────────────────┤
//!                                                                                         ▼
//!            carry_out(Effects), under GLUE's lock: Post → RecordFile::post (never sleeps)
//!                                                   Install → a slot for the opened file
//!                                                   Close → the closing list ─► closed where
//!                                                           sleeping is allowed (below)
//! ```
//!
//! **One lock, interrupts off.** [`GLUE`] holds the `Csa` and the open files (one slot per
//! `FileId`). Everything happens under it with interrupts off — the exit observer runs
//! that way — so decisions and the order of posted records are one sequence: records reach
//! each file in the order the state machine produced them. Lock order: the task table's
//! lock, then this one (the spawn observer is called under the table's lock); nothing here
//! calls into `proc` while holding it.
//!
//! **Job membership is in place before a child can run.** A child joins its parent's job
//! in the spawn observer, which `proc` calls while entering the child in the task table,
//! before queueing it: a child cannot exit — and so cannot escape its job's accounting —
//! before its membership exists. (Registering from the `spawn` system call after `proc`
//! returns would leave a window in which a child preempting its parent exits unseen;
//! keeping a copy of the jid in `proc`'s task table would make two sources of truth.)
//! Threads need nothing: jobs are by process (thread group id), and a thread belongs to its
//! process. Kernel threads make no system calls, so they never join a job — except where the
//! kernel tests itself: the bench (`bench/acct_exit.rs`) and the self-tests
//! (`selftest/acct_files.rs`) call [`job_create`] directly from their kernel thread, so that
//! the user processes they spawn are in a job. Nothing else does.
//!
//! **Closing sleeps; exits cannot.** Closing a file waits for its records to reach the disk,
//! which the exit path (interrupts off) cannot do: a job ending closes its ja file, a post
//! the file layer refuses with `EIO` (the file has failed) closes its file. Such files go
//! on a closing list that the `csaclose` kernel daemon (started when CSA first opens a
//! file) and every CSA system call drain, in task context.
//!
//! **Error cookies.** The crate names an open file by a cookie it hands out (`prepare`); the
//! file layer names it by [`RecordFile::id`]. A slot keeps both, so a write error reported by
//! the disk owner (`on_error(id, errno)`) becomes `Csa::file_error(cookie, errno)`.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Mutex;
use tally_csa::control::{Caller, CtlArg, Prepared};
use tally_csa::state::FileCounters;
use tally_csa::{Action, Csa, CsaConfig, Effects, FileId, NewJob, ProcessExit, Uname};
use tally_runqueue::SleepKind;
use tally_uapi::csa::JOB_HOST_ID;
use tally_uapi::errno::{EINVAL, ENOBUFS, ENODATA, ESRCH};

use crate::base::config::MAX_TASKS;
use crate::base::time;
use crate::fs::record_file::RecordFile;
use crate::proc::{self, ExitEvent, ExitObserver, SpawnObserver};
use crate::sched::{self, SchedParams};
use crate::sync::WaitQueue;

/// An open accounting file: which one for the state machine, the file, its error cookie.
struct Slot {
    file: FileId,
    record: RecordFile,
    cookie: u64,
}

/// CSA and its open files.
struct Glue {
    csa: Csa,
    /// One per open file: the system file and each job's ja file (room for all of them is
    /// reserved at boot, so the exit path never allocates).
    slots: Vec<Slot>,
    /// Files to close where sleeping is allowed (reserved like `slots`).
    closing: Vec<RecordFile>,
    /// Posts the file layer refused (`ENOBUFS`: its queue was full, the record lost and the
    /// file left on; `EIO`: the file failed; `EINVAL`: a record too long).
    post_failures: u64,
}

static GLUE: Mutex<Option<Glue>> = Mutex::new(None);

/// Is any process in a job? (`Csa::wants_exits`, mirrored after every change, for the
/// observers' cheap checks.)
static WANTS: AtomicBool = AtomicBool::new(false);

/// Where `csaclose` sleeps until there is something to close.
static CLOSER: WaitQueue = WaitQueue::new();

/// Run `f` on the glue with interrupts off (`None` before [`init`]).
fn with<R>(f: impl FnOnce(&mut Glue) -> R) -> Option<R> {
    hal::cpu::without_interrupts(|| GLUE.lock().as_mut().map(f))
}

/// The wall clock now, ns since 1970.
fn now_unix_ns() -> u64 {
    time::boot_unix_seconds().saturating_mul(1_000_000_000).saturating_add(time::monotonic_ns().unwrap_or(0))
}

/// Create CSA (everything off, no job; its tables sized for the kernel's task limit). At
/// boot, from `main.rs`, after `proc::init`.
pub fn init() {
    let uname = Uname::new(b"Tally", b"tally", env!("CARGO_PKG_VERSION").as_bytes(), b"#1", b"x86_64");
    let boot_unix_ns = time::boot_unix_seconds().saturating_mul(1_000_000_000);
    let csa = Csa::new(CsaConfig { host_id: JOB_HOST_ID, capacity: MAX_TASKS, uname, boot_unix_ns });
    let glue = Glue {
        csa,
        slots: Vec::with_capacity(MAX_TASKS + 1),
        closing: Vec::with_capacity(MAX_TASKS + 2),
        post_failures: 0,
    };
    hal::cpu::without_interrupts(|| *GLUE.lock() = Some(glue));
}

/// Has `csaclose` been started?
static CLOSER_STARTED: AtomicBool = AtomicBool::new(false);

/// Start `csaclose` the first time CSA opens a file (task context): a kernel daemon outside
/// the process tree, like fsd, so nobody waits for it; a machine that never uses CSA never
/// has it (and its process ids stay what they were).
fn ensure_closer() {
    if !CLOSER_STARTED.swap(true, Ordering::AcqRel) {
        if let Err(e) = proc::spawn_daemon("csaclose", SchedParams::Normal(0), closer, 0) {
            log::warn!("csa: no csaclose thread (errno {e}): files ended by an exit close at the next CSA call");
        }
    }
}

impl Glue {
    fn slot(&self, file: FileId) -> Option<usize> {
        self.slots.iter().position(|s| s.file == file)
    }

    /// Take `file`'s slot out and queue its file for closing.
    fn close(&mut self, file: FileId) {
        if let Some(i) = self.slot(file) {
            let s = self.slots.swap_remove(i);
            if self.closing.len() < self.closing.capacity() {
                self.closing.push(s.record);
            } else {
                // Cannot happen (room for every file is reserved); the file stays open.
                log::error!("csa: closing list full; a file is left open");
            }
        }
    }

    /// Append `bytes` to `file`. A refusal is counted (`post_failures`, the `refused` of the
    /// `csa:0:pacct` kstat); only `EIO` — the file layer has already failed the file — is a
    /// write error of that file (ERROFF). A full queue (`ENOBUFS`: fsd has not caught up,
    /// say while many processes exit at once) loses that record and leaves the file on, as
    /// process accounting does: a moment's backlog must not switch accounting off for good.
    fn post(&mut self, file: FileId, bytes: &[u8]) {
        let Some(i) = self.slot(file) else { return };
        if let Err(errno) = self.slots[i].record.post(bytes) {
            self.post_failures += 1;
            match errno {
                // A record the file layer cannot take (a daemon's record above its
                // MAX_RECORD): that record is lost, the file is fine.
                EINVAL => {
                    log::warn!("csa: a {}-byte record is too long for {}: not written", bytes.len(), name(file))
                }
                // The queue is full: this record is lost (counted), the file stays on.
                ENOBUFS => {}
                _ => {
                    let cookie = self.slots[i].cookie;
                    log::warn!(
                        "csa: a record for {} was refused (errno {errno}): that file is closed, ERROFF",
                        name(file)
                    );
                    let fx = self.csa.file_error(cookie, errno);
                    self.carry_out(&fx, &mut None, None);
                }
            }
        }
    }

    /// Carry out `fx` in order. `opened` is the file this request opened (taken by its
    /// `Install`), `daemon` the record of an `AC_WRACCT`.
    fn carry_out(&mut self, fx: &Effects, opened: &mut Option<RecordFile>, daemon: Option<&[u8]>) {
        for a in fx.iter() {
            match a {
                Action::Post { file, bytes } => self.post(file, bytes),
                Action::PostDaemonRecord { file } => {
                    // One post per record (the crate checked that the buffer is whole
                    // records, each with its size in its header).
                    let mut rest = daemon.unwrap_or_default();
                    while let Some(h) = tally_csa::header::Header::read(rest) {
                        let n = (h.size as usize).clamp(1, rest.len());
                        self.post(file, &rest[..n]);
                        rest = &rest[n..];
                    }
                }
                Action::Install { file, cookie } => {
                    self.close(file);
                    if let Some(record) = opened.take() {
                        self.slots.push(Slot { file, record, cookie });
                    }
                }
                Action::Close { file } => self.close(file),
            }
        }
        WANTS.store(self.csa.wants_exits(), Ordering::Release);
    }
}

fn name(file: FileId) -> &'static str {
    match file {
        FileId::System => "the system file",
        FileId::Ja(_) => "a ja file",
    }
}

/// Files taken off the closing list whose close has not finished yet.
static CLOSING_NOW: AtomicU64 = AtomicU64::new(0);

/// Close the files on the closing list, waiting for each (task context only).
fn drain_closing() {
    loop {
        let next = with(|g| {
            let f = g.closing.pop();
            if f.is_some() {
                CLOSING_NOW.fetch_add(1, Ordering::AcqRel);
            }
            f
        });
        let Some(f) = next.flatten() else { return };
        f.close_and_wait();
        CLOSING_NOW.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The `csaclose` kernel thread: closes what the exit path could not.
fn closer(_: u64) {
    loop {
        CLOSER
            .wait_until(SleepKind::Interruptible, None, || GLUE.lock().as_ref().is_some_and(|g| !g.closing.is_empty()));
        drain_closing();
    }
}

/// The disk owner failed to write file `id` (`errno`) and closed it: the state machine's
/// ERROFF (`Csa::file_error`). Task context (the owner thread).
///
/// The warning is printed inside the critical section, before the state changes: whoever
/// sees ERROFF (`csa_ctl(AC_CHECK)`, a self-test waiting for it) finds it on the console
/// already. Whatever the effects leave on the closing list is closed by `csaclose`, woken
/// here as after an exit: fsd itself must not wait for a close (a close is a request to fsd).
fn on_error(id: u64, errno: i32) {
    let closing = with(|g| {
        let Some(i) = g.slots.iter().position(|s| s.record.id() == id) else { return false };
        // The owner has closed it already: drop the slot, nothing to close.
        let s = g.slots.swap_remove(i);
        log::warn!("csa: writing {} failed (errno {errno}): closed, its accounting is ERROFF", name(s.file));
        let fx = g.csa.file_error(s.cookie, errno);
        g.carry_out(&fx, &mut None, None);
        !g.closing.is_empty()
    });
    if closing == Some(true) {
        CLOSER.wake_all();
    }
}

/// `job_create(uid)` for the calling process (privilege already checked): `u32::MAX` means
/// the caller's own uid. Returns the new job id; `EBUSY`, `EAGAIN` as the crate says.
pub fn job_create(uid: u32) -> Result<u64, i32> {
    let id = proc::with(|p| p.identity(sched::current()))?;
    let new = NewJob {
        pid: id.tgid as u32,
        uid: if uid == u32::MAX { id.uid } else { uid },
        gid: id.gid,
        nice: id.nice,
        now_unix_ns: now_unix_ns(),
    };
    let jid = with(|g| {
        let (jid, fx) = g.csa.job_create(&new)?;
        g.carry_out(&fx, &mut None, None);
        Ok::<_, i32>(jid)
    })
    .ok_or(ESRCH)??;
    drain_closing();
    Ok(jid)
}

/// `job_getjid(pid)`: the job of process `pid` (0: the caller's; a thread id names its
/// process). `ESRCH` no such task, `ENODATA` in no job.
pub fn job_getjid(pid: i32) -> Result<u64, i32> {
    let tgid = if pid == 0 {
        proc::current_pid()
    } else if pid < 0 {
        return Err(ESRCH);
    } else {
        proc::with(|p| p.table().lookup(pid).and_then(|k| p.table().get(k)).map(|t| t.tgid())).map_err(|_| ESRCH)?
    };
    with(|g| g.csa.jobs().jid_of(tgid as u32)).flatten().ok_or(ENODATA)
}

/// `csa_ctl(request, arg)` after the request was checked and its argument decoded (see
/// `tally_csa::control` for the two steps): `prepare`; open the file it asks for (this
/// sleeps, with no lock held); `control` and carry out its effects; close what they
/// closed. `arg` holds the answer for the requests that write one back.
pub fn control(request: u32, caller: &Caller, arg: &mut CtlArg) -> Result<(), i32> {
    let mut path = [0u8; tally_uapi::csa::ACCT_PATH];
    let open = with(|g| match g.csa.prepare(request, caller, arg)? {
        Prepared::Ready => Ok::<_, i32>(None),
        Prepared::Open { path: p, cookie } => {
            let n = p.len().min(path.len());
            path[..n].copy_from_slice(&p[..n]);
            Ok(Some((n, cookie)))
        }
    })
    .ok_or(ENODATA)??;
    let (mut opened, cookie) = match open {
        Some((n, cookie)) => {
            ensure_closer();
            // On behalf of the caller: a user's ja file only under /var/TMP, never a file
            // another owner's record file appends to (RecordFile::open_as).
            (Some(RecordFile::open_as(&path[..n], on_error, proc::current_uid())?), Some(cookie))
        }
        None => (None, None),
    };
    let now = now_unix_ns();
    let result = with(|g| {
        let fx = g.csa.control(request, caller, arg, cookie, now)?;
        let daemon = match arg {
            CtlArg::Wra(w) => w.record(),
            _ => None,
        };
        g.carry_out(&fx, &mut opened, daemon);
        Ok(())
    })
    .unwrap_or(Err(ENODATA));
    // A file opened for a request that failed (or that another call made pointless).
    if let Some(f) = opened {
        f.close_and_wait();
    }
    drain_closing();
    result
}

/// What the CSA files have received, for their kstats.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsaCounters {
    pub system: FileCounters,
    pub system_open: bool,
    /// All ja files together.
    pub ja: FileCounters,
    pub ja_open: u64,
    /// Files closed by the state machine whose close has not finished (their last records
    /// may not be on the disk yet).
    pub closing: u64,
    pub post_failures: u64,
}

/// The counters now.
pub fn counters() -> CsaCounters {
    with(|g| CsaCounters {
        system: g.csa.system_counters(),
        system_open: g.csa.system_open(),
        ja: g.csa.ja_counters(),
        ja_open: g.slots.iter().filter(|s| matches!(s.file, FileId::Ja(_))).count() as u64,
        closing: g.closing.len() as u64 + CLOSING_NOW.load(Ordering::Acquire),
        post_failures: g.post_failures,
    })
    .unwrap_or_default()
}

/// Every job's ja file as the state machine keeps it: (jid, its counters, open now?), for
/// the per-job kstats. Allocates: task context only.
pub fn ja_files() -> Vec<(u64, FileCounters, bool)> {
    with(|g| g.csa.ja_files().map(|j| (j.jid, j.counters, j.cookie.is_some())).collect()).unwrap_or_default()
}

/// CSA's exit observer (registered in `main.rs`): the records of a process in a job, and
/// its job's end.
pub struct CsaExits;

/// The one [`CsaExits`].
pub static CSA_EXITS: CsaExits = CsaExits;

impl ExitObserver for CsaExits {
    fn listening(&self) -> bool {
        WANTS.load(Ordering::Acquire)
    }

    fn exited(&self, e: &ExitEvent) {
        let Some((ts, now_ns)) = super::task_records::process_record_at_exit(e) else { return };
        let p = ProcessExit::from_taskstats(&ts);
        let closing = with(|g| {
            let fx = g.csa.process_exit(&p, now_ns);
            g.carry_out(&fx, &mut None, None);
            !g.closing.is_empty()
        });
        if closing == Some(true) {
            CLOSER.wake_all();
        }
    }
}

/// CSA's spawn observer (registered in `main.rs`): a child joins its parent's job.
pub struct CsaSpawns;

/// The one [`CsaSpawns`].
pub static CSA_SPAWNS: CsaSpawns = CsaSpawns;

impl SpawnObserver for CsaSpawns {
    fn spawned(&self, parent: i32, child: i32) {
        if !WANTS.load(Ordering::Acquire) {
            return; // nobody is in a job, so neither is the parent
        }
        let r = with(|g| g.csa.spawn(parent as u32, child as u32));
        if let Some(Err(e)) = r {
            // Only an inconsistent table or a full one (sized for every task) gets here.
            log::error!("csa: process {child} could not join the job of {parent} (errno {e})");
        }
    }
}
