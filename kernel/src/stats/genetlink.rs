//! # `bus:0:genetlink`: the message bus's counters, class `net`
//!
//! Every message a user program sends to the bus is either served or refused and counted:
//! nothing it sends can make the kernel fault, and this kstat is where an instructor (or
//! the `busfuzz` scenario) sees that garbage was refused rather than silently lost. The
//! values are `tally_msgbus::BusStats`, sampled at the read (`ks_update`):
//!
//! | statistic            | meaning                                                          |
//! |----------------------|------------------------------------------------------------------|
//! | `requests`           | messages dispatched to a family (`NLM_F_REQUEST`, type ≥ 0x10)   |
//! | `replies`            | replies the families queued                                      |
//! | `errors_replied`     | `NLMSG_ERROR` messages with a nonzero error                      |
//! | `acks`               | acknowledgements (`NLM_F_ACK`)                                   |
//! | `malformed`          | framing errors, short generic headers, malformed attributes      |
//! | `ignored`            | messages without `NLM_F_REQUEST`, or of a control type           |
//! | `multicast_produced` | exit records offered to listeners (one per listener)             |
//! | `multicast_delivered`| ... queued on a listener's socket                                |
//! | `multicast_dropped`  | ... dropped because its receive buffer was full (`ENOBUFS`)      |
//! | `open_sockets`       | bus sockets open now                                             |

use tally_kstat::{KstatError, KstatRegistry};
use tally_msgbus::BusStats;
use tally_uapi::kstat::{Hrtime, KidT, KstatValue, KSTAT_DATA_UINT32, KSTAT_DATA_UINT64};

const STATS: [(&str, u8); 10] = [
    ("requests", KSTAT_DATA_UINT64),
    ("replies", KSTAT_DATA_UINT64),
    ("errors_replied", KSTAT_DATA_UINT64),
    ("acks", KSTAT_DATA_UINT64),
    ("malformed", KSTAT_DATA_UINT64),
    ("ignored", KSTAT_DATA_UINT64),
    ("multicast_produced", KSTAT_DATA_UINT64),
    ("multicast_delivered", KSTAT_DATA_UINT64),
    ("multicast_dropped", KSTAT_DATA_UINT64),
    ("open_sockets", KSTAT_DATA_UINT32),
];

pub(super) fn create(reg: &mut KstatRegistry, now: Hrtime) -> Result<KidT, KstatError> {
    let kid = reg.create_named("bus", 0, "genetlink", "net", &STATS, now)?;
    reg.install(kid)?;
    Ok(kid)
}

/// `ks_update`: the counters as the bus has them now (in [`STATS`] order).
pub(super) fn refresh(reg: &mut KstatRegistry, kid: KidT, s: &BusStats) -> Result<(), KstatError> {
    let values = [
        KstatValue::Uint64(s.requests),
        KstatValue::Uint64(s.replies),
        KstatValue::Uint64(s.errors_replied),
        KstatValue::Uint64(s.acks),
        KstatValue::Uint64(s.malformed),
        KstatValue::Uint64(s.ignored),
        KstatValue::Uint64(s.multicast_produced),
        KstatValue::Uint64(s.multicast_delivered),
        KstatValue::Uint64(s.multicast_dropped),
        KstatValue::Uint32(s.open_sockets),
    ];
    super::set_in_order(reg, kid, values)
}
