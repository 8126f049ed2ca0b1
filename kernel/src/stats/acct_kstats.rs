//! # The accounting files' kstats: `acct:0:pacct`, `csa:0:pacct`, `csa:0:ja`, class `misc`
//!
//! What the kernel handed to each accounting file, so an administrator can see records being
//! written — and, above all, records lost — without reading the files. The values are
//! sampled at the read (`ks_update`) from `acct/process_acct.rs` and `acct/job_acct.rs`:
//!
//! | kstat | statistic | meaning |
//! |---|---|---|
//! | `acct:0:pacct` | `on` | 1 while process accounting (`acct(2)`) is on |
//! | | `records` | v3 records handed to an accounting file since boot |
//! | | `bytes` | their bytes (64 each) |
//! | | `dropped` | records lost: refused by the file's queue, or queued and never written after a write error |
//! | | `errors` | write errors (each turned accounting off) |
//! | `csa:0:pacct` (the system file) | `open` | 1 while the system file is open |
//! | | `records`, `bytes` | CSA records handed to it (a base record and its continuations count once) |
//! | | `dropped_threshold` | process records kept out by the memory or time threshold |
//! | | `errors` | write errors (each closed the file and made the ON kinds ERROFF) |
//! | | `refused` | posts the file layer refused for any CSA file (`ENOBUFS`, `EIO`) |
//! | `csa:0:ja` (every ja file together, since boot) | `open` | ja files open now |
//! | | `records`, `bytes`, `dropped_threshold`, `errors` | as above, summed over all jobs' ja files (a ja file is never held back by a threshold: `dropped_threshold` is 0); `refused` is 0 |
//! | `csa:P:ja`, one per job with a ja file (P: the job's creator, the jid's low half) | the same | that job's ja file; created when a read finds the file, deleted once the job has ended (its EOJ written) |

use tally_kstat::{KstatError, KstatRegistry};
use tally_uapi::kstat::{Hrtime, KidT, KstatValue, KSTAT_DATA_UINT32, KSTAT_DATA_UINT64};

use tally_csa::state::FileCounters;

use crate::acct::job_acct::CsaCounters;
use crate::acct::process_acct::PacctCounters;

const PACCT: [(&str, u8); 5] = [
    ("on", KSTAT_DATA_UINT32),
    ("records", KSTAT_DATA_UINT64),
    ("bytes", KSTAT_DATA_UINT64),
    ("dropped", KSTAT_DATA_UINT64),
    ("errors", KSTAT_DATA_UINT64),
];

const CSA_FILE: [(&str, u8); 6] = [
    ("open", KSTAT_DATA_UINT32),
    ("records", KSTAT_DATA_UINT64),
    ("bytes", KSTAT_DATA_UINT64),
    ("dropped_threshold", KSTAT_DATA_UINT64),
    ("errors", KSTAT_DATA_UINT64),
    ("refused", KSTAT_DATA_UINT64),
];

/// The three kstats' KIDs.
#[derive(Clone, Copy, Debug)]
pub(super) struct AcctKstats {
    pub pacct: KidT,
    pub csa_system: KidT,
    pub csa_ja: KidT,
}

impl AcctKstats {
    pub(super) fn contains(&self, kid: KidT) -> bool {
        kid == self.pacct || kid == self.csa_system || kid == self.csa_ja
    }
}

pub(super) fn create(reg: &mut KstatRegistry, now: Hrtime) -> Result<AcctKstats, KstatError> {
    let mut make = |module: &str, name: &str, stats: &[(&str, u8)]| {
        let kid = reg.create_named(module, 0, name, "misc", stats, now)?;
        reg.install(kid)?;
        Ok::<_, KstatError>(kid)
    };
    Ok(AcctKstats {
        pacct: make("acct", "pacct", &PACCT)?,
        csa_system: make("csa", "pacct", &CSA_FILE)?,
        csa_ja: make("csa", "ja", &CSA_FILE)?,
    })
}

/// `ks_update` of whichever of the three `kid` is.
pub(super) fn refresh(
    reg: &mut KstatRegistry,
    k: &AcctKstats,
    kid: KidT,
    p: &PacctCounters,
    c: &CsaCounters,
) -> Result<(), KstatError> {
    if kid == k.pacct {
        let values = [
            KstatValue::Uint32(p.on as u32),
            KstatValue::Uint64(p.records),
            KstatValue::Uint64(p.records.saturating_mul(tally_uapi::acct::AcctV3::SIZE as u64)),
            KstatValue::Uint64(p.dropped),
            KstatValue::Uint64(p.errors),
        ];
        return super::set_in_order(reg, kid, values);
    }
    let (open, f, refused) = if kid == k.csa_system {
        (c.system_open as u32, c.system, c.post_failures)
    } else {
        (u32::try_from(c.ja_open).unwrap_or(u32::MAX), c.ja, 0)
    };
    let values = [
        KstatValue::Uint32(open),
        KstatValue::Uint64(f.records),
        KstatValue::Uint64(f.bytes),
        KstatValue::Uint64(f.dropped_below_threshold),
        KstatValue::Uint64(f.errors),
        KstatValue::Uint64(refused),
    ];
    super::set_in_order(reg, kid, values)
}

/// The per-job ja kstats: create one for each ja file the state machine has, delete those
/// whose job has ended. Called before each read and chain id (as the IRQ lines' kstats are
/// discovered), with the ja files sampled before the registry lock.
pub(super) fn discover_ja(
    reg: &mut KstatRegistry,
    kids: &mut alloc::vec::Vec<(u64, KidT)>,
    files: &[(u64, FileCounters, bool)],
    now: Hrtime,
) {
    kids.retain(|&(jid, kid)| {
        let keep = files.iter().any(|f| f.0 == jid);
        if !keep {
            let _ = reg.delete(kid);
        }
        keep
    });
    for &(jid, _, _) in files {
        if kids.iter().any(|k| k.0 == jid) {
            continue;
        }
        let instance = (jid & 0x7fff_ffff) as i32;
        let made = reg.create_named("csa", instance, "ja", "misc", &CSA_FILE, now).and_then(|kid| {
            reg.install(kid)?;
            Ok(kid)
        });
        if let Ok(kid) = made {
            kids.push((jid, kid));
        }
    }
}

/// `ks_update` of job `jid`'s ja kstat.
pub(super) fn refresh_ja(
    reg: &mut KstatRegistry,
    kid: KidT,
    jid: u64,
    files: &[(u64, FileCounters, bool)],
) -> Result<(), KstatError> {
    let Some(&(_, f, open)) = files.iter().find(|f| f.0 == jid) else { return Ok(()) };
    let values = [
        KstatValue::Uint32(open as u32),
        KstatValue::Uint64(f.records),
        KstatValue::Uint64(f.bytes),
        KstatValue::Uint64(f.dropped_below_threshold),
        KstatValue::Uint64(f.errors),
        KstatValue::Uint64(0),
    ];
    super::set_in_order(reg, kid, values)
}
