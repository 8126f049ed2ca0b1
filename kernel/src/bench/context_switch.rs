//! pick-next + context switch, with 1, 10, 100 and 1000 runnable threads.
//!
//! N kernel threads each call `yield_now()` `YIELDS` times. Under 2.6's `sched_yield` a
//! normal task goes to the expired array, so every yield is a full trip through
//! `schedule()`: requeue, find-first-set on the active bitmap (with an O(1) array swap
//! every N yields), the microstate switch of both tasks, and the stack switch. With one
//! thread there is nobody to switch to: that row is the cost of `schedule()` alone.
//!
//! The threads wait at a start line (yielding), so the window from the first thread's start
//! to the last one's finish holds only measured yields, give or take one per thread.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::Harness;
use crate::proc;
use crate::sched;
use crate::sched::SchedParams;

const YIELDS: u64 = 200;

static GO: AtomicBool = AtomicBool::new(false);
static FIRST_START: AtomicU64 = AtomicU64::new(u64::MAX);
static LAST_END: AtomicU64 = AtomicU64::new(0);

fn yielder(_: u64) {
    while !GO.load(Ordering::Acquire) {
        sched::yield_now();
    }
    FIRST_START.fetch_min(hal::tsc::read(), Ordering::AcqRel);
    for _ in 0..YIELDS {
        sched::yield_now();
    }
    LAST_END.fetch_max(hal::tsc::read(), Ordering::AcqRel);
}

pub fn context_switch(h: &mut Harness) {
    for n in [1u64, 10, 100, 1000] {
        GO.store(false, Ordering::Release);
        FIRST_START.store(u64::MAX, Ordering::Release);
        LAST_END.store(0, Ordering::Release);
        let mut pids = alloc::vec::Vec::new();
        for _ in 0..n {
            match proc::spawn("yielder", SchedParams::Normal(0), yielder, 0) {
                Ok(pid) => pids.push(pid),
                Err(e) => {
                    println!("bench: context_switch: spawn failed at {} threads (errno {e})", pids.len());
                    break;
                }
            }
        }
        GO.store(true, Ordering::Release);
        for pid in &pids {
            let _ = proc::wait(Some(*pid));
        }
        let ticks = LAST_END.load(Ordering::Acquire).saturating_sub(FIRST_START.load(Ordering::Acquire));
        h.report("context_switch", pids.len() as u64, pids.len() as u64 * YIELDS, ticks);
    }
}
