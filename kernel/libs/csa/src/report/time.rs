//! Calendar times for the reports: seconds since 1970 → date and time of day, in UTC.
//!
//! The civil-from-days conversion is Howard Hinnant's (the inverse of
//! `tally_clock::rtc::days_from_civil`): exact for every day of the proleptic Gregorian
//! calendar, with no tables and no floating point.

use core::fmt;

/// A moment, broken down (UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime {
    pub year: i64,
    /// 1..=12
    pub month: u32,
    /// 1..=31
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 = Sunday.
    pub weekday: u32,
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

impl DateTime {
    /// `secs` seconds after 1970-01-01 00:00:00 UTC.
    pub fn from_unix(secs: u64) -> DateTime {
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        // Hinnant: days since 1970 → (y, m, d), with eras of 400 years from 0000-03-01.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        DateTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem / 60 % 60) as u32,
            second: (rem % 60) as u32,
            // 1970-01-01 was a Thursday.
            weekday: ((days + 4).rem_euclid(7)) as u32,
        }
    }
}

/// `HH:MM:SS`.
pub struct Hms(pub u64);

impl fmt::Display for Hms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = DateTime::from_unix(self.0);
        write!(f, "{:02}:{:02}:{:02}", t.hour, t.minute, t.second)
    }
}

/// `mm/dd/yy HH:MM:SS` (the `ja` summary's dates).
pub struct MdyHms(pub u64);

impl fmt::Display for MdyHms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = DateTime::from_unix(self.0);
        write!(f, "{:02}/{:02}/{:02} {}", t.month, t.day, t.year.rem_euclid(100), Hms(self.0))
    }
}

/// `ctime(3)` without the newline: `Thu Jan  1 00:00:00 1970`.
pub struct Ctime(pub u64);

impl fmt::Display for Ctime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = DateTime::from_unix(self.0);
        let (wd, mon) = (DAYS[t.weekday as usize], MONTHS[t.month as usize - 1]);
        write!(f, "{wd} {mon} {:2} {} {}", t.day, Hms(self.0), t.year)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(Ctime(0).to_string(), "Thu Jan  1 00:00:00 1970");
        assert_eq!(Ctime(951_782_400).to_string(), "Tue Feb 29 00:00:00 2000");
        assert_eq!(Ctime(1_700_000_000).to_string(), "Tue Nov 14 22:13:20 2023");
        assert_eq!(MdyHms(1_700_000_000).to_string(), "11/14/23 22:13:20");
        assert_eq!(Hms(86_399).to_string(), "23:59:59");
        let t = DateTime::from_unix(4_102_444_800); // 2100-01-01, not a leap year's end
        assert_eq!((t.year, t.month, t.day, t.weekday), (2100, 1, 1, 5));
    }

    #[test]
    fn every_day_follows_the_one_before() {
        let mut prev = DateTime::from_unix(0);
        for d in 1..200_000u64 {
            let t = DateTime::from_unix(d * 86_400);
            assert_eq!(t.weekday, (prev.weekday + 1) % 7);
            let next_month = t.day == 1 && (t.month == prev.month % 12 + 1);
            assert!(t.day == prev.day + 1 && t.month == prev.month || next_month, "{prev:?} → {t:?}");
            if t.month == 3 && t.day == 1 {
                let leap = (t.year % 4 == 0 && t.year % 100 != 0) || t.year % 400 == 0;
                assert_eq!(prev.day, if leap { 29 } else { 28 });
            }
            prev = t;
        }
    }
}
