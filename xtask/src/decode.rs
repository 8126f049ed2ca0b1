//! `cargo xtask decode FILE`: print a raw capture of bus datagrams as text.
//!
//! `getdelays -w /dev/ttyS1` writes every datagram it receives, byte for byte, to the
//! guest's second serial port; `cargo xtask run` (and a scenario with `capture_serial`)
//! attaches that port to a host file. Such a file is a run of netlink messages, each
//! `nlmsg_len` bytes and starting at the previous one's `NLMSG_ALIGN`ed end — exactly a
//! netlink receive buffer, so it is walked as the kernel walks one (`tally_msgbus::msg::Messages`).
//!
//! Every message gets a line starting with its byte offset in the file; a TASKSTATS record
//! (an exit record, kernel port 0, or a reply to a GET) is printed in full:
//!
//! ```text
//! offset 0: controller reply, seq 1: family TASKSTATS id 19 (0x13), version 1
//! offset 68: ack, seq 2
//! offset 88: exit record, seq 0, 1596 bytes
//!   pid 7 (spin): exit code 0 (exited with status 0), flags -, utime 99870 us, stime 312 us
//!     version 17, tgid 7, ppid 3, uid 0, nice 0, etime 101002 us
//!     delay            count         total ns           max ns           min ns  max at
//!     CPU                 12          1203455           301245             2113  2026-09-21T14:13:23.000000005Z
//!     IO                   0                0                0                0  -
//!     ...
//!     I/O: read_char 0, write_char 24, read_syscalls 0, write_syscalls 1, read_bytes 0, ...
//!     context switches: voluntary 1, nonvoluntary 12
//!     microstates (ms):
//!       ONCPU_USR                     99.870
//!       ...
//!   tgid 7 (spin): ...
//! 3 messages: 1 exit record (2 records), 0 replies, 0 error replies
//! ```
//!
//! Anything malformed — a cut or impossible frame, bad attributes, an AGGR nest without its
//! id or STATS, a STATS shorter than the version-13 structure — stops the decoding with
//! the byte offset where it went wrong ([`DecodeError`]); `cargo xtask decode` then exits
//! non-zero after printing what it decoded so far.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use tally_msgbus::attr::AttrIter;
use tally_msgbus::ctrl::parse_family_reply;
use tally_msgbus::msg::{FrameError, Messages, Msg};
use tally_msgbus::parse_taskstats_message;
use tally_msgbus::taskstats::{AggrKind, AggrRecord};
use tally_uapi::msa::MicroState;
use tally_uapi::netlink::{
    nla_align, GENL_HDRLEN, GENL_ID_CTRL, NLA_HDRLEN, NLMSG_DONE, NLMSG_ERROR, NLMSG_HDRLEN, NLMSG_MIN_TYPE,
    NLMSG_NOOP, NLMSG_OVERRUN,
};
use tally_uapi::taskstats::{
    KernelTimespec, Taskstats, ACOMPAT, ACORE, AFORK, AGROUP, ASU, AXSIG, TASKSTATS_CMD_NEW, TASKSTATS_GENL_NAME,
    TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_AGGR_TGID, TASKSTATS_V13_SIZE,
};

/// Where and why decoding stopped, with what was decoded before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset in the capture.
    pub offset: usize,
    pub what: String,
    /// The text of the messages before the bad one.
    pub partial: String,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "offset {}: {}", self.offset, self.what)
    }
}

/// `cargo xtask decode FILE`.
pub fn run(path: &Path) -> Result<ExitCode, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    match decode(&bytes) {
        Ok(text) => {
            print!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            print!("{}", e.partial);
            Err(format!("{}: malformed capture at {e}", path.display()))
        }
    }
}

/// Counts for the summary line.
#[derive(Default)]
struct Counts {
    messages: usize,
    exits: usize,
    records: usize,
    replies: usize,
    errors: usize,
}

/// Decodes a whole capture into text (see the module documentation).
pub fn decode(bytes: &[u8]) -> Result<String, DecodeError> {
    let mut out = String::new();
    let mut counts = Counts::default();
    // The TASKSTATS id, once a controller reply in the capture has named it; before that
    // any generic-netlink family that parses as TASKSTATS is taken as such.
    let mut family: Option<u16> = None;
    let mut it = Messages::new(bytes);
    loop {
        let offset = it.offset();
        let m = match it.next() {
            None => break,
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                let what = match e {
                    FrameError::Truncated { remaining, .. } => {
                        format!(
                            "{remaining} bytes left, too few for a {NLMSG_HDRLEN}-byte nlmsghdr (capture cut short?)"
                        )
                    }
                    FrameError::BadLength { header, .. } => format!(
                        "nlmsg_len {} is impossible here ({} bytes left, at least {NLMSG_HDRLEN} needed)",
                        header.nlmsg_len,
                        bytes.len() - offset
                    ),
                };
                let offset = match e {
                    FrameError::Truncated { offset, .. } | FrameError::BadLength { offset, .. } => offset,
                };
                return Err(DecodeError { offset, what, partial: out });
            }
        };
        counts.messages += 1;
        if let Err((at, what)) = message(&mut out, &mut counts, &mut family, offset, &m) {
            return Err(DecodeError { offset: at, what, partial: out });
        }
    }
    let _ = writeln!(
        out,
        "{} messages: {} exit records ({} records), {} replies, {} error replies",
        counts.messages, counts.exits, counts.records, counts.replies, counts.errors
    );
    Ok(out)
}

type Bad = (usize, String);

/// One message at `offset`.
fn message(
    out: &mut String,
    counts: &mut Counts,
    family: &mut Option<u16>,
    offset: usize,
    m: &Msg<'_>,
) -> Result<(), Bad> {
    let h = m.header;
    match h.nlmsg_type {
        NLMSG_ERROR => {
            let Some((errno, req)) = m.error() else {
                return Err((offset, format!("NLMSG_ERROR of {} bytes, too short for struct nlmsgerr", h.nlmsg_len)));
            };
            if errno == 0 {
                let _ = writeln!(out, "offset {offset}: ack, seq {}", req.nlmsg_seq);
            } else {
                counts.errors += 1;
                let _ = writeln!(
                    out,
                    "offset {offset}: error reply, seq {}: errno {errno} ({}) to a message of type {:#x}",
                    req.nlmsg_seq,
                    errno_name(errno),
                    req.nlmsg_type
                );
            }
            Ok(())
        }
        NLMSG_NOOP | NLMSG_DONE | NLMSG_OVERRUN => {
            let name = match h.nlmsg_type {
                NLMSG_NOOP => "NLMSG_NOOP",
                NLMSG_DONE => "NLMSG_DONE",
                _ => "NLMSG_OVERRUN",
            };
            let _ = writeln!(out, "offset {offset}: {name}, seq {}", h.nlmsg_seq);
            Ok(())
        }
        t if t < NLMSG_MIN_TYPE => {
            let _ = writeln!(out, "offset {offset}: control message of type {t:#x}, {} bytes (skipped)", h.nlmsg_len);
            Ok(())
        }
        GENL_ID_CTRL => {
            let f = parse_family_reply(m.bytes).map_err(|e| {
                (
                    bad_attr_offset(m, offset, false).unwrap_or(offset),
                    format!("controller message does not parse (errno {e})"),
                )
            })?;
            if f.name == TASKSTATS_GENL_NAME {
                *family = Some(f.id);
            }
            let _ = writeln!(
                out,
                "offset {offset}: controller reply, seq {}: family {} id {} ({:#x}), version {}",
                h.nlmsg_seq, f.name, f.id, f.id, f.version
            );
            Ok(())
        }
        t if family.is_some_and(|f| f != t) => {
            let _ = writeln!(
                out,
                "offset {offset}: message of family {t:#x} (not TASKSTATS), {} bytes (skipped)",
                h.nlmsg_len
            );
            Ok(())
        }
        _ => taskstats(out, counts, offset, m),
    }
}

/// A TASKSTATS message: every AGGR record in full.
fn taskstats(out: &mut String, counts: &mut Counts, offset: usize, m: &Msg<'_>) -> Result<(), Bad> {
    let h = m.header;
    let ts = parse_taskstats_message(m.bytes).map_err(|_| diagnose(m, offset))?;
    if ts.cmd != TASKSTATS_CMD_NEW {
        let _ =
            writeln!(out, "offset {offset}: TASKSTATS command {} (not NEW), {} bytes (skipped)", ts.cmd, h.nlmsg_len);
        return Ok(());
    }
    if h.nlmsg_pid == 0 {
        counts.exits += 1;
        let _ = writeln!(out, "offset {offset}: exit record, seq {}, {} bytes", h.nlmsg_seq, h.nlmsg_len);
    } else {
        counts.replies += 1;
        let _ =
            writeln!(out, "offset {offset}: reply, seq {}, port {}, {} bytes", h.nlmsg_seq, h.nlmsg_pid, h.nlmsg_len);
    }
    for r in &ts.records {
        counts.records += 1;
        let at = subslice_offset(m.bytes, r.stats).map_or(offset, |o| offset + o);
        record(out, r).map_err(|what| (at, what))?;
    }
    Ok(())
}

/// One AGGR_PID / AGGR_TGID record.
fn record(out: &mut String, r: &AggrRecord<'_>) -> Result<(), String> {
    let kind = if r.kind == AggrKind::Pid { "pid" } else { "tgid" };
    if r.stats.len() < TASKSTATS_V13_SIZE {
        return Err(format!(
            "{kind} {}: STATS of {} bytes, shorter than a version-13 struct taskstats ({TASKSTATS_V13_SIZE})",
            r.id,
            r.stats.len()
        ));
    }
    let t = Taskstats::from_bytes(r.stats).ok_or("STATS does not decode")?;
    let _ = writeln!(
        out,
        "  {kind} {} ({}): exit code {} ({}), flags {}, utime {} us, stime {} us",
        r.id,
        t.comm_str(),
        t.ac_exitcode,
        describe_status(t.ac_exitcode as i32),
        flags(t.ac_flag),
        t.ac_utime,
        t.ac_stime
    );
    let _ = writeln!(
        out,
        "    version {}, tgid {}, ppid {}, uid {}, nice {}, etime {} us, {} bytes of STATS",
        t.version,
        t.ac_tgid,
        t.ac_ppid,
        t.ac_uid,
        t.ac_nice as i8,
        t.ac_etime,
        r.stats.len()
    );
    let _ =
        writeln!(out, "    {:<10}{:>12}{:>17}{:>17}{:>17}  max at", "delay", "count", "total ns", "max ns", "min ns");
    let rows: [(&str, u64, u64, u64, u64, KernelTimespec); 8] = [
        ("CPU", t.cpu_count, t.cpu_delay_total, t.cpu_delay_max, t.cpu_delay_min, t.cpu_delay_max_ts),
        ("IO", t.blkio_count, t.blkio_delay_total, t.blkio_delay_max, t.blkio_delay_min, t.blkio_delay_max_ts),
        ("SWAP", t.swapin_count, t.swapin_delay_total, t.swapin_delay_max, t.swapin_delay_min, t.swapin_delay_max_ts),
        (
            "RECLAIM",
            t.freepages_count,
            t.freepages_delay_total,
            t.freepages_delay_max,
            t.freepages_delay_min,
            t.freepages_delay_max_ts,
        ),
        (
            "THRASHING",
            t.thrashing_count,
            t.thrashing_delay_total,
            t.thrashing_delay_max,
            t.thrashing_delay_min,
            t.thrashing_delay_max_ts,
        ),
        (
            "COMPACT",
            t.compact_count,
            t.compact_delay_total,
            t.compact_delay_max,
            t.compact_delay_min,
            t.compact_delay_max_ts,
        ),
        ("WPCOPY", t.wpcopy_count, t.wpcopy_delay_total, t.wpcopy_delay_max, t.wpcopy_delay_min, t.wpcopy_delay_max_ts),
        ("IRQ", t.irq_count, t.irq_delay_total, t.irq_delay_max, t.irq_delay_min, t.irq_delay_max_ts),
    ];
    for (name, count, total, max, min, ts) in rows {
        let at = if ts == KernelTimespec::ZERO { String::from("-") } else { utc(ts) };
        let _ = writeln!(out, "    {name:<10}{count:>12}{total:>17}{max:>17}{min:>17}  {at}");
    }
    let _ = writeln!(
        out,
        "    I/O: read_char {}, write_char {}, read_syscalls {}, write_syscalls {}, read_bytes {}, \
         write_bytes {}, cancelled_write_bytes {}",
        t.read_char,
        t.write_char,
        t.read_syscalls,
        t.write_syscalls,
        t.read_bytes,
        t.write_bytes,
        t.cancelled_write_bytes
    );
    let _ = writeln!(
        out,
        "    memory: minflt {}, majflt {}, hiwater_rss {} KB, hiwater_vm {} KB, coremem {} MB-us, virtmem {} MB-us",
        t.ac_minflt, t.ac_majflt, t.hiwater_rss, t.hiwater_vm, t.coremem, t.virtmem
    );
    let _ = writeln!(out, "    context switches: voluntary {}, nonvoluntary {}", t.nvcsw, t.nivcsw);
    if r.msa.is_some() {
        let _ = writeln!(out, "    microstates (ms):");
        for (i, ns) in r.msa_values().enumerate() {
            let name = MicroState::from_index(i).map_or_else(|| format!("STATE_{i}"), |s| s.name().to_string());
            let ms = format!("{}.{:03}", ns / 1_000_000, ns / 1000 % 1000);
            let _ = writeln!(out, "      {name:<24}{ms:>12}");
        }
    }
    Ok(())
}

/// Why a TASKSTATS message did not parse, and where: the first malformed attribute if
/// there is one, else the message (an AGGR nest missing its id or STATS, or repeating one;
/// a payload too short for the genl header).
fn diagnose(m: &Msg<'_>, offset: usize) -> Bad {
    if m.payload.len() < GENL_HDRLEN {
        return (offset, format!("message of {} bytes, too short for a genlmsghdr", m.header.nlmsg_len));
    }
    match bad_attr_offset(m, offset, true) {
        Some(at) => {
            (at, String::from("malformed attribute (nla_len below 4, past its message or nest, or a cut header)"))
        }
        None => (
            offset,
            String::from(
                "TASKSTATS message without a sound AGGR record \
                 (a nest lacks its PID/TGID or STATS, repeats one, or an id is not 4 bytes)",
            ),
        ),
    }
}

/// The offset of the first malformed attribute of `m` (at `offset` in the capture),
/// looking inside the AGGR nests too when `nests`.
fn bad_attr_offset(m: &Msg<'_>, offset: usize, nests: bool) -> Option<usize> {
    let run = m.payload.get(GENL_HDRLEN..)?;
    bad_attr_in(run, offset + NLMSG_HDRLEN + GENL_HDRLEN, nests)
}

fn bad_attr_in(run: &[u8], base: usize, nests: bool) -> Option<usize> {
    let mut pos = 0;
    for a in AttrIter::new(run) {
        let Ok(a) = a else { return Some(base + pos) };
        if nests && matches!(a.ty, TASKSTATS_TYPE_AGGR_PID | TASKSTATS_TYPE_AGGR_TGID) {
            if let Some(at) = bad_attr_in(a.payload, base + pos + NLA_HDRLEN, false) {
                return Some(at);
            }
        }
        pos += nla_align(a.payload.len() + NLA_HDRLEN);
    }
    None
}

/// Where `inner` starts inside `outer`, if it is a part of it.
fn subslice_offset(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let (o, i) = (outer.as_ptr() as usize, inner.as_ptr() as usize);
    (i >= o && i + inner.len() <= o + outer.len()).then(|| i - o)
}

/// A wall-clock time as `YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ` (UTC).
fn utc(ts: KernelTimespec) -> String {
    let (days, secs) = (ts.tv_sec.div_euclid(86_400), ts.tv_sec.rem_euclid(86_400));
    // Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:09}Z", secs / 3600, secs / 60 % 60, secs % 60, ts.tv_nsec)
}

/// A wait status in words.
fn describe_status(status: i32) -> String {
    use tally_uapi::wait::{wcoredump, wexitstatus, wifexited, wifsignaled, wtermsig};
    if wifexited(status) {
        format!("exited with status {}", wexitstatus(status))
    } else if wifsignaled(status) {
        format!("killed by signal {}{}", wtermsig(status), if wcoredump(status) { ", core flag" } else { "" })
    } else {
        format!("status {status:#x}")
    }
}

/// `ac_flag` as names, `-` when none is set.
fn flags(f: u8) -> String {
    const NAMES: [(u8, &str); 6] =
        [(AFORK, "AFORK"), (ASU, "ASU"), (ACOMPAT, "ACOMPAT"), (ACORE, "ACORE"), (AXSIG, "AXSIG"), (AGROUP, "AGROUP")];
    let mut parts: Vec<String> = NAMES.iter().filter(|(b, _)| f & b != 0).map(|(_, n)| n.to_string()).collect();
    let unknown = f & !NAMES.iter().fold(0, |a, (b, _)| a | b);
    if unknown != 0 {
        parts.push(format!("{unknown:#x}"));
    }
    if parts.is_empty() {
        String::from("-")
    } else {
        parts.join("|")
    }
}

fn errno_name(e: i32) -> &'static str {
    use tally_uapi::errno::*;
    match e {
        EPERM => "EPERM",
        ENOENT => "ENOENT",
        ESRCH => "ESRCH",
        E2BIG => "E2BIG",
        EINVAL => "EINVAL",
        EMSGSIZE => "EMSGSIZE",
        EOPNOTSUPP => "EOPNOTSUPP",
        ENOBUFS => "ENOBUFS",
        EADDRINUSE => "EADDRINUSE",
        _ => "?",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_msgbus::msg::{error_message, MsgBuilder};
    use tally_msgbus::{exit_message, StatsRecord};
    use tally_uapi::msa::NR_MICROSTATES;
    use tally_uapi::netlink::{
        NlMsgHdr, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME, CTRL_ATTR_VERSION, CTRL_CMD_NEWFAMILY,
    };
    use tally_uapi::taskstats::{TASKSTATS_VERSION, TS_COMM_LEN};

    const FAMILY: u16 = 0x13;

    fn stats(pid: u32, comm: &str, utime: u64) -> Taskstats {
        let mut c = [0u8; TS_COMM_LEN];
        c[..comm.len()].copy_from_slice(comm.as_bytes());
        Taskstats {
            version: TASKSTATS_VERSION,
            ac_exitcode: 3 << 8,
            ac_flag: AFORK,
            ac_comm: c,
            ac_pid: pid,
            ac_tgid: pid,
            ac_ppid: 1,
            ac_utime: utime,
            ac_stime: 250,
            cpu_count: 12,
            cpu_delay_total: 1_203_455,
            cpu_delay_max: 301_245,
            cpu_delay_min: 2113,
            cpu_delay_max_ts: KernelTimespec { tv_sec: 1_790_000_003, tv_nsec: 5 },
            write_char: 24,
            write_syscalls: 1,
            nvcsw: 1,
            nivcsw: 12,
            ..Taskstats::zeroed()
        }
    }

    fn rec(t: &Taskstats, msa: bool) -> StatsRecord {
        let msa_ns =
            msa.then(|| (0..NR_MICROSTATES as u64).flat_map(|i| ((i + 1) * 1_500_000).to_le_bytes()).collect());
        StatsRecord { stats: t.to_bytes().to_vec(), msa_ns }
    }

    fn exit(seq: u32, pid: u32, comm: &str, last: bool) -> Vec<u8> {
        let r = rec(&stats(pid, comm, 99_870), true);
        let mut g = stats(pid, comm, 199_000);
        g.ac_flag |= AGROUP;
        let gr = rec(&g, true);
        exit_message(FAMILY, seq, pid, &r, last.then_some((pid, &gr))).unwrap()
    }

    fn family_reply() -> Vec<u8> {
        let mut b = MsgBuilder::genl(GENL_ID_CTRL, 0, 1, 4000, CTRL_CMD_NEWFAMILY, 2);
        b.put_str(CTRL_ATTR_FAMILY_NAME, "TASKSTATS")
            .put_u16(CTRL_ATTR_FAMILY_ID, FAMILY)
            .put_u32(CTRL_ATTR_VERSION, 1);
        b.finish().unwrap()
    }

    fn in_order(text: &str, patterns: &[&str]) {
        let mut from = 0;
        for p in patterns {
            match text[from..].find(p) {
                Some(at) => from += at + p.len(),
                None => panic!("{p:?} missing (in order) from:\n{text}"),
            }
        }
    }

    #[test]
    fn decodes_a_capture_of_several_datagrams() {
        let mut cap = family_reply();
        let ack_at = cap.len();
        let req = NlMsgHdr { nlmsg_len: 32, nlmsg_type: FAMILY, nlmsg_flags: 5, nlmsg_seq: 2, nlmsg_pid: 0 };
        cap.extend(error_message(&req, None, 0, 4000));
        let first = cap.len();
        cap.extend(exit(1, 7, "threads", false));
        let second = cap.len();
        cap.extend(exit(2, 8, "spin", true));
        let text = decode(&cap).unwrap();
        in_order(
            &text,
            &[
                "offset 0: controller reply, seq 1: family TASKSTATS id 19 (0x13)",
                &format!("offset {ack_at}: ack, seq 2"),
                &format!("offset {first}: exit record, seq 1"),
                "pid 7 (threads): exit code 768 (exited with status 3), flags AFORK, utime 99870 us, stime 250 us",
                concat!(
                    "CPU                 12          1203455           301245             2113  ",
                    "2026-09-21T14:13:23.000000005Z"
                ),
                "IO                   0                0                0                0  -",
                "IRQ",
                "I/O: read_char 0, write_char 24, read_syscalls 0, write_syscalls 1",
                "context switches: voluntary 1, nonvoluntary 12",
                "microstates (ms):",
                &format!("      {:<24}{:>12}\n", "ONCPU_USR", "1.500"),
                &format!("      {:<24}{:>12}\n", "POLL_SLEEP", "19.500"),
                &format!("offset {second}: exit record, seq 2"),
                "pid 8 (spin)",
                "tgid 8 (spin): exit code 768 (exited with status 3), flags AFORK|AGROUP, utime 199000 us",
                "4 messages: 2 exit records (3 records), 0 replies, 0 error replies",
            ],
        );
        assert!(!text[first..].contains("tgid 7 ("), "no group record for a thread that was not last");
    }

    #[test]
    fn replies_errors_and_a_missing_final_pad() {
        let t = stats(5, "sh", 10);
        let mut b = MsgBuilder::genl(FAMILY, 0, 9, 4000, TASKSTATS_CMD_NEW, 1);
        b.nest_start(TASKSTATS_TYPE_AGGR_TGID)
            .put_u32(tally_uapi::taskstats::TASKSTATS_TYPE_TGID, 5)
            .put_bytes(tally_uapi::taskstats::TASKSTATS_TYPE_STATS, &t.to_bytes())
            .nest_end();
        let mut cap = b.finish().unwrap();
        let req = NlMsgHdr { nlmsg_len: 24, nlmsg_type: FAMILY, nlmsg_flags: 1, nlmsg_seq: 10, nlmsg_pid: 0 };
        let err_at = cap.len();
        cap.extend(error_message(&req, Some(&[1, 0, 0, 0, 0, 0, 0, 0]), 1, 4000));
        // A last message without its padding (nlmsg_len 17): still sound.
        let mut noop = NlMsgHdr { nlmsg_len: 17, nlmsg_type: NLMSG_NOOP, nlmsg_flags: 0, nlmsg_seq: 11, nlmsg_pid: 0 }
            .to_bytes()
            .to_vec();
        noop.push(0);
        let noop_at = cap.len();
        cap.extend(noop);
        let text = decode(&cap).unwrap();
        in_order(
            &text,
            &[
                "offset 0: reply, seq 9, port 4000",
                "tgid 5 (sh)",
                &format!("offset {err_at}: error reply, seq 10: errno 1 (EPERM)"),
                &format!("offset {noop_at}: NLMSG_NOOP, seq 11"),
                "3 messages: 0 exit records (1 records), 1 replies, 1 error replies",
            ],
        );
        assert!(!text.contains("microstates"), "no MSA attribute, no table");
        assert_eq!(decode(&[]).unwrap(), "0 messages: 0 exit records (0 records), 0 replies, 0 error replies\n");
    }

    #[test]
    fn a_cut_capture_names_the_offset_of_the_cut_message() {
        let mut cap = exit(1, 7, "spin", true);
        let second = cap.len();
        let next = exit(2, 8, "spin", true);
        cap.extend_from_slice(&next[..100]);
        let e = decode(&cap).unwrap_err();
        assert_eq!(e.offset, second);
        assert!(e.what.contains("nlmsg_len"), "{e}");
        assert!(e.partial.contains("pid 7 (spin)"), "what came before is kept");
        // Fewer bytes than a header.
        let mut cap = exit(1, 7, "spin", true);
        cap.extend_from_slice(&[1, 2, 3]);
        let e = decode(&cap).unwrap_err();
        assert_eq!(e.offset, second);
        assert!(e.what.contains("3 bytes left"), "{e}");
        // An impossible length (below a header).
        let mut bad = exit(1, 7, "spin", true);
        bad[0..4].copy_from_slice(&8u32.to_le_bytes());
        assert_eq!(decode(&bad).unwrap_err().offset, 0);
    }

    #[test]
    fn malformed_attributes_are_located() {
        let good = exit(1, 7, "spin", true);
        let mut cap = family_reply();
        let base = cap.len();
        // The first attribute is the AGGR_PID nest at base+20; its first child (PID) at
        // base+24. Give the PID attribute an nla_len of 2.
        let mut m = good.clone();
        assert_eq!(u16::from_le_bytes([m[22], m[23]]), TASKSTATS_TYPE_AGGR_PID);
        m[24..26].copy_from_slice(&2u16.to_le_bytes());
        cap.extend(&m);
        let e = decode(&cap).unwrap_err();
        assert_eq!(e.offset, base + 24, "{e}");
        assert!(e.what.contains("malformed attribute"), "{e}");
        assert!(e.partial.contains("family TASKSTATS"));
        // A nest whose length runs past its message.
        let mut m = good.clone();
        m[20..22].copy_from_slice(&0xfff0u16.to_le_bytes());
        assert_eq!(decode(&m).unwrap_err().offset, 20);
        // A nest without its STATS: the message's offset.
        let mut b = MsgBuilder::genl(FAMILY, 0, 1, 0, TASKSTATS_CMD_NEW, 1);
        b.nest_start(TASKSTATS_TYPE_AGGR_PID).put_u32(tally_uapi::taskstats::TASKSTATS_TYPE_PID, 3).nest_end();
        let mut cap = good.clone();
        let at = cap.len();
        cap.extend(b.finish().unwrap());
        let e = decode(&cap).unwrap_err();
        assert_eq!(e.offset, at);
        assert!(e.what.contains("lacks"), "{e}");
    }

    #[test]
    fn short_stats_are_refused_at_the_stats_attribute() {
        let r = StatsRecord { stats: vec![0u8; 100], msa_ns: None };
        let m = exit_message(FAMILY, 1, 7, &r, None).unwrap();
        let e = decode(&m).unwrap_err();
        // nlmsghdr 16 + genl 4 + AGGR header 4 + PID 8 + STATS header 4.
        assert_eq!(e.offset, 36, "{e}");
        assert!(e.what.contains("100 bytes"), "{e}");
        // An older (v13) record is fine: its tail reads as zero.
        let mut t = stats(7, "old", 1);
        t.version = 13;
        let r = StatsRecord { stats: t.to_bytes()[..TASKSTATS_V13_SIZE].to_vec(), msa_ns: None };
        let text = decode(&exit_message(FAMILY, 1, 7, &r, None).unwrap()).unwrap();
        assert!(text.contains("pid 7 (old)") && text.contains("version 13"), "{text}");
    }

    #[test]
    fn wall_clock_times_print_in_utc() {
        let t = |tv_sec| utc(KernelTimespec { tv_sec, tv_nsec: 7 });
        assert_eq!(t(0), "1970-01-01T00:00:00.000000007Z");
        assert_eq!(t(951_782_400), "2000-02-29T00:00:00.000000007Z");
        assert_eq!(t(1_795_301_572), "2026-11-21T22:52:52.000000007Z");
        assert_eq!(t(-1), "1969-12-31T23:59:59.000000007Z");
    }

    #[test]
    fn other_families_are_skipped_once_taskstats_is_known() {
        let mut cap = family_reply();
        let other = MsgBuilder::genl(0x20, 0, 1, 0, 1, 1).finish().unwrap();
        let at = cap.len();
        cap.extend(other);
        let text = decode(&cap).unwrap();
        assert!(text.contains(&format!("offset {at}: message of family 0x20 (not TASKSTATS)")), "{text}");
    }
}
