//! # Device drivers: the protocol half of talking to hardware
//!
//! A driver here is safe code. It knows a device's *protocol* — which command to issue,
//! what to wait for, what a status bit means, how to recover — and leaves every port access
//! to a file under `arch/x86_64/` (`ata.rs` for the disks), which is where the `unsafe`
//! lives. It hears from its device through `crate::irq`: it registers a handler for its
//! IRQ line, and the dispatcher calls it on each interrupt and sends the EOI.
//!
//! Where drivers sit in bring-up: `kmain` calls [`init`] right after `irq::init()` — the
//! PICs are remapped and the tick is set up, so a driver may register its line — and before
//! interrupts are enabled, so a driver's probe runs polled, not interrupt-driven.
//!
//! * `ata.rs` — ATA/IDE disks in PIO mode on QEMU's PIIX controller: IDENTIFY at boot,
//!   interrupt-driven reads and writes, Solaris io-kstat statistics per disk.
//! * `tty.rs` — the console's input: COM1's receive interrupt (IRQ 4) fills a buffer that
//!   `read(0, ...)` drains.

pub mod ata;
pub mod tty;

/// Probe and set up every driver (see the module docs for when this runs).
pub fn init() {
    ata::init();
    tty::init();
}
