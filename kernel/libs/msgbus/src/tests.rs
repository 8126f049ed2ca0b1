//! Behaviour of the whole bus: requests in, replies out, with a fake kernel environment.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

use tally_uapi::netlink::*;
use tally_uapi::taskstats::*;

use crate::error::*;
use crate::msg::{first_message, Messages};
use crate::taskstats::{request, AggrKind, Command, RecordOut, WriteRecord};
use crate::*;

/// The kernel's task table, as far as TASKSTATS can see it.
#[derive(Default)]
pub struct Env {
    pub tasks: BTreeMap<u32, StatsRecord>,
    pub groups: BTreeMap<u32, StatsRecord>,
}

impl TaskstatsSource for Env {
    fn pid_stats(&mut self, pid: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
        self.tasks.get(&pid).ok_or(ESRCH)?.write_record(out);
        Ok(())
    }
    fn tgid_stats(&mut self, tgid: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
        self.groups.get(&tgid).ok_or(ESRCH)?.write_record(out);
        Ok(())
    }
}

fn rec(tag: u8, msa: bool) -> StatsRecord {
    StatsRecord {
        stats: vec![tag; 24],
        msa_ns: msa.then(|| (0..13u64).flat_map(|i| (i * 1000).to_le_bytes()).collect()),
    }
}

fn env() -> Env {
    let mut e = Env::default();
    e.tasks.insert(42, rec(0x42, true));
    e.tasks.insert(43, rec(0x43, false));
    e.groups.insert(42, rec(0x99, true));
    e
}

const ROOT: Sender = Sender { pid: 100, tgid: 100, uid: 0 };
const USER: Sender = Sender { pid: 200, tgid: 200, uid: 1000 };
const TS: u16 = GENL_START_ALLOC;

fn setup() -> (Bus<Env>, SockId) {
    let mut bus: Bus<Env> = Bus::new(4);
    assert_eq!(bus.register_family(Box::new(TaskstatsFamily::new())), Ok(TS));
    let s = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 100).unwrap();
    (bus, s)
}

fn drain(bus: &mut Bus<Env>, s: SockId) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    while let Ok(Some(d)) = bus.recv(s) {
        v.push(d);
    }
    v
}

/// The errno of an `NLMSG_ERROR` datagram (0 = ack); panics on anything else.
fn errno_of(d: &[u8]) -> i32 {
    first_message(d).unwrap().error().expect("an NLMSG_ERROR").0
}

fn send(bus: &mut Bus<Env>, s: SockId, bytes: &[u8], who: Sender) -> Vec<Vec<u8>> {
    let mut e = env();
    assert_eq!(bus.send(s, bytes, who, &mut e), Ok(bytes.len()));
    drain(bus, s)
}

fn ts_req(seq: u32, flags: u16, cmd: Command<'_>) -> Vec<u8> {
    request(TS, seq, flags, cmd).unwrap()
}

/// A genl message with raw attribute bytes.
fn raw_msg(ty: u16, flags: u16, seq: u32, cmd: u8, attrs: &[u8]) -> Vec<u8> {
    let mut b = MsgBuilder::genl(ty, flags, seq, 0, cmd, 1);
    b.put_raw(attrs);
    b.finish().unwrap()
}

// -------------------------------------------------------------------------------------
// The controller, byte by byte

/// `GETFAMILY "TASKSTATS"` as `getdelays` sends it.
const GETFAMILY_TASKSTATS: [u8; 36] = [
    0x24, 0x00, 0x00, 0x00, // nlmsg_len 36
    0x10, 0x00, // nlmsg_type GENL_ID_CTRL
    0x01, 0x00, // nlmsg_flags NLM_F_REQUEST
    0x01, 0x00, 0x00, 0x00, // nlmsg_seq 1
    0x00, 0x00, 0x00, 0x00, // nlmsg_pid 0
    0x03, 0x01, 0x00, 0x00, // cmd CTRL_CMD_GETFAMILY, version 1
    0x0e, 0x00, 0x02, 0x00, // nla_len 14, CTRL_ATTR_FAMILY_NAME
    b'T', b'A', b'S', b'K', b'S', b'T', b'A', b'T', b'S', 0x00, 0x00, 0x00, // "TASKSTATS\0" + pad
];

/// The controller's answer (the socket's port id is 100, its owner's pid).
const NEWFAMILY_TASKSTATS: [u8; 92] = [
    0x5c, 0x00, 0x00, 0x00, // nlmsg_len 92
    0x10, 0x00, 0x00, 0x00, // type GENL_ID_CTRL, flags 0
    0x01, 0x00, 0x00, 0x00, // seq 1 (the request's)
    0x64, 0x00, 0x00, 0x00, // pid 100 (the requester's port id)
    0x01, 0x02, 0x00, 0x00, // cmd CTRL_CMD_NEWFAMILY, version 2
    0x0e, 0x00, 0x02, 0x00, b'T', b'A', b'S', b'K', b'S', b'T', b'A', b'T', b'S', 0x00, 0x00, 0x00, // NAME
    0x06, 0x00, 0x01, 0x00, 0x13, 0x00, 0x00, 0x00, // FAMILY_ID u16 0x13
    0x08, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, // VERSION u32 1
    0x08, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, // HDRSIZE u32 0
    0x08, 0x00, 0x05, 0x00, 0x04, 0x00, 0x00, 0x00, // MAXATTR u32 4
    0x18, 0x00, 0x06, 0x00, // OPS (24 bytes)
    0x14, 0x00, 0x01, 0x00, // op #1 (20 bytes)
    0x08, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, // OP_ID 1 (TASKSTATS_CMD_GET)
    0x08, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, // OP_FLAGS GENL_ADMIN_PERM
];

#[test]
fn getfamily_taskstats_byte_for_byte() {
    assert_eq!(ctrl::getfamily_request(1, "TASKSTATS").unwrap(), GETFAMILY_TASKSTATS);
    let (mut bus, s) = setup();
    let replies = send(&mut bus, s, &GETFAMILY_TASKSTATS, USER);
    assert_eq!(replies, vec![NEWFAMILY_TASKSTATS.to_vec()]);
    let f = ctrl::parse_family_reply(&replies[0]).unwrap();
    assert_eq!((f.id, f.name.as_str(), f.version, f.hdrsize, f.max_attr), (TS, "TASKSTATS", 1, 0, 4));
    assert_eq!(f.ops, vec![GenlOp { cmd: TASKSTATS_CMD_GET, flags: GENL_ADMIN_PERM }]);
}

#[test]
fn getfamily_by_id_name_and_errors() {
    let (mut bus, s) = setup();
    // By id: the controller itself.
    let mut b = MsgBuilder::genl(GENL_ID_CTRL, NLM_F_REQUEST, 2, 0, CTRL_CMD_GETFAMILY, 1);
    b.put_u16(CTRL_ATTR_FAMILY_ID, GENL_ID_CTRL);
    let r = send(&mut bus, s, &b.finish().unwrap(), USER);
    let f = ctrl::parse_family_reply(&r[0]).unwrap();
    assert_eq!((f.id, f.name.as_str(), f.version), (GENL_ID_CTRL, "nlctrl", 2));

    // The name wins over the id.
    let mut b = MsgBuilder::genl(GENL_ID_CTRL, NLM_F_REQUEST, 2, 0, CTRL_CMD_GETFAMILY, 1);
    b.put_u16(CTRL_ATTR_FAMILY_ID, GENL_ID_CTRL).put_str(CTRL_ATTR_FAMILY_NAME, "TASKSTATS");
    let r = send(&mut bus, s, &b.finish().unwrap(), USER);
    assert_eq!(ctrl::parse_family_reply(&r[0]).unwrap().id, TS);

    let cases: Vec<(Vec<u8>, i32)> = vec![
        (ctrl::getfamily_request(3, "NOPE").unwrap(), ENOENT),
        (raw_msg(GENL_ID_CTRL, NLM_F_REQUEST, 3, CTRL_CMD_GETFAMILY, &[]), EINVAL),
        // Not NUL-terminated: Linux's NLA_NUL_STRING policy rejects it.
        (raw_msg(GENL_ID_CTRL, NLM_F_REQUEST, 3, CTRL_CMD_GETFAMILY, &[7, 0, 2, 0, b'a', b'b', b'c', 0]), EINVAL),
        // An id of the wrong size.
        (raw_msg(GENL_ID_CTRL, NLM_F_REQUEST, 3, CTRL_CMD_GETFAMILY, &[8, 0, 1, 0, 0x13, 0, 0, 0]), EINVAL),
        // An id nobody has.
        (raw_msg(GENL_ID_CTRL, NLM_F_REQUEST, 3, CTRL_CMD_GETFAMILY, &[6, 0, 1, 0, 0x40, 0, 0, 0]), ENOENT),
        // An unknown controller command.
        (raw_msg(GENL_ID_CTRL, NLM_F_REQUEST, 3, CTRL_CMD_NEWFAMILY, &[]), EOPNOTSUPP),
    ];
    for (req, want) in cases {
        let r = send(&mut bus, s, &req, USER);
        assert_eq!(r.len(), 1);
        assert_eq!(errno_of(&r[0]), want, "{req:02x?}");
        assert_eq!(ctrl::parse_family_reply(&r[0]), Err(want));
        let m = first_message(&r[0]).unwrap();
        assert_eq!((m.header.nlmsg_seq, m.header.nlmsg_pid), (3, 100));
        // The whole offending message is echoed after the error.
        assert_eq!(&m.payload[4..], &req[..]);
    }
}

// -------------------------------------------------------------------------------------
// Framing errors

#[test]
fn truncated_and_bad_lengths() {
    let (mut bus, s) = setup();
    let mut e = env();
    // Less than a header: the send itself fails.
    assert_eq!(bus.send(s, &GETFAMILY_TASKSTATS[..15], USER, &mut e), Err(EINVAL));
    assert_eq!(bus.send(s, &[], USER, &mut e), Err(EINVAL));
    assert_eq!(bus.send(s, &vec![0; MAX_SEND + 1], USER, &mut e), Err(EMSGSIZE));
    assert!(drain(&mut bus, s).is_empty());

    // A good message then a partial header: the first is answered, the rest counted.
    let mut buf = GETFAMILY_TASKSTATS.to_vec();
    buf.extend_from_slice(&GETFAMILY_TASKSTATS[..10]);
    let before = bus.stats().malformed;
    let r = send(&mut bus, s, &buf, USER);
    assert_eq!(r.len(), 1);
    assert!(ctrl::parse_family_reply(&r[0]).is_ok());
    assert_eq!(bus.stats().malformed, before + 1);

    // nlmsg_len too short, or past the end: -EINVAL echoing only the header, then stop.
    for len in [0u32, 8, 15, 37, 1000, u32::MAX] {
        let mut bad = GETFAMILY_TASKSTATS.to_vec();
        bad[0..4].copy_from_slice(&len.to_le_bytes());
        bad.extend_from_slice(&GETFAMILY_TASKSTATS); // never reached
        let bad = if len == 37 { bad[..36].to_vec() } else { bad };
        let before = bus.stats().malformed;
        let r = send(&mut bus, s, &bad, USER);
        assert_eq!(r.len(), 1, "len {len}");
        assert_eq!(errno_of(&r[0]), EINVAL);
        let m = first_message(&r[0]).unwrap();
        assert_eq!(m.header.nlmsg_flags, NLM_F_CAPPED);
        assert_eq!(m.header.nlmsg_seq, 1);
        assert_eq!(m.error().unwrap().1.nlmsg_len, len);
        assert_eq!(r[0].len(), 36);
        assert_eq!(bus.stats().malformed, before + 1);
    }
}

#[test]
fn malformed_attributes_are_einval() {
    let (mut bus, s) = setup();
    let nested = NLA_F_NESTED | 7;
    let cases: Vec<Vec<u8>> = vec![
        vec![3, 0, 1, 0],                       // nla_len < 4
        vec![12, 0, 1, 0, 42, 0, 0, 0],         // past the message
        vec![8, 0, 1, 0, 42, 0, 0, 0, 1, 0],    // 2 bytes left over
        vec![8, 0, 1, 0, 42, 0, 0, 0, 9, 0, 1], // a cut header
        // A flagged nest whose child runs past the parent (but not past the message).
        [&[12, 0][..], &nested.to_le_bytes(), &[12, 0, 1, 0, 0, 0, 0, 0], &[0; 8]].concat(),
    ];
    for attrs in cases {
        let req = raw_msg(TS, NLM_F_REQUEST, 9, TASKSTATS_CMD_GET, &attrs);
        let before = bus.stats().malformed;
        let r = send(&mut bus, s, &req, ROOT);
        assert_eq!(r.len(), 1);
        assert_eq!(errno_of(&r[0]), EINVAL, "{attrs:?}");
        assert_eq!(bus.stats().malformed, before + 1);
    }
    // Deep nesting: fine up to the limit, EINVAL beyond.
    let mut deep = vec![8, 0, 1, 0, 42, 0, 0, 0];
    for _ in 0..=attr::MAX_NEST_DEPTH {
        let mut outer = Vec::new();
        outer.extend_from_slice(&((deep.len() + 4) as u16).to_le_bytes());
        outer.extend_from_slice(&(NLA_F_NESTED | 9).to_le_bytes());
        outer.extend_from_slice(&deep);
        deep = outer;
    }
    let r = send(&mut bus, s, &raw_msg(TS, NLM_F_REQUEST, 9, TASKSTATS_CMD_GET, &deep), ROOT);
    assert_eq!(errno_of(&r[0]), EINVAL);
}

#[test]
fn dispatch_errors_follow_genl_rcv_msg() {
    let (mut bus, s) = setup();
    let cases: Vec<(Vec<u8>, i32)> = vec![
        (raw_msg(0x40, NLM_F_REQUEST, 1, 1, &[]), ENOENT),
        (raw_msg(GENL_ID_CTRL + 1, NLM_F_REQUEST, 1, 1, &[]), ENOENT), // reserved id, unused
        (raw_msg(TS, NLM_F_REQUEST, 1, 7, &[]), EOPNOTSUPP),
        (raw_msg(TS, NLM_F_REQUEST, 1, TASKSTATS_CMD_NEW, &[]), EOPNOTSUPP),
        (ts_req(1, NLM_F_DUMP, Command::Pid(42)), EOPNOTSUPP),
        (raw_msg(TS, NLM_F_REQUEST, 1, TASKSTATS_CMD_GET, &[]), EINVAL), // no attribute
    ];
    for (req, want) in cases {
        let r = send(&mut bus, s, &req, ROOT);
        assert_eq!(r.len(), 1);
        assert_eq!(errno_of(&r[0]), want, "{req:02x?}");
    }
    // A payload shorter than genlmsghdr.
    let mut short = MsgBuilder::new(TS, NLM_F_REQUEST, 5, 0);
    short.put_raw(&[1, 1]);
    let short = short.finish().unwrap();
    let r = send(&mut bus, s, &short, ROOT);
    assert_eq!(errno_of(&r[0]), EINVAL);
    // Unknown family beats a short payload, as in Linux.
    let mut short = MsgBuilder::new(0x99, NLM_F_REQUEST, 5, 0);
    short.put_raw(&[1]);
    let r = send(&mut bus, s, &short.finish().unwrap(), ROOT);
    assert_eq!(errno_of(&r[0]), ENOENT);
}

#[test]
fn non_requests_and_control_messages_are_ignored_but_acked_on_request() {
    let (mut bus, s) = setup();
    let before = bus.stats();
    let no_req = raw_msg(TS, 0, 1, TASKSTATS_CMD_GET, &[]);
    assert!(send(&mut bus, s, &no_req, ROOT).is_empty());
    let noop = MsgBuilder::new(NLMSG_NOOP, NLM_F_REQUEST, 2, 0).finish().unwrap();
    assert!(send(&mut bus, s, &noop, ROOT).is_empty());
    // Linux's netlink_rcv_skb acks skipped messages that ask for it.
    let noop_ack = MsgBuilder::new(NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, 3, 0).finish().unwrap();
    let r = send(&mut bus, s, &noop_ack, ROOT);
    assert_eq!(errno_of(&r[0]), 0);
    let st = bus.stats();
    assert_eq!(st.ignored, before.ignored + 3);
    assert_eq!(st.requests, before.requests);
}

// -------------------------------------------------------------------------------------
// TASKSTATS requests

#[test]
fn get_pid_and_tgid() {
    let (mut bus, s) = setup();
    let r = send(&mut bus, s, &ts_req(7, 0, Command::Pid(42)), ROOT);
    assert_eq!(r.len(), 1);
    let m = parse_taskstats_message(&r[0]).unwrap();
    assert_eq!((m.header.nlmsg_type, m.header.nlmsg_seq, m.header.nlmsg_pid, m.header.nlmsg_flags), (TS, 7, 100, 0));
    assert_eq!((m.cmd, m.version), (TASKSTATS_CMD_NEW, 1));
    assert_eq!(m.records.len(), 1);
    let p = m.pid().unwrap();
    assert_eq!((p.kind, p.id, p.stats), (AggrKind::Pid, 42, &[0x42; 24][..]));
    assert_eq!(p.msa_values().collect::<Vec<_>>(), (0..13u64).map(|i| i * 1000).collect::<Vec<_>>());
    // The layout getdelays expects: AGGR_PID (no NLA_F_NESTED) { PID, STATS, MSA }.
    assert_eq!(&r[0][20..24], &[4 + 8 + 28 + 108, 0, TASKSTATS_TYPE_AGGR_PID as u8, 0]);
    assert_eq!(&r[0][24..32], &[8, 0, 1, 0, 42, 0, 0, 0]);

    // Without MSA, and with an ack after the reply.
    let r = send(&mut bus, s, &ts_req(8, NLM_F_ACK, Command::Pid(43)), ROOT);
    assert_eq!(r.len(), 2);
    let m = parse_taskstats_message(&r[0]).unwrap();
    assert_eq!(m.pid().unwrap().msa, None);
    assert_eq!(errno_of(&r[1]), 0);

    let r = send(&mut bus, s, &ts_req(9, 0, Command::Tgid(42)), ROOT);
    let m = parse_taskstats_message(&r[0]).unwrap();
    let t = m.tgid().unwrap();
    assert_eq!((t.kind, t.id, t.stats[0]), (AggrKind::Tgid, 42, 0x99));
    assert!(m.pid().is_none());

    let r = send(&mut bus, s, &ts_req(10, 0, Command::Pid(7)), ROOT);
    assert_eq!(errno_of(&r[0]), ESRCH);
    assert_eq!(parse_taskstats_message(&r[0]), Err(ESRCH));
    let r = send(&mut bus, s, &ts_req(10, 0, Command::Tgid(43)), ROOT);
    assert_eq!(errno_of(&r[0]), ESRCH);
}

#[test]
fn get_attribute_rules() {
    let (mut bus, s) = setup();
    // Unknown attributes (type 0, above max) are ignored when PID is there.
    let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST, 1, 0, TASKSTATS_CMD_GET, 1);
    b.put_u32(0, 5).put_u32(99, 5).put_u32(TASKSTATS_CMD_ATTR_PID, 42).put_str(77, "x");
    let r = send(&mut bus, s, &b.finish().unwrap(), ROOT);
    assert_eq!(parse_taskstats_message(&r[0]).unwrap().pid().unwrap().id, 42);
    // ... and alone they are not a command.
    let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST, 1, 0, TASKSTATS_CMD_GET, 1);
    b.put_u32(99, 42);
    let r = send(&mut bus, s, &b.finish().unwrap(), ROOT);
    assert_eq!(errno_of(&r[0]), EINVAL);
    // A PID of the wrong size.
    for payload in [&[42u8, 0][..], &[42, 0, 0, 0, 0, 0, 0, 0], &[]] {
        let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST, 1, 0, TASKSTATS_CMD_GET, 1);
        b.put_bytes(TASKSTATS_CMD_ATTR_PID, payload);
        let r = send(&mut bus, s, &b.finish().unwrap(), ROOT);
        assert_eq!(errno_of(&r[0]), EINVAL);
    }
    // PID beats TGID; the last of repeated attributes counts.
    let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST, 1, 0, TASKSTATS_CMD_GET, 1);
    b.put_u32(TASKSTATS_CMD_ATTR_TGID, 42).put_u32(TASKSTATS_CMD_ATTR_PID, 7).put_u32(TASKSTATS_CMD_ATTR_PID, 43);
    let r = send(&mut bus, s, &b.finish().unwrap(), ROOT);
    let m = parse_taskstats_message(&r[0]).unwrap();
    assert_eq!((m.records[0].kind, m.records[0].id), (AggrKind::Pid, 43));
    // Nested-flagged attribute types are masked: NLA_F_NESTED|PID is PID.
    let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST, 1, 0, TASKSTATS_CMD_GET, 1);
    b.put_bytes(NLA_F_NET_BYTEORDER | TASKSTATS_CMD_ATTR_PID, &42u32.to_le_bytes());
    let r = send(&mut bus, s, &b.finish().unwrap(), ROOT);
    assert_eq!(parse_taskstats_message(&r[0]).unwrap().records[0].id, 42);
}

#[test]
fn taskstats_get_needs_admin_but_getfamily_does_not() {
    let (mut bus, s) = setup();
    for cmd in [Command::Pid(42), Command::Tgid(42), Command::RegisterCpumask("0")] {
        let r = send(&mut bus, s, &ts_req(4, 0, cmd), USER);
        assert_eq!(errno_of(&r[0]), EPERM);
    }
    // EPERM comes before attribute validation, as in Linux.
    let r = send(&mut bus, s, &raw_msg(TS, NLM_F_REQUEST, 1, TASKSTATS_CMD_GET, &[3, 0, 0, 0]), USER);
    assert_eq!(errno_of(&r[0]), EPERM);
    assert_eq!(bus.listener_mask(TS, s), 0);
    let r = send(&mut bus, s, &GETFAMILY_TASKSTATS, USER);
    assert!(ctrl::parse_family_reply(&r[0]).is_ok());
}

#[test]
fn register_and_deregister_cpumasks() {
    let (mut bus, s) = setup();
    // No reply without NLM_F_ACK, as in Linux.
    assert!(send(&mut bus, s, &ts_req(1, 0, Command::RegisterCpumask("1-2")), ROOT).is_empty());
    assert_eq!(bus.listener_mask(TS, s), 0b110);
    assert!(!bus.has_listeners(TS, 0));
    assert!(bus.has_listeners(TS, 1) && bus.has_listeners(TS, 2));
    assert!(!bus.has_listeners(TS, 3) && !bus.has_listeners(TS, 64) && !bus.has_listeners(GENL_ID_CTRL, 1));
    let r = send(&mut bus, s, &ts_req(2, NLM_F_ACK, Command::RegisterCpumask("0,2\n")), ROOT);
    assert_eq!(errno_of(&r[0]), 0);
    assert_eq!(bus.listener_mask(TS, s), 0b111);
    // Not NUL-terminated works too.
    let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST, 3, 0, TASKSTATS_CMD_GET, 1);
    b.put_bytes(TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, b"3");
    assert!(send(&mut bus, s, &b.finish().unwrap(), ROOT).is_empty());
    assert_eq!(bus.listener_mask(TS, s), 0b1111);
    // REGISTER wins over PID.
    let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST, 3, 0, TASKSTATS_CMD_GET, 1);
    b.put_u32(TASKSTATS_CMD_ATTR_PID, 42).put_str(TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, "0-1");
    assert!(send(&mut bus, s, &b.finish().unwrap(), ROOT).is_empty());
    assert_eq!(bus.listener_mask(TS, s), 0b1100);
    assert!(send(&mut bus, s, &ts_req(4, 0, Command::DeregisterCpumask("0-3")), ROOT).is_empty());
    assert_eq!(bus.listener_mask(TS, s), 0);
    assert!(!(0..4).any(|c| bus.has_listeners(TS, c)));
}

#[test]
fn bad_cpumasks_are_rejected() {
    let (mut bus, s) = setup(); // 4 CPUs
    let bad = [
        "",
        "\0",
        ",",
        " ",
        "4",
        "0-4",
        "3-1",
        "1-",
        "-1",
        "1--2",
        "1 - 2",
        "a",
        "1,a",
        "0x1",
        "1.5",
        "all",
        "N",
        "0-3:1/2",
        "99999999999999999999999",
        "1;2",
        "+1",
        "1-2-3",
    ];
    for mask in bad {
        for cmd in [Command::RegisterCpumask(mask), Command::DeregisterCpumask(mask)] {
            let r = send(&mut bus, s, &ts_req(5, 0, cmd), ROOT);
            assert_eq!(r.len(), 1, "{mask:?}");
            assert_eq!(errno_of(&r[0]), EINVAL, "{mask:?}");
        }
    }
    // An empty attribute.
    let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST, 3, 0, TASKSTATS_CMD_GET, 1);
    b.put_bytes(TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, &[]);
    assert_eq!(errno_of(&send(&mut bus, s, &b.finish().unwrap(), ROOT)[0]), EINVAL);
    // Longer than TASKSTATS_CPUMASK_MAXLEN: E2BIG, as Linux's parse().
    let long = "0,".repeat(TASKSTATS_CPUMASK_MAXLEN / 2) + "0";
    let r = send(&mut bus, s, &ts_req(5, 0, Command::RegisterCpumask(&long)), ROOT);
    assert_eq!(errno_of(&r[0]), E2BIG);
    // Exactly at the limit (with its NUL) is fine.
    let ok = "0,".repeat((TASKSTATS_CPUMASK_MAXLEN - 2) / 2) + "0";
    assert_eq!(ok.len() + 1, TASKSTATS_CPUMASK_MAXLEN);
    assert!(send(&mut bus, s, &ts_req(5, 0, Command::RegisterCpumask(&ok)), ROOT).is_empty());
    assert_eq!(bus.listener_mask(TS, s), 1);
}

// -------------------------------------------------------------------------------------
// Exit records, listeners, flow control

#[test]
fn exit_messages_reach_the_listeners_of_that_cpu() {
    let (mut bus, a) = setup();
    let b = bus.open(AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, 300).unwrap();
    send(&mut bus, a, &ts_req(1, 0, Command::RegisterCpumask("0-1")), ROOT);
    send(&mut bus, b, &ts_req(1, 0, Command::RegisterCpumask("1,3")), ROOT);

    let pid_rec = rec(1, true);
    let tg_rec = rec(2, false);
    let seq = bus.next_exit_seq(TS, 1);
    assert_eq!(seq, 0);
    let msg = exit_message(TS, seq, 50, &pid_rec, Some((49, &tg_rec))).unwrap();
    let d = bus.deliver_to_cpu_listeners(TS, 1, &msg);
    assert_eq!(d.delivered_to, vec![a, b]);
    assert_eq!(d.dropped, 0);
    let seq0 = bus.next_exit_seq(TS, 0);
    let d = bus.deliver_to_cpu_listeners(TS, 0, &exit_message(TS, seq0, 51, &pid_rec, None).unwrap());
    assert_eq!(d.delivered_to, vec![a]);
    let d = bus.deliver_to_cpu_listeners(TS, 2, &msg);
    assert!(d.delivered_to.is_empty());
    assert_eq!(bus.next_exit_seq(TS, 1), 1);

    let got = drain(&mut bus, a);
    assert_eq!(got.len(), 2);
    let m = parse_taskstats_message(&got[0]).unwrap();
    assert_eq!((m.header.nlmsg_pid, m.header.nlmsg_seq, m.header.nlmsg_flags), (0, 0, 0));
    assert_eq!(m.records.len(), 2);
    assert_eq!((m.records[0].kind, m.records[0].id, m.records[0].stats), (AggrKind::Pid, 50, &[1u8; 24][..]));
    assert!(m.records[0].msa.is_some());
    assert_eq!((m.records[1].kind, m.records[1].id, m.records[1].msa), (AggrKind::Tgid, 49, None));
    assert_eq!(parse_taskstats_message(&got[1]).unwrap().records.len(), 1);
    assert_eq!(drain(&mut bus, b).len(), 1);
    let st = bus.stats();
    assert_eq!((st.multicast_produced, st.multicast_delivered, st.multicast_dropped), (3, 3, 0));
}

#[test]
fn close_cleans_up_listeners_and_ids() {
    let (mut bus, s) = setup();
    send(&mut bus, s, &ts_req(1, 0, Command::RegisterCpumask("0-3")), ROOT);
    assert!(bus.has_listeners(TS, 2));
    bus.deliver_to_cpu_listeners(TS, 2, &exit_message(TS, 0, 1, &rec(1, false), None).unwrap());
    let st = bus.close(s).unwrap();
    assert_eq!((st.portid, st.delivered, st.queued, st.received), (100, 1, 1, 0));
    assert!(!(0..4).any(|c| bus.has_listeners(TS, c)));
    assert_eq!(bus.deliver_to_cpu_listeners(TS, 2, &[0; 20]), Delivery::default());
    // The id is stale now, even when the slot is reused.
    assert_eq!(bus.recv(s), Err(EBADF));
    assert_eq!(bus.close(s), Err(EBADF));
    assert!(bus.has_data(s));
    let t = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 100).unwrap();
    assert_ne!(s, t);
    assert_eq!(bus.send(s, &GETFAMILY_TASKSTATS, ROOT, &mut env()), Err(EBADF));
    assert_eq!(bus.socket_stats(s), Err(EBADF));
    assert_eq!(bus.set_rcvbuf(s, 5000), Err(EBADF));
    assert_eq!(SockId::from_raw(t.raw()), t);
    // Its port id was freed: the new socket gets 100 again.
    assert_eq!(bus.bind(t, 0), Ok(()));
    assert_eq!(bus.portid(t), Ok(100));
    assert_eq!(bus.stats().open_sockets, 1);
}

#[test]
fn flow_control_drops_counts_and_reports_enobufs_once() {
    let (mut bus, s) = setup();
    send(&mut bus, s, &ts_req(1, 0, Command::RegisterCpumask("0")), ROOT);
    bus.set_rcvbuf(s, 1).unwrap();
    assert_eq!(bus.rcvbuf(s), Ok(MIN_RCVBUF));
    let msg = exit_message(TS, 0, 1, &rec(1, true), None).unwrap();
    let fit = MIN_RCVBUF as usize / msg.len();
    let mut dropped_at = Vec::new();
    for _ in 0..fit + 5 {
        let d = bus.deliver_to_cpu_listeners(TS, 0, &msg);
        dropped_at.extend(d.dropped_at);
    }
    assert_eq!(dropped_at, vec![s; 5]);
    let st = bus.socket_stats(s).unwrap();
    assert_eq!((st.produced, st.delivered, st.dropped), (fit as u64 + 5, fit as u64, 5));
    // A reply to a request is subject to the same limit.
    let r = {
        let mut e = env();
        bus.send(s, &ts_req(2, 0, Command::Pid(42)), ROOT, &mut e).unwrap();
        bus.socket_stats(s).unwrap()
    };
    assert_eq!(r.dropped, 6);
    assert!(bus.has_data(s));
    assert_eq!(bus.recv(s), Err(ENOBUFS));
    for _ in 0..fit {
        assert_eq!(bus.peek_len(s), Ok(Some(msg.len())));
        assert_eq!(bus.recv(s).unwrap().unwrap(), msg);
    }
    assert_eq!(bus.recv(s), Ok(None));
    assert!(!bus.has_data(s));
    let st = bus.socket_stats(s).unwrap();
    assert_eq!(st.enobufs_reported, 1);
    assert_eq!(st.produced, st.delivered + st.dropped);
    assert_eq!(st.delivered, st.received + st.queued);
    let bs = bus.stats();
    assert_eq!((bs.multicast_delivered, bs.multicast_dropped), (fit as u64, 5));
    assert_eq!(bs.replies, 1);
    // A bigger buffer and it keeps up again.
    bus.set_rcvbuf(s, 1 << 20).unwrap();
    assert_eq!(bus.deliver_to_cpu_listeners(TS, 0, &msg).delivered_to, vec![s]);
    assert_eq!(bus.recv(s).unwrap().unwrap(), msg);
}

#[test]
fn an_exit_message_that_could_not_be_built_is_a_counted_drop_at_each_listener() {
    let (mut bus, a) = setup();
    let b = bus.open(AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, 300).unwrap();
    let c = bus.open(AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, 301).unwrap();
    send(&mut bus, a, &ts_req(1, 0, Command::RegisterCpumask("0")), ROOT);
    send(&mut bus, b, &ts_req(1, 0, Command::RegisterCpumask("0-1")), ROOT);
    send(&mut bus, c, &ts_req(1, 0, Command::RegisterCpumask("1")), ROOT);
    let msg = exit_message(TS, 0, 1, &rec(1, true), None).unwrap();
    assert_eq!(bus.deliver_to_cpu_listeners(TS, 0, &msg).delivered_to, vec![a, b]);
    // The next record on CPU 0 could not be built: every listener of CPU 0 loses it, counted.
    let d = bus.drop_at_cpu_listeners(TS, 0);
    assert_eq!((d.delivered_to.to_vec(), d.dropped, d.dropped_at.to_vec()), (vec![], 2, vec![a, b]));
    assert_eq!(bus.drop_at_cpu_listeners(TS, 2), Delivery::default(), "nobody listens to CPU 2");
    for s in [a, b] {
        let st = bus.socket_stats(s).unwrap();
        assert_eq!((st.produced, st.delivered, st.dropped, st.bytes_dropped), (2, 1, 1, 0));
        assert!(bus.has_data(s), "the pending ENOBUFS wakes a reader");
        assert_eq!(bus.recv(s), Err(ENOBUFS), "reported once, before the queued record");
        assert_eq!(bus.recv(s).unwrap().unwrap(), msg);
        assert_eq!(bus.recv(s), Ok(None));
        let st = bus.socket_stats(s).unwrap();
        assert_eq!(st.produced, st.delivered + st.dropped);
        assert_eq!((st.enobufs_reported, st.received, st.queued), (1, 1, 0));
    }
    let st = bus.socket_stats(c).unwrap();
    assert_eq!((st.produced, st.dropped), (0, 0), "a listener of another CPU is untouched");
    assert_eq!(bus.recv(c), Ok(None));
    let bs = bus.stats();
    assert_eq!((bs.multicast_produced, bs.multicast_delivered, bs.multicast_dropped), (4, 2, 2));
}

#[test]
fn a_full_listener_loses_the_record_and_the_others_still_get_it() {
    let (mut bus, a) = setup();
    let b = bus.open(AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, 300).unwrap();
    send(&mut bus, a, &ts_req(1, 0, Command::RegisterCpumask("0-1")), ROOT);
    send(&mut bus, b, &ts_req(1, 0, Command::RegisterCpumask("1")), ROOT);
    bus.set_rcvbuf(a, MIN_RCVBUF).unwrap();
    let msg = exit_message(TS, 0, 1, &rec(1, true), None).unwrap();
    let fit = MIN_RCVBUF as usize / msg.len();
    for i in 0..fit {
        let d = bus.deliver_to_cpu_listeners(TS, 0, &msg);
        assert_eq!(d.delivered_to, vec![a], "record {i} on CPU 0: only `a` listens to CPU 0");
    }
    let d = bus.deliver_to_cpu_listeners(TS, 1, &msg);
    assert_eq!(d.delivered_to, vec![b], "CPU 1: `a` is full, `b` must still get the record");
    assert_eq!((d.dropped, d.dropped_at.to_vec()), (1, vec![a]), "CPU 1: the full listener `a` is counted as a drop");
    let st = bus.socket_stats(a).unwrap();
    assert_eq!(
        (st.produced, st.delivered, st.dropped),
        (fit as u64 + 1, fit as u64, 1),
        "a: (produced, delivered, dropped)"
    );
    let st = bus.socket_stats(b).unwrap();
    assert_eq!((st.produced, st.delivered, st.dropped), (1, 1, 0), "b: (produced, delivered, dropped)");
    let bs = bus.stats();
    assert_eq!(
        (bs.multicast_produced, bs.multicast_delivered, bs.multicast_dropped),
        (fit as u64 + 2, fit as u64 + 1, 1),
        "the bus's multicast (produced, delivered, dropped): one per listener offered a copy"
    );
    assert_eq!(bus.recv(a), Err(ENOBUFS), "a's reader hears of the drop first");
    assert_eq!(bus.recv(b).unwrap().unwrap(), msg);
}

#[test]
fn several_messages_in_one_send_are_answered_in_order() {
    let (mut bus, s) = setup();
    let mut buf = ts_req(1, 0, Command::Pid(42));
    buf.extend(ts_req(2, 0, Command::Pid(7)));
    buf.extend(ctrl::getfamily_request(3, "nlctrl").unwrap());
    buf.extend(ts_req(4, NLM_F_ACK, Command::RegisterCpumask("0")));
    let r = send(&mut bus, s, &buf, ROOT);
    let seqs: Vec<u32> = r.iter().map(|d| first_message(d).unwrap().header.nlmsg_seq).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
    assert!(parse_taskstats_message(&r[0]).is_ok());
    assert_eq!(errno_of(&r[1]), ESRCH);
    assert!(ctrl::parse_family_reply(&r[2]).is_ok());
    assert_eq!(errno_of(&r[3]), 0);
    assert_eq!(Messages::new(&buf).count(), 4);
    let st = bus.stats();
    assert_eq!((st.requests, st.replies, st.errors_replied, st.acks), (4, 2, 1, 1));
}

// -------------------------------------------------------------------------------------
// Sockets

#[test]
fn open_checks_in_linux_order() {
    let mut bus: Bus<Env> = Bus::new(2);
    assert_eq!(bus.open(2, SOCK_RAW, NETLINK_GENERIC, 1), Err(EAFNOSUPPORT));
    assert_eq!(bus.open(AF_NETLINK, 1, NETLINK_GENERIC, 1), Err(ESOCKTNOSUPPORT)); // SOCK_STREAM
    assert_eq!(bus.open(AF_NETLINK, 0, NETLINK_GENERIC, 1), Err(ESOCKTNOSUPPORT));
    assert_eq!(bus.open(AF_NETLINK, 12, NETLINK_GENERIC, 1), Err(EINVAL));
    assert_eq!(bus.open(AF_NETLINK, SOCK_RAW | 0x4000_0000, NETLINK_GENERIC, 1), Err(EINVAL));
    assert_eq!(bus.open(AF_NETLINK, SOCK_RAW, 0, 1), Err(EPROTONOSUPPORT));
    assert!(bus.open(AF_NETLINK, SOCK_RAW | 0o4000 | 0o2000000, NETLINK_GENERIC, 1).is_ok());
    let mut n = 1;
    while bus.open(AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, 1).is_ok() {
        n += 1;
    }
    assert_eq!(n, MAX_SOCKETS);
    assert_eq!(bus.open(AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, 1), Err(EMFILE));
    assert_eq!(bus.stats().open_sockets as usize, MAX_SOCKETS);
}

#[test]
fn bind_and_autobind() {
    let (mut bus, a) = setup();
    let b = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 100).unwrap();
    let c = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 0).unwrap();
    assert_eq!(bus.portid(a), Ok(0));
    assert_eq!(bus.bind(a, 555), Ok(()));
    assert_eq!(bus.bind(a, 555), Ok(()));
    assert_eq!(bus.bind(a, 556), Err(EINVAL));
    assert_eq!(bus.bind(a, 0), Err(EINVAL));
    assert_eq!(bus.bind(b, 555), Err(EADDRINUSE));
    // The owner's pid first, then counting down from -4096.
    assert_eq!(bus.bind(b, 0), Ok(()));
    assert_eq!(bus.portid(b), Ok(100));
    let d = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 100).unwrap();
    bus.send(d, &GETFAMILY_TASKSTATS, ROOT, &mut env()).unwrap(); // autobinds on send
    assert_eq!(bus.portid(d), Ok(0xFFFF_F000));
    assert_eq!(first_message(&bus.recv(d).unwrap().unwrap()).unwrap().header.nlmsg_pid, 0xFFFF_F000);
    assert_eq!(bus.bind(c, 0xFFFF_EFFF), Ok(()));
    let e = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 0).unwrap();
    bus.bind(e, 0).unwrap();
    assert_eq!(bus.portid(e), Ok(0xFFFF_EFFE)); // skipped the taken one
}

#[test]
fn family_registration_rules() {
    struct Named(&'static str, Vec<GenlOp>);
    impl Family<Env> for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn version(&self) -> u8 {
            1
        }
        fn max_attr(&self) -> u16 {
            0
        }
        fn ops(&self) -> &[GenlOp] {
            &self.1
        }
        fn handle(&mut self, _: &Request<'_>, _: &mut Env, _: &mut FamilyCx<'_>) -> Result<(), i32> {
            Err(-EIO) // a C-style negative errno is accepted
        }
    }
    let (mut bus, s) = setup();
    let op = vec![GenlOp { cmd: 1, flags: 0 }];
    assert_eq!(bus.register_family(Box::new(Named("TASKSTATS", op.clone()))), Err(EEXIST));
    assert_eq!(bus.register_family(Box::new(Named("", op.clone()))), Err(EINVAL));
    assert_eq!(bus.register_family(Box::new(Named("sixteen_chars_xx", op.clone()))), Err(EINVAL));
    assert_eq!(bus.register_family(Box::new(Named("dup", vec![op[0], op[0]]))), Err(EINVAL));
    assert_eq!(bus.register_family(Box::new(Named("fifteen_chars_x", op.clone()))), Ok(TS + 1));
    assert_eq!(bus.family_id("fifteen_chars_x"), Some(TS + 1));
    assert_eq!(bus.family_id("TASKSTATS"), Some(TS));
    assert_eq!(bus.family_info(TS).unwrap().max_attr, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK);
    let r = send(&mut bus, s, &raw_msg(TS + 1, NLM_F_REQUEST, 1, 1, &[]), USER);
    assert_eq!(errno_of(&r[0]), EIO);
}

#[test]
fn the_bus_can_live_in_a_kernel_static_and_take_a_trait_object_environment() {
    fn assert_send<T: Send>() {}
    assert_send::<Bus<Env>>();
    assert_send::<Bus<dyn TaskstatsSource>>();
    let mut bus: Bus<dyn TaskstatsSource> = Bus::new(1);
    let ts = bus.register_family(Box::new(TaskstatsFamily::new())).unwrap();
    let s = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 9).unwrap();
    let mut e = env();
    let env: &mut dyn TaskstatsSource = &mut e;
    bus.send(s, &request(ts, 1, 0, Command::Pid(42)).unwrap(), ROOT, env).unwrap();
    let d = bus.recv(s).unwrap().unwrap();
    assert_eq!(parse_taskstats_message(&d).unwrap().pid().unwrap().id, 42);
    // nr_cpus is clamped to 1..=64.
    assert_eq!(Bus::<Env>::new(0).nr_cpus(), 1);
    assert_eq!(Bus::<Env>::new(1000).nr_cpus(), 64);
}

/// The bytes of a NEW message as the bus built it before records were written in place:
/// every payload made first, then copied in with `put_bytes`.
fn reference_new(family: u16, seq: u32, portid: u32, aggrs: &[(AggrKind, u32, &StatsRecord)]) -> Vec<u8> {
    let mut b = MsgBuilder::genl(family, 0, seq, portid, TASKSTATS_CMD_NEW, TASKSTATS_GENL_VERSION);
    for &(kind, id, rec) in aggrs {
        let (nest, id_ty) = kind.types();
        b.nest_start(nest).put_u32(id_ty, id).put_bytes(TASKSTATS_TYPE_STATS, &rec.stats);
        if let Some(msa) = &rec.msa_ns {
            b.put_bytes(TASKSTATS_TYPE_MSA, msa);
        }
        b.nest_end();
    }
    b.finish().unwrap()
}

mod in_place {
    use super::*;
    use proptest::prelude::*;

    fn record() -> impl Strategy<Value = StatsRecord> {
        (prop::collection::vec(any::<u8>(), 0..800), prop::option::of(prop::collection::vec(any::<u8>(), 0..120)))
            .prop_map(|(stats, msa_ns)| StatsRecord { stats, msa_ns })
    }

    proptest! {
        /// A GET answered through the family (the source writing into the reply) is byte for
        /// byte the message the old path built from the same record.
        #[test]
        fn get_replies_match_the_copying_path(
            rec in record(),
            tgid in any::<bool>(),
            seq in any::<u32>(),
            id in 1u32..1000,
        ) {
            let (mut bus, s) = setup();
            let mut e = Env::default();
            let kind = if tgid { AggrKind::Tgid } else { AggrKind::Pid };
            if tgid { e.groups.insert(id, rec.clone()); } else { e.tasks.insert(id, rec.clone()); }
            let cmd = if tgid { Command::Tgid(id) } else { Command::Pid(id) };
            let req = ts_req(seq, 0, cmd);
            prop_assert_eq!(bus.send(s, &req, ROOT, &mut e), Ok(req.len()));
            let got = drain(&mut bus, s);
            let portid = bus.socket_stats(s).unwrap().portid;
            prop_assert_eq!(got, vec![reference_new(TS, seq, portid, &[(kind, id, &rec)])]);
        }

        /// Exit records likewise, with and without the group's record.
        #[test]
        fn exit_messages_match_the_copying_path(
            a in record(),
            b in record(),
            group in any::<bool>(),
            seq in any::<u32>(),
        ) {
            let msg = exit_message(TS, seq, 7, &a, group.then_some((5, &b))).unwrap();
            let mut aggrs = vec![(AggrKind::Pid, 7, &a)];
            if group { aggrs.push((AggrKind::Tgid, 5, &b)); }
            prop_assert_eq!(msg, reference_new(TS, seq, 0, &aggrs));
        }

        /// `last_attrs` finds what `attr` finds, type by type, in one pass.
        #[test]
        fn last_attrs_agrees_with_attr(types in prop::collection::vec(0u16..8, 0..12), max_attr in 0u16..8) {
            let mut b = MsgBuilder::new(TS, 0, 0, 0);
            for (i, &ty) in types.iter().enumerate() {
                b.put_u32(ty, i as u32);
            }
            let bytes = b.finish().unwrap();
            let attrs = &bytes[NLMSG_HDRLEN..];
            let req = Request {
                header: first_message(&bytes).unwrap().header,
                genl: GenlMsgHdr { cmd: 0, version: 0, reserved: 0 },
                user_hdr: &[],
                attrs,
                sender: ROOT,
                max_attr,
            };
            let all = req.last_attrs::<8>();
            for ty in 0..8u16 {
                prop_assert_eq!(all[usize::from(ty)], req.attr(ty), "type {}", ty);
            }
        }
    }

    /// A source that writes no STATS, or two, makes the request fail instead of sending a
    /// malformed record.
    #[test]
    fn a_source_must_write_one_stats() {
        struct Bad(u8);
        impl TaskstatsSource for Bad {
            fn pid_stats(&mut self, _: u32, out: &mut RecordOut<'_>) -> Result<(), i32> {
                for _ in 0..self.0 {
                    out.stats(4, |b| b.fill(1));
                }
                Ok(())
            }
            fn tgid_stats(&mut self, _: u32, _: &mut RecordOut<'_>) -> Result<(), i32> {
                Ok(())
            }
        }
        for n in [0u8, 2] {
            let mut bus: Bus<Bad> = Bus::new(1);
            bus.register_family(Box::new(TaskstatsFamily::new())).unwrap();
            let s = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 1).unwrap();
            let req = ts_req(3, 0, Command::Pid(1));
            assert_eq!(bus.send(s, &req, ROOT, &mut Bad(n)), Ok(req.len()));
            let mut replies = Vec::new();
            while let Ok(Some(d)) = bus.recv(s) {
                replies.push(d);
            }
            assert_eq!(replies.len(), 1);
            assert_eq!(errno_of(&replies[0]), EINVAL);
        }
    }
}

/// A reply built in a recycled buffer — one that held a longer or a shorter datagram — is
/// byte for byte the one built in a fresh allocation.
#[test]
fn replies_in_recycled_buffers_are_the_same_bytes() {
    let (mut bus, s) = setup();
    let get = ts_req(5, 0, Command::Pid(42));
    let fresh = send(&mut bus, s, &get, ROOT);
    assert_eq!(fresh.len(), 1);
    for old in [vec![0xeeu8; 1500], vec![0x11u8; 3], vec![0x22; crate::bus::SPARE_CAPACITY + 1]] {
        bus.recycle(old);
        bus.recycle(vec![0x33; 900]);
        bus.recycle(vec![0x44; 10]); // beyond SPARE_BUFFERS: freed
        for _ in 0..4 {
            let again = send(&mut bus, s, &get, ROOT);
            assert_eq!(again, fresh);
            for d in again {
                bus.recycle(d);
            }
        }
    }
}

/// `recv_copy` hands over exactly what `recv` would, dequeues only what the reader took,
/// and keeps the socket's counters as `recv` does.
#[test]
fn recv_copy_takes_what_recv_would() {
    let (mut bus, s) = setup();
    let get = ts_req(5, 0, Command::Pid(42));
    let mut e = env();
    bus.send(s, &get, ROOT, &mut e).unwrap();
    bus.send(s, &ts_req(6, 0, Command::Pid(7)), ROOT, &mut e).unwrap(); // ESRCH error reply
    let mut seen = Vec::new();
    assert_eq!(
        bus.recv_copy(s, |d| {
            seen = d.to_vec();
            false
        }),
        Ok(None)
    );
    assert_eq!(bus.socket_stats(s).unwrap().queued, 2, "declined: nothing dequeued");
    let mut got = Vec::new();
    assert_eq!(
        bus.recv_copy(s, |d| {
            got = d.to_vec();
            true
        }),
        Ok(Some(got.len()))
    );
    assert_eq!(got, seen);
    assert_eq!(first_message(&got).unwrap().header.nlmsg_seq, 5);
    let rest = drain(&mut bus, s);
    assert_eq!(rest.len(), 1);
    assert_eq!(errno_of(&rest[0]), ESRCH);
    let st = bus.socket_stats(s).unwrap();
    assert_eq!((st.received, st.queued), (2, 0));
    assert_eq!(bus.recv_copy(s, |_| true), Ok(None));
}

/// A record whose STATS is a whole `struct taskstats` (what the kernel sends).
fn taskstats_rec(flag: u8) -> StatsRecord {
    let t = Taskstats { version: TASKSTATS_VERSION, ac_flag: flag, ac_pid: 7, ac_utime: 1234, ..Taskstats::zeroed() };
    StatsRecord { stats: t.to_bytes().to_vec(), msa_ns: Some((0..13u64).flat_map(|i| (i * 7).to_le_bytes()).collect()) }
}

#[test]
fn a_one_thread_process_record_is_the_thread_record_copied_with_agroup() {
    let thread = taskstats_rec(AFORK);
    let process = taskstats_rec(AFORK | AGROUP);
    let written = exit_message(TS, 3, 7, &thread, Some((7, &process))).unwrap();
    let copied =
        crate::taskstats::exit_message_in(vec![0xee; 5], TS, 3, 7, &thread, Some((7, GroupRecord::ThreadsOwn)))
            .unwrap();
    assert_eq!(copied, written, "byte for byte the message with the process record written out");
    let m = parse_taskstats_message(&copied).unwrap();
    let tgid = m.tgid().unwrap();
    assert_eq!((tgid.id, Taskstats::from_bytes(tgid.stats).unwrap().ac_flag), (7, AFORK | AGROUP));
    // A STATS too short to hold `ac_flag` cannot be patched: an error, not a wrong record.
    let short = StatsRecord { stats: vec![1; 8], msa_ns: None };
    let e = crate::taskstats::exit_message_in(Vec::new(), TS, 3, 7, &short, Some((7, GroupRecord::ThreadsOwn)));
    assert_eq!(e, Err(EINVAL));
}

#[test]
fn an_owned_message_goes_to_the_last_listener_and_copies_to_the_others() {
    let (mut bus, a) = setup();
    let b = bus.open(AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, 300).unwrap();
    for s in [a, b] {
        send(&mut bus, s, &ts_req(1, 0, Command::RegisterCpumask("0")), ROOT);
    }
    let msg = exit_message(TS, 0, 1, &rec(1, true), None).unwrap();
    let buf = bus.spare_buffer();
    assert!(buf.is_empty());
    let d = bus.deliver_owned_to_cpu_listeners(TS, 0, msg.clone());
    assert_eq!((d.delivered_to.to_vec(), d.dropped), (vec![a, b], 0));
    for s in [a, b] {
        assert_eq!(bus.recv(s).unwrap().unwrap(), msg);
    }
    // A received datagram's buffer given back is the next spare one.
    bus.recycle(msg);
    assert!(bus.spare_buffer().capacity() > 0);
}

/// A `SockList` keeps its first two entries in place and moves to the heap at the third,
/// in push order either way.
#[test]
fn sock_list_keeps_order_past_its_inline_two() {
    let ids: Vec<SockId> = (0..5).map(|i| SockId::new(i, 1)).collect();
    let mut l = SockList::default();
    assert!(l.is_empty());
    for (n, &s) in ids.iter().enumerate() {
        l.push(s);
        assert_eq!(l, ids[..=n].to_vec());
        assert_eq!(l.len(), n + 1);
    }
    assert_eq!(l.clone().into_iter().collect::<Vec<_>>(), ids);
    assert_eq!((&l).into_iter().copied().collect::<Vec<_>>(), ids);
}
