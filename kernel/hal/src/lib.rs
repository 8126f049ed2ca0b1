//! # tally-hal — everything that touches the machine
//!
//! This crate is Tally's hardware abstraction layer for the PC platform on x86_64, as
//! QEMU's `pc` machine provides it, and the only kernel crate allowed `unsafe`: port I/O,
//! control registers and MSRs, descriptor tables, page tables, the heap's backing memory,
//! the context switch, the `syscall` entry stub and the checked copies to and from user
//! memory. Every `unsafe` block carries a `// SAFETY:` comment saying why it holds, and
//! every `unsafe fn` a `# Safety` section. The kernel binary above it is
//! `#![forbid(unsafe_code)]` and calls only the safe functions exported here, as
//! Asterinas's kernel does with its OSTD ("framekernel"). See `docs/architecture.md`.
//!
//! **The HAL never calls up.** What the kernel decides — what an exception means, what an
//! IRQ line runs, what a system call does, where physical frames come from — it hands down
//! at start-up: [`idt::init`] takes the trap and interrupt handlers, [`usermode::init`] the
//! system-call handlers, [`frames::install`] the frame allocator. The HAL knows nothing of
//! tasks, processes or accounting.
//!
//! Bring-up order (`kernel/src/main.rs`, `docs/boot-and-interrupts.md`):
//! serial → GDT/TSS → IDT → user mode (SMEP/SMAP, `syscall`) → paging + frames → heap →
//! PIC → TSC calibration (PIT channel 2) → PIT channel 0 ticking → interrupts on.
//!
//! User mode (ring 3) is `usermode` (CPU features, the first jump to ring 3),
//! `syscall_entry`, `address_space` and `uaccess`, with hooks into `gdt` (TSS `rsp0`),
//! `idt` and `context` (CR3 at each switch). The self-tests' ring-3 machine code lives with
//! the self-tests; [`user_program!`] embeds it.
#![no_std]
#![feature(abi_x86_interrupt)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

extern crate alloc;

pub mod address_space;
pub mod ata;
pub mod bootmem;
pub mod context;
pub mod cpu;
mod embed;
pub mod fpu;
pub mod frames;
pub mod fw_cfg;
pub mod gdt;
pub mod heap;
pub mod idt;
pub mod paging;
pub mod pic;
pub mod pit;
pub mod qemu;
pub mod regs;
pub mod rtc;
pub mod serial;
pub mod shared_page;
pub mod syscall_entry;
pub mod testing;
pub mod tsc;
pub mod uaccess;
pub mod usermode;

use bootloader_api::config::{BootloaderConfig, Mapping};

/// Boot loader settings, for the kernel's `bootloader_api::entry_point!`: map all physical
/// memory (page tables are edited through that window), give the boot stack 128 KiB, and
/// keep the loader's own mappings in the first quarter of the upper half so the kernel can
/// place its heap ([`heap::HEAP_START`]) and thread stacks (`context`) above them.
pub static BOOT_CONFIG: BootloaderConfig = {
    let mut config = BootloaderConfig::new_default();
    config.mappings.kernel_base = Mapping::FixedAddress(KERNEL_BASE);
    config.mappings.physical_memory = Some(Mapping::Dynamic);
    config.mappings.dynamic_range_start = Some(0xffff_8000_0000_0000);
    config.mappings.dynamic_range_end = Some(0xffff_bfff_ffff_ffff);
    config.kernel_stack_size = 128 * 1024;
    config
};

/// Where the boot loader places the kernel image (`cargo xtask run --gdb` needs it too).
pub const KERNEL_BASE: u64 = 0xffff_8000_0000_0000;
