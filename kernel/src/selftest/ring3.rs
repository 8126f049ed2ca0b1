//! Self-tests of user mode: ring 3, system calls, user faults, demand-zero paging.
//!
//! Each test runs in init (pid 1). It loads one of the machine-code programs of
//! `programs/` (`.S` files) into a fresh address space (code at `USER_IMAGE_BASE`, read and
//! execute; a stack just below `USER_STACK_TOP`), starts it as a child process with
//! `proc::spawn_user` — or, for the tests of `user_proc.rs` and `user_acct.rs`, starts a
//! test fixture from the ramdisk (`/test/NAME`, `start_fixture`) —, waits for it, and
//! checks how it ended and what the accounting saw:
//! microstates (ONCPU_USR for user code, ONCPU_SYS for system calls, ONCPU_TRAP for
//! exceptions) and counters (minor faults, bytes written). Every test also checks that the
//! frames in use come back to where they were: an address space gives back every user page
//! and every page table when its process is gone.

use alloc::sync::Arc;
use alloc::vec::Vec;
use tally_microstate::{MicroState, MsaTimes};
use tally_tasktable::{wexitstatus, wifexited, wifsignaled, wtermsig};
use tally_uapi::fixture::FIXTURE_DIR;

use crate::proc::vm::{Prot, Vm, USER_IMAGE_BASE, USER_STACK_GUARD, USER_STACK_TOP};
use crate::proc::WaitResult;
use crate::sched::SchedParams;
use crate::trap::{SIGFPE, SIGILL, SIGSEGV, SIGTRAP};
use crate::{proc, sched};

pub(super) fn us(ticks: u64) -> u64 {
    crate::base::time::clock().ticks_to_ns(ticks) / 1000
}

pub(super) fn t(m: &MsaTimes, s: MicroState) -> u64 {
    m[s as usize]
}

/// Load test program `prog` into a new address space and start it with `arg` in `rdi`.
pub(super) fn start(prog: &str, arg: u64) -> Result<(i32, Arc<Vm>), &'static str> {
    let (vm, rsp) = load(prog)?;
    let pid = proc::spawn_user(prog, SchedParams::Normal(0), Arc::clone(&vm), USER_IMAGE_BASE, rsp, arg)
        .map_err(|_| "spawn_user failed")?;
    Ok((pid, vm))
}

/// Test program `prog` in a new address space (checked by reading it back), with an empty
/// stack: the memory map and the initial stack pointer.
pub(super) fn load(prog: &str) -> Result<(Arc<Vm>, u64), &'static str> {
    let code = super::programs::program(prog).ok_or("no such test program")?;
    let vm = Vm::new().map_err(|_| "no memory for an address space")?;
    vm.load_segment(USER_IMAGE_BASE, code, code.len() as u64, Prot::READ_EXEC)
        .map_err(|_| "cannot load the program")?;
    let mut back = alloc::vec![0u8; code.len()];
    vm.read(USER_IMAGE_BASE, &mut back).map_err(|_| "cannot read the image back")?;
    if back != code {
        return Err("the image reads back differently");
    }
    let rsp = vm.setup_stack(&[]).map_err(|_| "cannot set up the stack")?;
    Ok((vm, rsp))
}

/// Run `prog` to its end; returns what `wait` reported.
pub(super) fn run(prog: &str, arg: u64) -> Result<WaitResult, &'static str> {
    let (pid, vm) = start(prog, arg)?;
    reap(pid, &vm)
}

/// Wait for process `pid`, whose memory map is `vm`: what `wait` reported, once the map is
/// checked to be empty.
pub(super) fn reap(pid: i32, vm: &Vm) -> Result<WaitResult, &'static str> {
    let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    if vm.mapped_pages() != 0 || !vm.regions().is_empty() {
        return Err("a dead process still has user pages or regions");
    }
    Ok(r)
}

/// Start the test fixture `/test/NAME` from the ramdisk (`tally_uapi::fixture`: a Rust
/// program of `userland/src/test/`) with `args` after its name, as a child process: its pid
/// and its memory map, through which a test reads and writes the fixture's result area.
pub(super) fn start_fixture(name: &str, args: &[&str]) -> Result<(i32, Arc<Vm>), &'static str> {
    let path = alloc::format!("/{FIXTURE_DIR}/{name}");
    let argv: Vec<&[u8]> = core::iter::once(name).chain(args.iter().copied()).map(str::as_bytes).collect();
    proc::spawn_program_vm(&path, &argv).map_err(|e| {
        println!("  spawn {path}: errno {e}");
        "cannot start a test fixture"
    })
}

/// Run the test fixture `/test/NAME` with `args` to its end; returns what `wait` reported.
pub(super) fn run_fixture(name: &str, args: &[&str]) -> Result<WaitResult, &'static str> {
    let (pid, vm) = start_fixture(name, args)?;
    reap(pid, &vm)
}

/// Let the next context switch free what reaped tasks left (their stacks and top-level
/// tables wait in the graveyard until another task has run). Sleeps until at least one
/// switch has happened: a sleep whose deadline has already passed when the host stalls the
/// guest returns without switching, and the graveyard would still be full.
pub(super) fn settle() {
    let before = sched::nr_switches();
    while sched::nr_switches() == before {
        sched::sleep_ns(2_000_000);
    }
}

/// Run `body` between two readings of the frames in use, which must agree. A first run of
/// the smoke program beforehand settles the one-time allocations (kernel-stack page tables).
pub(super) fn frames_unchanged(
    what: &str,
    body: impl FnOnce() -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    run("smoke", 0)?;
    settle();
    let before = crate::base::memory::stats().frames_in_use;
    body()?;
    settle();
    let after = crate::base::memory::stats().frames_in_use;
    println!("{what}: frames in use {before} -> {after}");
    if after != before {
        return Err("frames in use did not return to baseline");
    }
    println!("{what}: frames back to baseline");
    let (checked, broken) = sched::exit_invariant_counts();
    if broken != 0 {
        return Err("a task's microstate clocks did not sum to its age at exit");
    }
    println!("{what}: clocks summed to the age at all {checked} exits");
    Ok(())
}

pub(super) fn expect_exit(r: &WaitResult, code: i32) -> Result<(), &'static str> {
    let s = r.status.raw();
    if !wifexited(s) || wexitstatus(s) != code {
        println!("  pid {} ended with status {:#x}, expected exit code {code}", r.pid, s);
        return Err("a user program did not exit as expected");
    }
    Ok(())
}

/// (a) Hello from ring 3: write, getpid, exit(42); the time splits into user and system.
pub fn smoke() -> Result<(), &'static str> {
    frames_unchanged("user_smoke", || {
        let r = run("smoke", 0)?;
        let m = &r.totals.msa;
        let c = &r.totals.counters;
        println!(
            "user_smoke: pid {} exited with status {} (exit code {}); ONCPU_USR {} us, ONCPU_SYS {} us, ONCPU_TRAP {} \
                us; {} bytes in {} write(s)",
            r.pid,
            r.status.raw(),
            wexitstatus(r.status.raw()),
            us(t(m, MicroState::OncpuUsr)),
            us(t(m, MicroState::OncpuSys)),
            us(t(m, MicroState::OncpuTrap)),
            c.write_char,
            c.write_syscalls
        );
        expect_exit(&r, 42)?;
        if c.write_char != 18 || c.write_syscalls != 1 {
            return Err("the write was not accounted (18 bytes in 1 call)");
        }
        if tally_microstate::ACCOUNTING_ENABLED && (t(m, MicroState::OncpuUsr) == 0 || t(m, MicroState::OncpuSys) == 0)
        {
            return Err("user or system time is zero");
        }
        Ok(())
    })
}

/// The system calls' own checks (in the program), plus what the kernel saw.
pub fn syscalls() -> Result<(), &'static str> {
    frames_unchanged("user_syscalls", || {
        let me = proc::current_ids().pid;
        let r = run("syscalls", me as u64)?;
        let m = &r.totals.msa;
        println!(
            "user_syscalls: pid {} status {:#x}; ONCPU_USR {} us, ONCPU_SYS {} us, INTERRUPTIBLE_SLEEP {} us",
            r.pid,
            r.status.raw(),
            us(t(m, MicroState::OncpuUsr)),
            us(t(m, MicroState::OncpuSys)),
            us(t(m, MicroState::InterruptibleSleep))
        );
        expect_exit(&r, 0)?;
        // The sleep starts a few microseconds after the deadline is computed.
        if tally_microstate::ACCOUNTING_ENABLED && us(t(m, MicroState::InterruptibleSleep)) < 19_000 {
            return Err("nanosleep(20 ms) did not show as INTERRUPTIBLE_SLEEP");
        }
        println!("user_syscalls: all checks passed in ring 3");
        Ok(())
    })
}

/// (b) Faults in user mode kill only the faulting process, with the right signal.
pub fn faults() -> Result<(), &'static str> {
    let cases: &[(&str, &str, u64, u8)] = &[
        ("divide error", "fault", 0, SIGFPE),
        ("ud2", "fault", 1, SIGILL),
        ("int3", "fault", 2, SIGTRAP),
        ("hlt (privileged)", "fault", 3, SIGSEGV),
        ("jump to the stack (NX)", "fault", 4, SIGSEGV),
        ("single step", "fault", 5, SIGTRAP),
        ("write to its code", "fault", 6, SIGSEGV),
        ("single step into syscall", "fault", 7, SIGTRAP),
        ("read unmapped 0xdead0000", "read_at", 0xdead_0000, SIGSEGV),
        ("read NULL", "read_at", 0, SIGSEGV),
        ("read kernel 0xffff800000000000", "read_at", 0xffff_8000_0000_0000, SIGSEGV),
        ("read non-canonical", "read_at", 0x8000_0000_0000_0000, SIGSEGV),
        ("read the stack guard page", "read_at", USER_STACK_GUARD, SIGSEGV),
        ("read above the stack", "read_at", USER_STACK_TOP, SIGSEGV),
        ("write kernel heap", "write_at", hal::heap::HEAP_START, SIGSEGV),
        ("write the vvar header (read-only)", "write_at", tally_uapi::msa::vvar::VVAR_BASE, SIGSEGV),
    ];
    frames_unchanged("user_fault", || {
        for &(what, prog, arg, sig) in cases {
            let r = run(prog, arg)?;
            let s = r.status.raw();
            let trap = t(&r.totals.msa, MicroState::OncpuTrap);
            println!(
                "user_fault: {what}: pid {} status {s:#x} (signal {}), ONCPU_TRAP {} us",
                r.pid,
                if wifsignaled(s) { wtermsig(s) } else { 0 },
                us(trap)
            );
            if !wifsignaled(s) || wtermsig(s) != sig as i32 {
                return Err("a faulting user program did not die of the expected signal");
            }
            // Every fault signal here is one whose default action dumps core: ACORE.
            if !tally_tasktable::wcoredump(s) {
                return Err("a fault's status lacks the core flag (ACORE)");
            }
            if tally_microstate::ACCOUNTING_ENABLED && trap == 0 {
                return Err("the fault's handling was not charged to ONCPU_TRAP");
            }
        }
        // The kernel is fine, and user programs still run.
        let r = run("smoke", 0)?;
        expect_exit(&r, 42)?;
        println!("user_fault: {} faulting programs killed; the kernel and a new program carry on", cases.len());
        Ok(())
    })
}

/// (c) Bad pointers to system calls give -EFAULT, never a kernel fault.
pub fn efault() -> Result<(), &'static str> {
    frames_unchanged("user_efault", || {
        let r = run("efault", 0)?;
        println!(
            "user_efault: pid {} status {:#x} (exit code = number of the failed check, 0: none)",
            r.pid,
            r.status.raw()
        );
        expect_exit(&r, 0)
    })
}

/// (d) Demand-zero: N fresh heap pages and N fresh stack pages cost exactly 2N minor faults.
pub fn demand() -> Result<(), &'static str> {
    const N: u64 = 16;
    frames_unchanged("user_demand", || {
        let (kills, fixed) = crate::trap::user_fault_counts();
        let r = run("demand", N)?;
        let (kills2, fixed2) = crate::trap::user_fault_counts();
        let c = &r.totals.counters;
        let m = &r.totals.msa;
        println!(
            "user_demand: pid {} status {:#x}; touched {N} heap + {N} stack pages: {} minor faults, ONCPU_TRAP {} us, \
                ONCPU_USR {} us",
            r.pid,
            r.status.raw(),
            c.minflt,
            us(t(m, MicroState::OncpuTrap)),
            us(t(m, MicroState::OncpuUsr))
        );
        expect_exit(&r, 0)?;
        if c.minflt != 2 * N || fixed2 - fixed != 2 * N || kills2 != kills {
            return Err("minor faults differ from the pages touched");
        }
        if tally_microstate::ACCOUNTING_ENABLED && t(m, MicroState::OncpuTrap) == 0 {
            return Err("demand-zero faults were not charged to ONCPU_TRAP");
        }
        println!("user_demand: one minor fault per page touched");
        Ok(())
    })
}

/// Two user programs computing at once: the tick preempts them in ring 3, and each finds its
/// registers (SSE too) as it left them.
pub fn preempt() -> Result<(), &'static str> {
    frames_unchanged("user_preempt", || {
        let switches = sched::nr_switches();
        let (a, _) = start("spin", 250_000_000)?;
        let (b, _) = start("spin", 250_000_000)?;
        for pid in [a, b] {
            let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
            let m = &r.totals.msa;
            let waited = t(m, MicroState::OnActiveQueue) + t(m, MicroState::OnExpiredQueue);
            println!(
                "user_preempt: pid {} status {:#x}; ONCPU_USR {} us, ONCPU_SYS {} us, INTERRUPTED {} us, waiting for \
                    the CPU {} us",
                r.pid,
                r.status.raw(),
                us(t(m, MicroState::OncpuUsr)),
                us(t(m, MicroState::OncpuSys)),
                us(t(m, MicroState::Interrupted)),
                us(waited)
            );
            expect_exit(&r, 0)?;
            if tally_microstate::ACCOUNTING_ENABLED && (t(m, MicroState::Interrupted) == 0 || waited == 0) {
                return Err("a spinning user program was never interrupted or never waited");
            }
            let c = &r.totals.counters;
            println!("user_preempt: pid {}: {} involuntary, {} voluntary context switches", r.pid, c.nivcsw, c.nvcsw);
            if c.nivcsw == 0 {
                return Err("a spinner sharing the CPU was never counted as preempted (nivcsw)");
            }
        }
        println!("user_preempt: {} context switches; registers intact", sched::nr_switches() - switches);
        Ok(())
    })
}
