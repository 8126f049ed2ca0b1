//! The memory integrals checked against a tick-by-tick model, and the rules around them
//! (high-water marks, a late start, CPU times that arrive out of order, the units).

use proptest::prelude::*;
use tally_clock::TscClock;
use tally_memacct::{MemAcct, MemUsage};

/// The figure of the crate documentation: 10 pages, then 20, then 10 again.
#[test]
fn the_documented_example_is_exact() {
    let mut a = MemAcct::default();
    a.set(100, 10, 10);
    a.set(300, 20, 20);
    a.set(700, 10, 10);
    let u = a.usage(1000);
    // The sizes before the first change were 0, so nothing accrues before cpu 100.
    assert_eq!(
        u.rss_page_ticks,
        10 * 200 + 20 * 400 + 10 * 300,
        "RSS integral at cpu 1000: 10 pages over 100..300, 20 over 300..700, 10 over 700..1000"
    );
    assert_eq!(u.vm_page_ticks, u.rss_page_ticks, "VM followed the same curve");
    assert_eq!((u.rss_pages, u.hiwater_rss_pages), (10, 20), "(current RSS, RSS high-water mark)");
}

#[test]
fn reading_changes_nothing() {
    let mut a = MemAcct::default();
    a.set(0, 4, 8);
    let before = a;
    assert_eq!(a.usage(50).rss_page_ticks, 200, "a read at cpu 50 includes the open interval: 4 pages x 50");
    assert_eq!(a.usage(50).vm_page_ticks, 400, "8 pages x 50");
    assert_eq!(a, before, "usage() must not change the accounting");
    // A later change still settles from the last change, not from the read.
    a.set(100, 0, 0);
    assert_eq!(a.usage(100).rss_page_ticks, 400, "4 pages x 100 after set(100, 0, 0)");
}

#[test]
fn a_program_started_late_integrates_from_its_start() {
    // An exec in place at process CPU time 5000: the memory came into use then.
    let mut a = MemAcct::default();
    a.start_at(5000);
    a.set(0, 3, 3); // loading happens "at CPU time 0", before the program runs
    assert_eq!(a.usage(5000).rss_page_ticks, 0, "nothing accrues before the start at cpu 5000");
    assert_eq!(a.usage(5010).rss_page_ticks, 30, "3 pages x 10 ticks after the start");
}

#[test]
fn an_older_cpu_time_adds_nothing_and_moves_nothing_back() {
    let mut a = MemAcct::default();
    a.set(100, 1, 1);
    a.set(200, 2, 2); // integral 100
    a.set(150, 5, 5); // a thread preempted before its change: no interval counted twice
    assert_eq!(a.usage(200).rss_page_ticks, 100, "the late set(150) added nothing: 1 page x 100");
    assert_eq!(a.usage(210).rss_page_ticks, 150, "and its 5 pages count from 200, not from 150");
    assert_eq!(a.usage(210).hiwater_rss_pages, 5, "its size still raises the mark");
}

#[test]
fn units_are_kib_and_mb_us() {
    // One MB is 256 pages; 256 pages for one second of CPU is 10^6 MB·µs.
    let clock = TscClock::new(1_000_000_000, 0);
    let mut a = MemAcct::default();
    a.set(0, 256, 512);
    let u = a.usage(1_000_000_000);
    assert_eq!(u.coremem_mb_us(&clock), 1_000_000, "1 MB for 1 s of CPU");
    assert_eq!(u.virtmem_mb_us(&clock), 2_000_000, "2 MB for 1 s of CPU");
    assert_eq!((u.hiwater_rss_kb(), u.hiwater_vm_kb()), (1024, 2048), "256 and 512 pages, in KiB");
}

#[test]
fn adding_usages_sums_sizes_and_integrals_and_keeps_the_larger_peak() {
    let mut x = MemUsage {
        rss_pages: 1,
        vm_pages: 2,
        hiwater_rss_pages: 10,
        hiwater_vm_pages: 3,
        rss_page_ticks: 5,
        vm_page_ticks: 6,
    };
    let y = MemUsage {
        rss_pages: 4,
        vm_pages: 5,
        hiwater_rss_pages: 7,
        hiwater_vm_pages: 30,
        rss_page_ticks: 50,
        vm_page_ticks: 60,
    };
    x.add(&y);
    assert_eq!(
        x,
        MemUsage {
            rss_pages: 5,
            vm_pages: 7,
            hiwater_rss_pages: 10,
            hiwater_vm_pages: 30,
            rss_page_ticks: 55,
            vm_page_ticks: 66
        }
    );
}

#[test]
fn high_water_marks_only_rise() {
    // The sizes go up, down and up again; the marks follow the maxima, RSS and VM each on
    // their own (the largest VM and the largest RSS are not seen at the same change).
    let mut a = MemAcct::default();
    let steps = [(10, 40, 10, 40), (30, 35, 30, 40), (5, 60, 30, 60), (20, 10, 30, 60), (0, 0, 30, 60)];
    for (i, &(rss, vm, hi_rss, hi_vm)) in steps.iter().enumerate() {
        a.set(i as u64 * 10, rss, vm);
        let u = a.usage(i as u64 * 10);
        assert_eq!(
            (u.hiwater_rss_pages, u.hiwater_vm_pages),
            (hi_rss, hi_vm),
            "after set(rss {rss}, vm {vm}) (step {i}): high-water marks (rss, vm) in pages"
        );
        assert_eq!((u.rss_pages, u.vm_pages), (rss, vm), "the current sizes are the last ones set");
    }
    let u = a.usage(100);
    assert_eq!((u.hiwater_rss_kb(), u.hiwater_vm_kb()), (120, 240), "30 and 60 pages of 4 KiB, in KiB");
}

#[test]
fn mb_us_conversion_multiplies_first_and_saturates() {
    use tally_taskstats::page_ticks_to_mb_us;
    // 255 pages for 1 tick of a 1 kHz clock: 255 page-ms = 255 000 page-µs = 996.09 MB-µs.
    // Dividing by the clock rate or by 256 before multiplying would give 0.
    let khz = TscClock::new(1_000, 0);
    assert_eq!(page_ticks_to_mb_us(255, &khz), 996, "255 page-ticks at 1 kHz: floor(255e6 / 1000 / 256)");
    // 1 GHz: 256 pages for 1.5 µs of CPU is 1.5 MB-µs, rounded down once.
    let ghz = TscClock::new(1_000_000_000, 0);
    assert_eq!(page_ticks_to_mb_us(256 * 1_500, &ghz), 1, "256 pages for 1 500 ticks at 1 GHz");
    assert_eq!(page_ticks_to_mb_us(0, &ghz), 0, "no memory, no MB-µs");
    // 3 GHz: 1 GB (262 144 pages) for one hour of CPU = 1024 MB × 3.6e9 µs.
    let clock = TscClock::new(3_000_000_000, 0);
    let hour = 3_600 * 3_000_000_000u128;
    assert_eq!(page_ticks_to_mb_us(262_144 * hour, &clock), 1024 * 3_600_000_000, "1 GB for an hour at 3 GHz");
    // Beyond u64 the result saturates rather than wrapping or panicking.
    assert_eq!(page_ticks_to_mb_us(u128::MAX, &clock), u64::MAX, "u128::MAX page-ticks saturate");
    assert_eq!(page_ticks_to_mb_us(1 << 90, &ghz), u64::MAX, "2^90 page-ticks (2^72 MB-µs) saturate");
}

/// One step of a process's memory life, in small numbers so the model can count ticks.
#[derive(Clone, Debug)]
enum Op {
    Set { cpu: u64, rss: u64, vm: u64 },
    Read { cpu: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..400, 0u64..50, 0u64..80).prop_map(|(cpu, rss, vm)| Op::Set { cpu, rss, vm }),
        1 => (0u64..400).prop_map(|cpu| Op::Read { cpu }),
    ]
}

/// The model: the sizes in effect during each CPU tick, replayed one tick at a time. A
/// change at CPU time `c` takes effect from `max(c, latest time seen)`: time never runs
/// backwards for the integrals.
#[derive(Default)]
struct Model {
    /// (from tick, rss, vm), in order.
    changes: Vec<(u64, u64, u64)>,
    seen: u64,
    hi: (u64, u64),
}

impl Model {
    fn set(&mut self, cpu: u64, rss: u64, vm: u64) {
        self.seen = self.seen.max(cpu);
        self.changes.push((self.seen, rss, vm));
        self.hi = (self.hi.0.max(rss), self.hi.1.max(vm));
    }

    fn integrals(&self, cpu: u64) -> (u128, u128) {
        let until = cpu.max(self.seen);
        let (mut r, mut v) = (0u128, 0u128);
        for tick in 0..until {
            let (rss, vm) = self.changes.iter().rev().find(|c| c.0 <= tick).map_or((0, 0), |c| (c.1, c.2));
            r += rss as u128;
            v += vm as u128;
        }
        (r, v)
    }
}

proptest! {
    #[test]
    fn integrals_match_a_tick_by_tick_count(ops in proptest::collection::vec(op(), 0..40)) {
        let mut a = MemAcct::default();
        let mut m = Model::default();
        for o in ops {
            match o {
                Op::Set { cpu, rss, vm } => {
                    a.set(cpu, rss, vm);
                    m.set(cpu, rss, vm);
                }
                Op::Read { cpu } => {
                    let u = a.usage(cpu);
                    let (r, v) = m.integrals(cpu);
                    prop_assert_eq!((u.rss_page_ticks, u.vm_page_ticks), (r, v));
                    prop_assert_eq!((u.hiwater_rss_pages, u.hiwater_vm_pages), m.hi);
                    let last = m.changes.last().map_or((0, 0), |c| (c.1, c.2));
                    prop_assert_eq!((u.rss_pages, u.vm_pages), last);
                }
            }
        }
    }
}
