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

/// `llvm-objcopy` from the pinned toolchain's `llvm-tools-preview` component.
fn objcopy() -> Result<PathBuf, String> {
    let out = Command::new("rustc")
        .current_dir(root())
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let path = sysroot.join("lib/rustlib/x86_64-unknown-linux-gnu/bin/llvm-objcopy");
    if path.exists() {
        Ok(path)
    } else {
        Err(format!("{} not found: is llvm-tools-preview installed (rustup toolchain install)?", path.display()))
    }
}

/// A copy of the kernel without debug information, for the boot image: the boot loader reads
/// the whole file through BIOS disk calls, and the debug kernel's DWARF is most of its size.
/// The full ELF stays where cargo put it, for gdb.
fn stripped(kernel: &Path, out: &Path) -> Result<(), String> {
    let status = Command::new(objcopy()?)
        .arg("--strip-debug")
        .arg(kernel)
        .arg(out)
        .status()
        .map_err(|e| format!("cannot run llvm-objcopy: {e}"))?;
    if status.success() { Ok(()) } else { Err("llvm-objcopy --strip-debug failed".into()) }
}

/// Build everything and pack the BIOS disk image; returns its path.
pub fn image(opts: &BuildOpts) -> Result<PathBuf, String> {
    userland(opts)?;
    let kernel = kernel(opts)?;
    let out_dir = target_dir().join("tally");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let variant = if opts.no_accounting { "-noacct" } else { "" };
    let image = out_dir.join(format!("tally-{}-{}hz{variant}.img", profile_dir(opts), opts.hz.unwrap_or(1000)));
    // Written under a temporary name and renamed into place, so that a QEMU booting the
    // previous image (another `cargo xtask` running) never reads a half-written one.
    let tmp = |p: &Path| p.with_extension(format!("tmp{}", std::process::id()));
    let packed = image.with_extension("elf");
    stripped(&kernel, &tmp(&packed))?;
    std::fs::rename(tmp(&packed), &packed).map_err(|e| format!("cannot rename {}: {e}", packed.display()))?;
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--package", "tally-boot", "--"]).arg(&packed).arg(tmp(&image));
    run(&mut cmd, "the boot image")?;
    std::fs::rename(tmp(&image), &image).map_err(|e| format!("cannot rename {}: {e}", image.display()))?;
    data_disk()?;
    Ok(image)
}

// --- The data disk (ATA driver tests) -------------------------------------------------

/// Size of the data disk: 4 MiB, 8192 sectors.
const DATA_DISK_BYTES: u64 = 4 << 20;
const SECTOR: usize = 512;

/// Where the data disk lives; `qemu.rs` attaches it as the primary slave (`ata1`).
pub fn data_disk_path() -> PathBuf {
    target_dir().join("tally").join("data.img")
}

/// Sector `lba` of the data disk: `TALLY-SECTOR-<lba>\n`, then byte `i` is
/// `(7 * lba + i) % 251`. The kernel's `selftest/disk.rs` (`expected`) computes the same
/// bytes to check what it reads; keep the two in step.
pub fn data_disk_sector(lba: u64) -> [u8; SECTOR] {
    let mut s = [0u8; SECTOR];
    for (i, b) in s.iter_mut().enumerate() {
        *b = ((lba * 7 + i as u64) % 251) as u8;
    }
    let header = format!("TALLY-SECTOR-{lba}\n");
    s[..header.len()].copy_from_slice(header.as_bytes());
    s
}

/// Create the data disk if it is missing or not what [`data_disk_sector`] describes
/// (wrong size, or sector 0 differs). QEMU opens it with `snapshot=on`, so runs never
/// change it and several can share it. Written to a temporary file and renamed, so a
/// QEMU never sees half an image.
pub fn data_disk() -> Result<PathBuf, String> {
    let path = data_disk_path();
    let current = std::fs::read(&path).ok();
    if current.as_deref().is_some_and(|b| b.len() as u64 == DATA_DISK_BYTES && b[..SECTOR] == data_disk_sector(0)) {
        return Ok(path);
    }
    let bytes: Vec<u8> = (0..DATA_DISK_BYTES / SECTOR as u64).flat_map(data_disk_sector).collect();
    let tmp = path.with_extension("img.tmp");
    std::fs::write(&tmp, &bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    Ok(path)
}
