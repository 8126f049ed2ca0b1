//! ATA/IDE task-file registers: the port-level half of the disk driver.
//!
//! QEMU's `pc` machine has a PIIX IDE controller with two *channels*, each a set of
//! legacy ports (the "task file") shared by up to two drives, master (0) and slave (1):
//!
//! | channel   | command block | control block | IRQ | drives (QEMU `-drive index=`) |
//! |-----------|---------------|---------------|-----|-------------------------------|
//! | primary   | 0x1F0–0x1F7   | 0x3F6         | 14  | 0 (boot disk), 1 (data disk)  |
//! | secondary | 0x170–0x177   | 0x376         | 15  | 2, 3                          |
//!
//! Command block, offsets from the base: 0 data (16-bit), 1 error (read) / features,
//! 2 sector count, 3–5 LBA bits 0–23, 6 drive/head (drive select + LBA bits 24–27),
//! 7 status (read) / command (write). Control block: alternate status (read) / device
//! control (write: bit 1 nIEN masks the drive's interrupt, bit 2 SRST resets the channel).
//!
//! Reading *status* tells the drive its interrupt was seen and lowers INTRQ; reading
//! *alternate status* returns the same bits without that side effect, so polling loops use
//! it and only the interrupt handler (or the final read of a polled command) reads status.
//!
//! This file only moves bytes through ports; the protocol (what to wait for, in which
//! order, what an error means) is in `kernel/src/drivers/ata.rs`.

use x86_64::instructions::port::Port;

/// Bytes in a sector; PIO moves one sector (256 data words) per DRQ block.
pub const SECTOR_SIZE: usize = 512;

/// Status register bits.
pub mod status {
    /// Busy: the drive owns the task file; no other bit is valid.
    pub const BSY: u8 = 0x80;
    /// Drive ready to accept a command.
    pub const DRDY: u8 = 0x40;
    /// Drive fault: a failure not reported through ERR.
    pub const DF: u8 = 0x20;
    /// Data request: the drive waits for the host to move one DRQ block (a sector).
    pub const DRQ: u8 = 0x08;
    /// Error: the error register says which.
    pub const ERR: u8 = 0x01;
}

/// Error register bits (valid when status has ERR).
pub mod error {
    /// Uncorrectable data error.
    pub const UNC: u8 = 0x40;
    /// ID not found: the sector does not exist.
    pub const IDNF: u8 = 0x10;
    /// Command aborted (unsupported command, or an address out of range on QEMU).
    pub const ABRT: u8 = 0x04;
}

/// The commands this driver issues (ATA-8 opcodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Command {
    /// READ SECTORS (PIO, LBA28): one interrupt per sector, *before* its data is read.
    ReadSectors = 0x20,
    /// WRITE SECTORS (PIO, LBA28): the first sector is written on DRQ without an
    /// interrupt; one interrupt *after* each sector has been written.
    WriteSectors = 0x30,
    /// FLUSH CACHE: one interrupt when the drive's write cache is on the medium.
    FlushCache = 0xE7,
    /// IDENTIFY DEVICE: one interrupt, then one 512-byte block describing the drive.
    Identify = 0xEC,
}

const DATA: u16 = 0;
const ERROR: u16 = 1;
const SECTOR_COUNT: u16 = 2;
const LBA_LOW: u16 = 3;
const LBA_MID: u16 = 4;
const LBA_HIGH: u16 = 5;
const DRIVE_HEAD: u16 = 6;
const STATUS_COMMAND: u16 = 7;

/// Drive/head register: bits 7 and 5 are always set, bit 6 selects LBA addressing.
const DRIVE_HEAD_LBA: u8 = 0xE0;
/// Device control register bits.
const CTRL_NIEN: u8 = 0x02;
const CTRL_SRST: u8 = 0x04;

/// One IDE channel's ports and IRQ line.
#[derive(Debug)]
pub struct Channel {
    base: u16,
    ctrl: u16,
    irq: u8,
}

/// The primary channel: ports 0x1F0–0x1F7 and 0x3F6, IRQ 14 (the boot disk and the data disk).
pub const PRIMARY: Channel = Channel { base: 0x1F0, ctrl: 0x3F6, irq: 14 };

/// The secondary channel: ports 0x170–0x177 and 0x376, IRQ 15. Its master is the accounting
/// disk (`-drive ...,index=2`); without one, QEMU puts an empty ATAPI CD-ROM there, which
/// the driver's IDENTIFY refuses.
pub const SECONDARY: Channel = Channel { base: 0x170, ctrl: 0x376, irq: 15 };

impl Channel {
    /// The legacy IRQ line this channel interrupts on.
    pub const fn irq(&self) -> u8 {
        self.irq
    }

    fn read8(&self, reg: u16) -> u8 {
        // SAFETY: `reg` is one of the task-file registers of this channel (offsets 1–7);
        // reading them has no side effect beyond the documented ATA ones (status: lower
        // INTRQ), which the callers intend.
        unsafe { Port::<u8>::new(self.base + reg).read() }
    }

    fn write8(&self, reg: u16, value: u8) {
        // SAFETY: `reg` is a task-file register of this channel; the driver writes the
        // command block only while the drive is not busy, as the ATA protocol requires.
        unsafe { Port::<u8>::new(self.base + reg).write(value) }
    }

    /// Select `drive` (0 master, 1 slave) in LBA mode with LBA bits 24–27 of `lba`, then
    /// give the drive the 400 ns the specification allows before its status is valid.
    pub fn select(&self, drive: u8, lba: u32) {
        self.write8(DRIVE_HEAD, DRIVE_HEAD_LBA | ((drive & 1) << 4) | ((lba >> 24) as u8 & 0x0F));
        self.delay_400ns();
    }

    /// Sector count (0 means 256) and LBA bits 0–23 for the next command.
    pub fn set_count_lba(&self, count: u8, lba: u32) {
        self.write8(SECTOR_COUNT, count);
        self.write8(LBA_LOW, lba as u8);
        self.write8(LBA_MID, (lba >> 8) as u8);
        self.write8(LBA_HIGH, (lba >> 16) as u8);
    }

    /// Write the command register: the drive starts executing `cmd` with the parameters
    /// already in the task file.
    pub fn issue(&self, cmd: Command) {
        self.write8(STATUS_COMMAND, cmd as u8);
    }

    /// Read the status register. This *acknowledges* the drive's interrupt (INTRQ drops).
    pub fn status(&self) -> u8 {
        self.read8(STATUS_COMMAND)
    }

    /// Read the alternate status register: the same bits, no acknowledgement.
    pub fn alt_status(&self) -> u8 {
        // SAFETY: reading the alternate status register has no side effect.
        unsafe { Port::<u8>::new(self.ctrl).read() }
    }

    /// The error register; meaningful when status has ERR.
    pub fn error(&self) -> u8 {
        self.read8(ERROR)
    }

    /// Move one DRQ block (a sector) from the drive into `buf` (`rep insw`, 256 words).
    pub fn read_data(&self, buf: &mut [u8; SECTOR_SIZE]) {
        // SAFETY: `buf` is a valid, exclusively borrowed 512-byte buffer, exactly the 256
        // words `rep insw` stores through rdi (x86 allows unaligned stores; the direction
        // flag is clear on entry to `asm!`, so rdi moves upwards). dx is this channel's
        // data port, from which the drive expects exactly one sector to be read now.
        unsafe {
            core::arch::asm!(
                "rep insw",
                in("dx") self.base + DATA,
                inout("rdi") buf.as_mut_ptr() => _,
                inout("rcx") SECTOR_SIZE / 2 => _,
                options(nostack, preserves_flags),
            );
        }
    }

    /// Move one sector from `buf` to the drive (`rep outsw`, 256 words).
    pub fn write_data(&self, buf: &[u8; SECTOR_SIZE]) {
        // SAFETY: `buf` is a valid 512-byte buffer, exactly the 256 words `rep outsw`
        // loads through rsi (direction flag clear on entry to `asm!`). dx is this
        // channel's data port, and the drive has asserted DRQ for one sector.
        unsafe {
            core::arch::asm!(
                "rep outsw",
                in("dx") self.base + DATA,
                inout("rsi") buf.as_ptr() => _,
                inout("rcx") SECTOR_SIZE / 2 => _,
                options(nostack, readonly, preserves_flags),
            );
        }
    }

    fn write_control(&self, value: u8) {
        // SAFETY: the device control register only holds nIEN and SRST (and the
        // obsolete HOB bit, left 0); writing it affects only this channel's drives.
        unsafe { Port::<u8>::new(self.ctrl).write(value) }
    }

    /// Let the channel's drives interrupt (`true`: nIEN clear) or not (`false`: nIEN set,
    /// commands are then completed by polling). Applies to both drives of the channel.
    pub fn set_interrupts(&self, enabled: bool) {
        self.write_control(if enabled { 0 } else { CTRL_NIEN });
    }

    /// Software reset of both drives (SRST pulse), keeping nIEN as `interrupts` says.
    /// Afterwards the master is selected and the drives are busy until they finish.
    pub fn soft_reset(&self, interrupts: bool) {
        let nien = if interrupts { 0 } else { CTRL_NIEN };
        self.write_control(CTRL_SRST | nien);
        // The pulse must last at least 5 us; each alternate-status read is an ISA cycle.
        for _ in 0..50 {
            self.alt_status();
        }
        self.write_control(nien);
        self.delay_400ns();
    }

    /// The 400 ns a drive may take to make its status valid after a select or a command:
    /// four alternate-status reads, about 100 ns each on an ISA bus.
    pub fn delay_400ns(&self) {
        for _ in 0..4 {
            self.alt_status();
        }
    }
}
