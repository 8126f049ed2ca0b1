//! One test per rule of the task table, through the public API only.

use tally_tasktable::*;
use tally_uapi::errno::{EAGAIN, ECHILD, EEXIST, EINVAL, EPERM, ESRCH};

/// Test payload: a task's "work" is the number the accumulators carry.
#[derive(Debug, PartialEq)]
struct P(u64);

type Table = TaskTable<P, u64>;

fn harvest(p: &mut P) -> u64 {
    p.0
}

fn ok(code: i32) -> ExitStatus {
    ExitStatus::exited(code)
}

/// idle (pid 0) + init (pid 1).
fn boot() -> (Table, TaskKey, TaskKey) {
    let mut t = Table::new();
    let idle = t.create_idle(b"swapper", P(0)).unwrap();
    let init = t.create_init(b"init", 0, 0, 0, P(0)).unwrap();
    (t, idle, init)
}

fn fork(t: &mut Table, parent: TaskKey, work: u64) -> TaskKey {
    t.create(parent, CreateKind::Process, 0, P(work)).unwrap()
}

fn thread(t: &mut Table, of: TaskKey, work: u64) -> TaskKey {
    t.create(of, CreateKind::Thread, 0, P(work)).unwrap()
}

fn pid_of(t: &Table, k: TaskKey) -> i32 {
    t.get(k).unwrap().pid()
}

fn reaped(o: WaitOutcome<P, u64>) -> Reaped<P, u64> {
    match o {
        WaitOutcome::Reaped(r) => r,
        other => panic!("expected a reap, got {other:?}"),
    }
}

#[test]
fn pids_start_at_init_and_ids_are_linked() {
    let (mut t, idle, init) = boot();
    assert_eq!((t.get(idle).unwrap().pid(), t.get(init).unwrap().pid()), (0, 1));
    let a = fork(&mut t, init, 0);
    let a2 = thread(&mut t, a, 0);
    let a3 = thread(&mut t, a2, 0); // a thread made by a thread joins the same process
    let ta = t.get(a).unwrap();
    assert_eq!((ta.pid(), ta.tgid()), (2, 2));
    assert_eq!((t.get(a2).unwrap().pid(), t.get(a2).unwrap().tgid()), (3, 2));
    assert_eq!(t.get(a3).unwrap().tgid(), 2);
    assert_eq!(t.leader(a3), Ok(a));
    assert_eq!(t.threads(a3).unwrap(), &[a, a2, a3]);
    assert_eq!(t.ppid(a3), Ok(1), "a thread's parent is its process's parent");
    assert_eq!(t.ppid(init), Ok(0));
    assert_eq!(t.children(init).unwrap(), &[a], "threads are not children");
    assert_eq!(t.lookup(3), Ok(a2));
    assert_eq!(t.lookup(99), Err(ESRCH));
    // A process made by a thread is a child of the process.
    let b = fork(&mut t, a3, 0);
    assert_eq!(t.parent(b), Ok(Some(a)));
    assert_eq!(t.children(a2).unwrap(), &[b]);
}

#[test]
fn roots_and_creators_are_checked() {
    let (mut t, idle, init) = boot();
    assert_eq!(t.create_init(b"init", 0, 0, 0, P(0)), Err(EEXIST));
    assert_eq!(t.create_idle(b"idle", P(0)), Err(EEXIST));
    assert_eq!(t.create(idle, CreateKind::Process, 0, P(0)), Err(EINVAL));
    let a = fork(&mut t, init, 0);
    t.exit(a, ok(0), harvest).unwrap();
    assert_eq!(t.create(a, CreateKind::Thread, 0, P(0)), Err(ESRCH), "zombie cannot create");
    assert_eq!(Table::with_pid_max(10, 0).err(), Some(EINVAL));
    assert_eq!(Table::with_pid_max(10, 10).err(), Some(EINVAL));
}

#[test]
fn identity_is_inherited_and_flags_follow_the_rules() {
    let (mut t, _, init) = boot();
    t.get_mut(init).unwrap().set_ids(1000, 100);
    t.get_mut(init).unwrap().set_comm(b"a-very-long-command-name");
    let a = t.create(init, CreateKind::Process, 777, P(0)).unwrap();
    let ta = t.get(a).unwrap();
    assert_eq!(ta.comm_str(), b"a-very-long-com");
    assert_eq!((ta.uid(), ta.gid(), ta.begin_time()), (1000, 100, 777));
    assert_eq!(ta.flags(), AcctFlags::AFORK);
    assert_eq!(ta.exit_state(), ExitState::Live);
    t.get_mut(a).unwrap().note_superuser();
    t.get_mut(a).unwrap().exec(b"ls");
    let ta = t.get(a).unwrap();
    assert_eq!(ta.flags(), AcctFlags::ASU);
    assert_eq!(ta.comm_str(), b"ls");
    // Children of a task that used privilege do not inherit ASU.
    let b = fork(&mut t, a, 0);
    assert_eq!(t.get(b).unwrap().flags(), AcctFlags::AFORK);
    t.exit_group(b, ExitStatus::signaled(11, true).unwrap(), harvest).unwrap();
    let f = t.get(b).unwrap().flags();
    assert!(f.contains(AcctFlags::AXSIG) && f.contains(AcctFlags::ACORE));
    let c = fork(&mut t, a, 0);
    t.exit(c, ExitStatus::signaled(9, false).unwrap(), harvest).unwrap();
    assert_eq!(t.get(c).unwrap().flags().bits(), 0x01 | 0x10);
}

#[test]
fn a_non_leader_thread_is_reaped_by_its_own_exit() {
    let (mut t, _, init) = boot();
    let a = fork(&mut t, init, 0);
    let a2 = thread(&mut t, a, 7);
    let len = t.len();
    let r = t.exit(a2, ok(3), harvest).unwrap();
    assert!(r.killed.is_empty());
    assert!(r.process.is_none(), "the process lives on; the parent is not woken");
    assert_eq!(r.released.len(), 1);
    assert_eq!((r.released[0].key, r.released[0].pid), (a2, 3));
    assert_eq!(r.released[0].payload, P(7));
    assert_eq!(t.len(), len - 1);
    assert_eq!(t.get(a2).err(), Some(ESRCH));
    assert_eq!(t.lookup(3), Err(ESRCH));
    assert_eq!(t.threads(a).unwrap(), &[a]);
    assert_eq!(t.dead_total(a), Ok(&7));
    assert_eq!(t.process_parts(a), Ok((&7, &[a][..])));
    assert!(matches!(t.wait(init, WaitFor::Any, true), Ok(WaitOutcome::NotReady)));
    assert_eq!(t.wait(init, WaitFor::Pid(3), true).err(), Some(ECHILD));
}

#[test]
fn the_leader_stays_a_zombie_until_the_last_thread_exits() {
    let (mut t, _, init) = boot();
    let a = fork(&mut t, init, 1);
    let a2 = thread(&mut t, a, 10);
    let a3 = thread(&mut t, a, 100);
    let r = t.exit(a, ok(5), harvest).unwrap();
    assert!(r.released.is_empty() && r.process.is_none());
    assert_eq!(t.get(a).unwrap().exit_state(), ExitState::Zombie);
    assert_eq!(t.is_waitable(a), Ok(false));
    assert_eq!(t.process_status(a), Ok(None));
    assert_eq!(t.threads(a).unwrap(), &[a2, a3]);
    assert!(matches!(t.wait(init, WaitFor::Pid(2), true), Ok(WaitOutcome::NotReady)));
    match t.wait(init, WaitFor::Any, false) {
        Ok(WaitOutcome::Sleep { queue }) => assert_eq!(queue, init),
        other => panic!("{other:?}"),
    }
    // The process can still create: its threads live.
    let a4 = thread(&mut t, a3, 1000);
    t.exit(a2, ok(6), harvest).unwrap();
    t.exit(a4, ok(6), harvest).unwrap();
    let r = t.exit(a3, ok(7), harvest).unwrap();
    let p = r.process.expect("last thread ends the process");
    assert_eq!(p.leader, a);
    assert_eq!(p.tgid, 2);
    assert_eq!(p.wake_parent, Some(init));
    assert_eq!(p.status, ok(5), "the process's status is the leader's, not the last thread's");
    assert_eq!(p.total, 1111);
    assert_eq!(t.is_waitable(a), Ok(true));
    let r = reaped(t.wait(init, WaitFor::Any, false).unwrap());
    assert_eq!((r.key, r.pid, r.status, r.payload, r.total), (a, 2, ok(5), P(1), 1111));
    assert_eq!(t.children_total(init), Ok(&1111));
    assert_eq!(t.get(a).err(), Some(ESRCH));
    assert_eq!(t.len(), 2);
}

#[test]
fn wait_any_pid_nohang_and_echild() {
    let (mut t, _, init) = boot();
    assert_eq!(t.wait(init, WaitFor::Any, true).err(), Some(ECHILD));
    assert_eq!(t.wait(init, WaitFor::Any, false).err(), Some(ECHILD));
    let a = fork(&mut t, init, 0);
    let b = fork(&mut t, init, 0);
    let c = fork(&mut t, a, 0); // a grandchild is not init's child
    assert_eq!(t.wait(init, WaitFor::Pid(t.get(c).unwrap().pid()), true).err(), Some(ECHILD));
    assert_eq!(t.wait(init, WaitFor::Pid(0), true).err(), Some(EINVAL));
    assert_eq!(t.wait(init, WaitFor::Pid(-1), true).err(), Some(EINVAL));
    assert_eq!(t.wait(init, WaitFor::Pid(12345), true).err(), Some(ECHILD));
    assert!(matches!(t.wait(init, WaitFor::Any, true), Ok(WaitOutcome::NotReady)));
    t.exit(b, ok(2), harvest).unwrap();
    // Waiting for a specific live child does not reap another, dead one.
    assert!(matches!(t.wait(init, WaitFor::Pid(2), true), Ok(WaitOutcome::NotReady)));
    let r = reaped(t.wait(init, WaitFor::Pid(3), true).unwrap());
    assert_eq!((r.pid, r.status.raw()), (3, 0x200));
    assert_eq!(t.wait(init, WaitFor::Pid(3), true).err(), Some(ECHILD), "reaped only once");
    t.exit(a, ok(1), harvest).unwrap();
    let r = reaped(t.wait(init, WaitFor::Any, false).unwrap());
    assert_eq!(r.pid, 2);
    // c was orphaned by a's death and is now init's child.
    assert_eq!(t.children(init).unwrap(), &[c]);
    // Stale or dead callers.
    assert_eq!(t.wait(a, WaitFor::Any, true).err(), Some(ESRCH));
}

#[test]
fn any_thread_of_the_parent_may_reap() {
    let (mut t, _, init) = boot();
    let p = fork(&mut t, init, 0);
    let p2 = thread(&mut t, p, 0);
    let c = fork(&mut t, p, 0);
    assert!(matches!(t.wait(p2, WaitFor::Any, false), Ok(WaitOutcome::Sleep { queue }) if queue == p));
    let e = t.exit(c, ok(9), harvest).unwrap();
    assert_eq!(e.process.unwrap().wake_parent, Some(p));
    let r = reaped(t.wait(p2, WaitFor::Any, false).unwrap());
    assert_eq!((r.key, wexitstatus(r.status.raw())), (c, 9));
    // Even after the leader has exited, the remaining thread still waits for the process.
    let d = fork(&mut t, p2, 0);
    t.exit(p, ok(0), harvest).unwrap();
    t.exit(d, ok(4), harvest).unwrap();
    assert_eq!(reaped(t.wait(p2, WaitFor::Any, true).unwrap()).key, d);
}

#[test]
fn orphans_go_to_init_and_zombie_orphans_wake_it() {
    let (mut t, _, init) = boot();
    let p = fork(&mut t, init, 0);
    let live = fork(&mut t, p, 0);
    let dead = fork(&mut t, p, 3);
    let dead2 = thread(&mut t, dead, 4);
    t.exit(dead, ok(1), harvest).unwrap();
    t.exit(dead2, ok(1), harvest).unwrap();
    assert_eq!(t.is_waitable(dead), Ok(true));
    let e = t.exit(p, ok(0), harvest).unwrap();
    let pe = e.process.unwrap();
    assert_eq!(pe.adopted, [live, dead]);
    assert_eq!(pe.wake_init, Some(init));
    assert_eq!(pe.wake_parent, Some(init));
    assert_eq!(t.parent(live), Ok(Some(init)));
    assert_eq!(t.ppid(dead), Ok(1));
    assert_eq!(t.children(p).unwrap(), &[] as &[TaskKey]);
    assert_eq!(t.children(init).unwrap(), &[p, live, dead]);
    let mut got = vec![];
    while let Ok(WaitOutcome::Reaped(r)) = t.wait(init, WaitFor::Any, true) {
        got.push(r.key);
    }
    assert_eq!(got, [p, dead]);
    assert_eq!(t.children_total(init), Ok(&7));
    // When no adopted child is a zombie, init is not woken.
    let q = fork(&mut t, live, 0);
    let e = t.exit(live, ok(0), harvest).unwrap();
    assert_eq!(e.process.unwrap().wake_init, None);
    assert_eq!(t.parent(q), Ok(Some(init)));
}

#[test]
fn exit_group_kills_every_thread() {
    let (mut t, _, init) = boot();
    let a = fork(&mut t, init, 1);
    let a2 = thread(&mut t, a, 10);
    let a3 = thread(&mut t, a, 100);
    let a4 = thread(&mut t, a, 1000);
    let st = ExitStatus::exited(42);
    let mut harvested = vec![];
    let e = t
        .exit_group(a3, st, |p: &mut P| {
            harvested.push(p.0);
            p.0
        })
        .unwrap();
    harvested.sort();
    assert_eq!(harvested, [1, 10, 100, 1000], "each thread harvested exactly once");
    assert_eq!(e.killed, [a, a2, a4]);
    let mut rel: Vec<_> = e.released.iter().map(|r| r.key).collect();
    rel.sort();
    let mut want = vec![a2, a3, a4];
    want.sort();
    assert_eq!(rel, want, "all but the leader leave the table");
    let p = e.process.unwrap();
    assert_eq!((p.status, p.total, p.wake_parent), (st, 1111, Some(init)));
    assert_eq!(t.threads(a).unwrap().len(), 0);
    assert_eq!(t.get(a).unwrap().exit_status(), Some(st));
    let r = reaped(t.wait(init, WaitFor::Any, true).unwrap());
    assert_eq!((r.pid, r.status, r.total), (2, st, 1111));
    assert_eq!(t.len(), 2);
}

#[test]
fn exit_group_status_overrides_an_earlier_leader_exit() {
    let (mut t, _, init) = boot();
    let a = fork(&mut t, init, 0);
    let a2 = thread(&mut t, a, 0);
    t.exit(a, ok(0), harvest).unwrap();
    let sig = ExitStatus::signaled(15, false).unwrap();
    let e = t.exit_group(a2, sig, harvest).unwrap();
    assert!(e.killed.is_empty(), "the zombie leader is not killed again");
    assert_eq!(e.process.unwrap().status, sig);
    assert_eq!(t.process_status(a), Ok(Some(sig)));
    let r = reaped(t.wait(init, WaitFor::Pid(2), true).unwrap());
    assert!(wifsignaled(r.status.raw()) && wtermsig(r.status.raw()) == 15);
}

#[test]
fn init_and_idle_cannot_die_and_double_exit_is_an_error() {
    let (mut t, idle, init) = boot();
    assert_eq!(t.exit(idle, ok(0), harvest).err(), Some(EPERM));
    assert_eq!(t.exit(init, ok(0), harvest).err(), Some(EPERM));
    assert_eq!(t.exit_group(init, ok(0), harvest).err(), Some(EPERM));
    assert_eq!(t.exit_group(idle, ok(0), harvest).err(), Some(EPERM));
    // Init's extra threads may exit, even its leader, but not the last thread.
    let i2 = thread(&mut t, init, 0);
    let i3 = thread(&mut t, init, 0);
    t.exit(i2, ok(0), harvest).unwrap();
    assert_eq!(t.exit_group(i3, ok(0), harvest).err(), Some(EPERM));
    t.exit(init, ok(0), harvest).unwrap();
    assert_eq!(t.exit(i3, ok(0), harvest).err(), Some(EPERM));
    // The zombie init leader still adopts orphans.
    let a = fork(&mut t, i3, 0);
    let b = fork(&mut t, a, 0);
    t.exit(a, ok(0), harvest).unwrap();
    assert_eq!(t.parent(b), Ok(Some(init)));
    assert_eq!(t.ppid(b), Ok(1));
    // Double exit: a leader is a zombie, a thread is gone.
    assert_eq!(t.exit(a, ok(0), harvest).err(), Some(ESRCH));
    assert_eq!(t.exit_group(a, ok(0), harvest).err(), Some(ESRCH));
    assert_eq!(t.exit(i2, ok(0), harvest).err(), Some(ESRCH));
    assert_eq!(t.exit_group(i2, ok(0), harvest).err(), Some(ESRCH));
}

#[test]
fn stale_keys_never_reach_the_new_occupant() {
    let (mut t, _, init) = boot();
    let a = fork(&mut t, init, 0);
    let a2 = thread(&mut t, a, 0);
    t.exit(a2, ok(0), harvest).unwrap();
    let b = fork(&mut t, init, 0); // likely reuses a2's slot
    assert_eq!(b.index(), a2.index(), "slot reused (most recent first)");
    assert_ne!(a2, b);
    assert!(t.get(a2).is_err() && t.get_mut(a2).is_err());
    assert_eq!(t.leader(a2), Err(ESRCH));
    assert_eq!(t.threads(a2).err(), Some(ESRCH));
    assert_eq!(t.create(a2, CreateKind::Thread, 0, P(0)).err(), Some(ESRCH));
    assert_eq!(t.wait(a2, WaitFor::Any, true).err(), Some(ESRCH));
    assert_eq!(t.exit(a2, ok(0), harvest).err(), Some(ESRCH));
    assert_eq!(t.threads(b).unwrap(), &[b]);
}

#[test]
fn pids_are_not_reused_until_wrap_and_run_out_with_eagain() {
    let mut t: Table = TaskTable::with_pid_max(8, 3).unwrap();
    let init = t.create_init(b"init", 0, 0, 0, P(0)).unwrap();
    let a = fork(&mut t, init, 0); // 2
    t.exit(a, ok(0), harvest).unwrap();
    reaped(t.wait(init, WaitFor::Any, true).unwrap());
    let pids: Vec<i32> = (0..5)
        .map(|_| {
            let k = fork(&mut t, init, 0);
            pid_of(&t, k)
        })
        .collect();
    assert_eq!(pids, [3, 4, 5, 6, 7], "pid 2 is free but not handed out again");
    assert_eq!(t.create(init, CreateKind::Thread, 0, P(0)).err(), Some(EAGAIN));
    // Free 5 and 4: after the wrap, the lowest free pid at or above `reserved` comes first.
    for pid in [5, 4] {
        let k = t.lookup(pid).unwrap();
        t.exit(k, ok(0), harvest).unwrap();
    }
    // Zombies still hold their pids.
    assert_eq!(t.create(init, CreateKind::Process, 0, P(0)).err(), Some(EAGAIN));
    while let Ok(WaitOutcome::Reaped(_)) = t.wait(init, WaitFor::Any, true) {}
    let k = fork(&mut t, init, 0);
    assert_eq!(pid_of(&t, k), 4);
    let k = thread(&mut t, init, 0);
    assert_eq!(pid_of(&t, k), 5);
    assert_eq!(t.create(init, CreateKind::Process, 0, P(0)).err(), Some(EAGAIN));
}

#[test]
fn dead_thread_totals_and_live_sums_add_up() {
    let (mut t, _, init) = boot();
    let a = fork(&mut t, init, 1);
    let a2 = thread(&mut t, a, 20);
    let a3 = thread(&mut t, a, 300);
    let read = |p: &P| p.0;
    assert_eq!(t.process_total(a2, read), Ok(321));
    assert_eq!(t.dead_total(a), Ok(&0));
    t.get_mut(a3).unwrap().payload_mut().0 += 4000; // the thread keeps running
    t.exit(a2, ok(0), harvest).unwrap();
    assert_eq!(t.dead_total(a), Ok(&20));
    assert_eq!(t.process_total(a, read), Ok(4321), "past and present");
    t.exit(a, ok(0), harvest).unwrap();
    assert_eq!(t.dead_total(a3), Ok(&21));
    assert_eq!(t.process_total(a3, read), Ok(4321));
    let e = t.exit(a3, ok(0), harvest).unwrap();
    assert_eq!(e.process.unwrap().total, 4321);
    assert_eq!(t.process_total(a, read), Ok(4321));
}

#[test]
fn children_totals_include_reaped_grandchildren() {
    let (mut t, _, init) = boot();
    let p = fork(&mut t, init, 1);
    let c = fork(&mut t, p, 10);
    let g = fork(&mut t, c, 100);
    let g2 = thread(&mut t, g, 1000);
    t.exit_group(g2, ok(0), harvest).unwrap();
    let r = reaped(t.wait(c, WaitFor::Any, true).unwrap());
    assert_eq!((r.total, r.children_total), (1100, 0));
    assert_eq!(t.children_total(c), Ok(&1100));
    t.exit(c, ok(0), harvest).unwrap();
    let r = reaped(t.wait(p, WaitFor::Any, true).unwrap());
    assert_eq!((r.total, r.children_total), (10, 1100));
    assert_eq!(t.children_total(p), Ok(&1110));
    // A grandchild orphaned before its parent waited counts for init, not for the old parent.
    let c = fork(&mut t, p, 10_000);
    let _g = fork(&mut t, c, 100_000);
    t.exit(c, ok(0), harvest).unwrap();
    t.exit(_g, ok(0), harvest).unwrap();
    reaped(t.wait(p, WaitFor::Any, true).unwrap());
    assert_eq!(t.children_total(p), Ok(&11_110));
    reaped(t.wait(init, WaitFor::Any, true).unwrap());
    assert_eq!(t.children_total(init), Ok(&100_000));
}

#[test]
fn bad_signals_are_rejected() {
    assert_eq!(ExitStatus::signaled(0, false).err(), Some(EINVAL));
    assert_eq!(ExitStatus::signaled(NSIG + 1, false).err(), Some(EINVAL));
}

#[test]
fn a_daemon_has_a_fresh_pid_no_parent_and_is_nobodys_child() {
    let (mut t, _idle, init) = boot();
    let d = t.create_daemon(b"fsd", 0, P(0)).unwrap();
    assert_eq!(pid_of(&t, d), 2);
    assert_eq!(t.parent(d), Ok(None));
    assert_eq!(t.ppid(d), Ok(0));
    assert!(t.children(init).unwrap().is_empty(), "init does not wait for a daemon");
    // It can make children of its own, and the pids go on.
    let c = fork(&mut t, d, 0);
    assert_eq!(pid_of(&t, c), 3);
    assert_eq!(t.children(d).unwrap(), &[c]);
}
