//! `memhog PAGES [HOLD_MS]` — grows the heap by PAGES pages (4 KiB each) and writes to
//! every page, so each one is really backed by a frame; then checks what it wrote, holds
//! the memory HOLD_MS milliseconds (default 0) and exits.
//!
//! The memory comes from the runtime's heap, i.e. from `brk`. A kernel that maps the new
//! pages lazily takes one page fault per page on the first write: the time shows up in
//! ONCPU_TRAP. A kernel that runs out of frames refuses `brk`; the allocation fails and the
//! program reports it (through the panic handler: status 101).
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
use tally_rt::uapi::procstat::ProcStat;
use tally_rt::Errno;
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

const PAGE: usize = 4096;

fn main() -> i32 {
    let Some(pages) = tally_rt::arg(1).and_then(parse_u64).and_then(|p| usize::try_from(p).ok()) else {
        eprintln!("usage: memhog PAGES [HOLD_MS]");
        return 2;
    };
    let hold = tally_rt::arg(2).and_then(parse_u64).unwrap_or(0);
    let Some(bytes) = pages.checked_mul(PAGE) else {
        eprintln!("memhog: {pages} pages is too many");
        return 2;
    };
    let t0 = sys::monotonic_ns().ok();
    let mut v: Vec<u8> = Vec::new();
    if v.try_reserve_exact(bytes).is_err() {
        let (start, brk, _) = tally_rt::heap::stats();
        eprintln!("memhog: cannot get {pages} pages from brk (heap {start:#x}..{brk:#x})");
        return 1;
    }
    // One write per page, a different value in each so the check below means something.
    v.resize(bytes, 0);
    for (i, page) in v.chunks_mut(PAGE).enumerate() {
        page[0] = i as u8;
        page[PAGE - 1] = !(i as u8);
    }
    let bad = v.chunks(PAGE).enumerate().filter(|(i, p)| p[0] != *i as u8 || p[PAGE - 1] != !(*i as u8)).count();
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
