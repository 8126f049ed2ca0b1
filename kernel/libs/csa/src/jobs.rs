//! Jobs: which process belongs to which job, and what each job has used so far.
//!
//! A *job* (SGI's PAGG job, which CSA accounts by) is the set of processes descended from
//! one login. In Tally:
//!
//! * **create** — a root process calls `job_create` (`newjob` does, then starts a command
//!   in it): it leaves its old job, if any, and becomes the first member of a new job with
//!   `jid = host_id << 32 | pid`. That jid must not be in use (`EBUSY`): the same process
//!   asking twice, or an earlier process with the same pid whose job still has members.
//! * **inherit** — a process spawned by a member is a member from its first instruction
//!   ([`Jobs::inherit`], called by `spawn`). Membership is per *process*: threads created
//!   with `thread_create` share their process's job without the table hearing of them, and
//!   the process leaves the job when its last thread exits.
//! * **leave** — at that exit ([`Jobs::exit`]) the process's CPU times are added to the
//!   job's, and its high-water marks raise the job's (the largest of any one process, as
//!   the SGI CSA design says); when the last member has left, the job ends, and the
//!   [`JobEnd`] it returns becomes the end-of-job record.
//!
//! ```text
//!   newjob (pid 5) ── job_create ──► job 0x7a1100000005 {5}          SOJ
//!      └ spawn sh (pid 6)          ─► {5, 6}
//!           └ spawn ls (pid 7)     ─► {5, 6, 7}
//!   7 exits                        ─► {5, 6}      utime += ls's            base record (ls)
//!   6, then 5 exit                 ─► {}          the job ends              base records, EOJ
//! ```
//!
//! ## Storage
//!
//! Two vectors allocated once, in [`Jobs::new`], with room for `capacity` processes (the
//! kernel passes its task limit): the memberships sorted by pid and the jobs sorted by jid,
//! both searched by bisection. They never grow afterwards — inserting shifts entries within
//! the reserved room — so `inherit` and `exit`, which run on the spawn and exit paths with
//! locks held, never allocate; a full table is reported (`EAGAIN`), never grown.

use alloc::vec::Vec;

use tally_uapi::csa::jid_of;
use tally_uapi::errno::{EAGAIN, EBUSY};

use crate::job_record::{EojRecord, SojRecord};
use crate::process::{ns_to_secs, ProcessRecord};

/// A job id: `host_id << 32 | pid of the creator`.
pub type Jid = u64;

/// Why a job table operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobError {
    /// The job id is in use, or the process is already in the table where it should not be.
    Busy,
    /// The table has no room.
    Full,
}

impl JobError {
    /// The errno a system call returns for it.
    pub const fn errno(self) -> i32 {
        match self {
            JobError::Busy => EBUSY,
            JobError::Full => EAGAIN,
        }
    }
}

/// Who creates a job, and when.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewJob {
    /// The creating process (its id becomes the low half of the jid).
    pub pid: u32,
    /// The job's owner, and the creator's group and nice value (the end-of-job record's).
    pub uid: u32,
    pub gid: u32,
    pub nice: i32,
    /// Now, ns since 1970: the job's start.
    pub now_unix_ns: u64,
}

/// One job and its running totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Job {
    pub jid: Jid,
    pub uid: u32,
    pub gid: u32,
    pub nice: i32,
    pub start_unix_ns: u64,
    /// Live member processes.
    pub members: u32,
    /// Processes that have left it by exiting.
    pub exited: u32,
    /// Summed user and system time of the exited processes, µs (the sums of their base
    /// records' `ac_utime`/`ac_stime`, so a reader can check the end-of-job record).
    pub utime_us: u64,
    pub stime_us: u64,
    /// The largest core and virtual high-water mark of any exited process, KB.
    pub core_himem_kb: u64,
    pub virt_himem_kb: u64,
}

/// What a process contributes to its job when it exits, in record units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobUsage {
    pub utime_us: u64,
    pub stime_us: u64,
    pub core_himem_kb: u64,
    pub virt_himem_kb: u64,
}

impl From<&ProcessRecord> for JobUsage {
    fn from(r: &ProcessRecord) -> JobUsage {
        // BEGIN LAB 9: the times of the base record (µs) and the high-water marks of the memory record (KB)
        // STUB: let _ = r;
        // STUB: JobUsage::default()
        JobUsage {
            utime_us: r.base.utime,
            stime_us: r.base.stime,
            core_himem_kb: r.mem.map_or(0, |m| m.core.himem),
            virt_himem_kb: r.mem.map_or(0, |m| m.virt.himem),
        }
        // END LAB 9
    }
}

/// A job that has ended: its final totals and when it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobEnd {
    pub job: Job,
    pub end_unix_ns: u64,
}

/// The result of [`Jobs::create`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Created {
    pub job: Job,
    /// The creator's previous job, if the creator was its last member.
    pub ended: Option<JobEnd>,
}

/// The result of [`Jobs::exit`] for a process that was in a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    pub jid: Jid,
    /// The job, if this process was its last member.
    pub ended: Option<JobEnd>,
}

impl Job {
    /// Its start-of-job record.
    pub fn soj(&self) -> SojRecord {
        SojRecord::new(self.jid, self.uid, ns_to_secs(self.start_unix_ns))
    }

    fn add(&mut self, u: &JobUsage) {
        // BEGIN LAB 9: times add up; high-water marks do not (the largest of any one process); count the exit
        // STUB: let _ = u;
        self.utime_us = self.utime_us.saturating_add(u.utime_us);
        self.stime_us = self.stime_us.saturating_add(u.stime_us);
        self.core_himem_kb = self.core_himem_kb.max(u.core_himem_kb);
        self.virt_himem_kb = self.virt_himem_kb.max(u.virt_himem_kb);
        self.exited += 1;
        // END LAB 9
    }
}

impl JobEnd {
    /// Its end-of-job record.
    pub fn eoj(&self) -> EojRecord {
        // BEGIN LAB 9: the job's owner, start and end (s), its largest marks and summed times; nice in a byte
        // STUB: EojRecord { jid: self.job.jid, ..EojRecord::default() }
        let j = &self.job;
        EojRecord {
            nice: j.nice.clamp(i8::MIN as i32, i8::MAX as i32) as i8 as u8,
            uid: j.uid,
            gid: j.gid,
            jid: j.jid,
            btime: ns_to_secs(j.start_unix_ns),
            etime: ns_to_secs(self.end_unix_ns),
            corehimem: j.core_himem_kb,
            virthimem: j.virt_himem_kb,
            utime: j.utime_us,
            stime: j.stime_us,
            ..EojRecord::default()
        }
        // END LAB 9
    }
}

/// The job table.
#[derive(Clone, Debug)]
pub struct Jobs {
    host_id: u32,
    capacity: usize,
    /// (pid, jid), sorted by pid.
    members: Vec<(u32, Jid)>,
    /// Sorted by jid.
    jobs: Vec<Job>,
}

impl Jobs {
    /// An empty table for up to `capacity` member processes, making jids with `host_id`
    /// (the kernel passes `tally_uapi::csa::JOB_HOST_ID`). Allocates here, and only here.
    pub fn new(host_id: u32, capacity: usize) -> Jobs {
        Jobs { host_id, capacity, members: Vec::with_capacity(capacity), jobs: Vec::with_capacity(capacity) }
    }

    pub fn host_id(&self) -> u32 {
        self.host_id
    }

    /// The job of process `pid`, if it is in one (`job_getjid`).
    pub fn jid_of(&self, pid: u32) -> Option<Jid> {
        self.members.binary_search_by_key(&pid, |m| m.0).ok().map(|i| self.members[i].1)
    }

    /// Job `jid`, if it exists.
    pub fn job(&self, jid: Jid) -> Option<&Job> {
        self.jobs.binary_search_by_key(&jid, |j| j.jid).ok().map(|i| &self.jobs[i])
    }

    /// Every live job, by jid.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.iter()
    }

    /// The member processes of job `jid`, by pid.
    pub fn members(&self, jid: Jid) -> impl Iterator<Item = u32> + '_ {
        self.members.iter().filter(move |m| m.1 == jid).map(|m| m.0)
    }

    /// How many processes are in jobs.
    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    fn job_mut(&mut self, jid: Jid) -> Option<&mut Job> {
        self.jobs.binary_search_by_key(&jid, |j| j.jid).ok().map(|i| &mut self.jobs[i])
    }

    /// Take `pid` out of its job (not an exit: its usage is not added). Returns the job's
    /// end if it was the last member.
    fn detach(&mut self, at: usize, now_unix_ns: u64) -> Option<JobEnd> {
        let (_, jid) = self.members.remove(at);
        let i = self.jobs.binary_search_by_key(&jid, |j| j.jid).ok()?;
        self.jobs[i].members -= 1;
        (self.jobs[i].members == 0).then(|| JobEnd { job: self.jobs.remove(i), end_unix_ns: now_unix_ns })
    }

    /// `job_create` for process `new.pid`: see the module documentation.
    pub fn create(&mut self, new: &NewJob) -> Result<Created, JobError> {
        let jid = jid_of(self.host_id, new.pid);
        if self.job(jid).is_some() {
            return Err(JobError::Busy);
        }
        let slot = self.members.binary_search_by_key(&new.pid, |m| m.0);
        if slot.is_err() && self.members.len() >= self.capacity {
            return Err(JobError::Full);
        }
        let ended = match slot {
            Ok(at) => self.detach(at, new.now_unix_ns),
            Err(_) => None,
        };
        let job = Job {
            jid,
            uid: new.uid,
            gid: new.gid,
            nice: new.nice,
            start_unix_ns: new.now_unix_ns,
            members: 1,
            ..Job::default()
        };
        let at = self.jobs.binary_search_by_key(&jid, |j| j.jid).unwrap_err();
        self.jobs.insert(at, job);
        let at = self.members.binary_search_by_key(&new.pid, |m| m.0).unwrap_err();
        self.members.insert(at, (new.pid, jid));
        Ok(Created { job, ended })
    }

    /// `child` was spawned by `parent`: if the parent is in a job, the child joins it.
    /// Returns the child's job. `Busy` if the child is in the table already (a pid the
    /// kernel did not report the exit of), `Full` without room; neither changes anything.
    pub fn inherit(&mut self, parent: u32, child: u32) -> Result<Option<Jid>, JobError> {
        let Some(jid) = self.jid_of(parent) else { return Ok(None) };
        let Err(at) = self.members.binary_search_by_key(&child, |m| m.0) else { return Err(JobError::Busy) };
        if self.members.len() >= self.capacity {
            return Err(JobError::Full);
        }
        self.members.insert(at, (child, jid));
        if let Some(j) = self.job_mut(jid) {
            j.members += 1;
        }
        Ok(Some(jid))
    }

    /// Process `pid` has exited (its last thread) having used `usage`: it leaves its job,
    /// adding its usage. `None` if it was in no job.
    pub fn exit(&mut self, pid: u32, usage: &JobUsage, now_unix_ns: u64) -> Option<Departure> {
        let at = self.members.binary_search_by_key(&pid, |m| m.0).ok()?;
        let jid = self.members[at].1;
        if let Some(j) = self.job_mut(jid) {
            j.add(usage);
        }
        let ended = self.detach(at, now_unix_ns);
        Some(Departure { jid, ended })
    }
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
