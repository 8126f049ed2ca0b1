//! The PC platform on x86_64, as QEMU's `pc` machine provides it.
//!
//! Bring-up order (see `kernel/src/main.rs` and `docs/boot-and-interrupts.md`):
//! serial → GDT/TSS → IDT → paging + frames → heap → PIC → TSC calibration (PIT channel 2)
//! → PIT channel 0 ticking → interrupts on.

pub mod ata;
pub mod context;
pub mod cpu;
pub mod fw_cfg;
pub mod gdt;
pub mod heap;
pub mod idt;
pub mod paging;
pub mod pic;
pub mod pit;
pub mod qemu;
pub mod rtc;
pub mod selftest;
pub mod serial;
pub mod tsc;
