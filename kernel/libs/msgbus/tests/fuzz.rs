//! Fuzzing `Bus::send` (and the decoders) with proptest: random bytes, mutilated valid
//! messages, random attribute soups and deep nests. Whatever comes in, nothing panics, and
//! every datagram the bus queues in answer is itself a well-formed message.

mod common;

use common::{check_datagram, FakeEnv, TS};
use proptest::prelude::*;
use proptest::sample::Index;
use tally_msgbus::msg::MsgBuilder;
use tally_msgbus::taskstats::{request, Command};
use tally_msgbus::{cpumask, ctrl, parse_taskstats_message, Bus, Sender, SockId, TaskstatsFamily};
use tally_uapi::errno::EINVAL;
use tally_uapi::netlink::*;
use tally_uapi::taskstats::*;

fn bus() -> (Bus<FakeEnv>, SockId) {
    let mut bus: Bus<FakeEnv> = Bus::new(4);
    assert_eq!(bus.register_family(Box::new(TaskstatsFamily::new())), Ok(TS));
    let s = bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 77).unwrap();
    (bus, s)
}

/// Sends `bytes`, then checks the outcome, every queued datagram, and the counters.
fn run(bytes: &[u8], uid: u32) -> Result<(), TestCaseError> {
    let (mut bus, s) = bus();
    let mut env = FakeEnv::new();
    let sender = Sender { pid: 77, tgid: 77, uid };
    let r = bus.send(s, bytes, sender, &mut env);
    if bytes.len() < NLMSG_HDRLEN {
        prop_assert_eq!(r, Err(EINVAL));
    } else {
        prop_assert_eq!(r, Ok(bytes.len()));
    }
    let portid = bus.portid(s).unwrap();
    let mut n = 0u64;
    while let Ok(Some(d)) = bus.recv(s) {
        if let Err(why) = check_datagram(&d, portid) {
            return Err(TestCaseError::fail(format!("{why}\nreply {d:02x?}\nrequest {bytes:02x?}")));
        }
        n += 1;
    }
    let st = bus.socket_stats(s).unwrap();
    prop_assert_eq!(st.produced, st.delivered + st.dropped);
    prop_assert_eq!(st.delivered, st.received + st.queued);
    prop_assert_eq!(st.received, n);
    let bs = bus.stats();
    prop_assert_eq!(bs.replies + bs.errors_replied + bs.acks, st.produced);
    // Messages ignored or handled, at most one per 16 bytes.
    prop_assert!((bs.requests + bs.ignored) * 16 <= bytes.len() as u64);
    Ok(())
}

/// Valid requests to start mutating from.
fn seeds() -> Vec<Vec<u8>> {
    let mut v = vec![
        ctrl::getfamily_request(1, "TASKSTATS").unwrap(),
        ctrl::getfamily_request(2, "nlctrl").unwrap(),
        request(TS, 3, 0, Command::Pid(1)).unwrap(),
        request(TS, 4, NLM_F_ACK, Command::Pid(2)).unwrap(),
        request(TS, 5, 0, Command::Tgid(3)).unwrap(),
        request(TS, 6, NLM_F_ACK, Command::RegisterCpumask("0-2,3")).unwrap(),
        request(TS, 7, 0, Command::DeregisterCpumask("1")).unwrap(),
        request(TS, 8, 0, Command::Pid(99)).unwrap(),
    ];
    let mut b = MsgBuilder::genl(GENL_ID_CTRL, NLM_F_REQUEST, 9, 0, CTRL_CMD_GETFAMILY, 1);
    b.put_u16(CTRL_ATTR_FAMILY_ID, TS);
    v.push(b.finish().unwrap());
    let mut b = MsgBuilder::genl(TS, NLM_F_REQUEST | NLM_F_ACK, 10, 0, TASKSTATS_CMD_GET, 1);
    b.nest_start(NLA_F_NESTED | 9).put_u32(1, 5).nest_start(NLA_F_NESTED | 2).put_u8(3, 1).nest_end().nest_end();
    b.put_u32(TASKSTATS_CMD_ATTR_PID, 4);
    v.push(b.finish().unwrap());
    v
}

#[derive(Clone, Debug)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    SetU16(Index, u16),
    SetU32(Index, u32),
    Insert(Index, Vec<u8>),
    Remove(Index, usize),
    Duplicate,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), 1..=255u8).prop_map(|(i, x)| Mutation::Flip(i, x)),
        // Lengths are where parsers go wrong: favour small and boundary values.
        (any::<Index>(), prop_oneof![0..64u16, Just(u16::MAX), any::<u16>()]).prop_map(|(i, v)| Mutation::SetU16(i, v)),
        (any::<Index>(), prop_oneof![0..128u32, Just(u32::MAX), any::<u32>()])
            .prop_map(|(i, v)| Mutation::SetU32(i, v)),
        (any::<Index>(), proptest::collection::vec(any::<u8>(), 1..12)).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<Index>(), 1..8usize).prop_map(|(i, n)| Mutation::Remove(i, n)),
        Just(Mutation::Duplicate),
    ]
}

fn apply(buf: &mut Vec<u8>, m: &Mutation) {
    if buf.is_empty() {
        return;
    }
    match m {
        Mutation::Truncate(i) => buf.truncate(i.index(buf.len())),
        Mutation::Flip(i, x) => {
            let i = i.index(buf.len());
            buf[i] ^= x;
        }
        Mutation::SetU16(i, v) => {
            let i = i.index(buf.len());
            for (k, b) in v.to_le_bytes().iter().enumerate() {
                if let Some(slot) = buf.get_mut(i + k) {
                    *slot = *b;
                }
            }
        }
        Mutation::SetU32(i, v) => {
            let i = i.index(buf.len());
            for (k, b) in v.to_le_bytes().iter().enumerate() {
                if let Some(slot) = buf.get_mut(i + k) {
                    *slot = *b;
                }
            }
        }
        Mutation::Insert(i, bytes) => {
            let i = i.index(buf.len() + 1);
            buf.splice(i..i, bytes.iter().copied());
        }
        Mutation::Remove(i, n) => {
            let i = i.index(buf.len());
            let end = (i + n).min(buf.len());
            buf.drain(i..end);
        }
        Mutation::Duplicate => {
            let copy = buf.clone();
            buf.extend_from_slice(&copy);
        }
    }
}

/// A raw attribute: type, payload, and possibly a lying length.
fn raw_attr() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![0..8u16, Just(NLA_F_NESTED | 3), Just(0x4d), any::<u16>()],
        proptest::collection::vec(any::<u8>(), 0..24),
        prop_oneof![4 => Just(None), 1 => any::<u16>().prop_map(Some)],
    )
        .prop_map(|(ty, payload, lie)| {
            let len = lie.unwrap_or((payload.len() + 4) as u16);
            let mut v = Vec::new();
            v.extend_from_slice(&len.to_le_bytes());
            v.extend_from_slice(&ty.to_le_bytes());
            v.extend_from_slice(&payload);
            while v.len() % 4 != 0 {
                v.push(0);
            }
            v
        })
}

/// A chain of `depth` nests around `inner`, each possibly with a wrong length.
fn deep_nest(depth: usize, flagged: bool, corrupt_at: Option<usize>, delta: i32) -> Vec<u8> {
    let mut v = {
        let mut a = vec![8, 0, 1, 0];
        a.extend_from_slice(&2u32.to_le_bytes());
        a
    };
    for level in 0..depth {
        let mut len = (v.len() + 4) as i32;
        if corrupt_at == Some(level) {
            len += delta;
        }
        let ty = if flagged { NLA_F_NESTED | 5 } else { 5 };
        let mut outer = Vec::new();
        outer.extend_from_slice(&(len.clamp(0, 0xffff) as u16).to_le_bytes());
        outer.extend_from_slice(&ty.to_le_bytes());
        outer.extend_from_slice(&v);
        v = outer;
    }
    v
}

fn wrap(ty: u16, flags: u16, cmd: u8, attrs: &[u8]) -> Vec<u8> {
    let mut b = MsgBuilder::genl(ty, flags, 42, 0, cmd, 1);
    b.put_raw(attrs);
    b.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300), admin in any::<bool>()) {
        run(&bytes, if admin { 0 } else { 1000 })?;
        let _ = parse_taskstats_message(&bytes);
        let _ = ctrl::parse_family_reply(&bytes);
        let _ = cpumask::parse_cpulist(&bytes, 64);
    }

    #[test]
    fn random_bytes_behind_a_valid_header(
        ty in prop_oneof![Just(GENL_ID_CTRL), Just(TS), any::<u16>()],
        flags in prop_oneof![Just(NLM_F_REQUEST), Just(NLM_F_REQUEST | NLM_F_ACK), any::<u16>()],
        body in proptest::collection::vec(any::<u8>(), 0..200),
        admin in any::<bool>(),
    ) {
        let mut b = MsgBuilder::new(ty, flags, 1, 0);
        b.put_raw(&body);
        run(&b.finish().unwrap(), if admin { 0 } else { 1000 })?;
    }

    #[test]
    fn mutated_valid_messages(
        picks in proptest::collection::vec(any::<Index>(), 1..4),
        muts in proptest::collection::vec(mutation(), 0..6),
        admin in any::<bool>(),
    ) {
        let seeds = seeds();
        let mut buf: Vec<u8> = picks.iter().flat_map(|i| i.get(&seeds).clone()).collect();
        for m in &muts {
            apply(&mut buf, m);
        }
        run(&buf, if admin { 0 } else { 1000 })?;
        let _ = parse_taskstats_message(&buf);
        let _ = ctrl::parse_family_reply(&buf);
    }

    #[test]
    fn attribute_soup(
        ty in prop_oneof![Just(GENL_ID_CTRL), Just(TS)],
        cmd in prop_oneof![Just(CTRL_CMD_GETFAMILY), Just(TASKSTATS_CMD_GET), any::<u8>()],
        attrs in proptest::collection::vec(raw_attr(), 0..6),
        tail in proptest::collection::vec(any::<u8>(), 0..4),
    ) {
        let mut a: Vec<u8> = attrs.concat();
        a.extend_from_slice(&tail);
        run(&wrap(ty, NLM_F_REQUEST | NLM_F_ACK, cmd, &a), 0)?;
    }

    #[test]
    fn deep_nesting(
        depth in 0..40usize,
        flagged in any::<bool>(),
        corrupt_at in proptest::option::of(0..40usize),
        delta in -12..12i32,
        with_pid in any::<bool>(),
    ) {
        let mut a = deep_nest(depth, flagged, corrupt_at, delta);
        if with_pid {
            a.extend_from_slice(&[8, 0, 1, 0, 1, 0, 0, 0]);
        }
        run(&wrap(TS, NLM_F_REQUEST | NLM_F_ACK, TASKSTATS_CMD_GET, &a), 0)?;
        // The decoder walks nests it knows (AGGR_TGID is 5) whatever their depth.
        let _ = parse_taskstats_message(&wrap(TS, 0, TASKSTATS_CMD_NEW, &a));
    }

    #[test]
    fn cpulists(s in "[0-9, \\-\n\t]{0,24}", nr in 0..70u32) {
        if let Ok(mask) = cpumask::parse_cpulist(s.as_bytes(), nr) {
            prop_assert!(mask != 0);
            prop_assert!(nr >= 64 || mask >> nr == 0);
            let again = cpumask::format_cpulist(mask);
            prop_assert_eq!(cpumask::parse_cpulist(again.as_bytes(), nr), Ok(mask));
        }
    }

    #[test]
    fn decoder_round_trips_exit_messages(
        pid in any::<u32>(),
        stats in proptest::collection::vec(any::<u8>(), 0..500),
        msa in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..120)),
        tgid in proptest::option::of(any::<u32>()),
        seq in any::<u32>(),
    ) {
        let rec = tally_msgbus::StatsRecord { stats: stats.clone(), msa_ns: msa.clone() };
        let msg = tally_msgbus::exit_message(TS, seq, pid, &rec, tgid.map(|t| (t, &rec))).unwrap();
        check_datagram(&msg, 0).map_err(TestCaseError::fail)?;
        let m = parse_taskstats_message(&msg).unwrap();
        prop_assert_eq!(m.header.nlmsg_seq, seq);
        prop_assert_eq!(m.records.len(), 1 + usize::from(tgid.is_some()));
        prop_assert_eq!(m.records[0].id, pid);
        prop_assert_eq!(m.records[0].stats, &stats[..]);
        prop_assert_eq!(m.records[0].msa, msa.as_deref());
        if let Some(t) = tgid {
            prop_assert_eq!(m.records[1].id, t);
        }
    }
}
