//! `/test/signals_abi` — POSIX signals with user-mode handlers, from ring 3, as Linux x86_64
//! has them (run by init: the scenario `signals_abi`). Each check is numbered; the first
//! failure is the exit status.
//!
//! A handler on `kill(self)` (1-7): it runs on the way out of `kill` with `rdi` = the
//! signal, `siginfo` (SI_USER, the sender's pid and uid) and a `ucontext` (user selectors,
//! the mask to restore, an aligned FPU area), on a stack aligned as after a call, and
//! returns through the restorer with every register back although it clobbered them all;
//! the mask is back too. Masks (8-13): a blocked signal stays pending (`rt_sigpending`) and
//! its handler runs when `rt_sigprocmask` unblocks it; SIGKILL and SIGSTOP are never
//! blocked; a bad `how` is `EINVAL`. `rt_sigtimedwait` (14-16): takes a blocked pending
//! signal without running its handler; `EAGAIN` after its timeout. `sigaltstack` (17-21):
//! `SS_DISABLE` at first, `ENOMEM` below `MINSIGSTKSZ`, `EINVAL` for bad flags; an
//! `SA_ONSTACK` handler runs on it and the frame records the stack. Interrupted calls
//! (22-25): a read of an empty pipe and a `nanosleep` end with `EINTR` (and the time left)
//! when a handler without `SA_RESTART` runs, and the read goes on with `SA_RESTART`. A
//! SIGSEGV handler (26-29) after a bad read gets `si_addr`, `SEGV_MAPERR`, `cr2` and
//! `trapno` 14, and moves the program on past the read. A thread spinning in user mode
//! (30) gets a signal at an interrupt. `rt_sigsuspend` (31) ends with `EINTR` once a
//! handler ran and gives the old mask back. A forged frame (32-33: `rip` non-canonical, or
//! in the kernel) kills only its process, with SIGSEGV. SIGCHLD taken with
//! `rt_sigtimedwait` carries `CLD_EXITED`, the child's pid and status (34); a caught SIGTSTP
//! runs its handler instead of stopping the process (35); `tgkill`'s `ESRCH` and `EINVAL`
//! (36); `SA_RESETHAND` (37).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};

use tally_rt::fixture::{check, expect_err, expect_ok};
use tally_rt::signal::{self, Recorder, FORGE_RIP};
use tally_rt::uapi::errno::{EAGAIN, EINTR, EINVAL, ENOMEM, ESRCH};
use tally_rt::uapi::signal::{
    StackT, CLD_EXITED, MINSIGSTKSZ, SA_ONSTACK, SA_RESETHAND, SA_RESTART, SEGV_MAPERR, SIGCHLD, SIGKILL, SIGSEGV,
    SIGSTOP, SIGTSTP, SIGUSR1, SIGUSR2, SIG_BLOCK, SIG_SETMASK, SIG_UNBLOCK, SI_USER, SS_DISABLE, UC_SIGCONTEXT_SS,
};
use tally_rt::uapi::syscall::Timespec;
use tally_rt::uapi::wait::{wifsignaled, wtermsig};
use tally_rt::{println, sys, thread};

tally_rt::entry!(main);

const fn bit(sig: u8) -> u64 {
    1 << (sig - 1)
}

/// The main thread's tid, for the helper thread's `tgkill`.
static MAIN_TID: AtomicU64 = AtomicU64::new(0);
/// What the helper thread does: 1 = signal the main thread until told to stop; 2 = three
/// signals, then a byte into the pipe (`PIPE_W`); 0 = stop.
static HELPER_MODE: AtomicU64 = AtomicU64::new(0);
static PIPE_W: AtomicU64 = AtomicU64::new(0);
static HELPER_DONE: AtomicU64 = AtomicU64::new(0);

extern "C" fn helper(_: usize) -> ! {
    let pid = sys::getpid().unwrap_or(0);
    loop {
        let tid = MAIN_TID.load(Ordering::SeqCst) as usize;
        match HELPER_MODE.load(Ordering::SeqCst) {
            1 => {
                let _ = signal::tgkill(pid, tid, SIGUSR2);
                let _ = sys::sleep_ms(5);
            }
            2 => {
                for _ in 0..3 {
                    let _ = sys::sleep_ms(5);
                    let _ = signal::tgkill(pid, tid, SIGUSR2);
                }
                let _ = sys::write(PIPE_W.load(Ordering::SeqCst) as usize, b"x");
                HELPER_MODE.store(0, Ordering::SeqCst);
            }
            _ => {
                if HELPER_DONE.load(Ordering::SeqCst) != 0 {
                    sys::exit(0);
                }
                let _ = sys::sleep_ms(2);
            }
        }
    }
}

fn main() -> i32 {
    if let Some(mode) = tally_rt::arg(1) {
        return forged(mode);
    }
    let pid = sys::getpid().unwrap_or(0);
    let uid = sys::getuid().unwrap_or(0);
    MAIN_TID.store(sys::gettid().unwrap_or(0) as u64, Ordering::SeqCst);

    // A handler on kill(self).
    check(Recorder::install(SIGUSR1, 0, 0).is_ok_and(|old| old.sa_handler == 0), 1);
    let (r, regs_ok) = signal::kill_preserving(pid, SIGUSR1);
    expect_ok(r, 0, 2);
    check(regs_ok, 3);
    check(Recorder::count() == 1 && signal::RECORDED_SIG.load(Ordering::SeqCst) == SIGUSR1 as u64, 4);
    let info = Recorder::info();
    check(info.signo == SIGUSR1 as i32 && info.code == SI_USER && info.pid == pid as i32 && info.uid == uid as u32, 5);
    let uc = Recorder::ucontext();
    let rsp = signal::RECORDED_RSP.load(Ordering::SeqCst);
    check(
        (rsp + 8).is_multiple_of(16)
            && uc.sigmask == 0
            && uc.flags & UC_SIGCONTEXT_SS != 0
            && uc.mcontext.cs == 0x33
            && uc.mcontext.ss == 0x2b
            && uc.mcontext.fpstate != 0
            && uc.mcontext.fpstate.is_multiple_of(64)
            && uc.mcontext.fpstate > rsp,
        6,
    );
    expect_ok(signal::sigprocmask(SIG_BLOCK, None).map(|m| m as usize), 0, 7);

    // Masks: pending while blocked, delivered at the unblock.
    expect_ok(signal::sigprocmask(SIG_BLOCK, Some(bit(SIGUSR2))).map(|m| m as usize), 0, 8);
    check(Recorder::install(SIGUSR2, 0, 0).is_ok(), 9);
    let before = Recorder::count();
    check(sys::kill(pid as isize, SIGUSR2 as i32).is_ok() && Recorder::count() == before, 10);
    expect_ok(signal::sigpending().map(|s| s as usize), bit(SIGUSR2) as usize, 11);
    check(signal::sigprocmask(SIG_UNBLOCK, Some(bit(SIGUSR2))).is_ok() && Recorder::count() == before + 1, 12);
    check(signal::RECORDED_SIG.load(Ordering::SeqCst) == SIGUSR2 as u64 && signal::sigpending() == Ok(0), 12);
    let _ = signal::sigprocmask(SIG_SETMASK, Some(u64::MAX));
    let all = signal::sigprocmask(SIG_SETMASK, Some(0)).unwrap_or(0);
    check(all & (bit(SIGKILL) | bit(SIGSTOP)) == 0 && all & bit(SIGUSR1) != 0, 13);
    expect_err(signal::sigprocmask(7, Some(0)).map(|m| m as usize), EINVAL, 13);

    // rt_sigtimedwait.
    let _ = signal::sigprocmask(SIG_BLOCK, Some(bit(SIGUSR1)));
    let before = Recorder::count();
    let _ = sys::kill(pid as isize, SIGUSR1 as i32);
    let zero = Timespec { tv_sec: 0, tv_nsec: 0 };
    let got = signal::sigtimedwait(bit(SIGUSR1), Some(&zero));
    check(got.is_ok_and(|i| i.signo == SIGUSR1 as i32 && i.pid == pid as i32) && Recorder::count() == before, 14);
    let short = Timespec { tv_sec: 0, tv_nsec: 20_000_000 };
    check(signal::sigtimedwait(bit(SIGUSR1), Some(&short)).err() == Some(tally_rt::Errno(EAGAIN)), 15);
    check(signal::sigprocmask(SIG_UNBLOCK, Some(bit(SIGUSR1))).is_ok() && Recorder::count() == before, 16);

    // sigaltstack.
    check(signal::sigaltstack(None).is_ok_and(|s| s.flags == SS_DISABLE), 17);
    let base = sys::mmap_anonymous(16384).unwrap_or(0) as u64;
    let small = StackT { sp: base, flags: 0, size: MINSIGSTKSZ - 1 };
    expect_err(signal::sigaltstack(Some(&small)).map(|_| 0), ENOMEM, 18);
    let bad = StackT { sp: base, flags: 7, size: 16384 };
    expect_err(signal::sigaltstack(Some(&bad)).map(|_| 0), EINVAL, 19);
    let alt = StackT { sp: base, flags: 0, size: 16384 };
    check(signal::sigaltstack(Some(&alt)).is_ok() && Recorder::install(SIGUSR1, SA_ONSTACK, 0).is_ok(), 20);
    let _ = sys::kill(pid as isize, SIGUSR1 as i32);
    let rsp = signal::RECORDED_RSP.load(Ordering::SeqCst);
    let uc = Recorder::ucontext();
    check(
        (base..base + 16384).contains(&rsp)
            && uc.stack.sp == base
            && uc.stack.size == 16384
            && uc.stack.flags == 0
            && signal::sigaltstack(None).is_ok_and(|s| s.sp == base && s.flags == 0),
        21,
    );

    // Interrupted calls: EINTR without SA_RESTART, a restart with it.
    let Ok((rfd, wfd)) = sys::pipe2(0) else { return 22 };
    PIPE_W.store(wfd as u64, Ordering::SeqCst);
    check(Recorder::install(SIGUSR2, 0, 0).is_ok(), 22);
    check(thread::spawn(helper, 0, thread::DEFAULT_STACK_SIZE).is_ok(), 22);
    let before = Recorder::count();
    HELPER_MODE.store(1, Ordering::SeqCst);
    let mut buf = [0u8; 4];
    expect_err(sys::read(rfd, &mut buf), EINTR, 23);
    let ten = Timespec { tv_sec: 10, tv_nsec: 0 };
    let mut rem = Timespec { tv_sec: 0, tv_nsec: 0 };
    expect_err(sys::nanosleep(&ten, Some(&mut rem)), EINTR, 24);
    HELPER_MODE.store(0, Ordering::SeqCst);
    check(Recorder::count() > before && rem.tv_sec < 10 && (rem.tv_sec > 0 || rem.tv_nsec > 0), 24);
    check(Recorder::install(SIGUSR2, SA_RESTART, 0).is_ok(), 25);
    let _ = sys::sleep_ms(20);
    let before = Recorder::count();
    HELPER_MODE.store(2, Ordering::SeqCst);
    check(sys::read(rfd, &mut buf) == Ok(1) && Recorder::count() > before, 25);

    // A SIGSEGV handler after a bad read.
    check(Recorder::install(SIGSEGV, 0, 0).is_ok(), 26);
    let before = Recorder::count();
    check(!signal::read_or_resume(0x10), 27);
    let info = Recorder::info();
    check(
        Recorder::count() == before + 1
            && info.signo == SIGSEGV as i32
            && info.code == SEGV_MAPERR
            && Recorder::info_word(2) == 0x10,
        28,
    );
    let uc = Recorder::ucontext();
    check(uc.mcontext.cr2 == 0x10 && uc.mcontext.trapno == 14 && uc.mcontext.err & 4 != 0, 29);

    // A thread spinning in user mode gets its signal at an interrupt.
    let before = Recorder::count();
    HELPER_MODE.store(1, Ordering::SeqCst);
    while Recorder::count() == before {
        core::hint::spin_loop();
    }
    HELPER_MODE.store(0, Ordering::SeqCst);

    // rt_sigsuspend: the mask it gives stands until a handler has run, then the old one.
    let _ = signal::sigprocmask(SIG_SETMASK, Some(bit(SIGUSR1)));
    let before = Recorder::count();
    HELPER_MODE.store(1, Ordering::SeqCst);
    let e = signal::sigsuspend(0);
    HELPER_MODE.store(0, Ordering::SeqCst);
    let mask = signal::sigprocmask(SIG_SETMASK, Some(0));
    check(e == tally_rt::Errno(EINTR) && Recorder::count() > before && mask == Ok(bit(SIGUSR1)), 31);
    HELPER_DONE.store(1, Ordering::SeqCst);

    // Forged frames kill only their process.
    for (n, mode) in [(32, "forge-noncanonical"), (33, "forge-kernel")] {
        let Ok(child) = sys::spawn("/test/signals_abi", &["signals_abi", mode]) else { return n };
        let mut status = 0;
        check(sys::wait4(child as isize, Some(&mut status), 0, None) == Ok(child), n);
        check(wifsignaled(status) && wtermsig(status) == SIGSEGV as i32, n);
    }
    // SIGCHLD waited for with rt_sigtimedwait, as a C library's posix_spawn-and-wait does.
    let _ = signal::sigprocmask(SIG_BLOCK, Some(bit(SIGCHLD)));
    let Ok(child) = sys::spawn("/test/exiter", &["exiter"]) else { return 34 };
    let got = signal::sigtimedwait(bit(SIGCHLD), None);
    check(
        got.is_ok_and(|i| i.signo == SIGCHLD as i32 && i.code == CLD_EXITED && i.pid == child as i32 && i.status == 0),
        34,
    );
    check(sys::wait4(child as isize, None, 0, None) == Ok(child), 34);
    let _ = signal::sigprocmask(SIG_UNBLOCK, Some(bit(SIGCHLD)));

    // A caught stop signal runs its handler instead of stopping the process.
    check(Recorder::install(SIGTSTP, 0, 0).is_ok(), 35);
    let before = Recorder::count();
    check(
        sys::kill(pid as isize, SIGTSTP as i32).is_ok()
            && Recorder::count() == before + 1
            && signal::RECORDED_SIG.load(Ordering::SeqCst) == SIGTSTP as u64,
        35,
    );

    // tgkill's checks, and a signal to this very thread.
    let tid = MAIN_TID.load(Ordering::SeqCst) as usize;
    expect_err(signal::tgkill(pid, 999_999, SIGUSR1), ESRCH, 36);
    expect_err(signal::tgkill(0, tid, SIGUSR1), EINVAL, 36);
    expect_err(signal::tgkill(pid + 1, tid, SIGUSR1), ESRCH, 36);
    expect_ok(signal::tgkill(pid, tid, 0), 0, 36);

    // SA_RESETHAND: the handler runs once, then the default action is back.
    check(Recorder::install(SIGUSR1, SA_RESETHAND, 0).is_ok(), 37);
    let before = Recorder::count();
    let _ = signal::tgkill(pid, tid, SIGUSR1);
    check(Recorder::count() == before + 1 && signal::sigaction(SIGUSR1, None).is_ok_and(|a| a.sa_handler == 0), 37);
    println!("signals_abi: 37 checks passed");
    0
}

/// A child whose handler forges `uc_mcontext.rip` and `rsp`: `rt_sigreturn` must kill it.
fn forged(mode: &str) -> i32 {
    let rip = match mode {
        "forge-noncanonical" => 0x8000_0000_0000_0000u64,
        "forge-kernel" => 0xffff_8000_0010_0000,
        _ => return 2,
    };
    FORGE_RIP.store(rip, Ordering::SeqCst);
    if Recorder::install(SIGUSR1, 0, 0).is_err() {
        return 3;
    }
    let _ = sys::kill(sys::getpid().unwrap_or(0) as isize, SIGUSR1 as i32);
    4 // not reached: the forged frame kills the process
}
