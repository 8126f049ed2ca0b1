//! # fs — files on the accounting disk: a FAT16 volume mounted at `/var`, served by one thread
//!
//! Floor 3, beside `file`, `bus` and `drivers`. The accounting disk is the IDE secondary
//! master (`drivers::ata::ACCT_DISK`, `ata2`): an MBR whose first partition holds a FAT16
//! file system. The FAT code is the `embedded-sdmmc` crate (no alloc, 8.3 names, blocking
//! I/O through a [`BlockDevice`](embedded_sdmmc::BlockDevice) — here [`blockdev::AtaBlocks`]).
//!
//! **One owner.** `embedded-sdmmc`'s `VolumeManager` is not `Sync` (a `RefCell` inside) and
//! each of its calls may read and write several sectors, sleeping on the disk's interrupt
//! each time. So exactly one kernel thread, `fsd` ([`fsd_main`], started from `main.rs`),
//! owns the volume, and everybody else *asks* it: a system call builds an [`Op`], posts it
//! on a FIFO queue and sleeps until fsd has served it ([`call`]); accounting records are
//! posted to a [`RecordFile`]'s own queue without waiting at all. Nothing that holds a spin
//! lock or runs with interrupts off ever waits for the disk, and the FIFO order is the order
//! of effects: a `close` posted before an `unlink` happens before it.
//!
//! ```text
//!   write(fd, buf, n) ─ syscall/files.rs ─> fs::call(Op::Write) ─┐ queue (spin lock)
//!        caller sleeps UNINTERRUPTIBLE on its reply's wait queue  │
//!   fsd: pops the op ─> server.rs ─> embedded-sdmmc ─> blockdev.rs ─> drivers::ata (ata2, IRQ 15)
//!        puts the result and the sectors it moved in the reply, wakes the caller
//!   caller: charges the sectors to its own block counters, returns to user space
//! ```
//!
//! A caller's wait for fsd is a disk wait: UNINTERRUPTIBLE_SLEEP, as `blk_read`'s is, and
//! the sectors fsd moved for that request are charged to the caller's `inblock`/`oublock`
//! (what taskstats' `read_bytes`/`write_bytes` and CSA's block counts are made from), as if
//! it had done the I/O itself. The whole design, a request walked to the sector and what it
//! costs: `docs/files.md`.

mod blockdev;
pub mod record_file;
mod server;

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering};

use spin::Mutex;
use tally_runqueue::SleepKind;
use tally_uapi::errno::ENODEV;
use tally_uapi::fs::path::VarPath;
use tally_uapi::fs::Stat;

use crate::drivers::ata;
use crate::sched;
use crate::sync::WaitQueue;

pub use record_file::RecordFile;

/// What a descriptor open on `/var` holds: fsd's node, the `open` flags, and the position
/// (for a directory: the `getdents64` cookie). Shared by the descriptors `spawn` copies, as
/// an open file description is. Dropping the last reference closes it in fsd *without
/// waiting* ([`post`]), because the last reference may go in `FileTable::close_all` at a
/// process's exit.
pub struct VarFile {
    pub node: u64,
    pub dir: bool,
    pub flags: u32,
    pub pos: AtomicU64,
}

impl VarFile {
    /// Open `path` on `/var` (blocking, through fsd).
    pub fn open(path: VarPath, flags: u32) -> Result<VarFile, i32> {
        match call(Op::Open { path, flags })? {
            Done::Opened { node, dir } => Ok(VarFile { node, dir, flags, pos: AtomicU64::new(0) }),
            _ => Err(tally_uapi::errno::EIO),
        }
    }

    /// Up to `len` bytes at `pos` (fewer at the end of the file), independent of the
    /// descriptor position, waiting for fsd in `kind` (blocking: task context, interrupts
    /// on, no lock held).
    pub fn read_at(&self, pos: u64, len: usize, kind: SleepKind) -> Result<Vec<u8>, i32> {
        match call_as(Op::Read { node: self.node, pos, len }, kind)? {
            Done::Data(d) => Ok(d),
            _ => Err(tally_uapi::errno::EIO),
        }
    }

    /// The file's `stat` (blocking, through fsd).
    pub fn stat(&self) -> Result<Stat, i32> {
        match call(Op::Fstat { node: self.node })? {
            Done::Stat(s) => Ok(s),
            _ => Err(tally_uapi::errno::EIO),
        }
    }
}

impl Drop for VarFile {
    fn drop(&mut self) {
        post(Op::Close { node: self.node });
    }
}

/// One request to fsd. `node` is what [`Op::Open`] returned: fsd's handle of that open (a
/// file or directory), which names the node every descriptor of that file shares.
pub enum Op {
    /// Open (and with `O_CREAT` create) `path` with Linux `open` flags.
    Open {
        path: VarPath,
        flags: u32,
    },
    /// One descriptor less on `node` (the underlying file is closed with the last one).
    Close {
        node: u64,
    },
    /// Up to `len` bytes at `pos`.
    Read {
        node: u64,
        pos: u64,
        len: usize,
    },
    /// `data` at `pos`, or at the end of the file (`None`, `O_APPEND`), then flushed.
    Write {
        node: u64,
        pos: Option<u64>,
        data: Vec<u8>,
    },
    Stat {
        path: VarPath,
    },
    Fstat {
        node: u64,
    },
    Mkdir {
        path: VarPath,
    },
    Unlink {
        path: VarPath,
    },
    /// `linux_dirent64` records of directory `node` from entry `cookie` on, at most `max` bytes.
    Dents {
        node: u64,
        cookie: u64,
        max: usize,
    },
    /// Flush `node`'s directory entry and the drive's cache.
    Fsync {
        node: u64,
    },
    /// Open an existing regular file for the [`RecordFile`] `rec`, owned by uid `owner`.
    OpenRecord {
        path: VarPath,
        rec: Arc<record_file::RecInner>,
        owner: u32,
    },
    /// Write what record file `id` has queued, flush and close it.
    CloseRecord {
        id: u64,
    },
}

/// What a request gives back.
pub enum Done {
    Unit,
    Opened {
        node: u64,
        dir: bool,
    },
    Data(Vec<u8>),
    /// Bytes written and the position after them.
    Wrote {
        n: u64,
        end: u64,
    },
    Stat(Stat),
    /// Records, and the cookie to continue from.
    Dents(Vec<u8>, u64),
}

/// A request in the queue and, for [`call`], where its answer goes.
struct Job {
    op: Op,
    reply: Option<Arc<Reply>>,
}

/// The answer to one [`call`]: the result and the sectors read and written for it.
struct Reply {
    done: AtomicBool,
    result: Mutex<Option<(Result<Done, i32>, u64, u64)>>,
    queue: WaitQueue,
}

/// The volume's state, as fsd last set it.
const STATE_NONE: u8 = 0;
const STATE_STARTING: u8 = 1;
const STATE_MOUNTED: u8 = 2;
const STATE_FAILED: u8 = 3;
static STATE: AtomicU8 = AtomicU8::new(STATE_NONE);

/// Requests waiting for fsd, oldest first.
static QUEUE: Mutex<VecDeque<Job>> = Mutex::new(VecDeque::new());
/// Set by anyone who gives fsd work (a request, a record); fsd sleeps on [`WORK`] until it is.
static KICK: AtomicBool = AtomicBool::new(false);
static WORK: WaitQueue = WaitQueue::new();

/// Wake fsd (callable with interrupts off and spin locks held: it only sets a flag and
/// makes fsd runnable).
fn kick() {
    KICK.store(true, Ordering::Release);
    WORK.wake_all();
}

static FSD_PID: AtomicI32 = AtomicI32::new(0);

/// `main.rs` tells which pid fsd got (for its clocks, in tests and docs).
pub fn set_fsd_pid(pid: i32) {
    FSD_PID.store(pid, Ordering::Relaxed);
}

/// fsd's pid (0 if it was not started).
pub fn fsd_pid() -> i32 {
    FSD_PID.load(Ordering::Relaxed)
}

/// Sectors read and written on the accounting disk since boot (all of them by fsd).
pub fn sectors() -> (u64, u64) {
    blockdev::sectors()
}

/// Is there an accounting disk at all? `false`: every call is `ENODEV` at once.
pub fn present() -> bool {
    matches!(STATE.load(Ordering::Acquire), STATE_STARTING | STATE_MOUNTED)
}

/// Should `main.rs` start fsd? (Only when IDENTIFY found the accounting disk.)
pub fn wanted() -> bool {
    let yes = ata::disk(ata::ACCT_DISK).is_some();
    if yes {
        STATE.store(STATE_STARTING, Ordering::Release);
    } else {
        log::info!("fs: no accounting disk (ata2): /var is not mounted");
    }
    yes
}

/// Wait (at most 5 s) until fsd has mounted `/var` or given up: pid 1 calls this before it
/// runs anything else, so the mount happens (and is logged) during boot, not in the middle
/// of a user program's output. Task context.
pub fn wait_mounted() {
    let deadline = hal::tsc::read().saturating_add(crate::base::time::clock().ns_to_ticks(5_000_000_000));
    while STATE.load(Ordering::Acquire) == STATE_STARTING && hal::tsc::read() < deadline {
        sched::sleep_ns(1_000_000);
    }
}

/// Post `op` and sleep (UNINTERRUPTIBLE: a disk wait) until fsd has served it. Task context,
/// interrupts on, no lock held. The sectors fsd moved for it are charged to the caller.
pub fn call(op: Op) -> Result<Done, i32> {
    call_as(op, SleepKind::Uninterruptible)
}

/// [`call`], sleeping in `kind`: a page fault reading a program's page from `/var` waits in
/// `SleepKind::Paging` (PAGING_SLEEP), as Linux's major fault waits for the page's I/O.
pub fn call_as(op: Op, kind: SleepKind) -> Result<Done, i32> {
    if !present() {
        return Err(ENODEV);
    }
    let reply = Arc::new(Reply { done: AtomicBool::new(false), result: Mutex::new(None), queue: WaitQueue::new() });
    let job = Job { op, reply: Some(Arc::clone(&reply)) };
    // The state is checked under the queue's lock: fsd turns it to FAILED under the same lock
    // before it answers what is queued, so no request can be left behind unanswered.
    let queued = hal::cpu::without_interrupts(|| {
        let mut q = QUEUE.lock();
        present().then(|| q.push_back(job)).is_some()
    });
    if !queued {
        return Err(ENODEV);
    }
    kick();
    reply.queue.wait_until(kind, None, || reply.done.load(Ordering::Acquire));
    let (result, read, written) =
        hal::cpu::without_interrupts(|| reply.result.lock().take()).unwrap_or((Err(tally_uapi::errno::EIO), 0, 0));
    if read > 0 {
        sched::account_blocks(read, false);
    }
    if written > 0 {
        sched::account_blocks(written, true);
    }
    result
}

/// Post `op` without waiting for it (a descriptor's last close, from any context). The FIFO
/// keeps it ordered before whatever the same process asks next.
pub fn post(op: Op) {
    let queued = hal::cpu::without_interrupts(|| {
        let mut q = QUEUE.lock();
        present().then(|| q.push_back(Job { op, reply: None })).is_some()
    });
    if queued {
        kick();
    }
}

/// The owner thread: mount the volume, then serve requests and record queues forever.
pub fn fsd_main(_: u64) {
    let mut server = match server::Server::mount() {
        Ok(s) => {
            STATE.store(STATE_MOUNTED, Ordering::Release);
            s
        }
        Err(why) => {
            log::warn!("fs: cannot mount /var from ata2: {why}");
            hal::cpu::without_interrupts(|| {
                let _queue = QUEUE.lock();
                STATE.store(STATE_FAILED, Ordering::Release);
            });
            // Anyone who posted meanwhile gets ENODEV; nobody can post any more.
            fail_all();
            loop {
                WORK.wait_until(SleepKind::Interruptible, None, || false);
            }
        }
    };
    loop {
        WORK.wait_until(SleepKind::Interruptible, None, || KICK.swap(false, Ordering::AcqRel));
        loop {
            let job = hal::cpu::without_interrupts(|| QUEUE.lock().pop_front());
            let Some(job) = job else { break };
            let before = blockdev::sectors();
            let result = server.serve(job.op);
            let after = blockdev::sectors();
            let (read, written) = (after.0 - before.0, after.1 - before.1);
            match job.reply {
                Some(reply) => {
                    hal::cpu::without_interrupts(|| *reply.result.lock() = Some((result, read, written)));
                    reply.done.store(true, Ordering::Release);
                    reply.queue.wake_all();
                }
                // A close nobody waits for: its I/O is fsd's own.
                None => charge_self(read, written),
            }
        }
        let before = blockdev::sectors();
        server.drain_records();
        let after = blockdev::sectors();
        charge_self(after.0 - before.0, after.1 - before.1);
    }
}

/// Sectors fsd moved on nobody's behalf (records, closes at exit) count as its own.
fn charge_self(read: u64, written: u64) {
    if read > 0 {
        sched::account_blocks(read, false);
    }
    if written > 0 {
        sched::account_blocks(written, true);
    }
}

/// After a failed mount: answer every queued call with `ENODEV`.
fn fail_all() {
    while let Some(job) = hal::cpu::without_interrupts(|| QUEUE.lock().pop_front()) {
        if let Some(reply) = job.reply {
            hal::cpu::without_interrupts(|| *reply.result.lock() = Some((Err(ENODEV), 0, 0)));
            reply.done.store(true, Ordering::Release);
            reply.queue.wake_all();
        }
    }
}
