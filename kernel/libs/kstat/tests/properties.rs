//! Property tests: the queue statistics against a brute-force integral, the timer against
//! a model, the registry's KID/KCID rules, every ABI record's byte round trip, the glob
//! matcher against a naive one, and "no input panics".

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use tally_kstat::{IoStats, KstatError, KstatRegistry, QueueIntegrator, TimerStats};
use tally_uapi::kstat::*;

// ---------------------------------------------------------------------------------------
// I/O queues
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Op {
    WaitEnter,
    WaitExit,
    RunEnter,
    RunExit,
    WaitToRun,
    RunToWait,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::WaitEnter),
        Just(Op::WaitExit),
        Just(Op::RunEnter),
        Just(Op::RunExit),
        Just(Op::WaitToRun),
        Just(Op::RunToWait),
    ]
}

/// Queue length at every nanosecond of `[0, end)`, given the lengths set at event times
/// (several events may share a time; the last one wins). Returns (∫len, busy time).
fn brute_force(events: &[(i64, i64)], end: i64) -> (i64, i64) {
    let (mut integral, mut busy) = (0, 0);
    for tick in 0..end {
        let len = events.iter().rev().find(|(t, _)| *t <= tick).map_or(0, |e| e.1);
        assert!(len >= 0, "the model never goes negative");
        integral += len;
        busy += i64::from(len > 0);
    }
    (integral, busy)
}

proptest! {
    #[test]
    fn io_queues_match_brute_force_integral(
        start in 0i64..50,
        steps in prop::collection::vec((0i64..20, op()), 0..60),
        tail in 0i64..30,
    ) {
        let mut io = IoStats::new();
        let (mut w, mut r) = (0i64, 0i64);
        let (mut w_under, mut r_under) = (0u64, 0u64);
        let (mut w_events, mut r_events) = (vec![], vec![]);
        let mut now = start;
        for (dt, op) in steps {
            now += dt;
            let res = match op {
                Op::WaitEnter => io.waitq_enter(now),
                Op::WaitExit => io.waitq_exit(now),
                Op::RunEnter => io.runq_enter(now),
                Op::RunExit => io.runq_exit(now),
                Op::WaitToRun => io.waitq_to_runq(now),
                Op::RunToWait => io.runq_back_to_waitq(now),
            };
            // The model: independent bookkeeping of what should be accepted.
            let accepted = match op {
                Op::WaitEnter => { w += 1; true }
                Op::RunEnter => { r += 1; true }
                Op::WaitExit if w > 0 => { w -= 1; true }
                Op::RunExit if r > 0 => { r -= 1; true }
                Op::WaitToRun if w > 0 => { w -= 1; r += 1; true }
                Op::RunToWait if r > 0 => { r -= 1; w += 1; true }
                Op::WaitExit | Op::WaitToRun => { w_under += 1; false }
                Op::RunExit | Op::RunToWait => { r_under += 1; false }
            };
            prop_assert_eq!(res.is_ok(), accepted);
            if !accepted {
                prop_assert_eq!(res, Err(KstatError::QueueUnderflow));
            }
            w_events.push((now, w));
            r_events.push((now, r));
            let k = io.kstat_io();
            prop_assert_eq!((i64::from(k.wcnt), i64::from(k.rcnt)), (w, r));
        }
        prop_assert_eq!(io.waitq().underflows(), w_under);
        prop_assert_eq!(io.runq().underflows(), r_under);
        prop_assert_eq!(io.waitq().clock_regressions() + io.runq().clock_regressions(), 0);

        // Stored sums run to each queue's last change; the brute force to the same point.
        let k = io.kstat_io();
        prop_assert_eq!((k.wlentime, k.wtime), brute_force(&w_events, k.wlastupdate));
        prop_assert_eq!((k.rlentime, k.rtime), brute_force(&r_events, k.rlastupdate));

        // A snapshot later on folds the open intervals in.
        let end = now + tail;
        let s = io.snapshot(end);
        prop_assert_eq!((s.wlentime, s.wtime), brute_force(&w_events, end));
        prop_assert_eq!((s.rlentime, s.rtime), brute_force(&r_events, end));
        prop_assert_eq!((s.wlastupdate, s.rlastupdate), (end.max(k.wlastupdate), end.max(k.rlastupdate)));
        prop_assert_eq!((s.wcnt, s.rcnt), (k.wcnt, k.rcnt));
    }

    #[test]
    fn set_cnt_matches_brute_force(
        steps in prop::collection::vec((0i64..25, 0u32..6), 0..40),
    ) {
        let mut q = QueueIntegrator::new();
        let mut events = vec![];
        let mut now = 0;
        for (dt, len) in steps {
            now += dt;
            q.set_cnt(now, len);
            events.push((now, i64::from(len)));
        }
        prop_assert_eq!((q.lentime(), q.time()), brute_force(&events, q.lastupdate()));
        let s = q.settled(now + 9);
        prop_assert_eq!((s.lentime(), s.time()), brute_force(&events, now + 9));
    }

    /// Arbitrary (even decreasing) times never panic, never add negative area.
    #[test]
    fn io_queues_survive_any_times(
        steps in prop::collection::vec((any::<i64>(), op()), 0..40),
    ) {
        let mut io = IoStats::new();
        for (now, op) in steps {
            let _ = match op {
                Op::WaitEnter => io.waitq_enter(now),
                Op::WaitExit => io.waitq_exit(now),
                Op::RunEnter => io.runq_enter(now),
                Op::RunExit => io.runq_exit(now),
                Op::WaitToRun => io.waitq_to_runq(now),
                Op::RunToWait => io.runq_back_to_waitq(now),
            };
            let k = io.kstat_io();
            prop_assert!(k.wlastupdate >= 0 && k.rlastupdate >= 0);
        }
        let _ = io.snapshot(i64::MIN);
        let _ = io.snapshot(i64::MAX);
    }
}

// ---------------------------------------------------------------------------------------
// Timers
// ---------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn timer_matches_model(steps in prop::collection::vec((0i64..50, any::<bool>()), 0..60)) {
        let mut ts = TimerStats::new(1).unwrap();
        ts.timer_init(0, "ev").unwrap();
        let mut now = 0;
        let mut started: Option<i64> = None;
        let mut durations = vec![];
        let mut rejected = 0;
        for (dt, is_start) in steps {
            now += dt;
            if is_start {
                ts.start(0, now).unwrap();
                started = Some(now);
            } else {
                match started.take() {
                    Some(s) => { ts.stop(0, now).unwrap(); durations.push(now - s); }
                    None => { prop_assert_eq!(ts.stop(0, now), Err(KstatError::TimerNotStarted)); rejected += 1; }
                }
            }
        }
        let t = ts.get(0).unwrap();
        prop_assert_eq!(t.num_events, durations.len() as u64);
        prop_assert_eq!(t.elapsed_time, durations.iter().sum::<i64>());
        prop_assert_eq!(t.min_time, durations.iter().copied().min().unwrap_or(0));
        prop_assert_eq!(t.max_time, durations.iter().copied().max().unwrap_or(0));
        prop_assert_eq!(ts.rejected(), rejected);
    }
}

// ---------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum RegOp {
    Create { m: usize, i: i32, n: usize, ty: u8 },
    Delete(usize),
    Install(usize),
    DeleteBogus(i64),
}

fn reg_op() -> impl Strategy<Value = RegOp> {
    prop_oneof![
        4 => (0usize..3, 0i32..3, 0usize..3, 0u8..6).prop_map(|(m, i, n, ty)| RegOp::Create { m, i, n, ty }),
        2 => any::<usize>().prop_map(RegOp::Delete),
        1 => any::<usize>().prop_map(RegOp::Install),
        1 => any::<i64>().prop_map(RegOp::DeleteBogus),
    ]
}

const MODULES: [&str; 3] = ["sched", "sd", "unix"];
const NAMES: [&str; 3] = ["runq", "sd0", "kstat_types"];

proptest! {
    #[test]
    fn registry_kids_and_kcid(ops in prop::collection::vec(reg_op(), 0..50)) {
        let mut reg = KstatRegistry::new(0);
        // Model: live kstats by name, plus the system ones.
        let mut live: BTreeMap<(usize, i32, usize), KidT> = BTreeMap::new();
        let mut installed: BTreeSet<KidT> = [0, 1].into();
        let mut all_kids: Vec<KidT> = vec![];
        let mut deleted: Vec<KidT> = vec![];
        for (step, op) in ops.into_iter().enumerate() {
            let before = reg.chain_id();
            let changed = match op {
                RegOp::Create { m, i, n, ty } => {
                    let res = reg.create(MODULES[m], i, NAMES[n], "misc", ty, 1, step as i64);
                    let system = MODULES[m] == "unix" && i == 0 && NAMES[n] == "kstat_types";
                    let expect_ok = ty < 5 && !live.contains_key(&(m, i, n)) && !system;
                    prop_assert_eq!(res.is_ok(), expect_ok, "{:?}", res);
                    if let Ok(kid) = res {
                        prop_assert_eq!(kid, before, "a new KID is the KCID before the bump");
                        prop_assert!(all_kids.last().map_or(kid > 1, |&last| kid > last));
                        all_kids.push(kid);
                        live.insert((m, i, n), kid);
                        prop_assert!(!reg.get(kid).unwrap().is_installed());
                    }
                    res.is_ok()
                }
                RegOp::Delete(pick) if !live.is_empty() => {
                    let key = *live.keys().nth(pick % live.len()).unwrap();
                    let kid = live.remove(&key).unwrap();
                    reg.delete(kid).unwrap();
                    installed.remove(&kid);
                    deleted.push(kid);
                    true
                }
                RegOp::Install(pick) if !live.is_empty() => {
                    let kid = *live.values().nth(pick % live.len()).unwrap();
                    reg.install(kid).unwrap();
                    installed.insert(kid);
                    false
                }
                RegOp::Delete(_) | RegOp::Install(_) => false,
                RegOp::DeleteBogus(kid) => {
                    let known = live.values().any(|&k| k == kid) || kid == 1 && !deleted.contains(&1);
                    if known { false } else {
                        prop_assert!(reg.delete(kid).is_err());
                        false
                    }
                }
            };
            // KCID: +1 on every successful create or delete, otherwise unchanged.
            prop_assert_eq!(reg.chain_id(), before + i64::from(changed));

            // Lookups agree with the model, including after deletes.
            for (m, module) in MODULES.iter().enumerate() {
                for i in 0..3 {
                    for (n, name) in NAMES.iter().enumerate() {
                        let want = live.get(&(m, i, n)).copied().or_else(|| {
                            (*module == "unix" && i == 0 && *name == "kstat_types").then_some(1)
                        });
                        prop_assert_eq!(reg.lookup(module, i, name), want);
                    }
                }
            }
            for &kid in &deleted {
                prop_assert!(reg.get(kid).is_none());
            }
            // The chain: KIDs increasing, exactly the live ones, installed flags right.
            let chain: Vec<KidT> = reg.iter().map(|k| k.kid()).collect();
            let mut want: Vec<KidT> = vec![0, 1];
            want.extend(live.values().copied());
            want.sort_unstable();
            prop_assert_eq!(&chain, &want);
            for k in reg.iter() {
                prop_assert_eq!(k.is_installed(), installed.contains(&k.kid()));
            }
        }
        // Reading KID 0 lists the same chain.
        let mut buf = vec![0u8; reg.data_size(KSTAT_HEADERS_KID).unwrap()];
        let got = reg.read(KSTAT_HEADERS_KID, 1_000, &mut buf).unwrap();
        let listed: Vec<KidT> = records::<KstatHeader>(&buf[..got.len]).map(|h| h.ks_kid).collect();
        let chain: Vec<KidT> = reg.iter().map(|k| k.kid()).collect();
        prop_assert_eq!(listed, chain);
        prop_assert_eq!(got.chain_id, reg.chain_id());
    }

    /// Garbage in: any KID, index, type, size or buffer. Nothing panics.
    #[test]
    fn registry_never_panics(
        ops in prop::collection::vec((any::<i64>(), any::<u32>(), any::<u8>(), 0usize..300, any::<i64>()), 0..40)
    ) {
        let mut reg = KstatRegistry::new(0);
        for (kid, n, ty, buflen, v) in ops {
            let small_n = n % 4;
            let _ = reg.create("m", (n % 3) as i32, "n", "c", ty % 6, small_n, v);
            let kid = if kid.rem_euclid(3) == 0 { kid } else { kid.rem_euclid(8) };
            let _ = reg.install(kid);
            let mut buf = vec![0u8; buflen];
            let _ = reg.read(kid, v, &mut buf);
            let _ = reg.snapshot(kid, v);
            if let Ok(nm) = reg.named_mut(kid) {
                let _ = nm.named_init(n as usize % 5, "s", ty);
                let _ = nm.set(n as usize % 5, KstatValue::Int64(v));
                let _ = nm.add(n as usize, v);
            }
            if let Ok(t) = reg.timer_mut(kid) {
                let _ = t.start(n as usize % 4, v);
                let _ = t.stop(n as usize % 4, v.wrapping_mul(3));
            }
            if let Ok(r) = reg.raw_mut(kid) {
                let _ = r.write(n as usize, &[1, 2, 3]);
            }
            if let Ok(io) = reg.io_mut(kid) {
                let _ = io.runq_back_to_waitq(v);
                let _ = io.waitq_to_runq(v);
            }
            if n % 7 == 0 {
                let _ = reg.delete(kid);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// ABI records
// ---------------------------------------------------------------------------------------

fn name_bytes() -> impl Strategy<Value = [u8; KSTAT_STRLEN]> {
    any::<[u8; KSTAT_STRLEN]>()
}

fn header() -> impl Strategy<Value = KstatHeader> {
    (
        (any::<i64>(), any::<i64>(), name_bytes(), any::<u8>(), any::<i32>(), name_bytes()),
        (any::<u8>(), name_bytes(), any::<u8>(), any::<u32>(), any::<u64>(), any::<i64>()),
    )
        .prop_map(|((cr, kid, m, resv, inst, n), (ty, c, fl, nd, ds, snap))| KstatHeader {
            ks_crtime: cr,
            ks_kid: kid,
            ks_module: m,
            ks_resv: resv,
            ks_instance: inst,
            ks_name: n,
            ks_type: ty,
            ks_class: c,
            ks_flags: fl,
            ks_ndata: nd,
            ks_data_size: ds,
            ks_snaptime: snap,
        })
}

fn io() -> impl Strategy<Value = KstatIo> {
    ((any::<u64>(), any::<u64>(), any::<u32>(), any::<u32>()), any::<[i64; 6]>(), (any::<u32>(), any::<u32>()))
        .prop_map(|((nr, nw, r, w), t, (wc, rc))| KstatIo {
            nread: nr,
            nwritten: nw,
            reads: r,
            writes: w,
            wtime: t[0],
            wlentime: t[1],
            wlastupdate: t[2],
            rtime: t[3],
            rlentime: t[4],
            rlastupdate: t[5],
            wcnt: wc,
            rcnt: rc,
        })
}

fn timer() -> impl Strategy<Value = KstatTimer> {
    (name_bytes(), any::<u8>(), any::<u64>(), any::<[i64; 5]>()).prop_map(|(n, resv, ev, t)| KstatTimer {
        name: n,
        resv,
        num_events: ev,
        elapsed_time: t[0],
        min_time: t[1],
        max_time: t[2],
        start_time: t[3],
        stop_time: t[4],
    })
}

fn value() -> impl Strategy<Value = KstatValue> {
    prop_oneof![
        any::<[u8; 16]>().prop_map(KstatValue::Char),
        any::<i32>().prop_map(KstatValue::Int32),
        any::<u32>().prop_map(KstatValue::Uint32),
        any::<i64>().prop_map(KstatValue::Int64),
        any::<u64>().prop_map(KstatValue::Uint64),
        any::<[u8; 16]>().prop_map(|mut c| {
            c[15] = 0;
            KstatValue::String(c)
        }),
    ]
}

fn round_trip<T: KstatRecord + PartialEq + std::fmt::Debug>(x: T) -> Result<(), TestCaseError> {
    let mut buf = vec![0xa5u8; T::SIZE + 3];
    prop_assert_eq!(x.encode_into(&mut buf), Some(T::SIZE));
    prop_assert_eq!(T::decode(&buf), Some(x));
    prop_assert_eq!(buf[T::SIZE..].to_vec(), vec![0xa5u8; 3], "wrote past SIZE");
    prop_assert_eq!(x.encode_into(&mut buf[..T::SIZE - 1]), None);
    prop_assert_eq!(T::decode(&buf[..T::SIZE - 1]), None);
    Ok(())
}

/// bytes → record → bytes is the identity: every byte of every record is a field.
fn bytes_round_trip<T: KstatRecord>(bytes: &[u8]) -> Result<(), TestCaseError> {
    let x = T::decode(bytes).unwrap();
    let mut out = vec![0u8; T::SIZE];
    x.encode_into(&mut out).unwrap();
    prop_assert_eq!(&out[..], &bytes[..T::SIZE]);
    Ok(())
}

proptest! {
    #[test]
    fn header_round_trips(h in header()) {
        round_trip(h)?;
        prop_assert_eq!(KstatHeader::from_bytes(&h.to_bytes()), h);
    }

    #[test]
    fn named_round_trips(name in "[a-z_]{0,40}", v in value(), raw in any::<[u8; 48]>()) {
        let n = KstatNamed::new(&name, v);
        round_trip(n)?;
        prop_assert_eq!(n.value(), Some(v));
        prop_assert_eq!(n.name(), &name[..name.len().min(30)]);
        prop_assert_eq!(KstatValue::decode(v.data_type(), &v.encode()), Some(v));
        bytes_round_trip::<KstatNamed>(&raw)?;
    }

    #[test]
    fn intr_round_trips(c in any::<[u32; 5]>(), raw in any::<[u8; 20]>()) {
        let i = KstatIntr { intrs: c };
        round_trip(i)?;
        prop_assert_eq!(KstatIntr::from_bytes(&i.to_bytes()), i);
        bytes_round_trip::<KstatIntr>(&raw)?;
    }

    #[test]
    fn io_round_trips(x in io(), raw in prop::collection::vec(any::<u8>(), 80)) {
        round_trip(x)?;
        bytes_round_trip::<KstatIo>(&raw)?;
    }

    #[test]
    fn timer_round_trips(x in timer(), raw in prop::collection::vec(any::<u8>(), 80)) {
        round_trip(x)?;
        bytes_round_trip::<KstatTimer>(&raw)?;
    }

    #[test]
    fn header_bytes_round_trip(raw in prop::collection::vec(any::<u8>(), 136)) {
        bytes_round_trip::<KstatHeader>(&raw)?;
        // And any bytes give readable (possibly shortened) names, never a panic.
        let h = KstatHeader::decode(&raw).unwrap();
        let _ = (h.module(), h.name(), h.class(), format!("{:?}", KstatNamed::decode(&raw[..48]).unwrap().value()));
    }

    #[test]
    fn record_lists_round_trip(xs in prop::collection::vec(io(), 0..6), extra in 0usize..80) {
        let mut buf = vec![0u8; xs.len() * KstatIo::SIZE + extra];
        prop_assert_eq!(encode_records(&xs, &mut buf), Some(xs.len() * KstatIo::SIZE));
        let back: Vec<KstatIo> = records(&buf[..xs.len() * KstatIo::SIZE]).collect();
        prop_assert_eq!(back, xs);
    }
}

// ---------------------------------------------------------------------------------------
// Filters
// ---------------------------------------------------------------------------------------

fn naive_glob(p: &[u8], t: &[u8]) -> bool {
    match p.split_first() {
        None => t.is_empty(),
        Some((b'*', rest)) => (0..=t.len()).any(|i| naive_glob(rest, &t[i..])),
        Some((&c, rest)) => !t.is_empty() && (c == b'?' || c == t[0]) && naive_glob(rest, &t[1..]),
    }
}

proptest! {
    #[test]
    fn glob_agrees_with_naive(p in "[ab*?]{0,8}", t in "[ab]{0,10}") {
        prop_assert_eq!(glob_match(p.as_bytes(), t.as_bytes()), naive_glob(p.as_bytes(), t.as_bytes()));
    }

    #[test]
    fn filter_fields_are_independent(m in "[ab]{1,3}", i in 0i32..30, n in "[ab]{1,3}", s in "[ab]{1,3}") {
        let spec = format!("{}:{}:{}:{}", m, i, n, s);
        let f = KstatFilter::parse(&spec).unwrap();
        prop_assert!(f.matches(&m, i, &n, &s));
        let other = format!("{}x", m);
        prop_assert!(!f.matches(&other, i, &n, &s));
        prop_assert!(!f.matches(&m, i + 1, &n, &s));
        let short = format!("{}::{}", m, n);
        prop_assert!(KstatFilter::parse(&short).unwrap().matches(&m, i, &n, &s));
        prop_assert!(KstatFilter::parse("").unwrap().matches(&m, i, &n, &s));
    }
}
