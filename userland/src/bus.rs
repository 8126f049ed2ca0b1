//! # A client of the kernel's message bus
//!
//! The bus is framed like Linux generic netlink (`tally-msgbus`, docs/taskstats.md): a program
//! opens `socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC)`, binds it, asks the controller
//! for a family's id by name, then sends requests and reads answers and exit records.
//! [`BusSocket`] is that much, for the programs that only ask questions (`tscheck`,
//! `busfuzz`, `ubench tsget`). `getdelays` keeps its own loop: it logs every datagram it
//! receives (`-w`) and prints headers (`-v`), which this client does not.
//!
//! A request is matched to its answer by sequence number: exit records (from port 0, seq
//! of the exit counter) and answers to earlier requests that arrive meanwhile are skipped
//! and counted in [`BusSocket::skipped`].

use alloc::vec;
use alloc::vec::Vec;

use tally_msgbus::ctrl::{getfamily_request, parse_family_reply};
use tally_msgbus::msg::Messages;
use tally_msgbus::taskstats::{parse_taskstats_message, request, Command, TaskstatsMessage};
use tally_uapi::errno::EPROTO;
use tally_uapi::netlink::{AF_NETLINK, NETLINK_GENERIC, NLM_F_ACK, SOCK_RAW};
use tally_uapi::taskstats::TASKSTATS_GENL_NAME;

use crate::{sys, Errno};

/// Bytes one `recv` can take: a datagram with both records of an exit is under 2 KiB.
const RECV_BUF: usize = 16 * 1024;

/// A bound bus socket, closed when dropped.
pub struct BusSocket {
    fd: usize,
    seq: u32,
    buf: Vec<u8>,
    /// Messages received while waiting for an answer that were not it (exit records,
    /// answers to older requests).
    pub skipped: u64,
}

impl BusSocket {
    /// `socket` + `bind(portid 0)` (the kernel picks the port).
    pub fn open() -> Result<BusSocket, Errno> {
        let fd = sys::socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC)?;
        let s = BusSocket { fd, seq: 0, buf: vec![0; RECV_BUF], skipped: 0 };
        sys::bind_netlink(fd, 0)?;
        Ok(s)
    }

    /// The descriptor (for `setsockopt`, or to send bytes this client would not build).
    pub fn fd(&self) -> usize {
        self.fd
    }

    /// A fresh sequence number for the next request.
    pub fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// One `recv` (with `recvfrom` flags): the datagram's bytes, in this socket's buffer.
    pub fn recv(&mut self, flags: u32) -> Result<&[u8], Errno> {
        let n = sys::recv(self.fd, &mut self.buf, flags)?;
        Ok(&self.buf[..n.min(RECV_BUF)])
    }

    /// Sends `bytes`, a request carrying sequence number `seq`, and waits for the first
    /// message that answers it (same seq, from the kernel to this port). Returns its bytes
    /// (a reply or an acknowledgement), or the errno of an `NLMSG_ERROR` answer. A failed
    /// `recv` (`ENOBUFS`: something was dropped, perhaps the answer) is returned as is.
    pub fn transact(&mut self, bytes: &[u8], seq: u32) -> Result<Vec<u8>, Errno> {
        sys::send(self.fd, bytes)?;
        loop {
            let n = sys::recv(self.fd, &mut self.buf, 0)?.min(RECV_BUF);
            for m in Messages::new(&self.buf[..n]).flatten() {
                if m.header.nlmsg_seq != seq || m.header.nlmsg_pid == 0 {
                    self.skipped += 1;
                    continue;
                }
                return match m.error() {
                    Some((e, _)) if e != 0 => Err(Errno(e)),
                    _ => Ok(m.bytes.to_vec()),
                };
            }
        }
    }

    /// The id of family `name` (`CTRL_CMD_GETFAMILY`).
    pub fn family_id(&mut self, name: &str) -> Result<u16, Errno> {
        let seq = self.next_seq();
        let req = getfamily_request(seq, name).map_err(Errno)?;
        let reply = self.transact(&req, seq)?;
        parse_family_reply(&reply).map(|f| f.id).map_err(Errno)
    }

    /// The TASKSTATS family's id.
    pub fn taskstats_family(&mut self) -> Result<u16, Errno> {
        self.family_id(TASKSTATS_GENL_NAME)
    }

    /// A TASKSTATS command to `family`, answered: the raw reply (parse it with
    /// [`parse_reply`]), or the error.
    pub fn taskstats(&mut self, family: u16, cmd: Command<'_>) -> Result<Vec<u8>, Errno> {
        let seq = self.next_seq();
        let req = request(family, seq, 0, cmd).map_err(Errno)?;
        self.transact(&req, seq)
    }

    /// A TASKSTATS command sent with `NLM_F_ACK`: `Ok` once acknowledged.
    pub fn taskstats_acked(&mut self, family: u16, cmd: Command<'_>) -> Result<(), Errno> {
        let seq = self.next_seq();
        let req = request(family, seq, NLM_F_ACK, cmd).map_err(Errno)?;
        self.transact(&req, seq).map(|_| ())
    }
}

impl Drop for BusSocket {
    fn drop(&mut self) {
        let _ = sys::close(self.fd);
    }
}

/// A TASKSTATS answer's records (`EPROTO` if it does not parse).
pub fn parse_reply(bytes: &[u8]) -> Result<TaskstatsMessage<'_>, Errno> {
    parse_taskstats_message(bytes).map_err(|_| Errno(EPROTO))
}
