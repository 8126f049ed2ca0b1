//! `/test/forks MODE` — `fork`, `vfork` and `execve` from ring 3: the fixture of the
//! `user_fork`, `fork_exec`, `fork_acct` and `fork_bomb` self-tests (`tally_uapi::fixture`).
//!
//! * `cow`: a parent fills 16 pages; its child sees them (10), then writes each: exactly one
//!   minor fault per page (11), time in ONCPU_TRAP (12), its own bytes (13); the parent reaps
//!   it (2, 3), still sees its own bytes (4), the child's rusage counted the faults (5), and
//!   its own writes afterwards are one minor fault per page too (6: the frames are its alone
//!   now, taken over without a copy — Linux counts those faults as well).
//! * `exec`: `execve`'s errors — ENOENT, EACCES for a directory (20), EFAULT for the path (21), the argument array
//!   (22) and an argument (23), E2BIG (24), ENAMETOOLONG (25); fork + execve `/bin/hello` +
//!   wait (26), a child whose execve fails exits 127 (27); vfork + execve (28), vfork of a
//!   missing program (29); a pipe's write end held by a forked child keeps the reader from
//!   end of file until the child exits (30), and a close-on-exec write end is closed by the
//!   child's execve while the program still runs (31); execve in a process of three threads
//!   (32: the other two end first); the maximum RSS of a program that exec'd spans the map it
//!   replaced (33).
//! * `acct FILE`: process accounting on to FILE (40), a child that exits 3 without exec, one
//!   that execs `/bin/hello`, a vfork child that execs it (41), accounting off (42): the
//!   kernel reads the three records (AFORK only on the first).
//! * `bomb`: fork until the kernel refuses: `EAGAIN` (50) after at least one child (51); the
//!   children (each blocked reading a pipe) then end and are reaped (52, 53).
//!
//! Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use tally_rt::fixture::{check, expect_err, expect_ok, positive, usage};
use tally_rt::sys::probe::{self, BadPtr};
use tally_rt::sys::{self, ExecArgs, Mapping};
use tally_rt::uapi::errno::{E2BIG, EACCES, EAGAIN, ECHILD, EFAULT, ENAMETOOLONG, ENOENT};
use tally_rt::uapi::fs::O_CLOEXEC;
use tally_rt::uapi::msa::{MicroState, MSA_THREAD, NR_MICROSTATES};
use tally_rt::uapi::procstat::ProcStat;
use tally_rt::uapi::syscall::{Rusage, PROT_READ, PROT_WRITE, WNOHANG};
use tally_rt::{println, Errno};

tally_rt::entry!(main);

const PAGES: usize = 16;
const HELLO: &str = "/bin/hello";

fn main() -> i32 {
    match tally_rt::arg(1) {
        Some("cow") => cow(),
        Some("exec") => exec(),
        Some("acct") => acct(tally_rt::arg(2).unwrap_or_else(|| usage("acct FILE"))),
        Some("bomb") => bomb(),
        _ => usage("cow|exec|acct FILE|bomb"),
    }
}

/// `fork()`; check `n` fails only if it does (0 in the child, the child's pid here).
fn fork_or(n: i32) -> usize {
    sys::fork().unwrap_or_else(|_| tally_rt::fixture::fail(n))
}

/// Wait for `pid`; its wait status.
fn reap(pid: usize, n: i32) -> i32 {
    let mut status = -1;
    expect_ok(sys::wait4(pid as isize, Some(&mut status), 0, None), pid, n);
    status
}

/// This thread's minor faults (from `proc_stat`, into `buf`, which the caller has touched).
fn minflt(buf: &mut [ProcStat]) -> u64 {
    let me = sys::gettid().unwrap_or(0) as i32;
    let n = sys::proc_stat(buf).unwrap_or(0).min(buf.len());
    buf[..n].iter().find(|s| s.pid == me).map_or(0, |s| s.minflt)
}

fn cow() -> i32 {
    let mut mem = Mapping::new(PAGES * 4096, PROT_READ | PROT_WRITE).unwrap_or_else(|_| tally_rt::fixture::fail(1));
    mem.bytes_mut().fill(0xaa);
    let mut stats = alloc::vec![ProcStat::zeroed(); 256];
    let mut clocks = [0u64; NR_MICROSTATES];
    minflt(&mut stats);
    let _ = sys::msa(MSA_THREAD, &mut clocks);
    let pid = sys::fork().unwrap_or_else(|_| tally_rt::fixture::fail(1));
    if pid == 0 {
        let b = mem.bytes_mut();
        check((0..PAGES).all(|i| b[i * 4096] == 0xaa && b[i * 4096 + 4095] == 0xaa), 10);
        // Touch what the measurement writes (its buffers, this stack) first: those copies
        // are not the ones counted.
        minflt(&mut stats);
        let _ = sys::msa(MSA_THREAD, &mut clocks);
        let before = minflt(&mut stats);
        let _ = sys::msa(MSA_THREAD, &mut clocks);
        let trap_before = clocks[MicroState::OncpuTrap as usize];
        for i in 0..PAGES {
            b[i * 4096] = 0xcc;
        }
        let after = minflt(&mut stats);
        let _ = sys::msa(MSA_THREAD, &mut clocks);
        let trap_after = clocks[MicroState::OncpuTrap as usize];
        println!("forks: child wrote {PAGES} shared pages: {} minor faults", after - before);
        check(after - before == PAGES as u64, 11);
        check(trap_after > trap_before, 12);
        check((0..PAGES).all(|i| b[i * 4096] == 0xcc && b[i * 4096 + 1] == 0xaa), 13);
        sys::exit_group(0);
    }
    let mut status = -1;
    let mut ru = Rusage::default();
    expect_ok(sys::wait4(pid as isize, Some(&mut status), 0, Some(&mut ru)), pid, 2);
    check(status == 0, 3);
    let b = mem.bytes_mut();
    check((0..PAGES).all(|i| b[i * 4096] == 0xaa), 4);
    check(ru.ru_minflt >= PAGES as i64, 5);
    minflt(&mut stats); // its buffer was shared too: taken over here, not counted below
    let before = minflt(&mut stats);
    for i in 0..PAGES {
        b[i * 4096] = 0xbb;
    }
    let after = minflt(&mut stats);
    println!("forks: parent wrote its {PAGES} pages after the child's end: {} minor faults", after - before);
    check(after - before == PAGES as u64, 6);
    0
}

fn exec() -> i32 {
    let hello = ExecArgs::new(HELLO, &["hello", "exec'd"], &["TERM=vt100"]);
    let [path, argv, envp] = hello.regs();
    expect_err(Err(sys::execve("/bin/nope", &["nope"], &[])), ENOENT, 20);
    expect_err(Err(sys::execve("/bin", &["bin"], &[])), EACCES, 20);
    expect_err(probe::execve(BadPtr::UNMAPPED.addr(), argv, envp), EFAULT, 21);
    expect_err(probe::execve(path, BadPtr::UNMAPPED.addr(), envp), EFAULT, 22);
    let bad_arg = [BadPtr::KERNEL.addr(), 0];
    expect_err(probe::execve(path, bad_arg.as_ptr() as usize, envp), EFAULT, 23);
    let huge: alloc::string::String = core::iter::repeat_n('x', 200_000).collect();
    expect_err(Err(sys::execve(HELLO, &["hello", &huge], &[])), E2BIG, 24);
    let long_path: alloc::string::String = core::iter::repeat_n('a', 5000).collect();
    expect_err(Err(sys::execve(&long_path, &["x"], &[])), ENAMETOOLONG, 25);

    let pid = fork_or(26);
    if pid == 0 {
        let e = sys::execve(HELLO, &["hello", "from", "a", "forked", "child"], &[]);
        sys::exit_group(100 + e.0);
    }
    check(reap(pid, 26) == 0, 26);
    let pid = fork_or(27);
    if pid == 0 {
        let Errno(e) = sys::execve("/bin/nope", &["nope"], &[]);
        sys::exit_group(if e == ENOENT { 127 } else { 1 });
    }
    check(reap(pid, 27) == 127 << 8, 27);

    let pid = positive(sys::vfork_execve(&hello), 28);
    check(reap(pid, 28) == 0, 28);
    let nope = ExecArgs::new("/bin/nope", &["nope"], &[]);
    let pid = positive(sys::vfork_execve(&nope), 29);
    check(reap(pid, 29) == 127 << 8, 29);

    // A forked child holds the write end until it exits.
    let (r, w) = sys::pipe().unwrap_or_else(|_| tally_rt::fixture::fail(30));
    let pid = fork_or(30);
    if pid == 0 {
        let _ = sys::close(r);
        let _ = sys::write(w, b"x");
        sys::exit_group(0);
    }
    let _ = sys::close(w);
    let mut buf = [0u8; 4];
    expect_ok(sys::read(r, &mut buf), 1, 30);
    expect_ok(sys::read(r, &mut buf), 0, 30);
    check(reap(pid, 30) == 0, 30);
    let _ = sys::close(r);
    // A close-on-exec write end goes at the child's execve: end of file while it still runs.
    let (r, w) = sys::pipe2(O_CLOEXEC).unwrap_or_else(|_| tally_rt::fixture::fail(31));
    let pid = fork_or(31);
    if pid == 0 {
        let _ = sys::close(r);
        let e = sys::execve("/bin/sleeper", &["sleeper", "60000"], &[]);
        sys::exit_group(100 + e.0);
    }
    let _ = sys::close(w);
    expect_ok(sys::read(r, &mut buf), 0, 31);
    expect_ok(sys::wait4(pid as isize, None, WNOHANG, None), 0, 31);
    let _ = sys::kill(pid as isize, 9);
    check(reap(pid, 31) == 9, 31);
    let _ = sys::close(r);
    // execve in a process of three threads (one asleep, one computing): the others end
    // first (Linux's de_thread) and the program runs.
    let pid = fork_or(32);
    if pid == 0 {
        for arg in [0, 1] {
            if tally_rt::thread::spawn(busy, arg, 16 * 1024).is_err() {
                sys::exit_group(99);
            }
        }
        let e = sys::execve(HELLO, &["hello", "after", "threads"], &[]);
        sys::exit_group(100 + e.0);
    }
    check(reap(pid, 32) == 0, 32);
    // What an exec replaces still counts: a child that touched 4 MiB, then exec'd a small
    // program, has a maximum RSS of at least 4 MiB (Linux keeps maxrss across exec too);
    // one that exec'd without touching anything stays below.
    let big = 1024;
    let mut maxrss = [0i64; 2];
    for (i, touch) in [true, false].into_iter().enumerate() {
        let pid = fork_or(33);
        if pid == 0 {
            if touch {
                let Ok(mut m) = Mapping::new(big * 4096, PROT_READ | PROT_WRITE) else { sys::exit_group(98) };
                m.bytes_mut().iter_mut().step_by(4096).for_each(|b| *b = 1);
                core::mem::forget(m);
            }
            let e = sys::execve(HELLO, &["hello"], &[]);
            sys::exit_group(100 + e.0);
        }
        let mut status = -1;
        let mut ru = Rusage::default();
        expect_ok(sys::wait4(pid as isize, Some(&mut status), 0, Some(&mut ru)), pid, 33);
        check(status == 0, 33);
        maxrss[i] = ru.ru_maxrss;
    }
    println!("forks: maxrss after exec: {} KiB (4 MiB touched before), {} KiB (none)", maxrss[0], maxrss[1]);
    check(maxrss[0] >= (big as i64) * 4 && maxrss[1] < (big as i64) * 4, 33);
    println!("forks: exec checks passed");
    0
}

/// A thread that sleeps (`arg` 0) or computes (1) until it is made to end.
extern "C" fn busy(arg: usize) -> ! {
    let mut x = 0u64;
    loop {
        if arg == 0 {
            let _ = sys::sleep_ms(1000);
        } else {
            x = core::hint::black_box(x.wrapping_add(1));
        }
    }
}

fn acct(file: &str) -> i32 {
    expect_ok(sys::acct(Some(file)), 0, 40);
    let pid = fork_or(41);
    if pid == 0 {
        sys::exit_group(3);
    }
    check(reap(pid, 41) == 3 << 8, 41);
    let pid = fork_or(41);
    if pid == 0 {
        let e = sys::execve(HELLO, &["hello"], &[]);
        sys::exit_group(100 + e.0);
    }
    check(reap(pid, 41) == 0, 41);
    let pid = positive(sys::vfork_execve(&ExecArgs::new(HELLO, &["hello"], &[])), 41);
    check(reap(pid, 41) == 0, 41);
    expect_ok(sys::acct(None), 0, 42);
    0
}

fn bomb() -> i32 {
    let (r, w) = sys::pipe().unwrap_or_else(|_| tally_rt::fixture::fail(50));
    let mut children: Vec<usize> = Vec::with_capacity(4096);
    let refused = loop {
        match sys::fork() {
            Ok(0) => {
                // Wait for the parent's word: end of file once it closes its write end.
                let _ = sys::close(w);
                let mut b = [0u8; 1];
                let _ = sys::read(r, &mut b);
                sys::exit_group(0);
            }
            Ok(pid) => children.push(pid),
            Err(e) => break e,
        }
        if children.len() >= 4096 {
            break Errno(0);
        }
    };
    println!("forks: {} children, then fork said errno {}", children.len(), refused.0);
    check(refused == Errno(EAGAIN), 50);
    check(!children.is_empty(), 51);
    let _ = sys::close(w);
    for _ in 0..children.len() {
        let mut status = -1;
        let pid = sys::wait4(-1, Some(&mut status), 0, None).unwrap_or(0);
        check(children.contains(&pid) && status == 0, 52);
    }
    expect_err(sys::wait4(-1, None, 0, None), ECHILD, 53);
    0
}
