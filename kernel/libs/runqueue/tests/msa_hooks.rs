//! The scheduler's microstate hooks one at a time, with messages that name the hook: a
//! sleep and a wake-up, a context switch, a task taken off its queue, and the running-state
//! changes of a system call. (`accounting.rs` has the whole-story tests: the lazy flip, the
//! handover, the idle task.)
#![cfg(feature = "accounting")]

mod common;

use common::Sys;
use tally_runqueue::{
    BlockReason, MicroState, MsaTimes, PrevAction, SchedConfig, SchedEntity, SleepKind, TaskSlot, TaskStore,
};
use MicroState::*;

fn sys() -> Sys {
    Sys::new(SchedConfig::new(1000, 1_000_000))
}

/// `task`'s clock for `state` must read `want` ticks; `hook` says which hook charged it.
fn expect(times: &MsaTimes, task: &str, state: MicroState, want: u64, hook: &str) {
    let got = times[state.index()];
    assert_eq!(got, want, "{task}: {state:?} reads {got} ticks, expected {want} ({hook})");
}

fn clocks(sys: &mut Sys, key: TaskSlot) -> MsaTimes {
    sys.msa(key)
}

#[test]
fn a_sleep_and_a_wake_up_charge_the_sleep_then_the_active_queue() {
    let mut sys = sys();
    let a = sys.spawn(SchedEntity::new(0));
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    sys.now = 2_000;
    sys.schedule(PrevAction::Block(BlockReason::Sleep(SleepKind::Interruptible)));
    sys.now = 5_000;
    assert!(sys.wake(a));
    sys.now = 5_300;
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    sys.now = 6_000;
    let t = clocks(&mut sys, a);
    expect(
        &t,
        "a",
        InterruptibleSleep,
        3_000,
        "account_switch at 2000 sends it to sleep (prev_state); the wake-up at 5000 ends it",
    );
    expect(&t, "a", OnActiveQueue, 300, "waiting from the wake-up (5000) until account_switch picks it (5300)");
    expect(&t, "a", OncpuSys, 2_000 + 700, "on the CPU 0..2000 and 5300..6000");
    sys.check();
}

#[test]
fn a_context_switch_charges_both_tasks_at_one_instant() {
    let mut sys = sys();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    sys.now = 1_000;
    let sw = sys.schedule(PrevAction::Yield);
    assert_eq!((sw.prev, sw.next), (a, b));
    sys.now = 1_500;
    let (at, bt) = (clocks(&mut sys, a), clocks(&mut sys, b));
    expect(&at, "a (yielded at 1000)", OncpuSys, 1_000, "account_switch: prev leaves the CPU at the switch");
    expect(&at, "a (yielded at 1000)", OnExpiredQueue, 500, "account_switch: prev waits on the expired array");
    expect(&bt, "b (picked at 1000)", OnActiveQueue, 1_000, "account_switch: next stops waiting at the switch");
    expect(&bt, "b (picked at 1000)", OncpuSys, 500, "account_switch: next runs from the same instant");
    sys.check();
}

#[test]
fn a_waiting_task_taken_off_the_queue_is_charged_the_block_state() {
    let mut sys = sys();
    let _a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    sys.now = 3_000;
    assert!(sys.rq.remove(&mut sys.store, b, BlockReason::Stop, sys.now));
    sys.now = 4_000;
    let t = clocks(&mut sys, b);
    expect(&t, "b (stopped at 3000)", OnActiveQueue, 3_000, "it waited on the active array 0..3000");
    expect(&t, "b (stopped at 3000)", Stopped, 1_000, "account_blocked at 3000");
    sys.check();
}

#[test]
fn a_system_call_switches_the_running_state_at_entry_and_exit() {
    let mut sys = sys();
    let a = sys.spawn(SchedEntity::new(0).with_running_state(OncpuUsr));
    sys.schedule(PrevAction::Preempted);
    sys.now = 4_000;
    sys.rq.set_running_state(&mut sys.store, a, OncpuSys, sys.now); // the system call enters
    sys.now = 4_250;
    sys.rq.set_running_state(&mut sys.store, a, OncpuUsr, sys.now); // and returns to ring 3
    sys.now = 5_000;
    let t = clocks(&mut sys, a);
    expect(&t, "a", OncpuUsr, 4_000 + 750, "set_running_state(ONCPU_USR) at 4250");
    expect(&t, "a", OncpuSys, 250, "set_running_state(ONCPU_SYS) at 4000, back to ONCPU_USR at 4250");
    sys.check();
}

#[test]
fn the_system_call_hook_switches_the_current_task_like_set_running_state() {
    let mut sys = sys();
    let a = sys.spawn(SchedEntity::new(0).with_running_state(OncpuUsr));
    sys.schedule(PrevAction::Preempted);
    sys.now = 4_000;
    let (se, clock) = sys.store.task(a);
    sys.rq.set_current_running_state(se, clock, OncpuSys, sys.now); // the system call enters
    sys.now = 4_250;
    let (se, clock) = sys.store.task(a);
    sys.rq.set_current_running_state(se, clock, OncpuUsr, sys.now); // and returns to ring 3
    sys.now = 5_000;
    let t = clocks(&mut sys, a);
    expect(&t, "a", OncpuUsr, 4_000 + 750, "set_current_running_state(ONCPU_USR) at 4250");
    expect(&t, "a", OncpuSys, 250, "set_current_running_state(ONCPU_SYS) at 4000, back at 4250");
    assert_eq!(sys.state_of(a), OncpuUsr);
    sys.check();
}
