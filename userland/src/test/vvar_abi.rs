//! `/test/vvar_abi accounting|no-accounting|write|sleep` — a thread's clocks read from its
//! vvar page in ring 3 (`tally_rt::msa`, `tally_uapi::msa::vvar`) against the `msa()` system
//! call: the fixture of the `user_vvar` self-test (`tally_uapi::fixture`).
//!
//! `accounting` / `no-accounting` (does the kernel keep microstate clocks?) — checks: the
//! thread has a page (1), read in ONCPU_USR (2); more than 13 timers are refused (3); a
//! page read, `msa(MSA_THREAD)`, a page read, with no interrupt between them (retried until
//! so, 4): every clock but USR and SYS is the same in all three, to the nanosecond (5),
//! USR and SYS of the call lie between the two page reads' (6, 7), the page's clocks grew
//! by exactly the TSC ticks between its two reads (8), and the call moved the sequence
//! count by at least its two transitions (9); the runtime's `msa()` reads the page (10) and
//! fills only what it is given (11); the same bracket through the runtime's `msa()`, whose
//! conversion of the settled clocks is kept while the count stands (14); a read interrupted
//! by the timer is retried (12).
//! Without accounting every clock is 0 (13). Exit status: the number of the failed check.
//!
//! `write`: writes to its own clock page — the page is read-only, so the process must die
//! of SIGSEGV (exit 1 if it survives). `sleep`: sleeps 200 ms, exits 0 (the kernel reads its
//! page meanwhile).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_clock::TscClock;
use tally_rt::fixture::{check, expect_ok, fail, usage};
use tally_rt::msa::{own_clock_page, own_page_address, retries, thread_ns};
use tally_rt::sys;
use tally_rt::uapi::fixture::{MSA_ACCOUNTING, MSA_NO_ACCOUNTING};
use tally_rt::uapi::msa::{MicroState, MSA_THREAD, NR_MICROSTATES};

tally_rt::entry!(main);

const USR: usize = MicroState::OncpuUsr.index();
const SYS: usize = MicroState::OncpuSys.index();

fn main() -> i32 {
    let accounting = match tally_rt::arg(1) {
        Some(MSA_ACCOUNTING) => true,
        Some(MSA_NO_ACCOUNTING) => false,
        Some("write") => return write_own_page(),
        Some("sleep") => {
            let _ = sys::sleep_ms(200);
            return 0;
        }
        _ => usage("accounting|no-accounting|write|sleep"),
    };
    let Some((first, _, hz)) = own_clock_page() else { fail(1) };
    let clock = TscClock::new(hz, 0);
    let ns = |t: [u64; NR_MICROSTATES]| t.map(|t| clock.ticks_to_ns(t));
    if accounting {
        check(first.microstate() == Some(MicroState::OncpuUsr), 2);
    }
    check(!thread_ns(&mut [0; NR_MICROSTATES + 1]), 3);

    // A page read, the system call, a page read; again until no interrupt came between.
    let mut tries = 0;
    let (a, ta, s, b, tb) = loop {
        tries += 1;
        if tries > 1000 {
            fail(4);
        }
        let mut s = [0u64; NR_MICROSTATES];
        let Some((a, ta, _)) = own_clock_page() else { fail(1) };
        expect_ok(sys::msa(MSA_THREAD, &mut s), 0, 4);
        let Some((b, tb, _)) = own_clock_page() else { fail(1) };
        let quiet = (0..NR_MICROSTATES).all(|i| i == USR || i == SYS || a.clocks[i] == b.clocks[i]);
        if quiet {
            break (a, ta, s, b, tb);
        }
    };
    let (a_ticks, b_ticks) = (a.ticks_at(ta), b.ticks_at(tb));
    let (a_ns, b_ns) = (ns(a_ticks), ns(b_ticks));
    for i in (0..NR_MICROSTATES).filter(|&i| i != USR && i != SYS) {
        check(a_ns[i] == s[i] && s[i] == b_ns[i], 5);
    }
    check(a_ns[USR] <= s[USR] && s[USR] <= b_ns[USR], 6);
    check(a_ns[SYS] <= s[SYS] && s[SYS] <= b_ns[SYS], 7);
    if accounting {
        check(b_ticks.iter().sum::<u64>() - a_ticks.iter().sum::<u64>() == tb - ta, 8);
        check(b.seq.wrapping_sub(a.seq) >= 2, 9);
    } else {
        check(a_ticks == [0; NR_MICROSTATES] && s == [0; NR_MICROSTATES], 13);
    }

    // The runtime's msa(): from the page, the full array or the first three.
    let mut t = [u64::MAX; NR_MICROSTATES];
    expect_ok(tally_rt::msa::msa(MSA_THREAD, &mut t), 0, 10);
    check(t[USR] >= b_ns[USR] && t[SYS] == b_ns[SYS], 10);
    let mut t = [u64::MAX; NR_MICROSTATES];
    expect_ok(tally_rt::msa::msa(MSA_THREAD, &mut t[..3]), 0, 11);
    check(t[3..].iter().all(|&v| v == u64::MAX) && t[USR] != u64::MAX, 11);

    // The same bracket through the runtime's msa() (its cached conversion of the settled
    // clocks, refreshed when the count moves): warm it, then read, call, read.
    let mut warm = [0u64; NR_MICROSTATES];
    expect_ok(tally_rt::msa::msa(MSA_THREAD, &mut warm), 0, 14);
    let mut tries = 0;
    loop {
        tries += 1;
        if tries > 1000 {
            fail(14);
        }
        let (mut a, mut s, mut b) = ([0u64; NR_MICROSTATES], [0u64; NR_MICROSTATES], [0u64; NR_MICROSTATES]);
        expect_ok(tally_rt::msa::msa(MSA_THREAD, &mut a), 0, 14);
        expect_ok(sys::msa(MSA_THREAD, &mut s), 0, 14);
        expect_ok(tally_rt::msa::msa(MSA_THREAD, &mut b), 0, 14);
        let others = |i: &usize| *i != USR && *i != SYS;
        if (0..NR_MICROSTATES).filter(others).all(|i| a[i] == b[i]) {
            check((0..NR_MICROSTATES).filter(others).all(|i| a[i] == s[i]), 14);
            check(a[USR] <= s[USR] && s[USR] <= b[USR] && a[SYS] <= s[SYS] && s[SYS] <= b[SYS], 14);
            check(!accounting || b[SYS] > a[SYS], 14); // the cache saw the call's SYS time
            break;
        }
    }

    // Read until the timer interrupts a read (it moves the count mid-read): for up to 5 s.
    if accounting {
        let start = first.last_change;
        let limit = hz.saturating_mul(5);
        let mut timers = [0u64; NR_MICROSTATES];
        while retries() == 0 {
            check(thread_ns(&mut timers), 12);
            let Some((_, now, _)) = own_clock_page() else { fail(1) };
            if now - start > limit {
                fail(12);
            }
        }
    }
    tally_rt::println!("vvar_abi: consistent with msa(MSA_THREAD) after {tries} tries; {} retried reads", retries());
    0
}

/// Write to the own clock page: must die of SIGSEGV.
#[allow(unsafe_code)]
fn write_own_page() -> i32 {
    let Some(addr) = own_page_address() else { return 2 };
    // SAFETY: none — this is the point: the page is mapped read-only, so the write must
    // fault and the kernel must kill this process. Should it not, the write lands in a page
    // nothing else in this program uses.
    unsafe { core::ptr::write_volatile(addr as *mut u32, 1) };
    1
}
