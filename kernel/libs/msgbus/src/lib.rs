//! # tally-msgbus — the kernel's message bus, framed like Linux generic netlink
//!
//! User programs talk to some kernel services by *messages* rather than system calls of
//! their own: they open a socket, send a request, and read the answer — and some answers
//! arrive unasked, like the accounting record of every task that exits. Linux does this with
//! netlink sockets, and Tally's bus frames its messages exactly like Linux's *generic
//! netlink*, so Linux's documentation, `<linux/netlink.h>` and programs such as `getdelays`
//! describe it byte for byte.
//!
//! The crate is the bus's logic, kept out of the kernel so it can be tested on the host: the
//! kernel holds one [`Bus`] (its `bus` floor) and its system calls call it, passing their
//! view of the tasks as an environment `E` when a request needs it. Read it in this order,
//! one concept per file:
//!
//! 1. [`attr`] — attributes, the type-length-value records carrying every argument;
//! 2. [`msg`] — messages: `nlmsghdr` + `genlmsghdr` + attributes, building and reading them,
//!    and the `NLMSG_ERROR` replies;
//! 3. [`cpumask`] — the "1-3,5,7-8" CPU lists listeners register with;
//! 4. [`socket`] — a socket's receive queue, its buffer limit, and what happens when a reader
//!    cannot keep up (drops, counted, reported once as `ENOBUFS`);
//! 5. [`family`] — what a service ("family") implements, and what it may do while handling;
//! 6. [`bus`] — sockets, port ids, the dispatch of each message, listeners and multicast;
//! 7. [`ctrl`] — the controller, which turns a family's name into its id;
//! 8. [`taskstats`] — the TASKSTATS family: per-task and per-process accounting records on
//!    request and at exit;
//! 9. [`error`] — the errno values and where each comes from.
//!
//! A request's life: the program sends `GETFAMILY "TASKSTATS"` to the controller and learns
//! the id; sends `TASKSTATS_CMD_GET { PID 42 }` to that id; [`Bus::send`] parses the frame,
//! finds the family, checks the command and the sender's rights, validates the attributes
//! and calls [`TaskstatsFamily`]'s handler, which has the environment write the record
//! straight into a `TASKSTATS_CMD_NEW` reply and queues it on the socket; [`Bus::recv`]
//! hands it to the program (and [`Bus::recycle`] takes its buffer back for the next reply).
//!
//! No input can make the bus panic: every length read from a message is checked, arithmetic
//! is checked or saturating, and allocation is bounded by the caller's limits (the send size,
//! the receive buffers), never by a length field. The property tests in `tests/` feed it
//! random and mutilated messages. The crate is `no_std` with `alloc`, for the kernel and for
//! user programs alike (they use [`msg`], [`ctrl`] and [`taskstats`] to build requests and
//! decode replies).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod attr;
pub mod bus;
pub mod cpumask;
pub mod ctrl;
pub mod error;
pub mod family;
pub mod msg;
pub mod socket;
pub mod taskstats;

pub use bus::{Bus, BusStats, Delivery, SockId, SockList, MAX_SEND, MAX_SOCKETS};
pub use ctrl::Controller;
pub use family::{Family, FamilyCx, FamilyInfo, GenlOp, Request, Sender};
pub use msg::MsgBuilder;
pub use socket::SocketStats;
pub use taskstats::{
    exit_message, exit_message_in, parse_taskstats_message, GroupRecord, RecordOut, StatsRecord, TaskstatsFamily,
    TaskstatsMessage, TaskstatsSource, WriteRecord,
};

#[cfg(test)]
mod tests;
