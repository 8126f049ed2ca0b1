//! `getdelays` — per-task and per-process delay accounting over the TASKSTATS bus, in the
//! manner of Linux's `tools/accounting/getdelays.c`.
//!
//! ```text
//! getdelays [-dilqvM] [-w logfile] [-r bufsize] [-m cpumask] [-n count] [-t tgid] [-p pid] [-c cmd [args...]]
//! ```
//!
//! The program is a client of the kernel's message bus (`tally-msgbus`, framed like Linux
//! generic netlink, as Linux taskstats is). Everything it does is a message:
//!
//! 1. It opens `socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC)` (with `-r`, sets `SO_RCVBUF`
//!    first), binds it, and asks the controller (`CTRL_CMD_GETFAMILY "TASKSTATS"`) for the
//!    family's id: ids are handed out at registration, so it is never hard-coded.
//! 2. `-p PID` / `-t TGID` send `TASKSTATS_CMD_GET { PID | TGID }` and print the one
//!    `TASKSTATS_CMD_NEW` that answers. An `NLMSG_ERROR` answer (`EPERM` for a user other
//!    than root, `ESRCH` for an unknown id) prints `getdelays: error reply: errno N (NAME)`
//!    and exits 1.
//! 3. `-m CPUMASK` registers the socket as a *listener* for the tasks exiting on those CPUs
//!    (a cpulist, "0" on Tally's one CPU; sent with `NLM_F_ACK`, so a refusal is reported
//!    before anything else happens) and deregisters it at the end. Every exit then brings
//!    a datagram with `AGGR_PID { PID, STATS, MSA }` and, for the last thread of a process,
//!    `AGGR_TGID { TGID, STATS, MSA }`. Without `-l` the first exit record ends the program
//!    (Linux's behaviour); `-l` listens forever — or, a Tally addition so that scripts and
//!    tests end, until `-n COUNT` exit records have arrived (`-n` implies `-l`; `-l` alone
//!    listens on cpumask "0"). Records dropped for lack of buffer never arrive, so they do
//!    not count: after an `ENOBUFS` a `-n` listener waits for more exits.
//! 4. `-c CMD ARGS...` (the rest of the line) runs a command and prints its exit record.
//!    As in Linux, the child must not be reaped before its record is out — a reaped task's
//!    statistics are gone. So getdelays registers for cpumask "0" (or `-m`'s) *first*,
//!    spawns the child, reads exit records until the child's arrive (its `AGGR_PID`, and the
//!    `AGGR_TGID` that closes the process), prints them, and only then `wait4`s it. If a
//!    record is lost to `ENOBUFS` meanwhile and the child is already a zombie (its
//!    `proc_stat` state) — after reading what is still queued, without waiting, in case the
//!    child's record is there — the zombie's statistics are asked for with a GET instead.
//!    A GET whose reply may have been dropped is asked again (a few times).
//! 5. On a failed `recv` — where a listener learns that the kernel dropped records because
//!    its receive buffer was full — it prints Linux's `nonfatal reply error: errno 105` and
//!    reads on. Listening modes end with `getdelays: received N exit records, M ENOBUFS`.
//!
//! What is printed for each record (`AGGR_PID` or `AGGR_TGID` nest):
//!
//! ```text
//! PID	4                                                   (TGID for a process record)
//! comm spin, tgid 4, ppid 3, uid 0, nice 0, exitcode 0 (exited with status 0), flags -, utime 105441 us, stime 10451 us
//!
//!
//! CPU                 count     real total  virtual total    delay total  delay average      delay max      delay min      delay max timestamp
//!                         1      115892734      115892734        2216553          2.217ms     2.216553ms     2.216553ms    2026-11-21T22:52:51
//! IO                  count    delay total  delay average      delay max      delay min      delay max timestamp
//!                         0              0          0.000ms     0.000000ms     0.000000ms                    N/A
//! ...                                        (SWAP, RECLAIM, THRASHING, COMPACT, WPCOPY, IRQ: -d)
//! spin: read=0, write=0, cancelled_write=0                                (-i, Linux's line)
//! spin: read_char=0, write_char=62, read_syscalls=0, write_syscalls=1    (-i)
//!
//!
//! Task         voluntary   nonvoluntary                                   (-q)
//!                      0              0
//! microstate                         ms                                   (-M)
//! ONCPU_USR                     105.441
//! ...
//! total                         118.109
//! ```
//!
//! The delay rows follow the record's `version` as Linux does (max/min from v16, the
//! timestamp of the max from v17, COMPACT from v11, WPCOPY v13, IRQ v14). The timestamp is
//! the wall-clock time at which the longest delay ended, printed in UTC (Tally has no time
//! zone; Linux prints local time), "N/A" when no delay of that kind happened.
//!
//! `-w FILE` writes every datagram received, byte for byte, to FILE (Linux writes only the
//! STATS payloads), opened as Linux's getdelays does (`O_WRONLY | O_CREAT | O_TRUNC`): on
//! Tally either `/dev/ttyS1`, the second serial port, which `cargo xtask run` attaches to a
//! host file, and `cargo xtask decode FILE` prints, or a file on `/var`.
//! `-v` prints each message's headers.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::{self, Write};

use tally_msgbus::ctrl::{getfamily_request, parse_family_reply};
use tally_msgbus::msg::{Messages, Msg};
use tally_msgbus::parse_taskstats_message;
use tally_msgbus::taskstats::{request, AggrKind, AggrRecord, Command, TaskstatsMessage};
use tally_rt::process::{describe, parse_i64, spawn_command};
use tally_rt::uapi::errno::{EAGAIN, EINTR, ENOBUFS};
use tally_rt::uapi::msa::MicroState;
use tally_rt::uapi::netlink::{
    AF_NETLINK, GENL_ID_CTRL, MSG_DONTWAIT, MSG_TRUNC, NETLINK_GENERIC, NLMSG_ERROR, NLMSG_MIN_TYPE, NLM_F_ACK,
    SOCK_RAW, SOL_SOCKET, SO_RCVBUF,
};
use tally_rt::uapi::procstat::ProcStat;
use tally_rt::uapi::taskstats::{
    KernelTimespec, Taskstats, ACOMPAT, ACORE, AFORK, AGROUP, ASU, AXSIG, TASKSTATS_CMD_NEW, TASKSTATS_GENL_NAME,
    TASKSTATS_V13_SIZE,
};
use tally_rt::{eprintln, print, println, sys, Errno};

tally_rt::entry!(main);

/// The receive buffer: a datagram with both records is under 2 KiB; anything longer than
/// this is reported as truncated (Linux's `MAX_MSG_SIZE` message).
const RECV_BUF: usize = 16 * 1024;
/// The cpumask `-c` and a lone `-l` listen on: Tally's one CPU.
const DEFAULT_MASK: &str = "0";
/// How many times `-p`/`-t` ask when their reply may have been dropped (`ENOBUFS`).
const QUERY_TRIES: usize = 5;
/// Exit status for a bad command line.
const USAGE_STATUS: i32 = 2;

const USAGE: &str = "\
usage: getdelays [-dilqvM] [-w logfile] [-r bufsize] [-m cpumask] [-n count] [-t tgid] [-p pid] [-c cmd [args...]]
  -d: print delayacct stats
  -i: print IO accounting
  -q: print context switch counts (voluntary, nonvoluntary)
  -M: print microstates (the TASKSTATS_TYPE_MSA attribute)
  -l: listen forever (for exit records; cpumask 0 unless -m)
  -n: stop listening after count exit records (implies -l)
  -m: register a listener for the CPUs in cpumask (e.g. 0); deregistered at the end
  -r: set the socket's receive buffer (SO_RCVBUF) to bufsize bytes
  -w: write every datagram received, byte for byte, to logfile (e.g. /dev/ttyS1)
  -t: print the statistics of thread group tgid
  -p: print the statistics of task pid
  -c: run cmd with args (the rest of the line) and print its exit record
  -v: debug on";

/// The command line, parsed.
#[derive(Default)]
struct Opts {
    delays: bool,
    io: bool,
    ctxsw: bool,
    msa: bool,
    debug: bool,
    listen: bool,
    count: Option<u64>,
    logfile: Option<&'static str>,
    rcvbuf: Option<i32>,
    cpumask: Option<&'static str>,
    /// `-p` / `-t`: what to ask for.
    target: Option<Command<'static>>,
    /// `-c`: the command and its arguments.
    command: Vec<&'static str>,
}

/// Parses the arguments as Linux's `getopt(argc, argv, "qdiw:r:m:t:p:vlc:")` would (plus
/// `M` and `n:`): flags may be grouped (`-dq`), an option's value may be attached (`-p7`)
/// or the next argument; `-c` takes the rest of the line as the command. `Err` carries the
/// message to print before the usage.
fn parse_args() -> Result<Opts, String> {
    let mut o = Opts::default();
    let args: Vec<&'static str> = tally_rt::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) else {
            return Err(format!("unexpected argument {a:?}"));
        };
        let chars = flags.char_indices();
        for (at, c) in chars {
            let attached = &flags[at + c.len_utf8()..];
            let takes_value = matches!(c, 'w' | 'r' | 'm' | 'n' | 't' | 'p' | 'c');
            if !takes_value {
                match c {
                    'd' => {
                        println!("print delayacct stats ON");
                        o.delays = true;
                    }
                    'i' => {
                        println!("printing IO accounting");
                        o.io = true;
                    }
                    'q' => {
                        println!("printing task/process context switch rates");
                        o.ctxsw = true;
                    }
                    'M' => {
                        println!("printing microstates");
                        o.msa = true;
                    }
                    'v' => {
                        println!("debug on");
                        o.debug = true;
                    }
                    'l' => {
                        println!("listen forever");
                        o.listen = true;
                    }
                    _ => return Err(format!("unknown option -{c}")),
                }
                continue;
            }
            // The value: the rest of this argument, or the next one.
            let value = if attached.is_empty() {
                let v = args.get(i).copied().ok_or_else(|| format!("option -{c} needs a value"))?;
                i += 1;
                v
            } else {
                attached
            };
            match c {
                'w' => {
                    println!("write to file {value}");
                    o.logfile = Some(value);
                }
                'r' => {
                    let n = parse_i64(value).and_then(|n| i32::try_from(n).ok());
                    match n {
                        Some(n) if n >= 0 => {
                            println!("receive buf size {n}");
                            o.rcvbuf = Some(n);
                        }
                        _ => return Err(String::from("Invalid rcv buf size")),
                    }
                }
                'm' => {
                    println!("cpumask {value} maskset 1");
                    o.cpumask = Some(value);
                }
                'n' => match parse_i64(value) {
                    Some(n) if n > 0 => {
                        o.count = Some(n as u64);
                        o.listen = true;
                    }
                    _ => return Err(format!("Invalid count {value:?}")),
                },
                't' | 'p' => {
                    let id = parse_i64(value).and_then(|n| u32::try_from(n).ok()).filter(|&n| n != 0);
                    let Some(id) = id else {
                        return Err(String::from(if c == 't' { "Invalid tgid" } else { "Invalid pid" }));
                    };
                    o.target = Some(if c == 't' { Command::Tgid(id) } else { Command::Pid(id) });
                }
                _ => {
                    // 'c': the command, then everything after it on the line.
                    o.command.push(value);
                    o.command.extend_from_slice(&args[i..]);
                    i = args.len();
                }
            }
            break; // the value used up the rest of this argument
        }
    }
    if o.target.is_some() && !o.command.is_empty() {
        return Err(String::from("Select either -p/-t or -c, not both"));
    }
    if o.target.is_none() && o.command.is_empty() && o.cpumask.is_none() && !o.listen {
        return Err(String::from("nothing to do: give -p, -t, -c, -m or -l"));
    }
    Ok(o)
}

fn main() -> i32 {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(why) => {
            eprintln!("getdelays: {why}");
            eprintln!("{USAGE}");
            return USAGE_STATUS;
        }
    };
    let mut s = match Session::open(opts) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let code = s.run();
    s.finish();
    code
}

/// How the receive side saw one `recv`.
enum Got {
    /// A datagram (its bytes).
    Data(Vec<u8>),
    /// A failed `recv` that the program reads on after (`ENOBUFS`, a cut datagram).
    Nonfatal,
}

/// The socket, the family, and the counters of one run.
struct Session {
    opts: Opts,
    fd: usize,
    family: u16,
    seq: u32,
    log_fd: Option<usize>,
    buf: Vec<u8>,
    /// The cpumask registered, to deregister at the end.
    registered: Option<&'static str>,
    exit_records: u64,
    enobufs: u64,
}

impl Session {
    /// Socket, `SO_RCVBUF`, bind, the `-w` file, the family id. `Err(status)` after
    /// printing why.
    fn open(opts: Opts) -> Result<Session, i32> {
        let fd = match sys::socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC) {
            Ok(fd) => fd,
            Err(e) => {
                eprintln!("error creating Netlink socket: {e}");
                return Err(1);
            }
        };
        let mut s = Session {
            opts,
            fd,
            family: 0,
            seq: 0,
            log_fd: None,
            buf: vec![0u8; RECV_BUF],
            registered: None,
            exit_records: 0,
            enobufs: 0,
        };
        if let Some(n) = s.opts.rcvbuf {
            if let Err(e) = sys::setsockopt_int(fd, SOL_SOCKET, SO_RCVBUF, n) {
                eprintln!("Unable to set socket rcv buf size to {n}: {e}");
                let _ = sys::close(fd);
                return Err(1);
            }
            if s.opts.debug {
                match sys::getsockopt_int(fd, SOL_SOCKET, SO_RCVBUF) {
                    Ok(v) => println!("SO_RCVBUF now {v}"),
                    Err(e) => println!("getsockopt SO_RCVBUF: {e}"),
                }
            }
        }
        if let Err(e) = sys::bind_netlink(fd, 0) {
            eprintln!("error binding Netlink socket: {e}");
            let _ = sys::close(fd);
            return Err(1);
        }
        if let Some(path) = s.opts.logfile {
            // As Linux's getdelays: `open(logfile, O_WRONLY | O_CREAT | O_TRUNC, 0644)`.
            use tally_rt::uapi::fs::{O_CREAT, O_TRUNC, O_WRONLY};
            match sys::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644) {
                Ok(lfd) => s.log_fd = Some(lfd),
                Err(e) => {
                    eprintln!("Cannot open output file {path}: {e}");
                    let _ = sys::close(fd);
                    return Err(1);
                }
            }
        }
        match s.get_family_id() {
            Ok(id) => {
                s.family = id;
                s.debug(format_args!("family id {id}"));
                Ok(s)
            }
            Err(e) => {
                eprintln!("Error getting family id, errno {}", e.0);
                s.finish();
                Err(1)
            }
        }
    }

    fn debug(&self, args: fmt::Arguments<'_>) {
        if self.opts.debug {
            println!("{args}");
        }
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    fn send(&mut self, what: &str, bytes: Result<Vec<u8>, i32>) -> Result<(), Errno> {
        let bytes = bytes.map_err(Errno)?;
        let r = sys::send(self.fd, &bytes);
        self.debug(format_args!("Sent {what}, retval {}", r.map_or_else(|e| -e.0 as isize, |n| n as isize)));
        r.map(|_| ())
    }

    /// One `recv`: writes the datagram to the `-w` file, prints headers with `-v`. A
    /// failure the program reads on after is printed and counted here.
    fn receive(&mut self) -> Result<Got, Errno> {
        self.receive_flags(0)
    }

    /// [`receive`](Self::receive) with `recvfrom` flags (`MSG_DONTWAIT`: `EAGAIN` when
    /// nothing is queued).
    fn receive_flags(&mut self, flags: u32) -> Result<Got, Errno> {
        let n = match sys::recv(self.fd, &mut self.buf, MSG_TRUNC | flags) {
            Ok(n) => n,
            Err(Errno(e)) if e == ENOBUFS => {
                self.enobufs += 1;
                eprintln!("nonfatal reply error: errno {e}");
                return Ok(Got::Nonfatal);
            }
            Err(e) => return Err(e),
        };
        let got = n.min(self.buf.len());
        self.debug(format_args!("received {n} bytes"));
        if let Some(lfd) = self.log_fd {
            if let Err(e) = sys::write_all(lfd, &self.buf[..got]) {
                eprintln!("write error: {e}");
                self.finish();
                sys::exit_group(1);
            }
        }
        if n > self.buf.len() {
            eprintln!("dropped truncated taskstats netlink message, please increase MAX_MSG_SIZE");
            return Ok(Got::Nonfatal);
        }
        let data = self.buf[..got].to_vec();
        if self.opts.debug {
            for m in Messages::new(&data) {
                match m {
                    Ok(m) => print_headers(&m),
                    Err(e) => println!("bad frame: {e:?}"),
                }
            }
        }
        Ok(Got::Data(data))
    }

    /// `CTRL_CMD_GETFAMILY "TASKSTATS"` and the id from the answer.
    fn get_family_id(&mut self) -> Result<u16, Errno> {
        let seq = self.next_seq();
        self.send("GETFAMILY", getfamily_request(seq, TASKSTATS_GENL_NAME))?;
        loop {
            let Got::Data(d) = self.receive()? else { continue };
            for m in Messages::new(&d).flatten() {
                let answers = m.header.nlmsg_seq == seq
                    && (m.header.nlmsg_type == GENL_ID_CTRL || m.header.nlmsg_type == NLMSG_ERROR);
                if answers {
                    return parse_family_reply(m.bytes).map(|f| f.id).map_err(Errno);
                }
            }
        }
    }

    /// Sends a TASKSTATS request with `NLM_F_ACK` and waits for its acknowledgement,
    /// handling exit records that arrive first.
    fn request_acked(&mut self, what: &str, cmd: Command<'_>) -> Result<(), Errno> {
        let seq = self.next_seq();
        self.send(what, request(self.family, seq, NLM_F_ACK, cmd))?;
        loop {
            let Got::Data(d) = self.receive()? else { continue };
            for m in Messages::new(&d).flatten() {
                if let Some((e, req)) = m.error() {
                    if req.nlmsg_seq == seq {
                        return if e == 0 { Ok(()) } else { Err(Errno(e)) };
                    }
                    continue;
                }
                self.other_message(&m);
            }
        }
    }

    /// A message that is not what the caller waits for: an exit record is counted (and
    /// printed when listening); anything else is shown with `-v` only.
    fn other_message(&mut self, m: &Msg<'_>) {
        if let Some(ts) = self.exit_record(m) {
            if self.opts.listen {
                print_message(&self.opts, &ts, true);
            }
        }
    }

    /// Decodes `m` if it is an exit record (a TASKSTATS NEW from the kernel, port 0) and
    /// counts it.
    fn exit_record<'a>(&mut self, m: &Msg<'a>) -> Option<TaskstatsMessage<'a>> {
        if m.header.nlmsg_type != self.family || m.header.nlmsg_pid != 0 {
            return None;
        }
        match parse_taskstats_message(m.bytes) {
            Ok(ts) if ts.cmd == TASKSTATS_CMD_NEW => {
                self.exit_records += 1;
                Some(ts)
            }
            Ok(_) => None,
            Err(e) => {
                eprintln!("getdelays: malformed exit record (seq {}): {}", m.header.nlmsg_seq, ErrName(e));
                None
            }
        }
    }

    fn run(&mut self) -> i32 {
        // A listener is needed for -m, -l and -c; -c and a lone -l use CPU 0.
        let mask = self.opts.cpumask.or((self.opts.listen || !self.opts.command.is_empty()).then_some(DEFAULT_MASK));
        if let Some(mask) = mask {
            match self.request_acked("register cpumask", Command::RegisterCpumask(mask)) {
                Ok(()) => self.registered = Some(mask),
                Err(e) => {
                    eprintln!("getdelays: error reply: errno {} ({})", e.0, ErrName(e.0));
                    return 1;
                }
            }
        }
        if !self.opts.command.is_empty() {
            if let Err(code) = self.run_command() {
                return code;
            }
        }
        if let Some(target) = self.opts.target {
            if let Err(code) = self.query(target) {
                return code;
            }
        }
        let only_mask = self.opts.target.is_none() && self.opts.command.is_empty();
        if self.opts.listen || only_mask {
            return self.listen();
        }
        0
    }

    /// `-p`/`-t`: one GET, one reply. A failed `recv` (`ENOBUFS`) may have been the reply
    /// itself, dropped: then the question is asked again (a few times), and a reply to any
    /// of the tries is the answer.
    fn query(&mut self, target: Command<'static>) -> Result<(), i32> {
        let what = if matches!(target, Command::Pid(_)) { "pid" } else { "tgid" };
        let mut first = None;
        for _ in 0..QUERY_TRIES {
            let seq = self.next_seq();
            let first = *first.get_or_insert(seq);
            if let Err(e) = self.send(what, request(self.family, seq, 0, target)) {
                eprintln!("error sending tid/tgid cmd: {e}");
                return Err(1);
            }
            'replies: loop {
                let d = match self.receive() {
                    Ok(Got::Data(d)) => d,
                    Ok(Got::Nonfatal) => break 'replies,
                    Err(e) => {
                        eprintln!("nonfatal reply error: errno {}", e.0);
                        return Err(1);
                    }
                };
                for m in Messages::new(&d).flatten() {
                    let ours = m.header.nlmsg_pid != 0 && (first..=seq).contains(&m.header.nlmsg_seq);
                    if !ours {
                        self.other_message(&m);
                        continue;
                    }
                    match parse_taskstats_message(m.bytes) {
                        Ok(ts) => {
                            print_message(&self.opts, &ts, false);
                            return Ok(());
                        }
                        Err(e) => {
                            eprintln!("getdelays: error reply: errno {e} ({})", ErrName(e));
                            return Err(1);
                        }
                    }
                }
            }
        }
        eprintln!("getdelays: no reply to the {what} request after {QUERY_TRIES} tries (receive buffer overflowing?)");
        Err(1)
    }

    /// `-c`: spawn, wait for the child's exit records, print them, then reap it.
    fn run_command(&mut self) -> Result<(), i32> {
        let cmd = self.opts.command.clone();
        let pid = match spawn_command(&cmd) {
            Ok(pid) => pid as u32,
            Err(e) => {
                eprintln!("getdelays: spawn {}: {e}", cmd[0]);
                return Err(1);
            }
        };
        self.debug(format_args!("spawned {} as pid {pid}", cmd[0]));
        loop {
            match self.receive() {
                Ok(Got::Data(d)) => {
                    if self.child_datagram(&d, pid) {
                        break;
                    }
                }
                Ok(Got::Nonfatal) => {
                    // Records were dropped, maybe the child's. What is still queued is read
                    // first (the child's may be there); if it is not, and the child is
                    // already a zombie, its record is gone: ask for the zombie's statistics.
                    if self.drain_for_child(pid) {
                        break;
                    }
                    if child_is_zombie(pid) {
                        eprintln!("getdelays: pid {pid}'s exit record was lost; asking for the zombie's statistics");
                        self.query(Command::Tgid(pid))?;
                        break;
                    }
                }
                Err(e) => {
                    eprintln!("nonfatal reply error: errno {}", e.0);
                    return Err(1);
                }
            }
        }
        let mut status = 0;
        match sys::wait4(pid as isize, Some(&mut status), 0, None) {
            Ok(_) => println!("getdelays: pid {pid} ({}) {}", Joined(&cmd), describe(status)),
            Err(e) => eprintln!("getdelays: wait4({pid}): {e}"),
        }
        Ok(())
    }

    /// The exit records of one datagram while `-c` waits for child `pid`: the child's (and
    /// its threads') are printed, others only when listening. True once the record that
    /// closes the child's process (`AGGR_TGID` with its pid) was seen.
    fn child_datagram(&mut self, d: &[u8], pid: u32) -> bool {
        let mut done = false;
        for m in Messages::new(d).flatten() {
            let Some(ts) = self.exit_record(&m) else { continue };
            if self.opts.listen || ts.records.iter().any(|r| record_of_process(r, pid)) {
                print_message(&self.opts, &ts, true);
            }
            done |= ts.records.iter().any(|r| r.kind == AggrKind::Tgid && r.id == pid);
        }
        done
    }

    /// Reads what is queued without waiting, as [`child_datagram`](Self::child_datagram);
    /// true if the child's last record was among it.
    fn drain_for_child(&mut self, pid: u32) -> bool {
        loop {
            match self.receive_flags(MSG_DONTWAIT) {
                Ok(Got::Data(d)) => {
                    if self.child_datagram(&d, pid) {
                        return true;
                    }
                }
                Ok(Got::Nonfatal) => {}
                Err(Errno(e)) if e == EAGAIN => return false,
                Err(e) => {
                    eprintln!("nonfatal reply error: errno {}", e.0);
                    return false;
                }
            }
        }
    }

    /// `-l`/`-m`: exit records until `-n COUNT` (or one, without `-l`; or forever).
    fn listen(&mut self) -> i32 {
        let limit = match (self.opts.count, self.opts.listen) {
            (Some(n), _) => Some(n),
            (None, true) => None,
            (None, false) => Some(self.exit_records.saturating_add(1)),
        };
        loop {
            if limit.is_some_and(|n| self.exit_records >= n) {
                return 0;
            }
            let d = match self.receive() {
                Ok(Got::Data(d)) => d,
                Ok(Got::Nonfatal) => continue,
                Err(e) if e.0 == EINTR => {
                    eprintln!("nonfatal reply error: errno {}", e.0);
                    continue;
                }
                Err(e) => {
                    eprintln!("getdelays: recv: {e}");
                    return 1;
                }
            };
            for m in Messages::new(&d).flatten() {
                if let Some((e, _)) = m.error() {
                    if e != 0 {
                        eprintln!("getdelays: error reply: errno {e} ({})", ErrName(e));
                        return 1;
                    }
                    continue;
                }
                if let Some(ts) = self.exit_record(&m) {
                    print_message(&self.opts, &ts, true);
                }
            }
        }
    }

    /// Deregisters (as Linux's `done()`), prints the summary of a listener, closes.
    fn finish(&mut self) {
        if let Some(mask) = self.registered.take() {
            let seq = self.next_seq();
            let r = request(self.family, seq, 0, Command::DeregisterCpumask(mask))
                .map_err(Errno)
                .and_then(|b| sys::send(self.fd, &b));
            println!("Sent deregister mask, retval {}", r.map_or_else(|e| -e.0 as isize, |_| 0));
            println!("getdelays: received {} exit records, {} ENOBUFS", self.exit_records, self.enobufs);
        }
        if let Some(lfd) = self.log_fd.take() {
            let _ = sys::close(lfd);
        }
        let _ = sys::close(self.fd);
    }
}

/// Is record `r` about process `pid`: the process itself, its main thread, or one of its
/// threads (whose STATS name it as their thread group)?
fn record_of_process(r: &AggrRecord<'_>, pid: u32) -> bool {
    r.id == pid || Taskstats::from_bytes(r.stats).is_some_and(|t| t.ac_tgid == pid)
}

/// Is `pid` a zombie now (`proc_stat`: state 1, and no live thread left in its group)?
fn child_is_zombie(pid: u32) -> bool {
    let Ok(all) = sys::proc_stat_all() else { return false };
    let group: Vec<&ProcStat> = all.iter().filter(|p| p.tgid as u32 == pid).collect();
    !group.is_empty() && group.iter().all(|p| p.state == 1)
}

/// `-v`: the headers of one message.
fn print_headers(m: &Msg<'_>) {
    let h = &m.header;
    println!(
        "nlmsghdr size=16, nlmsg_len={}, type={:#x}, flags={:#x}, seq={}, pid={}",
        h.nlmsg_len, h.nlmsg_type, h.nlmsg_flags, h.nlmsg_seq, h.nlmsg_pid
    );
    if let Some((e, req)) = m.error() {
        println!("nlmsgerr error={} (request seq {}, type {:#x})", -e, req.nlmsg_seq, req.nlmsg_type);
    } else if h.nlmsg_type >= NLMSG_MIN_TYPE {
        if let Ok((g, _)) = m.genl() {
            println!("genlmsghdr cmd={} version={}", g.cmd, g.version);
        }
    }
}

/// Prints every record of a TASKSTATS message, each in one `print!` (so another
/// program's output cannot land in the middle of a table).
fn print_message(o: &Opts, ts: &TaskstatsMessage<'_>, exiting: bool) {
    for r in &ts.records {
        let mut out = String::new();
        let _ = format_record(&mut out, o, r, exiting);
        print!("{out}");
    }
}

fn format_record(out: &mut String, o: &Opts, r: &AggrRecord<'_>, exiting: bool) -> fmt::Result {
    writeln!(out, "{}\t{}", if r.kind == AggrKind::Pid { "PID" } else { "TGID" }, r.id)?;
    if r.stats.len() < TASKSTATS_V13_SIZE {
        return writeln!(out, "getdelays: STATS of {} bytes, shorter than a version 13 record", r.stats.len());
    }
    let Some(t) = Taskstats::from_bytes(r.stats) else { return Ok(()) };
    if o.debug {
        writeln!(out, "version {}", t.version)?;
    }
    // `ac_nice` is `task_nice()` stored in a u8 (Linux's layout): -5 arrives as 251.
    write!(
        out,
        "comm {}, tgid {}, ppid {}, uid {}, nice {}, exitcode {}",
        t.comm_str(),
        t.ac_tgid,
        t.ac_ppid,
        t.ac_uid,
        t.ac_nice as i8,
        t.ac_exitcode
    )?;
    if exiting {
        write!(out, " ({})", describe(t.ac_exitcode as i32))?;
    }
    writeln!(out, ", flags {}, utime {} us, stime {} us", Flags(t.ac_flag), t.ac_utime, t.ac_stime)?;
    if o.delays {
        format_delays(out, &t)?;
    }
    if o.io {
        let c = t.comm_str();
        writeln!(
            out,
            "{c}: read={}, write={}, cancelled_write={}",
            t.read_bytes, t.write_bytes, t.cancelled_write_bytes
        )?;
        writeln!(
            out,
            "{c}: read_char={}, write_char={}, read_syscalls={}, write_syscalls={}",
            t.read_char, t.write_char, t.read_syscalls, t.write_syscalls
        )?;
    }
    if o.ctxsw {
        write!(out, "\n\nTask   {:>15}{:>15}\n       {:>15}{:>15}\n", "voluntary", "nonvoluntary", t.nvcsw, t.nivcsw)?;
    }
    if o.msa {
        format_msa(out, r)?;
    }
    Ok(())
}

/// One kind of delay: its row name, the first version that has it, and its fields.
struct DelayRow {
    name: &'static str,
    since: u16,
    count: u64,
    total: u64,
    max: u64,
    min: u64,
    max_ts: KernelTimespec,
}

/// Linux's `print_delayacct`: the CPU row (with the run times), then the other kinds.
fn format_delays(out: &mut String, t: &Taskstats) -> fmt::Result {
    let v = t.version;
    out.push_str("\n\n");
    // CPU.
    write!(
        out,
        "{:<10}{:>15}{:>15}{:>15}{:>15}{:>15}",
        "CPU", "count", "real total", "virtual total", "delay total", "delay average"
    )?;
    if v >= 16 {
        write!(out, "{:>15}{:>15}", "delay max", "delay min")?;
    }
    if v >= 17 {
        write!(out, "{:>25}", "delay max timestamp")?;
    }
    writeln!(out)?;
    write!(
        out,
        "          {:>15}{:>15}{:>15}{:>15}{:>15}ms",
        t.cpu_count,
        t.cpu_run_real_total,
        t.cpu_run_virtual_total,
        t.cpu_delay_total,
        AvgMs(t.cpu_delay_total, t.cpu_count)
    )?;
    if v >= 16 {
        write!(out, "{:>13}ms{:>13}ms", Ms6(t.cpu_delay_max), Ms6(t.cpu_delay_min))?;
    }
    if v >= 17 {
        write!(out, "{:>23}", Stamp(t.cpu_delay_max_ts))?;
    }
    writeln!(out)?;
    let rows = [
        DelayRow {
            name: "IO",
            since: 0,
            count: t.blkio_count,
            total: t.blkio_delay_total,
            max: t.blkio_delay_max,
            min: t.blkio_delay_min,
            max_ts: t.blkio_delay_max_ts,
        },
        DelayRow {
            name: "SWAP",
            since: 0,
            count: t.swapin_count,
            total: t.swapin_delay_total,
            max: t.swapin_delay_max,
            min: t.swapin_delay_min,
            max_ts: t.swapin_delay_max_ts,
        },
        DelayRow {
            name: "RECLAIM",
            since: 0,
            count: t.freepages_count,
            total: t.freepages_delay_total,
            max: t.freepages_delay_max,
            min: t.freepages_delay_min,
            max_ts: t.freepages_delay_max_ts,
        },
        DelayRow {
            name: "THRASHING",
            since: 0,
            count: t.thrashing_count,
            total: t.thrashing_delay_total,
            max: t.thrashing_delay_max,
            min: t.thrashing_delay_min,
            max_ts: t.thrashing_delay_max_ts,
        },
        DelayRow {
            name: "COMPACT",
            since: 11,
            count: t.compact_count,
            total: t.compact_delay_total,
            max: t.compact_delay_max,
            min: t.compact_delay_min,
            max_ts: t.compact_delay_max_ts,
        },
        DelayRow {
            name: "WPCOPY",
            since: 13,
            count: t.wpcopy_count,
            total: t.wpcopy_delay_total,
            max: t.wpcopy_delay_max,
            min: t.wpcopy_delay_min,
            max_ts: t.wpcopy_delay_max_ts,
        },
        DelayRow {
            name: "IRQ",
            since: 14,
            count: t.irq_count,
            total: t.irq_delay_total,
            max: t.irq_delay_max,
            min: t.irq_delay_min,
            max_ts: t.irq_delay_max_ts,
        },
    ];
    for r in rows.iter().filter(|r| v >= r.since) {
        write!(out, "{:<10}{:>15}{:>15}{:>15}", r.name, "count", "delay total", "delay average")?;
        if v >= 16 {
            write!(out, "{:>15}{:>15}", "delay max", "delay min")?;
        }
        if v >= 17 {
            write!(out, "{:>25}", "delay max timestamp")?;
        }
        writeln!(out)?;
        write!(out, "          {:>15}{:>15}{:>15}ms", r.count, r.total, AvgMs(r.total, r.count))?;
        if v >= 16 {
            write!(out, "{:>13}ms{:>13}ms", Ms6(r.max), Ms6(r.min))?;
        }
        if v >= 17 {
            write!(out, "{:>23}", Stamp(r.max_ts))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// `-M`: the MSA attribute as a table of milliseconds, in `msa()` order.
fn format_msa(out: &mut String, r: &AggrRecord<'_>) -> fmt::Result {
    if r.msa.is_none() {
        return writeln!(out, "no microstates in this record (no TASKSTATS_TYPE_MSA attribute)");
    }
    writeln!(out, "{:<24} {:>12}", "microstate", "ms")?;
    let mut total: u64 = 0;
    for (i, ns) in r.msa_values().enumerate() {
        total = total.saturating_add(ns);
        match MicroState::from_index(i) {
            Some(s) => writeln!(out, "{:<24} {:>12}", s.name(), Ms3(ns))?,
            None => writeln!(out, "{:<24} {:>12}", format!("STATE_{i}"), Ms3(ns))?,
        }
    }
    writeln!(out, "{:<24} {:>12}", "total", Ms3(total))
}

/// Nanoseconds as milliseconds with six decimals, exactly (Linux's `%.6f` of ns / 1e6).
struct Ms6(u64);

impl fmt::Display for Ms6 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!("{}.{:06}", self.0 / 1_000_000, self.0 % 1_000_000))
    }
}

/// Nanoseconds as milliseconds with three decimals, truncated (as `msa` prints them).
struct Ms3(u64);

impl fmt::Display for Ms3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!("{}.{:03}", self.0 / 1_000_000, self.0 / 1000 % 1000))
    }
}

/// Linux's `average_ms(total, count)` printed `%.3f`: total / count in ms, rounded to the
/// microsecond; a count of 0 divides by 1.
struct AvgMs(u64, u64);

impl fmt::Display for AvgMs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = u128::from(self.1.max(1));
        let us = (u128::from(self.0) + c * 500) / (c * 1000);
        f.pad(&format!("{}.{:03}", us / 1000, us % 1000))
    }
}

/// A wall-clock `__kernel_timespec` as `YYYY-MM-DDTHH:MM:SS` (UTC), "N/A" when zero.
struct Stamp(KernelTimespec);

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        if t.tv_sec == 0 && t.tv_nsec == 0 {
            return f.pad("N/A");
        }
        let (days, secs) = (t.tv_sec.div_euclid(86_400), t.tv_sec.rem_euclid(86_400));
        let (y, m, d) = civil_from_days(days);
        f.pad(&format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60))
    }
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// `ac_flag` as names (`AFORK|AGROUP`), "-" when none is set.
struct Flags(u8);

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(u8, &str); 6] = [
            (AFORK, "AFORK"),
            (ASU, "ASU"),
            (ACOMPAT, "ACOMPAT"),
            (ACORE, "ACORE"),
            (AXSIG, "AXSIG"),
            (AGROUP, "AGROUP"),
        ];
        if self.0 == 0 {
            return f.write_str("-");
        }
        let mut first = true;
        for (bit, name) in NAMES {
            if self.0 & bit != 0 {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        let unknown = self.0 & !(AFORK | ASU | ACOMPAT | ACORE | AXSIG | AGROUP);
        if unknown != 0 {
            write!(f, "{}{unknown:#x}", if first { "" } else { "|" })?;
        }
        Ok(())
    }
}

/// An errno's symbolic name (`tally_rt` names every errno the bus hands out).
struct ErrName(i32);

impl fmt::Display for ErrName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Errno(self.0).name().unwrap_or("unknown"))
    }
}

/// The command line, words separated by spaces.
struct Joined<'a>(&'a [&'a str]);

impl fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, w) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(w)?;
        }
        Ok(())
    }
}
