//! In-kernel self-tests: the kernel half of the integration scenarios in `tests/`.
//!
//! A self-test is a function here and one line in its scenario `tests/NAME.toml`, the
//! function's path from this module: `selftest = "ring3::smoke"`. The build generates the table
//! `TESTS` from the scenarios; `cargo xtask test` boots the kernel once per scenario with
//! `test=NAME` on the command line; [`run`] finds the test, runs it, and ends QEMU with
//! success or failure. The host side (the scenario's `.toml` file) also checks the serial
//! output, so a test that reports success but printed the wrong thing still fails. Tests that
//! exercise fault handlers end in the handler (failure status) — their scenarios expect that.
//!
//! How to add one: `README.md`, "Adding an integration test".

mod acct_files;
mod disk;
mod exit_records;
mod faults;
mod fork_cow;
mod fork_exec;
mod heap_frames;
mod init;
mod irq_accounting;
mod kernel_threads;
mod kstat_chain;
mod programs;
mod ring3;
mod signals;
mod stop_accounting;
mod timer;
mod user_acct;
mod user_proc;
mod user_sync;
mod var_exec;
mod var_fs;

use hal::qemu::ExitCode;

/// A self-test: returns `Ok` to pass, `Err(reason)` to fail; fault tests never return.
type Test = fn() -> Result<(), &'static str>;

// `TESTS`, (name, function) for each scenario `tests/NAME.toml` with `selftest = "PATH"` (PATH
// resolved from this module: `user::smoke`, `boot`, `crate::demo::run`), is written by
// `kernel/build.rs` from the scenarios at every build, so it lists exactly the tests they run.
// A PATH that names no function fails the build on its entry, whose line names the scenario.
include!(concat!(env!("OUT_DIR"), "/selftests.rs"));

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
    let m = crate::base::memory::stats();
    println!(
        "boot: kernel main reached; TSC {} Hz, {} Hz tick, {} frames free, boot time {} s since 1970",
        crate::base::time::clock().hz(),
        crate::base::config::HZ,
        m.frames_total - m.frames_in_use,
        crate::base::time::boot_unix_seconds()
    );
    if crate::base::time::boot_unix_seconds() == 0 {
        return Err("the RTC gave no wall-clock time");
    }
    Ok(())
}
