//! # The message bus in the kernel: sockets, the TASKSTATS source, exit records
//!
//! `tally-msgbus` is the bus's logic (generic-netlink framing, sockets with flow control, the
//! controller and the TASKSTATS family), safe and host-tested. This module is where it
//! meets the kernel:
//!
//! ```text
//!   socket()/bind()/sendto()/recvfrom()  ──►  syscall/socket.rs  ──►  Socket (here)
//!        Socket::send ──► Bus::send(.., KernelEnv) ──► TaskstatsFamily ──► KernelEnv::pid_stats
//!                                                  (writes the reply in place) └► task::taskstats::of_pid_into ──► fill
//!        Socket::recv ──► Bus::recv, or sleep on READERS (INTERRUPTIBLE_SLEEP) until a datagram comes
//!   a task exits ──► lifecycle.rs builds its record(s) ──► deliver_exit ──► every listener for CPU 0
//! ```
//!
//! **Locks.** The bus has its own lock, always taken with interrupts off. A GET request
//! reads the task table *while holding it* (bus lock, then kernel lock); nothing takes them
//! the other way round: the exit path builds its records under the kernel lock, releases
//! it, then delivers; a socket is closed only from system calls and `FileTable::close_all`,
//! never under the kernel lock. Whether anyone listens is an atomic flag
//! ([`exit_listeners`]), so the exit path asks without the bus lock.
//!
//! **One CPU.** Tally runs on one CPU: every task exits on CPU 0, and a cpumask naming any
//! other CPU is `EINVAL`.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;
use tally_msgbus::taskstats::{exit_message, RecordOut, TaskstatsFamily, TaskstatsSource, WriteRecord};
use tally_msgbus::{Bus, Sender, SockId};
use tally_runqueue::SleepKind;
use tally_taskstats::{TaskAccounting, Taskstats};
use tally_uapi::errno::{EAGAIN, EINTR};

use crate::task::{self, WaitQueue};

/// The CPUs the bus knows (Tally is uniprocessor).
pub const NR_CPUS: u32 = 1;
/// The CPU every task exits on.
const THIS_CPU: u32 = 0;

/// The kernel's view of the tasks, handed to the bus for requests that need it.
struct KernelEnv;

/// The record of one task or process as the bus carries it: converted once, written
/// straight into the message (`fill` → the `struct taskstats` image in the STATS attribute,
/// each clock in nanoseconds into the MSA attribute), with no image built and copied first.
struct KernelRecord<'a>(&'a TaskAccounting);

impl WriteRecord for KernelRecord<'_> {
    fn write_record(&self, out: &mut RecordOut<'_>) {
        let clock = crate::time::clock();
        let boot_ns = crate::time::boot_unix_seconds().saturating_mul(1_000_000_000);
        out.stats(Taskstats::SIZE, |b| {
            if let Ok(image) = <&mut [u8; Taskstats::SIZE]>::try_from(b) {
                tally_taskstats::fill(self.0, &clock, boot_ns).write_to(image);
            }
        });
        out.msa(8 * self.0.msa_ticks.len(), |b| tally_taskstats::write_msa_ns(&self.0.msa_ticks, &clock, b));
    }
}

impl TaskstatsSource for KernelEnv {
    fn pid_stats(&mut self, pid: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
        let pid = i32::try_from(pid).map_err(|_| tally_uapi::errno::ESRCH)?;
        let mut a = TaskAccounting::default();
        task::taskstats::of_pid_into(pid, &mut a)?;
        KernelRecord(&a).write_record(out);
        Ok(())
    }

    fn tgid_stats(&mut self, tgid: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
        let tgid = i32::try_from(tgid).map_err(|_| tally_uapi::errno::ESRCH)?;
        KernelRecord(&task::taskstats::of_tgid(tgid)?).write_record(out);
        Ok(())
    }
}

struct State {
    bus: Bus<KernelEnv>,
    taskstats: u16,
}

static BUS: Mutex<Option<State>> = Mutex::new(None);
/// Someone listens for exit records on this CPU (kept equal to `Bus::has_listeners`).
static LISTENING: AtomicBool = AtomicBool::new(false);
/// Readers of every socket sleep here; a delivery wakes them all and each re-checks its own
/// socket (a handful of readers at most: simpler than a queue per socket).
static READERS: WaitQueue = WaitQueue::new();

/// Make the bus and register its families (at boot, before any task can open a socket).
pub fn init() {
    let mut bus = Bus::new(NR_CPUS);
    let taskstats = bus.register_family(Box::new(TaskstatsFamily::new())).expect("a fresh bus has room for TASKSTATS");
    hal::cpu::without_interrupts(|| *BUS.lock() = Some(State { bus, taskstats }));
    log::info!("bus: generic netlink, family TASKSTATS id {taskstats}");
}

fn with_bus<R>(f: impl FnOnce(&mut State) -> R) -> R {
    hal::cpu::without_interrupts(|| {
        let mut guard = BUS.lock();
        let state = guard.as_mut().expect("bus::init not called");
        let r = f(state);
        LISTENING.store(state.bus.has_listeners(state.taskstats, THIS_CPU), Ordering::Relaxed);
        r
    })
}

/// Does any socket listen for exit records? (One atomic load: asked at every task exit.)
pub fn exit_listeners() -> bool {
    LISTENING.load(Ordering::Relaxed)
}

/// The exit record of a thread, and its process's when it was the last thread, to every
/// listener registered for this CPU. Never blocks: a full receive buffer drops the message
/// and counts it (the listener's next `recv` fails once with `ENOBUFS`). A message that
/// cannot be built is lost for every listener, and counted and reported the same way (its
/// sequence number is used up too, so the gap shows).
pub fn deliver_exit(pid: TaskAccounting, tgid: Option<TaskAccounting>) {
    let pid_rec = KernelRecord(&pid);
    let tgid_rec = tgid.as_ref().map(|t| (t.tgid, KernelRecord(t)));
    let woken = with_bus(|s| {
        let seq = s.bus.next_exit_seq(s.taskstats, THIS_CPU);
        let d = match exit_message(s.taskstats, seq, pid.pid, &pid_rec, tgid_rec.as_ref().map(|(t, r)| (*t, r))) {
            Ok(msg) => s.bus.deliver_to_cpu_listeners(s.taskstats, THIS_CPU, &msg),
            Err(e) => {
                let d = s.bus.drop_at_cpu_listeners(s.taskstats, THIS_CPU);
                log::error!("taskstats: cannot build the exit record of pid {}: errno {e}; dropped at {} listener(s)", pid.pid, d.dropped);
                d
            }
        };
        !d.delivered_to.is_empty() || !d.dropped_at.is_empty()
    });
    if woken {
        READERS.wake_all();
    }
}

/// The bus's counters (published as the `bus:0:genetlink` kstat).
pub fn stats() -> tally_msgbus::BusStats {
    with_bus(|st| st.bus.stats())
}

/// Counters of socket `s` (for the self-tests).
pub fn socket_stats(s: &Socket) -> Option<tally_msgbus::SocketStats> {
    with_bus(|st| st.bus.socket_stats(s.id).ok())
}

/// A bus socket: one open file description (`crate::file::OpenFile::Socket`).
pub struct Socket {
    id: SockId,
    nonblock: bool,
}

impl Socket {
    /// `socket(domain, type, protocol)` for the calling process.
    pub fn open(domain: u32, ty: u32, protocol: u32, nonblock: bool) -> Result<Socket, i32> {
        let owner = task::current_pid() as u32;
        let id = with_bus(|s| s.bus.open(domain, ty, protocol, owner))?;
        Ok(Socket { id, nonblock })
    }

    pub fn bind(&self, portid: u32) -> Result<(), i32> {
        with_bus(|s| s.bus.bind(self.id, portid))
    }

    /// Hand the bus one or more messages from the calling task; replies are queued here.
    pub fn send(&self, bytes: &[u8]) -> Result<usize, i32> {
        let ids = task::current_ids();
        let sender = Sender { pid: ids.tid as u32, tgid: ids.pid as u32, uid: ids.uid };
        let n = with_bus(|s| s.bus.send(self.id, bytes, sender, &mut KernelEnv))?;
        READERS.wake_all(); // replies may be waited for by another thread
        Ok(n)
    }

    /// One datagram; sleeps until one is queued unless `dontwait` (or the socket is
    /// non-blocking): `EAGAIN`. `ENOBUFS` once after a drop; `EINTR` if the process is killed.
    pub fn recv(&self, dontwait: bool) -> Result<Vec<u8>, i32> {
        loop {
            match with_bus(|s| s.bus.recv(self.id))? {
                Some(datagram) => return Ok(datagram),
                None if dontwait || self.nonblock => return Err(EAGAIN),
                None => {}
            }
            // Wake for a datagram, or for a drop (the next recv reports ENOBUFS).
            let dropped = |s: &State| s.bus.socket_stats(self.id).map_or(0, |st| st.dropped);
            let dropped_before = with_bus(|s| dropped(s));
            READERS.wait_until(SleepKind::Interruptible, None, || {
                with_bus(|s| s.bus.has_data(self.id) || dropped(s) != dropped_before) || task::kill_pending()
            });
            if task::kill_pending() {
                return Err(EINTR);
            }
        }
    }

    /// The next datagram, if one is queued and `copy` takes it, in one hold of the bus lock:
    /// `copy` runs with the lock held and interrupts off, so it must neither block nor take
    /// a lock (the direct user copy qualifies). `Ok(Some(length))` once taken (its buffer is
    /// kept for the next reply); `Ok(None)`: nothing queued, or `copy` declined and the
    /// datagram stays for [`recv`](Self::recv). `ENOBUFS` once after a drop, as `recv`.
    pub fn recv_copy(&self, copy: impl FnOnce(&[u8]) -> bool) -> Result<Option<usize>, i32> {
        with_bus(|s| s.bus.recv_copy(self.id, copy))
    }

    /// Gives a datagram [`recv`](Self::recv) returned back to the bus once it has been
    /// copied out, for the next reply to be written into (`Bus::recycle`).
    pub fn recycle(&self, datagram: Vec<u8>) {
        with_bus(|s| s.bus.recycle(datagram));
    }

    pub fn set_rcvbuf(&self, bytes: u32) -> Result<(), i32> {
        with_bus(|s| s.bus.set_rcvbuf(self.id, bytes))
    }

    pub fn rcvbuf(&self) -> Result<u32, i32> {
        with_bus(|s| s.bus.rcvbuf(self.id))
    }

    /// The id of family `name`, asked of the controller as a user program asks
    /// (`CTRL_CMD_GETFAMILY`), for the kernel's own clients: the self-tests and benchmarks.
    /// The controller answers during `send`, so the reply is already queued: datagrams
    /// queued before it (exit records) are skipped.
    pub fn family_id(&self, name: &str) -> Result<u16, i32> {
        let seq = 1;
        self.send(&tally_msgbus::ctrl::getfamily_request(seq, name)?)?;
        loop {
            let d = self.recv(true)?;
            if tally_msgbus::msg::first_message(&d).is_ok_and(|m| m.header.nlmsg_seq == seq && m.header.nlmsg_pid != 0) {
                return tally_msgbus::ctrl::parse_family_reply(&d).map(|f| f.id);
            }
        }
    }
}

impl Drop for Socket {
    /// Closing the socket drops its listener registrations (seed 001: sockets closed
    /// without deregistering are cleaned up).
    fn drop(&mut self) {
        if let Err(e) = with_bus(|s| s.bus.close(self.id)) {
            log::warn!("bus: closing socket {:?}: errno {e}", self.id);
        }
    }
}
