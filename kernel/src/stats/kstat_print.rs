//! # `kstat -p`: a kstat's statistics as illumos' kstat(1M) prints them, parseable form
//!
//! The last step of the read path, for kernel-side readers (the `kstat` self-test, the
//! console): given a header and the data bytes [`super::read`] returned, produce the lines
//! `module:instance:name:statistic<TAB>value` exactly as `kstat -p` on illumos would:
//!
//! * besides the data section's statistics, every kstat has three from its header:
//!   `class`, `crtime` and `snaptime`;
//! * statistics are sorted by name (case-insensitively), so those three fall among the
//!   others; kstats are sorted by module, then instance (numerically), then name;
//! * times (`hrtime_t`: `crtime`, `snaptime`, an io kstat's `wtime` ... `rlastupdate`, a
//!   timer's `elapsed_time` ... `stop_time`) print as seconds with 9 decimals, and a time
//!   of 0 as `0`; the length×time sums (`wlentime`, `rlentime`) too, in length×seconds;
//! * an interrupt kstat's fifth counter is `multiple_service`; an event-timer kstat shows
//!   its first timer only (`name`, `num_events`, ...);
//! * the chain's own kstats (names starting `kstat_`) and raw kstats are not listed.
//!
//! Everything is decoded from the ABI bytes, as a user-space `kstat` will: a malformed
//! section prints fewer statistics, never fails.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use tally_uapi::kstat::{
    records, Hrtime, KstatHeader, KstatIntr, KstatIo, KstatNamed, KstatRecord, KstatTimer, KstatValue, KSTAT_TYPE_INTR,
    KSTAT_TYPE_IO, KSTAT_TYPE_NAMED, KSTAT_TYPE_TIMER,
};

/// The names kstat(1M) gives the five `kstat_intr_t` counters.
pub use tally_uapi::kstat::KSTAT_INTR_NAMES as INTR_NAMES;

/// Whether `kstat -p` lists this kstat at all.
pub fn listed(h: &KstatHeader) -> bool {
    !h.name().starts_with("kstat_")
        && matches!(h.ks_type, KSTAT_TYPE_NAMED | KSTAT_TYPE_INTR | KSTAT_TYPE_IO | KSTAT_TYPE_TIMER)
}

/// An `hrtime_t` as kstat(1M) prints it: `0`, or seconds with 9 decimals.
pub fn hrtime(t: Hrtime) -> String {
    if t == 0 {
        return "0".to_string();
    }
    let sign = if t < 0 { "-" } else { "" };
    let a = t.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// The order kstat(1M) lists kstats in: module, instance, name (names case-insensitively).
pub fn sort_key(h: &KstatHeader) -> (String, i32, String) {
    (h.module().to_ascii_lowercase(), h.ks_instance, h.name().to_ascii_lowercase())
}

/// Every `(statistic, value)` pair kstat(1M) prints for this kstat, in its order.
pub fn statistics(h: &KstatHeader, data: &[u8]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    out.push(("class".to_string(), h.class().to_string()));
    out.push(("crtime".to_string(), hrtime(h.ks_crtime)));
    out.push(("snaptime".to_string(), hrtime(h.ks_snaptime)));
    let mut push = |name: &str, value: String| out.push((name.to_string(), value));
    match h.ks_type {
        KSTAT_TYPE_NAMED => {
            for n in records::<KstatNamed>(data) {
                if let Some(v) = n.value() {
                    push(n.name(), format!("{v}"));
                }
            }
        }
        KSTAT_TYPE_INTR => {
            if let Some(i) = KstatIntr::decode(data) {
                for (name, count) in INTR_NAMES.iter().zip(i.intrs) {
                    push(name, format!("{count}"));
                }
            }
        }
        KSTAT_TYPE_IO => {
            if let Some(io) = KstatIo::decode(data) {
                for (name, v) in io.statistics() {
                    push(name, value(v));
                }
            }
        }
        KSTAT_TYPE_TIMER => {
            if let Some(t) = KstatTimer::decode(data) {
                push("name", t.name().to_string());
                for (name, v) in t.statistics() {
                    push(name, value(v));
                }
            }
        }
        _ => {}
    }
    out.sort_by_cached_key(|(name, _)| name.to_ascii_lowercase());
    out
}

/// In an io or timer record every signed 64-bit field is an `hrtime_t`.
fn value(v: KstatValue) -> String {
    match v {
        KstatValue::Int64(t) => hrtime(t),
        other => format!("{other}"),
    }
}

/// One line of output: `module:instance:name:statistic<TAB>value`.
pub fn line(h: &KstatHeader, statistic: &str, value: &str) -> String {
    format!("{}:{}:{}:{}\t{}", h.module(), h.ks_instance, h.name(), statistic, value)
}
