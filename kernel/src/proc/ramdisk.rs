//! # The ramdisk: where user programs come from
//!
//! There is no file system. `cargo xtask` packs every program of `userland/` into one cpio
//! "newc" archive (`target/tally/ramdisk-<profile>.cpio`; `cpio -itv <` it on the host to
//! see what the kernel sees), the boot loader loads it into memory, and `kmain` hands the
//! bytes to [`init`] (through `hal::bootmem`, the one place that turns the boot loader's
//! address into a slice). From then on the archive is read-only and lives for ever, so a
//! program's ELF bytes are used where they lie: `spawn` copies segments straight from
//! them into the new process's pages.
//!
//! The archive is checked once at boot (every header, the trailer) and its entries are
//! listed in the log; an archive that fails the check is not used at all, so a corrupt
//! ramdisk makes every `spawn` fail with `ENOENT` instead of half-working.

use spin::Once;
use tally_loader::cpio::Archive;
use tally_loader::ExecError;

static RAMDISK: Once<&'static [u8]> = Once::new();

/// Take the boot loader's ramdisk (`None`: the image has none). Call once, at boot.
pub fn init(bytes: Option<&'static [u8]>) {
    let Some(bytes) = bytes else {
        log::warn!("ramdisk: none (spawn will answer ENOENT)");
        return;
    };
    let archive = Archive::new(bytes);
    match archive.validate() {
        Ok(n) => {
            RAMDISK.call_once(|| bytes);
            let mut names = alloc::string::String::new();
            for e in archive.entries().flatten().filter(|e| e.is_file()) {
                names.push(' ');
                names.push_str(e.name);
            }
            log::info!("ramdisk: {} bytes, {n} entries:{names}", bytes.len());
        }
        Err(e) => log::error!("ramdisk: {} bytes, not used: {e}", bytes.len()),
    }
}

/// The bytes of the regular file at `path` (`/bin/hello`, `bin/hello`: see
/// `tally_loader::cpio::normalize`).
pub fn find(path: &str) -> Result<&'static [u8], ExecError> {
    let bytes = RAMDISK.get().ok_or(ExecError::NotFound)?;
    Archive::new(bytes).find(path).map(|e| e.data)
}

/// What `path` names on the ramdisk (a program, or a directory such as `/bin`), if anything.
pub fn lookup(path: &str) -> Option<tally_loader::cpio::Node<'static>> {
    let bytes = RAMDISK.get()?;
    Archive::new(bytes).lookup(path).ok().flatten()
}

/// The names directly inside ramdisk directory `dir`, sorted, with whether each is a
/// directory (empty if `dir` is none).
pub fn list(dir: &str) -> alloc::vec::Vec<(&'static str, bool)> {
    RAMDISK.get().and_then(|bytes| Archive::new(bytes).list(dir).ok()).unwrap_or_default()
}
