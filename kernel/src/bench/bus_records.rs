//! What taskstats costs the kernel: the exit path with and without a listener, and how
//! fast exit records can be delivered.
//!
//! * `taskstats_exit`, param = listeners (0 or 1): one kernel thread spawned, run, exited
//!   and reaped, timed cycle by cycle. With no listener the exit path only checks an atomic
//!   flag; with one it also builds the thread's record (`fill_into`, the generic-netlink
//!   encoding: about 830 bytes), the process's (a copy of it, for a one-thread process)
//!   and queues them on the listener's socket. The difference of the two rows is what
//!   listening costs every exit. The listener is a real bus socket (what `socket()` opens)
//!   with a 1 MiB receive buffer, emptied between cycles (each datagram's buffer given back
//!   to the bus, as `recvfrom` does), outside the timed window, so nothing is dropped.
//! * `taskstats_exit_user`, param = listeners (0 or 1): the same with a user process,
//!   `/test/exiter` (which exits at once), spawned, run, exited and reaped — the peer of
//!   Linux's `fork_exit` rows (a process's life with and without a taskstats listener; Tally
//!   has no fork, so the process is spawned). Param 1 minus param 0 is **the extra cost of
//!   an exit with one listener**: both records of the exit (the thread's and, as it ended
//!   its process, the process's) built, encoded into one message and queued, and the
//!   listener's readers woken. The listener is emptied between cycles outside the timed
//!   window, as in Linux's peer.
//! * `taskstats_deliver`, param = 1 listener: `bus::deliver_exit` of one per-thread record
//!   (this thread's, as `of_pid` reads it) — the taskstats part of an exit on its own:
//!   convert, encode, queue. 10^9 / ns_per_op is the delivery throughput in records per
//!   second. The socket is emptied every 64 records, outside the timed window.
//!
//! * `taskstats_get_parts`, the pieces of a GET answered inside the kernel, for reading
//!   against `ubench tsget`'s full round trip (`user.rs`): param 0 — the whole request on a
//!   kernel-side socket, `send` of `GET PID` (parse, dispatch, snapshot, fill, encode,
//!   queue) and `recv` of the reply, without the system calls and user copies; param 1 —
//!   the snapshot alone (`acct::of_pid_into`, as a GET takes it: the task's
//!   clocks, delays, counters and memory under the task lock, written into a record);
//!   param 2 — `fill_into` alone (accounting → the `struct taskstats` image, zeroed first as
//!   the reply's STATS attribute is).

use tally_msgbus::taskstats::{request, Command};
use tally_uapi::errno::EAGAIN;
use tally_uapi::netlink::{AF_NETLINK, NETLINK_GENERIC, SOCK_RAW};
use tally_uapi::taskstats::TASKSTATS_GENL_NAME;

use super::Harness;
use crate::bus::Socket;
use crate::sched::SchedParams;
use crate::{acct, proc};

const CYCLES: u64 = 500;
const DELIVERIES: u64 = 2_000;
const LISTENER_RCVBUF: u32 = 1 << 20;

/// A socket registered for exits on CPU 0 and the TASKSTATS family id, or why not.
fn listener() -> Result<(Socket, u16), &'static str> {
    let s = crate::acct::open_socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, true).map_err(|_| "socket")?;
    s.set_rcvbuf(LISTENER_RCVBUF).map_err(|_| "SO_RCVBUF")?;
    let family = s.family_id(TASKSTATS_GENL_NAME, crate::acct::current_sender()).map_err(|_| "GETFAMILY")?;
    let reg = request(family, 2, 0, Command::RegisterCpumask("0")).map_err(|_| "REGISTER")?;
    crate::acct::send(&s, &reg).map_err(|_| "send REGISTER")?;
    drain(&s);
    Ok((s, family))
}

/// Empty `s`, giving each datagram's buffer back to the bus as `recvfrom` does (the next
/// exit record is built in it).
fn drain(s: &Socket) {
    loop {
        match s.recv(true) {
            Ok(d) => s.recycle(d),
            Err(EAGAIN) => return,
            Err(_) => {}
        }
    }
}

fn nothing(_: u64) {}

/// What each cycle spawns: a kernel thread, or the user program `/test/exiter`.
#[derive(Clone, Copy)]
enum Life {
    Kthread,
    User,
}

/// Ticks of `CYCLES` spawn → exit → reap cycles of `life`.
fn exit_cycles(life: Life, listener: Option<&Socket>) -> Option<u64> {
    let mut ticks = 0u64;
    for _ in 0..CYCLES {
        let t0 = hal::tsc::read();
        let pid = match life {
            Life::Kthread => proc::spawn("exiter", SchedParams::Normal(0), nothing, 0).ok()?,
            Life::User => proc::spawn_program("/test/exiter", &[b"exiter"]).ok()?,
        };
        proc::wait(Some(pid)).ok()?;
        ticks += hal::tsc::read() - t0;
        if let Some(s) = listener {
            drain(s);
        }
    }
    Some(ticks)
}

/// One `name`/`listeners` row: a warm-up run of cycles, then the timed one.
fn exit_row(h: &mut Harness, name: &str, life: Life, listener: Option<&Socket>) {
    let _ = exit_cycles(life, listener);
    match exit_cycles(life, listener) {
        Some(t) => h.report(name, listener.is_some() as u64, CYCLES, t),
        None => println!("bench: {name}: spawn or wait failed"),
    }
}

pub fn taskstats(h: &mut Harness) {
    // Nobody listening first, then one listener.
    exit_row(h, "taskstats_exit", Life::Kthread, None);
    exit_row(h, "taskstats_exit_user", Life::User, None);
    let (s, family) = match listener() {
        Ok(l) => l,
        Err(why) => {
            println!("bench: taskstats: cannot set up a listener: {why}");
            return;
        }
    };
    exit_row(h, "taskstats_exit", Life::Kthread, Some(&s));
    exit_row(h, "taskstats_exit_user", Life::User, Some(&s));

    let me = proc::current_ids().tid;
    get_parts(h, &s, family, me);
    let Ok(record) = acct::of_pid(me) else { return };
    let mut ticks = 0u64;
    for i in 0..DELIVERIES {
        let a = record.clone();
        let t0 = hal::tsc::read();
        crate::bus::deliver_exit(a.pid, &acct::Record(&a), None);
        ticks += hal::tsc::read() - t0;
        if i % 64 == 63 {
            drain(&s);
        }
    }
    h.report("taskstats_deliver", 1, DELIVERIES, ticks);
    let delivered = crate::bus::socket_stats(&s).map_or(0, |st| st.delivered);
    if delivered < DELIVERIES {
        println!("bench: taskstats_deliver: only {delivered} of {DELIVERIES} records delivered");
    }
}

/// `taskstats_get_parts` (see the module documentation).
fn get_parts(h: &mut Harness, s: &Socket, family: u16, me: i32) {
    const OPS: u64 = 2_000;
    drain(s);
    let Ok(req) = request(family, 4, 0, Command::Pid(me as u32)) else { return };
    h.measure("taskstats_get_parts", 0, OPS, |_| {
        let _ = core::hint::black_box(crate::acct::send(s, &req));
        let _ = core::hint::black_box(s.recv(true));
    });
    drain(s);
    let mut snapshot = tally_taskstats::TaskAccounting::default();
    h.measure("taskstats_get_parts", 1, OPS, |_| {
        let _ = core::hint::black_box(acct::of_pid_into(me, &mut snapshot));
    });
    let Ok(acct) = acct::of_pid(me) else { return };
    let clock = crate::base::time::clock();
    let mut image = [0u8; tally_taskstats::Taskstats::SIZE];
    h.measure("taskstats_get_parts", 2, OPS, |_| {
        image.fill(0); // as the reply's STATS attribute comes
        tally_taskstats::fill_into(&acct, &clock, 0, core::hint::black_box(&mut image));
    });
}
