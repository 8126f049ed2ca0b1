//! Job control's stop, for a task that is asleep: stopped where it sleeps.
//!
//! A running task stops by blocking with `BlockReason::Stop` (`schedule()`: its clock goes
//! to STOPPED); SIGCONT wakes it with `wake_up` like any sleeper. A task that is *asleep*
//! (interruptibly) when its process is stopped cannot take that path — it is not on the CPU
//! — and must not lose the wake-up it sleeps for. So it is stopped in place:
//! [`RunQueue::stop_sleeper`] turns its `Blocked(Sleep(kind))` into `Blocked(Stop)` and
//! charges it STOPPED from that instant, and hands back the kind of sleep. The kernel keeps
//! that kind: if the wake-up comes while the task is stopped, the kernel only forgets the
//! kind (the task will run when continued); at SIGCONT a task whose wake-up has not come
//! goes back to its sleep ([`RunQueue::resume_sleep`], its sleep's microstate again), and
//! one whose wake-up came is woken (`wake_up`, from STOPPED to the run queue).
//!
//! Neither touches the run queue's arrays: the task is on none, before and after. An
//! uninterruptible sleep (a disk request) is not stopped in place; the task stops when it
//! next returns towards user mode.

use crate::runqueue::RunQueue;
use crate::task::{BlockReason, SleepKind, TaskSlot, TaskState, TaskStore};
use tally_microstate::MicroState;

impl RunQueue {
    /// Stop `key`, asleep interruptibly, where it sleeps, at TSC `now`: it becomes
    /// `Blocked(Stop)` and its clock charges STOPPED. Returns the sleep it was in; `None`
    /// (nothing changed) if it is not in an interruptible sleep.
    pub fn stop_sleeper<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot, now: u64) -> Option<SleepKind> {
        let (se, clock) = store.task(key);
        match se.state {
            TaskState::Blocked(BlockReason::Sleep(kind)) if !kind.is_uninterruptible() => {
                se.state = TaskState::Blocked(BlockReason::Stop);
                clock.switch(now, MicroState::Stopped);
                Some(kind)
            }
            _ => None,
        }
    }

    /// Put `key`, stopped in place by [`RunQueue::stop_sleeper`] and not woken since, back in
    /// its `kind` sleep at TSC `now` (its clock charges that sleep's microstate again).
    /// Returns false (nothing changed) if `key` is not stopped or `kind` is uninterruptible.
    pub fn resume_sleep<S: TaskStore + ?Sized>(
        &mut self,
        store: &mut S,
        key: TaskSlot,
        kind: SleepKind,
        now: u64,
    ) -> bool {
        let (se, clock) = store.task(key);
        if se.state != TaskState::Blocked(BlockReason::Stop) || kind.is_uninterruptible() {
            return false;
        }
        se.state = TaskState::Blocked(BlockReason::Sleep(kind));
        clock.switch(now, kind.microstate());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::PrevAction;
    use crate::task::SchedEntity;
    use crate::SchedConfig;
    use tally_microstate::MsaClock;

    struct Store(Vec<(SchedEntity, MsaClock)>);

    impl TaskStore for Store {
        fn task(&mut self, key: TaskSlot) -> (&mut SchedEntity, &mut MsaClock) {
            let (se, clock) = &mut self.0[key.0 as usize];
            (se, clock)
        }
    }

    /// Idle (slot 0) and task 1, which runs from TSC 1000 and goes to sleep at 2000.
    fn sleeping(kind: SleepKind) -> (RunQueue, Store) {
        let mut s = Store(vec![
            (SchedEntity::new(0), MsaClock::new(0, MicroState::OnActiveQueue)),
            (SchedEntity::new(0), MsaClock::new(0, MicroState::OnActiveQueue)),
        ]);
        let mut rq = RunQueue::new(SchedConfig::new(1000, 1_000_000), TaskSlot(0), &mut s, 0);
        assert!(rq.wake_up_new_task(&mut s, TaskSlot(1), 500));
        rq.schedule(&mut s, 1000, PrevAction::Preempted);
        assert_eq!(rq.current(), TaskSlot(1));
        rq.schedule(&mut s, 2000, PrevAction::Block(BlockReason::Sleep(kind)));
        assert_eq!(rq.current(), TaskSlot(0));
        (rq, s)
    }

    fn total(s: &mut Store, now: u64) -> u64 {
        s.clock(TaskSlot(1)).snapshot(now).iter().sum()
    }

    #[test]
    fn a_sleeper_stops_in_place_and_resumes_its_sleep() {
        let (mut rq, mut s) = sleeping(SleepKind::Interruptible);
        assert_eq!(rq.stop_sleeper(&mut s, TaskSlot(1), 3000), Some(SleepKind::Interruptible));
        assert_eq!(s.entity(TaskSlot(1)).state(), TaskState::Blocked(BlockReason::Stop));
        assert_eq!(rq.stop_sleeper(&mut s, TaskSlot(1), 3100), None, "already stopped");
        assert!(rq.resume_sleep(&mut s, TaskSlot(1), SleepKind::Interruptible, 7000));
        assert_eq!(s.entity(TaskSlot(1)).state(), TaskState::Blocked(BlockReason::Sleep(SleepKind::Interruptible)));
        let m = s.clock(TaskSlot(1)).snapshot(9000);
        assert_eq!(m[MicroState::Stopped as usize], 4000);
        assert_eq!(m[MicroState::InterruptibleSleep as usize], 1000 + 2000);
        assert_eq!(total(&mut s, 9000), 9000, "every tick in exactly one state");
        assert!(!rq.resume_sleep(&mut s, TaskSlot(1), SleepKind::Interruptible, 9500), "not stopped");
        // Its wake-up still works, from the sleep.
        assert!(rq.wake_up(&mut s, TaskSlot(1), 10_000));
        assert_eq!(s.clock(TaskSlot(1)).state(), MicroState::OnActiveQueue);
    }

    #[test]
    fn a_stopped_sleeper_woken_by_sigcont_goes_to_the_run_queue() {
        let (mut rq, mut s) = sleeping(SleepKind::Poll);
        assert_eq!(rq.stop_sleeper(&mut s, TaskSlot(1), 2500), Some(SleepKind::Poll));
        assert!(rq.wake_up(&mut s, TaskSlot(1), 4000));
        let m = s.clock(TaskSlot(1)).snapshot(4000);
        assert_eq!(m[MicroState::Stopped as usize], 1500);
        assert_eq!(m[MicroState::PollSleep as usize], 500);
        assert_eq!(total(&mut s, 5000), 5000);
    }

    #[test]
    fn an_uninterruptible_sleep_is_not_stopped_in_place() {
        let (mut rq, mut s) = sleeping(SleepKind::Uninterruptible);
        assert_eq!(rq.stop_sleeper(&mut s, TaskSlot(1), 3000), None);
        assert_eq!(s.clock(TaskSlot(1)).state(), MicroState::UninterruptibleSleep);
        assert!(!rq.resume_sleep(&mut s, TaskSlot(1), SleepKind::Uninterruptible, 3000));
        assert_eq!(rq.nr_uninterruptible(), 1);
    }
}
