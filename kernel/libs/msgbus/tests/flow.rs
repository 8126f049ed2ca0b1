//! Flow control under random operation sequences: multicast exit records (and exit
//! messages that could not be built, counted as drops at each listener), requests,
//! receives, buffer resizing, (de)registration, closing and reopening. After every step,
//! for every socket, `produced == delivered + dropped` and `delivered == received + queued`;
//! `ENOBUFS` is reported exactly once per run of drops, before the queued data; a closed
//! socket leaves no listener behind.

mod common;

use common::{check_datagram, FakeEnv, TS};
use proptest::prelude::*;
use tally_msgbus::taskstats::{request, Command};
use tally_msgbus::{exit_message, Bus, Sender, SockId, StatsRecord, TaskstatsFamily};
use tally_uapi::errno::ENOBUFS;
use tally_uapi::netlink::*;

const NR_SOCKS: usize = 3;
const ROOT: Sender = Sender { pid: 1, tgid: 1, uid: 0 };

#[derive(Clone, Debug)]
enum Op {
    Exit {
        cpu: u32,
        size: usize,
        group: bool,
    },
    /// An exit whose message could not be built: a counted drop at each listener.
    Lost {
        cpu: u32,
    },
    Recv(usize),
    SetRcvbuf(usize, u32),
    Request(usize, u32, bool),
    Register(usize, u8),
    Deregister(usize, u8),
    Reopen(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let sock = 0..NR_SOCKS;
    prop_oneof![
        6 => (0..5u32, 0..1500usize, any::<bool>()).prop_map(|(cpu, size, group)| Op::Exit { cpu, size, group }),
        1 => (0..5u32).prop_map(|cpu| Op::Lost { cpu }),
        5 => sock.clone().prop_map(Op::Recv),
        1 => (sock.clone(), prop_oneof![Just(0u32), 2000..6000u32, any::<u32>()])
            .prop_map(|(s, b)| Op::SetRcvbuf(s, b)),
        2 => (sock.clone(), 0..8u32, any::<bool>()).prop_map(|(s, p, a)| Op::Request(s, p, a)),
        2 => (sock.clone(), 1..16u8).prop_map(|(s, m)| Op::Register(s, m)),
        1 => (sock.clone(), 1..16u8).prop_map(|(s, m)| Op::Deregister(s, m)),
        1 => sock.prop_map(Op::Reopen),
    ]
}

/// What the test expects of one socket.
#[derive(Clone, Copy, Default)]
struct Model {
    enobufs_pending: bool,
    dropped: u64,
    mask: u64,
}

fn mask_str(m: u8) -> String {
    tally_msgbus::cpumask::format_cpulist(u64::from(m))
}

fn check(bus: &Bus<FakeEnv>, socks: &[SockId], models: &mut [Model]) -> Result<(), TestCaseError> {
    for (s, m) in socks.iter().zip(models.iter_mut()) {
        let st = bus.socket_stats(*s).unwrap();
        prop_assert_eq!(st.produced, st.delivered + st.dropped);
        prop_assert_eq!(st.delivered, st.received + st.queued);
        if st.dropped > m.dropped {
            m.enobufs_pending = true;
            m.dropped = st.dropped;
        }
        prop_assert_eq!(bus.listener_mask(TS, *s), m.mask);
        prop_assert!(st.queued_bytes <= st.rcvbuf.max(st.queued_bytes)); // queued may exceed a shrunk buffer
    }
    let union = models.iter().fold(0, |u, m| u | m.mask);
    for cpu in 0..5 {
        prop_assert_eq!(bus.has_listeners(TS, cpu), union & (1 << cpu) != 0);
    }
    let b = bus.stats();
    prop_assert_eq!(b.multicast_produced, b.multicast_delivered + b.multicast_dropped);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn nothing_is_lost_uncounted(ops in proptest::collection::vec(op(), 1..80)) {
        let mut bus: Bus<FakeEnv> = Bus::new(4);
        bus.register_family(Box::new(TaskstatsFamily::new())).unwrap();
        let mut env = FakeEnv::new();
        let mut socks: Vec<SockId> =
            (0..NR_SOCKS).map(|i| bus.open(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, 10 + i as u32).unwrap()).collect();
        for s in &socks {
            bus.set_rcvbuf(*s, 3000).unwrap();
        }
        let mut models = [Model::default(); NR_SOCKS];
        let mut multicast_seen = 0u64;

        for op in ops {
            match op {
                Op::Exit { cpu, size, group } => {
                    let has = bus.has_listeners(TS, cpu);
                    let rec = StatsRecord { stats: vec![7; size], msa_ns: None };
                    let seq = bus.next_exit_seq(TS, cpu);
                    let msg = exit_message(TS, seq, 5, &rec, group.then_some((5, &rec))).unwrap();
                    let d = bus.deliver_to_cpu_listeners(TS, cpu, &msg);
                    let expected: Vec<SockId> = socks.iter().zip(&models)
                        .filter(|(_, m)| cpu < 64 && m.mask & (1 << cpu) != 0).map(|(s, _)| *s).collect();
                    let mut got: Vec<SockId> = d.delivered_to.iter().chain(&d.dropped_at).copied().collect();
                    got.sort();
                    let mut want = expected.clone();
                    want.sort();
                    prop_assert_eq!(got, want);
                    prop_assert_eq!(has, !expected.is_empty());
                    prop_assert_eq!(d.dropped as usize, d.dropped_at.len());
                    multicast_seen += expected.len() as u64;
                }
                Op::Lost { cpu } => {
                    let d = bus.drop_at_cpu_listeners(TS, cpu);
                    let expected: Vec<SockId> = socks.iter().zip(&models)
                        .filter(|(_, m)| cpu < 64 && m.mask & (1 << cpu) != 0).map(|(s, _)| *s).collect();
                    prop_assert!(d.delivered_to.is_empty());
                    let mut got = d.dropped_at.clone();
                    got.sort();
                    let mut want = expected.clone();
                    want.sort();
                    prop_assert_eq!(got, want);
                    prop_assert_eq!(d.dropped as usize, d.dropped_at.len());
                    multicast_seen += expected.len() as u64;
                }
                Op::Recv(i) => {
                    let r = bus.recv(socks[i]);
                    if models[i].enobufs_pending {
                        prop_assert_eq!(r, Err(ENOBUFS));
                        models[i].enobufs_pending = false;
                    } else {
                        let r = r.unwrap();
                        if let Some(d) = r {
                            let pid = tally_msgbus::msg::first_message(&d).unwrap().header.nlmsg_pid;
                            let portid = bus.portid(socks[i]).unwrap();
                            prop_assert!(pid == 0 || pid == portid);
                            check_datagram(&d, pid).map_err(TestCaseError::fail)?;
                        }
                    }
                }
                Op::SetRcvbuf(i, b) => {
                    bus.set_rcvbuf(socks[i], b).unwrap();
                    prop_assert_eq!(bus.rcvbuf(socks[i]).unwrap(), b.clamp(MIN_RCVBUF, MAX_RCVBUF));
                }
                Op::Request(i, pid, ack) => {
                    let req = request(TS, 1, if ack { NLM_F_ACK } else { 0 }, Command::Pid(pid)).unwrap();
                    prop_assert_eq!(bus.send(socks[i], &req, ROOT, &mut env), Ok(req.len()));
                }
                Op::Register(i, m) => {
                    let req = request(TS, 1, 0, Command::RegisterCpumask(&mask_str(m))).unwrap();
                    bus.send(socks[i], &req, ROOT, &mut env).unwrap();
                    models[i].mask |= u64::from(m) & 0xf;
                }
                Op::Deregister(i, m) => {
                    let req = request(TS, 1, 0, Command::DeregisterCpumask(&mask_str(m))).unwrap();
                    bus.send(socks[i], &req, ROOT, &mut env).unwrap();
                    models[i].mask &= !u64::from(m);
                }
                Op::Reopen(i) => {
                    let st = bus.close(socks[i]).unwrap();
                    prop_assert_eq!(st.produced, st.delivered + st.dropped);
                    prop_assert_eq!(bus.socket_stats(socks[i]).err(), Some(tally_uapi::errno::EBADF));
                    socks[i] = bus.open(AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, 0).unwrap();
                    bus.set_rcvbuf(socks[i], 3000).unwrap();
                    models[i] = Model::default();
                }
            }
            check(&bus, &socks, &mut models)?;
        }
        prop_assert_eq!(bus.stats().multicast_produced, multicast_seen);
        // Draining: ENOBUFS at most once, then every queued datagram, then nothing.
        for (i, s) in socks.iter().enumerate() {
            if models[i].enobufs_pending {
                prop_assert_eq!(bus.recv(*s), Err(ENOBUFS));
            }
            let queued = bus.socket_stats(*s).unwrap().queued;
            for _ in 0..queued {
                prop_assert!(bus.recv(*s).unwrap().is_some());
            }
            prop_assert_eq!(bus.recv(*s), Ok(None));
            prop_assert!(!bus.has_data(*s));
            let st = bus.socket_stats(*s).unwrap();
            prop_assert_eq!(st.delivered, st.received);
        }
    }
}
