//! `tally-boot KERNEL OUT [RAMDISK]` — wraps the kernel ELF (and, optionally, a ramdisk
//! holding the user programs) into a BIOS disk image with the `bootloader` crate.
//!
//! The ramdisk is any file: the boot loader copies it into memory and hands the kernel its
//! address and length (`boot_info.ramdisk_addr`, `ramdisk_len`). `cargo xtask` passes
//! `target/tally/ramdisk-<profile>.cpio`, a cpio "newc" archive of `bin/<program>` (and the
//! self-tests' fixtures, `test/<name>`) that the kernel reads with `tally_loader::cpio`
//! (format: `kernel/libs/loader/src/cpio.rs`).
//!
//! This is a separate host program rather than part of `xtask` because building the
//! `bootloader` crate compiles its real-mode boot stages (minutes the first time); keeping it
//! here lets `cargo xtask --help` and the host unit tests stay fast.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let (kernel, out, ramdisk) = match args.as_slice() {
        [k, o] => (k, o, None),
        [k, o, r] => (k, o, Some(r)),
        _ => {
            eprintln!("usage: tally-boot KERNEL OUT [RAMDISK]");
            return ExitCode::from(2);
        }
    };
    // The boot loader's own log (stages 2-4, ELF loading) is kept to warnings: the kernel's
    // console starts clean. docs/boot-and-interrupts.md walks through those stages instead.
    let mut config = bootloader::BootConfig::default();
    config.log_level = bootloader_boot_config::LevelFilter::Warn;
    config.frame_buffer_logging = false;
    let mut image = bootloader::BiosBoot::new(kernel);
    image.set_boot_config(&config);
    if let Some(ramdisk) = ramdisk {
        image.set_ramdisk(ramdisk);
    }
    match image.create_disk_image(out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tally-boot: cannot create {}: {e:#}", out.display());
            ExitCode::FAILURE
        }
    }
}
