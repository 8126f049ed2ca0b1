//! `memhog [-m CHUNK] PAGES [HOLD_MS]` — grows the heap by PAGES pages (4 KiB each) and
//! writes to every page, so each one is really backed by a frame; then checks what it wrote,
//! holds the memory HOLD_MS milliseconds (default 0) and exits.
//!
//! The memory comes from the runtime's heap, i.e. from `brk`. A kernel that maps the new
//! pages lazily takes one page fault per page on the first write: the time shows up in
//! ONCPU_TRAP. Out of memory, as Tally's kernel handles it (`kernel/src/proc/oom.rs`,
//! Linux's default overcommit policy):
//!
//! * asking for more than the machine could ever give is refused at `brk`: memhog says
//!   `memhog: cannot get 60000 pages from brk (...)` and exits with status 1;
//! * a request that is granted but cannot be backed when touched (other processes took the
//!   frames, or several requests together promised too much) ends in the OOM killer, which
//!   kills the process with the largest resident set — this memhog if it is the largest:
//!   the kernel prints `out of memory: killed process N (memhog) ...` and it is killed by
//!   SIGKILL.
//!
//! With `-m CHUNK` the pages come from anonymous `mmap`s of at most CHUNK pages each, all
//! made before any page is touched, instead of the heap: each request is judged alone, so
//! `memhog -m 40000 80000` on a 256 MiB machine is granted its two mappings and meets the
//! OOM killer while touching them (a refused `mmap` is reported, status 1).
//!
//! Then it reads its own process's memory numbers with `proc_stat` (resident and virtual
//! size now and their high-water marks, in KiB) and checks that the resident size covers
//! the pages it touched, since each of them is backed by a frame (status 1 if not).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use tally_rt::process::parse_u64;
use tally_rt::sys::Mapping;
use tally_rt::uapi::procstat::ProcStat;
use tally_rt::uapi::syscall::{PROT_READ, PROT_WRITE};
use tally_rt::Errno;
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

const PAGE: usize = 4096;

fn main() -> i32 {
    let count = |s: Option<&str>| s.and_then(parse_u64).and_then(|p| usize::try_from(p).ok());
    let (chunk, first) = match tally_rt::arg(1) {
        Some("-m") => (count(tally_rt::arg(2)).filter(|&c| c > 0), 3),
        _ => (None, 1),
    };
    let Some(pages) = count(tally_rt::arg(first)).filter(|_| first == 1 || chunk.is_some()) else {
        eprintln!("usage: memhog [-m CHUNK] PAGES [HOLD_MS]");
        return 2;
    };
    let hold = tally_rt::arg(first + 1).and_then(parse_u64).unwrap_or(0);
    let Some(bytes) = pages.checked_mul(PAGE) else {
        eprintln!("memhog: {pages} pages is too many");
        return 2;
    };
    let t0 = sys::monotonic_ns().ok();
    let mut v: Vec<u8> = Vec::new();
    let mut maps: Vec<Mapping> = Vec::new();
    if let Some(chunk) = chunk {
        // Every mapping first, then the touching (see the module comment).
        let mut left = pages;
        while left > 0 {
            let n = left.min(chunk);
            match Mapping::new(n * PAGE, PROT_READ | PROT_WRITE) {
                Ok(m) => maps.push(m),
                Err(e) => {
                    eprintln!("memhog: cannot get {n} pages from mmap ({} of {pages} mapped): {e}", pages - left);
                    return 1;
                }
            }
            left -= n;
        }
    } else {
        if v.try_reserve_exact(bytes).is_err() {
            let (start, brk, _) = tally_rt::heap::stats();
            eprintln!("memhog: cannot get {pages} pages from brk (heap {start:#x}..{brk:#x})");
            return 1;
        }
        v.resize(bytes, 0);
    }
    // One write per page, a different value in each so the check below means something.
    let mut areas: Vec<&mut [u8]> = maps.iter_mut().map(Mapping::bytes_mut).collect();
    if chunk.is_none() {
        areas.push(&mut v);
    }
    let mut i = 0usize;
    for a in areas.iter_mut() {
        for page in a.chunks_mut(PAGE) {
            page[0] = i as u8;
            page[PAGE - 1] = !(i as u8);
            i += 1;
        }
    }
    let bad = areas
        .iter()
        .flat_map(|a| a.chunks(PAGE))
        .enumerate()
        .filter(|(i, p)| p[0] != *i as u8 || p[PAGE - 1] != !(*i as u8))
        .count();
    drop(areas);
    let (start, brk, used) = tally_rt::heap::stats();
    let us = match (t0, sys::monotonic_ns().ok()) {
        (Some(a), Some(b)) => b.saturating_sub(a) / 1000,
        _ => 0,
    };
    println!(
        "memhog: touched {pages} pages ({} KiB) in {us} us; heap {start:#x}..{brk:#x}, {used} bytes in use",
        bytes / 1024
    );
    if bad != 0 {
        eprintln!("memhog: {bad} pages did not keep what was written");
        return 1;
    }
    match own_memory() {
        Ok(m) => {
            println!(
                "memhog: rss {} KiB (high-water {} KiB), vm {} KiB (high-water {} KiB)",
                m.rss_kb, m.hiwater_rss_kb, m.vm_kb, m.hiwater_vm_kb
            );
            let touched_kb = (pages * PAGE / 1024) as u64;
            if m.rss_kb < touched_kb || m.hiwater_rss_kb < m.rss_kb || m.vm_kb < m.rss_kb || m.hiwater_vm_kb < m.vm_kb {
                eprintln!("memhog: the memory numbers do not cover the {touched_kb} KiB touched");
                return 1;
            }
        }
        Err(e) => {
            eprintln!("memhog: proc_stat: {e}");
            return 1;
        }
    }
    if hold > 0 {
        if let Err(e) = sys::sleep_ms(hold) {
            eprintln!("memhog: nanosleep: {e}");
        }
    }
    0
}

/// This process's record from `proc_stat` (every thread's carries the process's memory).
fn own_memory() -> Result<ProcStat, Errno> {
    let me = sys::getpid()? as i32;
    sys::proc_stat_all()?.into_iter().find(|p| p.pid == me).ok_or(Errno(tally_rt::uapi::errno::ESRCH))
}
