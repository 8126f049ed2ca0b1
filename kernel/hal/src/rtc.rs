//! The CMOS real-time clock: read once at boot for the wall-clock time.
//!
//! The registers are read until two consecutive reads agree and no update is in progress,
//! so a read racing the RTC's once-a-second update is never used; decoding is in
//! `tally_clock::rtc`.

use tally_clock::rtc::RtcRaw;
use x86_64::instructions::port::Port;

fn cmos(reg: u8) -> u8 {
    // SAFETY: ports 0x70/0x71 are the CMOS index/data pair; bit 7 of the index (NMI
    // disable) is left clear, and reading RTC registers has no side effects.
    unsafe {
        Port::<u8>::new(0x70).write(reg);
        Port::<u8>::new(0x71).read()
    }
}

fn update_in_progress() -> bool {
    cmos(0x0a) & 0x80 != 0
}

fn read_once() -> RtcRaw {
    while update_in_progress() {
        core::hint::spin_loop();
    }
    RtcRaw {
        seconds: cmos(0x00),
        minutes: cmos(0x02),
        hours: cmos(0x04),
        day: cmos(0x07),
        month: cmos(0x08),
        year: cmos(0x09),
        century: cmos(0x32),
        status_b: cmos(0x0b),
    }
}

/// The RTC's registers, consistent (two identical reads in a row).
pub fn read() -> RtcRaw {
    let mut last = read_once();
    loop {
        let next = read_once();
        if next == last {
            return next;
        }
        last = next;
    }
}
