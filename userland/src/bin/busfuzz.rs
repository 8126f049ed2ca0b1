//! `busfuzz SEED COUNT` — sends COUNT malformed or hostile messages to the kernel's
//! message bus and checks, all along, that correct requests are still answered correctly.
//!
//! The bus parser is fuzzed on the host (proptest, `kernel/libs/msgbus`); this is the same idea
//! from ring 3, through the real system calls, against the running kernel. Each message is
//! one of ten kinds (chosen by a generator seeded with SEED, so a run is reproducible):
//!
//! | kind          | what it is                                                              |
//! |---------------|-------------------------------------------------------------------------|
//! | `random`      | 0-160 random bytes                                                      |
//! | `truncated`   | a correct GET cut short, inside a header or an attribute                |
//! | `bad_len`     | a correct GET whose `nlmsg_len` is changed: too short, too long, huge   |
//! | `bad_attr`    | attribute lengths below 4, past the end, nests overflowing their parent |
//! | `unknown`     | unknown commands, attribute types, families, genl versions              |
//! | `cpumask`     | REGISTER/DEREGISTER with masks like "3-1", "0-4294967295", "", "1,,2"   |
//! | `flipped`     | a correct request with 1-4 random bytes changed                         |
//! | `control`     | NOOP/ERROR/DONE/OVERRUN types, a request without `NLM_F_REQUEST`        |
//! | `batch`       | several messages in one datagram, the last one truncated                |
//! | `valid`       | a well-formed GET of a random pid or tgid (mostly `ESRCH`)              |
//!
//! After each send, whatever the kernel queued in answer is read without waiting and
//! counted (error replies by errno). Every 50 messages, and at the end, a correct
//! `GET PID` of this process must come back as a record of this pid, and the controller
//! must still resolve "TASKSTATS" to the same id: otherwise the run fails. The summary
//! (`busfuzz: ok ...`, status 0) says how many messages of each kind went out, how the
//! kernel refused them (`sendto` errors, error replies) and how many checks passed. The
//! kernel's own count of what it refused is the `bus:0:genetlink` kstat
//! (`kstat -p bus:0:genetlink`).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use tally_msgbus::msg::{Messages, MsgBuilder};
use tally_msgbus::taskstats::{request, AggrKind, Command};
use tally_rt::bus::{parse_reply, BusSocket};
use tally_rt::process::parse_u64;
use tally_rt::rand::SplitMix64;
use tally_rt::uapi::errno::EAGAIN;
use tally_rt::uapi::netlink::*;
use tally_rt::uapi::taskstats::*;
use tally_rt::{eprintln, println, sys, Errno};

tally_rt::entry!(main);

const KINDS: [&str; 10] =
    ["random", "truncated", "bad_len", "bad_attr", "unknown", "cpumask", "flipped", "control", "batch", "valid"];
/// A correct request is checked after this many garbage messages.
const CHECK_EVERY: u64 = 50;
/// Garbage sequence numbers have the top bit set, the checks' never do.
const GARBAGE_SEQ: u32 = 1 << 31;

fn main() -> i32 {
    let (Some(seed), Some(count)) = (tally_rt::arg(1).and_then(parse_u64), tally_rt::arg(2).and_then(parse_u64)) else {
        eprintln!("usage: busfuzz SEED COUNT");
        return 2;
    };
    match run(seed, count) {
        Ok(()) => 0,
        Err(why) => {
            println!("busfuzz: FAILED: {why}");
            1
        }
    }
}

/// What the kernel did with the garbage.
#[derive(Default)]
struct Tally {
    sent: [u64; KINDS.len()],
    send_errors: BTreeMap<i32, u64>,
    replies: u64,
    error_replies: BTreeMap<i32, u64>,
    acks: u64,
    recv_errors: BTreeMap<i32, u64>,
    checks: u64,
}

fn run(seed: u64, count: u64) -> Result<(), alloc::string::String> {
    let mut sock = BusSocket::open().map_err(|e| alloc::format!("socket: {e}"))?;
    let family = sock.taskstats_family().map_err(|e| alloc::format!("GETFAMILY: {e}"))?;
    let pid = sys::getpid().map_err(|e| alloc::format!("getpid: {e}"))? as u32;
    let mut rng = SplitMix64::new(seed);
    let mut t = Tally::default();
    for i in 0..count {
        let kind = rng.below(KINDS.len() as u64) as usize;
        let msg = garbage(&mut rng, kind, family, GARBAGE_SEQ | (i as u32 & 0x7fff_ffff));
        t.sent[kind] += 1;
        if let Err(Errno(e)) = sys::send(sock.fd(), &msg) {
            *t.send_errors.entry(e).or_default() += 1;
        }
        drain(&mut sock, &mut t);
        if (i + 1) % CHECK_EVERY == 0 {
            check(&mut sock, family, pid, &mut t)
                .map_err(|why| alloc::format!("after message {i} ({}): {why}", KINDS[kind]))?;
        }
    }
    check(&mut sock, family, pid, &mut t).map_err(|why| alloc::format!("at the end: {why}"))?;
    report(&t);
    Ok(())
}

/// Reads every queued datagram without waiting and counts what it holds.
fn drain(sock: &mut BusSocket, t: &mut Tally) {
    loop {
        match sock.recv(MSG_DONTWAIT) {
            Ok(d) => {
                for m in Messages::new(d).flatten() {
                    match m.error() {
                        Some((0, _)) => t.acks += 1,
                        Some((e, _)) => *t.error_replies.entry(e).or_default() += 1,
                        None => t.replies += 1,
                    }
                }
            }
            Err(Errno(EAGAIN)) => return,
            Err(Errno(e)) => *t.recv_errors.entry(e).or_default() += 1,
        }
    }
}

/// A correct GET of this process and a correct family lookup must still work.
fn check(sock: &mut BusSocket, family: u16, pid: u32, t: &mut Tally) -> Result<(), alloc::string::String> {
    let reply = sock.taskstats(family, Command::Pid(pid)).map_err(|e| alloc::format!("GET PID {pid}: {e}"))?;
    let msg = parse_reply(&reply).map_err(|e| alloc::format!("GET PID reply: {e}"))?;
    let rec = msg.records.iter().find(|r| r.kind == AggrKind::Pid).ok_or("GET PID reply has no AGGR_PID")?;
    let stats = Taskstats::from_bytes(rec.stats).ok_or("GET PID reply: STATS does not decode")?;
    if rec.id != pid || stats.ac_pid != pid || stats.version != TASKSTATS_VERSION {
        return Err(alloc::format!(
            "GET PID {pid} answered with pid {} / {} version {}",
            rec.id,
            stats.ac_pid,
            stats.version
        ));
    }
    let again = sock.taskstats_family().map_err(|e| alloc::format!("GETFAMILY: {e}"))?;
    if again != family {
        return Err(alloc::format!("TASKSTATS was family {family}, now {again}"));
    }
    t.checks += 1;
    Ok(())
}

fn report(t: &Tally) {
    let total: u64 = t.sent.iter().sum();
    println!("busfuzz: {total} messages sent:");
    for (k, n) in KINDS.iter().zip(t.sent) {
        println!("  {k:<10} {n}");
    }
    let list = |m: &BTreeMap<i32, u64>| {
        let parts: Vec<alloc::string::String> = m
            .iter()
            .map(|(e, n)| match Errno(*e).name() {
                Some(name) => alloc::format!("{name} x{n}"),
                None => alloc::format!("errno {e} x{n}"),
            })
            .collect();
        if parts.is_empty() {
            alloc::string::String::from("none")
        } else {
            parts.join(", ")
        }
    };
    println!("busfuzz: sendto refused: {}", list(&t.send_errors));
    println!("busfuzz: error replies: {}", list(&t.error_replies));
    println!("busfuzz: recv errors: {}", list(&t.recv_errors));
    println!("busfuzz: {} replies, {} acks", t.replies, t.acks);
    println!("busfuzz: ok, {} correct requests answered correctly in between", t.checks);
}

/// A correct `GET PID pid` as bytes.
fn good_get(family: u16, seq: u32, pid: u32) -> Vec<u8> {
    request(family, seq, 0, Command::Pid(pid)).unwrap_or_default()
}

fn random_bytes(rng: &mut SplitMix64, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

fn set_len(msg: &mut [u8], len: u32) {
    if let Some(w) = msg.get_mut(..4) {
        w.copy_from_slice(&len.to_le_bytes());
    }
}

/// Masks the cpulist parser must refuse (or, for the last few, accept and answer).
const MASKS: [&str; 14] =
    ["3-1", "0-4294967295", "", "1,,2", "-", "0-", "-3", "a", "0x1", "1-2-3", " 0", "99999999999", "0", "0,0-0"];

fn garbage(rng: &mut SplitMix64, kind: usize, family: u16, seq: u32) -> Vec<u8> {
    let pid = rng.below(64) as u32;
    match KINDS[kind] {
        "random" => {
            let n = rng.below(161) as usize;
            random_bytes(rng, n)
        }
        "truncated" => {
            let mut m = good_get(family, seq, pid);
            let cut = rng.below(m.len() as u64) as usize;
            m.truncate(cut);
            m
        }
        "bad_len" => {
            let mut m = good_get(family, seq, pid);
            let len = match rng.below(4) {
                0 => rng.below(NLMSG_HDRLEN as u64) as u32,
                1 => m.len() as u32 + 1 + rng.below(64) as u32,
                2 => u32::MAX - rng.below(16) as u32,
                _ => NLMSG_HDRLEN as u32 + rng.below(GENL_HDRLEN as u64) as u32,
            };
            set_len(&mut m, len);
            m
        }
        "bad_attr" => {
            let mut b = MsgBuilder::genl(family, NLM_F_REQUEST, seq, 0, TASKSTATS_CMD_GET, 1);
            let (ty, alen) = (
                rng.below(6) as u16,
                match rng.below(3) {
                    0 => rng.below(4) as u16,
                    1 => 200 + rng.below(1000) as u16,
                    _ => u16::MAX,
                },
            );
            // A header claiming `alen` bytes, then fewer (or a nest whose child overflows it).
            b.put_raw(&alen.to_le_bytes()).put_raw(&(ty | if rng.one_in(2) { NLA_F_NESTED } else { 0 }).to_le_bytes());
            if rng.one_in(2) {
                b.put_raw(&12u16.to_le_bytes()).put_raw(&1u16.to_le_bytes()).put_raw(&pid.to_le_bytes());
            } else {
                let n = rng.below(12) as usize;
                b.put_raw(&random_bytes(rng, n));
            }
            b.finish().unwrap_or_default()
        }
        "unknown" => {
            let (ty, cmd, version) = match rng.below(3) {
                0 => (family, 3 + rng.below(250) as u8, 1),
                1 => (family.wrapping_add(1 + rng.below(1000) as u16).max(NLMSG_MIN_TYPE), TASKSTATS_CMD_GET, 1),
                _ => (family, TASKSTATS_CMD_GET, rng.next_u64() as u8),
            };
            let mut b = MsgBuilder::genl(ty, NLM_F_REQUEST, seq, 0, cmd, version);
            b.put_u32(7 + rng.below(500) as u16, pid);
            b.finish().unwrap_or_default()
        }
        "cpumask" => {
            let mask = MASKS[rng.below(MASKS.len() as u64) as usize];
            let cmd = if rng.one_in(2) { Command::RegisterCpumask(mask) } else { Command::DeregisterCpumask(mask) };
            request(family, seq, NLM_F_ACK, cmd).unwrap_or_default()
        }
        "flipped" => {
            let mut m = if rng.one_in(2) {
                good_get(family, seq, pid)
            } else {
                tally_msgbus::ctrl::getfamily_request(seq, TASKSTATS_GENL_NAME).unwrap_or_default()
            };
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(m.len() as u64) as usize;
                m[at] = rng.next_u64() as u8;
            }
            m
        }
        "control" => {
            let ty = [NLMSG_NOOP, NLMSG_ERROR, NLMSG_DONE, NLMSG_OVERRUN, family][rng.below(5) as usize];
            let flags = if ty == family { NLM_F_ACK } else { NLM_F_REQUEST | NLM_F_ACK };
            let mut b = MsgBuilder::genl(ty, flags, seq, 0, TASKSTATS_CMD_GET, 1);
            b.put_u32(TASKSTATS_CMD_ATTR_PID, pid);
            b.finish().unwrap_or_default()
        }
        "batch" => {
            let mut m = Vec::new();
            for i in 0..1 + rng.below(4) as u32 {
                m.extend_from_slice(&good_get(family, seq.wrapping_add(i), pid));
            }
            let last = good_get(family, seq, pid);
            let cut = 1 + rng.below(last.len() as u64 - 1) as usize;
            m.extend_from_slice(&last[..cut]);
            m
        }
        _ => {
            let cmd = if rng.one_in(2) {
                Command::Pid(rng.next_u64() as u32 % 100_000)
            } else {
                Command::Tgid(rng.next_u64() as u32 % 100_000)
            };
            request(family, seq, 0, cmd).unwrap_or_default()
        }
    }
}
