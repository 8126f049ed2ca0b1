//! # The Tally kernel — where it all starts
//!
//! The BIOS loads the boot loader's first sector; the `bootloader` crate's stages switch the
//! CPU to 64-bit long mode, load this ELF file, map it (and all of physical memory, at an
//! offset) in the upper half, and jump to [`kmain`] with a [`BootInfo`] describing memory.
//! `kmain` then brings the machine up in dependency order — console, descriptor tables,
//! memory, interrupt controller, clocks — and runs either the self-test named on the
//! command line (`test=NAME`, used by `cargo xtask test`) or the boot demo.
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

/// Pid 1: run the benchmark or the self-test the command line names; otherwise the boot
/// demo (unless `demo=off`), then the user program `init=PROGRAM` names (default `sh`, the shell on the console;
/// `init=none` for none), adopting and reaping orphans until it ends, and end QEMU with its
/// exit code.
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
    let program = cmdline::get("init").unwrap_or("sh");
    if program == "none" {
        arch::qemu::exit(arch::qemu::ExitCode::Success);
    }
    let path = alloc::format!("/bin/{program}");
    println!("kernel: starting {path} (end of input, ^D, ends it)");
    let pid = match task::spawn_program(&path, &[program.as_bytes()]) {
        Ok(pid) => pid,
        Err(e) => {
            println!("kernel: cannot start {path}: errno {e}");
            arch::qemu::exit(arch::qemu::ExitCode::Failure);
        }
    };
    // Reap whatever ends (orphans are re-parented to init) until the program itself does.
    loop {
        match task::wait(None) {
            Ok(r) if r.pid == pid => {
                let status = r.status.raw();
                let code = if tally_task::wifexited(status) {
                    tally_task::wexitstatus(status) as u8
                } else {
                    128 + tally_task::wtermsig(status) as u8
                };
                println!("kernel: {path} ended with status {code}");
                arch::qemu::exit_with_code(code);
            }
            Ok(_) => {}
            Err(e) => {
                println!("kernel: init's wait failed: errno {e}");
                arch::qemu::exit(arch::qemu::ExitCode::Failure);
            }
        }
    }
}
