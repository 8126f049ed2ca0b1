//! # IRQ line kstats: an interrupt kstat and an event-timer kstat per line that has fired
//!
//! Every interrupt is already accounted by the runqueue's `tally_microstate::IrqAccounting`
//! (`irq::dispatch` brackets it with `sched::irq_enter`/`irq_return`): per line, how many
//! interrupts of each kind, and a timer of the handlers (count, total, shortest, longest,
//! last start and stop, in TSC ticks). That is the source of truth; this file publishes it,
//! Solaris style, as two kstats per line:
//!
//! * `pic:L:NAME`, `KSTAT_TYPE_INTR`, class `interrupts` — module the interrupt controller,
//!   instance the line, name what sits on it (`clock`, `ide0`, else `irqL`); the five
//!   `kstat_intr_t` counters hard, soft, watchdog, spurious, multiple service;
//! * `unix:L:irq_timer`, `KSTAT_TYPE_TIMER`, class `interrupts` — one `kstat_timer_t` named
//!   like the line, its handler time in nanoseconds (start and stop since boot).
//!
//! ```text
//!   IRQ L fires ─> irq::dispatch ─> IrqAccounting (in IRQ context; no kstat lock)
//!                                        │
//!   next kstats read ─> discover(): line L has counts and no kstats yet
//!                         └─> create pic:L:NAME + unix:L:irq_timer   (KCID += 2)
//!                     ─> refresh(): copy the five counts into the intr kstat
//!                     ─> registry read ─> snapshot_timer(): the timer record, converted
//!                                          from TSC ticks with time::clock()
//! ```
//!
//! Why the timer is produced at read time rather than copied in: `tally_kstat`'s timer
//! kstats are driven event by event (`start`/`stop`), which is right for a provider that
//! times its own events, but here the events were timed and summed in interrupt context
//! already, and a sum cannot be replayed as events. So the registry keeps the timer's name
//! and header, and the record's numbers are written into the reader's bytes at each read —
//! what Solaris does for a virtual kstat with its own `ks_snapshot` routine.
//!
//! A line's kstats are created at the first read (of any kstat) after the line first
//! fired: interrupt handlers never take the registry lock. Without the `accounting` feature
//! the counters come from `irq::counters()` and the timers stay at zero.

use tally_kstat::{IntrKind, KstatError};
use tally_uapi::kstat::{KidT, KstatRecord, KstatTimer, KSTAT_TYPE_INTR, KSTAT_TYPE_TIMER};

use super::{hrtime, Sources, State};
use hal::pic::NR_LINES;
use hal::pit::IRQ_LINE as TIMER_LINE;

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
    let kind = if line == TIMER_LINE as usize { IntrKind::Watchdog } else { IntrKind::Hard };
    c[kind.index()] = src.irq_counts[line];
    c[IntrKind::Spurious.index()] = src.irq_spurious[line];
    c
}

/// Create the kstats of every line that has fired and has none yet.
pub(super) fn discover(st: &mut State, src: &Sources, now: i64) {
    for line in 0..NR_LINES {
        if st.lines[line].is_some() || st.lines_failed[line] || counts(src, line).iter().all(|&c| c == 0) {
            continue;
        }
        match create(st, line, now) {
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

fn create(st: &mut State, line: usize, now: i64) -> Result<LineKstats, KstatError> {
    let name = line_name(line);
    let instance = line as i32;
    let intr = st.reg.create("pic", instance, name, "interrupts", KSTAT_TYPE_INTR, 1, now)?;
    let timer = match st.reg.create("unix", instance, "irq_timer", "interrupts", KSTAT_TYPE_TIMER, 1, now) {
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
