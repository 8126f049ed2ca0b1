//! # `tty:0:console`: the console's input counters, class `misc`
//!
//! Console input is flow-controlled (`drivers/tty.rs`): when the kernel's buffer is full the
//! UART's receive interrupt goes off and the sender waits, so nothing typed is lost for
//! want of room. This kstat shows that it held: bytes received, the times the receiver was
//! stopped, and the only bytes the console still discards — a line longer than the line
//! discipline's buffer (refused with a BEL) and input flushed on purpose. The values are
//! the driver's counters, sampled at the read (`ks_update`):
//!
//! | statistic  | meaning                                                                |
//! |------------|------------------------------------------------------------------------|
//! | `received` | bytes taken from the UART                                              |
//! | `dropped`  | bytes refused: a line longer than 4095 bytes (reported once, too)      |
//! | `stalls`   | times the buffer filled and the receive interrupt was turned off       |
//! | `flushed`  | bytes discarded by a signal character (`^C` …) or `TCSETSF`            |
//! | `signals`  | signal characters acted on                                             |

use tally_kstat::{KstatError, KstatRegistry};
use tally_uapi::kstat::{Hrtime, KidT, KstatValue, KSTAT_DATA_UINT64};

const STATS: [(&str, u8); 5] = [
    ("received", KSTAT_DATA_UINT64),
    ("dropped", KSTAT_DATA_UINT64),
    ("stalls", KSTAT_DATA_UINT64),
    ("flushed", KSTAT_DATA_UINT64),
    ("signals", KSTAT_DATA_UINT64),
];

pub(super) fn create(reg: &mut KstatRegistry, now: Hrtime) -> Result<KidT, KstatError> {
    let kid = reg.create_named("tty", 0, "console", "misc", &STATS, now)?;
    reg.install(kid)?;
    Ok(kid)
}

/// `ks_update`: the driver's counters now (atomics: no lock is taken).
pub(super) fn refresh(reg: &mut KstatRegistry, kid: KidT) -> Result<(), KstatError> {
    let c = crate::drivers::tty::counters();
    let values = [c.received, c.dropped, c.stalls, c.flushed, c.signals].map(KstatValue::Uint64);
    super::set_in_order(reg, kid, values)
}
