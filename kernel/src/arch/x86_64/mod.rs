//! The PC platform on x86_64, as QEMU's `pc` machine provides it.
//!
//! Bring-up order (see `kernel/src/main.rs` and `docs/boot-and-interrupts.md`):
//! serial → GDT/TSS → IDT → paging + frames → heap → PIC → TSC calibration (PIT channel 2)
//! → PIT channel 0 ticking → interrupts on.
//!
//! User mode (ring 3) adds `usermode` (CPU features, the first jump to ring 3),
//! `syscall_entry`, `address_space`, `uaccess` and `user_programs` (the self-tests' machine
//! code), and hooks into `gdt` (TSS `rsp0`), `idt` and `context` (CR3 at each switch).

pub mod address_space;
pub mod ata;
pub mod bootmem;
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
pub mod syscall_entry;
pub mod tsc;
pub mod uaccess;
pub mod user_programs;
pub mod usermode;
