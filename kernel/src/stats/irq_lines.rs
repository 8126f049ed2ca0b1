//! # IRQ line kstats: an interrupt kstat and an event-timer kstat per line that has fired
//!
//! The interrupt accounting (`tally_microstate::IrqAccounting`, kept by the run queue) already
//! counts every line's interrupts by kind and times its handlers; this file publishes that,
//! Solaris style, as two kstats per line: `pic:L:NAME` (`KSTAT_TYPE_INTR`: the five
//! `kstat_intr_t` counters) and `unix:L:irq_timer` (`KSTAT_TYPE_TIMER`: the handler time in
//! ns). A line's kstats are created at the first read after it first fired (interrupt
//! handlers never take the registry lock), but dated from when the line came into use —
//! its handler registered at boot, or its first spurious interrupt (`irq::since`) — as
//! Solaris creates a line's kstat when its handler is added: `crtime` says how long the
//! counters have been counting, whenever someone first looked. The timer's record is produced at read time from
//! the accounting's sums, which cannot be replayed as `start`/`stop` events (Solaris'
//! `ks_snapshot` for a virtual kstat). Without the `accounting` feature the counters come
//! from `irq::counters()` and the timers stay at zero. See `docs/kstat.md`.

use tally_kstat::{IntrKind, KstatError};
use tally_uapi::kstat::{KidT, KstatRecord, KstatTimer, KSTAT_TYPE_INTR, KSTAT_TYPE_TIMER};

use super::{hrtime, Sources, State};
use hal::pic::NR_LINES;

/// The two kstats of one line.
#[derive(Clone, Copy, Debug)]
pub(super) struct LineKstats {
    pub intr: KidT,
    pub timer: KidT,
}

const IRQ_NAMES: [&str; NR_LINES] = [
    "irq0", "irq1", "irq2", "irq3", "irq4", "irq5", "irq6", "irq7", "irq8", "irq9", "irq10", "irq11", "irq12", "irq13",
    "irq14", "irq15",
];

/// What sits on a legacy PC line (the name of its kstats), else `irqL`.
pub fn line_name(line: usize) -> &'static str {
    match line {
        0 => "clock",
        1 => "i8042",
        3 => "com2",
        4 => "com1",
        8 => "rtc",
        12 => "mouse",
        14 => "ide0",
        15 => "ide1",
        _ => IRQ_NAMES.get(line).copied().unwrap_or("irq"),
    }
}

/// The five counters of `line`, by `KSTAT_INTR_*` index.
fn counts(src: &Sources, line: usize) -> [u64; 5] {
    if tally_microstate::ACCOUNTING_ENABLED {
        return src.lines[line].intrs.counts;
    }
    let mut c = [0u64; 5];
    // Every line's interrupts are hard ones, the clock's too (see `irq::init`).
    c[IntrKind::Hard.index()] = src.irq_counts[line];
    c[IntrKind::Spurious.index()] = src.irq_spurious[line];
    c
}

/// Create the kstats of every line that has fired and has none yet.
pub(super) fn discover(st: &mut State, src: &Sources, now: i64) {
    for line in 0..NR_LINES {
        if st.lines[line].is_some() || st.lines_failed[line] || counts(src, line).iter().all(|&c| c == 0) {
            continue;
        }
        let crtime = match src.irq_since[line] {
            0 => now,
            tsc => hrtime(crate::base::time::clock().monotonic_ns(tsc)).min(now),
        };
        match create(st, line, crtime) {
            Ok(k) => {
                st.lines[line] = Some(k);
                refresh(st, k.intr, src);
            }
            Err(e) => {
                st.lines_failed[line] = true;
                log::warn!("kstat: cannot create the kstats of IRQ {line}: {e:?}");
            }
        }
    }
}

fn create(st: &mut State, line: usize, crtime: i64) -> Result<LineKstats, KstatError> {
    let name = line_name(line);
    let instance = line as i32;
    let intr = st.reg.create("pic", instance, name, "interrupts", KSTAT_TYPE_INTR, 1, crtime)?;
    let timer = match st.reg.create("unix", instance, "irq_timer", "interrupts", KSTAT_TYPE_TIMER, 1, crtime) {
        Ok(kid) => kid,
        Err(e) => {
            let _ = st.reg.delete(intr);
            return Err(e);
        }
    };
    let named = st.reg.timer_mut(timer).and_then(|t| t.timer_init(0, name));
    for kid in [intr, timer] {
        if let Err(e) = named.and_then(|()| st.reg.install(kid)) {
            let _ = st.reg.delete(intr);
            let _ = st.reg.delete(timer);
            return Err(e);
        }
    }
    Ok(LineKstats { intr, timer })
}

/// `ks_update` of an interrupt kstat: set its counters to the accounting's (modulo 2^32,
/// as `kstat_intr_t`'s `uint_t` counters wrap).
pub(super) fn refresh(st: &mut State, kid: KidT, src: &Sources) {
    let Some(line) = st.lines.iter().position(|l| l.is_some_and(|l| l.intr == kid)) else { return };
    let c = counts(src, line);
    if let Ok(s) = st.reg.intr_mut(kid) {
        for kind in IntrKind::ALL {
            let want = c[kind.index()] as u32;
            s.add(kind, want.wrapping_sub(s.count(kind)));
        }
    }
}

/// If `kid` is a line's timer kstat, overwrite the record the registry just encoded in
/// `data` with the accounting's numbers in nanoseconds (`ks_snapshot`).
pub(super) fn snapshot_timer(st: &State, kid: KidT, src: &Sources, data: &mut [u8]) {
    let Some(line) = st.lines.iter().position(|l| l.is_some_and(|l| l.timer == kid)) else { return };
    let t = &src.lines[line].timer;
    let clock = crate::base::time::clock();
    let ns = |ticks: u64| hrtime(clock.ticks_to_ns(ticks));
    let at = |tsc: u64| hrtime(clock.monotonic_ns(tsc));
    let mut rec = KstatTimer::init(line_name(line));
    if t.num_events > 0 {
        rec.num_events = t.num_events;
        rec.elapsed_time = ns(t.elapsed_time);
        rec.min_time = ns(t.min_time);
        rec.max_time = ns(t.max_time);
        rec.start_time = at(t.start_time);
        rec.stop_time = at(t.stop_time);
    }
    let _ = rec.encode_into(data);
}
