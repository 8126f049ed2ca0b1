//! The clock's episodes against an independent model, over random switches with time that
//! sometimes goes backwards (the tests of `delay.rs` that need the clock).
use super::*;
use crate::MsaClock;
use proptest::prelude::*;
use MicroState::*;

/// The model: the list of episodes of each class, as (length, end) pairs, built from
/// the rule "time only counts when it moves forward" and nothing of the clock's code.
struct Model {
    /// The latest time seen (time that went backwards does not lower it).
    mark: u64,
    class: Option<DelayClass>,
    episodes: [std::vec::Vec<(u64, u64)>; NR_DELAY_CLASSES],
}

impl Model {
    fn new(now: u64, state: MicroState) -> Self {
        let mut m = Model { mark: now, class: None, episodes: Default::default() };
        m.enter(DelayClass::of(state));
        m
    }
    fn enter(&mut self, class: Option<DelayClass>) {
        if class != self.class {
            if let Some(c) = class {
                self.episodes[c as usize].push((0, self.mark));
            }
        }
        self.class = class;
    }
    fn advance(&mut self, now: u64) {
        if now > self.mark {
            if let Some(c) = self.class {
                let last = self.episodes[c as usize].last_mut().unwrap();
                last.0 += now - self.mark;
                last.1 = now;
            }
            self.mark = now;
        }
    }
    /// What `delays()` must report for the episodes so far.
    fn expect(&self, c: DelayClass) -> DelayEpisodes {
        let eps = &self.episodes[c as usize];
        let mut e = DelayEpisodes { count: eps.len() as u64, ..DelayEpisodes::ZERO };
        for &(len, end) in eps {
            e.total += len;
            if len > e.max {
                e.max = len;
                e.max_seen = end;
            }
        }
        e.min = eps.iter().map(|e| e.0).filter(|&l| l > 0).min().unwrap_or(0);
        e
    }
}

fn events() -> impl Strategy<Value = std::vec::Vec<(i64, usize)>> {
    let dt = prop_oneof![Just(0i64), 1i64..10, 10i64..5_000, -200i64..0];
    prop::collection::vec((dt, 0usize..NR_MICROSTATES), 0..200)
}

const CLASSES: [DelayClass; 3] = [DelayClass::Cpu, DelayClass::Blkio, DelayClass::Irq];

fn check(c: &MsaClock, m: &Model, now: u64) -> Result<(), TestCaseError> {
    let s = c.snapshot(now);
    let d = c.delays(now);
    prop_assert_eq!(d.cpu.total, s[OnActiveQueue.index()] + s[OnExpiredQueue.index()]);
    prop_assert_eq!(d.blkio.total, s[UninterruptibleSleep.index()]);
    prop_assert_eq!(d.irq.total, s[Interrupted.index()]);
    // The model, read at `now` (an open episode as if it ended then).
    let mut m2 = Model { mark: m.mark, class: m.class, episodes: m.episodes.clone() };
    m2.advance(now);
    for k in CLASSES {
        let (got, want) = (d.get(k), m2.expect(k));
        prop_assert_eq!(*got, want, "{:?}", k);
        prop_assert!(got.max <= got.total);
        prop_assert!(got.min <= got.max);
        prop_assert!(got.max == 0 || got.min > 0, "a positive max implies a positive min");
        prop_assert!(got.max != 0 || got.max_seen == 0);
    }
    Ok(())
}

proptest! {
    #[test]
    fn episodes_match_the_clocks_and_the_model(
        start in 0usize..NR_MICROSTATES,
        evs in events(),
        peek in 0u64..1_000,
    ) {
        let first = MicroState::ALL[start];
        let mut now = 1_000u64;
        let mut c = MsaClock::new(now, first);
        let mut m = Model::new(now, first);
        check(&c, &m, now)?;
        for (dt, st) in evs {
            now = now.saturating_add_signed(dt);
            let state = MicroState::ALL[st];
            c.switch(now, state);
            m.advance(now);
            m.enter(DelayClass::of(state));
            check(&c, &m, now)?;
            check(&c, &m, now + peek)?;
            // Reading "as if switched" agrees with switching a copy.
            let at = c.last_change() + peek / 2;
            let mut copy = c;
            copy.switch(at, Interrupted);
            prop_assert_eq!(c.delays_as_if_switched(at, Interrupted, at + peek), copy.delays(at + peek));
            let s = c.snapshot_as_if_switched(at, Interrupted, at + peek);
            prop_assert_eq!(copy.delays(at + peek).irq.total, s[Interrupted.index()]);
        }
        // Every tick since creation is in exactly one clock; the delay totals are the
        // delay clocks' share of it.
        let d = c.delays(now);
        let s = c.snapshot(now);
        let other: u64 =
            MicroState::ALL.iter().filter(|st| DelayClass::of(**st).is_none()).map(|st| s[st.index()]).sum();
        prop_assert_eq!(d.cpu.total + d.blkio.total + d.irq.total + other, now.max(c.last_change()) - c.created());
    }

    #[test]
    fn adding_threads_adds_counts_and_totals(a in events(), b in events()) {
        let run = |evs: &[(i64, usize)]| {
            let mut now = 500u64;
            let mut c = MsaClock::new(now, OnActiveQueue);
            for &(dt, st) in evs {
                now = now.saturating_add_signed(dt);
                c.switch(now, MicroState::ALL[st]);
            }
            (c.delays(now), c.snapshot(now))
        };
        let ((da, sa), (db, sb)) = (run(&a), run(&b));
        let mut sum = da;
        sum.add(&db);
        prop_assert_eq!(
            sum.cpu.total,
            sa[OnActiveQueue.index()]
                + sa[OnExpiredQueue.index()]
                + sb[OnActiveQueue.index()]
                + sb[OnExpiredQueue.index()]
        );
        prop_assert_eq!(sum.blkio.count, da.blkio.count + db.blkio.count);
        prop_assert_eq!(sum.irq.max, da.irq.max.max(db.irq.max));
    }
}

#[test]
fn the_lazy_flip_is_one_wait() {
    let mut c = MsaClock::new(0, OncpuSys);
    c.switch(100, OnExpiredQueue);
    c.switch(300, OnActiveQueue); // the flip, settled
    c.switch(400, OncpuSys);
    let d = c.delays(400);
    assert_eq!((d.cpu.count, d.cpu.total, d.cpu.max, d.cpu.min, d.cpu.max_seen), (1, 300, 300, 300, 400));
}

#[test]
fn a_new_task_waits_from_birth_and_open_episodes_are_read_up_to_now() {
    let mut c = MsaClock::new(50, OnActiveQueue);
    assert_eq!(c.delays(80).cpu, DelayEpisodes { count: 1, total: 30, max: 30, min: 30, max_seen: 80 });
    c.switch(90, OncpuSys);
    c.switch(90, Interrupted); // an interrupt at once...
    c.switch(90, OncpuSys); // ...that took no tick: counted, not a minimum
    c.switch(120, UninterruptibleSleep);
    c.switch(100, OnActiveQueue); // time went backwards: the disk wait ends at 120
    c.switch(130, OncpuSys);
    let d = c.delays(130);
    assert_eq!(d.cpu, DelayEpisodes { count: 2, total: 50, max: 40, min: 10, max_seen: 90 });
    assert_eq!(d.irq, DelayEpisodes { count: 1, total: 0, max: 0, min: 0, max_seen: 0 });
    assert_eq!(d.blkio, DelayEpisodes { count: 1, total: 0, max: 0, min: 0, max_seen: 0 });
}
