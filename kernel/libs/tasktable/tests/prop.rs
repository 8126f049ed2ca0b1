//! Random sequences of create-process / create-thread / exit / exit_group / wait, with the
//! table's structure and accounting checked after every step against what the public API
//! showed before it.

use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use tally_tasktable::*;
use tally_uapi::errno::{EAGAIN, ECHILD, EINVAL, EPERM, ESRCH};

/// The payload: `work` is what accounting carries; `tag` names the process (stable across
/// pid reuse); `harvested` catches a thread being harvested twice.
#[derive(Debug)]
struct P {
    work: u64,
    tag: u64,
    harvested: bool,
}

type Table = TaskTable<P, u64>;

#[derive(Clone, Debug)]
enum Target {
    Any,
    /// One of the caller's children, if any (else an arbitrary pid).
    Child(Index),
    Pid(i32),
}

#[derive(Clone, Debug)]
enum Op {
    Fork(Index, u64),
    Thread(Index, u64),
    Work(Index, u64),
    Exit(Index, u8),
    ExitGroup(Index, Option<(u8, bool)>),
    Wait(Index, Target, bool),
    /// Wait by a task whose process has children (the interesting case).
    ParentWait(Index, Target, bool),
    Stale(Index),
}

fn op() -> impl Strategy<Value = Op> {
    let work = 0u64..1000;
    prop_oneof![
        4 => (any::<Index>(), work.clone()).prop_map(|(i, w)| Op::Fork(i, w)),
        3 => (any::<Index>(), work.clone()).prop_map(|(i, w)| Op::Thread(i, w)),
        1 => (any::<Index>(), work).prop_map(|(i, w)| Op::Work(i, w)),
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, c)| Op::Exit(i, c)),
        2 => (any::<Index>(), proptest::option::of((1u8..=64, any::<bool>())))
            .prop_map(|(i, s)| Op::ExitGroup(i, s)),
        4 => (
            any::<Index>(),
            prop_oneof![
                Just(Target::Any),
                any::<Index>().prop_map(Target::Child),
                (-2i32..50).prop_map(Target::Pid)
            ],
            any::<bool>()
        )
            .prop_map(|(i, t, n)| Op::Wait(i, t, n)),
        4 => (any::<Index>(), prop_oneof![Just(Target::Any), any::<Index>().prop_map(Target::Child)], any::<bool>())
            .prop_map(|(i, t, n)| Op::ParentWait(i, t, n)),
        1 => any::<Index>().prop_map(Op::Stale),
    ]
}

struct Harness {
    t: Table,
    idle: TaskKey,
    init: TaskKey,
    pid_max: i32,
    reserved: i32,
    last_pid: i32,
    next_tag: u64,
    /// Work harvested per process tag.
    harvested: HashMap<u64, u64>,
    /// What each process's children total must be, from the reaps reported so far.
    children_expect: HashMap<TaskKey, u64>,
    /// Keys that left the table (released threads, reaped processes).
    gone: Vec<TaskKey>,
    /// Sum of all work harvested.
    harvested_all: u64,
}

/// The harvest closure the kernel would pass: records what each thread leaves behind.
fn harvester<'a>(map: &'a mut HashMap<u64, u64>, all: &'a mut u64) -> impl FnMut(&mut P) -> u64 + 'a {
    move |p: &mut P| {
        assert!(!p.harvested, "a thread harvested twice");
        p.harvested = true;
        *map.entry(p.tag).or_default() += p.work;
        *all += p.work;
        p.work
    }
}

impl Harness {
    fn new(pid_max: i32, reserved: i32) -> Self {
        let mut t = Table::with_pid_max(pid_max, reserved).unwrap();
        let idle = t.create_idle(b"idle", P { work: 0, tag: 0, harvested: false }).unwrap();
        let init = t.create_init(b"init", 0, 0, 0, P { work: 0, tag: 1, harvested: false }).unwrap();
        Harness {
            t,
            idle,
            init,
            pid_max,
            reserved,
            last_pid: 1,
            next_tag: 2,
            harvested: HashMap::new(),
            children_expect: HashMap::new(),
            gone: Vec::new(),
            harvested_all: 0,
        }
    }

    fn live_tasks(&self) -> Vec<TaskKey> {
        self.t.iter().filter(|(_, t)| t.exit_state() == ExitState::Live).map(|(k, _)| k).collect()
    }

    fn pick(&self, i: &Index) -> TaskKey {
        let live = self.live_tasks();
        live[i.index(live.len())] // idle and init are always live
    }

    /// A live task whose process has children, if any.
    fn pick_parent(&self, i: &Index) -> TaskKey {
        let parents: Vec<TaskKey> =
            self.live_tasks().into_iter().filter(|&k| !self.t.children(k).unwrap().is_empty()).collect();
        if parents.is_empty() {
            self.pick(i)
        } else {
            parents[i.index(parents.len())]
        }
    }

    fn tag(&self, k: TaskKey) -> u64 {
        let l = self.t.leader(k).unwrap();
        self.t.get(l).unwrap().payload().tag
    }

    /// The pid the allocator must hand out next: the first free one after the last, wrapping
    /// to `reserved`; `None` when there is none.
    fn expected_pid(&self) -> Option<i32> {
        let mut p = self.last_pid;
        for _ in 1..self.pid_max {
            p = if p + 1 >= self.pid_max { self.reserved } else { p + 1 };
            if self.t.lookup(p).is_err() {
                return Some(p);
            }
        }
        None
    }

    fn create(&mut self, who: TaskKey, kind: CreateKind, work: u64) {
        let want = self.expected_pid();
        let tag = match kind {
            CreateKind::Process => self.next_tag,
            CreateKind::Thread => self.tag(who),
        };
        let res = self.t.create(who, kind, 5, P { work, tag, harvested: false });
        if who == self.idle {
            assert_eq!(res.err(), Some(EINVAL));
            return;
        }
        match want {
            None => assert_eq!(res.err(), Some(EAGAIN)),
            Some(pid) => {
                let k = res.expect("create");
                let nt = self.t.get(k).unwrap();
                assert_eq!(nt.pid(), pid, "pids are handed out in order, no early reuse");
                assert_eq!(nt.flags(), AcctFlags::AFORK);
                self.last_pid = pid;
                if kind == CreateKind::Process {
                    self.next_tag += 1;
                    assert_eq!(self.t.parent(k), Ok(Some(self.t.leader(who).unwrap())));
                } else {
                    assert_eq!(self.t.leader(k), self.t.leader(who));
                }
            }
        }
    }

    /// Checks a process death against the state before it.
    fn check_death(
        &self,
        pe: &ProcessExit<u64>,
        parent: Option<TaskKey>,
        kids: &[TaskKey],
        waitable: &BTreeSet<TaskKey>,
    ) {
        assert_eq!(pe.wake_parent, parent);
        assert_eq!(pe.adopted, kids);
        let any_zombie = kids.iter().any(|k| waitable.contains(k));
        assert_eq!(pe.wake_init, any_zombie.then_some(self.init));
        assert_eq!(pe.total, self.harvested[&self.t.get(pe.leader).unwrap().payload().tag]);
        assert_eq!(self.t.is_waitable(pe.leader), Ok(true));
    }

    fn waitable_set(&self) -> BTreeSet<TaskKey> {
        self.t.iter().filter(|(k, t)| t.is_leader() && self.t.is_waitable(*k) == Ok(true)).map(|(k, _)| k).collect()
    }

    fn exit(&mut self, who: TaskKey, group: bool, status: ExitStatus) {
        let leader = self.t.leader(who).unwrap();
        let members = self.t.threads(who).unwrap().to_vec();
        let parent = self.t.parent(who).unwrap();
        let kids = self.t.children(who).unwrap().to_vec();
        let waitable = self.waitable_set();
        let tgid = self.t.get(who).unwrap().tgid();
        let h = harvester(&mut self.harvested, &mut self.harvested_all);
        let res = if group { self.t.exit_group(who, status, h) } else { self.t.exit(who, status, h) };
        let forbidden = who == self.idle || (tgid == 1 && (group || members == [who]));
        if forbidden {
            assert_eq!(res.err(), Some(EPERM));
            return;
        }
        let rep = res.expect("exit");
        let ended: Vec<TaskKey> = if group { members.clone() } else { vec![who] };
        let killed: Vec<TaskKey> = if group { members.iter().copied().filter(|&m| m != who).collect() } else { vec![] };
        assert_eq!(rep.killed, killed);
        let mut released: Vec<TaskKey> = rep.released.iter().map(|r| r.key).collect();
        released.sort();
        let mut want: Vec<TaskKey> = ended.iter().copied().filter(|&k| k != leader).collect();
        want.sort();
        assert_eq!(released, want, "exactly the ended non-leaders leave the table");
        for r in &rep.released {
            assert!(r.payload.harvested);
            self.gone.push(r.key);
        }
        let dies = if group { true } else { members == [who] };
        assert_eq!(rep.process.is_some(), dies);
        if let Some(pe) = &rep.process {
            assert_eq!(pe.leader, leader);
            if group {
                assert_eq!(pe.status, status);
            }
            self.check_death(pe, parent, &kids, &waitable);
        }
        if group {
            assert_eq!(self.t.process_status(leader), Ok(Some(status)));
        }
    }

    fn wait(&mut self, who: TaskKey, target: &Target, nohang: bool) {
        let proc = self.t.leader(who).unwrap();
        let kids = self.t.children(who).unwrap().to_vec();
        let which = match target {
            Target::Any => WaitFor::Any,
            Target::Pid(p) => WaitFor::Pid(*p),
            Target::Child(i) if kids.is_empty() => WaitFor::Pid(i.index(60) as i32 - 2),
            Target::Child(i) => WaitFor::Pid(self.t.get(kids[i.index(kids.len())]).unwrap().pid()),
        };
        let candidates: Vec<TaskKey> = match which {
            WaitFor::Any => kids.clone(),
            WaitFor::Pid(p) => kids.iter().copied().filter(|&k| self.t.get(k).unwrap().pid() == p).collect(),
            WaitFor::Group(_) => unreachable!("process groups are tested in src/jobs.rs"),
        };
        let ready: Vec<TaskKey> = candidates.iter().copied().filter(|&k| self.t.is_waitable(k) == Ok(true)).collect();
        let expect_total = ready.first().map(|&k| {
            (self.harvested.get(&self.tag(k)).copied().unwrap_or(0), self.children_expect.get(&k).copied().unwrap_or(0))
        });
        let res = self.t.wait(who, which, nohang);
        match (which, res) {
            (WaitFor::Pid(p), Err(e)) if p <= 0 => assert_eq!(e, EINVAL),
            (_, Err(e)) => {
                assert_eq!(e, ECHILD);
                assert!(candidates.is_empty());
            }
            (_, Ok(WaitOutcome::NotReady)) => {
                assert!(nohang && !candidates.is_empty() && ready.is_empty());
            }
            (_, Ok(WaitOutcome::Sleep { queue })) => {
                assert!(!nohang && !candidates.is_empty() && ready.is_empty());
                assert_eq!(queue, proc);
            }
            (_, Ok(WaitOutcome::Job { .. })) => panic!("a stop or continue reported without WUNTRACED/WCONTINUED"),
            (_, Ok(WaitOutcome::Reaped(r))) => {
                assert!(ready.contains(&r.key), "reaped a waitable matching child");
                let (total, children) = expect_total.unwrap();
                if ready[0] == r.key {
                    assert_eq!((r.total, r.children_total), (total, children));
                }
                assert_eq!(r.total, self.harvested.get(&r.payload.tag).copied().unwrap_or(0));
                assert_eq!(r.children_total, self.children_expect.remove(&r.key).unwrap_or(0));
                assert!(r.payload.harvested);
                *self.children_expect.entry(proc).or_default() += r.total + r.children_total;
                self.gone.push(r.key);
            }
        }
    }

    fn step(&mut self, op: &Op) {
        match op {
            Op::Fork(i, w) => self.create(self.pick(i), CreateKind::Process, *w),
            Op::Thread(i, w) => self.create(self.pick(i), CreateKind::Thread, *w),
            Op::Work(i, w) => {
                let k = self.pick(i);
                self.t.get_mut(k).unwrap().payload_mut().work += w;
            }
            Op::Exit(i, c) => self.exit(self.pick(i), false, ExitStatus::exited(i32::from(*c))),
            Op::ExitGroup(i, s) => {
                let st = match s {
                    None => ExitStatus::exited(0),
                    Some((sig, core)) => ExitStatus::signaled(*sig, *core).unwrap(),
                };
                self.exit(self.pick(i), true, st)
            }
            Op::Wait(i, target, nohang) => self.wait(self.pick(i), target, *nohang),
            Op::ParentWait(i, target, nohang) => self.wait(self.pick_parent(i), target, *nohang),
            Op::Stale(i) => {
                if self.gone.is_empty() {
                    return;
                }
                let k = self.gone[i.index(self.gone.len())];
                assert_eq!(self.t.get(k).err(), Some(ESRCH));
                assert_eq!(
                    self.t.create(k, CreateKind::Process, 0, P { work: 0, tag: 0, harvested: false }).err(),
                    Some(ESRCH)
                );
                assert_eq!(self.t.wait(k, WaitFor::Any, true).err(), Some(ESRCH));
                let h = harvester(&mut self.harvested, &mut self.harvested_all);
                assert_eq!(self.t.exit(k, ExitStatus::exited(0), h).err(), Some(ESRCH));
            }
        }
        self.check();
    }

    /// The structural invariants and the accounting conservation laws.
    fn check(&self) {
        let t = &self.t;
        let all: Vec<(TaskKey, &Task<P, u64>)> = t.iter().collect();
        assert_eq!(all.len(), t.len());
        for &(k, task) in &all {
            assert_eq!(t.lookup(task.pid()), Ok(k), "pid map agrees");
            assert_eq!(task.payload().harvested, task.exit_state() == ExitState::Zombie);
            if !task.is_leader() {
                assert_eq!(task.exit_state(), ExitState::Live, "non-leaders are never zombies");
                let l = t.leader(k).unwrap();
                assert!(t.get(l).unwrap().is_leader());
                assert_eq!(t.get(l).unwrap().tgid(), task.tgid());
                assert!(t.threads(l).unwrap().contains(&k));
                continue;
            }
            // Leaders: the process.
            assert_eq!(task.tgid(), task.pid());
            let threads = t.threads(k).unwrap();
            let live_with_tgid: BTreeSet<TaskKey> = all
                .iter()
                .filter(|(_, x)| x.exit_state() == ExitState::Live && x.tgid() == task.tgid())
                .map(|(k, _)| *k)
                .collect();
            let set: BTreeSet<TaskKey> = threads.iter().copied().collect();
            assert_eq!(set.len(), threads.len(), "no duplicate members");
            assert_eq!(set, live_with_tgid, "member list == live tasks with this tgid");
            assert_eq!(threads.contains(&k), task.exit_state() == ExitState::Live);
            let dead = threads.is_empty();
            assert_eq!(t.is_waitable(k), Ok(dead));
            assert_eq!(t.process_status(k).unwrap().is_some(), dead);
            match t.parent(k).unwrap() {
                None => assert!(task.pid() == 0 || task.pid() == 1),
                Some(p) => {
                    assert!(task.pid() > 1);
                    let pt = t.get(p).expect("parent exists");
                    assert!(pt.is_leader());
                    assert!(!t.threads(p).unwrap().is_empty(), "a parent is a live process");
                    assert_eq!(t.children(p).unwrap().iter().filter(|&&c| c == k).count(), 1);
                    assert_eq!(t.ppid(k), Ok(pt.pid()));
                }
            }
            let kids = t.children(k).unwrap();
            assert_eq!(kids.iter().collect::<BTreeSet<_>>().len(), kids.len());
            if dead {
                assert!(kids.is_empty(), "a dead process has handed its children to init");
            }
            for &c in kids {
                assert!(t.get(c).unwrap().is_leader());
                assert_eq!(t.parent(c), Ok(Some(k)));
            }
            // Accounting: dead threads' totals and reaped children's totals.
            assert_eq!(*t.dead_total(k).unwrap(), self.harvested.get(&task.payload().tag).copied().unwrap_or(0));
            assert_eq!(*t.children_total(k).unwrap(), self.children_expect.get(&k).copied().unwrap_or(0));
        }
        for &g in &self.gone {
            assert_eq!(t.get(g).err(), Some(ESRCH), "reaped is unreachable");
        }
    }

    /// Kill everything but init, let init reap it all, and check the table is back to its
    /// baseline and no number was lost on the way.
    fn drain(&mut self) {
        loop {
            let victim = self.t.iter().find(|(_, x)| x.tgid() > 1 && x.exit_state() == ExitState::Live).map(|(k, _)| k);
            let Some(v) = victim else { break };
            self.exit(v, true, ExitStatus::exited(1));
            self.check();
        }
        // Init's extra threads: keep the leader if it lives, else one thread.
        let mut extra: Vec<TaskKey> = self.t.threads(self.init).unwrap().to_vec();
        extra.retain(|&k| k != self.init);
        if self.t.get(self.init).unwrap().exit_state() == ExitState::Zombie {
            extra.pop();
        }
        for k in extra {
            self.exit(k, false, ExitStatus::exited(0));
            self.check();
        }
        let reaper = self.t.threads(self.init).unwrap()[0];
        while !self.t.children(self.init).unwrap().is_empty() {
            let before = self.t.len();
            self.wait(reaper, &Target::Any, true);
            self.check();
            assert_eq!(self.t.len(), before - 1, "every child of init is dead by now");
        }
        assert_eq!(self.t.wait(reaper, WaitFor::Any, false).err(), Some(ECHILD));
        let init_zombie = self.t.get(self.init).unwrap().exit_state() == ExitState::Zombie;
        assert_eq!(self.t.len(), if init_zombie { 3 } else { 2 }, "back to baseline");
        assert!(self.t.get(self.idle).is_ok());
        // Conservation: every unit of work ever harvested is in init's totals.
        let init_sum = self.t.children_total(self.init).unwrap() + self.t.dead_total(self.init).unwrap();
        assert_eq!(init_sum, self.harvested_all);
        assert_eq!(*self.t.dead_total(self.idle).unwrap(), 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_process_lives_keep_the_table_consistent(
        limits in prop_oneof![Just((12, 2)), Just((16, 5)), Just((40, 1)), Just((PID_MAX_DEFAULT, RESERVED_PIDS))],
        ops in proptest::collection::vec(op(), 1..80),
    ) {
        let mut h = Harness::new(limits.0, limits.1);
        h.check();
        for op in &ops {
            h.step(op);
        }
        h.drain();
    }
}
