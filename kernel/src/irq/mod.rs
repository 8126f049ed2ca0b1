//! # irq — hardware interrupt dispatch: from an IRQ line's IDT stub to its handler and the EOI
//!
//! `hal::idt` sends every legacy IRQ (lines 0–15) here ([`dispatch`]). Which handler serves
//! which line is decided at boot ([`init`]): the timer tick on the PIT's line, and each
//! driver's handler on its device's line (`drivers::INTERRUPT_HANDLERS`). Lines 7 and 15 are where the 8259
//! reports *spurious* interrupts, so before anything else the PIC's in-service register is
//! checked: a spurious interrupt is counted and gets no EOI (a spurious 15 gets the master's
//! EOI only). A real one is counted, its handler runs, and the EOI is sent.
//!
//! Counters are per line and readable at any time, accounting or not (like Linux's
//! `/proc/interrupts`). With the `accounting` feature, every interrupt — spurious ones too,
//! they also steal time — is additionally timed by `tally_microstate::IrqAccounting`: the
//! interrupted task's clock switches to INTERRUPTED at entry and back at exit, and the same
//! two TSC reads time the line (count, total, min, max, last start/stop; counts by kind).
//! Because both sides use the same timestamps, the sum of INTERRUPTED over all tasks equals
//! the sum of handler time over all lines, to the tick.
//!
//! See `docs/boot-and-interrupts.md` (the PICs, the tick) and `docs/microstate-accounting.md`
//! (INTERRUPTED, the handover, the per-line timers).

use core::sync::atomic::{AtomicU64, Ordering};
use hal::pic::NR_LINES;
use hal::pit::IRQ_LINE as TIMER_LINE;
use spin::Mutex;
use tally_microstate::IntrKind;

use crate::base::config::HZ;
use crate::{drivers, proc, sched};

type Handler = fn();

static HANDLERS: Mutex<[Option<Handler>; NR_LINES]> = Mutex::new([None; NR_LINES]);
static COUNT: [AtomicU64; NR_LINES] = [const { AtomicU64::new(0) }; NR_LINES];
static SPURIOUS: [AtomicU64; NR_LINES] = [const { AtomicU64::new(0) }; NR_LINES];
static TICKS: AtomicU64 = AtomicU64::new(0);
/// The TSC when each line came into use — its handler was registered, or, for a line with
/// no handler, its first spurious interrupt came — 0 if never: the creation time (`crtime`)
/// of the line's kstats, which are made later, at a read (`stats/irq_lines.rs`).
static SINCE: [AtomicU64; NR_LINES] = [const { AtomicU64::new(0) }; NR_LINES];

/// Install `handler` for `line` and unmask the line.
fn register(line: u8, handler: Handler) {
    hal::cpu::without_interrupts(|| HANDLERS.lock()[line as usize] = Some(handler));
    SINCE[line as usize].store(hal::tsc::read(), Ordering::Relaxed);
    hal::pic::unmask(line);
}

/// Called by the IDT stub of `line`, with interrupts disabled. The interrupt accounting
/// (`sched::irq_enter`/`irq_return`, kept by the run queue) brackets everything. If the
/// handler asked for a reschedule, the switch happens inside the interrupt and the task
/// switched to ends the interrupt's accounting.
///
/// `regs`: the interrupted registers. If the interrupt came while the CPU ran user code, its
/// end is a return to user mode (`proc::interrupt_return_to_user`) — where a thread whose
/// process is being killed exits instead (a thread preempted in user mode leaves this
/// way), one whose process is stopping stops, and a pending signal is delivered (a thread
/// spinning in user mode runs its handler from the next tick: the frame rewrites `regs`).
pub fn dispatch(line: u8, regs: &mut hal::idt::UserRegs) {
    let from_user = regs.cs & 3 == 3;
    let entry = hal::tsc::read();
    sched::irq_enter(line, entry);
    if (line == 7 || line == 15) && !hal::pic::in_service(line) {
        SPURIOUS[line as usize].fetch_add(1, Ordering::Relaxed);
        // Only the first spurious interrupt of a line without a handler sets it.
        let _ = SINCE[line as usize].compare_exchange(0, entry, Ordering::Relaxed, Ordering::Relaxed);
        sched::irq_outcome(IntrKind::Spurious);
        if line == 15 {
            hal::pic::end_of_interrupt_master_only();
        }
    } else {
        COUNT[line as usize].fetch_add(1, Ordering::Relaxed);
        let handler = HANDLERS.lock()[line as usize];
        if let Some(h) = handler {
            h();
        }
        hal::pic::end_of_interrupt(line);
    }
    sched::irq_return(line);
    if from_user {
        proc::interrupt_return_to_user(regs);
    }
}

fn timer_tick() {
    TICKS.fetch_add(1, Ordering::Relaxed);
    sched::tick(hal::tsc::read());
}

/// Route the lines and start the tick: PIT channel 0 at `HZ` on its line, and each driver's
/// handler on its device's line. Runs in `kmain` after the drivers are set up and before
/// interrupts are enabled. The clock tick counts as a *hard* interrupt, as Solaris counts
/// its clock (`KSTAT_INTR_HARD`: a device raised it); *watchdog* is for "a periodic timer
/// call", a driver's watchdog routine, which Tally does not have.
pub fn init() {
    sched::set_line_kind(TIMER_LINE, IntrKind::Hard);
    let divisor = hal::pit::start_periodic(HZ);
    register(TIMER_LINE, timer_tick);
    log::info!("PIT: {HZ} Hz tick (divisor {divisor})");
    for &(line, handler) in drivers::INTERRUPT_HANDLERS {
        register(line, handler);
    }
}

/// Timer interrupts since boot.
pub fn ticks() -> u64 {
    TICKS.load(Ordering::Relaxed)
}

/// Interrupts delivered on `line` (spurious ones excluded).
pub fn count(line: u8) -> u64 {
    COUNT[line as usize].load(Ordering::Relaxed)
}

/// Spurious interrupts seen on `line`.
pub fn spurious(line: u8) -> u64 {
    SPURIOUS[line as usize].load(Ordering::Relaxed)
}

/// When each line came into use (TSC; 0 if never): see [`SINCE`].
pub fn since() -> [u64; NR_LINES] {
    core::array::from_fn(|l| SINCE[l].load(Ordering::Relaxed))
}

/// [`count`] and [`spurious`] of every line, read together.
pub fn counters() -> ([u64; NR_LINES], [u64; NR_LINES]) {
    hal::cpu::without_interrupts(|| {
        (
            core::array::from_fn(|l| COUNT[l].load(Ordering::Relaxed)),
            core::array::from_fn(|l| SPURIOUS[l].load(Ordering::Relaxed)),
        )
    })
}
