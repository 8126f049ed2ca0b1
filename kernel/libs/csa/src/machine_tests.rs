//! The state machine driven the way the kernel drives it, by a fake kernel that keeps each
//! file as bytes on a fake disk and carries out every [`Effects`] list in order — checking
//! on the way that no effect names a file that is not there.

use std::collections::BTreeMap;

use proptest::prelude::*;
use tally_uapi::csa::*;
use tally_uapi::errno::{EINVAL, ENODATA, ENOENT, ENOSPC, EPERM};

use crate::config_record::Uname;
use crate::control::{check_request, Caller, CtlArg, Prepared};
use crate::effects::{Action, Effects, FileId};
use crate::jobs::NewJob;
use crate::parse::{records, Record};
use crate::process::{Continuations, MemoryUsage, ProcessExit, ProcessRecord};
use crate::state::{Csa, CsaConfig, State};

const HOST: u32 = JOB_HOST_ID;
const BOOT_NS: u64 = 1_700_000_000_000_000_000;

/// Where a record went, as the fake kernel saw it.
#[derive(Clone, Debug)]
struct Posted {
    file: FileId,
    bytes: Vec<u8>,
}

struct Kernel {
    csa: Csa,
    /// Files by path.
    disk: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Open files: slot → (cookie, path).
    slots: BTreeMap<FileId, (u64, Vec<u8>)>,
    /// Every post, in order.
    log: Vec<Posted>,
    now: u64,
}

fn root(pid: u32) -> Caller {
    Caller { pid, privileged: true }
}

impl Kernel {
    fn new() -> Kernel {
        let uname = Uname::new(b"Tally", b"tally", b"0.1.0", b"#1", b"x86_64");
        let mut disk = BTreeMap::new();
        for p in ["/var/a", "/var/b"] {
            disk.insert(p.as_bytes().to_vec(), Vec::new());
        }
        for pid in 0..16 {
            disk.insert(format!("/var/ja{pid}").into_bytes(), Vec::new());
        }
        Kernel {
            csa: Csa::new(CsaConfig { host_id: HOST, capacity: 8, uname, boot_unix_ns: BOOT_NS }),
            disk,
            slots: BTreeMap::new(),
            log: Vec::new(),
            now: BOOT_NS,
        }
    }

    fn tick(&mut self) -> u64 {
        self.now += 1_000_000_000;
        self.now
    }

    /// Carry out `fx`; `opened` is the path of the file opened for this request, `daemon`
    /// the bytes of an AC_WRACCT.
    fn apply(&mut self, fx: &Effects, opened: Option<&[u8]>, daemon: Option<&[u8]>) {
        for a in fx.iter() {
            match a {
                Action::Post { file, bytes } => self.post(file, bytes),
                Action::PostDaemonRecord { file } => self.post(file, daemon.expect("a daemon record")),
                Action::Install { file, cookie } => {
                    assert!(!self.slots.contains_key(&file), "install over an open file: {file:?}");
                    self.slots.insert(file, (cookie, opened.expect("a file was opened").to_vec()));
                }
                Action::Close { file } => {
                    assert!(self.slots.remove(&file).is_some(), "close of a file not open: {file:?}");
                }
            }
        }
    }

    fn post(&mut self, file: FileId, bytes: &[u8]) {
        let (_, path) = self.slots.get(&file).unwrap_or_else(|| panic!("post to a file not open: {file:?}")).clone();
        self.disk.get_mut(&path).unwrap().extend_from_slice(bytes);
        self.log.push(Posted { file, bytes: bytes.to_vec() });
    }

    /// `csa_ctl` as the kernel serves it.
    fn ctl(&mut self, request: u32, caller: Caller, arg: CtlArg) -> Result<CtlArg, i32> {
        check_request(request, caller.privileged)?;
        let mut arg = arg;
        let prepared = self.csa.prepare(request, &caller, &arg)?;
        let opened = match prepared {
            Prepared::Ready => None,
            Prepared::Open { path, cookie } => {
                if !self.disk.contains_key(path) {
                    return Err(ENOENT);
                }
                Some((path.to_vec(), cookie))
            }
        };
        let now = self.tick();
        let fx = self.csa.control(request, &caller, &mut arg, opened.as_ref().map(|o| o.1), now)?;
        let daemon = match &arg {
            CtlArg::Wra(w) => w.record().map(<[u8]>::to_vec),
            _ => None,
        };
        self.apply(&fx, opened.as_ref().map(|o| &o.0[..]), daemon.as_deref());
        Ok(arg)
    }

    fn start(&mut self, path: &str, entries: &[(u32, i64)]) -> Result<CtlArg, i32> {
        let mut c = ActCtl { ac_sttnum: entries.len() as i32, ..Default::default() };
        c.set_path(path.as_bytes());
        for (i, (ind, p)) in entries.iter().enumerate() {
            c.ac_stat[i] = ActStat { ac_ind: *ind, ac_state: 0, ac_param: *p };
        }
        self.ctl(AC_START, root(1), CtlArg::Ctl(c))
    }

    fn stop(&mut self, inds: &[u32]) -> Result<CtlArg, i32> {
        let mut c = ActCtl { ac_sttnum: inds.len() as i32, ..Default::default() };
        for (i, ind) in inds.iter().enumerate() {
            c.ac_stat[i].ac_ind = *ind;
        }
        self.ctl(AC_STOP, root(1), CtlArg::Ctl(c))
    }

    fn ja(&mut self, start: bool, pid: u32) -> Result<CtlArg, i32> {
        let mut c = ActCtl::default();
        if start {
            c.set_path(format!("/var/ja{pid}").as_bytes());
        }
        self.ctl(if start { AC_JASTART } else { AC_JASTOP }, Caller { pid, privileged: false }, CtlArg::Ctl(c))
    }

    fn create(&mut self, pid: u32) -> Result<u64, i32> {
        let now = self.tick();
        let (jid, fx) = self.csa.job_create(&NewJob { pid, uid: 1000 + pid, gid: 100, nice: 0, now_unix_ns: now })?;
        self.apply(&fx, None, None);
        Ok(jid)
    }

    fn exit(&mut self, pid: u32, cpu_us: u64, virt_kb: u64) -> Effects {
        let now = self.tick();
        let p = ProcessExit {
            pid,
            ppid: 1,
            utime_ns: cpu_us * 1000,
            stime_ns: 7_000,
            mem: MemoryUsage { virt_hiwater_kb: virt_kb, core_hiwater_kb: virt_kb / 2, ..Default::default() },
            ..Default::default()
        };
        let fx = self.csa.process_exit(&p, now);
        self.apply(&fx, None, None);
        fx
    }

    /// The disk reports a write error on the file in `slot`.
    fn fail(&mut self, slot: FileId) {
        if let Some((cookie, _)) = self.slots.get(&slot).cloned() {
            let fx = self.csa.file_error(cookie, ENOSPC);
            self.apply(&fx, None, None);
        }
    }

    fn file(&self, path: &str) -> Vec<Record<'_>> {
        records(&self.disk[path.as_bytes()]).map(|r| r.expect("every file parses").1).collect()
    }
}

fn cfg_events(recs: &[Record<'_>]) -> Vec<u8> {
    recs.iter()
        .filter_map(|r| match r {
            Record::Cfg(c) => Some(c.event),
            _ => None,
        })
        .collect()
}

#[test]
fn a_session_writes_boot_on_records_and_the_job() {
    let mut k = Kernel::new();
    k.start("/var/a", &[(ACCT_KERN_CSA, 0), (ACCT_RCD_MEM, 0), (ACCT_RCD_IO, 0)]).unwrap();
    let jid = k.create(5).unwrap();
    assert_eq!(jid, 0x7A11_0000_0005);
    k.csa.spawn(5, 6).unwrap();
    assert!(k.exit(9, 1, 1).is_empty(), "a process in no job gets no record");
    k.exit(6, 100, 50);
    k.exit(5, 200, 80);
    let f = k.file("/var/a");
    assert_eq!(cfg_events(&f), [AC_CONFCHG_BOOT, AC_CONFCHG_ON]);
    assert!(matches!(f[0], Record::Cfg(c) if c.kdmask == 0 && c.rmask == 0), "boot: everything was off");
    assert!(matches!(f[1], Record::Cfg(c) if c.kdmask == 1 && c.rmask == 0b11 && c.curtime > c.boottime));
    assert!(matches!(f[2], Record::Soj(s) if s.jid == jid && s.uid == 1005));
    let procs: Vec<&ProcessRecord> = f
        .iter()
        .filter_map(|r| match r {
            Record::Process(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(procs.len(), 2);
    assert!(procs.iter().all(|p| p.continuations() == Continuations(ACCT_MEM | ACCT_IO)));
    match f.last().unwrap() {
        Record::Eoj(e) => {
            assert_eq!((e.jid, e.utime, e.stime, e.virthimem, e.corehimem), (jid, 300, 14, 80, 40));
        }
        r => panic!("the last record is the EOJ, not {r:?}"),
    }
    let c = k.csa.system_counters();
    assert_eq!((c.records, c.bytes), (6, 216 * 2 + 40 + 2 * (136 + 112 + 56) + 120));
}

#[test]
fn stop_halt_and_switch_record_their_change() {
    let mut k = Kernel::new();
    assert_eq!(k.start("", &[(ACCT_KERN_CSA, 0)]), Err(EINVAL), "no file open and none named");
    assert_eq!(k.start("/var/nope", &[(ACCT_KERN_CSA, 0)]), Err(ENOENT));
    k.start("/var/a", &[(ACCT_KERN_CSA, 0), (ACCT_DMD_WKMG, 0)]).unwrap();
    k.start("", &[(ACCT_THD_TIME, 5000)]).unwrap();
    k.start("/var/a", &[(ACCT_RCD_DELAY, 0)]).unwrap();
    assert!(k.csa.system_open());
    k.stop(&[ACCT_KERN_CSA]).unwrap();
    assert!(k.csa.system_open(), "wkmg still needs the file");
    k.start("/var/b", &[(ACCT_KERN_CSA, 0)]).unwrap();
    k.ctl(AC_HALT, root(1), CtlArg::None).unwrap();
    assert!(!k.csa.system_open());
    assert_eq!(k.csa.kdmask() | k.csa.rmask(), 0);
    let a = k.file("/var/a");
    assert_eq!(
        cfg_events(&a),
        [AC_CONFCHG_BOOT, AC_CONFCHG_ON, AC_CONFCHG_ON, AC_CONFCHG_ON, AC_CONFCHG_OFF, AC_CONFCHG_FILE]
    );
    let b = k.file("/var/b");
    assert_eq!(cfg_events(&b), [AC_CONFCHG_ON, AC_CONFCHG_OFF], "one boot record per boot");
    match (&a[2], &a[4]) {
        (Record::Cfg(on), Record::Cfg(off)) => {
            assert_eq!((on.kdmask, on.rmask), (0b101, 1 << (ACCT_THD_TIME - ACCT_RCDS)));
            assert_eq!((off.kdmask, off.rmask), (0b100, 0b10100));
        }
        r => panic!("{r:?}"),
    }
}

#[test]
fn status_requests_answer_in_the_argument() {
    let mut k = Kernel::new();
    k.start("/var/a", &[(ACCT_KERN_CSA, 0), (ACCT_THD_MEM, 1024)]).unwrap();
    let anyone = Caller { pid: 3, privileged: false };
    let CtlArg::Stat(s) =
        k.ctl(AC_CHECK, anyone, CtlArg::Stat(ActStat { ac_ind: ACCT_THD_MEM, ..Default::default() })).unwrap()
    else {
        panic!()
    };
    assert_eq!((s.ac_state, s.ac_param), (ACS_ON, 1024));
    assert_eq!(k.ctl(AC_CHECK, anyone, CtlArg::Stat(ActStat { ac_ind: 5, ..Default::default() })), Err(EINVAL));
    let CtlArg::Ctl(c) = k.ctl(AC_KDSTAT, anyone, CtlArg::Ctl(ActCtl { ac_sttnum: 99, ..Default::default() })).unwrap()
    else {
        panic!()
    };
    assert_eq!(c.ac_sttnum, 5);
    assert_eq!(c.path(), Some(&b"/var/a"[..]));
    assert_eq!((c.ac_stat[0].ac_ind, c.ac_stat[0].ac_state), (0, ACS_ON));
    assert_eq!((c.ac_stat[4].ac_ind, c.ac_stat[4].ac_state), (4, ACS_OFF));
    let CtlArg::Ctl(r) = k.ctl(AC_RCDSTAT, anyone, CtlArg::Ctl(ActCtl { ac_sttnum: 4, ..Default::default() })).unwrap()
    else {
        panic!()
    };
    assert_eq!(r.ac_sttnum, 4);
    assert_eq!(r.ac_stat[3], ActStat { ac_ind: ACCT_THD_MEM, ac_state: ACS_ON, ac_param: 1024 });
    assert_eq!(k.ctl(AC_RCDSTAT, anyone, CtlArg::Ctl(ActCtl::default())), Err(EINVAL), "sttnum 0");
    for req in [AC_START, AC_STOP, AC_HALT, AC_WRACCT, AC_AUTH] {
        assert_eq!(k.ctl(req, anyone, CtlArg::None), Err(EPERM), "request {req}");
    }
    assert_eq!(k.ctl(AC_AUTH, root(1), CtlArg::None).map(|_| ()), Ok(()));
    assert_eq!(k.ctl(AC_MREQ, root(1), CtlArg::None), Err(EINVAL));
    let mut bad = ActCtl { ac_sttnum: 13, ..Default::default() };
    assert_eq!(k.ctl(AC_START, root(1), CtlArg::Ctl(bad)), Err(EINVAL));
    bad.ac_sttnum = 1;
    bad.ac_stat[0].ac_ind = ACCT_MAXKDS;
    assert_eq!(k.ctl(AC_STOP, root(1), CtlArg::Ctl(bad)), Err(EINVAL));
    bad.ac_stat[0].ac_ind = 0;
    bad.ac_path = [b'x'; ACCT_PATH];
    assert_eq!(k.ctl(AC_START, root(1), CtlArg::Ctl(bad)), Err(EINVAL), "a path without its NUL");
}

#[test]
fn ja_gets_everything_of_its_job_and_ends_with_the_eoj() {
    let mut k = Kernel::new();
    k.start("/var/a", &[(ACCT_KERN_CSA, 0), (ACCT_THD_TIME, 1_000_000)]).unwrap();
    assert_eq!(k.ja(true, 5), Err(ENODATA), "not in a job");
    let jid = k.create(5).unwrap();
    k.csa.spawn(5, 6).unwrap();
    k.ja(true, 6).unwrap();
    assert_eq!(k.csa.ja_file(jid).unwrap().state(), State::On);
    k.exit(6, 10, 10);
    k.exit(5, 20, 10);
    assert!(k.csa.ja_file(jid).is_none() && !k.slots.contains_key(&FileId::Ja(jid)), "closed at the job's end");
    let ja = k.file("/var/ja6");
    assert!(matches!(ja[0], Record::Cfg(c) if c.event == AC_CONFCHG_ON && c.kdmask == 1));
    assert_eq!(ja.len(), 4);
    for r in &ja[1..3] {
        assert!(matches!(r, Record::Process(p) if p.continuations() == Continuations::ALL && p.base.jid == jid));
    }
    assert!(matches!(ja[3], Record::Eoj(e) if e.jid == jid && e.utime == 30));
    let sys = k.file("/var/a");
    assert!(!sys.iter().any(|r| matches!(r, Record::Process(_))), "both below the time threshold");
    assert_eq!(k.csa.system_counters().dropped_below_threshold, 2);
    assert!(matches!(sys.last(), Some(Record::Eoj(_))), "thresholds do not apply to EOJ");
    assert!(!cfg_events(&sys).contains(&AC_CONFCHG_ON) || cfg_events(&sys) == [AC_CONFCHG_BOOT, AC_CONFCHG_ON]);
}

#[test]
fn a_write_error_turns_the_file_erroff_and_the_others_carry_on() {
    let mut k = Kernel::new();
    k.start("/var/a", &[(ACCT_KERN_CSA, 0), (ACCT_DMD_WKMG, 0), (ACCT_RCD_IO, 0)]).unwrap();
    let j5 = k.create(5).unwrap();
    let j7 = k.create(7).unwrap();
    k.ja(true, 5).unwrap();
    k.ja(true, 7).unwrap();
    k.fail(FileId::Ja(j5));
    assert_eq!(k.csa.ja_file(j5).unwrap().state(), State::ErrOff);
    assert_eq!(k.csa.ja_counters().errors, 1);
    k.fail(FileId::System);
    assert_eq!(k.csa.setting(ACCT_KERN_CSA).unwrap().state, State::ErrOff);
    assert_eq!(k.csa.setting(ACCT_DMD_WKMG).unwrap().state, State::ErrOff);
    assert_eq!(k.csa.setting(ACCT_DMD_SITE1).unwrap().state, State::Off, "only what was on");
    assert_eq!(k.csa.setting(ACCT_RCD_IO).unwrap().state, State::On, "record kinds are not files");
    assert!(!k.csa.system_open());
    assert_eq!(k.csa.file_error(999, ENOSPC).len(), 0, "a stale cookie changes nothing");
    let before = k.disk[&b"/var/a"[..]].len();
    k.exit(7, 5, 5);
    assert_eq!(k.disk[&b"/var/a"[..]].len(), before, "nothing reaches a closed file");
    assert!(matches!(k.file("/var/ja7").last(), Some(Record::Eoj(e)) if e.jid == j7), "the other ja file carries on");
    // Starting again with a file brings the kinds asked for back.
    k.start("/var/b", &[(ACCT_KERN_CSA, 0)]).unwrap();
    assert_eq!(k.csa.setting(ACCT_KERN_CSA).unwrap().state, State::On);
    assert_eq!(k.csa.setting(ACCT_DMD_WKMG).unwrap().state, State::ErrOff);
    assert_eq!(cfg_events(&k.file("/var/b")), [AC_CONFCHG_ON]);
}

#[test]
fn daemon_records_must_be_whole_and_go_where_csa_says() {
    let mut k = Kernel::new();
    k.start("/var/a", &[(ACCT_DMD_WKMG, 0)]).unwrap();
    let jid = k.create(5).unwrap();
    k.ja(true, 5).unwrap();
    let mut w = ActWra { ac_did: ACCT_DMD_WKMG as i32, ac_len: 16, ac_jid: jid, ..Default::default() };
    w.ac_buf[..2].copy_from_slice(&ACCT_MAGIC.to_le_bytes());
    w.ac_buf[4] = ACCT_DAEMON_WKMG;
    w.ac_buf[6] = 16;
    k.ctl(AC_WRACCT, root(1), CtlArg::Wra(w)).unwrap();
    assert!(
        matches!(k.file("/var/a").last(), Some(Record::Other { header, .. }) if header.ah_type == ACCT_DAEMON_WKMG)
    );
    assert!(matches!(k.file("/var/ja5").last(), Some(Record::Other { .. })));
    let mut forged = w;
    forged.ac_buf[4] = ACCT_KERNEL_EOJ;
    assert_eq!(k.ctl(AC_WRACCT, root(1), CtlArg::Wra(forged)), Err(EINVAL), "no forged kernel records");
    let short = ActWra { ac_len: 20, ..w };
    assert_eq!(k.ctl(AC_WRACCT, root(1), CtlArg::Wra(short)), Err(EINVAL), "sizes must add up");
    let nojob = ActWra { ac_jid: 0x7A11_0000_0063, ..w };
    assert_eq!(k.ctl(AC_WRACCT, root(1), CtlArg::Wra(nojob)), Err(ENODATA));
    let off = ActWra { ac_did: ACCT_DMD_SITE1 as i32, ac_jid: 0, ..w };
    let n = k.disk[&b"/var/a"[..]].len();
    k.ctl(AC_WRACCT, root(1), CtlArg::Wra(off)).unwrap();
    assert_eq!(k.disk[&b"/var/a"[..]].len(), n, "site1 is off");
}

// ---------------------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    Start(Vec<(u32, i64)>, u8),
    Stop(Vec<u32>),
    Halt,
    Create(u32),
    Spawn(u32, u32),
    Exit(u32, u64, u64),
    JaStart(u32),
    JaStop(u32),
    FailSystem,
    FailJa(u32),
}

fn index() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..5, 6u32..13, Just(ACCT_KERN_CSA), Just(ACCT_THD_MEM), Just(ACCT_THD_TIME)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (proptest::collection::vec((index(), 0i64..3000), 1..5), 0u8..3).prop_map(|(e, p)| Op::Start(e, p)),
        proptest::collection::vec(index(), 1..4).prop_map(Op::Stop),
        Just(Op::Halt),
        (1u32..8).prop_map(Op::Create),
        (1u32..8, 1u32..8).prop_map(|(p, c)| Op::Spawn(p, c)),
        (1u32..8, 0u64..3000, 0u64..3000).prop_map(|(p, c, v)| Op::Exit(p, c, v)),
        (1u32..8).prop_map(Op::JaStart),
        (1u32..8).prop_map(Op::JaStop),
        Just(Op::FailSystem),
        (1u32..8).prop_map(Op::FailJa),
    ]
}

/// The records of a post.
fn parsed(bytes: &[u8]) -> Vec<Record<'_>> {
    records(bytes).map(|r| r.unwrap().1).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The invariants of the state machine, over random sessions.
    #[test]
    fn invariants_hold_in_any_session(ops in proptest::collection::vec(op(), 0..60)) {
        let mut k = Kernel::new();
        let mut system_errors = 0u32;
        for o in ops {
            let csa_was_on = k.csa.setting(ACCT_KERN_CSA).unwrap().state == State::On;
            let routing_before: BTreeMap<u32, _> = (1..8).map(|p| (p, k.csa.jobs().jid_of(p).map(|j| k.csa.routing(j)))).collect();
            let logged = k.log.len();
            let system_was_open = k.csa.system_open();
            let mut cfg_expected: Option<u8> = None;
            match &o {
                Op::Start(e, p) => {
                    let path = ["", "/var/a", "/var/b"][*p as usize];
                    if k.start(path, e).is_ok() {
                        cfg_expected = Some(AC_CONFCHG_ON);
                        prop_assert!(k.csa.system_open());
                        for (ind, _) in e {
                            prop_assert_eq!(k.csa.setting(*ind).unwrap().state, State::On);
                        }
                    }
                }
                Op::Stop(i) => {
                    if k.stop(i).is_ok() && system_was_open {
                        cfg_expected = Some(AC_CONFCHG_OFF);
                    }
                }
                Op::Halt => {
                    k.ctl(AC_HALT, root(1), CtlArg::None).unwrap();
                    if system_was_open {
                        cfg_expected = Some(AC_CONFCHG_OFF);
                    }
                    prop_assert!(!k.csa.system_open());
                }
                Op::Create(p) => { let _ = k.create(*p); }
                Op::Spawn(p, c) => { let _ = k.csa.spawn(*p, *c); }
                Op::Exit(p, cpu, virt) => {
                    let in_job = k.csa.jobs().jid_of(*p);
                    let fx = k.exit(*p, *cpu, *virt);
                    if in_job.is_none() {
                        prop_assert!(fx.is_empty(), "a process in no job gets nothing");
                    }
                    if let Some(Some(r)) = routing_before.get(p) {
                        let new = &k.log[logged..];
                        let ja: Vec<_> = new.iter().filter(|x| matches!(x.file, FileId::Ja(_))).collect();
                        // ja: the full chain whatever the thresholds and record kinds.
                        prop_assert_eq!(r.ja_open, ja.iter().any(|x| parsed(&x.bytes).iter().any(|rec| matches!(rec, Record::Process(pr) if pr.continuations() == Continuations::ALL))));
                        let sys_proc: Vec<ProcessRecord> = new.iter().filter(|x| x.file == FileId::System)
                            .flat_map(|x| parsed(&x.bytes).into_iter().filter_map(|rec| match rec { Record::Process(pr) => Some(pr), _ => None }).collect::<Vec<_>>())
                            .collect();
                        let below = r.thd_mem_kb.is_some_and(|t| (*virt as i64) < t) || r.thd_time_us.is_some_and(|t| ((*cpu + 7) as i64) < t);
                        prop_assert_eq!(sys_proc.len(), usize::from(r.csa_on && r.system_open && !below));
                        for pr in sys_proc {
                            prop_assert_eq!(pr.continuations(), r.kinds);
                        }
                    }
                }
                Op::JaStart(p) => { let _ = k.ja(true, *p); }
                Op::JaStop(p) => { let _ = k.ja(false, *p); }
                Op::FailSystem => {
                    if k.csa.system_open() {
                        system_errors += 1;
                    }
                    k.fail(FileId::System);
                    prop_assert!(!k.csa.system_open());
                }
                Op::FailJa(p) => {
                    if let Some(j) = k.csa.jobs().jid_of(*p) {
                        k.fail(FileId::Ja(j));
                        prop_assert!(k.csa.ja_file(j).is_none_or(|f| f.state() == State::ErrOff));
                    }
                }
            }
            // Nothing but CFG records reaches the system file while CSA is not ON (daemon
            // records need their own kind, and this session writes none).
            for x in &k.log[logged..] {
                if x.file == FileId::System {
                    for rec in parsed(&x.bytes) {
                        if matches!(rec, Record::Process(_) | Record::Soj(_) | Record::Eoj(_)) {
                            prop_assert!(csa_was_on, "{rec:?} while CSA was off");
                        }
                    }
                }
                // A ja file gets its own job's records only.
                if let FileId::Ja(j) = x.file {
                    for rec in parsed(&x.bytes) {
                        match rec {
                            Record::Process(pr) => prop_assert_eq!(pr.base.jid, j),
                            Record::Eoj(e) => prop_assert_eq!(e.jid, j),
                            Record::Soj(_) => prop_assert!(false, "no SOJ in a ja file"),
                            _ => {}
                        }
                    }
                }
            }
            // Every change with a file open is recorded, with the state after it.
            if let Some(event) = cfg_expected {
                let last_sys = k.log[logged..].iter().rev().find(|x| x.file == FileId::System);
                let rec = last_sys.map(|x| parsed(&x.bytes)[0]);
                prop_assert!(matches!(rec, Some(Record::Cfg(c)) if c.event == event && c.kdmask == k.csa.kdmask() && c.rmask == k.csa.rmask()), "{o:?}: {rec:?}");
            }
            // ERROFF only after an error.
            let erroff = (0..13).filter_map(|i| k.csa.setting(i)).any(|s| s.state == State::ErrOff);
            prop_assert!(!erroff || system_errors > 0);
            // Every file stays a whole number of well-formed records.
            for bytes in k.disk.values() {
                prop_assert!(records(bytes).all(|r| r.is_ok()));
            }
        }
        // The counters add up to what the files received.
        let sys: u64 = k.log.iter().filter(|x| x.file == FileId::System).map(|x| x.bytes.len() as u64).sum();
        let ja: u64 = k.log.iter().filter(|x| x.file != FileId::System).map(|x| x.bytes.len() as u64).sum();
        prop_assert_eq!(k.csa.system_counters().bytes, sys);
        prop_assert_eq!(k.csa.ja_counters().bytes, ja);
        // The first system file begins with the boot record.
        if let Some(first) = k.log.iter().find(|x| x.file == FileId::System) {
            prop_assert!(matches!(parsed(&first.bytes)[0], Record::Cfg(c) if c.event == AC_CONFCHG_BOOT));
        }
    }

    /// Jobs of many processes with CSA on and one file: every job gets one SOJ before its
    /// records and one EOJ after the record of its last member, with the right sums.
    #[test]
    fn every_job_gets_one_soj_and_one_eoj_with_the_sums(ops in proptest::collection::vec(op(), 0..80)) {
        let mut k = Kernel::new();
        k.start("/var/a", &[(ACCT_KERN_CSA, 0), (ACCT_RCD_MEM, 0)]).unwrap();
        for o in ops {
            match o {
                Op::Create(p) => { let _ = k.create(p); }
                Op::Spawn(p, c) => { let _ = k.csa.spawn(p, c); }
                Op::Exit(p, cpu, virt) => { k.exit(p, cpu, virt); }
                _ => {}
            }
        }
        for p in 1..8 {
            k.exit(p, 1, 1);
        }
        prop_assert_eq!(k.csa.jobs().jobs().count(), 0);
        // Walk the file: per jid, SOJ opens a segment, EOJ closes it.
        let mut open: BTreeMap<u64, (u64, u64, u64, u64)> = BTreeMap::new();
        let mut sojs = 0;
        let mut eojs = 0;
        for rec in k.file("/var/a") {
            match rec {
                Record::Soj(s) => {
                    prop_assert!(open.insert(s.jid, (0, 0, 0, 0)).is_none(), "a second SOJ before the EOJ");
                    sojs += 1;
                }
                Record::Process(pr) => {
                    let t = open.get_mut(&pr.base.jid);
                    prop_assert!(t.is_some(), "a record outside its job's SOJ..EOJ");
                    let t = t.unwrap();
                    let m = pr.mem.unwrap();
                    *t = (t.0 + pr.base.utime, t.1 + pr.base.stime, t.2.max(m.core.himem), t.3.max(m.virt.himem));
                }
                Record::Eoj(e) => {
                    let t = open.remove(&e.jid);
                    prop_assert!(t.is_some(), "an EOJ without its SOJ");
                    prop_assert_eq!(t.unwrap(), (e.utime, e.stime, e.corehimem, e.virthimem));
                    eojs += 1;
                }
                _ => {}
            }
        }
        prop_assert!(open.is_empty(), "a job without its EOJ");
        prop_assert_eq!(sojs, eojs);
    }
}
