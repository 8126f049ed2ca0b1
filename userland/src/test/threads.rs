//! `/test/threads MODE` — threads from ring 3: `thread_create`'s errors, a process of
//! several threads reporting its microstates, and every way such a process ends. The fixture
//! of the `user_threads` self-test (`tally_uapi::fixture`; MODE is one of its `THREADS_*`).
//!
//! Every mode first maps one region for four 64 KiB thread stacks (check 4). In `report`,
//! `thread_create` must refuse a kernel entry (1: EINVAL), a stack at an unmapped address
//! (2: EFAULT) and a non-canonical stack (3: EINVAL); three workers start (5: a tid, 6: not
//! the pid), spin, sleep 5 ms, record their tid and exit; the leader yields until they are
//! done (7), is still the same process (8), reads `msa(MSA_SELF)` (9) and `msa(MSA_THREAD)`
//! (10) into the result area with the tids, and waits for the test (handshake). The other
//! modes end the process while threads run:
//!
//! | mode | does | checks |
//! |---|---|---|
//! | `exit_group` | threads that spin, sleep 100 s, read the console; 30 ms later `exit_group(7)` | 11-13 |
//! | `fault` | a thread that sleeps 100 s, one that executes `ud2` (SIGILL) | 21, 22 |
//! | `leader_first` | a thread that exits with 9 after 20 ms; the leader `exit`s with 5 first | 31 |
//! | `thread_exit_group` | a thread calls `exit_group(3)` after 10 ms while the leader sleeps 100 s | 41 |
//!
//! A thread or leader that outlives what should have ended it exits with 96-99.
#![no_std]
#![no_main]
#![deny(unsafe_code)]
#![feature(abort_immediate)]

use core::sync::atomic::{AtomicU64, Ordering};

use tally_rt::fixture::{check, expect_err, expect_ok, fail, positive, usage, Area};
use tally_rt::sys::probe::{self, BadPtr};
use tally_rt::sys::{self, Mapping};
use tally_rt::thread;
use tally_rt::uapi::errno::{EFAULT, EINVAL};
use tally_rt::uapi::fixture::*;
use tally_rt::uapi::layout::USER_END;
use tally_rt::uapi::msa::{MSA_SELF, MSA_THREAD, NR_MICROSTATES};
use tally_rt::uapi::syscall::{PROT_READ, PROT_WRITE};

tally_rt::entry!(main);

const STACK: usize = 64 * 1024;
/// A stack top whose return-address slot, 8 bytes below, is the first non-canonical address.
const NON_CANONICAL_STACK: BadPtr = match BadPtr::above_user(USER_END as usize + 8) {
    Some(p) => p,
    None => panic!("not above the user half"),
};

/// What the workers of `report` leave for the leader: how many have finished, their tids.
static WORKERS_DONE: AtomicU64 = AtomicU64::new(0);
static TIDS: [AtomicU64; THREADS_WORKERS] = [const { AtomicU64::new(0) }; THREADS_WORKERS];

fn spin(iterations: u32) {
    for i in 0..iterations {
        core::hint::black_box(i);
    }
}

/// Starts `entry(arg)` on `stack`; check `n`: a thread id came back.
fn start(entry: extern "C" fn(usize) -> !, arg: usize, stack: &'static mut [u8], n: i32) -> usize {
    positive(thread::spawn_on(entry, arg, stack).map(|t| t.tid), n)
}

fn main() -> i32 {
    let mode = tally_rt::arg(1).unwrap_or("");
    let pid = sys::getpid().unwrap_or(0);
    let Ok(stacks) = Mapping::new(4 * STACK, PROT_READ | PROT_WRITE) else { fail(4) };
    check(stacks.addr() as isize > 0, 4);
    let mut stacks = stacks.leak().as_chunks_mut::<STACK>().0.iter_mut().map(|s| &mut s[..]);
    let mut stack = move || stacks.next().unwrap_or_else(|| fail(4));
    match mode {
        THREADS_REPORT => {
            let area = Area::map();
            let first = stack();
            expect_err(probe::thread_create_bad_entry(BadPtr::KERNEL, first, 0), EINVAL, 1);
            expect_err(probe::thread_create_bad_stack(worker, BadPtr::UNMAPPED, 0), EFAULT, 2);
            expect_err(probe::thread_create_bad_stack(worker, NON_CANONICAL_STACK, 0), EINVAL, 3);
            let mut on = Some(first);
            for i in 0..THREADS_WORKERS {
                let tid = start(worker, i, on.take().unwrap_or_else(&mut stack), 5);
                check(tid != pid, 6);
            }
            let mut yields = 0u32;
            while WORKERS_DONE.load(Ordering::Acquire) != THREADS_WORKERS as u64 {
                yields += 1;
                check(yields <= 2_000_000, 7);
                let _ = sys::sched_yield();
            }
            expect_ok(sys::getpid(), pid, 8); // still the same process
            let (mut self_, mut thread) = ([0u64; NR_MICROSTATES], [0u64; NR_MICROSTATES]);
            expect_ok(sys::msa(MSA_SELF, &mut self_), 0, 9);
            expect_ok(sys::msa(MSA_THREAD, &mut thread), 0, 10);
            area.put_words(AREA_MSA_A, &self_);
            area.put_words(AREA_MSA_B, &thread);
            for (i, tid) in TIDS.iter().enumerate() {
                area.put(AREA_TIDS + 8 * i as u64, tid.load(Ordering::Relaxed));
            }
            area.handshake();
            0
        }
        THREADS_EXIT_GROUP => {
            start(spin_forever, 0, stack(), 11);
            start(sleep_long, 0, stack(), 12);
            start(read_console, 0, stack(), 13);
            let _ = sys::sleep_ms(30);
            sys::exit_group(THREADS_EXIT_GROUP_STATUS)
        }
        THREADS_FAULT => {
            start(sleep_long, 0, stack(), 21);
            start(invalid_opcode, 0, stack(), 22);
            let _ = sys::sleep_ms(100_000);
            fail(97)
        }
        THREADS_LEADER_FIRST => {
            start(late_exit, 0, stack(), 31);
            sys::exit(THREADS_LEADER_STATUS)
        }
        THREADS_THREAD_EXIT_GROUP => {
            start(group_exit, 0, stack(), 41);
            let _ = sys::sleep_ms(100_000);
            fail(96)
        }
        _ => usage("report|exit_group|fault|leader_first|thread_exit_group"),
    }
}

/// `report`'s worker `i`: some user time, a 5 ms sleep, its tid for the leader, exit.
extern "C" fn worker(i: usize) -> ! {
    spin(3_000_000);
    let _ = sys::sleep_ms(5);
    if let (Some(slot), Ok(tid)) = (TIDS.get(i), sys::gettid()) {
        slot.store(tid as u64, Ordering::Relaxed);
    }
    WORKERS_DONE.fetch_add(1, Ordering::Release);
    sys::exit(0)
}

extern "C" fn spin_forever(_: usize) -> ! {
    loop {
        core::hint::spin_loop();
    }
}

extern "C" fn sleep_long(_: usize) -> ! {
    let _ = sys::sleep_ms(100_000);
    fail(99)
}

extern "C" fn read_console(_: usize) -> ! {
    let mut byte = [0u8; 1];
    let _ = sys::read(0, &mut byte);
    fail(98)
}

/// Computes a little, then executes `ud2` (what `abort_immediate` is on x86_64): SIGILL.
extern "C" fn invalid_opcode(_: usize) -> ! {
    spin(1_000_000);
    core::process::abort_immediate()
}

extern "C" fn late_exit(_: usize) -> ! {
    let _ = sys::sleep_ms(20);
    sys::exit(THREADS_LAST_THREAD_STATUS)
}

extern "C" fn group_exit(_: usize) -> ! {
    let _ = sys::sleep_ms(10);
    sys::exit_group(THREADS_THREAD_EXIT_GROUP_STATUS)
}
