//! `/test/usync` — threads as musl makes them, futexes and poll, from ring 3 (self-tests
//! `user_futex`, `user_poll` and `user_poll_console`, `kernel/src/selftest/user_sync.rs`;
//! numbered checks as every fixture, `tally_uapi::fixture`).
//!
//! `futex`: `clone` refuses `CLONE_THREAD` without `CLONE_SIGHAND` (1), `CLONE_SIGHAND`
//! without `CLONE_VM` (2) and namespaces (3); `futex` answers `EINVAL` for an unaligned word
//! (4), `EFAULT` for an unmapped or kernel one (5), 0 for a wake on an unmapped user word (6),
//! `ENOSYS` for an unknown op and `FUTEX_CLOCK_REALTIME` with a wake (7), `EINVAL` for a
//! zero bitset and a bad `timespec` (8), `EFAULT` for an unreadable timeout (9), `EAGAIN` when
//! the word differs (10), `ETIMEDOUT` after a 20 ms wait (11), `EAGAIN` from a
//! `FUTEX_CMP_REQUEUE` whose word differs and `EINVAL` for a negative count (12). Then
//! [`THREADS`] threads made with musl's `clone` flags: each finds its tid in its tid word
//! before it runs (`CLONE_PARENT_SETTID`) and its FS base set (`CLONE_SETTLS`) (20, its
//! status), and they take a futex lock [`ROUNDS`] times each, yielding inside it so the
//! others sleep on it; joined through `CLONE_CHILD_CLEARTID` (13), the counter is exact
//! (14). A thread sleeping in `FUTEX_WAIT` is woken by one `FUTEX_WAKE`, which says 1 (15);
//! `FUTEX_WAKE_BITSET` wakes only the matching bitset (16). `msa(MSA_SELF)` shows
//! FUTEX_SLEEP (17). `mprotect` makes part of a `PROT_NONE` mapping, then all of it, usable,
//! and refuses an unaligned or unmapped range (18).
//!
//! `poll`: an empty pipe times out (1); the write end is writable (2); a thread's write
//! 20 ms later ends a `poll` with no timeout (3); a negative fd is skipped and a closed one
//! is POLLNVAL (4); the read end hangs up once the writer closes (5), the write end is in
//! error once the reader closes (6); `ppoll`'s timespec, the time left written back, its
//! errors (7); bad arrays (8); a bus socket is readable once a reply is queued (9); a
//! ramdisk directory and the console's output are always ready (10). POLL_SLEEP (11).
//!
//! `exit_group`: one thread sleeps in `FUTEX_WAIT` and one in `poll` on an empty pipe, both
//! without a timeout; the main thread calls `exit_group(0)` 30 ms later: the kernel must end
//! both sleeps (the process ends with status 0, and the test sees every thread exit).
//!
//! `console`: with echo off, `poll(0)` says nothing is typed (1), then sleeps until the
//! test types a line (2), which `read` returns (3).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU32, Ordering};

use tally_rt::fixture::{check, expect_err, expect_ok, usage};
use tally_rt::sys::{self, probe, probe::BadPtr};
use tally_rt::thread::{spawn_joinable, Joinable};
use tally_rt::uapi::clone::{CLONE_NEWPID, CLONE_SIGHAND, CLONE_THREAD, CLONE_VM};
use tally_rt::uapi::errno::{EAGAIN, EFAULT, EINVAL, ENOMEM, ENOSYS, ETIMEDOUT};
use tally_rt::uapi::futex::*;
use tally_rt::uapi::msa::{MSA_SELF, NR_MICROSTATES};
use tally_rt::uapi::poll::*;
use tally_rt::uapi::syscall::Timespec;
use tally_rt::uapi::syscall::{PROT_READ, PROT_WRITE};

tally_rt::entry!(main);

/// Threads contending on the lock, and how often each takes it.
const THREADS: usize = 4;
const ROUNDS: u32 = 200;
const FUTEX_SLEEP: usize = 11;
const POLL_SLEEP: usize = 12;
const STACK: usize = 16 * 1024;

fn main() -> i32 {
    match tally_rt::arg(1) {
        Some("futex") => futexes(),
        Some("poll") => polls(),
        Some("console") => console(),
        Some("exit_group") => exit_group(),
        _ => usage("futex | poll | console | exit_group"),
    }
}

fn pfd(fd: i32, events: i16) -> PollFd {
    PollFd { fd, events, revents: 0 }
}

fn my_clock(state: usize) -> u64 {
    let mut t = [0u64; NR_MICROSTATES];
    let _ = sys::msa(MSA_SELF, &mut t);
    t[state]
}

// ---- futex -------------------------------------------------------------------------------

/// Drepper's mutex ("Futexes are tricky", mutex 2): 0 free, 1 taken, 2 taken with sleepers.
static LOCK: AtomicU32 = AtomicU32::new(0);
/// Incremented under the lock by a load and a store, so a broken lock loses increments.
static COUNTER: AtomicU32 = AtomicU32::new(0);

fn lock() {
    if LOCK.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok() {
        return;
    }
    while LOCK.swap(2, Ordering::Acquire) != 0 {
        let _ = sys::futex_wait(&LOCK, 2, None);
    }
}

fn unlock() {
    if LOCK.fetch_sub(1, Ordering::Release) != 1 {
        LOCK.store(0, Ordering::Release);
        let _ = sys::futex_wake(&LOCK, 1);
    }
}

/// A worker: its FS base is its TLS block (`CLONE_SETTLS`) and its tid word, beside it,
/// holds its tid (`CLONE_PARENT_SETTID` happened before it ran); then the lock, `ROUNDS`
/// times.
extern "C" fn worker(_: usize) -> ! {
    let tid = sys::gettid().unwrap_or(0);
    let word = tally_rt::thread::my_tid_word();
    check(word.is_some_and(|w| w.load(Ordering::Acquire) as usize == tid), 20);
    for i in 0..ROUNDS {
        lock();
        let v = COUNTER.load(Ordering::Relaxed);
        if i % 8 == 0 {
            // Give the CPU away holding the lock: the others find it taken and sleep.
            let _ = sys::sched_yield();
        }
        COUNTER.store(v + 1, Ordering::Relaxed);
        unlock();
    }
    sys::exit(0)
}

static GATE: AtomicU32 = AtomicU32::new(0);
static WOKEN: AtomicU32 = AtomicU32::new(0);

/// Sleeps on `GATE` until it is 1, counts itself woken.
extern "C" fn gate_sleeper(bitset: usize) -> ! {
    while GATE.load(Ordering::Acquire) == 0 {
        let _ = sys::futex(&GATE, FUTEX_WAIT_BITSET_PRIVATE, 0, 0, None, bitset as u32);
    }
    WOKEN.fetch_add(1, Ordering::AcqRel);
    sys::exit(0)
}

fn futexes() -> i32 {
    let word = AtomicU32::new(7);
    let w = word.as_ptr() as usize;
    expect_err(probe::clone_refused(CLONE_THREAD | CLONE_VM), EINVAL, 1);
    expect_err(probe::clone_refused(CLONE_SIGHAND), EINVAL, 2);
    expect_err(probe::clone_refused(CLONE_NEWPID | 17), EINVAL, 3);

    expect_err(probe::futex(w + 1, FUTEX_WAIT_PRIVATE, 7, 0, 0, 0), EINVAL, 4);
    expect_err(probe::futex(BadPtr::UNMAPPED.addr(), FUTEX_WAIT_PRIVATE, 0, 0, 0, 0), EFAULT, 5);
    expect_err(probe::futex(BadPtr::KERNEL.addr(), FUTEX_WAIT, 0, 0, 0, 0), EFAULT, 5);
    expect_err(probe::futex(BadPtr::NON_CANONICAL.addr(), FUTEX_WAKE, 1, 0, 0, 0), EFAULT, 5);
    expect_ok(probe::futex(BadPtr::UNMAPPED.addr(), FUTEX_WAKE_PRIVATE, 1, 0, 0, 0), 0, 6);
    expect_err(sys::futex(&word, 99, 7, 0, None, 0), ENOSYS, 7);
    expect_err(sys::futex(&word, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, 0, None, 0), ENOSYS, 7);
    expect_err(sys::futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, 0, None, 0), EINVAL, 8);
    let bad = Timespec { tv_sec: 0, tv_nsec: 1_000_000_000 };
    expect_err(sys::futex_wait(&word, 7, Some(&bad)), EINVAL, 8);
    expect_err(probe::futex(w, FUTEX_WAIT_PRIVATE, 7, BadPtr::UNMAPPED.addr(), 0, 0), EFAULT, 9);
    expect_err(sys::futex_wait(&word, 8, None), EAGAIN, 10);
    let t0 = sys::monotonic_ns().unwrap_or(0);
    let short = Timespec { tv_sec: 0, tv_nsec: 20_000_000 };
    expect_err(sys::futex_wait(&word, 7, Some(&short)), ETIMEDOUT, 11);
    check(sys::monotonic_ns().unwrap_or(0) >= t0 + 20_000_000, 11);
    expect_err(sys::futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, Some(&word), 8), EAGAIN, 12);
    expect_err(sys::futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, u32::MAX as usize, Some(&word), 7), EINVAL, 12);
    expect_ok(sys::futex(&word, FUTEX_REQUEUE_PRIVATE, 1, 1, Some(&word), 0), 0, 12);

    // mprotect as musl's pthread_create uses it: a PROT_NONE reservation, made readable and
    // writable above its guard page; then the whole of it; the errors.
    let Ok(mut m) = sys::Mapping::new(3 * 4096, 0) else { return 18 };
    expect_ok(m.protect(4096, 2 * 4096, PROT_READ | PROT_WRITE), 0, 18);
    expect_ok(m.protect(0, 3 * 4096, PROT_READ | PROT_WRITE), 0, 18);
    m.words()[0].store(5, Ordering::Relaxed);
    check(m.load(0) == 5, 18);
    expect_err(m.protect(0, 4096, 0), EINVAL, 18); // PROT_NONE over a touched page: Tally's limit
    expect_err(probe::mprotect_refused(BadPtr::unaligned(m.addr()), 4096, PROT_READ), EINVAL, 18);
    expect_err(probe::mprotect_refused(BadPtr::UNMAPPED, 4096, PROT_READ), ENOMEM, 18);
    drop(m);

    // Contention: THREADS threads, one lock.
    let mut threads: [Option<Joinable>; THREADS] = Default::default();
    for t in threads.iter_mut() {
        *t = Some(spawn_joinable(worker, 0, STACK).unwrap_or_else(|_| tally_rt::fixture::fail(13)));
    }
    for t in threads.iter_mut() {
        let t = t.take().unwrap_or_else(|| tally_rt::fixture::fail(13));
        check(t.join().is_ok(), 13);
    }
    check(COUNTER.load(Ordering::Relaxed) == THREADS as u32 * ROUNDS, 14);

    // One sleeper, one wake: the wake says how many it woke.
    let s = spawn_joinable(gate_sleeper, FUTEX_BITSET_MATCH_ANY as usize, STACK)
        .unwrap_or_else(|_| tally_rt::fixture::fail(15));
    let _ = sys::sleep_ms(30);
    GATE.store(1, Ordering::Release);
    expect_ok(sys::futex_wake(&GATE, 1), 1, 15);
    check(s.join().is_ok() && WOKEN.load(Ordering::Acquire) == 1, 15);

    // Bitsets: two sleepers on bits 1 and 2; a wake for bit 2 wakes only the second.
    GATE.store(0, Ordering::Release);
    let a = spawn_joinable(gate_sleeper, 1, STACK).unwrap_or_else(|_| tally_rt::fixture::fail(16));
    let b = spawn_joinable(gate_sleeper, 2, STACK).unwrap_or_else(|_| tally_rt::fixture::fail(16));
    let _ = sys::sleep_ms(30);
    expect_ok(sys::futex(&GATE, FUTEX_WAKE_BITSET_PRIVATE, 2, 0, None, 2), 1, 16);
    GATE.store(1, Ordering::Release);
    expect_ok(sys::futex_wake(&GATE, i32::MAX as u32), 1, 16);
    check(a.join().is_ok() && b.join().is_ok(), 16);

    check(my_clock(FUTEX_SLEEP) > 0, 17);
    0
}

// ---- poll --------------------------------------------------------------------------------

static PIPE_W: AtomicU32 = AtomicU32::new(0);

/// Writes one byte to the pipe 20 ms after it starts.
extern "C" fn late_writer(_: usize) -> ! {
    let _ = sys::sleep_ms(20);
    let _ = sys::write(PIPE_W.load(Ordering::Acquire) as usize, b"x");
    sys::exit(0)
}

fn polls() -> i32 {
    let Ok((r, w)) = sys::pipe() else { return 1 };
    let (ri, wi) = (r as i32, w as i32);
    let mut f = [pfd(ri, POLLIN)];
    expect_ok(sys::poll(&mut f, 30), 0, 1);
    check(f[0].revents == 0, 1);
    let mut f = [pfd(wi, POLLOUT | POLLIN)];
    expect_ok(sys::poll(&mut f, 0), 1, 2);
    check(f[0].revents == POLLOUT, 2);

    PIPE_W.store(w as u32, Ordering::Release);
    let writer = spawn_joinable(late_writer, 0, STACK).unwrap_or_else(|_| tally_rt::fixture::fail(3));
    let mut f = [pfd(ri, POLLIN | POLLRDNORM)];
    expect_ok(sys::poll(&mut f, -1), 1, 3);
    check(f[0].revents == POLLIN | POLLRDNORM, 3);
    let mut b = [0u8; 4];
    expect_ok(sys::read(r, &mut b), 1, 3);
    check(writer.join().is_ok(), 3);

    let mut f = [pfd(-1, POLLIN), pfd(900, POLLIN), pfd(ri, POLLIN)];
    expect_ok(sys::poll(&mut f, 0), 1, 4);
    check(f[0].revents == 0 && f[1].revents == POLLNVAL && f[2].revents == 0, 4);

    check(sys::close(w).is_ok(), 5);
    let mut f = [pfd(ri, POLLIN)];
    expect_ok(sys::poll(&mut f, -1), 1, 5);
    check(f[0].revents == POLLHUP, 5);
    check(sys::close(r).is_ok(), 5);

    let Ok((r2, w2)) = sys::pipe() else { return 6 };
    check(sys::close(r2).is_ok(), 6);
    let mut f = [pfd(w2 as i32, POLLOUT)];
    expect_ok(sys::poll(&mut f, 0), 1, 6);
    check(f[0].revents == POLLOUT | POLLERR, 6);
    check(sys::close(w2).is_ok(), 6);

    // ppoll: a zero timeout, a short one with the time left written back, the errors.
    let Ok((r, w)) = sys::pipe() else { return 7 };
    let mut f = [pfd(r as i32, POLLIN)];
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    expect_ok(sys::ppoll(&mut f, Some(&mut ts), None), 0, 7);
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 10_000_000 };
    let mask = 0u64;
    expect_ok(sys::ppoll(&mut f, Some(&mut ts), Some(&mask)), 0, 7);
    check(ts.tv_sec == 0 && ts.tv_nsec == 0, 7);
    let mut ts = Timespec { tv_sec: 5, tv_nsec: 0 };
    check(sys::write(w, b"y") == Ok(1), 7);
    expect_ok(sys::ppoll(&mut f, Some(&mut ts), None), 1, 7);
    check(ts.tv_sec == 4 || ts.tv_sec == 5, 7);
    let bad = Timespec { tv_sec: 0, tv_nsec: -1 };
    expect_err(probe::ppoll(&mut f, &bad as *const Timespec as usize, 0, 8), EINVAL, 7);
    expect_err(probe::ppoll(&mut f, 0, &mask as *const u64 as usize, 4), EINVAL, 7);
    expect_err(probe::ppoll(&mut f, BadPtr::UNMAPPED.addr(), 0, 8), EFAULT, 7);
    expect_err(probe::ppoll(&mut f, 0, BadPtr::KERNEL.addr(), 8), EFAULT, 7);

    expect_err(probe::poll(BadPtr::UNMAPPED, 1, 0), EFAULT, 8);
    expect_err(probe::poll(BadPtr::code(), 1, 0), EFAULT, 8);
    expect_err(probe::poll_too_many(&mut f, 1025), EINVAL, 8);
    expect_ok(probe::poll(BadPtr::NULL, 0, 10), 0, 8);
    let _ = (sys::close(r), sys::close(w));

    // A bus socket: writable at once, readable once the controller's reply is queued.
    let Ok(mut sock) = tally_rt::bus::BusSocket::open() else { return 9 };
    let mut f = [pfd(sock.fd() as i32, POLLIN | POLLOUT)];
    expect_ok(sys::poll(&mut f, 0), 1, 9);
    check(f[0].revents == POLLOUT, 9);
    let seq = sock.next_seq();
    let Ok(req) = tally_msgbus::ctrl::getfamily_request(seq, "TASKSTATS") else { return 9 };
    check(sys::send(sock.fd(), &req).is_ok(), 9);
    expect_ok(sys::poll(&mut f, -1), 1, 9);
    check(f[0].revents == POLLIN | POLLOUT, 9);
    drop(sock);

    // Always ready: a ramdisk directory; the console's output.
    let Ok(dir) = sys::open("/bin", tally_rt::uapi::fs::O_DIRECTORY, 0) else { return 10 };
    let mut f = [pfd(dir as i32, POLLIN | POLLOUT), pfd(1, POLLOUT)];
    expect_ok(sys::poll(&mut f, -1), 2, 10);
    check(f[0].revents == POLLIN | POLLOUT && f[1].revents == POLLOUT, 10);
    let _ = sys::close(dir);

    check(my_clock(POLL_SLEEP) > 0, 11);
    0
}

// ---- the console -------------------------------------------------------------------------

fn console() -> i32 {
    use tally_rt::uapi::tty::ECHO;
    let Ok(saved) = sys::tcgetattr(0) else { return 1 };
    let mut quiet = saved;
    quiet.c_lflag &= !ECHO;
    check(sys::tcsetattr(0, sys::When::Now, &quiet).is_ok(), 1);
    let mut f = [pfd(0, POLLIN)];
    expect_ok(sys::poll(&mut f, 0), 0, 1);
    expect_ok(sys::poll(&mut f, -1), 1, 2);
    check(f[0].revents == POLLIN, 2);
    let mut line = [0u8; 16];
    let n = sys::read(0, &mut line);
    let _ = sys::tcsetattr(0, sys::When::Now, &saved);
    check(n == Ok(3) && &line[..3] == b"hi\n", 3);
    0
}

// ---- exit_group while threads sleep in futex and poll --------------------------------------

static NEVER: AtomicU32 = AtomicU32::new(0);
static EMPTY_PIPE: AtomicU32 = AtomicU32::new(0);

extern "C" fn futex_forever(_: usize) -> ! {
    loop {
        let _ = sys::futex_wait(&NEVER, 0, None);
    }
}

extern "C" fn poll_forever(_: usize) -> ! {
    let mut f = [pfd(EMPTY_PIPE.load(Ordering::Acquire) as i32, POLLIN)];
    loop {
        let _ = sys::poll(&mut f, -1);
    }
}

fn exit_group() -> i32 {
    let Ok((r, _w)) = sys::pipe() else { return 1 };
    EMPTY_PIPE.store(r as u32, Ordering::Release);
    check(spawn_joinable(futex_forever, 0, STACK).is_ok(), 1);
    check(spawn_joinable(poll_forever, 0, STACK).is_ok(), 1);
    let _ = sys::sleep_ms(30);
    sys::exit_group(0)
}
