//! Interrupt accounting: one [`IrqAccounting`] per CPU.
//!
//! An interrupt steals the CPU from whichever task is running. Without accounting that time
//! silently inflates the victim's system time; here the victim's clock is switched to
//! `INTERRUPTED` for as long as the interrupt lasts, and the time is also charged to the IRQ
//! line that caused it. The kernel's interrupt entry and exit paths call
//!
//! ```text
//!   irq_enter(line, now, current_clock)   ...handler...   irq_exit(line, now, current_clock)
//! ```
//!
//! **Nesting.** A higher-priority interrupt may arrive while a handler runs. Only the
//! *outermost* entry switches the task to `INTERRUPTED` (remembering the state to return to)
//! and only the outermost exit switches it back; inner levels leave the task alone.
//!
//! **Attribution of nested time (the documented choice).** A line is charged *exclusive*
//! handler time: while an inner handler runs, the outer handler's stopwatch is paused and
//! the inner line's runs. So at every instant inside an interrupt exactly one line is being
//! charged, and exactly one task is `INTERRUPTED`, from the same TSC values. Therefore
//!
//! ```text
//!   Σ over all tasks (idle too) clocks[INTERRUPTED]  ==  Σ over all lines handler time
//! ```
//!
//! holds exactly, in TSC ticks, at all times ([`IrqAccounting::total_handler_ticks`] includes
//! handlers still running). A line's min/max/last-start/last-stop describe single invocations
//! of that line, again exclusive of what nested inside them.
//!
//! **Handover.** The handler may decide to reschedule (the timer tick used up the running
//! task's slice; a wake-up made a higher-priority task runnable), and the scheduler may
//! switch tasks before the interrupt has ended. Then the outgoing task's `INTERRUPTED` time
//! ends at the switch, the incoming task is `INTERRUPTED` from that same instant, and the
//! outermost exit returns the *incoming* task to its running state. The scheduler does this
//! by calling [`IrqAccounting::task_off_cpu`] and [`IrqAccounting::task_on_cpu`] with one
//! `now` for every context switch; outside interrupts they are plain state switches.
//!
//! Accounting is a per-CPU interval: an interrupt runs from its `irq_enter` to its
//! `irq_exit` on this CPU, and whichever task is current when it ends is the one given its
//! running state back. With the `accounting` feature off only the nesting depth is kept.

use crate::clock::MsaClock;
use crate::line_stats::{IntrKind, IrqLineStats};
use tally_uapi::msa::MicroState;

/// IRQ lines with their own statistics: the 16 legacy ISA lines of the PIC, plus as many
/// again for I/O APIC pins, the local APIC timer and inter-processor interrupts. Line
/// numbers beyond this are counted together in one "stray" slot (see
/// [`IrqAccounting::stray_stats`]).
pub const NR_IRQ_LINES: usize = 32;

/// Nesting levels tracked individually. Deeper nesting is still counted (so enters and
/// exits stay paired), but its time stays with the deepest tracked level.
pub const MAX_IRQ_NESTING: usize = 8;

/// Index of the stray slot in `lines`.
#[cfg(feature = "accounting")]
const STRAY: usize = NR_IRQ_LINES;

/// One interrupt in progress on this CPU.
#[cfg(feature = "accounting")]
#[derive(Clone, Copy, Debug)]
struct IrqLevel {
    /// Slot in `lines` (the line number, or `STRAY`).
    slot: usize,
    /// What the caller called the line (to check that the exit names the same line).
    line: usize,
    /// When this interrupt was entered.
    entered: u64,
    /// When this handler last (re)started running: at entry, or when a nested one returned.
    resumed: u64,
    /// Handler time before `resumed` (the spans before nested interrupts cut in).
    ran: u64,
    /// The state the interrupted task returns to when this level exits. For the outermost
    /// level it is the task's running state; for inner levels it is `INTERRUPTED` itself.
    resume_state: MicroState,
    /// The kind this interrupt will be counted as.
    kind: IntrKind,
}

#[cfg(feature = "accounting")]
const IDLE_LEVEL: IrqLevel = IrqLevel {
    slot: 0,
    line: 0,
    entered: 0,
    resumed: 0,
    ran: 0,
    resume_state: MicroState::OncpuSys,
    kind: IntrKind::Hard,
};

#[cfg(not(feature = "accounting"))]
static NO_STATS: IrqLineStats = IrqLineStats::new();

/// Per-CPU interrupt accounting (see the module documentation).
#[derive(Clone, Debug)]
pub struct IrqAccounting {
    /// How many interrupts are in progress on this CPU (0 = task context).
    depth: usize,
    /// Exits that did not match an entry (no interrupt in progress, or another line).
    mismatched_exits: u64,
    /// The latest TSC value seen. Every `now` is raised to at least this, so a TSC read that
    /// goes backwards cannot make a line's stopwatch and the task's clock disagree.
    #[cfg(feature = "accounting")]
    latest: u64,
    #[cfg(feature = "accounting")]
    levels: [IrqLevel; MAX_IRQ_NESTING],
    /// `NR_IRQ_LINES` real lines, then the stray slot.
    #[cfg(feature = "accounting")]
    lines: [IrqLineStats; NR_IRQ_LINES + 1],
}

/// The one instant of a context switch, already raised to the latest time seen: made by
/// [`IrqAccounting::task_off_cpu`], taken by [`IrqAccounting::task_on_cpu`], so the two
/// halves cannot use different times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct SwitchInstant(u64);

impl Default for IrqAccounting {
    fn default() -> Self {
        Self::new()
    }
}

impl IrqAccounting {
    /// A CPU with no interrupt in progress and no history.
    pub const fn new() -> Self {
        IrqAccounting {
            depth: 0,
            mismatched_exits: 0,
            #[cfg(feature = "accounting")]
            latest: 0,
            #[cfg(feature = "accounting")]
            levels: [IDLE_LEVEL; MAX_IRQ_NESTING],
            #[cfg(feature = "accounting")]
            lines: [IrqLineStats::new(); NR_IRQ_LINES + 1],
        }
    }

    /// Interrupts currently in progress (nesting depth; 0 in task context).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// True while at least one interrupt is in progress (Linux's `in_interrupt()`).
    pub fn in_irq(&self) -> bool {
        self.depth > 0
    }

    /// Exits that had no matching entry (ignored) or named a different line than the entry
    /// they closed (accounted to the entry's line). Should stay 0.
    pub fn mismatched_exits(&self) -> u64 {
        self.mismatched_exits
    }

    /// Count future interrupts on `line` as `kind` (e.g. [`IntrKind::Watchdog`] for the
    /// timer) unless the handler says otherwise with [`IrqAccounting::set_outcome`].
    #[allow(unused_variables)]
    pub fn set_line_kind(&mut self, line: usize, kind: IntrKind) {
        #[cfg(feature = "accounting")]
        {
            self.lines[Self::slot(line)].default_kind = kind;
        }
    }

    /// The innermost interrupt in progress turned out to be `kind` (typically
    /// [`IntrKind::Spurious`] when no device claimed it, or [`IntrKind::MultSvc`]).
    #[allow(unused_variables)]
    pub fn set_outcome(&mut self, kind: IntrKind) {
        #[cfg(feature = "accounting")]
        if let Some(top) = self.top_mut() {
            top.kind = kind;
        }
    }

    /// An interrupt on `line` starts at `now`, interrupting the task whose clock is
    /// `current`. The outermost entry switches that task to `INTERRUPTED` and remembers
    /// what it was doing; a nested entry pauses the outer handler's stopwatch instead.
    #[allow(unused_variables)]
    pub fn irq_enter(&mut self, line: usize, now: u64, current: &mut MsaClock) {
        #[cfg(feature = "accounting")]
        if self.depth < MAX_IRQ_NESTING {
            // BEGIN LAB 4: outermost entry: the task becomes INTERRUPTED (remember its state); nested: pause the outer stopwatch; push the level
            // STUB: let _ = (line, now, current);
            let now = self.monotonic(now);
            let resume_state = if self.depth == 0 {
                let was = current.state();
                current.switch(now, MicroState::Interrupted);
                was
            } else {
                let outer = &mut self.levels[self.depth - 1];
                outer.ran += now.saturating_sub(outer.resumed);
                MicroState::Interrupted
            };
            let slot = Self::slot(line);
            self.levels[self.depth] = IrqLevel {
                slot,
                line,
                entered: now,
                resumed: now,
                ran: 0,
                resume_state,
                kind: self.lines[slot].default_kind,
            };
            // END LAB 4
        }
        self.depth += 1;
    }

    /// The innermost interrupt (which should be on `line`) ends at `now`; `current` is the
    /// clock of the task that is current *now* — after a handover, the incoming task. The
    /// line is charged the handler's exclusive time and the interrupt is counted; the
    /// outermost exit returns the task to the state it is to resume in.
    ///
    /// An exit with no interrupt in progress is ignored (and counted as mismatched).
    #[allow(unused_variables)]
    pub fn irq_exit(&mut self, line: usize, now: u64, current: &mut MsaClock) {
        if self.depth == 0 {
            self.mismatched_exits += 1;
            return;
        }
        self.depth -= 1;
        #[cfg(feature = "accounting")]
        if self.depth < MAX_IRQ_NESTING {
            // BEGIN LAB 4: charge the line its exclusive handler time, count the interrupt, restart the outer stopwatch or end INTERRUPTED
            // STUB: let _ = (line, now, current);
            let now = self.monotonic(now);
            let level = self.levels[self.depth];
            if level.line != line {
                self.mismatched_exits += 1;
            }
            let handler_time = level.ran + now.saturating_sub(level.resumed);
            let stats = &mut self.lines[level.slot];
            stats.timer.record(level.entered, now, handler_time);
            stats.intrs.counts[level.kind.index()] += 1;
            if self.depth > 0 {
                // The outer handler's stopwatch restarts.
                self.levels[self.depth - 1].resumed = now;
            } else {
                current.switch(now, level.resume_state);
            }
            // END LAB 4
        }
    }

    /// Context switch, outgoing half: the task whose clock is `prev` leaves the CPU at `now`
    /// and goes to `new_state` (a queue, a sleep, `ZOMBIE`). Inside an interrupt this ends
    /// its `INTERRUPTED` time. Returns the instant of the switch (`now`, raised to the latest
    /// time seen) for [`IrqAccounting::task_on_cpu`]: both halves use it, and it is raised
    /// only once.
    #[inline]
    pub fn task_off_cpu(&mut self, now: u64, prev: &mut MsaClock, new_state: MicroState) -> SwitchInstant {
        #[cfg(feature = "accounting")]
        let now = self.monotonic(now);
        prev.switch(now, new_state);
        SwitchInstant(now)
    }

    /// Context switch, incoming half: the task whose clock is `next` gets the CPU at `at`
    /// (what [`IrqAccounting::task_off_cpu`] returned); `running_state` is what it runs in
    /// (`ONCPU_SYS` for a kernel thread). Outside an interrupt it simply starts running.
    /// Inside one it *inherits the interrupt*: it is `INTERRUPTED` from `at` until the
    /// outermost `irq_exit`, which then gives it `running_state`.
    #[inline]
    pub fn task_on_cpu(&mut self, at: SwitchInstant, next: &mut MsaClock, running_state: MicroState) {
        let now = at.0;
        // BEGIN LAB 4: the handover: inside an interrupt the incoming task is INTERRUPTED from `at`, and the outermost exit resumes it in `running_state`
        // STUB: next.switch(now, running_state);
        if self.depth == 0 {
            next.switch(now, running_state);
            return;
        }
        next.switch(now, MicroState::Interrupted);
        #[cfg(feature = "accounting")]
        {
            self.levels[0].resume_state = running_state;
        }
        // END LAB 4
    }

    /// Both halves of a context switch at one `now` (for callers that hold both clocks).
    pub fn context_switch(
        &mut self,
        now: u64,
        prev: &mut MsaClock,
        prev_state: MicroState,
        next: &mut MsaClock,
        next_running_state: MicroState,
    ) {
        let at = self.task_off_cpu(now, prev, prev_state);
        self.task_on_cpu(at, next, next_running_state);
    }

    /// The current task changes the state it runs in (say, it returns to user mode) while an
    /// interrupt is in progress: remember it for the outermost exit. Outside an interrupt
    /// this does nothing (the caller switches the clock directly).
    #[allow(unused_variables)]
    #[inline]
    pub fn set_resume_state(&mut self, running_state: MicroState) {
        // BEGIN LAB 4: inside an interrupt, the outermost exit must resume the task in `running_state`
        // STUB: let _ = running_state;
        #[cfg(feature = "accounting")]
        if self.depth > 0 {
            self.levels[0].resume_state = running_state;
        }
        // END LAB 4
    }

    /// The state the current task returns to when the outermost interrupt ends (`None`
    /// outside interrupts, and always without accounting).
    pub fn resume_state(&self) -> Option<MicroState> {
        #[cfg(feature = "accounting")]
        if self.depth > 0 {
            return Some(self.levels[0].resume_state);
        }
        None
    }

    /// Statistics of `line` (of the stray slot, if `line >= NR_IRQ_LINES`). Completed
    /// interrupts only; all zero without accounting.
    #[allow(unused_variables)]
    pub fn line_stats(&self, line: usize) -> &IrqLineStats {
        #[cfg(feature = "accounting")]
        {
            &self.lines[Self::slot(line)]
        }
        #[cfg(not(feature = "accounting"))]
        {
            &NO_STATS
        }
    }

    /// Statistics of interrupts whose line number was `>= NR_IRQ_LINES`.
    pub fn stray_stats(&self) -> &IrqLineStats {
        self.line_stats(NR_IRQ_LINES)
    }

    /// Handler time charged to `line` up to `now`, including handlers of that line still in
    /// progress (the stray slot for `line >= NR_IRQ_LINES`).
    #[allow(unused_variables)]
    pub fn handler_ticks(&self, line: usize, now: u64) -> u64 {
        #[cfg(feature = "accounting")]
        {
            // BEGIN LAB 4: the line's completed handler time plus its handlers still in progress (only the innermost is running)
            // STUB: let _ = (line, now);
            // STUB: 0
            let slot = Self::slot(line);
            let mut ticks = self.lines[slot].timer.elapsed_time;
            for (i, level) in self.tracked_levels().iter().enumerate() {
                if level.slot == slot {
                    ticks += self.level_ticks(i, now);
                }
            }
            ticks
            // END LAB 4
        }
        #[cfg(not(feature = "accounting"))]
        {
            0
        }
    }

    /// Handler time of all lines up to `now`, in-progress handlers included: by the
    /// accounting identity, the sum of every task's `INTERRUPTED` clock.
    #[allow(unused_variables)]
    pub fn total_handler_ticks(&self, now: u64) -> u64 {
        #[cfg(feature = "accounting")]
        {
            // BEGIN LAB 4: every line's completed handler time plus the handlers in progress: Σ INTERRUPTED over all tasks
            // STUB: let _ = now;
            // STUB: 0
            let done: u64 = self.lines.iter().map(|l| l.timer.elapsed_time).sum();
            let running: u64 = (0..self.tracked_levels().len()).map(|i| self.level_ticks(i, now)).sum();
            done + running
            // END LAB 4
        }
        #[cfg(not(feature = "accounting"))]
        {
            0
        }
    }

    /// `now`, raised to the latest value seen (and remembered).
    #[cfg(feature = "accounting")]
    fn monotonic(&mut self, now: u64) -> u64 {
        self.latest = self.latest.max(now);
        self.latest
    }

    #[cfg(feature = "accounting")]
    fn slot(line: usize) -> usize {
        if line < NR_IRQ_LINES {
            line
        } else {
            STRAY
        }
    }

    #[cfg(feature = "accounting")]
    fn tracked_levels(&self) -> &[IrqLevel] {
        &self.levels[..self.depth.min(MAX_IRQ_NESTING)]
    }

    #[cfg(feature = "accounting")]
    fn top_mut(&mut self) -> Option<&mut IrqLevel> {
        let n = self.depth.min(MAX_IRQ_NESTING);
        if n == 0 {
            None
        } else {
            Some(&mut self.levels[n - 1])
        }
    }

    /// Handler time so far of in-progress level `i`: only the innermost one is running.
    #[cfg(feature = "accounting")]
    fn level_ticks(&self, i: usize, now: u64) -> u64 {
        let levels = self.tracked_levels();
        let level = &levels[i];
        if i + 1 == levels.len() {
            level.ran + now.saturating_sub(level.resumed)
        } else {
            level.ran
        }
    }
}

#[cfg(all(test, feature = "accounting"))]
#[path = "irq_tests.rs"]
mod tests;

#[cfg(all(test, not(feature = "accounting")))]
#[path = "irq_off_tests.rs"]
mod tests_compiled_out;
