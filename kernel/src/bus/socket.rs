//! A bus socket: one open file description (`crate::file`'s `OpenFile::Socket`), and
//! what a process does with it — bind, send requests, receive replies and exit records.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use tally_msgbus::taskstats::TaskstatsSource;
use tally_msgbus::{Sender, SockId};
use tally_runqueue::SleepKind;
use tally_sig::ERESTARTSYS;
use tally_uapi::errno::EAGAIN;

use super::{with_bus, State, READERS};
use crate::sched;
use crate::sync::WaitSet;

/// A bus socket: one open file description (`crate::file::OpenFile::Socket`).
pub struct Socket {
    id: SockId,
    /// `O_NONBLOCK` (`SOCK_NONBLOCK`, `fcntl(F_SETFL)`): `recv` fails with `EAGAIN` instead
    /// of sleeping.
    nonblock: AtomicBool,
}

impl Socket {
    /// `socket(domain, type, protocol)` for process `owner`.
    pub fn open(domain: u32, ty: u32, protocol: u32, nonblock: bool, owner: u32) -> Result<Socket, i32> {
        let id = with_bus(|s| s.bus.open(domain, ty, protocol, owner))?;
        Ok(Socket { id, nonblock: AtomicBool::new(nonblock) })
    }

    pub(super) fn id(&self) -> SockId {
        self.id
    }

    pub fn nonblock(&self) -> bool {
        self.nonblock.load(Ordering::Relaxed)
    }

    pub fn set_nonblock(&self, on: bool) {
        self.nonblock.store(on, Ordering::Relaxed);
    }

    pub fn bind(&self, portid: u32) -> Result<(), i32> {
        with_bus(|s| s.bus.bind(self.id, portid))
    }

    /// Hand the bus one or more messages from `sender`; replies are queued here. A request
    /// that needs the tasks' accounting (a taskstats GET) reads it from `source`.
    pub fn send(
        &self,
        bytes: &[u8],
        sender: Sender,
        source: &mut (dyn TaskstatsSource + 'static),
    ) -> Result<usize, i32> {
        let n = with_bus(|s| s.bus.send(self.id, bytes, sender, source))?;
        READERS.wake_all(); // replies may be waited for by another thread
        Ok(n)
    }

    /// One datagram; sleeps until one is queued unless `dontwait` (or the socket is
    /// non-blocking): `EAGAIN`. `ENOBUFS` once after a drop; `EINTR` if the process is killed.
    pub fn recv(&self, dontwait: bool) -> Result<Vec<u8>, i32> {
        loop {
            match with_bus(|s| s.bus.recv(self.id))? {
                Some(datagram) => return Ok(datagram),
                None if dontwait || self.nonblock() => return Err(EAGAIN),
                None => {}
            }
            // Wake for a datagram, or for a drop (the next recv reports ENOBUFS).
            let dropped = |s: &State| s.bus.socket_stats(self.id).map_or(0, |st| st.dropped);
            let dropped_before = with_bus(|s| dropped(s));
            READERS.wait_until(SleepKind::Interruptible, None, || {
                with_bus(|s| s.bus.has_data(self.id) || dropped(s) != dropped_before) || sched::interrupted()
            });
            if sched::interrupted() {
                return Err(ERESTARTSYS); // killed, or a signal: EINTR or a restart (SA_RESTART)
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

    /// `poll` on the socket: POLLIN when `recv` would not wait (a datagram, or `ENOBUFS`
    /// to report), POLLOUT always (a send never waits: the bus answers at once and drops
    /// what a full receive buffer cannot take). The readers' queue, which every delivery
    /// wakes, joins `set`.
    pub fn poll_ready(&self, set: &mut WaitSet<'_>) -> i16 {
        use tally_uapi::poll::{POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};
        let data = with_bus(|s| s.bus.has_data(self.id));
        set.add(&READERS);
        let input = if data { POLLIN | POLLRDNORM } else { 0 };
        input | POLLOUT | POLLWRNORM
    }

    pub fn set_rcvbuf(&self, bytes: u32) -> Result<(), i32> {
        with_bus(|s| s.bus.set_rcvbuf(self.id, bytes))
    }

    pub fn rcvbuf(&self) -> Result<u32, i32> {
        with_bus(|s| s.bus.rcvbuf(self.id))
    }

    /// The id of family `name`, asked of the controller as a user program asks
    /// (`CTRL_CMD_GETFAMILY`) on behalf of `sender`, for the kernel's own clients: the
    /// self-tests and benchmarks. The controller answers during `send`, so the reply is
    /// already queued: datagrams queued before it (exit records) are skipped.
    pub fn family_id(&self, name: &str, sender: Sender) -> Result<u16, i32> {
        let seq = 1;
        self.send(&tally_msgbus::ctrl::getfamily_request(seq, name)?, sender, &mut NoTasks)?;
        loop {
            let d = self.recv(true)?;
            if tally_msgbus::msg::first_message(&d).is_ok_and(|m| m.header.nlmsg_seq == seq && m.header.nlmsg_pid != 0)
            {
                return tally_msgbus::ctrl::parse_family_reply(&d).map(|f| f.id);
            }
        }
    }
}

impl Drop for Socket {
    /// Closing the socket drops its listener registrations (as Linux taskstats does: a
    /// socket closed without deregistering is cleaned up).
    fn drop(&mut self) {
        if let Err(e) = with_bus(|s| s.bus.close(self.id)) {
            log::warn!("bus: closing socket {:?}: errno {e}", self.id);
        }
    }
}

/// A source with no tasks, for requests that read none (the controller's GETFAMILY).
struct NoTasks;

impl TaskstatsSource for NoTasks {
    fn pid_stats(&mut self, _: u32, _: &mut tally_msgbus::taskstats::RecordOut<'_>) -> Result<(), i32> {
        Err(tally_uapi::errno::ESRCH)
    }

    fn tgid_stats(&mut self, _: u32, _: &mut tally_msgbus::taskstats::RecordOut<'_>) -> Result<(), i32> {
        Err(tally_uapi::errno::ESRCH)
    }
}
