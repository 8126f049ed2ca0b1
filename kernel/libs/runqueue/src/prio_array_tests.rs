//! Tests of the priority array (`prio_array.rs`), kept out of the file a student edits in
//! lab 2 (the module is still `prio_array::tests`). They drive one array directly, through a
//! store of bare tasks, and check the queues link by link.

use super::*;
use crate::task::SchedEntity;
use tally_microstate::{MicroState, MsaClock};

/// Tasks in a `Vec`, as the kernel's slab lends them.
struct Store(Vec<(SchedEntity, MsaClock)>);

impl TaskStore for Store {
    fn task(&mut self, key: TaskSlot) -> (&mut SchedEntity, &mut MsaClock) {
        let (se, clock) = &mut self.0[key.0 as usize];
        (se, clock)
    }
}

fn store(n: u32) -> (Store, Vec<TaskSlot>) {
    let tasks = (0..n).map(|_| (SchedEntity::new(0), MsaClock::new(0, MicroState::OnActiveQueue))).collect();
    (Store(tasks), (0..n).map(TaskSlot).collect())
}

/// The queue at `level`, read from head to tail through the `next` links, checking each
/// `prev` link and each task's recorded array and level on the way.
fn walk(array: &PrioArray, s: &mut Store, level: usize) -> Vec<TaskSlot> {
    let mut out = Vec::new();
    let mut prev = None;
    let mut at = array.head(level);
    while let Some(key) = at {
        let link = s.entity(key).link;
        assert_eq!(
            link.prev, prev,
            "task {key:?} at level {level}: its prev link is {:?}, expected {prev:?}",
            link.prev
        );
        assert_eq!(link.array, Some(array.id()), "task {key:?} at level {level} does not name its array");
        assert_eq!(
            link.level as usize, level,
            "task {key:?} is queued at level {level} but records level {}",
            link.level
        );
        out.push(key);
        assert!(out.len() <= s.0.len(), "the list at level {level} loops: {out:?}");
        prev = Some(key);
        at = link.next;
    }
    assert_eq!(array.tail(level), prev, "level {level}: tail is {:?} but the list ends at {prev:?}", array.tail(level));
    out
}

#[test]
fn enqueue_links_fifo_sets_bits_and_counts() {
    let (mut s, k) = store(4);
    let mut a = PrioArray::new(ArrayId(0));
    a.enqueue(&mut s, k[0], 120);
    a.enqueue(&mut s, k[1], 120);
    a.enqueue(&mut s, k[2], 120);
    a.enqueue(&mut s, k[3], 2);
    assert_eq!(walk(&a, &mut s, 120), [k[0], k[1], k[2]], "level 120 must be FIFO: first enqueued at the head");
    assert_eq!(walk(&a, &mut s, 2), [k[3]], "level 2 holds the one task enqueued there");
    assert_eq!(a.nr_active(), 4, "nr_active after 4 enqueues");
    assert!(a.bit(120) && a.bit(2), "the bits of the non-empty levels 2 and 120 must be set");
    assert!(!a.bit(119) && !a.bit(121) && !a.bit(0), "only non-empty levels have their bit set");
    assert!(a.bit(MAX_PRIO as usize), "the delimiter bit (140) must stay set");
}

#[test]
fn dequeue_from_head_middle_and_tail_keeps_the_list_whole() {
    let (mut s, k) = store(4);
    let mut a = PrioArray::new(ArrayId(1));
    for &key in &k {
        a.enqueue(&mut s, key, 130);
    }
    a.dequeue(&mut s, k[1]);
    assert_eq!(walk(&a, &mut s, 130), [k[0], k[2], k[3]], "after removing the 2nd of 4 (the middle)");
    a.dequeue(&mut s, k[0]);
    assert_eq!(walk(&a, &mut s, 130), [k[2], k[3]], "after removing the head");
    a.dequeue(&mut s, k[3]);
    assert_eq!(walk(&a, &mut s, 130), [k[2]], "after removing the tail");
    assert!(a.bit(130), "level 130 still holds a task: its bit must stay set");
    a.dequeue(&mut s, k[2]);
    assert_eq!(walk(&a, &mut s, 130), [], "after removing the last task");
    assert!(!a.bit(130), "level 130 is empty: its bit must be cleared");
    assert_eq!(a.nr_active(), 0, "nr_active after dequeuing everything");
    assert!(a.is_empty());
    for &key in &k {
        assert_eq!(s.entity(key).link, QueueLink::DETACHED, "a dequeued task must be detached (no array, no links)");
    }
}

#[test]
fn requeue_moves_a_task_to_the_tail_of_its_own_level() {
    let (mut s, k) = store(4);
    let mut a = PrioArray::new(ArrayId(0));
    for &key in &k[..3] {
        a.enqueue(&mut s, key, 110);
    }
    a.enqueue(&mut s, k[3], 105);
    a.requeue(&mut s, k[0]);
    assert_eq!(walk(&a, &mut s, 110), [k[1], k[2], k[0]], "requeue of the head of level 110");
    a.requeue(&mut s, k[2]);
    assert_eq!(walk(&a, &mut s, 110), [k[1], k[0], k[2]], "requeue of the middle task of level 110");
    a.requeue(&mut s, k[3]);
    assert_eq!(walk(&a, &mut s, 105), [k[3]], "requeue of the only task of level 105 leaves it there");
    assert_eq!(a.nr_active(), 4, "requeue must not change nr_active");
    assert!(a.bit(105) && a.bit(110), "requeue must leave both levels marked non-empty");
}

#[test]
fn first_level_finds_the_best_level_in_every_bitmap_word() {
    let a = PrioArray::new(ArrayId(0));
    assert_eq!(a.first_level(), MAX_PRIO as usize, "an empty array's first level is the delimiter, MAX_PRIO");
    for level in [0, 1, 63, 64, 99, 100, 127, 128, 139] {
        let (mut s, k) = store(2);
        let mut a = PrioArray::new(ArrayId(0));
        a.enqueue(&mut s, k[0], 139);
        a.enqueue(&mut s, k[1], level);
        assert_eq!(a.first_level(), level as usize, "tasks at levels {level} and 139: the best level is {level}");
        a.dequeue(&mut s, k[1]);
        assert_eq!(a.first_level(), 139, "after dequeuing level {level}, only level 139 is left");
    }
}
