//! Building the kernel and the BIOS disk image.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::BuildOpts;

/// Where the boot loader places the kernel (`hal::KERNEL_BASE`, `kernel/hal/src/lib.rs`), needed to give
/// gdb the symbols at the right addresses.
pub const KERNEL_BASE: u64 = 0xffff_8000_0000_0000;
const KERNEL_TARGET: &str = "x86_64-unknown-none";
/// The boot image packer to run instead of `cargo run -p tally-boot` (`lab::grade`).
pub const BOOT_TOOL_ENV: &str = "TALLY_BOOT_TOOL";

/// The workspace root. `cargo run` (hence `cargo xtask`) sets `CARGO_MANIFEST_DIR` at run
/// time, which is preferred over the path compiled in: a binary built for one checkout and
/// reused from a shared target directory must not build another checkout's tree.
pub fn root() -> PathBuf {
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir.parent().expect("xtask lives in the workspace").to_path_buf()
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
    if opts.release {
        "release"
    } else {
        "debug"
    }
}

/// The kernels of different feature sets are built into separate target directories, so
/// that building one does not overwrite (and force a rebuild of) the other.
fn kernel_target_dir(opts: &BuildOpts) -> PathBuf {
    if opts.no_accounting {
        target_dir().join("no-accounting")
    } else {
        target_dir()
    }
}

pub fn kernel_elf(opts: &BuildOpts) -> PathBuf {
    kernel_target_dir(opts).join(KERNEL_TARGET).join(profile_dir(opts)).join("tally-kernel")
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("cannot start cargo for {what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("building {what} failed"))
    }
}

/// The tick rates the kernel accepts (`--hz`): `parse_hz` in `kernel/src/base/config.rs`
/// refuses others at compile time — the PIT's 16-bit divisor of 1,193,182 Hz cannot go below
/// 19 Hz, and above 10 kHz the tick would eat the CPU under TCG. Checked here first, so a bad
/// `--hz` is one line rather than a wall of const-evaluation errors.
pub const HZ_RANGE: std::ops::RangeInclusive<u32> = 19..=10_000;

/// Build the kernel ELF for `x86_64-unknown-none`.
pub fn kernel(opts: &BuildOpts) -> Result<PathBuf, String> {
    if let Some(hz) = opts.hz.filter(|hz| !HZ_RANGE.contains(hz)) {
        return Err(format!(
            "--hz {hz}: the tick rate must be within {}..={} Hz (kernel/src/base/config.rs)",
            HZ_RANGE.start(),
            HZ_RANGE.end()
        ));
    }
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

/// A copy of the kernel without debug information or symbol table, for the boot image: the
/// boot loader reads the whole file through BIOS disk calls (about 2 MB a second under TCG
/// here: each megabyte is half a second of every boot), and the debug kernel's DWARF and
/// symbols are most of its size. The full ELF stays where cargo put it, for gdb and for
/// `cargo xtask profile`'s symbols.
fn stripped(kernel: &Path, out: &Path) -> Result<(), String> {
    let status = Command::new(objcopy()?)
        .arg("--strip-all")
        .arg(kernel)
        .arg(out)
        .status()
        .map_err(|e| format!("cannot run llvm-objcopy: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err("llvm-objcopy --strip-all failed".into())
    }
}

/// Build everything and pack the BIOS disk image; returns its path.
pub fn image(opts: &BuildOpts) -> Result<PathBuf, String> {
    image_with(opts, &[])
}

/// [`image`] with programs of the host added to the ramdisk (`run --add`, `cprogs.rs`):
/// written as `…-added.img`, beside the plain image the scenarios boot.
pub fn image_with(opts: &BuildOpts, added: &[crate::cprogs::Added]) -> Result<PathBuf, String> {
    let ramdisk = ramdisk(opts, added)?;
    let kernel = kernel(opts)?;
    let out_dir = target_dir().join("tally");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let variant = if opts.no_accounting { "-noacct" } else { "" };
    let extra = if added.is_empty() { "" } else { "-added" };
    let image = out_dir.join(format!("tally-{}-{}hz{variant}{extra}.img", profile_dir(opts), opts.hz.unwrap_or(1000)));
    // Written under a temporary name and renamed into place, so that a QEMU booting the
    // previous image (another `cargo xtask` running) never reads a half-written one.
    let tmp = |p: &Path| p.with_extension(format!("tmp{}", std::process::id()));
    let packed = image.with_extension("elf");
    stripped(&kernel, &tmp(&packed))?;
    std::fs::rename(tmp(&packed), &packed).map_err(|e| format!("cannot rename {}: {e}", packed.display()))?;
    // A lab's scratch tree is handed the reference's packer (the same source: boot/ is one
    // of the graders' files), so that it need not build the boot loader's stages again.
    let mut cmd = match std::env::var_os(BOOT_TOOL_ENV) {
        Some(tool) => Command::new(tool),
        None => {
            let mut c = cargo();
            c.args(["run", "--quiet", "--package", "tally-boot", "--"]);
            c
        }
    };
    cmd.arg(&packed).arg(tmp(&image)).arg(&ramdisk);
    run(&mut cmd, "the boot image")?;
    std::fs::rename(tmp(&image), &image).map_err(|e| format!("cannot rename {}: {e}", image.display()))?;
    data_disk()?;
    Ok(image)
}

// --- The user programs and the ramdisk ------------------------------------------------

/// Build the user programs (`userland/src/bin/*.rs`, crate `tally-userland`) for
/// `x86_64-unknown-none`; returns each program's name and ELF file, sorted by name.
pub fn userland(opts: &BuildOpts) -> Result<Vec<(String, PathBuf)>, String> {
    #[derive(serde::Deserialize)]
    struct Artifact {
        reason: String,
        #[serde(default)]
        target: Option<ArtifactTarget>,
        #[serde(default)]
        executable: Option<PathBuf>,
    }
    #[derive(serde::Deserialize)]
    struct ArtifactTarget {
        name: String,
    }
    let mut cmd = cargo();
    cmd.args(["build", "--quiet", "--package", "tally-userland", "--bins", "--target", KERNEL_TARGET]);
    cmd.arg("--message-format=json-render-diagnostics").stderr(std::process::Stdio::inherit());
    if opts.release {
        cmd.arg("--release");
    }
    let out = cmd.output().map_err(|e| format!("cannot start cargo for userland: {e}"))?;
    if !out.status.success() {
        return Err("building userland failed".into());
    }
    let mut programs: Vec<(String, PathBuf)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Artifact>(l).ok())
        .filter(|a| a.reason == "compiler-artifact")
        .filter_map(|a| Some((a.target?.name, a.executable?)))
        .collect();
    programs.sort();
    programs.dedup();
    if programs.is_empty() {
        return Err("building userland produced no programs".into());
    }
    Ok(programs)
}

/// Where the ramdisk of a profile is written (`-added` with programs added by `run --add`).
pub fn ramdisk_path(opts: &BuildOpts, added: bool) -> PathBuf {
    let extra = if added { "-added" } else { "" };
    target_dir().join("tally").join(format!("ramdisk-{}{extra}.cpio", profile_dir(opts)))
}

/// Cargo names of the kernel self-tests' fixtures start with this (`test-threads`).
const FIXTURE_PREFIX: &str = "test-";

/// Where a program goes in the ramdisk, by one rule: a fixture of the kernel's self-tests
/// (Cargo name `test-NAME`, source in `userland/src/test/`) is `test/NAME`
/// (`tally_uapi::fixture::FIXTURE_DIR`), out of the shell's `/bin`; any other program is
/// `bin/NAME`.
pub fn ramdisk_name(program: &str) -> String {
    match program.strip_prefix(FIXTURE_PREFIX) {
        Some(name) => format!("{}/{name}", tally_uapi::fixture::FIXTURE_DIR),
        None => format!("bin/{program}"),
    }
}

/// Build the user programs and pack them into the ramdisk: a cpio "newc" archive (what
/// `tally_loader::cpio` reads in the kernel; `cpio -itv < FILE` lists it) holding `bin/` and
/// `test/`, and every program at its [`ramdisk_name`] (`bin/<name>`, or `test/<name>` for
/// the self-tests' fixtures), mode 0755, without debug information (the boot loader reads
/// the ramdisk through BIOS disk calls; the full ELFs stay in `target/` for gdb; the stripped
/// copies in `target/tally/bin-<profile>/` under their Cargo names). Each program is first
/// checked with the kernel's own loader rules (`tally_loader::elf::plan`), so a program the
/// kernel would refuse fails the build instead of the boot. Then the tree's C programs
/// (`userland/c/*.c`, built by `cprogs.rs`) as `bin/<name>`, and the host files `added` by
/// `run --add` as `bin/<NAME>`: a name already taken fails the build (`cprogs.rs` says why);
/// a C or added program the loader refuses is only warned about — the loader of Linux
/// executables grows with issue #17, and an added file may be refused on purpose.
pub fn ramdisk(opts: &BuildOpts, added: &[crate::cprogs::Added]) -> Result<PathBuf, String> {
    let mut programs = userland(opts)?;
    programs.sort_by_key(|(name, _)| ramdisk_name(name));
    let dir = target_dir().join("tally").join(format!("bin-{}", profile_dir(opts)));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut archive = tally_loader::cpio::Builder::new();
    archive.dir("bin").map_err(|e| e.to_string())?;
    archive.dir(tally_uapi::fixture::FIXTURE_DIR).map_err(|e| e.to_string())?;
    let mut taken = std::collections::BTreeMap::new();
    for (name, elf) in &programs {
        let bytes = stripped_copy(elf, &dir.join(name))?;
        tally_loader::elf::plan(&bytes, &tally_loader::elf::Limits::default())
            .map_err(|e| format!("user program {name} ({}) would not load: {e}", elf.display()))?;
        archive.file(&ramdisk_name(name), &bytes, 0o755).map_err(|e| format!("{name}: {e}"))?;
        taken.insert(ramdisk_name(name), format!("the Rust program userland/src/bin/{name}.rs"));
    }
    let c_dir = target_dir().join("tally").join(format!("c-{}", profile_dir(opts)));
    std::fs::create_dir_all(&c_dir).map_err(|e| format!("cannot create {}: {e}", c_dir.display()))?;
    let mut others: Vec<(String, PathBuf, String)> = crate::cprogs::build_c_programs()?
        .into_iter()
        .map(|(name, exe)| {
            let what = format!("the C program {}/{name}.c", crate::cprogs::C_DIR);
            (name, exe, what)
        })
        .collect();
    others.extend(added.iter().map(|a| (a.name.clone(), a.file.clone(), format!("--add {}", a.file.display()))));
    for (name, file, what) in &others {
        let at = format!("bin/{name}");
        if let Some(before) = taken.get(&at) {
            return Err(format!("/{at}: {what} cannot take the name of {before}; choose another name"));
        }
        let raw = std::fs::read(file).map_err(|e| format!("{what}: cannot read {}: {e}", file.display()))?;
        let bytes = if crate::cprogs::is_elf(&raw) { stripped_copy(file, &c_dir.join(name))? } else { raw };
        if let Err(e) = tally_loader::elf::plan(&bytes, &tally_loader::elf::Limits::default()) {
            eprintln!("xtask: warning: /{at} ({what}): Tally's loader refuses it: {e}");
        }
        archive.file(&at, &bytes, 0o755).map_err(|e| format!("{name}: {e}"))?;
        taken.insert(at, what.clone());
    }
    let bytes = archive.finish();
    let path = ramdisk_path(opts, !added.is_empty());
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    Ok(path)
}

/// `elf` without debug information or symbols, written to `small` (through a temporary name,
/// so a concurrent xtask never reads half a file); returns its bytes.
fn stripped_copy(elf: &Path, small: &Path) -> Result<Vec<u8>, String> {
    let tmp = small.with_extension(format!("tmp{}", std::process::id()));
    stripped(elf, &tmp)?;
    let bytes = std::fs::read(&tmp).map_err(|e| format!("cannot read {}: {e}", tmp.display()));
    std::fs::rename(&tmp, small).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))?;
    bytes
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

#[cfg(test)]
mod tests {
    /// xtask's range is the kernel's: the bounds of `parse_hz`'s assertion.
    #[test]
    fn hz_range_is_the_kernels() {
        let config = std::fs::read_to_string(super::root().join("kernel/src/base/config.rs")).unwrap();
        let bound = |op: &str| -> u32 {
            let at = config.find(&format!("assert!(v {op} ")).or_else(|| config.find(&format!("&& v {op} ")));
            let rest = &config[at.expect(op)..];
            let digits: String = rest[rest.find(op).unwrap() + op.len()..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '_')
                .filter(|c| *c != '_')
                .collect();
            digits.parse().unwrap()
        };
        assert_eq!((bound(">="), bound("<=")), (*super::HZ_RANGE.start(), *super::HZ_RANGE.end()));
    }

    use super::ramdisk_name;

    #[test]
    fn fixtures_go_to_test_other_programs_to_bin() {
        assert_eq!(ramdisk_name("hello"), "bin/hello");
        assert_eq!(ramdisk_name("threads"), "bin/threads");
        assert_eq!(ramdisk_name("test-threads"), "test/threads", "a fixture may share a tool's name");
        assert_eq!(ramdisk_name("test-msa_abi"), "test/msa_abi");
    }
}
