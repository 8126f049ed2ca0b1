//! Tests of `expired_starving` and the array flip (`runqueue.rs`), kept out of the file a
//! student edits in lab 2 (the module is still `runqueue::tests`). They set the runqueue's
//! bookkeeping by hand, so they need no working priority array.

use super::*;
use crate::task::SchedEntity;
use tally_microstate::{MicroState, MsaClock};

struct Store(Vec<(SchedEntity, MsaClock)>);

impl TaskStore for Store {
    fn task(&mut self, key: TaskSlot) -> (&mut SchedEntity, &mut MsaClock) {
        let (se, clock) = &mut self.0[key.0 as usize];
        (se, clock)
    }
}

/// A 1000 Hz runqueue running its idle task (slot 0) at TSC 1000.
fn rq() -> RunQueue {
    let mut s = Store(vec![(SchedEntity::new(0), MsaClock::new(0, MicroState::OnActiveQueue))]);
    RunQueue::new(SchedConfig::new(1000, 1_000_000), TaskSlot(0), &mut s, 1000)
}

#[test]
fn expired_starving_when_a_better_static_priority_waits_there() {
    let mut rq = rq();
    assert!(!rq.expired_starving(139), "nothing expired yet (best_expired_prio = MAX_PRIO): not starving");
    rq.best_expired_prio = 110;
    assert!(rq.expired_starving(120), "static prio 120 running while a 110 waits on expired: starving");
    assert!(!rq.expired_starving(110), "static prio 110 running, best expired 110: not starving (not worse)");
    assert!(!rq.expired_starving(100), "static prio 100 running, best expired 110: not starving");
}

#[test]
fn expired_starving_after_the_limit_per_running_task() {
    let mut rq = rq();
    let limit = rq.config.starvation_limit() as u64;
    rq.nr_running = 3;
    rq.expired_timestamp = Some(50);
    rq.ticks = 50 + 3 * limit;
    assert!(
        !rq.expired_starving(120),
        "expired at tick 50, now tick 50 + 3 x STARVATION_LIMIT ({limit}) with 3 running: at the limit, not over it"
    );
    rq.ticks += 1;
    assert!(
        rq.expired_starving(120),
        "expired at tick 50, now one tick past 3 x STARVATION_LIMIT ({limit}) with 3 running: starving"
    );
    rq.nr_running = 4;
    assert!(!rq.expired_starving(120), "with 4 running the limit is 4 x STARVATION_LIMIT: not starving yet");
    rq.expired_timestamp = None;
    rq.ticks = u64::MAX / 2;
    assert!(!rq.expired_starving(120), "no task expired since the last flip: never starving by time");
}

#[test]
fn flip_swaps_the_roles_and_starts_a_new_round() {
    let mut rq = rq();
    let (active, expired) = (rq.active().id(), rq.expired().id());
    rq.expired_timestamp = Some(7);
    rq.best_expired_prio = 105;
    rq.flip_arrays(5_000);
    assert_eq!(rq.active().id(), expired, "after a flip the old expired array is the active one");
    assert_eq!(rq.expired().id(), active, "after a flip the old active array is the expired one");
    assert_eq!(rq.expired_timestamp(), None, "a flip forgets when the first task expired");
    assert_eq!(rq.best_expired_prio(), MAX_PRIO, "a flip resets best_expired_prio to MAX_PRIO");
    assert_eq!(rq.last_flip_time(), 5_000, "the flip's TSC must be recorded (the lazy flip needs it)");
    assert_eq!(rq.flip_generation(), 1, "the first flip is generation 1");
    rq.flip_arrays(6_000);
    assert_eq!(rq.active().id(), active, "two flips bring the first array back");
    assert_eq!((rq.last_flip_time(), rq.flip_generation()), (6_000, 2), "the second flip's time and generation");
}
