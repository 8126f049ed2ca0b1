//! The CMOS real-time clock's calendar, turned into Unix time.
//!
//! The RTC keeps seconds, minutes, hours, day, month and a two-digit year in registers that
//! may be BCD or binary and 12- or 24-hour, as status register B says. The HAL
//! (`tally-hal`'s `rtc`) reads the raw registers (twice, until two reads agree, so an update
//! in progress is not seen half-done); this module decodes them and counts the days since
//! 1970-01-01.

/// The RTC registers as read, before decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RtcRaw {
    pub seconds: u8,
    pub minutes: u8,
    pub hours: u8,
    pub day: u8,
    pub month: u8,
    pub year: u8,
    /// Century register (0x32) if the platform has one, else 0.
    pub century: u8,
    /// Status register B: bit 1 = 24-hour mode, bit 2 = binary (not BCD).
    pub status_b: u8,
}

/// A decoded calendar time (UTC, as PCs keep the RTC under Linux and QEMU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime {
    pub year: u32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

const fn from_bcd(v: u8) -> u8 {
    (v >> 4) * 10 + (v & 0x0f)
}

impl RtcRaw {
    /// Decode the registers; `None` if they hold an impossible date.
    pub fn decode(&self) -> Option<DateTime> {
        let binary = self.status_b & 0x04 != 0;
        let h24 = self.status_b & 0x02 != 0;
        let conv = |v: u8| if binary { v } else { from_bcd(v) };
        let pm = self.hours & 0x80 != 0;
        let mut hour = conv(self.hours & 0x7f) as u32;
        if !h24 {
            hour %= 12;
            if pm {
                hour += 12;
            }
        }
        let century = if self.century != 0 { conv(self.century) as u32 } else { 20 };
        let dt = DateTime {
            year: century * 100 + conv(self.year) as u32,
            month: conv(self.month) as u32,
            day: conv(self.day) as u32,
            hour,
            minute: conv(self.minutes) as u32,
            second: conv(self.seconds) as u32,
        };
        let valid = (1..=12).contains(&dt.month)
            && (1..=31).contains(&dt.day)
            && dt.hour < 24
            && dt.minute < 60
            && dt.second < 60
            && dt.year >= 1970;
        valid.then_some(dt)
    }
}

impl DateTime {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub fn unix_seconds(&self) -> u64 {
        days_from_civil(self.year as i64, self.month, self.day) as u64 * 86_400
            + self.hour as u64 * 3_600
            + self.minute as u64 * 60
            + self.second as u64
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm, which
/// works in 400-year eras so that leap years need no table).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        // 2026-11-21T20:00:00Z
        let dt = DateTime { year: 2026, month: 11, day: 21, hour: 20, minute: 0, second: 0 };
        assert_eq!(dt.unix_seconds(), 1_795_291_200);
    }

    #[test]
    fn leap_days() {
        assert_eq!(days_from_civil(2024, 3, 1) - days_from_civil(2024, 2, 28), 2);
        assert_eq!(days_from_civil(2100, 3, 1) - days_from_civil(2100, 2, 28), 1);
    }

    #[test]
    fn bcd_12_hour_pm() {
        // 2026-11-21 08:30:15 PM in BCD, 12-hour mode, century register 0x20.
        let raw = RtcRaw {
            seconds: 0x15,
            minutes: 0x30,
            hours: 0x88,
            day: 0x21,
            month: 0x11,
            year: 0x26,
            century: 0x20,
            status_b: 0,
        };
        let dt = raw.decode().unwrap();
        assert_eq!((dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second), (2026, 11, 21, 20, 30, 15));
    }

    #[test]
    fn binary_24_hour_and_midnight_in_12_hour_mode() {
        let raw = RtcRaw { seconds: 5, minutes: 6, hours: 23, day: 1, month: 2, year: 24, century: 0, status_b: 0x06 };
        assert_eq!(raw.decode().unwrap().hour, 23);
        let midnight = RtcRaw { hours: 0x12, day: 1, month: 1, year: 0x26, status_b: 0, ..Default::default() };
        assert_eq!(midnight.decode().unwrap().hour, 0);
    }

    #[test]
    fn garbage_registers_are_rejected() {
        let raw = RtcRaw { month: 0x13, day: 1, year: 0x26, ..Default::default() };
        assert_eq!(raw.decode(), None);
    }
}
