//! Tests of `jobs.rs` (kept apart: lab 9 hands out jobs.rs for editing).

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

#[test]
fn a_process_contributes_its_base_times_and_memory_marks() {
    use crate::process::{BaseRecord, MemInt, MemRecord};
    let mem = MemRecord {
        core: MemInt { himem: 800, mem1: 5, mem2: 0, mem3: 0 },
        virt: MemInt { himem: 4096, mem1: 9, mem2: 0, mem3: 0 },
        minflt: 3,
        majflt: 1,
        ..MemRecord::default()
    };
    let base = BaseRecord { utime: 1234, stime: 567, etime: 99_999, ..BaseRecord::default() };
    let r = ProcessRecord { base, mem: Some(mem), ..ProcessRecord::default() };
    assert_eq!(
        JobUsage::from(&r),
        JobUsage { utime_us: 1234, stime_us: 567, core_himem_kb: 800, virt_himem_kb: 4096 },
        "times from the base record (ac_utime, ac_stime µs, not ac_etime), marks from the memory record (himem KB)"
    );
    let bare = ProcessRecord { base, ..ProcessRecord::default() };
    assert_eq!(
        JobUsage::from(&bare),
        JobUsage { utime_us: 1234, stime_us: 567, core_himem_kb: 0, virt_himem_kb: 0 },
        "without a memory record the marks are 0, the times are still there"
    );
}

#[test]
fn the_eoj_record_carries_the_job_totals() {
    let job = Job {
        jid: 0x7A11_0000_0005,
        uid: 1000,
        gid: 100,
        nice: -5,
        start_unix_ns: 1_700_000_000_999_999_999,
        members: 0,
        exited: 3,
        utime_us: 18,
        stime_us: 36,
        core_himem_kb: 5,
        virt_himem_kb: 10,
    };
    let e = JobEnd { job, end_unix_ns: 1_700_000_042_500_000_000 }.eoj();
    assert_eq!((e.jid, e.uid, e.gid), (0x7A11_0000_0005, 1000, 100), "(jid, uid, gid) of the job");
    assert_eq!((e.btime, e.etime), (1_700_000_000, 1_700_000_042), "start and end in seconds, truncated");
    assert_eq!((e.utime, e.stime), (18, 36), "the summed times, µs");
    assert_eq!((e.corehimem, e.virthimem), (5, 10), "the largest high-water marks, KB");
    assert_eq!(e.nice, 251, "nice -5 in a byte");
    assert_eq!((e.sbu, e.init, e.ash, e.prid, e.spare), (0, 0, 0, 0, 0), "fields CSA leaves 0");
    let low = JobEnd { job: Job { nice: -200, ..job }, end_unix_ns: 0 }.eoj();
    assert_eq!(low.nice, 0x80, "a nice below -128 is clamped to -128 before it is stored in a byte");
}

#[test]
fn times_add_up_and_marks_take_the_largest() {
    let mut t = Jobs::new(HOST, 16);
    let jid = t.create(&new(5)).unwrap().job.jid;
    t.inherit(5, 6).unwrap();
    t.inherit(5, 7).unwrap();
    let a = JobUsage { utime_us: 100, stime_us: 10, core_himem_kb: 300, virt_himem_kb: 9000 };
    let b = JobUsage { utime_us: 20, stime_us: 2, core_himem_kb: 700, virt_himem_kb: 1000 };
    let c = JobUsage { utime_us: 3, stime_us: 1, core_himem_kb: 50, virt_himem_kb: 50 };
    t.exit(6, &a, 0);
    let j = *t.job(jid).unwrap();
    assert_eq!((j.utime_us, j.stime_us, j.exited), (100, 10, 1), "after one exit: (utime, stime, exited)");
    t.exit(7, &b, 0);
    let end = t.exit(5, &c, 0).unwrap().ended.expect("the last member's exit ends the job");
    assert_eq!((end.job.utime_us, end.job.stime_us), (123, 13), "utime 100+20+3, stime 10+2+1");
    assert_eq!(
        (end.job.core_himem_kb, end.job.virt_himem_kb),
        (700, 9000),
        "each mark is the largest of any one process (700 from one, 9000 from another), not a sum"
    );
    assert_eq!(end.job.exited, 3, "three processes left by exiting");
}
