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
        JobUsage {
            utime_us: r.base.utime,
            stime_us: r.base.stime,
            core_himem_kb: r.mem.map_or(0, |m| m.core.himem),
            virt_himem_kb: r.mem.map_or(0, |m| m.virt.himem),
        }
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
        self.utime_us = self.utime_us.saturating_add(u.utime_us);
        self.stime_us = self.stime_us.saturating_add(u.stime_us);
        self.core_himem_kb = self.core_himem_kb.max(u.core_himem_kb);
        self.virt_himem_kb = self.virt_himem_kb.max(u.virt_himem_kb);
        self.exited += 1;
    }
}

impl JobEnd {
    /// Its end-of-job record.
    pub fn eoj(&self) -> EojRecord {
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
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    const HOST: u32 = 0x7A11;

    fn new(pid: u32) -> NewJob {
        NewJob { pid, uid: 1000, gid: 100, nice: 0, now_unix_ns: 1_000_000_000 * pid as u64 }
    }

    fn usage(u: u64) -> JobUsage {
        JobUsage { utime_us: u, stime_us: 2 * u, core_himem_kb: u % 7, virt_himem_kb: u % 11 }
    }

    #[test]
    fn a_job_of_three_processes() {
        let mut t = Jobs::new(HOST, 16);
        let c = t.create(&new(5)).unwrap();
        assert_eq!(c.job.jid, 0x7A11_0000_0005);
        assert_eq!(c.ended, None);
        assert_eq!(t.inherit(5, 6), Ok(Some(c.job.jid)));
        assert_eq!(t.inherit(6, 7), Ok(Some(c.job.jid)));
        assert_eq!(t.inherit(99, 100), Ok(None), "a parent in no job has a child in no job");
        assert_eq!(t.jid_of(100), None);
        assert_eq!(t.members(c.job.jid).collect::<Vec<_>>(), [5, 6, 7]);
        assert_eq!(t.exit(7, &usage(10), 7), Some(Departure { jid: c.job.jid, ended: None }));
        assert_eq!(t.exit(100, &usage(1), 7), None);
        assert_eq!(t.exit(5, &usage(3), 8).unwrap().ended, None, "the creator may leave first");
        let end = t.exit(6, &usage(5), 9).unwrap().ended.unwrap();
        assert_eq!(end.job.exited, 3);
        assert_eq!((end.job.utime_us, end.job.stime_us), (18, 36));
        assert_eq!((end.job.core_himem_kb, end.job.virt_himem_kb), (5, 10), "the largest, not the sum");
        let e = end.eoj();
        assert_eq!((e.btime, e.etime, e.uid, e.gid), (5, 0, 1000, 100));
        assert!(t.job(c.job.jid).is_none() && t.member_count() == 0);
    }

    #[test]
    fn a_jid_in_use_is_busy() {
        let mut t = Jobs::new(HOST, 16);
        t.create(&new(5)).unwrap();
        assert_eq!(t.create(&new(5)), Err(JobError::Busy), "the creator again");
        t.inherit(5, 6).unwrap();
        t.exit(5, &usage(1), 0);
        assert_eq!(t.create(&new(5)), Err(JobError::Busy), "pid 5 reused while its job lives on");
        assert_eq!(JobError::Busy.errno(), EBUSY);
    }

    #[test]
    fn creating_a_job_leaves_the_old_one() {
        let mut t = Jobs::new(HOST, 16);
        let a = t.create(&new(5)).unwrap().job.jid;
        t.inherit(5, 6).unwrap();
        let b = t.create(&new(6)).unwrap();
        assert_eq!(b.ended, None, "5 is still in the old job");
        assert_eq!(t.jid_of(6), Some(b.job.jid));
        assert_eq!(t.job(a).unwrap().members, 1);
        t.inherit(5, 8).unwrap();
        t.exit(8, &usage(4), 0);
        assert_eq!(t.create(&new(5)), Err(JobError::Busy), "5's own jid is the job it is in");
        assert_eq!(t.create(&new(6)), Err(JobError::Busy), "6 is in the job it created");
        // 5 leaves by exiting: the old job ends with its members' usage (8's and 5's).
        let end = t.exit(5, &usage(0), 3).unwrap().ended.unwrap();
        assert_eq!((end.job.jid, end.job.exited, end.job.utime_us), (a, 2, 4));
    }

    #[test]
    fn the_last_member_switching_jobs_ends_the_old_job() {
        let mut t = Jobs::new(HOST, 16);
        let a = t.create(&new(5)).unwrap().job.jid;
        t.inherit(5, 6).unwrap();
        t.exit(5, &usage(2), 0);
        let c = t.create(&NewJob { now_unix_ns: 42_000_000_000, ..new(6) }).unwrap();
        let end = c.ended.unwrap();
        assert_eq!((end.job.jid, end.job.exited, end.job.utime_us), (a, 1, 2));
        assert_eq!(end.eoj().etime, 42);
    }

    #[test]
    fn a_full_table_refuses_and_changes_nothing() {
        let mut t = Jobs::new(HOST, 2);
        t.create(&new(1)).unwrap();
        t.inherit(1, 2).unwrap();
        assert_eq!(t.inherit(1, 3), Err(JobError::Full));
        assert_eq!(t.create(&new(4)), Err(JobError::Full));
        assert_eq!(t.inherit(1, 2), Err(JobError::Busy));
        assert_eq!(t.job(jid_of(HOST, 1)).unwrap().members, 2);
        assert_eq!(t.create(&new(2)).map(|c| c.ended), Ok(None), "a member may still switch jobs");
    }

    #[derive(Clone, Debug)]
    enum Op {
        Create(u32),
        Spawn(u32, u32),
        Exit(u32, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..12).prop_map(Op::Create),
            (0u32..12, 0u32..12).prop_map(|(p, c)| Op::Spawn(p, c)),
            (0u32..12, 0u64..1000).prop_map(|(p, u)| Op::Exit(p, u)),
        ]
    }

    /// The obvious model: a map pid → jid and, per job, the list of usages of the
    /// processes that left it by exiting.
    #[derive(Default)]
    struct Model {
        member: BTreeMap<u32, Jid>,
        used: BTreeMap<Jid, Vec<u64>>,
    }

    proptest! {
        #[test]
        fn the_table_agrees_with_a_model(ops in proptest::collection::vec(op(), 0..80)) {
            let mut t = Jobs::new(HOST, 8);
            let mut m = Model::default();
            let mut ended: Vec<Jid> = Vec::new();
            let mut created: Vec<Jid> = Vec::new();
            let expect_end = |m: &mut Model, jid: Jid, end: &JobEnd| {
                let used = m.used.remove(&jid).unwrap();
                assert_eq!(end.job.exited as usize, used.len());
                assert_eq!(end.job.utime_us, used.iter().sum::<u64>());
                assert_eq!(end.job.stime_us, 2 * used.iter().sum::<u64>());
                assert_eq!(end.job.core_himem_kb, used.iter().map(|u| u % 7).max().unwrap_or(0));
                assert_eq!(end.job.virt_himem_kb, used.iter().map(|u| u % 11).max().unwrap_or(0));
            };
            for o in ops {
                match o {
                    Op::Create(p) => {
                        let jid = jid_of(HOST, p);
                        let r = t.create(&new(p));
                        if m.used.contains_key(&jid) {
                            prop_assert_eq!(r, Err(JobError::Busy));
                        } else if !m.member.contains_key(&p) && m.member.len() >= 8 {
                            prop_assert_eq!(r, Err(JobError::Full));
                        } else {
                            let c = r.unwrap();
                            if let Some(old) = m.member.insert(p, jid) {
                                let last = !m.member.values().any(|&j| j == old);
                                prop_assert_eq!(c.ended.is_some(), last);
                                if let Some(e) = c.ended { expect_end(&mut m, old, &e); ended.push(old); }
                            } else {
                                prop_assert!(c.ended.is_none());
                            }
                            m.used.insert(jid, Vec::new());
                            created.push(jid);
                        }
                    }
                    Op::Spawn(p, c) => {
                        let r = t.inherit(p, c);
                        match m.member.get(&p).copied() {
                            None => prop_assert_eq!(r, Ok(None)),
                            Some(_) if m.member.contains_key(&c) => prop_assert_eq!(r, Err(JobError::Busy)),
                            Some(_) if m.member.len() >= 8 => prop_assert_eq!(r, Err(JobError::Full)),
                            Some(j) => { prop_assert_eq!(r, Ok(Some(j))); m.member.insert(c, j); }
                        }
                    }
                    Op::Exit(p, u) => {
                        let r = t.exit(p, &usage(u), 0);
                        match m.member.remove(&p) {
                            None => prop_assert_eq!(r, None),
                            Some(j) => {
                                m.used.get_mut(&j).unwrap().push(u);
                                let d = r.unwrap();
                                prop_assert_eq!(d.jid, j);
                                let last = !m.member.values().any(|&x| x == j);
                                prop_assert_eq!(d.ended.is_some(), last);
                                if let Some(e) = d.ended { expect_end(&mut m, j, &e); ended.push(j); }
                            }
                        }
                    }
                }
                for (pid, jid) in &m.member {
                    prop_assert_eq!(t.jid_of(*pid), Some(*jid));
                }
                prop_assert_eq!(t.member_count(), m.member.len());
                prop_assert_eq!(t.jobs().count(), m.used.len());
            }
            // Only jobs that were created end, each creation ends at most once.
            prop_assert!(ended.iter().all(|j| created.contains(j)));
            prop_assert_eq!(ended.len() + m.used.len(), created.len(), "ended + live = created");
        }
    }
}
