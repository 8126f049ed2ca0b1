//! # Out of memory: what happens when user memory cannot be had
//!
//! User memory is demand-zero (`vm.rs`): `brk` and `mmap` only widen a region, and a frame
//! is taken at the first touch of each page. So "out of memory" can show up at two points,
//! and Tally answers each as Linux does in its default mode (`vm.overcommit_memory = 0`):
//!
//! 1. **At `brk`/`mmap`: obvious overcommits are refused.** A single growth asking for
//!    more pages than user memory could ever have — every frame the machine has, less the
//!    ones the kernel took at boot ([`crate::base::memory::frames_for_users`], Linux's
//!    `totalram_pages`; there is no swap) — fails: `brk` leaves the break where it was (the
//!    runtime's allocator then reports the failure) and `mmap` returns `ENOMEM`. This is
//!    Linux's `OVERCOMMIT_GUESS` check in `__vm_enough_memory`: each request is judged
//!    alone, not against what is committed already, so several requests that each fit may
//!    together promise more than there is. `PROT_NONE`, read-only and `MAP_NORESERVE`
//!    mappings are not checked (Linux does not account them either).
//! 2. **At a demand fault: the OOM killer.** When the fault finds no free frame — or only
//!    the last [`RESERVE_FRAMES`], which are kept for the kernel (page tables, kernel
//!    stacks: Linux's `min_free_kbytes` watermark) — the faulting process is killed with
//!    SIGKILL, and the console says so as Linux's OOM killer does:
//!    `out of memory: killed process 7 (memhog) total-vm:327872kB, anon-rss:221324kB, UID:0`.
//!    Tally kills the process that asked, as Linux does with
//!    `vm.oom_kill_allocating_task = 1`, rather than searching for the largest one: the
//!    faulting process is the one that overcommitted, and its wait status says what happened
//!    (`killed by SIGKILL (9)`, no core flag). Its frames come back when it exits, so the
//!    kernel and every other process go on.
//!
//! Both are counted in the kstat `unix:0:vm` (`stats/vm_stats.rs`): `brk_enomem` and
//! `mmap_enomem` for refused growths, `oom_kill` (Linux's `/proc/vmstat` name) for kills.
//! See `docs/user-mode.md` ("Out of memory").

use core::sync::atomic::{AtomicU64, Ordering};

use tally_uapi::signal::SIGKILL;

use crate::base::memory;

/// Free frames a demand fault must leave for the kernel: 2 MiB.
pub const RESERVE_FRAMES: u64 = 512;

static OOM_KILLS: AtomicU64 = AtomicU64::new(0);
static BRK_REFUSED: AtomicU64 = AtomicU64::new(0);
static MMAP_REFUSED: AtomicU64 = AtomicU64::new(0);

/// The counters of `unix:0:vm`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OomCounters {
    pub oom_kill: u64,
    pub brk_enomem: u64,
    pub mmap_enomem: u64,
}

pub fn counters() -> OomCounters {
    OomCounters {
        oom_kill: OOM_KILLS.load(Ordering::Relaxed),
        brk_enomem: BRK_REFUSED.load(Ordering::Relaxed),
        mmap_enomem: MMAP_REFUSED.load(Ordering::Relaxed),
    }
}

/// The most pages one `brk`/`mmap` growth may ask for (step 1 of the module comment).
pub fn commit_limit() -> u64 {
    memory::frames_for_users().saturating_sub(RESERVE_FRAMES)
}

/// Which call asked for memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    Brk,
    Mmap,
}

/// May a growth of `pages` pages be promised? False (counted) for an obvious overcommit.
pub fn may_commit(pages: u64, by: Growth) -> bool {
    if pages <= commit_limit() {
        return true;
    }
    match by {
        Growth::Brk => BRK_REFUSED.fetch_add(1, Ordering::Relaxed),
        Growth::Mmap => MMAP_REFUSED.fetch_add(1, Ordering::Relaxed),
    };
    false
}

/// May a demand fault take a frame now (more than the kernel's reserve is free)?
pub fn frame_available() -> bool {
    memory::free_frames() > RESERVE_FRAMES
}

/// A demand fault of the running process found no frame: report it as Linux's OOM killer
/// does and kill the process with SIGKILL (step 2 of the module comment). Called from the
/// page-fault handler, in the faulting thread.
pub fn kill_current() -> ! {
    OOM_KILLS.fetch_add(1, Ordering::Relaxed);
    let ids = super::current_ids();
    let comm = ids.comm.iter().position(|&b| b == 0).map_or(&ids.comm[..], |n| &ids.comm[..n]);
    let comm = core::str::from_utf8(comm).unwrap_or("?");
    let cpu = super::current_process_cpu_ticks();
    let (vm_kb, rss_kb) = super::current_vm().map_or((0, 0), |vm| {
        let u = vm.usage(cpu);
        (u.vm_pages * 4, u.rss_pages * 4)
    });
    println!(
        "out of memory: killed process {} ({comm}) total-vm:{vm_kb}kB, anon-rss:{rss_kb}kB, UID:{}",
        ids.pid, ids.uid
    );
    super::exit_signaled(SIGKILL)
}
