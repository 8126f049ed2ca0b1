//! Unix time back to a calendar date, and C's `ctime` layout — for the tools that print
//! begin times of accounting records (`lastcomm`, `dump-acct`, ...).
//!
//! Tally has no time zones: every date is UTC, which is what GNU tools print with `TZ=UTC`.
//! The conversion is the inverse of [`crate::rtc::days_from_civil`] (Howard Hinnant's
//! `civil_from_days`): shift the epoch to 0000-03-01 so that the leap day is the last day of
//! a "year", split the days into 400-year eras of 146 097 days, then into years of the era
//! and days of the year, and read the month off a five-month cycle of 153 days.

/// Day names and month names as C's `asctime` spells them.
const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The proleptic Gregorian date `(year, month 1..=12, day 1..=31)` of a day counted from
/// 1970-01-01 (negative before it).
pub const fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // day of the era, 0..=146_096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the March-based year
    let mp = (5 * doy + 2) / 153; // month from March, 0..=11
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

/// Day of the week of a day counted from 1970-01-01: 0 = Sunday (1970-01-01 was a Thursday).
pub const fn weekday_from_days(days: i64) -> u32 {
    (days + 4).rem_euclid(7) as u32
}

/// A point in time broken down in UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    /// 1..=12.
    pub month: u32,
    /// 1..=31.
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 = Sunday.
    pub weekday: u32,
}

impl UtcTime {
    /// The UTC calendar time of `secs` seconds since 1970-01-01T00:00:00Z.
    pub const fn from_unix(secs: i64) -> UtcTime {
        let days = secs.div_euclid(86_400);
        let rest = secs.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        UtcTime {
            year,
            month,
            day,
            hour: rest / 3600,
            minute: rest / 60 % 60,
            second: rest % 60,
            weekday: weekday_from_days(days),
        }
    }
}

/// Seconds since 1970 displayed as C's `ctime` does in UTC (`TZ=UTC`), without its final
/// newline: `Thu Jan  1 00:00:00 1970` — the day of the month padded with a space to two
/// columns. The first 16 characters (`Thu Jan  1 00:00`) are what `lastcomm` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ctime(pub i64);

impl core::fmt::Display for Ctime {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let t = UtcTime::from_unix(self.0);
        write!(
            f,
            "{} {}{:3} {:02}:{:02}:{:02} {}",
            WEEKDAYS[t.weekday as usize],
            MONTHS[(t.month - 1) as usize],
            t.day,
            t.hour,
            t.minute,
            t.second,
            t.year
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtc::days_from_civil;
    use proptest::prelude::*;

    #[test]
    fn known_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(47_540), (2100, 2, 28));
        assert_eq!(civil_from_days(47_541), (2100, 3, 1), "2100 is not a leap year");
        assert_eq!(weekday_from_days(0), 4, "a Thursday");
        assert_eq!(weekday_from_days(-1), 3);
    }

    #[test]
    fn ctime_layout() {
        assert_eq!(Ctime(0).to_string(), "Thu Jan  1 00:00:00 1970");
        // Captured with TZ=UTC from GNU dump-acct (glibc ctime) on the same seconds.
        assert_eq!(Ctime(1_764_054_120).to_string(), "Tue Nov 25 07:02:00 2025");
        assert_eq!(Ctime(u32::MAX as i64).to_string(), "Sun Feb  7 06:28:15 2106");
        assert_eq!(Ctime(951_782_400).to_string(), "Tue Feb 29 00:00:00 2000");
        assert_eq!(Ctime(1_000_000_000).to_string(), "Sun Sep  9 01:46:40 2001");
    }

    proptest! {
        #[test]
        fn inverse_of_days_from_civil(days in -1_000_000i64..1_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert!((1..=12).contains(&m) && (1..=31).contains(&d));
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }

        #[test]
        fn breakdown_reassembles(secs in -(1i64 << 40)..(1i64 << 40)) {
            let t = UtcTime::from_unix(secs);
            let back = days_from_civil(t.year, t.month, t.day) * 86_400
                + i64::from(t.hour * 3600 + t.minute * 60 + t.second);
            prop_assert_eq!(back, secs);
            prop_assert!(t.hour < 24 && t.minute < 60 && t.second < 60 && t.weekday < 7);
        }

        #[test]
        fn weekdays_advance_one_a_day(days in -1_000_000i64..1_000_000) {
            prop_assert_eq!(weekday_from_days(days + 1), (weekday_from_days(days) + 1) % 7);
        }
    }
}
