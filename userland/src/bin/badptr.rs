//! `badptr` — every system call that takes a user pointer, given bad ones: each must answer
//! `-EFAULT`, and the kernel must go on.
//!
//! The kernel checks a user range before it touches it (`kernel/src/syscall/usercopy.rs`):
//! canonical, below the user half's end, not wrapping, mapped with the access the call needs.
//! `syscall_fuzz` shows that random arguments cannot fault the kernel; this program shows
//! the *answer* for each call and each kind of bad pointer:
//!
//! | kind | address |
//! |---|---|
//! | `null` | 0 (below `mmap_min_addr`, never mapped) |
//! | `unmapped` | `0xdead0000`, in the user half but in no region |
//! | `kernel` | `0xffff800000000000`, the kernel half |
//! | `noncanon` | `0x0000800000000000`, the first non-canonical address |
//! | `rodata` | this program's code (mapped, not writable: only for calls that write) |
//!
//! Output: one line per call that did not answer `EFAULT` (with what it answered), then
//! `badptr: N calls, all EFAULT` and status 0, or status 1.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_msgbus::ctrl::getfamily_request;
use tally_rt::bus::BusSocket;
use tally_rt::sys::{self, decode, raw};
use tally_rt::uapi::errno::{EFAULT, EINVAL};
use tally_rt::uapi::msa::{MSA_SELF, NR_MICROSTATES};
use tally_rt::uapi::netlink::{AF_NETLINK, NETLINK_GENERIC, SOCK_RAW, SOL_SOCKET, SO_RCVBUF};
use tally_rt::uapi::syscall::*;
use tally_rt::uapi::taskstats::TASKSTATS_GENL_NAME;
use tally_rt::{println, Errno};

tally_rt::entry!(main);

/// What the kernel must refuse for every call (read and write alike).
const BAD: [(&str, usize); 4] =
    [("null", 0), ("unmapped", 0xdead_0000), ("kernel", 0xffff_8000_0000_0000), ("noncanon", 0x0000_8000_0000_0000)];

struct Tally {
    calls: u32,
    wrong: u32,
}

impl Tally {
    /// Makes the call with `bad` in place of argument `at`, and checks it answered EFAULT.
    fn check(&mut self, name: &str, kind: &str, nr: usize, args: [usize; 6], at: usize, bad: usize) {
        self.expect(name, kind, nr, args, at, bad, EFAULT);
    }

    /// [`Tally::check`] with another expected errno.
    #[allow(clippy::too_many_arguments)]
    fn expect(&mut self, name: &str, kind: &str, nr: usize, mut args: [usize; 6], at: usize, bad: usize, want: i32) {
        args[at] = bad;
        // SAFETY: every address passed is one the kernel must refuse, so nothing of this
        // program can be written; the other arguments are valid descriptors and sizes.
        #[allow(unsafe_code)]
        let ret = unsafe { raw::syscall6(nr, args[0], args[1], args[2], args[3], args[4], args[5]) };
        self.calls += 1;
        match decode(ret) {
            Err(Errno(e)) if e == want => {}
            Err(e) => {
                self.wrong += 1;
                println!("badptr: {name}({kind}) answered {e}, not {}", Errno(want));
            }
            Ok(n) => {
                self.wrong += 1;
                println!("badptr: {name}({kind}) answered {n}, not {}", Errno(want));
            }
        }
    }

    /// [`Tally::check`] for every bad address; `writes` adds the read-only one.
    fn all(&mut self, name: &str, nr: usize, args: [usize; 6], at: usize, writes: bool) {
        self.all_but_null(name, nr, args, at, writes, EFAULT);
    }

    /// [`Tally::all`], where a NULL pointer is refused with `null` (as Linux's
    /// `sched_setscheduler` says `EINVAL` to a NULL `param` before it reads anything).
    fn all_but_null(&mut self, name: &str, nr: usize, args: [usize; 6], at: usize, writes: bool, null: i32) {
        for (kind, addr) in BAD {
            self.expect(name, kind, nr, args, at, addr, if addr == 0 { null } else { EFAULT });
        }
        if writes {
            self.check(name, "rodata", nr, args, at, text());
        }
    }
}

/// An address in this program's code: mapped, readable, not writable.
fn text() -> usize {
    main as *const () as usize
}

extern "C" fn never(_: usize) -> ! {
    sys::exit(1)
}

fn main() -> i32 {
    let Ok((rfd, wfd)) = sys::pipe() else {
        println!("badptr: pipe2 failed");
        return 1;
    };
    let Ok(sock) = sys::socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC) else {
        println!("badptr: socket failed");
        return 1;
    };
    // Something to read on both, so that a call that skipped its check would succeed.
    let _ = sys::write(wfd, b"0123456789abcdef");
    let mut len = [4u32];
    let lenp = len.as_mut_ptr() as usize;
    let mut val = [0i32];
    let valp = val.as_mut_ptr() as usize;
    let mut t = Tally { calls: 0, wrong: 0 };

    t.all("read(pipe)", SYS_READ, [rfd, 0, 16, 0, 0, 0], 1, true);
    t.all("read(console)", SYS_READ, [0, 0, 16, 0, 0, 0], 1, true);
    t.all("write(pipe)", SYS_WRITE, [wfd, 0, 16, 0, 0, 0], 1, false);
    t.all("open", SYS_OPEN, [0, 0, 0, 0, 0, 0], 0, false);
    t.all("pipe2", SYS_PIPE2, [0, 0, 0, 0, 0, 0], 0, true);
    t.all("ioctl(TCGETS)", SYS_IOCTL, [0, tally_rt::uapi::tty::TCGETS as usize, 0, 0, 0, 0], 2, true);
    t.all("ioctl(TCSETS)", SYS_IOCTL, [0, tally_rt::uapi::tty::TCSETS as usize, 0, 0, 0, 0], 2, false);
    t.all("ioctl(TIOCGWINSZ)", SYS_IOCTL, [0, tally_rt::uapi::tty::TIOCGWINSZ as usize, 0, 0, 0, 0], 2, true);
    t.all("nanosleep", SYS_NANOSLEEP, [0, 0, 0, 0, 0, 0], 0, false);
    t.all("clock_gettime", SYS_CLOCK_GETTIME, [1, 0, 0, 0, 0, 0], 1, true);
    t.all_but_null("sched_setscheduler", SYS_SCHED_SETSCHEDULER, [0, 1, 0, 0, 0, 0], 2, false, EINVAL);
    // thread_create's contract: a stack outside the user half is EINVAL; a user stack the
    // kernel cannot write its return address to is EFAULT.
    let entry = never as *const () as usize;
    t.check("thread_create(stack)", "unmapped", SYS_THREAD_CREATE, [entry, 0, 0, 0, 0, 0], 1, 0xdead_0000);
    t.check("thread_create(stack)", "rodata", SYS_THREAD_CREATE, [entry, 0, 0, 0, 0, 0], 1, text());
    t.all("spawn(path)", SYS_SPAWN, [0, 9, 0, 0, 0, 0], 0, false);
    t.all("msa", SYS_MSA, [NR_MICROSTATES, MSA_SELF as usize, 0, 0, 0, 0], 2, true);
    t.all("kstat_chain", SYS_KSTAT_CHAIN, [0, 4096, 0, 0, 0, 0], 0, true);
    t.all("kstat_read", SYS_KSTAT_READ, [0, 0, 65536, 0, 0, 0], 1, true);
    t.all("proc_stat", SYS_PROC_STAT, [0, 4, 0, 0, 0, 0], 0, true);
    t.all("blk_read", SYS_BLK_READ, [0, 0, 1, 0, 0, 0], 1, true);
    t.all("blk_write", SYS_BLK_WRITE, [0, 0, 1, 0, 0, 0], 1, false);
    t.all("bind", SYS_BIND, [sock, 0, 12, 0, 0, 0], 1, false);
    t.all("sendto", SYS_SENDTO, [sock, 0, 20, 0, 0, 0], 1, false);
    t.all("setsockopt(value)", SYS_SETSOCKOPT, [sock, SOL_SOCKET as usize, SO_RCVBUF as usize, 0, 4, 0], 3, false);
    t.all("getsockopt(value)", SYS_GETSOCKOPT, [sock, SOL_SOCKET as usize, SO_RCVBUF as usize, 0, lenp, 0], 3, true);
    t.all("getsockopt(length)", SYS_GETSOCKOPT, [sock, SOL_SOCKET as usize, SO_RCVBUF as usize, valp, 0, 0], 4, true);

    // recvfrom needs a datagram waiting: the controller's answer to a GETFAMILY.
    let queued = BusSocket::open().and_then(|mut bus| {
        let seq = bus.next_seq();
        let req = getfamily_request(seq, TASKSTATS_GENL_NAME).map_err(Errno)?;
        sys::send(bus.fd(), &req)?;
        Ok(bus)
    });
    let bus = match queued {
        Ok(bus) => bus,
        Err(e) => {
            println!("badptr: a GETFAMILY request on a bus socket: {e}");
            return 1;
        }
    };
    for (kind, addr) in BAD {
        t.check("recvfrom", kind, SYS_RECVFROM, [bus.fd(), 0, 4096, 0, 0, 0], 1, addr);
    }
    t.check("recvfrom", "rodata", SYS_RECVFROM, [bus.fd(), 0, 4096, 0, 0, 0], 1, text());

    // wait4 with an ended child: the bad status pointer is refused before the child is
    // reaped, so a good call afterwards still collects it (status 0).
    let child = match sys::spawn("/bin/hello", &["hello"]) {
        Ok(pid) => pid,
        Err(e) => {
            println!("badptr: spawn /bin/hello: {e}");
            return 1;
        }
    };
    let _ = sys::sleep_ms(20);
    for (kind, addr) in BAD.iter().filter(|b| b.1 != 0) {
        t.check("wait4(status)", kind, SYS_WAIT4, [child, 0, 0, 0, 0, 0], 1, *addr);
    }
    t.check("wait4(status)", "rodata", SYS_WAIT4, [child, 0, 0, 0, 0, 0], 1, text());
    let mut status = -1;
    match sys::wait4(child as isize, Some(&mut status), 0, None) {
        Ok(pid) if pid == child && status == 0 => {}
        other => {
            t.wrong += 1;
            match other {
                Ok(pid) => println!(
                    "badptr: the child was lost to the bad wait4 calls: wait4 answered pid {pid}, status {status:#x}"
                ),
                Err(e) => println!("badptr: the child was lost to the bad wait4 calls: wait4 answered {e}"),
            }
        }
    }

    if t.wrong == 0 {
        println!("badptr: {} calls, all EFAULT", t.calls);
        0
    } else {
        println!("badptr: {} of {} calls did not answer EFAULT", t.wrong, t.calls);
        1
    }
}
