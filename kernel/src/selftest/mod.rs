//! In-kernel self-tests: the kernel half of the integration scenarios in `tests/`.
//!
//! `cargo xtask test` boots the kernel once per scenario with `test=NAME` on the command
//! line; [`run`] finds the test, runs it, and ends QEMU with success or failure. The host
//! side (the scenario's `.toml` file) also checks the serial output, so a test that reports
//! success but printed the wrong thing still fails. Tests that exercise fault handlers end
//! in the handler (failure status) — their scenarios expect that.

mod disk;
mod faults;
mod init;
mod irq_accounting;
mod kstat;
mod sched;
mod memory;
mod programs;
mod timer;
mod user;
mod user_acct;
mod user_proc;
mod signals;
mod taskstats;

use hal::qemu::ExitCode;

/// A self-test: returns `Ok` to pass, `Err(reason)` to fail; fault tests never return.
type Test = fn() -> Result<(), &'static str>;

const TESTS: &[(&str, Test)] = &[
    ("boot", boot),
    ("demo", crate::demo::run),
    ("panic", faults::panic),
    ("breakpoint", faults::breakpoint),
    ("page_fault", faults::page_fault),
    ("stack_overflow", faults::stack_overflow),
    ("spurious", faults::spurious),
    ("timer", timer::tick_rate),
    ("heap", memory::heap_and_frames),
    ("disk", disk::ata),
    ("irq_accounting", irq_accounting::invariants),
    ("kstat", kstat::chain),
    ("contention", sched::contention),
    ("sleep", sched::sleep),
    ("zombie", sched::zombie),
    ("orphan", sched::orphan),
    ("thread_group", sched::thread_group),
    ("rt_fifo", sched::rt_fifo),
    ("disk_sleep", sched::disk_sleep),
    ("disk_contention", sched::disk_contention),
    ("invariants", sched::invariants),
    ("user_smoke", user::smoke),
    ("user_syscalls", user::syscalls),
    ("user_fault", user::faults),
    ("user_efault", user::efault),
    ("user_demand", user::demand),
    ("user_preempt", user::preempt),
    ("user_spawn", user_proc::spawn),
    ("spawn_stress", user_proc::stress),
    ("user_wait4", user_proc::wait4),
    ("user_threads", user_proc::threads),
    ("user_msa", user_acct::msa),
    ("user_split", user_acct::split),
    ("user_kstat", user_acct::kstat),
    ("user_memory", user_acct::memory),
    ("user_privs", user_acct::privileges),
    ("user_read", user_acct::read),
    ("user_blk", user_acct::blk),
    ("syscall_fuzz", user_acct::fuzz),
    ("signals", signals::signals),
    ("taskstats", taskstats::records),
    ("taskstats_storm", taskstats::exit_storm),
    ("init_exec", init::exec),
    ("init_fault", init::fault),
];

pub fn run(name: &str) -> ! {
    let Some((_, test)) = TESTS.iter().find(|(n, _)| *n == name) else {
        println!("selftest: no test named '{name}'");
        hal::qemu::exit(ExitCode::Failure)
    };
    println!("selftest {name}: start");
    match test() {
        Ok(()) => {
            println!("selftest {name}: ok");
            hal::qemu::exit(ExitCode::Success)
        }
        Err(why) => {
            println!("selftest {name}: FAILED: {why}");
            hal::qemu::exit(ExitCode::Failure)
        }
    }
}

/// The kernel got through bring-up to here: say what it found.
fn boot() -> Result<(), &'static str> {
    let m = crate::mm::stats();
    println!(
        "boot: kernel main reached; TSC {} Hz, {} Hz tick, {} frames free, boot time {} s since 1970",
        crate::time::clock().hz(),
        crate::irq::HZ,
        m.frames_total - m.frames_in_use,
        crate::time::boot_unix_seconds()
    );
    if crate::time::boot_unix_seconds() == 0 {
        return Err("the RTC gave no wall-clock time");
    }
    Ok(())
}
