//! # The task record
//!
//! One [`Task`] per thread, like Linux's `task_struct`, but holding only what the process
//! tree and accounting need: its names (pid, tgid), its life-cycle state, how it ended, the
//! identity an accounting record reports (comm, uid, gid, begin time, `ac_flag` bits), and the
//! kernel's own payload `T` (in Tally's kernel, `proc`'s: a process's memory map and
//! descriptors).
//!
//! What *is* running, sleeping or runnable is the scheduler's business; here a task is only
//! [`ExitState::Live`] or a [`ExitState::Zombie`] waiting to be reaped. Reaped tasks are not in
//! the table at all: their payload has been handed back to the kernel.
//!
//! A group leader's record also carries its thread group (`group.rs`): the per-process data.
//!
//! Flow: created by `TaskTable::create*`, read and retouched through `TaskTable::get{,_mut}`
//! (exec, setuid, a capability check), ended by `exit`, removed by thread auto-reap or `wait`.

use crate::group::ThreadGroup;
use crate::status::ExitStatus;
use crate::TaskKey;

/// Linux `TASK_COMM_LEN`: the command name, NUL-terminated, so at most 15 visible bytes.
pub const TASK_COMM_LEN: usize = 16;

/// Whether a task has exited (Linux's `exit_state`). Scheduling states (running, runnable,
/// sleeping) are the scheduler's; a reaped task is no longer in the table, so there is no
/// `Dead` here.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExitState {
    /// Created and not yet exited.
    Live,
    /// Exited; only a group leader stays in this state, until its parent reaps the process.
    Zombie,
}

/// The `ac_flag` bits of a BSD accounting record (`<linux/acct.h>`), kept per task.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct AcctFlags(u8);

impl AcctFlags {
    /// Forked but not exec'd (Linux `PF_FORKNOEXEC`): set at create, cleared by `exec`.
    pub const AFORK: AcctFlags = AcctFlags(0x01);
    /// Used super-user privileges (Linux `PF_SUPERPRIV`): set by the kernel's privilege check.
    pub const ASU: AcctFlags = AcctFlags(0x02);
    /// Dumped core: set at exit when the status says so.
    pub const ACORE: AcctFlags = AcctFlags(0x08);
    /// Killed by a signal: set at exit when the status says so.
    pub const AXSIG: AcctFlags = AcctFlags(0x10);

    pub const fn empty() -> Self {
        AcctFlags(0)
    }
    pub const fn bits(self) -> u8 {
        self.0
    }
    pub const fn contains(self, other: AcctFlags) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn insert(&mut self, other: AcctFlags) {
        self.0 |= other.0;
    }
    pub fn remove(&mut self, other: AcctFlags) {
        self.0 &= !other.0;
    }
}

/// Copies a name into a comm buffer: truncated to 15 bytes, NUL-padded, stopping at the
/// first NUL of the source (as Linux's `__set_task_comm` does via `strscpy_pad`).
pub fn make_comm(name: &[u8]) -> [u8; TASK_COMM_LEN] {
    let mut comm = [0u8; TASK_COMM_LEN];
    for (dst, &src) in comm[..TASK_COMM_LEN - 1].iter_mut().zip(name.iter().take_while(|&&b| b != 0)) {
        *dst = src;
    }
    comm
}

/// One thread. Structural fields (pid, tgid, state, parent links) are changed only by the
/// table; the kernel may change identity, flags and payload through the setters.
pub struct Task<T, A> {
    pub(crate) pid: i32,
    pub(crate) tgid: i32,
    /// `None` for a group leader (its key is its own); else the leader's key.
    pub(crate) leader: Option<TaskKey>,
    pub(crate) exit_state: ExitState,
    pub(crate) exit_status: Option<ExitStatus>,
    pub(crate) comm: [u8; TASK_COMM_LEN],
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) begin_time: u64,
    pub(crate) flags: AcctFlags,
    pub(crate) payload: T,
    /// `Some` exactly for group leaders: the per-process part.
    pub(crate) group: Option<ThreadGroup<A>>,
}

impl<T, A> Task<T, A> {
    /// Thread id.
    pub fn pid(&self) -> i32 {
        self.pid
    }
    /// Thread-group id: the process id, the leader's pid.
    pub fn tgid(&self) -> i32 {
        self.tgid
    }
    pub fn is_leader(&self) -> bool {
        self.leader.is_none()
    }
    pub fn exit_state(&self) -> ExitState {
        self.exit_state
    }
    /// How this thread ended (`None` while live). For the process's status see
    /// `TaskTable::process_status`: `exit_group` can override the leader's own.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.exit_status
    }
    /// The command name buffer, NUL-padded.
    pub fn comm(&self) -> &[u8; TASK_COMM_LEN] {
        &self.comm
    }
    /// The command name without its NUL padding.
    pub fn comm_str(&self) -> &[u8] {
        let end = self.comm.iter().position(|&b| b == 0).unwrap_or(TASK_COMM_LEN);
        &self.comm[..end]
    }
    pub fn uid(&self) -> u32 {
        self.uid
    }
    pub fn gid(&self) -> u32 {
        self.gid
    }
    /// The caller-supplied creation timestamp (`ac_btime` source).
    pub fn begin_time(&self) -> u64 {
        self.begin_time
    }
    pub fn flags(&self) -> AcctFlags {
        self.flags
    }
    pub fn payload(&self) -> &T {
        &self.payload
    }
    pub fn payload_mut(&mut self) -> &mut T {
        &mut self.payload
    }

    pub fn set_comm(&mut self, name: &[u8]) {
        self.comm = make_comm(name);
    }
    pub fn set_ids(&mut self, uid: u32, gid: u32) {
        self.uid = uid;
        self.gid = gid;
    }
    /// A successful `execve`: new name, no longer "forked but not exec'd". (Killing the other
    /// threads, Linux's `de_thread`, is the kernel's job: `exit` them first.)
    pub fn exec(&mut self, name: &[u8]) {
        self.set_comm(name);
        self.flags.remove(AcctFlags::AFORK);
    }
    /// The task used super-user privilege (`ASU`); call from the privilege check.
    pub fn note_superuser(&mut self) {
        self.flags.insert(AcctFlags::ASU);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_is_truncated_and_nul_terminated() {
        assert_eq!(&make_comm(b"sh")[..3], b"sh\0");
        let c = make_comm(b"a-very-long-command-name");
        assert_eq!(&c[..15], b"a-very-long-com");
        assert_eq!(c[15], 0);
        assert_eq!(&make_comm(b"ab\0cd")[..], &make_comm(b"ab")[..]);
    }

    #[test]
    fn flags_set_and_clear() {
        let mut f = AcctFlags::AFORK;
        f.insert(AcctFlags::AXSIG);
        assert_eq!(f.bits(), 0x11);
        assert!(f.contains(AcctFlags::AXSIG));
        f.remove(AcctFlags::AFORK);
        assert_eq!(f, AcctFlags::AXSIG);
    }
}
