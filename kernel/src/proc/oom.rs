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
//!    stacks: Linux's `min_free_kbytes` watermark) — the OOM killer picks the user process
//!    with the largest resident set (Linux's `oom_badness` without its adjustments; init is
//!    never picked) and kills it with SIGKILL, and the console says so as Linux's does:
//!    `out of memory: killed process 7 (memhog) total-vm:327872kB, anon-rss:221324kB, UID:0`.
//!    Its wait status says what happened (`killed by SIGKILL (9)`, no core flag). If the
//!    victim is the faulting process, it ends there; otherwise the fault is retried (as
//!    Linux's `pagefault_out_of_memory` returns to retry it) until the victim's exit has
//!    given its frames back — a process that just touched one page too many is not killed
//!    for the memory a larger one holds. So the kernel and the other processes go on.
//!
//! Both are counted in the kstat `unix:0:vm` (`stats/vm_stats.rs`): `brk_enomem` and
//! `mmap_enomem` for refused growths, `oom_kill` (Linux's `/proc/vmstat` name) for kills.
//! See `docs/user-mode.md` ("Out of memory").

use core::sync::atomic::{AtomicU64, Ordering};

use tally_tasktable::{ExitStatus, TaskKey, INIT_PID};
use tally_uapi::signal::SIGKILL;

use crate::base::memory;
use crate::sched;

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

/// What the OOM killer chose (step 2 of the module comment).
struct Victim {
    leader: TaskKey,
    pid: i32,
    uid: u32,
    comm: [u8; 16],
    vm_kb: u64,
    rss_kb: u64,
    /// Already being killed (by an earlier choice): nothing to do but wait for its exit.
    dying: bool,
}

/// The live user process with the largest resident set, init and processes holding no
/// frames excepted (ties: the faulting process, then the first in the table).
fn choose(p: &super::Procs, me: TaskKey) -> Option<Victim> {
    let mut best: Option<(u64, bool, Victim)> = None;
    for (key, t) in p.table.iter() {
        if p.table.leader(key) != Ok(key) || t.pid() == INIT_PID || !t.payload().is_user() {
            continue;
        }
        // A zombie (no thread left) has given its frames back already.
        if p.table.threads(key).map_or(true, |th| th.is_empty()) {
            continue;
        }
        let Some(vm) = t.payload().vm() else { continue };
        let u = vm.usage(0); // sizes only: the integrals are not needed
        if u.rss_pages == 0 {
            continue;
        }
        let mine = key == me;
        if best.as_ref().is_some_and(|(rss, was_me, _)| (*rss, *was_me) >= (u.rss_pages, mine)) {
            continue;
        }
        let v = Victim {
            leader: key,
            pid: t.pid(),
            uid: t.uid(),
            comm: *t.comm(),
            vm_kb: u.vm_pages * 4,
            rss_kb: u.rss_pages * 4,
            dying: t.payload().group_exit.is_some(),
        };
        best = Some((u.rss_pages, mine, v));
    }
    best.map(|(_, _, v)| v)
}

/// A demand fault of the running process found no frame: choose a victim, report it as
/// Linux's OOM killer does and kill it with SIGKILL (step 2 of the module comment). Called
/// from the page-fault handler, in the faulting thread. Returns when the fault is to be
/// retried (another process was chosen, or is already on its way out); does not return when
/// the faulting process itself is the victim.
pub fn out_of_memory() {
    let me = super::with(|p| p.table.leader(sched::current()).ok());
    let chosen = super::with(|p| {
        let me = me?;
        let v = choose(p, me)?;
        if v.leader != me && !v.dying {
            // As `kill(pid, SIGKILL)`: counted, every thread marked, sleepers woken; the
            // victim's frames come back at its exit.
            p.count_signal(v.leader);
            let status = ExitStatus::signaled(SIGKILL, false).unwrap_or_default();
            p.kill_group(v.leader, status, None, hal::tsc::read());
        }
        Some(v)
    });
    let Some(v) = chosen else {
        // Nobody else holds memory (the faulting process is init, or holds none itself):
        // the faulting process ends, as it would have with no victim to free frames.
        OOM_KILLS.fetch_add(1, Ordering::Relaxed);
        println!("out of memory: no process to kill; killing the faulting one");
        super::exit_signaled(SIGKILL)
    };
    if v.dying {
        // The victim is still exiting: retry the fault (the timer's preemption lets it run,
        // and a faulting process that was itself killed leaves there).
        return;
    }
    OOM_KILLS.fetch_add(1, Ordering::Relaxed);
    let comm = v.comm.iter().position(|&b| b == 0).map_or(&v.comm[..], |n| &v.comm[..n]);
    println!(
        "out of memory: killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, UID:{}",
        v.pid,
        core::str::from_utf8(comm).unwrap_or("?"),
        v.vm_kb,
        v.rss_kb,
        v.uid
    );
    if Some(v.leader) == me {
        super::exit_signaled(SIGKILL);
    }
}
