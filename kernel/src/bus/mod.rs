//! # bus — the message bus in the kernel: its state, sockets, exit records to listeners
//!
//! `tally-msgbus` is the bus's logic (generic-netlink framing, sockets with flow control,
//! the controller and the TASKSTATS family), safe and host-tested. This layer is where it
//! meets the kernel:
//!
//! ```text
//!   socket()/bind()/sendto()/recvfrom()  ──►  syscall/netlink.rs  ──►  Socket (socket.rs)
//!        Socket::send(.., source) ──► Bus::send ──► TaskstatsFamily ──► source.pid_stats
//!                       (the source is acct's `Taskstats`, which writes the reply in place)
//!        Socket::recv ──► Bus::recv, or sleep on READERS (INTERRUPTIBLE_SLEEP) until a datagram comes
//!   a task exits ──► proc's exit observers ──► acct's ExitRecords ──► deliver_exit ──► every listener for CPU 0
//! ```
//!
//! The bus knows nothing of tasks: who sends is told to it ([`Socket::send`]'s `Sender`), and
//! what a record says is written by whoever hands one over (`acct`).
//!
//! **Locks.** The bus has its own lock, always taken with interrupts off. A GET request
//! reads the task table *while holding it* (bus lock, then the table's and the scheduler's);
//! nothing takes them the other way round: the exit path builds its records under the
//! table's lock, releases it, then delivers; a socket is closed only from system calls and
//! `FileTable::close_all`, never under the table's lock. Whether anyone listens is an atomic
//! flag ([`exit_listeners`]), so the exit path asks without the bus lock.
//!
//! **One CPU.** Tally runs on one CPU: every task exits on CPU 0, and a cpumask naming any
//! other CPU is `EINVAL`.
//!
//! The bus, its framing and flow control, and taskstats over it: `docs/taskstats.md`.

mod socket;

pub use socket::Socket;

use alloc::boxed::Box;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;
use tally_msgbus::taskstats::{exit_message_in, GroupRecord, TaskstatsFamily, TaskstatsSource, WriteRecord};
use tally_msgbus::Bus;

use crate::base::config::NR_CPUS;
use crate::sync::WaitQueue;

/// The CPU every task exits on.
const THIS_CPU: u32 = 0;

struct State {
    bus: Bus<dyn TaskstatsSource>,
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

/// The exit record of thread `pid`, and its process's when it was the last thread, to every
/// listener registered for this CPU. Never blocks: a full receive buffer drops the message
/// and counts it (the listener's next `recv` fails once with `ENOBUFS`). A message that
/// cannot be built is lost for every listener, and counted and reported the same way (its
/// sequence number is used up too, so the gap shows).
///
/// The message is encoded once, in a buffer a listener's `recv` gave back, and that buffer
/// itself is queued (only a second listener would get a copy): no allocation, no copy.
pub fn deliver_exit<'a>(
    pid: u32,
    pid_rec: &'a (dyn WriteRecord + 'a),
    tgid: Option<(u32, GroupRecord<'a, dyn WriteRecord + 'a>)>,
) {
    let woken = with_bus(|s| {
        let seq = s.bus.next_exit_seq(s.taskstats, THIS_CPU);
        let buf = s.bus.spare_buffer();
        let d = match exit_message_in(buf, s.taskstats, seq, pid, pid_rec, tgid) {
            Ok(msg) => s.bus.deliver_owned_to_cpu_listeners(s.taskstats, THIS_CPU, msg),
            Err(e) => {
                let d = s.bus.drop_at_cpu_listeners(s.taskstats, THIS_CPU);
                log::error!(
                    "taskstats: cannot build the exit record of pid {pid}: errno {e}; dropped at {} listener(s)",
                    d.dropped
                );
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
    with_bus(|st| st.bus.socket_stats(s.id()).ok())
}
