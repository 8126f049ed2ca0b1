//! Building the kernel and the BIOS disk image.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::BuildOpts;

/// Where the boot loader places the kernel (fixed in `kernel/src/main.rs`), needed to give
/// gdb the symbols at the right addresses.
pub const KERNEL_BASE: u64 = 0xffff_8000_0000_0000;
const KERNEL_TARGET: &str = "x86_64-unknown-none";

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

/// Cargo's target directory (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(root());
    c
}

fn profile_dir(opts: &BuildOpts) -> &'static str {
    if opts.release { "release" } else { "debug" }
}

/// The kernels of different feature sets are built into separate target directories, so
/// that building one does not overwrite (and force a rebuild of) the other.
fn kernel_target_dir(opts: &BuildOpts) -> PathBuf {
    if opts.no_accounting { target_dir().join("no-accounting") } else { target_dir() }
}

pub fn kernel_elf(opts: &BuildOpts) -> PathBuf {
    kernel_target_dir(opts).join(KERNEL_TARGET).join(profile_dir(opts)).join("tally-kernel")
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("cannot start cargo for {what}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("building {what} failed")) }
}

/// Build the kernel ELF for `x86_64-unknown-none`.
pub fn kernel(opts: &BuildOpts) -> Result<PathBuf, String> {
    let mut cmd = cargo();
    cmd.args(["build", "--quiet", "--package", "tally-kernel", "--target", KERNEL_TARGET]);
    cmd.arg("--target-dir").arg(kernel_target_dir(opts));
    if opts.release {
        cmd.arg("--release");
    }
    if opts.no_accounting {
        cmd.args(["--no-default-features"]);
    }
    match opts.hz {
        Some(hz) => cmd.env("TALLY_HZ", hz.to_string()),
        None => cmd.env_remove("TALLY_HZ"),
    };
    run(&mut cmd, "the kernel")?;
    Ok(kernel_elf(opts))
}

/// Build the user programs (the ramdisk's contents arrive with user mode).
pub fn userland(opts: &BuildOpts) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["build", "--quiet", "--package", "tally-userland", "--target", KERNEL_TARGET]);
    if opts.release {
        cmd.arg("--release");
    }
    run(&mut cmd, "userland")
}

/// Build everything and pack the BIOS disk image; returns its path.
pub fn image(opts: &BuildOpts) -> Result<PathBuf, String> {
    userland(opts)?;
    let kernel = kernel(opts)?;
    let out_dir = target_dir().join("tally");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let variant = if opts.no_accounting { "-noacct" } else { "" };
    let image = out_dir.join(format!("tally-{}-{}hz{variant}.img", profile_dir(opts), opts.hz.unwrap_or(1000)));
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--package", "tally-boot", "--"]).arg(&kernel).arg(&image);
    run(&mut cmd, "the boot image")?;
    Ok(image)
}
