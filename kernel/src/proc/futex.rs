//! # Futexes: sleeping on a word of user memory
//!
//! The kernel half of `futex(2)` (the system call is `syscall/futex_call.rs`; the queues
//! and Linux's rules are `tally_usync::futex`, host-tested). A thread that finds a lock
//! taken asks the kernel to sleep *if the lock word still holds the value it saw*; the
//! thread that releases it asks the kernel to wake one sleeper. Everything else happens in
//! user space, so an uncontended lock never enters the kernel.
//!
//! **One lock, one step.** [`wait`] reads the word and queues the task under the futex
//! lock with interrupts off; [`wake`] takes sleepers off under the same lock. So a waker
//! that stored a new value before calling `wake` is either seen by the waiter's read
//! (`EAGAIN`, it does not sleep) or finds the waiter queued: no wake-up is lost. The read is
//! the direct user copy (`hal::uaccess`), which never sleeps; if the page is not there, the
//! caller faults it in (`fault_in`, with the lock released) and the wait starts again.
//!
//! **The sleep** is FUTEX_SLEEP (`SleepKind::Futex`, interruptible), with the deadline of a
//! timed wait on the timer list. The task comes back for one of four reasons, which the
//! queues tell apart: a wake took it off its queue (success, 0); it is still queued and its
//! process is being killed or a signal came (`EINTR`, or a restart of an untimed wait with
//! `SA_RESTART`; a killed thread exits on its way out) or its deadline
//! passed (`ETIMEDOUT`) — it takes itself off, in the same critical section, so no stale
//! entry is left; or none of these (continued after a stop): it sleeps on.
//!
//! **Keys** are (address space, address): the address space is the process's `Vm`, whose
//! address identifies it while any of its threads can wait (a sleeper keeps the process,
//! and so its `Vm`, alive), so threads meet on their process's futexes and two processes
//! never do. Private and shared futexes share this key (Tally has no shared memory).
//!
//! **A thread's exit** ([`clear_child_tid`]): the address `set_tid_address` or
//! `CLONE_CHILD_CLEARTID` gave gets 0 and one sleeper there is woken: that is how
//! `pthread_join` learns a thread is gone (Linux's `mm_release`).
//!
//! Design and scenarios: `docs/user-mode.md` (futexes).

use alloc::sync::Arc;
use spin::Mutex;
use tally_runqueue::{SleepKind, TaskSlot};
use tally_sig::ERESTARTSYS;
use tally_uapi::errno::{EAGAIN, EFAULT, EINTR, ETIMEDOUT};
use tally_uapi::futex::FUTEX_BITSET_MATCH_ANY;
use tally_usync::futex::{FutexKey, Futexes};

use super::vm::Vm;
use crate::sched::{self, slot_of};

static FUTEXES: Mutex<Futexes<TaskSlot>> = Mutex::new(Futexes::new());

/// How often a wait or a compare faults a page in and tries again before `EFAULT` (once
/// is enough unless another thread unmaps the page in between).
const FAULT_RETRIES: usize = 4;

/// The running task's process's futex key for `addr` (`EFAULT`: a kernel thread).
pub fn key(addr: u64) -> Result<FutexKey, i32> {
    let vm = super::current_vm().ok_or(EFAULT)?;
    Ok(key_in(&vm, addr))
}

fn key_in(vm: &Arc<Vm>, addr: u64) -> FutexKey {
    FutexKey { space: Arc::as_ptr(vm) as u64, addr }
}

/// Read the 32-bit word at `addr` with the direct copy (no sleep, no lock).
fn read_word(addr: u64) -> Option<u32> {
    let mut b = [0u8; 4];
    hal::uaccess::copy_from_user_direct(addr, &mut b).then(|| u32::from_ne_bytes(b))
}

enum Step<T> {
    /// The word's page is not mapped: fault it in, try again.
    Fault,
    Done(Result<T, i32>),
}

/// Run `attempt` with interrupts off; on `Step::Fault` call `fault_in` (interrupts on)
/// and try again, a few times.
fn with_word<T>(mut attempt: impl FnMut() -> Step<T>, fault_in: &dyn Fn() -> Result<(), i32>) -> Result<T, i32> {
    for _ in 0..FAULT_RETRIES {
        match hal::cpu::without_interrupts(&mut attempt) {
            Step::Done(r) => return r,
            Step::Fault => fault_in()?,
        }
    }
    Err(EFAULT)
}

/// `FUTEX_WAIT(_BITSET)`: sleep on `key` while the word at `key.addr` holds `val`, until a
/// wake whose bitset meets `bitset` (see the module documentation), the TSC `deadline`, or
/// a kill. `fault_in` makes the word readable (`EFAULT` if it cannot be).
pub fn wait(
    key: FutexKey,
    val: u32,
    bitset: u32,
    deadline: Option<u64>,
    fault_in: &dyn Fn() -> Result<(), i32>,
) -> Result<(), i32> {
    let me = slot_of(sched::current());
    with_word(
        || {
            let mut futexes = FUTEXES.lock();
            let Some(now) = read_word(key.addr) else { return Step::Fault };
            if now != val {
                return Step::Done(Err(EAGAIN));
            }
            if deadline.is_some_and(|d| hal::tsc::read() >= d) {
                return Step::Done(Err(ETIMEDOUT));
            }
            futexes.enqueue(key, me, bitset);
            drop(futexes);
            loop {
                // Interrupts are off: the lock is free, and nobody runs until we block.
                let slept = sched::block_current_unless_killed(SleepKind::Futex, deadline);
                let mut futexes = FUTEXES.lock();
                if !futexes.is_waiting(me) {
                    return Step::Done(Ok(())); // a wake took us off the queue
                }
                if !slept || sched::kill_pending() {
                    futexes.cancel(me);
                    // Killed, or a signal: an untimed wait restarts after a handler with
                    // SA_RESTART (Linux's ERESTARTSYS), a timed one fails with EINTR.
                    return Step::Done(Err(if deadline.is_none() { ERESTARTSYS } else { EINTR }));
                }
                if deadline.is_some_and(|d| hal::tsc::read() >= d) {
                    futexes.cancel(me);
                    return Step::Done(Err(ETIMEDOUT));
                }
            }
        },
        fault_in,
    )
}

/// `FUTEX_WAKE(_BITSET)`: wake up to `n` (Linux: at least one) sleepers on `key` whose
/// bitset meets `bitset`; returns how many.
pub fn wake(key: FutexKey, n: i32, bitset: u32) -> usize {
    hal::cpu::without_interrupts(|| {
        let woken = FUTEXES.lock().wake(key, n, bitset);
        for &t in &woken {
            sched::wake(t);
        }
        woken.len()
    })
}

/// `FUTEX_REQUEUE` / `FUTEX_CMP_REQUEUE` (`expect`: the value the word at `from.addr` must
/// hold, else `EAGAIN`): wake up to `nr_wake` sleepers of `from`, move up to `nr_requeue`
/// more to `to`; returns woken + moved.
pub fn requeue(
    from: FutexKey,
    to: FutexKey,
    nr_wake: u32,
    nr_requeue: u32,
    expect: Option<u32>,
    fault_in: &dyn Fn() -> Result<(), i32>,
) -> Result<usize, i32> {
    with_word(
        || {
            let mut futexes = FUTEXES.lock();
            if let Some(val) = expect {
                match read_word(from.addr) {
                    None => return Step::Fault,
                    Some(now) if now != val => return Step::Done(Err(EAGAIN)),
                    Some(_) => {}
                }
            }
            let (woken, moved) = futexes.requeue(from, to, nr_wake, nr_requeue);
            for &t in &woken {
                sched::wake(t);
            }
            Step::Done(Ok(woken.len() + moved))
        },
        fault_in,
    )
}

/// A thread with a clear-child-tid address `addr` is exiting (`set_tid_address`,
/// `CLONE_CHILD_CLEARTID`): write 0 there and wake one futex sleeper, as Linux's
/// `mm_release` does for `pthread_join`. The write goes through the checked copy (a page
/// not yet touched is faulted in, as Linux's `put_user` would); an address the process
/// cannot write is left alone, silently — the exit goes on. `vm` is the exiting thread's
/// memory, still its active address space.
pub fn clear_child_tid(vm: &Arc<Vm>, addr: u64) {
    if addr == 0 {
        return;
    }
    let zero = 0u32.to_ne_bytes();
    let written = hal::uaccess::copy_to_user_direct(addr, &zero) || {
        let cpu = super::current_process_cpu_ticks();
        // The exit runs with interrupts off: a page that would have to be read from a file
        // is left alone (so is one the process may not write, or no frame for it).
        let mut resolve = |page: u64, write: bool| super::user::resolve_for_copy(vm, page, write, cpu);
        hal::uaccess::copy_to_user(vm.space(), addr, &zero, &mut resolve).is_ok()
    };
    if written {
        wake(key_in(vm, addr), 1, FUTEX_BITSET_MATCH_ANY);
    }
}

/// How many tasks sleep on futexes now (for the self-tests).
pub fn sleepers() -> usize {
    hal::cpu::without_interrupts(|| FUTEXES.lock().len())
}
