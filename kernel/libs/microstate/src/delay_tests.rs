//! Delay episodes by hand and by property: `close`'s extremes and `add`'s fold (the tests
//! of `delay.rs`, kept apart from the code a lab hands out).
use super::*;
use proptest::prelude::*;

#[test]
fn classes_of_the_states() {
    use MicroState::*;
    assert_eq!(DelayClass::of(OnActiveQueue), Some(DelayClass::Cpu));
    assert_eq!(DelayClass::of(OnExpiredQueue), Some(DelayClass::Cpu));
    assert_eq!(DelayClass::of(UninterruptibleSleep), Some(DelayClass::Blkio));
    assert_eq!(DelayClass::of(Interrupted), Some(DelayClass::Irq));
    let delays = MicroState::ALL.iter().filter(|s| DelayClass::of(**s).is_some()).count();
    assert_eq!(delays, 4, "every other state is no delay");
}

#[test]
fn zero_length_episodes_count_but_are_never_the_minimum() {
    let mut e = DelayEpisodes::ZERO;
    e.open();
    e.close(0, 10);
    assert_eq!((e.count, e.total, e.max, e.min, e.max_seen), (1, 0, 0, 0, 0));
    e.open();
    e.close(5, 20);
    e.open();
    e.close(3, 30);
    e.open();
    e.close(5, 40);
    assert_eq!((e.count, e.total, e.max, e.min, e.max_seen), (4, 13, 5, 3, 20), "first max kept");
}

#[test]
fn close_by_hand() {
    let mut e = DelayEpisodes::ZERO;
    e.open();
    e.close(7, 100);
    assert_eq!(
        e,
        DelayEpisodes { count: 1, total: 7, max: 7, min: 7, max_seen: 100 },
        "one episode of 7 ticks ending at 100"
    );
    e.open();
    e.close(9, 200);
    assert_eq!((e.total, e.max, e.max_seen, e.min), (16, 9, 200, 7), "a longer episode: new max, seen at its end");
    e.open();
    e.close(9, 300);
    assert_eq!(e.max_seen, 200, "an equal episode later does not move max_seen (the first is kept)");
    e.open();
    e.close(2, 400);
    assert_eq!((e.min, e.max), (2, 9), "a shorter episode: new min, max unchanged");
    e.close(u64::MAX, 500);
    assert_eq!(e.total, 27u64.wrapping_add(u64::MAX), "the total wraps");
}

#[test]
fn add_by_hand() {
    let a = DelayEpisodes { count: 3, total: 30, max: 20, min: 4, max_seen: 900 };
    let b = DelayEpisodes { count: 2, total: 25, max: 20, min: 5, max_seen: 700 };
    let mut s = a;
    s.add(&b);
    assert_eq!((s.count, s.total), (5, 55), "counts and totals add");
    assert_eq!((s.max, s.max_seen), (20, 700), "equal maxima: the earlier sighting (700) wins");
    assert_eq!(s.min, 4, "the smaller minimum");
    let idle = DelayEpisodes { count: 1, ..DelayEpisodes::ZERO }; // one empty episode: no min
    let mut s = a;
    s.add(&idle);
    assert_eq!((s.count, s.min, s.max, s.max_seen), (4, 4, 20, 900), "a min of 0 means none: it never wins");
    let mut s = idle;
    s.add(&a);
    assert_eq!((s.count, s.min, s.max, s.max_seen), (4, 4, 20, 900), "nor loses to a real one, either way round");
    let longer = DelayEpisodes { count: 1, total: 50, max: 50, min: 50, max_seen: 1_000 };
    let mut st = DelayStats { irq: a, ..DelayStats::ZERO };
    st.add(&DelayStats { irq: longer, cpu: b, ..DelayStats::ZERO });
    assert_eq!((st.irq.max, st.irq.max_seen, st.irq.total), (50, 1_000, 80), "DelayStats::add folds irq into irq");
    assert_eq!(st.cpu, b, "and cpu into cpu");
}

fn episodes() -> impl Strategy<Value = DelayEpisodes> {
    let small = prop_oneof![Just(0u64), 0u64..4, any::<u64>()];
    (small.clone(), small.clone(), small.clone(), small.clone(), small).prop_map(
        // A maximum of 0 was never seen (the invariant `close` keeps).
        |(count, total, max, min, seen)| DelayEpisodes {
            count,
            total,
            max,
            min,
            max_seen: if max == 0 { 0 } else { seen },
        },
    )
}

fn stats() -> impl Strategy<Value = DelayStats> {
    (episodes(), episodes(), episodes()).prop_map(|(cpu, blkio, irq)| DelayStats { cpu, blkio, irq })
}

fn sum(a: &DelayStats, b: &DelayStats) -> DelayStats {
    let mut s = *a;
    s.add(b);
    s
}

proptest! {
    #[test]
    fn close_keeps_the_shortest_nonzero_episode(
        min in prop_oneof![Just(0u64), 1u64..8, any::<u64>()],
        len in prop_oneof![Just(0u64), 1u64..8, any::<u64>()],
    ) {
        let mut e = DelayEpisodes { min, ..DelayEpisodes::ZERO };
        e.close(len, 1);
        let want = if len != 0 && (min == 0 || len < min) { len } else { min };
        prop_assert_eq!(e.min, want);
    }

    #[test]
    fn add_is_commutative_and_associative(a in stats(), b in stats(), c in stats()) {
        prop_assert_eq!(sum(&a, &b), sum(&b, &a));
        prop_assert_eq!(sum(&sum(&a, &b), &c), sum(&a, &sum(&b, &c)));
        prop_assert_eq!(sum(&a, &DelayStats::ZERO), a, "zero is the identity");
    }

    #[test]
    fn add_keeps_the_extremes(a in stats(), b in stats()) {
        let s = sum(&a, &b);
        for k in [DelayClass::Cpu, DelayClass::Blkio, DelayClass::Irq] {
            let (x, y, z) = (a.get(k), b.get(k), s.get(k));
            prop_assert_eq!(z.count, x.count.wrapping_add(y.count));
            prop_assert_eq!(z.total, x.total.wrapping_add(y.total));
            prop_assert_eq!(z.max, x.max.max(y.max));
            prop_assert!(z.max_seen == x.max_seen || z.max_seen == y.max_seen);
            let nz = [x.min, y.min].into_iter().filter(|&m| m != 0).min().unwrap_or(0);
            prop_assert_eq!(z.min, nz);
        }
    }
}
