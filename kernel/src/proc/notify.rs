//! Who hears of exits: observers that registered for them, told after each exit.
//!
//! The exit path does not call the accounting systems by name. Whoever wants a record of
//! every exit — the taskstats bus today (`acct`'s exit records, wired up in `main.rs`),
//! process and job accounting later — registers an [`ExitObserver`], and every exit hands
//! each one an [`ExitEvent`]: who the thread was, how it ended, and the very numbers its
//! process's accumulators received (and, for the last thread of a process, the process's
//! total), all read at the exit's instant. Observers are told after the exit has left the
//! task table, with no lock held and interrupts still off: they must not sleep.

use spin::Once;
use tally_tasktable::ExitStatus;

use super::{Identity, Totals};

/// What one exit leaves for its observers.
#[derive(Clone, Debug)]
pub struct ExitEvent {
    /// The thread that exited.
    pub thread: Identity,
    /// What it left: its clocks and delays, its counters, and its process's memory numbers
    /// (its process's now, unless it was the last thread: then the final ones).
    pub thread_totals: Totals,
    /// How it ended (the process's status, for an `exit_group` or a fatal signal).
    pub status: ExitStatus,
    /// When its process ended with this exit: the leader's identity and every thread's
    /// totals, past and present.
    pub process: Option<(Identity, Totals)>,
    /// The TSC value of the exit.
    pub now: u64,
}

/// Something that wants to hear of every exit.
pub trait ExitObserver: Sync {
    /// Is anyone listening now? Asked at every exit, with the table's lock held and
    /// interrupts off: it must be cheap (an atomic load), and an event is built only when
    /// some observer says yes.
    fn listening(&self) -> bool;
    /// A thread has exited (see the module documentation for when this runs).
    fn exited(&self, event: &ExitEvent);
}

/// How many observers may register.
const MAX_OBSERVERS: usize = 4;

static OBSERVERS: [Once<&'static dyn ExitObserver>; MAX_OBSERVERS] = [const { Once::new() }; MAX_OBSERVERS];

/// Tell `observer` of every exit from now on. At boot, from `main.rs`; false if there is no
/// room left.
pub fn register_exit_observer(observer: &'static dyn ExitObserver) -> bool {
    for slot in &OBSERVERS {
        let mut taken = false;
        slot.call_once(|| {
            taken = true;
            observer
        });
        if taken {
            return true;
        }
    }
    false
}

fn observers() -> impl Iterator<Item = &'static dyn ExitObserver> {
    OBSERVERS.iter().filter_map(|o| o.get().copied())
}

/// Does any observer want exit events now?
pub(super) fn listening() -> bool {
    observers().any(|o| o.listening())
}

/// Hand `event` to every observer that listens.
pub(super) fn exited(event: &ExitEvent) {
    for o in observers().filter(|o| o.listening()) {
        o.exited(event);
    }
}

/// Something that wants to hear of every new user process before it can run.
pub trait SpawnObserver: Sync {
    /// Process `child` (its pid) was created by a thread of process `parent` (its tgid).
    /// Called under the task table's lock, interrupts off, before `child` is queued: it
    /// must be quick, must not sleep, and must not take the table's lock.
    fn spawned(&self, parent: i32, child: i32);
}

static SPAWN_OBSERVER: Once<&'static dyn SpawnObserver> = Once::new();

/// Tell `observer` of every new user process from now on (one observer; at boot, from
/// `main.rs`). False if one is registered already.
pub fn register_spawn_observer(observer: &'static dyn SpawnObserver) -> bool {
    let mut taken = false;
    SPAWN_OBSERVER.call_once(|| {
        taken = true;
        observer
    });
    taken
}

/// A new user process `child` of `parent` (see [`SpawnObserver::spawned`]).
pub(super) fn spawned(parent: i32, child: i32) {
    if let Some(o) = SPAWN_OBSERVER.get() {
        o.spawned(parent, child);
    }
}
