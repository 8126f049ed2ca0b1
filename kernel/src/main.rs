//! # The Tally kernel — where it all starts
//!
//! The BIOS loads the boot loader's first sector; the `bootloader` crate's stages switch the
//! CPU to 64-bit long mode, load this ELF file, map it (and all of physical memory, at an
//! offset) in the upper half, and jump to [`kmain`] with a [`BootInfo`] describing memory.
//! `kmain` then brings the machine up in dependency order — console, descriptor tables,
//! memory, interrupt controller, clocks, tasks, drivers — wires the layers together, and
//! becomes the idle task. Pid 1 (`init_main`) runs either the self-test named on the command
//! line (`test=NAME`, used by `cargo xtask test`) or the boot demo, and then execs
//! `/bin/init` in place: user space begins in pid 1, and ends with it (its end ends QEMU).
//!
//! The kernel is built in floors, each a folder that calls only the floors below it; the
//! picture, the rules and how they are checked are in `docs/architecture.md`:
//!
//! ```text
//!   demo  selftest  bench          what the kernel runs for its tests and benchmarks
//!   syscall                        the system calls
//!   stats                          the kernel's statistics as Solaris kstats
//!   irq  trap                      interrupt and exception entry
//!   proc  acct                     processes; the readers of the accounting
//!   file  bus  drivers  fs         descriptors and pipes; the message bus; disks, console; /var
//!   sched                          the run queue, block/wake, the tick, the lock
//!   sync                           wait queues, completions, sleeping locks
//!   base                           configuration, console, clocks, memory pool
//!   ── tally-hal (the only unsafe code) ── kernel/libs/* (hardware-independent, host-tested)
//! ```
//!
//! This file is the one place that knows every floor: it starts them in order and hands
//! the lower floors what they must call without naming the upper ones (the HAL's trap and
//! system-call handlers, the observers of task exits).
#![no_std]
#![no_main]
// The rule, enforced by the compiler: no `unsafe` in the kernel; it lives in `tally-hal`.
#![forbid(unsafe_code)]

extern crate alloc;

#[macro_use]
mod base;
mod acct;
mod bench;
mod bus;
mod demo;
mod drivers;
mod file;
mod fs;
mod irq;
mod proc;
mod sched;
mod selftest;
mod stats;
mod sync;
mod syscall;
mod trap;

use bootloader_api::BootInfo;

bootloader_api::entry_point!(kmain, config = &hal::BOOT_CONFIG);

fn kmain(boot_info: &'static mut BootInfo) -> ! {
    let entry_tsc = hal::tsc::read();
    hal::serial::init();
    base::console::init();
    println!("Tally {} — a teaching kernel about where time goes", env!("CARGO_PKG_VERSION"));
    hal::gdt::init();
    hal::idt::init::<Handlers>();
    let cpu = hal::usermode::init::<Handlers>();
    let ramdisk = hal::bootmem::ramdisk(boot_info.ramdisk_addr.into_option(), boot_info.ramdisk_len);
    base::memory::init(boot_info);
    hal::address_space::init();
    base::cmdline::init();
    base::console::set_level(base::cmdline::get("loglevel").unwrap_or("info"));
    log::info!("user mode: syscall/sysret on, SMEP {}, SMAP {}", on_off(cpu.smep), on_off(cpu.smap));
    hal::pic::init();
    base::time::init(entry_tsc);
    base::random::init();
    bus::init();
    // Taskstats listeners on the bus hear of every exit; so do process accounting (acct(2))
    // and CSA, whose jobs also hear of every new user process.
    proc::register_exit_observer(&acct::EXIT_RECORDS);
    proc::register_exit_observer(&acct::process_acct::PROCESS_ACCOUNTING);
    proc::register_exit_observer(&acct::job_acct::CSA_EXITS);
    proc::register_spawn_observer(&acct::job_acct::CSA_SPAWNS);
    proc::init(entry_tsc, init_main);
    acct::job_acct::init();
    proc::ramdisk::init(ramdisk);
    drivers::init();
    // The console's ^C, ^\ and ^Z reach the foreground process group through job control
    // (`proc/job_control.rs`); its check of background readers is called by `read`.
    drivers::tty::set_signal_hook(proc::signal_foreground);
    irq::init();
    stats::init();
    // The owner of the accounting disk's file system (`/var`): a kernel daemon outside the
    // process tree (a child of init would keep init's final `wait4(-1)` waiting forever).
    if fs::wanted() {
        match proc::spawn_daemon("fsd", sched::SchedParams::Normal(0), fs::fsd_main, 0) {
            Ok(pid) => fs::set_fsd_pid(pid),
            Err(e) => log::warn!("fs: cannot start fsd: errno {e}"),
        }
    }
    let ready_us = base::time::clock().ticks_to_ns(hal::tsc::read() - entry_tsc) / 1000;
    log::info!("ready in {ready_us} us (kernel main to interrupts on, TSC)");
    println!("kernel: ready");
    hal::cpu::enable_interrupts();
    // The boot thread becomes the idle task; init (pid 1) runs what the command line asks.
    sched::idle_loop()
}

/// How the HAL's entry stubs reach the kernel: traps and IRQs go to the `trap` and `irq`
/// layers, system calls to `syscall`. (The HAL's stubs are generic over this type, so each
/// is a direct call.)
struct Handlers;

impl hal::idt::TrapHandlers for Handlers {
    fn exception(e: &hal::idt::Exception, regs: &mut hal::idt::UserRegs) {
        trap::exception(e, regs)
    }

    fn page_fault(e: &hal::idt::Exception, regs: &mut hal::idt::UserRegs) {
        trap::page_fault(e, regs)
    }

    fn breakpoint(e: &hal::idt::Exception, regs: &mut hal::idt::UserRegs) {
        trap::breakpoint(e, regs)
    }

    fn fatal(e: &hal::idt::Exception) -> ! {
        trap::fatal(e)
    }

    fn irq(line: u8, regs: &mut hal::idt::UserRegs) {
        irq::dispatch(line, regs)
    }
}

impl hal::syscall_entry::SyscallHandlers for Handlers {
    #[inline]
    fn entry(frame: &mut hal::syscall_entry::SyscallFrame) {
        syscall::entry(frame)
    }

    #[inline]
    fn leave(frame: &mut hal::syscall_entry::SyscallFrame) {
        syscall::leave(frame)
    }
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off (CPU lacks it)"
    }
}

/// Pid 1, the kernel's part: run the benchmark or the self-test the command line names (both
/// end QEMU); otherwise the boot demo (unless `demo=off`), then exec `/bin/init` in place —
/// this very task, pid 1, becomes the user program (as Linux's `kernel_init` ends in
/// `run_init_process`). `/bin/init` starts the program `init=PROGRAM` names (its default:
/// `sh`, the shell on the console), followed by the words after `--` on the command line,
/// adopts and reaps orphans, and exits with the program's status when it ends; pid 1's end
/// ends QEMU with that status (`proc/exit.rs`). `init=none`: no user space at all.
fn init_main(_: u64) {
    // `/var` is mounted before anything runs that could use it.
    fs::wait_mounted();
    if let Some(filter) = base::cmdline::get("bench") {
        bench::run(filter);
    }
    if let Some(name) = base::cmdline::get("test") {
        selftest::run(name);
    }
    if base::cmdline::get("demo") != Some("off") {
        if let Err(why) = demo::run() {
            println!("demo: FAILED: {why}");
            hal::qemu::exit(hal::qemu::ExitCode::Failure);
        }
    }
    let program = base::cmdline::get("init");
    if program == Some("none") {
        // Returning ends pid 1 with status 0, which ends the run.
        return;
    }
    let words: alloc::vec::Vec<&'static str> = program.into_iter().chain(base::cmdline::init_args()).collect();
    let shown = words.join(" ");
    // The shell ends at the end of its input: say how, when it is the shell that runs.
    let hint = if shown.is_empty() || shown == "sh" { " (end of input, ^D, ends the shell)" } else { "" };
    println!("kernel: pid 1 execs /bin/init{}{shown}{hint}", if shown.is_empty() { "" } else { " " });
    drop(shown);
    let argv = core::iter::once("init").chain(words).map(str::as_bytes).collect();
    // `argv` is handed over: on success nothing of this frame is ever dropped.
    let Err(e) = proc::exec_program("/bin/init", argv);
    println!("kernel: cannot exec /bin/init: errno {e}");
    hal::qemu::exit(hal::qemu::ExitCode::Failure);
}
