//! # Memory the boot loader left for the kernel: the ramdisk
//!
//! `cargo xtask` packs the user programs into a cpio archive (the *ramdisk*), and the boot
//! loader reads it from the disk image into physical memory before the kernel starts. It
//! also maps those frames into the kernel's half of the address space and says where in
//! `BootInfo::ramdisk_addr` / `ramdisk_len`; it marks them as its own in the memory map,
//! so the frame pool ([`crate::frames`]) never hands them out. The bytes therefore stay where
//! they are, unchanged, for as long as the kernel runs — which is what [`ramdisk`] promises
//! by returning a `&'static [u8]`. Everything that reads the archive (the kernel's
//! `proc/ramdisk.rs`, `tally_loader::cpio`) is safe code over that slice.

/// The ramdisk as a byte slice, from the boot loader's `(address, length)`; `None` when
/// there is none (or a length that cannot be a real mapping).
pub fn ramdisk(addr: Option<u64>, len: u64) -> Option<&'static [u8]> {
    let addr = addr?;
    // The upper half, not wrapping, and a sane size (the boot loader reads it through BIOS
    // disk calls: a few MiB at most).
    let end = addr.checked_add(len)?;
    if len == 0 || len > (1 << 30) || addr < 0xffff_8000_0000_0000 || end < addr {
        return None;
    }
    // SAFETY: the boot loader mapped `len` bytes at `addr` (kernel half, shared by every
    // address space: `address_space.rs` copies the kernel's upper-half entries), reserved
    // the frames in the memory map (kind Bootloader, never added to the frame pool) and
    // never touches them again; the kernel never writes them nor unmaps the boot loader's
    // mappings. So the bytes are valid, initialised and immutable for `'static`.
    Some(unsafe { core::slice::from_raw_parts(addr as *const u8, len as usize) })
}
