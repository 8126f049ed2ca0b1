//! # tally-memacct — memory accounting of a process: size, high-water marks, integrals
//!
//! Three questions an accounting record asks about a process's memory, and where the
//! answers come from (the fields of Linux's taskstats and of SGI CSA's memory record):
//!
//! * **How much now?** The *resident set* (RSS: user pages really backed by a frame) and the
//!   *virtual size* (VM: the pages its regions allow, whether touched or not). The process's
//!   memory map (the kernel's `proc/vm.rs`) changes both and tells this struct after every
//!   change.
//! * **How much at most?** `hiwater_rss` / `hiwater_vm`: raised whenever a change passes the
//!   previous maximum (CSA's `himem`, taskstats' `hiwater_rss`/`hiwater_vm`, and wait4's
//!   `ru_maxrss`).
//! * **How much, for how long?** The *memory integrals* (taskstats `coremem`/`virtmem`, CSA
//!   `mem1`): the size integrated over the process's **CPU time** — as Linux's comment puts
//!   it, "memory usage multiplied by system time", so that dividing by the CPU time gives
//!   the average size while it ran. Units: MB·µs.
//!
//! ## Exact, not sampled
//!
//! Linux adds `rss × Δcputime` at timer ticks, so the integral is a Riemann sum with a
//! tick's resolution. Tally does what CSA's design asked for instead: the integral is
//! brought up to date *at every change of RSS or VM* — between two changes the size is
//! constant, so `size × (cpu_now − cpu_at_last_change)` is the exact area of that interval:
//!
//! ```text
//!   rss
//!   20 |            ┌──────────┐
//!   10 |────────────┘          └─────     integral = 10·(c1−c0) + 20·(c2−c1) + 10·(c3−c2)
//!      +──────────────────────────────►   (c = the process's CPU time, TSC ticks)
//!      c0          c1         c2     c3
//! ```
//!
//! The CPU time is the process's on-CPU microstates (ONCPU_USR + ONCPU_SYS + ONCPU_TRAP of
//! every thread, exited ones included), read from the same clocks `msa()` reports, so the
//! integral is exact to the TSC tick; it is 0 when accounting is compiled out. A reader
//! ([`MemAcct::usage`]) folds in the open interval since the last change without changing
//! anything. Sizes are kept in pages and integrals in page·ticks (128-bit: no overflow in
//! any realistic lifetime); [`MemUsage`] converts to KiB and MB·µs.
//!
//! The CPU-time values passed in may come from different threads of the process; one
//! older than the last one seen (a thread preempted between reading the clock and making
//! its change) adds nothing and moves nothing back, so no interval is counted twice.

#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

use tally_clock::TscClock;
use tally_taskstats::page_ticks_to_mb_us;

/// The memory accounting of one process (the kernel keeps one inside each memory map).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemAcct {
    rss: u64,
    vm: u64,
    hiwater_rss: u64,
    hiwater_vm: u64,
    rss_integral: u128,
    vm_integral: u128,
    cpu_mark: u64,
}

/// A process's memory numbers at one instant (sizes in pages, integrals in page·ticks of
/// CPU time). `Default` is "no memory ever".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemUsage {
    pub rss_pages: u64,
    pub vm_pages: u64,
    pub hiwater_rss_pages: u64,
    pub hiwater_vm_pages: u64,
    pub rss_page_ticks: u128,
    pub vm_page_ticks: u128,
}

impl MemUsage {
    /// Combine the numbers of two processes (or threads' shares): integrals add up, high
    /// water marks take the larger, current sizes add up.
    pub fn add(&mut self, o: &MemUsage) {
        // BEGIN LAB 6: fold o in: sizes and integrals add up (wrapping), each high-water mark keeps the larger
        // STUB: // your code here
        self.rss_pages = self.rss_pages.wrapping_add(o.rss_pages);
        self.vm_pages = self.vm_pages.wrapping_add(o.vm_pages);
        self.hiwater_rss_pages = self.hiwater_rss_pages.max(o.hiwater_rss_pages);
        self.hiwater_vm_pages = self.hiwater_vm_pages.max(o.hiwater_vm_pages);
        self.rss_page_ticks = self.rss_page_ticks.wrapping_add(o.rss_page_ticks);
        self.vm_page_ticks = self.vm_page_ticks.wrapping_add(o.vm_page_ticks);
        // END LAB 6
    }

    pub fn hiwater_rss_kb(&self) -> u64 {
        // BEGIN LAB 6: pages to KiB, as Linux's xacct_add_tsk (hiwater_rss * PAGE_SIZE / KB)
        // STUB: 0
        self.hiwater_rss_pages * 4
        // END LAB 6
    }

    pub fn hiwater_vm_kb(&self) -> u64 {
        // BEGIN LAB 6: pages to KiB, like hiwater_rss_kb
        // STUB: 0
        self.hiwater_vm_pages * 4
        // END LAB 6
    }

    /// `coremem`: the RSS integral in MB·µs (1 page = 1/256 MB), as taskstats reports it.
    pub fn coremem_mb_us(&self, clock: &TscClock) -> u64 {
        page_ticks_to_mb_us(self.rss_page_ticks, clock)
    }

    /// `virtmem`: the VM integral in MB·µs.
    pub fn virtmem_mb_us(&self, clock: &TscClock) -> u64 {
        page_ticks_to_mb_us(self.vm_page_ticks, clock)
    }
}

impl MemAcct {
    /// Bring the integrals up to CPU time `cpu` (a no-op for a `cpu` not after the last).
    fn settle(&mut self, cpu: u64) {
        // BEGIN LAB 6: add size x (cpu - cpu_mark) to both integrals and move the mark; an older cpu adds nothing
        // STUB: // your code here
        if cpu > self.cpu_mark {
            let d = (cpu - self.cpu_mark) as u128;
            self.rss_integral = self.rss_integral.wrapping_add(self.rss as u128 * d);
            self.vm_integral = self.vm_integral.wrapping_add(self.vm as u128 * d);
            self.cpu_mark = cpu;
        }
        // END LAB 6
    }

    /// The sizes become `rss` and `vm` pages at process CPU time `cpu`.
    pub fn set(&mut self, cpu: u64, rss: u64, vm: u64) {
        // BEGIN LAB 6: the old sizes were in effect until cpu: account for them before changing
        // STUB: // your code here
        self.settle(cpu);
        // END LAB 6
        self.rss = rss;
        self.vm = vm;
        // BEGIN LAB 6: raise the high-water marks
        // STUB: // your code here
        self.hiwater_rss = self.hiwater_rss.max(rss);
        self.hiwater_vm = self.hiwater_vm.max(vm);
        // END LAB 6
    }

    /// The memory came into use at process CPU time `cpu`, not at 0: a program exec'd in
    /// place by a task that already has CPU time of its own (init). Its integrals start
    /// there. Call once the program is loaded and before it runs (nothing integrated yet).
    pub fn start_at(&mut self, cpu: u64) {
        // BEGIN LAB 6: the integrals start at cpu (never move the mark back)
        // STUB: // your code here
        self.cpu_mark = self.cpu_mark.max(cpu);
        // END LAB 6
    }

    /// The numbers as of CPU time `cpu`, the open interval included; changes nothing.
    pub fn usage(&self, cpu: u64) -> MemUsage {
        let mut a = *self;
        // BEGIN LAB 6: a reader counts the open interval since the last change too (on its copy)
        // STUB: // your code here
        a.settle(cpu);
        // END LAB 6
        MemUsage {
            rss_pages: a.rss,
            vm_pages: a.vm,
            hiwater_rss_pages: a.hiwater_rss,
            hiwater_vm_pages: a.hiwater_vm,
            rss_page_ticks: a.rss_integral,
            vm_page_ticks: a.vm_integral,
        }
    }
}
