//! # ATA disks in PIO mode: requests, the interrupt that ends them, and their statistics
//!
//! The protocol half of the disk driver; the ports are `hal::ata`. At boot, with interrupts
//! still off, [`init`] probes the drives with a polled IDENTIFY: both of the primary channel
//! (`ata0` the boot disk, `ata1` the data disk) and the secondary master (`ata2`, the
//! accounting disk that `crate::fs` mounts at `/var`). From then on each read or write is one
//! command per at most 256 sectors, issued under its channel's sleeping lock, and the calling
//! task sleeps UNINTERRUPTIBLE (a disk wait: its time goes to UNINTERRUPTIBLE_SLEEP) on the
//! channel's completion, which the channel's IRQ signals — 14 for the primary
//! ([`on_interrupt`]), 15 for the secondary ([`on_secondary_interrupt`]) — one interrupt per
//! sector. The two channels are independent: each has its own lock, completion and IRQ, so a
//! request on `ata2` never waits behind one on `ata1`. The command is issued and the task put to sleep with interrupts
//! off, and each completion is reset *before* the action that makes the drive interrupt, so
//! no wake-up is ever lost, even when the drive answers at once.
//!
//! Each disk keeps a Solaris I/O kstat of its wait queue (queued for the channel) and run
//! queue (issued to the drive), which `stats/disks.rs` publishes as `ata:N:ataN`. Errors
//! never panic: ERR/DF from the drive and timeouts are `EIO` (a timeout also resets the
//! channel), a bad length or an LBA past the end is `EINVAL` ([`AtaError::errno`]).
//! A request step by step, the interrupts of each command and the kstat: `docs/disk.md`.

use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use spin::{Mutex, Once};
use tally_kstat::IoStats;
use tally_uapi::errno;
use tally_uapi::kstat::{Hrtime, KstatIo};

use crate::base::time;
use crate::sync::{IrqCompletion, SleepLock};
use hal::ata::{self as hw, status, Command, SECTOR_SIZE};
use hal::cpu::without_interrupts;

/// One sector, as the data port moves it.
pub type Sector = [u8; SECTOR_SIZE];

/// Index of the data disk in [`disk`] (QEMU `-drive index=1`: primary slave).
pub const DATA_DISK: usize = 1;
/// Index of the accounting disk in [`disk`] (QEMU `-drive index=2`: secondary master), the
/// FAT16 volume mounted at `/var` (`crate::fs`).
pub const ACCT_DISK: usize = 2;

/// Sectors one LBA28 READ/WRITE SECTORS command can carry (a count of 0 means 256).
const MAX_SECTORS_PER_REQUEST: usize = 256;
/// LBA28 addresses sectors 0 .. 2^28.
const LBA28_LIMIT: u64 = 1 << 28;
/// How long a drive may stay busy or silent before the request fails with a timeout.
const TIMEOUT_NS: u64 = 5_000_000_000;

// ---------------------------------------------------------------------------------------
// Waiting for the interrupt
// ---------------------------------------------------------------------------------------

/// How a task waits for its request's interrupt, and how the interrupt wakes it.
///
/// The protocol, per interrupt the driver expects: the task calls [`reset`](Self::reset)
/// *before* the action that will make the drive interrupt (issuing a command, moving a
/// sector), then [`wait`](Self::wait); the IRQ handler calls
/// [`complete`](Self::complete), possibly before `wait` is even reached — an
/// implementation must not lose that wake-up.
pub trait Completion: Sync {
    /// Forget an earlier completion: the next `wait` waits for a new `complete`.
    fn reset(&self);
    /// Called from the IRQ handler, interrupts disabled: mark complete, wake the waiter.
    fn complete(&self);
    /// Block the calling task until `complete` has run since the last `reset`, or until
    /// the TSC reaches `deadline_tsc`. Returns whether it completed. Spurious wake-ups are
    /// the implementation's to absorb.
    fn wait(&self, deadline_tsc: u64) -> bool;
}

/// How tasks wait for the primary channel's interrupt: asleep in UNINTERRUPTIBLE_SLEEP on a
/// wait queue, woken by the IRQ 14 handler (`sync::IrqCompletion`).
static PRIMARY_COMPLETION: IrqCompletion = IrqCompletion::new();
/// The same for the secondary channel, woken by IRQ 15.
static SECONDARY_COMPLETION: IrqCompletion = IrqCompletion::new();

impl Completion for IrqCompletion {
    fn reset(&self) {
        IrqCompletion::reset(self)
    }

    fn complete(&self) {
        IrqCompletion::complete(self)
    }

    fn wait(&self, deadline_tsc: u64) -> bool {
        IrqCompletion::wait(self, deadline_tsc)
    }
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Why a request failed. [`errno`](Self::errno) maps it to the value a system call returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtaError {
    /// No drive answers at this position.
    NoDevice,
    /// The buffer is empty or not a whole number of sectors.
    BadLength,
    /// The request reaches past the disk's last sector (or past LBA28).
    OutOfRange,
    /// The drive reported ERR or DF, or did not offer data it should have (no DRQ).
    Device { status: u8, error: u8 },
    /// The drive stayed busy, or its interrupt did not come, for [`TIMEOUT_NS`]; the
    /// channel has been reset.
    Timeout,
}

impl AtaError {
    /// `EINVAL` for requests that are wrong, `EIO` for requests the hardware failed.
    pub fn errno(&self) -> i32 {
        match self {
            AtaError::BadLength | AtaError::OutOfRange => errno::EINVAL,
            AtaError::NoDevice | AtaError::Device { .. } | AtaError::Timeout => errno::EIO,
        }
    }
}

impl fmt::Display for AtaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AtaError::NoDevice => f.write_str("no drive"),
            AtaError::BadLength => f.write_str("length is not a whole number of sectors"),
            AtaError::OutOfRange => f.write_str("sector out of range"),
            AtaError::Timeout => f.write_str("timeout"),
            AtaError::Device { status, error } => {
                write!(f, "device error: status {status:#04x} error {error:#04x}")?;
                for (bit, name) in [(hw::error::UNC, "UNC"), (hw::error::IDNF, "IDNF"), (hw::error::ABRT, "ABRT")] {
                    if error & bit != 0 {
                        write!(f, " {name}")?;
                    }
                }
                if status & status::DF != 0 {
                    f.write_str(" DF")?;
                }
                Ok(())
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// IDENTIFY DEVICE
// ---------------------------------------------------------------------------------------

/// What IDENTIFY DEVICE says about a drive (the fields this driver uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    model: [u8; 40],
    serial: [u8; 20],
    firmware: [u8; 8],
    sectors28: u32,
    sectors48: Option<u64>,
}

impl Identity {
    /// Decode the 256 little-endian words of an IDENTIFY block. Refuses a block that is not
    /// an ATA disk (word 0 bit 15: ATAPI) or cannot do LBA (word 49 bit 9).
    pub fn parse(block: &Sector) -> Result<Self, AtaError> {
        let word = |i: usize| u16::from_le_bytes([block[2 * i], block[2 * i + 1]]);
        if word(0) & 0x8000 != 0 || word(49) & (1 << 9) == 0 {
            return Err(AtaError::NoDevice);
        }
        let lba48 = word(83) & (1 << 10) != 0;
        Ok(Identity {
            model: ata_string(block, 27),
            serial: ata_string(block, 10),
            firmware: ata_string(block, 23),
            sectors28: u32::from(word(60)) | u32::from(word(61)) << 16,
            sectors48: lba48.then(|| (0..4).fold(0u64, |acc, k| acc | u64::from(word(100 + k)) << (16 * k))),
        })
    }

    /// The model string, e.g. `QEMU HARDDISK`.
    pub fn model(&self) -> &str {
        trimmed(&self.model)
    }
    pub fn serial(&self) -> &str {
        trimmed(&self.serial)
    }
    pub fn firmware(&self) -> &str {
        trimmed(&self.firmware)
    }
    /// Sectors reachable with LBA28 (words 60–61): what this driver can address.
    pub fn sectors(&self) -> u64 {
        u64::from(self.sectors28)
    }
    /// Total sectors with LBA48 (words 100–103), if the drive supports it.
    pub fn sectors48(&self) -> Option<u64> {
        self.sectors48
    }
}

/// ATA strings store two characters per word, the first in the high byte.
fn ata_string<const N: usize>(block: &Sector, first_word: usize) -> [u8; N] {
    let mut s = [0u8; N];
    for (k, pair) in s.as_chunks_mut::<2>().0.iter_mut().enumerate() {
        let i = 2 * (first_word + k);
        pair[0] = block[i + 1];
        pair[1] = block[i];
    }
    s
}

/// The text of a space-padded ATA string (cut at the first byte that is not UTF-8).
fn trimmed(bytes: &[u8]) -> &str {
    let text = match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => core::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
    };
    text.trim_matches(|c| c == ' ' || c == '\0')
}

// ---------------------------------------------------------------------------------------
// The channel: one command at a time, and the interrupt that ends each step
// ---------------------------------------------------------------------------------------

struct Channel {
    /// `primary` or `secondary`, for the log.
    name: &'static str,
    hw: hw::Channel,
    completion: &'static dyn Completion,
    /// Held for a whole request: the task file carries one command at a time. A sleeping
    /// lock, because its holder sleeps until the drive interrupts; contenders sleep
    /// UNINTERRUPTIBLE until it is free (their wait shows in the io kstat's wait queue).
    owner: SleepLock,
    /// Interrupt-driven (after [`init`]) or polled (the boot-time probe).
    irq_mode: AtomicBool,
    /// A command is outstanding: an interrupt now belongs to it.
    in_flight: AtomicBool,
    /// The status register as the IRQ handler read it.
    irq_status: AtomicU8,
    /// Interrupts that arrived with no command outstanding (e.g. after a timeout). Each
    /// channel counts its own; only the primary's is read ([`unexpected_interrupts`], by the
    /// disk self-test, which owns that channel while it runs — the secondary's disk is fsd's).
    unexpected: AtomicU64,
}

static PRIMARY: Channel = Channel::new("primary", hw::PRIMARY, &PRIMARY_COMPLETION);
static SECONDARY: Channel = Channel::new("secondary", hw::SECONDARY, &SECONDARY_COMPLETION);

/// The line the primary channel interrupts on (IRQ 14), routed to [`on_interrupt`].
pub const IRQ_LINE: u8 = hw::PRIMARY.irq();
/// The line the secondary channel interrupts on (IRQ 15), routed to [`on_secondary_interrupt`].
/// (A *spurious* IRQ 15 — no in-service bit at the PIC — never reaches it: `irq::dispatch`
/// filters those first.)
pub const SECONDARY_IRQ_LINE: u8 = hw::SECONDARY.irq();

/// IRQ 14, from `irq::dispatch` (interrupts disabled; the EOI follows).
pub fn on_interrupt() {
    PRIMARY.interrupt();
}

/// IRQ 15, from `irq::dispatch` (interrupts disabled; the EOI follows).
pub fn on_secondary_interrupt() {
    SECONDARY.interrupt();
}

fn deadline() -> u64 {
    hal::tsc::read().saturating_add(time::clock().ns_to_ticks(TIMEOUT_NS))
}

impl Channel {
    const fn new(name: &'static str, hw: hw::Channel, completion: &'static dyn Completion) -> Channel {
        Channel {
            name,
            hw,
            completion,
            owner: SleepLock::new(),
            irq_mode: AtomicBool::new(false),
            in_flight: AtomicBool::new(false),
            irq_status: AtomicU8::new(0),
            unexpected: AtomicU64::new(0),
        }
    }

    /// Reading status acknowledges the drive (INTRQ drops, so the next interrupt is a new
    /// edge for the PIC); then the waiting task is told.
    fn interrupt(&self) {
        let st = self.hw.status();
        if self.in_flight.load(Ordering::Acquire) {
            self.irq_status.store(st, Ordering::Release);
            self.completion.complete();
        } else {
            self.unexpected.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Poll alternate status until BSY clears; returns that status.
    fn poll_not_busy(&self) -> Result<u8, AtaError> {
        let deadline = deadline();
        loop {
            let st = self.hw.alt_status();
            if st & status::BSY == 0 {
                return Ok(st);
            }
            if hal::tsc::read() >= deadline {
                return Err(AtaError::Timeout);
            }
            core::hint::spin_loop();
        }
    }

    /// Select `drive` with the top bits of `lba` and wait until it is ready for a command.
    fn select(&self, drive: u8, lba: u32) -> Result<(), AtaError> {
        // The task file may only be written while the drive is not busy.
        self.poll_not_busy()?;
        self.hw.select(drive, lba);
        // QEMU reads an absent drive's status as 0; a channel with nothing on it floats
        // to 0xFF.
        if matches!(self.hw.alt_status(), 0x00 | 0xFF) {
            return Err(AtaError::NoDevice);
        }
        let st = self.poll_not_busy()?;
        if st & status::DRDY == 0 {
            return Err(AtaError::Device { status: st, error: self.hw.error() });
        }
        Ok(())
    }

    /// Wait for the end of the current step: the IRQ (interrupt mode) or BSY clearing
    /// (polled mode; then status is read to acknowledge). Returns the status.
    fn await_step(&self) -> Result<u8, AtaError> {
        if self.irq_mode.load(Ordering::Acquire) {
            if self.completion.wait(deadline()) {
                Ok(self.irq_status.load(Ordering::Acquire))
            } else {
                Err(AtaError::Timeout)
            }
        } else {
            self.poll_not_busy()?;
            Ok(self.hw.status())
        }
    }

    /// ERR or DF means the command failed; a data step also needs DRQ.
    fn check(&self, st: u8, want_drq: bool) -> Result<(), AtaError> {
        if st & (status::ERR | status::DF) != 0 || (want_drq && st & status::DRQ == 0) {
            return Err(AtaError::Device { status: st, error: self.hw.error() });
        }
        Ok(())
    }

    /// Before a PIO-out data block: wait (polling) until the drive asks for it with DRQ.
    fn poll_drq(&self) -> Result<(), AtaError> {
        let deadline = deadline();
        loop {
            let st = self.poll_not_busy()?;
            if st & (status::ERR | status::DF | status::DRQ) != 0 {
                return self.check(st, true);
            }
            if hal::tsc::read() >= deadline {
                return Err(AtaError::Timeout);
            }
            core::hint::spin_loop();
        }
    }

    /// Issue `cmd` (count and LBA already set): from here the drive may interrupt.
    fn issue(&self, cmd: Command) {
        self.completion.reset();
        self.in_flight.store(true, Ordering::Release);
        self.hw.issue(cmd);
    }

    /// Start a step that ends with an interrupt, and wait for it, with interrupts disabled
    /// in between: the task is asleep before the drive's interrupt can be taken, so even a
    /// drive that answers at once (QEMU often does) means a real sleep and wake-up, and no
    /// wake-up can be lost between starting the step and sleeping.
    fn start_and_await(&self, start: impl FnOnce()) -> Result<u8, AtaError> {
        hal::cpu::without_interrupts(|| {
            start();
            self.await_step()
        })
    }

    /// PIO in: READ SECTORS or IDENTIFY; one interrupt, then one sector, per block.
    fn pio_in(&self, drive: u8, cmd: Command, lba: u32, out: &mut [Sector]) -> Result<(), AtaError> {
        self.select(drive, lba)?;
        // A count of 256 is written as 0.
        self.hw.set_count_lba(out.len() as u8, lba);
        let mut first = Some(self.start_and_await(|| self.issue(cmd)));
        for sector in out {
            let st = match first.take() {
                Some(st) => st?,
                None => self.await_step()?,
            };
            self.check(st, true)?;
            // Reading the block's last word may make the drive interrupt for the next one.
            self.completion.reset();
            self.hw.read_data(sector);
        }
        Ok(())
    }

    /// PIO out: WRITE SECTORS; per block, DRQ (polled), the sector, then one interrupt.
    fn pio_out(&self, drive: u8, lba: u32, data: &[Sector]) -> Result<(), AtaError> {
        self.select(drive, lba)?;
        self.hw.set_count_lba(data.len() as u8, lba);
        self.issue(Command::WriteSectors);
        for sector in data {
            self.poll_drq()?;
            let st = self.start_and_await(|| {
                self.completion.reset();
                self.hw.write_data(sector);
            })?;
            self.check(st, false)?;
        }
        Ok(())
    }

    /// A command without data (FLUSH CACHE): one interrupt when it is done.
    fn non_data(&self, drive: u8, cmd: Command) -> Result<(), AtaError> {
        self.select(drive, 0)?;
        let st = self.start_and_await(|| self.issue(cmd))?;
        self.check(st, false)
    }

    /// After a request: nothing is outstanding any more. After a timeout the drive's state
    /// is unknown, so the channel is reset (any late interrupt counts as unexpected).
    fn finish(&self, result: &Result<(), AtaError>) {
        self.in_flight.store(false, Ordering::Release);
        if result == &Err(AtaError::Timeout) {
            log::warn!("ata: timeout on the {} channel; resetting it", self.name);
            self.hw.soft_reset(self.irq_mode.load(Ordering::Acquire));
            let _ = self.poll_not_busy();
            self.hw.status();
        }
    }
}

// ---------------------------------------------------------------------------------------
// Disks
// ---------------------------------------------------------------------------------------

/// One drive: where it is, what it said at IDENTIFY, and its I/O statistics.
pub struct Disk {
    name: &'static str,
    channel: &'static Channel,
    drive: u8,
    identity: Once<Identity>,
    stats: Mutex<IoStats>,
    errors: AtomicU64,
}

/// Positions the driver knows: the primary channel's master and slave, the secondary master.
pub const NR_DISKS: usize = 3;

/// The positions, indexed as QEMU's `-drive index=` numbers them.
static DISKS: [Disk; NR_DISKS] =
    [Disk::new("ata0", &PRIMARY, 0), Disk::new("ata1", &PRIMARY, 1), Disk::new("ata2", &SECONDARY, 0)];

/// The disk at `index` (0 boot disk, 1 = [`DATA_DISK`], 2 = [`ACCT_DISK`]), if IDENTIFY
/// found one there.
pub fn disk(index: usize) -> Option<&'static Disk> {
    DISKS.get(index).filter(|d| d.identity.get().is_some())
}

/// Interrupts on the primary channel that no request was waiting for.
pub fn unexpected_interrupts() -> u64 {
    PRIMARY.unexpected.load(Ordering::Relaxed)
}

/// Which of the io kstat's counters a request adds to when it succeeds.
#[derive(Clone, Copy)]
enum Op {
    Read,
    Write,
}

fn hrtime_now() -> Hrtime {
    Hrtime::try_from(time::monotonic_ns().unwrap_or(0)).unwrap_or(Hrtime::MAX)
}

impl Disk {
    const fn new(name: &'static str, channel: &'static Channel, drive: u8) -> Self {
        Disk {
            name,
            channel,
            drive,
            identity: Once::new(),
            stats: Mutex::new(IoStats::new()),
            errors: AtomicU64::new(0),
        }
    }

    /// `ata0`, `ata1`: the disk's name in logs and statistics.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What IDENTIFY said at boot.
    pub fn identity(&self) -> Option<&Identity> {
        self.identity.get()
    }

    /// Sectors the driver can address (0 if the drive was not found).
    pub fn sectors(&self) -> u64 {
        self.identity.get().map_or(0, Identity::sectors)
    }

    /// Failed reads and writes since boot.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// The io kstat as a reader sees it now (open intervals folded in).
    pub fn stats(&self) -> KstatIo {
        without_interrupts(|| self.stats.lock().snapshot(hrtime_now()))
    }

    /// A copy of the io kstat's data as stored (sums up to each queue's last change), for
    /// the kstat registry to publish as `ata:N:ataN` (`stats/disks.rs`).
    pub fn io_stats(&self) -> IoStats {
        without_interrupts(|| *self.stats.lock())
    }

    fn account(&self, f: impl FnOnce(&mut IoStats, Hrtime)) {
        // Queue errors (an exit from an empty queue) are refused and counted by IoStats.
        without_interrupts(|| f(&mut self.stats.lock(), hrtime_now()));
    }

    /// Run one request with the channel to ourselves. `io` says whether (and as what) the
    /// request is accounted in the io kstat.
    fn request(
        &self,
        io: Option<(Op, u64)>,
        body: impl FnOnce(&Channel) -> Result<(), AtaError>,
    ) -> Result<(), AtaError> {
        if io.is_some() {
            self.account(|s, now| {
                let _ = s.waitq_enter(now);
            });
        }
        let owner = self.channel.owner.lock();
        if io.is_some() {
            self.account(|s, now| {
                let _ = s.waitq_to_runq(now);
            });
        }
        let result = body(self.channel);
        self.channel.finish(&result);
        drop(owner);
        if let Some((op, bytes)) = io {
            self.account(|s, now| {
                let _ = s.runq_exit(now);
                match (&result, op) {
                    (Ok(()), Op::Read) => s.record_read(bytes),
                    (Ok(()), Op::Write) => s.record_write(bytes),
                    (Err(_), _) => {}
                }
            });
            if result.is_err() {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        result
    }

    /// Send IDENTIFY DEVICE now (interrupt-driven after boot: one interrupt).
    pub fn identify(&self) -> Result<Identity, AtaError> {
        let mut block = [[0u8; SECTOR_SIZE]; 1];
        self.request(None, |ch| ch.pio_in(self.drive, Command::Identify, 0, &mut block))?;
        Identity::parse(&block[0])
    }

    /// Read `buf.len() / 512` sectors starting at `lba`. `buf` must be a non-empty whole
    /// number of sectors and the range must lie on the disk, or `EINVAL` and nothing is
    /// sent. One interrupt per sector (see the module docs).
    pub fn read(&self, lba: u64, buf: &mut [u8]) -> Result<(), AtaError> {
        self.check_range(lba, buf.len())?;
        self.read_unchecked(lba, buf)
    }

    /// Write `buf` (a non-empty whole number of sectors) at `lba`; like [`read`](Self::read).
    /// The data may sit in the drive's cache until [`flush`](Self::flush).
    pub fn write(&self, lba: u64, buf: &[u8]) -> Result<(), AtaError> {
        self.check_range(lba, buf.len())?;
        let (sectors, []) = buf.as_chunks::<SECTOR_SIZE>() else { return Err(AtaError::BadLength) };
        for (i, chunk) in sectors.chunks(MAX_SECTORS_PER_REQUEST).enumerate() {
            let at = (lba + (i * MAX_SECTORS_PER_REQUEST) as u64) as u32;
            let bytes = (chunk.len() * SECTOR_SIZE) as u64;
            self.request(Some((Op::Write, bytes)), |ch| ch.pio_out(self.drive, at, chunk))?;
        }
        Ok(())
    }

    /// Like [`read`](Self::read) without the check against the disk's size (the LBA28
    /// limit still applies), so that tests can watch the *drive* refuse a sector past its
    /// end: QEMU aborts the command (status ERR, error ABRT) with one interrupt.
    pub fn read_unchecked(&self, lba: u64, buf: &mut [u8]) -> Result<(), AtaError> {
        let (sectors, []) = buf.as_chunks_mut::<SECTOR_SIZE>() else { return Err(AtaError::BadLength) };
        if sectors.is_empty() {
            return Err(AtaError::BadLength);
        }
        if lba.checked_add(sectors.len() as u64).is_none_or(|end| end > LBA28_LIMIT) {
            return Err(AtaError::OutOfRange);
        }
        for (i, chunk) in sectors.chunks_mut(MAX_SECTORS_PER_REQUEST).enumerate() {
            let at = (lba + (i * MAX_SECTORS_PER_REQUEST) as u64) as u32;
            let bytes = (chunk.len() * SECTOR_SIZE) as u64;
            self.request(Some((Op::Read, bytes)), |ch| ch.pio_in(self.drive, Command::ReadSectors, at, chunk))?;
        }
        Ok(())
    }

    /// FLUSH CACHE: written data is on the medium when this returns (one interrupt).
    pub fn flush(&self) -> Result<(), AtaError> {
        self.request(None, |ch| ch.non_data(self.drive, Command::FlushCache))
    }

    fn check_range(&self, lba: u64, len: usize) -> Result<(), AtaError> {
        if len == 0 || !len.is_multiple_of(SECTOR_SIZE) {
            return Err(AtaError::BadLength);
        }
        let end = lba.checked_add((len / SECTOR_SIZE) as u64);
        if end.is_none_or(|end| end > self.sectors().min(LBA28_LIMIT)) {
            return Err(AtaError::OutOfRange);
        }
        Ok(())
    }
}

/// Probe each channel's drives (polled), then switch the channel to interrupts on its line
/// (IRQ 14, 15; routed and unmasked by `irq::init`, before interrupts are enabled). Runs
/// from `drivers::init`, with interrupts off.
pub fn init() {
    init_channel(&PRIMARY);
    init_channel(&SECONDARY);
}

fn init_channel(ch: &'static Channel) {
    ch.hw.set_interrupts(false);
    for disk in DISKS.iter().filter(|d| core::ptr::eq(d.channel, ch)) {
        match disk.identify() {
            Ok(id) => {
                log::info!(
                    "{}: {} ({} sectors, {} KiB), serial {}, firmware {}, {}",
                    disk.name,
                    id.model(),
                    id.sectors(),
                    id.sectors() * SECTOR_SIZE as u64 / 1024,
                    id.serial(),
                    id.firmware(),
                    if id.sectors48().is_some() { "LBA48 capable (LBA28 used)" } else { "LBA28" }
                );
                disk.identity.call_once(|| id);
            }
            Err(AtaError::NoDevice) => log::info!("{}: no drive", disk.name),
            // QEMU's empty CD-ROM (ATAPI) aborts IDENTIFY DEVICE.
            Err(AtaError::Device { error, .. }) if error & hw::error::ABRT != 0 => {
                log::info!("{}: not an ATA disk (IDENTIFY aborted: a CD-ROM?)", disk.name)
            }
            Err(e) => log::warn!("{}: IDENTIFY failed: {e}", disk.name),
        }
    }
    // Acknowledge anything left pending (by the BIOS or the probe) before the line opens.
    ch.hw.status();
    ch.irq_mode.store(true, Ordering::Release);
    ch.hw.set_interrupts(true);
}
