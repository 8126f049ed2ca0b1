//! Self-tests of the accounting and resource calls from user space: `msa()`, the kstat
//! calls, `mmap`/`munmap` and the memory numbers (RSS, VM, high-water marks, integrals),
//! the privilege rules and context-switch counts, console input, and a seeded fuzzer.
//!
//! The contracts are checked by test fixtures from the ramdisk (`/test/msa_abi`,
//! `kstat_abi`, `mmap_abi`, `privs`, `blk_abi`: `userland/src/test/`, their arguments in
//! `tally_uapi::fixture`), whose exit status names the check that failed (0: none); the tests
//! add what the kernel saw of them.

use tally_microstate::MicroState;
use tally_uapi::errno::EINVAL;
use tally_uapi::fixture::{MMAP_PROT_NONE, MSA_ACCOUNTING, MSA_NO_ACCOUNTING};

use super::ring3::{expect_exit, frames_unchanged, reap, run, run_fixture, settle, start_fixture, t, us};
use crate::proc;
use crate::proc::WaitResult;
use crate::sched;
use crate::trap::SIGSEGV;
use tally_memacct::MemAcct;

/// The `msa()` contract, checked by a program (its exit status names a failed check).
pub fn msa() -> Result<(), &'static str> {
    frames_unchanged("user_msa", || {
        let accounting = if tally_microstate::ACCOUNTING_ENABLED { MSA_ACCOUNTING } else { MSA_NO_ACCOUNTING };
        let r = run_fixture("msa_abi", &[accounting])?;
        println!("user_msa: msa_abi status {:#x} (exit code = number of the failed check, 0: none)", r.status.raw());
        expect_exit(&r, 0)?;
        println!(
            "user_msa: EINVAL (which, ntimers 14 and -1), EFAULT (NULL, kernel, read-only), partial fills, int \
            arguments: all as specified"
        );
        Ok(())
    })
}

/// A thread's clocks without a system call (the vvar pages): a program compares its page
/// with `msa(MSA_THREAD)` in ring 3; the same program writing to its page dies of SIGSEGV
/// and the kernel carries on; and, while a program sleeps, its page as its process sees it
/// (read through its own mapping) gives exactly the kernel's clock at one TSC value.
pub fn vvar() -> Result<(), &'static str> {
    use tally_uapi::msa::vvar::{VvarHeader, VVAR_BASE, VVAR_MAGIC};
    frames_unchanged("user_vvar", || {
        let accounting = if tally_microstate::ACCOUNTING_ENABLED { MSA_ACCOUNTING } else { MSA_NO_ACCOUNTING };
        let r = run_fixture("vvar_abi", &[accounting])?;
        println!("user_vvar: vvar_abi status {:#x} (exit code = number of the failed check, 0: none)", r.status.raw());
        expect_exit(&r, 0)?;

        let r = run_fixture("vvar_abi", &["write"])?;
        let s = r.status.raw();
        println!("user_vvar: a write to its own clock page: status {s:#x}");
        if !tally_tasktable::wifsignaled(s) || tally_tasktable::wtermsig(s) != crate::trap::SIGSEGV as i32 {
            return Err("a write to the read-only clock page did not end in SIGSEGV");
        }

        let (pid, vm) = start_fixture("vvar_abi", &["sleep"])?;
        crate::sched::sleep_ns(50_000_000);
        let key = proc::with(|p| p.table().lookup(pid)).map_err(|_| "the sleeping fixture is gone")?;
        let mut hb = [0u8; core::mem::size_of::<VvarHeader>()];
        vm.space().read(VVAR_BASE, &mut hb).map_err(|_| "no vvar header in the process")?;
        let header = VvarHeader::from_bytes(&hb);
        let reading = crate::sched::clock_page_reading(key, vm.space());
        let r = reap(pid, &vm)?;
        expect_exit(&r, 0)?;
        let Some((page, now, kernel)) = reading else { return Err("the fixture has no clock page") };
        let user = page.ticks_at(now);
        println!(
            "user_vvar: at TSC {now}: page state {} seq {}, USR {} SYS {} SLEEP {} ticks; kernel USR {} SYS {} SLEEP {}",
            page.state,
            page.seq,
            user[0],
            user[1],
            user[3],
            kernel[0],
            kernel[1],
            kernel[3]
        );
        if header.magic != VVAR_MAGIC
            || header.tsc_hz != crate::base::time::clock().hz()
            || header.accounting != tally_microstate::ACCOUNTING_ENABLED as u32
        {
            return Err("the vvar header does not say what the kernel uses");
        }
        if user != kernel {
            return Err("the clock page and the kernel's clock differ at the same TSC");
        }
        if tally_microstate::ACCOUNTING_ENABLED
            && (page.microstate() != Some(MicroState::InterruptibleSleep) || page.seq == 0)
        {
            return Err("the sleeping fixture's page does not show it asleep");
        }
        println!("user_vvar: the page equals the kernel's clock to the tick; read-only; retried when interrupted");
        Ok(())
    })
}

/// The kstat calls' contract, checked by a program; the KID it gets was deleted first.
pub fn kstat() -> Result<(), &'static str> {
    frames_unchanged("user_kstat", || {
        let kid =
            crate::stats::create_named("tally", 0, "abi_gone", "misc", &[("x", tally_uapi::kstat::KSTAT_DATA_UINT64)])
                .map_err(|_| "cannot create a kstat")?;
        crate::stats::delete(kid).map_err(|_| "cannot delete the kstat")?;
        let before = crate::stats::chain_id();
        let r = run_fixture("kstat_abi", &[&alloc::format!("{kid}")])?;
        println!(
            "user_kstat: kstat_abi (deleted KID {kid}) status {:#x}; chain id {before} -> {}",
            r.status.raw(),
            crate::stats::chain_id()
        );
        expect_exit(&r, 0)?;
        println!(
            "user_kstat: ENOMEM with the size needed, ENXIO for gone KIDs, EFAULT, fresh snaptimes, a stale \
            chain detected by its KCID"
        );
        Ok(())
    })
}

fn mem_line(what: &str, r: &WaitResult) {
    let m = &r.totals.mem;
    let clock = crate::base::time::clock();
    println!(
        "{what}: pid {} minflt {}, hiwater RSS {} KiB, hiwater VM {} KiB, coremem {} MB-us, virtmem {} MB-us, CPU {} \
            us",
        r.pid,
        r.totals.counters.minflt,
        m.hiwater_rss_kb(),
        m.hiwater_vm_kb(),
        m.coremem_mb_us(&clock),
        m.virtmem_mb_us(&clock),
        us(t(&r.totals.msa, MicroState::OncpuUsr)
            + t(&r.totals.msa, MicroState::OncpuSys)
            + t(&r.totals.msa, MicroState::OncpuTrap))
    );
}

/// The memory integral is exact: changes at known CPU times give a known area.
fn integrals_are_exact() -> Result<(), &'static str> {
    let mut a = MemAcct::default();
    a.set(0, 10, 100); // 10 pages resident, 100 virtual from CPU time 0
    a.set(1_000, 20, 100); // 20 from 1000
    a.set(1_500, 20, 300); // VM grows at 1500
    a.set(1_200, 5, 300); // an older CPU time (another thread's): no area, nothing moves back
    let u = a.usage(2_000);
    let rss = 10 * 1_000 + 20 * 500 + 5 * 500;
    let vm = 100 * 1_500 + 300 * 500;
    println!(
        "user_memory: integral over CPU time: RSS {} page-ticks (want {rss}), VM {} (want {vm}); hiwater {} / {} pages",
        u.rss_page_ticks, u.vm_page_ticks, u.hiwater_rss_pages, u.hiwater_vm_pages
    );
    if u.rss_page_ticks != rss || u.vm_page_ticks != vm || u.hiwater_rss_pages != 20 || u.hiwater_vm_pages != 300 {
        return Err("the memory integrals are not the exact area under the size curve");
    }
    Ok(())
}

/// `mmap`/`munmap` and the memory numbers of real processes.
pub fn memory() -> Result<(), &'static str> {
    integrals_are_exact()?;
    frames_unchanged("user_memory", || {
        let fallbacks = hal::uaccess::direct_faults();
        let r = run_fixture("mmap_abi", &[])?;
        println!("user_memory: mmap_abi status {:#x} (exit code = number of the failed check)", r.status.raw());
        expect_exit(&r, 0)?;
        // Its clock_gettime and nanosleep on untouched pages: the direct copy faulted, and
        // the checked path mapped the page and copied.
        if hal::uaccess::direct_faults() < fallbacks + 2 {
            return Err("system calls on untouched pages did not go through the uaccess fixup");
        }
        mem_line("user_memory: mmap_abi", &r);
        if r.totals.counters.minflt < 18
            || r.totals.mem.hiwater_vm_pages < (1 << 20)
            || r.totals.mem.hiwater_rss_pages < 16
        {
            return Err("mmap'd pages are missing from the fault count or the high-water marks");
        }
        let r = run_fixture("mmap_abi", &[MMAP_PROT_NONE])?;
        println!("user_memory: touching PROT_NONE memory: status {:#x}", r.status.raw());
        if !tally_tasktable::wifsignaled(r.status.raw()) || tally_tasktable::wtermsig(r.status.raw()) != SIGSEGV as i32
        {
            return Err("a PROT_NONE region could be touched");
        }
        const PAGES: u64 = 256;
        let pid = proc::spawn_program("/bin/memhog", &[b"memhog", b"256"]).map_err(|_| "spawn /bin/memhog failed")?;
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        expect_exit(&r, 0)?;
        mem_line("user_memory: memhog 256", &r);
        let m = &r.totals.mem;
        if r.totals.counters.minflt < PAGES || m.hiwater_rss_pages < PAGES {
            return Err("memhog's pages are missing from minflt or the RSS high-water mark");
        }
        if tally_microstate::ACCOUNTING_ENABLED {
            let msa = &r.totals.msa;
            let cpu = t(msa, MicroState::OncpuUsr) + t(msa, MicroState::OncpuSys) + t(msa, MicroState::OncpuTrap);
            if m.rss_page_ticks == 0 || m.rss_page_ticks > m.hiwater_rss_pages as u128 * cpu as u128 {
                return Err("memhog's RSS integral is not within (0, hiwater x CPU time]");
            }
            if m.vm_page_ticks < m.rss_page_ticks {
                return Err("the VM integral is below the RSS integral");
            }
        }
        println!(
            "user_memory: memhog: {} minor faults >= {PAGES} pages, hiwater RSS {} pages >= {PAGES}",
            r.totals.counters.minflt, m.hiwater_rss_pages
        );
        Ok(())
    })
}

/// Privilege: root may lower nice and pick real-time policies (and is flagged ASU), uid
/// 1000 may not; voluntary context switches are counted.
pub fn privileges() -> Result<(), &'static str> {
    frames_unchanged("user_privs", || {
        let (pid, _vm) = start_fixture("privs", &[])?;
        let mut zombie = false;
        for _ in 0..5_000 {
            if proc::is_zombie(pid) {
                zombie = true;
                break;
            }
            sched::sleep_ns(1_000_000);
        }
        let asu = proc::superuser_used(pid);
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        let c = &r.totals.counters;
        println!(
            "user_privs: pid {} status {:#x}; ASU (used root privilege) {:?}; {} voluntary, {} involuntary context \
                switches",
            r.pid,
            r.status.raw(),
            asu,
            c.nvcsw,
            c.nivcsw
        );
        expect_exit(&r, 0)?;
        if !zombie || asu != Some(true) {
            return Err("the task that used root privilege is not flagged ASU");
        }
        if c.nvcsw < 5 {
            return Err("five sleeps did not count five voluntary context switches");
        }
        // And the kernel-side rules directly: a kernel thread (init, uid 0).
        if proc::set_scheduler(0, 7, 0) != Err(EINVAL) {
            return Err("an unknown policy was accepted");
        }
        println!(
            "user_privs: root lowers nice and sets SCHED_FIFO; uid 1000 gets EACCES/EPERM and may not become \
            root again"
        );
        Ok(())
    })
}

/// Raw sectors of the data disk: errors, a write read back, a transfer in several driver
/// requests; the sectors counted and the time spent asleep on the disk.
pub fn blk() -> Result<(), &'static str> {
    frames_unchanged("user_blk", || {
        let r = run_fixture("blk_abi", &[])?;
        let c = &r.totals.counters;
        println!(
            "user_blk: blk_abi status {:#x}; inblock {}, oublock {}; UNINTERRUPTIBLE_SLEEP {} us",
            r.status.raw(),
            c.inblock,
            c.oublock,
            us(t(&r.totals.msa, MicroState::UninterruptibleSleep))
        );
        expect_exit(&r, 0)?;
        if c.inblock != 48 || c.oublock != 8 {
            return Err("the sectors moved were not counted (48 read, 8 written)");
        }
        if tally_microstate::ACCOUNTING_ENABLED && t(&r.totals.msa, MicroState::UninterruptibleSleep) == 0 {
            return Err("waiting for the disk did not show as UNINTERRUPTIBLE_SLEEP");
        }
        Ok(())
    })
}

/// Console input: bytes through the UART's loopback, IRQ 4, the buffer, the line discipline
/// (a line per `read`, echoed as read), `read(0)` in `/bin/io -r`, `^D` as end of input.
pub fn read() -> Result<(), &'static str> {
    const INPUT: &[u8] = b"hello\rworld\r\x04";
    frames_unchanged("user_read", || {
        crate::drivers::tty::discard();
        let irqs = crate::irq::count(crate::drivers::tty::IRQ_LINE);
        // Nothing may print while the UART loops its output back to its input.
        hal::serial::set_loopback(true);
        hal::serial::send_raw(INPUT);
        let mut waited = 0;
        while crate::drivers::tty::pending() < INPUT.len() && waited < 1000 {
            sched::sleep_ns(1_000_000);
            waited += 1;
        }
        hal::serial::set_loopback(false);
        let got = crate::drivers::tty::pending();
        let irqs = crate::irq::count(crate::drivers::tty::IRQ_LINE) - irqs;
        let (received, dropped) = crate::drivers::tty::stats();
        println!(
            "user_read: {} bytes typed through the UART's loopback arrived with {irqs} IRQ 4 interrupt(s) ({received} \
                received since boot, {dropped} dropped)",
            got
        );
        if got != INPUT.len() || irqs == 0 {
            return Err("the input did not arrive through the receive interrupt");
        }
        let pid = proc::spawn_program("/bin/io", &[b"io", b"-r", b"100"]).map_err(|_| "spawn /bin/io failed")?;
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        let c = &r.totals.counters;
        println!(
            "user_read: io -r 100: status {:#x}; rchar {}, syscr {}; INTERRUPTIBLE_SLEEP {} us",
            r.status.raw(),
            c.read_char,
            c.read_syscalls,
            us(t(&r.totals.msa, MicroState::InterruptibleSleep))
        );
        expect_exit(&r, 0)?;
        // Canonical mode: a read returns one line, so two lines and the end of input are
        // three calls.
        if c.read_char != 12 || c.read_syscalls != 3 {
            return Err("the reads were not accounted (12 bytes in two lines, then end of input: 3 calls)");
        }
        Ok(())
    })
}

/// Tens of thousands of hostile system calls (`/bin/syscall_fuzz`, seeded): the kernel
/// answers every one and carries on; nothing leaks.
pub fn fuzz() -> Result<(), &'static str> {
    const CALLS: &[u8] = b"30000";
    frames_unchanged("syscall_fuzz", || {
        for seed in [b"20261121".as_slice(), b"1", b"4242"] {
            let t0 = crate::base::time::monotonic_ns().unwrap_or(0);
            let pid = proc::spawn_program("/bin/syscall_fuzz", &[b"syscall_fuzz", seed, CALLS])
                .map_err(|_| "spawn /bin/syscall_fuzz failed")?;
            let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
            let ms = (crate::base::time::monotonic_ns().unwrap_or(0) - t0) / 1_000_000;
            println!("syscall_fuzz: pid {} status {:#x} after {ms} ms", r.pid, r.status.raw());
            expect_exit(&r, 0)?;
        }
        settle();
        let r = run("smoke", 0)?;
        expect_exit(&r, 42)?;
        println!("syscall_fuzz: the kernel carries on (a new program ran)");
        Ok(())
    })
}

/// The user/system split: `spin 300` (a user loop that checks the clock every 100 000
/// iterations) accrues ONCPU_USR ≫ ONCPU_SYS (checked as at least 5×: the child's start and
/// exit in the kernel are a fixed few ms of SYS); `spin -s 300` (a getpid loop) accrues
/// ONCPU_SYS > ONCPU_USR. Read from each child's clocks at exit.
pub fn split() -> Result<(), &'static str> {
    let mut clocks = [[0u64; tally_microstate::NR_MICROSTATES]; 2];
    for (i, argv) in [&[&b"spin"[..], b"300"][..], &[b"spin", b"-s", b"300"]].into_iter().enumerate() {
        let pid = proc::spawn_program("/bin/spin", argv).map_err(|_| "spawn /bin/spin failed")?;
        let r = proc::wait(Some(pid)).map_err(|_| "wait failed")?;
        clocks[i] = r.totals.msa;
        println!(
            "user_split: spin{}: ONCPU_USR {} us, ONCPU_SYS {} us",
            if i == 1 { " -s" } else { "" },
            us(t(&r.totals.msa, MicroState::OncpuUsr)),
            us(t(&r.totals.msa, MicroState::OncpuSys))
        );
    }
    if !tally_microstate::ACCOUNTING_ENABLED {
        return Ok(());
    }
    let (usr, sys) = (t(&clocks[0], MicroState::OncpuUsr), t(&clocks[0], MicroState::OncpuSys));
    if usr < 5 * sys {
        return Err("a user spin loop did not accrue ONCPU_USR >> ONCPU_SYS");
    }
    let (usr, sys) = (t(&clocks[1], MicroState::OncpuUsr), t(&clocks[1], MicroState::OncpuSys));
    if sys <= usr {
        return Err("a system-call loop did not accrue more ONCPU_SYS than ONCPU_USR");
    }
    Ok(())
}
