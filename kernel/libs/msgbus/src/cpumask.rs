//! # CPU lists: "1-3,5,7-8"
//!
//! A TASKSTATS listener says which CPUs it wants exit records from with a *cpulist*, the
//! text form Linux uses everywhere (`/sys/devices/system/cpu/online`, `taskset -c`): CPU
//! numbers and inclusive ranges separated by commas. In the kernel it becomes a bitmask,
//! bit *n* for CPU *n*; Tally has at most 64 CPUs, so a `u64` holds it.
//!
//! [`parse_cpulist`] follows Linux's `bitmap_parselist()` (lib/bitmap-str.c), with these
//! rules, decided here and tested below:
//!
//! * The string ends at its first NUL byte (the attribute is a C string; anything after the
//!   NUL is ignored, as `strscpy` would) or at the end of the attribute.
//! * Regions are `N` or `N-M` in decimal (leading zeros allowed, no sign). Between regions
//!   any run of commas and whitespace (space, `\t`, `\n`, `\v`, `\f`, `\r`) is a separator, and
//!   such runs may also lead or trail — so `"1-3,5\n"` (what `echo` adds) and `" 0, 2 "` are
//!   accepted, as in Linux. Whitespace *inside* a region (`"1 - 3"`) is not.
//!   (Linux stops at a newline that directly follows a region and ignores the rest; Tally
//!   treats every newline as a separator, so `"1\n3"` is {1, 3} rather than {1}.)
//! * Errors, all `EINVAL`: any other character, a `-` without a number on both sides, a
//!   reversed range (`"3-1"`), a CPU at or above `nr_cpus` (Linux: a mask that is not a
//!   subset of the possible CPUs), a number too large for any CPU, and an **empty mask**
//!   (`""`, `","`; Linux accepts it and registers nothing — Tally calls it a mistake).
//! * Not supported (→ `EINVAL`): Linux's `all`, `N` (last CPU) and `:used/group` strides.
//!
//! [`format_cpulist`] is the inverse: runs of two or more CPUs as `a-b`, the others alone,
//! separated by commas — `0-2,5` — exactly what Linux's `%*pbl` prints.

use alloc::string::String;
use core::fmt;

use crate::error::EINVAL;

/// The most CPUs a mask describes.
pub const MAX_CPUS: u32 = 64;

fn is_separator(b: u8) -> bool {
    matches!(b, b',' | b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Reads a decimal number at the start of `s`: its value (saturated at `u32::MAX`) and
/// how many digits it had. `EINVAL` if `s` does not start with a digit.
fn number(s: &[u8]) -> Result<(u32, usize), i32> {
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(EINVAL);
    }
    let v = s.iter().take(digits).fold(0u32, |acc, &d| acc.saturating_mul(10).saturating_add(u32::from(d - b'0')));
    Ok((v, digits))
}

/// Bits `lo..=hi` set (`lo <= hi < 64`).
fn range_bits(lo: u32, hi: u32) -> u64 {
    let upto = if hi >= 63 { u64::MAX } else { (1u64 << (hi + 1)) - 1 };
    let below = if lo >= 64 { u64::MAX } else { (1u64 << lo) - 1 };
    upto & !below
}

/// Parses a cpulist into a mask of CPUs below `nr_cpus` (at most [`MAX_CPUS`]). See the
/// [module documentation](self) for the grammar; every error is `EINVAL`.
pub fn parse_cpulist(bytes: &[u8], nr_cpus: u32) -> Result<u64, i32> {
    // BEGIN LAB 8: stop at the first NUL; regions N or N-M between runs of separators; every error EINVAL
    // STUB: let _ = (bytes, nr_cpus);
    // STUB: Err(EINVAL)
    let nr_cpus = nr_cpus.min(MAX_CPUS);
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let mut s = bytes.get(..end).unwrap_or(&[]);
    let mut mask = 0u64;
    loop {
        let skip = s.iter().take_while(|&&b| is_separator(b)).count();
        s = s.get(skip..).unwrap_or(&[]);
        if s.is_empty() {
            break;
        }
        let (lo, n) = number(s)?;
        s = s.get(n..).unwrap_or(&[]);
        let hi = if s.first() == Some(&b'-') {
            let (hi, n) = number(s.get(1..).unwrap_or(&[]))?;
            s = s.get(n.saturating_add(1)..).unwrap_or(&[]);
            hi
        } else {
            lo
        };
        match s.first() {
            None => {}
            Some(&b) if is_separator(b) => {}
            Some(_) => return Err(EINVAL),
        }
        if lo > hi || hi >= nr_cpus {
            return Err(EINVAL);
        }
        mask |= range_bits(lo, hi);
    }
    if mask == 0 {
        return Err(EINVAL);
    }
    Ok(mask)
    // END LAB 8
}

/// `mask` as a cpulist (`""` for an empty mask).
pub fn format_cpulist(mask: u64) -> String {
    use fmt::Write;
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = write!(s, "{}", CpuList(mask));
    s
}

/// Displays a mask as a cpulist: `format!("{}", CpuList(0b100111))` is `"0-2,5"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuList(pub u64);

impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut cpu = 0u32;
        while cpu < 64 {
            if self.0 & (1u64 << cpu) == 0 {
                cpu += 1;
                continue;
            }
            let start = cpu;
            while cpu + 1 < 64 && self.0 & (1u64 << (cpu + 1)) != 0 {
                cpu += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == cpu {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{cpu}")?;
            }
            cpu += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "cpumask_tests.rs"]
mod tests;
