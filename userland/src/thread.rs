//! # Threads: a stack, an entry point, and a way to wait for the end
//!
//! A thread is a second flow of control in the same memory. The kernel's part is small:
//! `thread_create(entry, stack_top, arg)` makes a task that shares the caller's address
//! space and starts at `entry` with `arg` in `rdi` and `rsp = stack_top - 8`. Everything
//! else is the program's business, and this module does the minimum of it:
//!
//! * **A stack.** Every thread needs its own. [`spawn`] takes it from `mmap` (demand-zero
//!   pages: only what the thread touches costs a frame and a minor fault, charged to it as
//!   ONCPU_TRAP). There is no guard page below it: a thread that overflows its stack writes
//!   into whatever mapping lies underneath, as with a C thread given `pthread_attr_setstack`.
//! * **An entry that never returns.** The entry has type `extern "C" fn(usize) -> !`: there
//!   is nothing to return to (the kernel put a 0 return address on the stack), so a thread
//!   ends by calling [`crate::sys::exit`] (only itself) or `exit_group` (the whole process).
//! * **Joining.** Linux's `pthread_join` sleeps on a futex that the kernel clears and wakes
//!   when the thread dies (`CLONE_CHILD_CLEARTID`): [`spawn_joinable`] makes threads that
//!   way (`clone` with musl's flags) and [`Joinable::join`] sleeps in FUTEX_SLEEP until the
//!   kernel has cleared the tid word. The older [`spawn`] (`thread_create`) threads join
//!   with [`Latch`], the simplest join without kernel help: each thread counts itself done
//!   on its way out, and the waiter polls the count, sleeping a little between looks (its
//!   waiting shows up as INTERRUPTIBLE_SLEEP).
//!
//! One consequence of a join without kernel help: the waiter learns that a thread has
//! *nearly* finished (it still runs the few instructions between [`Latch::arrive`] and
//! `exit`, on its stack), never that it has finished. So a stack cannot safely be given back
//! with `munmap` after the join; [`spawn`] returns where it is, and programs simply keep it
//! until the process ends. That is exactly the problem `CLONE_CHILD_CLEARTID` solves, and
//! why a [`Joinable`]'s stack is given back at its join.

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::{sys, Errno};

/// Stack size programs use when they have no reason to choose: 64 KiB.
pub const DEFAULT_STACK_SIZE: usize = 64 * 1024;
const PAGE: usize = 4096;

/// A thread started by [`spawn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Its thread id (what `gettid` returns in it).
    pub tid: usize,
    /// Its stack: `[stack_base, stack_base + stack_len)`.
    pub stack_base: usize,
    pub stack_len: usize,
}

/// Starts `entry(arg)` as a new thread of this process on a fresh stack of `stack_size`
/// bytes (rounded up to whole pages, at least one) taken from `mmap`.
pub fn spawn(entry: extern "C" fn(usize) -> !, arg: usize, stack_size: usize) -> Result<Thread, Errno> {
    let len = stack_size.max(1).checked_next_multiple_of(PAGE).ok_or(Errno(tally_uapi::errno::ENOMEM))?;
    let base = sys::mmap_anonymous(len)?;
    // The System V ABI wants rsp + 8 to be 16-byte aligned at a function's first
    // instruction; the kernel sets rsp = top - 8, so an aligned top gives exactly that.
    let top = (base + len) & !15;
    // SAFETY: [base, base + len) is a mapping made just now that nothing else refers to, so
    // the new thread owns it; `entry` cannot return (its type is `-> !`), so the thread never
    // pops the kernel's 0 return address, and it ends with `exit` on its own stack.
    match unsafe { sys::thread_create(entry, top, arg) } {
        Ok(tid) => Ok(Thread { tid, stack_base: base, stack_len: len }),
        Err(e) => {
            // SAFETY: no thread was created, so nothing uses the mapping.
            let _ = unsafe { sys::munmap(base, len) };
            Err(e)
        }
    }
}

/// Starts `entry(arg)` as a new thread on `stack`, memory the program gives up for good
/// (e.g. a piece of a [`sys::Mapping::leak`]ed mapping: several stacks from one `mmap`).
/// The stack's top is its end rounded down to 16 bytes. `EINVAL` for a stack under 32 bytes.
pub fn spawn_on(entry: extern "C" fn(usize) -> !, arg: usize, stack: &'static mut [u8]) -> Result<Thread, Errno> {
    let (base, len) = (stack.as_mut_ptr() as usize, stack.len());
    if len < 32 {
        return Err(Errno(tally_uapi::errno::EINVAL));
    }
    let top = (base + len) & !15;
    // SAFETY: the `&'static mut` is consumed here, so the new thread owns the stack for ever;
    // `entry` cannot return, and the thread ends with `exit` on that stack.
    let tid = unsafe { sys::thread_create(entry, top, arg) }?;
    Ok(Thread { tid, stack_base: base, stack_len: len })
}

/// A count of threads that have finished, for a join without futexes (see the module
/// documentation). Put it in a `static`; threads call [`Latch::arrive`] last thing before
/// `exit`, the waiter calls [`Latch::wait_for`].
pub struct Latch {
    arrived: AtomicUsize,
}

impl Latch {
    pub const fn new() -> Self {
        Latch { arrived: AtomicUsize::new(0) }
    }

    /// Counts the calling thread as done. `Release`: whatever it wrote before is visible to
    /// a waiter that sees the new count.
    pub fn arrive(&self) {
        self.arrived.fetch_add(1, Ordering::Release);
    }

    /// How many threads have arrived so far.
    pub fn count(&self) -> usize {
        self.arrived.load(Ordering::Acquire)
    }

    /// Waits until `n` threads have arrived, looking every `poll_ms` milliseconds (0: just
    /// `sched_yield` between looks — a busy wait that burns the waiter's CPU time).
    /// Fails only if the sleep call does.
    pub fn wait_for(&self, n: usize, poll_ms: u64) -> Result<(), Errno> {
        while self.count() < n {
            if poll_ms == 0 {
                sys::sched_yield()?;
            } else {
                sys::sleep_ms(poll_ms)?;
            }
        }
        Ok(())
    }
}

impl Default for Latch {
    fn default() -> Self {
        Self::new()
    }
}

/// A thread started as Linux's `pthread_create` starts one ([`spawn_joinable`]): `clone`
/// with musl's flags, joined by sleeping on its tid word, which the kernel clears (and wakes
/// a futex sleeper on) when the thread has exited — after which its stack is free to go.
#[derive(Debug)]
pub struct Joinable {
    /// Its thread id.
    pub tid: usize,
    /// Its memory: a control page (the tid word, the TLS block) and the stack above it.
    base: usize,
    len: usize,
}

/// Where the TLS block sits in a [`Joinable`]'s control page (its first word points at
/// itself, as x86_64's TLS ABI wants `%fs:0` to).
const TLS_OFFSET: usize = 64;

impl Joinable {
    /// The tid word: the thread's tid while it lives, 0 once it has exited.
    pub fn tid_word(&self) -> &core::sync::atomic::AtomicU32 {
        // SAFETY: `base` is the start of a live mapping this value owns (until `join`), and
        // an AtomicU32 may alias memory the kernel writes.
        unsafe { &*(self.base as *const core::sync::atomic::AtomicU32) }
    }

    /// The FS base the thread was given (`CLONE_SETTLS`).
    pub fn tls(&self) -> usize {
        self.base + TLS_OFFSET
    }

    /// Wait until the thread has exited (its tid word is 0): sleeps in FUTEX_SLEEP while it
    /// runs. Then its memory is given back.
    pub fn join(self) -> Result<(), Errno> {
        let word = self.tid_word();
        loop {
            let tid = word.load(Ordering::Acquire);
            if tid == 0 {
                break;
            }
            match sys::futex_wait(word, tid, None) {
                Ok(_) => {}
                Err(Errno(tally_uapi::errno::EAGAIN | tally_uapi::errno::EINTR)) => {}
                Err(e) => return Err(e),
            }
        }
        // SAFETY: the thread has exited (the kernel cleared its tid word at its exit, after
        // its last user instruction), so nothing uses the mapping any more.
        unsafe { sys::munmap(self.base, self.len) }.map(|_| ())
    }
}

/// In a thread started by [`spawn_joinable`]: its tid word (found from its FS base, the TLS
/// block beside the word). `None` in a thread without such a block (the main thread: FS
/// base 0).
pub fn my_tid_word() -> Option<&'static core::sync::atomic::AtomicU32> {
    let fs = sys::fs_base().ok()? as usize;
    if fs % PAGE != TLS_OFFSET {
        return None;
    }
    // SAFETY: an FS base at offset TLS_OFFSET of a page is one `spawn_joinable` set: the
    // control page of this thread's mapping, which lives as long as the thread (its joiner
    // unmaps it only after the kernel has cleared the word at the thread's exit).
    let tls_self = unsafe { core::ptr::read_volatile(fs as *const usize) };
    if tls_self != fs {
        return None;
    }
    // SAFETY: as above; the word is at the start of the control page.
    Some(unsafe { &*((fs - TLS_OFFSET) as *const core::sync::atomic::AtomicU32) })
}

/// Starts `entry(arg)` as a thread made the way musl's `pthread_create` makes one:
/// `clone(CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|
/// CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID|CLONE_DETACHED)` on a stack of
/// `stack_size` bytes from `mmap`, with a TLS block and the tid word in a page below it.
/// `entry` must end with [`sys::exit`]; [`Joinable::join`] waits for that.
pub fn spawn_joinable(entry: extern "C" fn(usize) -> !, arg: usize, stack_size: usize) -> Result<Joinable, Errno> {
    let stack = stack_size.max(PAGE).checked_next_multiple_of(PAGE).ok_or(Errno(tally_uapi::errno::ENOMEM))?;
    let len = stack + PAGE;
    let base = sys::mmap_anonymous(len)?;
    let t = Joinable { tid: 0, base, len };
    let tls = t.tls();
    // SAFETY: the control page is this mapping's, just made; the TLS block's first word
    // points at itself.
    unsafe { core::ptr::write(tls as *mut usize, tls) };
    let word = base;
    // SAFETY: the stack [base + PAGE, base + len) and the control page belong to the new
    // thread until `join` has seen it exit; `entry` ends with `exit` (its type: `-> !`).
    let r = unsafe { sys::clone(tally_uapi::clone::MUSL_THREAD_FLAGS, base + len, word, word, tls, entry, arg) };
    match r {
        Ok(tid) => Ok(Joinable { tid, ..t }),
        Err(e) => {
            // SAFETY: no thread was created, so nothing uses the mapping.
            let _ = unsafe { sys::munmap(base, len) };
            Err(e)
        }
    }
}
