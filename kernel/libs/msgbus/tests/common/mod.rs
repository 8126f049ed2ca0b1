//! Shared by the property tests: a fake kernel environment and a checker that every
//! datagram the bus queues is a well-formed message.
#![allow(dead_code)]

use std::collections::BTreeMap;

use tally_msgbus::msg::Messages;
use tally_msgbus::taskstats::{RecordOut, WriteRecord};
use tally_msgbus::{ctrl, parse_taskstats_message, StatsRecord, TaskstatsSource};
use tally_uapi::errno::ESRCH;
use tally_uapi::netlink::*;
use tally_uapi::taskstats::TASKSTATS_CMD_NEW;

pub const TS: u16 = GENL_START_ALLOC;

#[derive(Default)]
pub struct FakeEnv {
    pub tasks: BTreeMap<u32, StatsRecord>,
    pub calls: u64,
}

impl FakeEnv {
    pub fn new() -> Self {
        let mut e = FakeEnv::default();
        for pid in 1..=5u32 {
            let msa = (pid % 2 == 1).then(|| vec![pid as u8; 104]);
            e.tasks.insert(pid, StatsRecord { stats: vec![pid as u8; 40 + pid as usize], msa_ns: msa });
        }
        e
    }
}

impl TaskstatsSource for FakeEnv {
    fn pid_stats(&mut self, pid: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
        self.calls += 1;
        self.tasks.get(&pid).ok_or(ESRCH)?.write_record(out);
        Ok(())
    }
    fn tgid_stats(&mut self, tgid: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
        self.calls += 1;
        if tgid > 3 {
            return Err(ESRCH);
        }
        self.tasks.get(&tgid).ok_or(ESRCH)?.write_record(out);
        Ok(())
    }
}

/// Checks that `d` is exactly one well-formed message the bus may send to port `portid`.
pub fn check_datagram(d: &[u8], portid: u32) -> Result<(), String> {
    if d.len() < NLMSG_HDRLEN || !d.len().is_multiple_of(4) {
        return Err(format!("datagram length {}", d.len()));
    }
    let mut it = Messages::new(d);
    let m = match it.next() {
        Some(Ok(m)) => m,
        other => return Err(format!("not a message: {other:?}")),
    };
    if it.next().is_some() {
        return Err("more than one message".into());
    }
    let h = m.header;
    if nlmsg_align(h.nlmsg_len as usize) != d.len() {
        return Err(format!("nlmsg_len {} vs datagram {}", h.nlmsg_len, d.len()));
    }
    if h.nlmsg_pid != portid {
        return Err(format!("pid {} instead of {portid}", h.nlmsg_pid));
    }
    match h.nlmsg_type {
        NLMSG_ERROR => {
            let (e, echoed) = m.error().ok_or("short nlmsgerr")?;
            if !(0..=4095).contains(&e) {
                return Err(format!("errno {e}"));
            }
            if echoed.nlmsg_seq != h.nlmsg_seq {
                return Err("seq not echoed".into());
            }
            let echo = m.payload.len() - NLMSGERR_LEN;
            if h.nlmsg_flags & NLM_F_CAPPED != 0 {
                if echo != 0 {
                    return Err("capped with payload".into());
                }
            } else if e == 0 || echo as u64 + 16 != u64::from(echoed.nlmsg_len) {
                return Err(format!("echo of {echo} bytes for nlmsg_len {}", echoed.nlmsg_len));
            }
        }
        GENL_ID_CTRL => {
            ctrl::parse_family_reply(d).map_err(|e| format!("bad NEWFAMILY: {e}"))?;
        }
        TS => {
            let t = parse_taskstats_message(d).map_err(|e| format!("bad taskstats: {e}"))?;
            if t.cmd != TASKSTATS_CMD_NEW || t.records.is_empty() {
                return Err("taskstats reply without records".into());
            }
        }
        other => return Err(format!("unexpected type {other:#x}")),
    }
    Ok(())
}
