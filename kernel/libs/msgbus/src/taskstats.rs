//! # The TASKSTATS family: per-task accounting over the bus
//!
//! Linux's taskstats interface (`Documentation/accounting/taskstats.rst`) gives user programs
//! a task's accounting record in two ways, and Tally's family does both, with Linux's numbers
//! (`<linux/taskstats.h>`):
//!
//! **On request.** A `TASKSTATS_CMD_GET` carries one command attribute and is answered with
//! one `TASKSTATS_CMD_NEW`:
//!
//! ```text
//!   GET { CMD_ATTR_PID u32 }   →  NEW { AGGR_PID  { PID u32,  STATS, MSA } }
//!   GET { CMD_ATTR_TGID u32 }  →  NEW { AGGR_TGID { TGID u32, STATS, MSA } }
//!   GET { CMD_ATTR_REGISTER_CPUMASK "1-3,5" }    →  (nothing; an ack if NLM_F_ACK)
//!   GET { CMD_ATTR_DEREGISTER_CPUMASK "1-3,5" }  →  (nothing; an ack if NLM_F_ACK)
//! ```
//!
//! `STATS` is a `struct taskstats` and `MSA` (Tally's extension, type 0x4d) the microstate
//! clocks; both come from the kernel through [`TaskstatsSource`] and are opaque here. When
//! several command attributes are present, Linux's `taskstats_user_cmd()` order decides:
//! REGISTER, then DEREGISTER, then PID, then TGID; none of them → `EINVAL`. Attributes the
//! family does not know are ignored (Linux's legacy validation), but a known one of the
//! wrong size is `EINVAL`. The command is admin-only (`GENL_ADMIN_PERM`, as in Linux): the
//! bus answers `EPERM` to a uid other than 0.
//!
//! A cpumask longer than `TASKSTATS_CPUMASK_MAXLEN` bytes is `E2BIG` and an empty attribute
//! `EINVAL`, as Linux's `parse()`; the string itself is checked by [`crate::cpumask`].
//!
//! **At exit.** When a task exits on a CPU some socket listens to, the kernel sends every
//! such listener an [`exit_message`]: `NEW { AGGR_PID {...} }`, and when the task was the
//! last of its thread group also `AGGR_TGID {...}` with the group's totals. Its `nlmsg_pid`
//! is 0 (from the kernel) and its `seq` counts per CPU ([`crate::Bus::next_exit_seq`]).
//!
//! Nests are written without `NLA_F_NESTED` (Linux's `nla_nest_start_noflag`), because
//! `getdelays` compares `nla_type` with `TASKSTATS_TYPE_AGGR_PID` exactly.
//!
//! **Reading.** [`parse_taskstats_message`] is for user programs and host tools: it turns a
//! NEW message into its records, skipping attributes it does not know (the second way of
//! extending taskstats that Linux's documentation names, a new attribute beside `STATS`,
//! depends on readers doing so).

use alloc::vec::Vec;

use tally_uapi::msa::NR_MICROSTATES;
use tally_uapi::netlink::NlMsgHdr;
use tally_uapi::netlink::{GENL_ADMIN_PERM, GENL_HDRLEN, NLA_HDRLEN, NLMSG_HDRLEN, NLM_F_REQUEST};
use tally_uapi::taskstats::{
    Taskstats, AGROUP, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, TASKSTATS_CMD_ATTR_PID,
    TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, TASKSTATS_CMD_ATTR_TGID, TASKSTATS_CMD_GET, TASKSTATS_CMD_NEW,
    TASKSTATS_CPUMASK_MAXLEN, TASKSTATS_GENL_NAME, TASKSTATS_GENL_VERSION, TASKSTATS_TYPE_AGGR_PID,
    TASKSTATS_TYPE_AGGR_TGID, TASKSTATS_TYPE_MSA, TASKSTATS_TYPE_PID, TASKSTATS_TYPE_STATS, TASKSTATS_TYPE_TGID,
};

use crate::attr::Attr;
use crate::cpumask::parse_cpulist;
use crate::error::{E2BIG, EINVAL};
use crate::family::{Family, FamilyCx, GenlOp, Request};
use crate::msg::{first_message, MsgBuilder};

/// Where a record is written: straight into the `AGGR` nest of the message being built.
/// A writer ([`WriteRecord`], a [`TaskstatsSource`]) calls [`stats`](Self::stats) once, then
/// [`msa`](Self::msa) at most once; each hands it its attribute's payload, zeroed, to fill
/// in place — no image is built elsewhere and copied in.
pub struct RecordOut<'a> {
    b: &'a mut MsgBuilder,
    stats: u8,
    msa: u8,
}

impl RecordOut<'_> {
    /// The `TASKSTATS_TYPE_STATS` attribute: a `len`-byte `struct taskstats` image.
    pub fn stats(&mut self, len: usize, write: impl FnOnce(&mut [u8])) {
        self.stats = self.stats.saturating_add(1);
        self.b.put_with(TASKSTATS_TYPE_STATS, len, write);
    }

    /// The `TASKSTATS_TYPE_MSA` attribute: `len` bytes of microstate clocks.
    pub fn msa(&mut self, len: usize, write: impl FnOnce(&mut [u8])) {
        self.msa = self.msa.saturating_add(1);
        self.b.put_with(TASKSTATS_TYPE_MSA, len, write);
    }
}

/// A record that can write itself into a message ([`exit_message`]).
pub trait WriteRecord {
    fn write_record(&self, out: &mut RecordOut<'_>);
}

/// One accounting record as bytes already made (host tools, tests): written by copying.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatsRecord {
    /// The `struct taskstats` image (opaque to the bus).
    pub stats: Vec<u8>,
    /// The payload of the `TASKSTATS_TYPE_MSA` attribute, if the kernel has one.
    pub msa_ns: Option<Vec<u8>>,
}

impl WriteRecord for StatsRecord {
    fn write_record(&self, out: &mut RecordOut<'_>) {
        out.stats(self.stats.len(), |b| b.copy_from_slice(&self.stats));
        if let Some(msa) = &self.msa_ns {
            out.msa(msa.len(), |b| b.copy_from_slice(msa));
        }
    }
}

/// Where the TASKSTATS family gets its records: implemented by the kernel's environment.
/// Each method writes the record into `out` (see [`RecordOut`]) or fails.
pub trait TaskstatsSource {
    /// Per-pid record of a live (or zombie) task; `Err(ESRCH)` if none.
    fn pid_stats(&mut self, pid: u32, out: &mut RecordOut<'_>) -> Result<(), i32>;
    /// Per-tgid record: live threads + threads of that group that already exited.
    fn tgid_stats(&mut self, tgid: u32, out: &mut RecordOut<'_>) -> Result<(), i32>;
}

/// Which kind of AGGR nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggrKind {
    /// `TASKSTATS_TYPE_AGGR_PID`: one task.
    Pid,
    /// `TASKSTATS_TYPE_AGGR_TGID`: a thread group.
    Tgid,
}

impl AggrKind {
    /// The nest's attribute type and the id attribute's type inside it.
    pub fn types(self) -> (u16, u16) {
        match self {
            AggrKind::Pid => (TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID),
            AggrKind::Tgid => (TASKSTATS_TYPE_AGGR_TGID, TASKSTATS_TYPE_TGID),
        }
    }
}

/// Bytes of one `AGGR { ID, STATS, MSA }` nest when the record is a version-17 `struct
/// taskstats` and the 13 microstate clocks — what Tally's kernel sends. Messages are
/// allocated for this once; a larger record (a host tool's) just grows the vector.
pub const AGGR_LEN: usize = 3 * NLA_HDRLEN + 4 + Taskstats::SIZE + NLA_HDRLEN + 8 * NR_MICROSTATES;

/// A NEW message with `aggrs` AGGR nests of the usual size ([`AGGR_LEN`]).
const fn new_message_len(aggrs: usize) -> usize {
    NLMSG_HDRLEN + GENL_HDRLEN + aggrs * AGGR_LEN
}

/// The highest command attribute type (`TASKSTATS_CMD_ATTR_MAX` in Linux).
const TASKSTATS_CMD_ATTR_MAX: u16 = TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK;
// The handler takes the command attributes from `Request::last_attrs`, which is indexed by
// type, by position: PID, TGID, REGISTER_CPUMASK, DEREGISTER_CPUMASK are types 1 to 4.
const _: () = assert!(
    TASKSTATS_CMD_ATTR_PID == 1
        && TASKSTATS_CMD_ATTR_TGID == 2
        && TASKSTATS_CMD_ATTR_REGISTER_CPUMASK == 3
        && TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK == 4
);

const TASKSTATS_OPS: &[GenlOp] = &[GenlOp { cmd: TASKSTATS_CMD_GET, flags: GENL_ADMIN_PERM }];

/// The TASKSTATS family; register it with [`crate::Bus::register_family`].
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskstatsFamily;

impl TaskstatsFamily {
    pub fn new() -> Self {
        TaskstatsFamily
    }
}

/// Appends `AGGR { ID, STATS[, MSA] }` to `b`, the record written by `write`. `Err(EINVAL)`
/// if the writer did not write exactly one STATS and at most one MSA, or its own error.
fn put_aggr(
    b: &mut MsgBuilder,
    kind: AggrKind,
    id: u32,
    write: impl FnOnce(&mut RecordOut<'_>) -> Result<(), i32>,
) -> Result<(), i32> {
    let (nest, id_ty) = kind.types();
    b.nest_start(nest).put_u32(id_ty, id);
    let mut out = RecordOut { b, stats: 0, msa: 0 };
    write(&mut out)?;
    if out.stats != 1 || out.msa > 1 {
        return Err(EINVAL);
    }
    b.nest_end();
    Ok(())
}

/// The cpumask of a REGISTER/DEREGISTER attribute (Linux's `parse()`: longer than
/// `TASKSTATS_CPUMASK_MAXLEN` is `E2BIG`, empty `EINVAL`, then the cpulist rules).
fn cpumask_attr(a: &Attr<'_>, nr_cpus: u32) -> Result<u64, i32> {
    if a.payload.len() > TASKSTATS_CPUMASK_MAXLEN {
        return Err(E2BIG);
    }
    if a.payload.is_empty() {
        return Err(EINVAL);
    }
    parse_cpulist(a.payload, nr_cpus)
}

impl<E: TaskstatsSource + ?Sized> Family<E> for TaskstatsFamily {
    fn name(&self) -> &str {
        TASKSTATS_GENL_NAME
    }

    fn version(&self) -> u8 {
        TASKSTATS_GENL_VERSION
    }

    fn max_attr(&self) -> u16 {
        TASKSTATS_CMD_ATTR_MAX
    }

    fn ops(&self) -> &[GenlOp] {
        TASKSTATS_OPS
    }

    fn handle(&mut self, req: &Request<'_>, env: &mut E, cx: &mut FamilyCx<'_>) -> Result<(), i32> {
        let [_, pid, tgid, register, deregister] = req.last_attrs::<{ TASKSTATS_CMD_ATTR_MAX as usize + 1 }>();
        let pid = pid.map(|a| a.u32()).transpose()?;
        let tgid = tgid.map(|a| a.u32()).transpose()?;
        if let Some(a) = register {
            let mask = cpumask_attr(&a, cx.nr_cpus())?;
            return cx.register_listener(mask);
        }
        if let Some(a) = deregister {
            let mask = cpumask_attr(&a, cx.nr_cpus())?;
            return cx.deregister_listener(mask);
        }
        let mut b = cx.reply_with_capacity(TASKSTATS_CMD_NEW, new_message_len(1));
        match (pid, tgid) {
            (Some(pid), _) => put_aggr(&mut b, AggrKind::Pid, pid, |out| env.pid_stats(pid, out))?,
            (None, Some(tgid)) => put_aggr(&mut b, AggrKind::Tgid, tgid, |out| env.tgid_stats(tgid, out))?,
            (None, None) => return Err(EINVAL),
        }
        cx.send_reply(b)
    }
}

/// The message sent to listeners when task `pid` exits: `TASKSTATS_CMD_NEW` with
/// `AGGR_PID { PID, STATS, MSA }` and, when `tgid` is given (the last thread of its group
/// exited), `AGGR_TGID { TGID, STATS, MSA }`. `nlmsg_pid` is 0, `seq` as given (take it from
/// [`crate::Bus::next_exit_seq`]). `Err(EMSGSIZE)` if the records do not fit in a nest
/// (64 KiB).
pub fn exit_message<R: WriteRecord + ?Sized>(
    family: u16,
    seq: u32,
    pid: u32,
    pid_rec: &R,
    tgid: Option<(u32, &R)>,
) -> Result<Vec<u8>, i32> {
    exit_message_in(Vec::new(), family, seq, pid, pid_rec, tgid.map(|(t, r)| (t, GroupRecord::Own(r))))
}

/// The process's record in an exit message ([`exit_message_in`]).
pub enum GroupRecord<'a, R: ?Sized> {
    /// Its own record, written like the thread's.
    Own(&'a R),
    /// The process had one thread, the one that exited: its record is the thread's (the
    /// same identity, the same totals) with `AGROUP` in `ac_flag`, so the `AGGR_PID` nest
    /// just written is copied and its types, id and flag patched — not encoded a second
    /// time.
    ThreadsOwn,
}

/// Offsets inside an `AGGR { ID u32, STATS, ... }` nest as [`put_aggr`] writes it: the
/// nest's type, the id attribute's type and value, `ac_flag` in the STATS payload.
const NEST_TYPE_AT: usize = 2;
const ID_TYPE_AT: usize = NLA_HDRLEN + 2;
const ID_AT: usize = 2 * NLA_HDRLEN;
const STATS_LEN_AT: usize = ID_AT + 4;
const AC_FLAG_AT: usize = STATS_LEN_AT + NLA_HDRLEN + core::mem::offset_of!(Taskstats, ac_flag);

/// Appends a copy of the `AGGR_PID` nest at `pid_nest` as `AGGR_TGID` of `tgid`, `AGROUP`
/// added to its `struct taskstats` (`EINVAL` if its STATS is too short to have `ac_flag`).
fn put_group_copy(b: &mut MsgBuilder, pid_nest: core::ops::Range<usize>, tgid: u32) -> Result<(), i32> {
    let stats_len = b.bytes().get(pid_nest.start + STATS_LEN_AT..pid_nest.start + STATS_LEN_AT + 2);
    if stats_len.is_none_or(|l| usize::from(u16::from_le_bytes([l[0], l[1]])) <= AC_FLAG_AT - STATS_LEN_AT) {
        return Err(EINVAL);
    }
    let (nest, id_ty) = AggrKind::Tgid.types();
    let at = b.copy_within(pid_nest)?;
    b.patch(at + NEST_TYPE_AT, &nest.to_le_bytes());
    b.patch(at + ID_TYPE_AT, &id_ty.to_le_bytes());
    b.patch(at + ID_AT, &tgid.to_le_bytes());
    let flag = b.bytes().get(at + AC_FLAG_AT).copied().unwrap_or(0);
    b.patch(at + AC_FLAG_AT, &[flag | AGROUP]);
    Ok(())
}

/// [`exit_message`] built in `buf` (a buffer kept for reuse: [`crate::Bus::spare_buffer`]),
/// the process's record given as a [`GroupRecord`].
pub fn exit_message_in<R: WriteRecord + ?Sized>(
    buf: Vec<u8>,
    family: u16,
    seq: u32,
    pid: u32,
    pid_rec: &R,
    tgid: Option<(u32, GroupRecord<'_, R>)>,
) -> Result<Vec<u8>, i32> {
    let aggrs = if tgid.is_some() { 2 } else { 1 };
    let mut b =
        MsgBuilder::genl_in(buf, family, 0, seq, 0, TASKSTATS_CMD_NEW, TASKSTATS_GENL_VERSION, new_message_len(aggrs));
    let start = b.len();
    put_aggr(&mut b, AggrKind::Pid, pid, |out| {
        pid_rec.write_record(out);
        Ok(())
    })?;
    let pid_nest = start..b.len();
    match tgid {
        None => {}
        Some((tgid, GroupRecord::Own(rec))) => put_aggr(&mut b, AggrKind::Tgid, tgid, |out| {
            rec.write_record(out);
            Ok(())
        })?,
        Some((tgid, GroupRecord::ThreadsOwn)) => put_group_copy(&mut b, pid_nest, tgid)?,
    }
    b.finish()
}

/// A command for [`request`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    Pid(u32),
    Tgid(u32),
    /// A cpulist such as `"1-3,5"`; sent NUL-terminated, as `getdelays` does.
    RegisterCpumask(&'a str),
    DeregisterCpumask(&'a str),
}

/// A `TASKSTATS_CMD_GET` request to family id `family` (from the controller), with
/// `NLM_F_REQUEST` plus `extra_flags` (e.g. `NLM_F_ACK`).
pub fn request(family: u16, seq: u32, extra_flags: u16, cmd: Command<'_>) -> Result<Vec<u8>, i32> {
    let mut b =
        MsgBuilder::genl(family, NLM_F_REQUEST | extra_flags, seq, 0, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION);
    match cmd {
        Command::Pid(p) => b.put_u32(TASKSTATS_CMD_ATTR_PID, p),
        Command::Tgid(t) => b.put_u32(TASKSTATS_CMD_ATTR_TGID, t),
        Command::RegisterCpumask(m) => b.put_str(TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, m),
        Command::DeregisterCpumask(m) => b.put_str(TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, m),
    };
    b.finish()
}

/// One `AGGR_PID`/`AGGR_TGID` nest of a decoded message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AggrRecord<'a> {
    pub kind: AggrKind,
    /// The pid or tgid.
    pub id: u32,
    /// The `struct taskstats` bytes.
    pub stats: &'a [u8],
    /// The `TASKSTATS_TYPE_MSA` payload, if present.
    pub msa: Option<&'a [u8]>,
}

impl<'a> AggrRecord<'a> {
    /// The MSA payload as little-endian `u64` nanoseconds (a trailing partial word is
    /// ignored); empty if there is no MSA attribute.
    pub fn msa_values(&self) -> impl Iterator<Item = u64> + 'a {
        self.msa.unwrap_or(&[]).as_chunks::<8>().0.iter().map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            u64::from_le_bytes(w)
        })
    }
}

/// A decoded TASKSTATS message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskstatsMessage<'a> {
    pub header: NlMsgHdr,
    /// `genlmsghdr.cmd` (`TASKSTATS_CMD_NEW` for replies and exit records).
    pub cmd: u8,
    pub version: u8,
    /// The AGGR nests in message order.
    pub records: Vec<AggrRecord<'a>>,
}

impl<'a> TaskstatsMessage<'a> {
    /// The first per-task record.
    pub fn pid(&self) -> Option<&AggrRecord<'a>> {
        self.records.iter().find(|r| r.kind == AggrKind::Pid)
    }

    /// The first per-thread-group record.
    pub fn tgid(&self) -> Option<&AggrRecord<'a>> {
        self.records.iter().find(|r| r.kind == AggrKind::Tgid)
    }
}

/// Decodes the first message of `bytes` (use [`crate::msg::Messages`] for a buffer of
/// several). An `NLMSG_ERROR` carrying an error gives `Err(errno)` — so
/// `parse_taskstats_message(&reply)?` reports a failed GET directly; an ack or anything
/// malformed (bad frame, no genl header, bad attributes, an AGGR nest without its id or
/// STATS, a second id or STATS in one nest) is `Err(EINVAL)`. The family id is not checked
/// (compare `header.nlmsg_type` with the controller's answer). Unknown attributes are
/// skipped, at the top level and inside the nests.
pub fn parse_taskstats_message(bytes: &[u8]) -> Result<TaskstatsMessage<'_>, i32> {
    let m = first_message(bytes)?;
    if let Some((e, _)) = m.error() {
        return Err(if e > 0 { e } else { EINVAL });
    }
    let (g, _) = m.genl()?;
    let mut records = Vec::new();
    for a in m.attrs(0)? {
        let a = a?;
        let kind = match a.ty {
            TASKSTATS_TYPE_AGGR_PID => AggrKind::Pid,
            TASKSTATS_TYPE_AGGR_TGID => AggrKind::Tgid,
            _ => continue,
        };
        let (_, id_ty) = kind.types();
        let (mut id, mut stats, mut msa) = (None, None, None);
        for inner in a.nested() {
            let inner = inner?;
            let slot_taken = match inner.ty {
                t if t == id_ty => id.replace(inner.u32()?).is_some(),
                TASKSTATS_TYPE_STATS => stats.replace(inner.payload).is_some(),
                TASKSTATS_TYPE_MSA => msa.replace(inner.payload).is_some(),
                _ => false,
            };
            if slot_taken {
                return Err(EINVAL);
            }
        }
        records.push(AggrRecord { kind, id: id.ok_or(EINVAL)?, stats: stats.ok_or(EINVAL)?, msa });
    }
    Ok(TaskstatsMessage { header: m.header, cmd: g.cmd, version: g.version, records })
}
