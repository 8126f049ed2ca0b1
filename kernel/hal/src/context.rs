//! Kernel threads at the machine level: a stack with a guard page, a saved stack pointer,
//! and the switch between two of them.
//!
//! A context switch only has to save what the compiler expects a function call to
//! preserve: the callee-saved registers `rbx rbp r12-r15` and the stack pointer. The switch
//! pushes them on the old thread's stack, stores `rsp` in the old [`Thread`], loads the new
//! thread's `rsp`, pops the new thread's registers and returns — into wherever the new
//! thread last called [`switch`], or, for a new thread, into the trampoline that calls its
//! entry function. Every other register was already saved by the caller (or by the
//! interrupt entry, when the switch happens on the way out of an interrupt).
//!
//! Each thread's stack sits in its own slot of a virtual region, with the page below it left
//! unmapped: running off the bottom faults on the guard page instead of silently
//! overwriting a neighbour, and the double-fault handler reports the overflow.
//!
//! A thread of a user process ([`Thread::spawn_user`]) also carries its process's
//! [`AddressSpace`] and a save area for the FPU/SSE registers user code may use. The switch
//! then does three more things for the incoming thread: load its CR3 (the kernel's own table
//! for kernel threads) if it differs from the current one; point the TSS's `rsp0` and the
//! `syscall` entry at its kernel stack top, so that an interrupt, exception or system call
//! from its user mode lands on its own kernel stack; and save/restore the FPU/SSE registers
//! (`fxsave`/`fxrstor`) of the user threads involved — kernel threads never touch them.
//!
//! Each user thread also has its own **FS base** (`arch_prctl(ARCH_SET_FS)`): the address
//! `fs:`-relative accesses add, which C libraries point at the thread's control block (its
//! thread-local storage). The switch loads the incoming user thread's value into the
//! `FS_BASE` MSR when it differs from the one loaded; the kernel never uses FS itself.
//!
//! A kernel thread can also *become* a user thread in place ([`Thread::exec_user`]): init
//! (pid 1) does, when the kernel's part of boot is done and it execs `/bin/init` — the same
//! stack and saved state, from then on a process's CR3 and FPU registers.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;
use x86_64::registers::model_specific::FsBase;
use x86_64::structures::paging::PageTableFlags;

use super::address_space::{self, AddressSpace};
use super::paging::{self, MapError};

/// Region of kernel-thread stacks; slot `i` starts at `STACKS_BASE + i * SLOT_SIZE`.
const STACKS_BASE: u64 = 0xffff_d000_0000_0000;
/// Stack pages per thread (64 KiB: debug builds use deep frames — unoptimised code keeps a
/// copy of every by-value struct, and reaping a child through the task table's generic
/// code alone takes about 15 KiB there; a release build needs a fraction of this).
pub const STACK_PAGES: u64 = 16;
/// One guard page below the stack, then the stack.
const SLOT_SIZE: u64 = (STACK_PAGES + 1) * 4096;
const MAX_SLOTS: u64 = 1 << 20;

struct SlotPool {
    next: u64,
    free: Vec<u64>,
}

static SLOTS: Mutex<SlotPool> = Mutex::new(SlotPool { next: 0, free: Vec::new() });

/// A mapped kernel stack; unmapped (frames returned) when dropped.
struct KernelStack {
    slot: u64,
}

impl KernelStack {
    fn new() -> Result<Self, MapError> {
        let slot = {
            let mut pool = SLOTS.lock();
            match pool.free.pop() {
                Some(s) => s,
                None if pool.next < MAX_SLOTS => {
                    pool.next += 1;
                    pool.next - 1
                }
                None => return Err(MapError::OutOfFrames),
            }
        };
        let stack = KernelStack { slot };
        paging::map_zeroed(stack.bottom(), STACK_PAGES, PageTableFlags::WRITABLE | PageTableFlags::NO_EXECUTE)?;
        Ok(stack)
    }

    fn guard(&self) -> u64 {
        STACKS_BASE + self.slot * SLOT_SIZE
    }

    fn bottom(&self) -> u64 {
        self.guard() + 4096
    }

    fn top(&self) -> u64 {
        self.bottom() + STACK_PAGES * 4096
    }
}

impl Drop for KernelStack {
    fn drop(&mut self) {
        paging::unmap_and_free(self.bottom(), STACK_PAGES);
        SLOTS.lock().free.push(self.slot);
    }
}

/// The `fxsave` image of the x87/SSE registers (512 bytes, 16-byte aligned).
#[repr(C, align(16))]
struct FxArea([u8; 512]);

impl FxArea {
    /// The registers as after `fninit` with SSE defaults: x87 control word 0x37f (all
    /// exceptions masked, extended precision), MXCSR 0x1f80 (all SIMD exceptions masked).
    fn initial() -> Self {
        let mut a = FxArea([0; 512]);
        a.0[0..2].copy_from_slice(&0x037fu16.to_le_bytes());
        a.0[24..28].copy_from_slice(&0x1f80u32.to_le_bytes());
        a
    }
}

/// A thread's machine state: its kernel stack (none for the boot thread, which runs on the
/// boot loader's stack), its saved stack pointer while it is not running, and for a user
/// thread its address space and FPU/SSE registers.
pub struct Thread {
    /// Held for its `Drop`: the stack is unmapped when the last reference goes.
    _stack: Option<KernelStack>,
    rsp: UnsafeCell<u64>,
    /// What the thread runs on. Set at creation; replaced only by [`Thread::exec_user`], by
    /// the thread itself; read by `switch`.
    mode: UnsafeCell<Mode>,
    /// Top of its kernel stack (0 for the boot thread), precomputed for `switch`.
    stack_top: u64,
    /// Its FS base (user threads only; always a user-half address, checked when set).
    fs_base: AtomicU64,
}

/// The value in the `FS_BASE` MSR now (what the last user thread switched to, or the running
/// thread itself, set): a switch between threads with the same value skips the `wrmsr`.
static LOADED_FS_BASE: AtomicU64 = AtomicU64::new(0);

fn load_fs_base(v: u64) {
    if LOADED_FS_BASE.swap(v, Ordering::Relaxed) != v {
        // Checked canonical where it was stored (`set_fs_base`), so `new_truncate` keeps it.
        FsBase::write(x86_64::VirtAddr::new_truncate(v));
    }
}

/// The part of a thread's machine state that an exec in place changes.
struct Mode {
    /// The address space this thread runs in (held so it lives as long as the thread runs
    /// on it); `None`: the kernel's own table.
    _space: Option<Arc<AddressSpace>>,
    /// The CR3 value it runs with: its space's root, or the kernel's table.
    root: u64,
    /// Saved x87/SSE registers of a user thread (written by `switch` only).
    fpu: Option<alloc::boxed::Box<UnsafeCell<FxArea>>>,
}

impl Mode {
    fn kernel() -> Mode {
        Mode { _space: None, root: paging::kernel_root(), fpu: None }
    }

    /// Runs on `space`, with FPU/SSE registers of its own, reset.
    fn user(space: Arc<AddressSpace>) -> Mode {
        Mode {
            root: space.root(),
            _space: Some(space),
            fpu: Some(alloc::boxed::Box::new(UnsafeCell::new(FxArea::initial()))),
        }
    }
}

// SAFETY: `rsp`, the mode and the FPU area are only accessed by `switch`, which runs with
// interrupts disabled on the only CPU, for the two threads it switches between, and by
// `exec_user`, which runs with interrupts disabled on the running thread itself (so no
// `switch` runs meanwhile); no two contexts access them at once. The address space is
// shared by `Arc` and internally locked.
unsafe impl Sync for Thread {}
// SAFETY: as above; the stack slot is owned by the Thread.
unsafe impl Send for Thread {}

/// Entry point of a new thread: called with the argument given to [`Thread::spawn`].
pub type ThreadEntry = extern "C" fn(arg: u64) -> !;

impl Thread {
    /// The thread already running: the boot code on the boot loader's stack.
    pub fn boot() -> Arc<Thread> {
        Arc::new(Thread {
            _stack: None,
            rsp: UnsafeCell::new(0),
            mode: UnsafeCell::new(Mode::kernel()),
            stack_top: 0,
            fs_base: AtomicU64::new(0),
        })
    }

    /// Like [`Thread::spawn`], for a thread of a user process: it runs with `space` loaded in
    /// CR3 (from its first instruction on) and has its own FPU/SSE registers. Its entry
    /// function typically sets up and calls `usermode::enter_user`.
    pub fn spawn_user(entry: ThreadEntry, arg: u64, space: Arc<AddressSpace>) -> Result<Arc<Thread>, MapError> {
        let mut t = Self::new_kernel_stack(entry, arg)?;
        *t.mode.get_mut() = Mode::user(space);
        Ok(Arc::new(t))
    }

    /// Make the running thread a thread of a user process on `space`, in place (the way
    /// Linux's init, a kernel thread, becomes a user process by exec'ing `/sbin/init`): from
    /// now on it runs with `space` in CR3 — loaded here, at once — and has FPU/SSE registers
    /// of its own, loaded here with their initial values (the CPU's registers still hold
    /// whatever the last user thread left in them). Its kernel stack and everything on it
    /// stay. The space it ran on before, if any, is released once CR3 has left it.
    /// Call on the running thread (checked) with interrupts disabled (checked).
    pub fn exec_user(&self, space: Arc<AddressSpace>) {
        assert!(!x86_64::instructions::interrupts::are_enabled(), "exec_user with interrupts enabled");
        // This frame lies on the running thread's stack: the check that `self` is it.
        let here = &raw const space as u64;
        assert!(
            self.stack_top != 0 && here < self.stack_top && here >= self.stack_top - STACK_PAGES * 4096,
            "exec_user on a thread that is not running"
        );
        let mode = Mode::user(space);
        let root = mode.root;
        if let Some(area) = &mode.fpu {
            // SAFETY: the area is new, owned by `mode`, 512 bytes, 16-byte aligned, and holds a
            // valid fxsave image (the initial one); fxrstor only reads it.
            unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) area.get(), options(nostack, preserves_flags)) };
        }
        // SAFETY: interrupts are off and this is the running thread on the only CPU, so no
        // `switch` (the only reader) runs until this returns, and no reference into the old
        // mode is alive: swapping it is the only access.
        let old = unsafe { core::ptr::replace(self.mode.get(), mode) };
        address_space::load_root(root);
        drop(old);
        // A new program starts without thread-local storage, as after Linux's exec.
        self.fs_base.store(0, Ordering::Relaxed);
        load_fs_base(0);
    }

    /// This thread's FS base.
    pub fn fs_base(&self) -> u64 {
        self.fs_base.load(Ordering::Relaxed)
    }

    /// Set this thread's FS base to `v`, a user-half address (false, and nothing changed,
    /// otherwise: a non-canonical value would make the `wrmsr` fault in the kernel). For the
    /// running thread it takes effect at once; for another, at its next switch in.
    pub fn set_fs_base(&self, v: u64) -> bool {
        if v >= address_space::USER_END {
            return false;
        }
        self.fs_base.store(v, Ordering::Relaxed);
        if self.is_running() {
            x86_64::instructions::interrupts::without_interrupts(|| load_fs_base(v));
        }
        true
    }

    /// Whether this is the running thread: the stack we are on is its stack.
    fn is_running(&self) -> bool {
        let probe = 0u8;
        let here = &raw const probe as u64;
        self.stack_top != 0 && here < self.stack_top && here >= self.stack_top - STACK_PAGES * 4096
    }

    /// What `switch` needs of this thread: its CR3 root and its FPU area, if any.
    fn switch_view(&self) -> (u64, Option<*mut FxArea>) {
        // SAFETY: `switch` calls this with interrupts off on the only CPU, when no
        // `exec_user` can be in progress (it too runs with interrupts off); the reference
        // ends before this returns.
        let mode = unsafe { &*self.mode.get() };
        (mode.root, mode.fpu.as_ref().map(|f| f.get()))
    }

    /// A new thread that will start in `entry(arg)` the first time it is switched to, with
    /// interrupts disabled (the entry enables them).
    pub fn spawn(entry: ThreadEntry, arg: u64) -> Result<Arc<Thread>, MapError> {
        Ok(Arc::new(Self::new_kernel_stack(entry, arg)?))
    }

    fn new_kernel_stack(entry: ThreadEntry, arg: u64) -> Result<Thread, MapError> {
        let stack = KernelStack::new()?;
        let top = stack.top();
        // Initial frame, popped by `switch`: r15 r14 r13 r12 rbx rbp, then the return address,
        // then two words of padding. r12 carries the entry, r13 its argument, into the
        // trampoline. After the `ret`, rsp is 16-byte aligned, so the trampoline's `call`
        // enters `entry` with the alignment the System V ABI promises a function.
        let trampoline = tally_thread_trampoline as *const () as usize as u64;
        let frame: [u64; 9] = [0, 0, arg, entry as usize as u64, 0, 0, trampoline, 0, 0];
        let rsp = top - 8 * frame.len() as u64;
        // SAFETY: [rsp, top) lies in the stack just mapped writable, owned by this new thread
        // and not yet running.
        unsafe { core::ptr::copy_nonoverlapping(frame.as_ptr(), rsp as *mut u64, frame.len()) };
        Ok(Thread {
            _stack: Some(stack),
            rsp: UnsafeCell::new(rsp),
            mode: UnsafeCell::new(Mode::kernel()),
            stack_top: top,
            fs_base: AtomicU64::new(0),
        })
    }
}

core::arch::global_asm!(
    ".global tally_switch_stacks",
    "tally_switch_stacks:",
    // rdi = where to save the old rsp, rsi = the new rsp.
    "push rbp",
    "push rbx",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    "mov [rdi], rsp",
    "mov rsp, rsi",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    "ret",
    "",
    ".global tally_thread_trampoline",
    "tally_thread_trampoline:",
    "mov rdi, r13",
    "call r12",
    "ud2",
);

unsafe extern "C" {
    fn tally_switch_stacks(save_rsp: *mut u64, new_rsp: u64);
    /// Never called from Rust: only its address is used, as a new thread's return address.
    fn tally_thread_trampoline();
}

/// Stop running `from` and continue `to`. Returns when some later switch resumes `from`
/// (never, if `from` has exited).
///
/// The two handles are *consumed* before the switch, so that a thread that never resumes
/// leaves no reference behind on its stack. The kernel must hold another reference to each
/// (checked; its scheduler keeps one per task, `sched/state.rs`): that keeps both alive
/// across the switch, and the kernel drops `from` only once it has been switched away from
/// for good (a released task's thread is freed by the next task to run).
/// Must be called with interrupts disabled (checked), with `from` the running thread.
pub fn switch(from: Arc<Thread>, to: Arc<Thread>) {
    assert!(!x86_64::instructions::interrupts::are_enabled(), "context switch with interrupts enabled");
    assert!(
        Arc::strong_count(&from) >= 2 && Arc::strong_count(&to) >= 2,
        "context switch on a thread the kernel does not hold"
    );
    if Arc::ptr_eq(&from, &to) {
        return;
    }
    let save = from.rsp.get();
    let next = to.rsp.get();
    let (_, save_fpu) = from.switch_view();
    let (root, load_fpu) = to.switch_view();
    let stack_top = to.stack_top;
    let fs_base = load_fpu.is_some().then(|| to.fs_base());
    drop(from);
    drop(to);
    if let Some(area) = save_fpu {
        // SAFETY: the area belongs to the outgoing thread (alive, see above) and is written
        // only here, with interrupts off; it is 512 bytes, 16-byte aligned, as fxsave needs.
        unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) area, options(nostack, preserves_flags)) };
    }
    if let Some(area) = load_fpu {
        // SAFETY: as above, for the incoming thread; the area holds a valid fxsave image
        // (the initial one, or what the last switch away from that thread saved).
        unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) area, options(nostack, preserves_flags)) };
    }
    // The incoming thread's address space (the kernel half, where we are running, is the
    // same in all of them), and the stack its next entry from user mode must use.
    address_space::load_root(root);
    if let Some(v) = fs_base {
        load_fs_base(v);
    }
    if stack_top != 0 {
        super::gdt::set_rsp0(stack_top);
        super::syscall_entry::set_kernel_stack(stack_top);
    }
    // SAFETY: interrupts are off and there is one CPU, so nothing else reads or writes the two
    // saved stack pointers. Both Threads are still alive through the kernel's references
    // (asserted above), which are not dropped before this switch completes: nothing else runs
    // until it does. `next` was saved by an earlier switch away from that thread (or built by
    // `spawn`), so its stack holds exactly the frame `tally_switch_stacks` pops.
    unsafe { tally_switch_stacks(save, *next) }
}
