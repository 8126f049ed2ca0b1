//! # The Tally kernel — where it all starts
//!
//! The BIOS loads the boot loader's first sector; the `bootloader` crate's stages switch the
//! CPU to 64-bit long mode, load this ELF file, map it (and all of physical memory, at an
//! offset) in the upper half, and jump to [`kmain`] with a [`BootInfo`] describing memory.
//! `kmain` then brings the machine up in dependency order — console, descriptor tables,
//! memory, interrupt controller, clocks — and becomes the idle task. Pid 1 (`init_main`)
//! runs either the self-test named on the command line (`test=NAME`, used by
//! `cargo xtask test`) or the boot demo, and then execs `/bin/init` in place: user space
//! begins in pid 1, and ends with it (its end ends QEMU).
//!
//! Layout of this crate: `arch/` is the only place with `unsafe` and hardware access; every
//! other module here is safe glue over the hardware-independent crates in `kernel/*/`.
#![no_std]
#![no_main]
#![feature(abi_x86_interrupt)]
#![deny(unsafe_op_in_unsafe_fn)]
// The rule, enforced by the compiler: no `unsafe` outside the arch layer.
#![deny(unsafe_code)]

extern crate alloc;

#[macro_use]
mod console;
mod demo;
#[allow(unsafe_code)]
mod arch;
mod bench;
mod bus;
mod cmdline;
mod drivers;
mod file;
mod irq;
mod kstats;
mod mm;
mod panic;
mod report;
mod selftest;
mod syscall;
mod task;
mod time;
mod trap;

use bootloader_api::config::{BootloaderConfig, Mapping};
use bootloader_api::BootInfo;

/// Boot loader settings: map all physical memory (page tables are edited through that
/// window), give the boot stack 128 KiB, and keep the loader's own mappings in the first
/// quarter of the upper half so the kernel can place its heap and stacks above them.
pub static BOOT_CONFIG: BootloaderConfig = {
    let mut config = BootloaderConfig::new_default();
    config.mappings.kernel_base = Mapping::FixedAddress(0xffff_8000_0000_0000);
    config.mappings.physical_memory = Some(Mapping::Dynamic);
    config.mappings.dynamic_range_start = Some(0xffff_8000_0000_0000);
    config.mappings.dynamic_range_end = Some(0xffff_bfff_ffff_ffff);
    config.kernel_stack_size = 128 * 1024;
    config
};

bootloader_api::entry_point!(kmain, config = &BOOT_CONFIG);

fn kmain(boot_info: &'static mut BootInfo) -> ! {
    let entry_tsc = arch::tsc::read();
    arch::serial::init();
    console::init();
    println!("Tally {} — a teaching kernel about where time goes", env!("CARGO_PKG_VERSION"));
    arch::gdt::init();
    arch::idt::init();
    let cpu = arch::usermode::init();
    let ramdisk = arch::bootmem::ramdisk(boot_info.ramdisk_addr.into_option(), boot_info.ramdisk_len);
    mm::init(boot_info);
    arch::address_space::init();
    cmdline::init();
    console::set_level(cmdline::get("loglevel").unwrap_or("info"));
    log::info!("user mode: syscall/sysret on, SMEP {}, SMAP {}", on_off(cpu.smep), on_off(cpu.smap));
    arch::pic::init();
    time::init(entry_tsc);
    bus::init();
    task::init(entry_tsc, init_main);
    task::ramdisk::init(ramdisk);
    irq::init();
    drivers::init();
    kstats::init();
    let ready_us = time::clock().ticks_to_ns(arch::tsc::read() - entry_tsc) / 1000;
    log::info!("ready in {ready_us} us (kernel main to interrupts on, TSC)");
    println!("kernel: ready");
    arch::cpu::enable_interrupts();
    // The boot thread becomes the idle task; init (pid 1) runs what the command line asks.
    task::idle_loop()
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off (CPU lacks it)" }
}

/// Pid 1, the kernel's part: run the benchmark or the self-test the command line names (both
/// end QEMU); otherwise the boot demo (unless `demo=off`), then exec `/bin/init` in place —
/// this very task, pid 1, becomes the user program (as Linux's `kernel_init` ends in
/// `run_init_process`). `/bin/init` starts the program `init=PROGRAM` names (its default:
/// `sh`, the shell on the console), followed by the words after `--` on the command line,
/// adopts and reaps orphans, and exits with the program's status when it ends; pid 1's end
/// ends QEMU with that status (`task::lifecycle`). `init=none`: no user space at all.
fn init_main(_: u64) {
    if let Some(filter) = cmdline::get("bench") {
        bench::run(filter);
    }
    if let Some(name) = cmdline::get("test") {
        selftest::run(name);
    }
    if cmdline::get("demo") != Some("off") {
        if let Err(why) = demo::run() {
            println!("demo: FAILED: {why}");
            arch::qemu::exit(arch::qemu::ExitCode::Failure);
        }
    }
    let program = cmdline::get("init");
    if program == Some("none") {
        // Returning ends pid 1 with status 0, which ends the run.
        return;
    }
    let words: alloc::vec::Vec<&'static str> = program.into_iter().chain(cmdline::init_args()).collect();
    let shown = words.join(" ");
    // The shell ends at the end of its input: say how, when it is the shell that runs.
    let hint = if shown.is_empty() || shown == "sh" { " (end of input, ^D, ends the shell)" } else { "" };
    println!("kernel: pid 1 execs /bin/init{}{shown}{hint}", if shown.is_empty() { "" } else { " " });
    drop(shown);
    let argv = core::iter::once("init").chain(words).map(str::as_bytes).collect();
    // `argv` is handed over: on success nothing of this frame is ever dropped.
    let Err(e) = task::exec_program("/bin/init", argv);
    println!("kernel: cannot exec /bin/init: errno {e}");
    arch::qemu::exit(arch::qemu::ExitCode::Failure);
}
