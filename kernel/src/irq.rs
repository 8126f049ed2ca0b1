//! Hardware interrupt dispatch: from an IRQ line's IDT stub to its handler and the EOI.
//!
//! `arch::idt` sends every legacy IRQ (lines 0–15) here. Lines 7 and 15 are where the 8259
//! reports *spurious* interrupts, so before anything else the PIC's in-service register is
//! checked: a spurious interrupt is counted and gets no EOI (a spurious 15 gets the master's
//! EOI only). A real one is counted, its handler runs, and the EOI is sent.
//!
//! Counters are per line and readable at any time, accounting or not (like Linux's
//! `/proc/interrupts`). With the `accounting` feature, every interrupt — spurious ones too,
//! they also steal time — is additionally timed by `tally_msa::IrqAccounting`: the
//! interrupted task's clock switches to INTERRUPTED at entry and back at exit, and the same
//! two TSC reads time the line (count, total, min, max, last start/stop; counts by kind).
//! Because both sides use the same timestamps, the sum of INTERRUPTED over all tasks equals
//! the sum of handler time over all lines, to the tick.

use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;
use tally_msa::{IntrKind, IrqAccounting, IrqLineStats, MicroState, MsaClock, MsaTimes};

use crate::arch;

pub const NR_LINES: usize = 16;
pub const TIMER_LINE: u8 = 0;

/// Tick rate of the PIT, fixed at build time (`TALLY_HZ`, default 1000).
pub const HZ: u32 = parse_hz(option_env!("TALLY_HZ"));

const fn parse_hz(s: Option<&str>) -> u32 {
    let Some(s) = s else { return 1000 };
    let b = s.as_bytes();
    let mut v = 0u32;
    let mut i = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "TALLY_HZ must be a number");
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    assert!(v >= 19 && v <= 10_000, "TALLY_HZ must be within 19..=10000");
    v
}

type Handler = fn();

static HANDLERS: Mutex<[Option<Handler>; NR_LINES]> = Mutex::new([None; NR_LINES]);
static COUNT: [AtomicU64; NR_LINES] = [const { AtomicU64::new(0) }; NR_LINES];
static SPURIOUS: [AtomicU64; NR_LINES] = [const { AtomicU64::new(0) }; NR_LINES];
static TICKS: AtomicU64 = AtomicU64::new(0);

/// Interrupt accounting for the CPU, and the clock of the task the interrupts steal from.
/// Until tasks arrive, that is the boot thread, running in ONCPU_SYS since kernel entry.
struct Accounting {
    irq: IrqAccounting,
    current: MsaClock,
}

static ACCOUNTING: Mutex<Option<Accounting>> = Mutex::new(None);

/// Install `handler` for `line` and unmask the line.
pub fn register(line: u8, handler: Handler) {
    arch::cpu::without_interrupts(|| HANDLERS.lock()[line as usize] = Some(handler));
    arch::pic::unmask(line);
}

/// Called by the IDT stub of `line`, with interrupts disabled.
pub fn dispatch(line: u8) {
    account(|a| a.irq.irq_enter(line as usize, arch::tsc::read(), &mut a.current));
    if (line == 7 || line == 15) && !arch::pic::in_service(line) {
        SPURIOUS[line as usize].fetch_add(1, Ordering::Relaxed);
        account(|a| a.irq.set_outcome(IntrKind::Spurious));
        if line == 15 {
            arch::pic::end_of_interrupt_master_only();
        }
    } else {
        COUNT[line as usize].fetch_add(1, Ordering::Relaxed);
        let handler = HANDLERS.lock()[line as usize];
        if let Some(h) = handler {
            h();
        }
        arch::pic::end_of_interrupt(line);
    }
    account(|a| a.irq.irq_exit(line as usize, arch::tsc::read(), &mut a.current));
}

fn account(f: impl FnOnce(&mut Accounting)) {
    if let Some(a) = ACCOUNTING.lock().as_mut() {
        f(a);
    }
}

fn timer_tick() {
    TICKS.fetch_add(1, Ordering::Relaxed);
}

/// Start interrupt accounting (the boot thread's clock starts at kernel entry) and the tick:
/// PIT channel 0 at [`HZ`] on line 0.
pub fn init(entry_tsc: u64) {
    let mut irq = IrqAccounting::new();
    irq.set_line_kind(TIMER_LINE as usize, IntrKind::Watchdog);
    *ACCOUNTING.lock() = Some(Accounting { irq, current: MsaClock::new(entry_tsc, MicroState::OncpuSys) });
    let divisor = arch::pit::start_periodic(HZ);
    register(TIMER_LINE, timer_tick);
    log::info!("PIT: {HZ} Hz tick (divisor {divisor})");
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

/// A consistent picture of interrupt accounting at one instant.
pub struct AccountingSnapshot {
    pub now: u64,
    /// The boot thread's microstate clocks (including the current state up to `now`).
    pub current: MsaTimes,
    pub current_created: u64,
    /// Sum of all lines' handler time up to `now`.
    pub total_handler_ticks: u64,
    pub lines: [IrqLineStats; NR_LINES],
    /// [`count`] and [`spurious`] of every line, read at the same instant.
    pub counts: [u64; NR_LINES],
    pub spurious: [u64; NR_LINES],
}

pub fn accounting_snapshot() -> Option<AccountingSnapshot> {
    arch::cpu::without_interrupts(|| {
        let guard = ACCOUNTING.lock();
        let a = guard.as_ref()?;
        let now = arch::tsc::read();
        Some(AccountingSnapshot {
            now,
            current: a.current.snapshot(now),
            current_created: a.current.created(),
            total_handler_ticks: a.irq.total_handler_ticks(now),
            lines: core::array::from_fn(|l| *a.irq.line_stats(l)),
            counts: core::array::from_fn(|l| COUNT[l].load(Ordering::Relaxed)),
            spurious: core::array::from_fn(|l| SPURIOUS[l].load(Ordering::Relaxed)),
        })
    })
}
