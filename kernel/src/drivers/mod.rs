//! # Device drivers: the protocol half of talking to hardware
//!
//! A driver here is safe code. It knows a device's *protocol* — which command to issue,
//! what to wait for, what a status bit means, how to recover — and leaves every port access
//! to the HAL (`hal::ata` for the disks, `hal::serial` for the console), which is where the
//! `unsafe` lives. It hears from its device through an interrupt handler: each driver names
//! its handler and its device's IRQ line in [`INTERRUPT_HANDLERS`], the `irq` layer installs
//! them at boot, and its dispatcher calls the handler on each interrupt and sends the EOI.
//!
//! Where drivers sit in bring-up: `kmain` calls [`init`] once the PICs are remapped and
//! before the lines are routed and interrupts enabled, so a driver's probe runs polled, not
//! interrupt-driven.
//!
//! * `ata.rs` — ATA/IDE disks in PIO mode on QEMU's PIIX controller (both channels, IRQ 14
//!   and 15): IDENTIFY at boot,
//!   interrupt-driven reads and writes, Solaris io-kstat statistics per disk.
//! * `tty.rs` — the console's input: COM1's receive interrupt (IRQ 4) fills a buffer that
//!   `read(0, ...)` drains.
//!
//! The disk driver is explained in `docs/disk.md`; where drivers sit, `docs/architecture.md`.

pub mod ata;
pub mod tty;

/// Each driver's interrupt handler and the IRQ line it serves (installed by `irq::init`).
pub const INTERRUPT_HANDLERS: &[(u8, fn())] = &[
    (ata::IRQ_LINE, ata::on_interrupt),
    (ata::SECONDARY_IRQ_LINE, ata::on_secondary_interrupt),
    (tty::IRQ_LINE, tty::on_interrupt),
];

/// Probe and set up every driver (see the module docs for when this runs).
pub fn init() {
    ata::init();
    tty::init();
}
