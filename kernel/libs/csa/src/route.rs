//! Which bytes go to which file when a process exits, and when a job starts or ends.
//!
//! ## A process exits (its last thread)
//!
//! [`route`] decides, from the state alone ([`Routing`]) and the process's records:
//!
//! ```text
//!   process in no job ───────────────────────────────────────────► nothing at all
//!   in job J, J has an open ja file ─────────────────────────────► ja file: the base record
//!                                                                  with ALL continuations
//!   CSA kind ON and the system file open?
//!     no ─────────────────────────────────────────────────────────► system file: nothing
//!     yes: memt ON and virt high-water < memt, or
//!          time ON and utime + stime < time  ─────────────────────► nothing; counted as
//!                                                                  dropped below threshold
//!     otherwise ──────────────────────────────────────────────────► the base record with the
//!                                                                  continuations whose record
//!                                                                  kind (mem, io, delay) is ON
//! ```
//!
//! The ja file is the user's own record of their job, and the SGI CSA design says it gets
//! the records "regardless of the CSA configuration": so thresholds, record kinds and even
//! the CSA kind being OFF do not apply to it. It gets *every* continuation record, as CSA's
//! writer builds the memory, I/O and delay records whenever a ja file is open — `ja` reports
//! memory integrals, I/O and delays, and needs them all. Thresholds compare in record units:
//! the virtual high-water mark in KB against memt, `ac_utime + ac_stime` in µs against time
//! (both checked whether or not the memory record is written).
//!
//! Then the process leaves its job ([`crate::jobs::Jobs::exit`]); if it was the last
//! member, the end-of-job record follows its base record: to the ja file (which is then
//! closed — the job is over) and to the system file if the CSA kind is ON.
//!
//! ## A job starts
//!
//! Its start-of-job record goes to the system file if the CSA kind is ON. (A new job has no
//! ja file yet.) If the creator left a job of which it was the last member, that job's
//! end-of-job record comes first.
//!
//! Thresholds and record kinds never apply to SOJ and EOJ records.

use crate::effects::{Effects, FileId};
use crate::jobs::{JobEnd, JobUsage, NewJob};
use crate::process::{Continuations, ProcessExit, ProcessRecord, CHAIN_MAX};
use crate::state::Csa;

/// The part of the state that decides where a process record goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Routing {
    /// The CSA kind is ON.
    pub csa_on: bool,
    /// The system file is open.
    pub system_open: bool,
    /// The record kinds that are ON.
    pub kinds: Continuations,
    /// The thresholds that are ON, with their values (KB, µs).
    pub thd_mem_kb: Option<i64>,
    pub thd_time_us: Option<i64>,
    /// The job has an open ja file.
    pub ja_open: bool,
}

/// Where a process record goes in the system file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemRoute {
    /// Nowhere: the CSA kind is not ON or no system file is open.
    Off,
    /// Nowhere, because of a threshold (counted).
    BelowThreshold,
    /// The base record with these continuation records.
    Write(Continuations),
}

/// Where a process record goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub system: SystemRoute,
    /// The whole chain goes to the job's ja file.
    pub ja: bool,
}

/// Is the process below a threshold that is ON?
pub fn below_threshold(r: &Routing, rec: &ProcessRecord) -> bool {
    let virt_kb = rec.mem.map_or(0, |m| m.virt.himem) as i128;
    let cpu_us = rec.base.utime as i128 + rec.base.stime as i128;
    r.thd_mem_kb.is_some_and(|t| virt_kb < t as i128) || r.thd_time_us.is_some_and(|t| cpu_us < t as i128)
}

/// The decision for one exiting process in a job (see the module documentation). `rec` is
/// the full chain ([`ProcessExit::records`]).
pub fn route(r: &Routing, rec: &ProcessRecord) -> Route {
    let system = if !(r.csa_on && r.system_open) {
        SystemRoute::Off
    } else if below_threshold(r, rec) {
        SystemRoute::BelowThreshold
    } else {
        SystemRoute::Write(r.kinds)
    };
    Route { system, ja: r.ja_open }
}

impl Csa {
    /// `spawn`: process `child` of `parent` joins the parent's job, if any. Returns the
    /// child's job; `Err(errno)` (`EBUSY`, `EAGAIN`) only if the table is inconsistent or
    /// full, which a kernel sizing the table by its task limit never sees.
    pub fn spawn(&mut self, parent: u32, child: u32) -> Result<Option<u64>, i32> {
        self.jobs.inherit(parent, child).map_err(|e| e.errno())
    }

    /// `job_create`: the caller `new.pid` starts a new job. Returns its jid and the records
    /// to write (the old job's end, the new job's start). `EBUSY`, `EAGAIN` as
    /// [`crate::jobs::Jobs::create`]; the caller checks privilege (`EPERM`) first.
    pub fn job_create(&mut self, new: &NewJob) -> Result<(u64, Effects), i32> {
        let created = self.jobs.create(new).map_err(|e| e.errno())?;
        let mut fx = Effects::new();
        if let Some(end) = created.ended {
            self.end_job(&end, &mut fx);
        }
        if self.on(tally_uapi::csa::ACCT_KERN_CSA) {
            self.post_system(&mut fx, &created.job.soj().encode());
        }
        Ok((created.job.jid, fx))
    }

    /// The last thread of process `p.pid` has exited, at `now_unix_ns`: its records, and
    /// its job's end if it was the last member. Nothing for a process in no job. Never
    /// allocates; cheap enough for an exit observer with interrupts off.
    pub fn process_exit(&mut self, p: &ProcessExit, now_unix_ns: u64) -> Effects {
        let mut fx = Effects::new();
        let Some(jid) = self.jobs.jid_of(p.pid) else { return fx };
        let rec = p.records(jid);
        let route = route(&self.routing(jid), &rec);
        let mut buf = [0u8; CHAIN_MAX];
        if route.ja {
            let n = rec.encode(&mut buf);
            self.post_ja(&mut fx, jid, &buf[..n]);
        }
        match route.system {
            SystemRoute::Off => {}
            SystemRoute::BelowThreshold => self.system.counters.dropped_below_threshold += 1,
            SystemRoute::Write(kinds) => {
                let n = rec.only(kinds).encode(&mut buf);
                self.post_system(&mut fx, &buf[..n]);
            }
        }
        if let Some(end) = self.jobs.exit(p.pid, &JobUsage::from(&rec), now_unix_ns).and_then(|d| d.ended) {
            self.end_job(&end, &mut fx);
        }
        fx
    }

    /// A job ended: its EOJ to its ja file (closed after it) and to the system file.
    fn end_job(&mut self, end: &JobEnd, fx: &mut Effects) {
        let eoj = end.eoj().encode();
        let jid = end.job.jid;
        if let Some(i) = self.ja_index(jid) {
            if self.ja[i].cookie.is_some() {
                self.post_ja(fx, jid, &eoj);
                fx.close(FileId::Ja(jid));
            }
            self.ja.remove(i);
        }
        if self.on(tally_uapi::csa::ACCT_KERN_CSA) {
            self.post_system(fx, &eoj);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::MemoryUsage;
    use proptest::prelude::*;
    use tally_uapi::csa::{ACCT_DELAY, ACCT_IO, ACCT_MEM};

    fn rec(virt_kb: u64, cpu_us: u64) -> ProcessRecord {
        ProcessExit {
            utime_ns: cpu_us * 1000,
            mem: MemoryUsage { virt_hiwater_kb: virt_kb, ..Default::default() },
            ..Default::default()
        }
        .records(1)
    }

    fn on() -> Routing {
        Routing { csa_on: true, system_open: true, kinds: Continuations::ALL, ..Default::default() }
    }

    #[test]
    fn thresholds_drop_from_the_system_file_only() {
        let r = Routing { thd_mem_kb: Some(100), ja_open: true, ..on() };
        assert_eq!(route(&r, &rec(99, 0)), Route { system: SystemRoute::BelowThreshold, ja: true });
        assert_eq!(route(&r, &rec(100, 0)).system, SystemRoute::Write(Continuations::ALL), "at the threshold is in");
        let r = Routing { thd_time_us: Some(1000), ..on() };
        assert_eq!(route(&r, &rec(0, 999)).system, SystemRoute::BelowThreshold);
        assert_eq!(route(&r, &rec(0, 1000)).system, SystemRoute::Write(Continuations::ALL));
        let r = Routing { thd_time_us: Some(-5), thd_mem_kb: Some(i64::MIN), ..on() };
        assert_eq!(route(&r, &rec(0, 0)).system, SystemRoute::Write(Continuations::ALL), "negative: nothing below");
    }

    #[test]
    fn the_system_file_needs_csa_on_and_a_file() {
        for (csa_on, system_open) in [(false, true), (true, false), (false, false)] {
            let r = Routing { csa_on, system_open, ja_open: true, ..on() };
            assert_eq!(route(&r, &rec(0, 0)), Route { system: SystemRoute::Off, ja: true });
        }
        let r = Routing { kinds: Continuations(ACCT_IO), ..on() };
        assert_eq!(route(&r, &rec(0, 0)).system, SystemRoute::Write(Continuations(ACCT_IO)));
    }

    fn routing() -> impl Strategy<Value = Routing> {
        (
            any::<bool>(),
            any::<bool>(),
            0u8..8,
            proptest::option::of(-10i64..5000),
            proptest::option::of(-10i64..5000),
            any::<bool>(),
        )
            .prop_map(|(csa_on, system_open, k, m, t, ja_open)| Routing {
                csa_on,
                system_open,
                kinds: Continuations(k & (ACCT_MEM | ACCT_IO | ACCT_DELAY)),
                thd_mem_kb: m,
                thd_time_us: t,
                ja_open,
            })
    }

    proptest! {
        /// The ja decision depends on nothing but the ja file being open; the system file
        /// gets exactly the kinds that are ON, and only when no threshold holds it back.
        #[test]
        fn ja_ignores_everything_and_the_system_file_obeys_it_all(
            r in routing(), virt in 0u64..6000, cpu in 0u64..6000
        ) {
            let p = rec(virt, cpu);
            let got = route(&r, &p);
            prop_assert_eq!(got.ja, r.ja_open);
            let below = r.thd_mem_kb.is_some_and(|t| (virt as i64) < t) || r.thd_time_us.is_some_and(|t| (cpu as i64) < t);
            let want = match (r.csa_on && r.system_open, below) {
                (false, _) => SystemRoute::Off,
                (true, true) => SystemRoute::BelowThreshold,
                (true, false) => SystemRoute::Write(r.kinds),
            };
            prop_assert_eq!(got.system, want);
        }
    }
}
