//! What the kernel must do after a CSA decision: the *effects*.
//!
//! The state machine ([`crate::Csa`]) never touches a file. Every method that changes
//! something returns an [`Effects`] list instead — "append these bytes to the system
//! file", "close job J's ja file", "install the file you just opened as the system file" —
//! and the kernel carries them out *in order*, after releasing whatever lock protects the
//! state:
//!
//! ```text
//!   exit observer / csa_ctl                     kernel glue                        disk owner
//!   ───────────────────────                     ───────────                        ──────────
//!   lock; fx = csa.process_exit(..); unlock ──► for a in fx.iter():
//!                                                 Post{file,bytes} → slot[file].post(bytes) ──► append whole
//!                                                 Close{file}      → drop slot[file]
//!                                                 Install{file,..} → slot[file] = the file opened
//!                                                                    for this request
//!                                                 PostDaemonRecord → slot[file].post(actwra buf)
//! ```
//!
//! Keeping I/O out makes the state machine a pure function of its inputs (the property
//! tests drive it with a fake kernel that keeps each file as a `Vec<u8>`), and keeps the
//! exit path free of anything that sleeps: an [`Effects`] is a fixed-size value on the
//! stack — no allocation — whose bytes live in its own arena.
//!
//! The kernel keeps one slot per [`FileId`]: the system file and one `ja` file per job.

use tally_uapi::csa::ACCTCFG_SIZE;

use crate::jobs::Jid;
use crate::process::CHAIN_MAX;
use tally_uapi::csa::ACCTEOJ_SIZE;

/// Which file an effect is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileId {
    /// The system accounting file (CSA's `pacct`), opened by `AC_START`.
    System,
    /// The user job accounting file of job `jid`, opened by `AC_JASTART`.
    Ja(Jid),
}

/// One thing for the kernel to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action<'a> {
    /// Append `bytes` (one or more whole records) to the file in slot `file`. If the slot
    /// is empty (it cannot be, unless the kernel dropped a file on its own), drop them.
    Post { file: FileId, bytes: &'a [u8] },
    /// Append the record of the `AC_WRACCT` request being served (its `actwra`'s first
    /// `ac_len` bytes) to the file in slot `file`.
    PostDaemonRecord { file: FileId },
    /// The file the kernel opened for this request (with `cookie` as its error cookie)
    /// goes into slot `file`.
    Install { file: FileId, cookie: u64 },
    /// Close the file in slot `file` (drop it; what was posted before is still written).
    Close { file: FileId },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Post { file: FileId, start: u16, len: u16 },
    Daemon { file: FileId },
    Install { file: FileId, cookie: u64 },
    Close { file: FileId },
}

/// Most actions one decision produces (the worst case, `AC_START` switching files, has 5;
/// an exit that ends a job with a ja file has 4).
pub const MAX_ACTIONS: usize = 8;
/// Bytes the records of one decision may take: an exit that ends a job writes a full chain
/// and an end-of-job record to the ja file and to the system file.
pub const ARENA: usize = 2 * (CHAIN_MAX + ACCTEOJ_SIZE) + ACCTCFG_SIZE;

/// An ordered list of [`Action`]s with the bytes they post.
#[derive(Clone, Debug)]
pub struct Effects {
    ops: [Option<Op>; MAX_ACTIONS],
    n: usize,
    arena: [u8; ARENA],
    used: usize,
}

impl Default for Effects {
    fn default() -> Self {
        Effects::new()
    }
}

impl Effects {
    /// Nothing to do.
    pub const fn new() -> Effects {
        Effects { ops: [None; MAX_ACTIONS], n: 0, arena: [0; ARENA], used: 0 }
    }

    fn push(&mut self, op: Op) {
        // The capacities are the worst cases of the decisions this crate makes (tested in
        // `worst_cases_fit`); nothing a caller passes in can make a list longer.
        debug_assert!(self.n < MAX_ACTIONS, "effects list full");
        if self.n < MAX_ACTIONS {
            self.ops[self.n] = Some(op);
            self.n += 1;
        }
    }

    pub(crate) fn post(&mut self, file: FileId, bytes: &[u8]) {
        debug_assert!(self.used + bytes.len() <= ARENA, "effects arena full");
        if self.used + bytes.len() <= ARENA {
            let start = self.used;
            self.arena[start..start + bytes.len()].copy_from_slice(bytes);
            self.used += bytes.len();
            self.push(Op::Post { file, start: start as u16, len: bytes.len() as u16 });
        }
    }

    pub(crate) fn post_daemon(&mut self, file: FileId) {
        self.push(Op::Daemon { file });
    }

    pub(crate) fn install(&mut self, file: FileId, cookie: u64) {
        self.push(Op::Install { file, cookie });
    }

    pub(crate) fn close(&mut self, file: FileId) {
        self.push(Op::Close { file });
    }

    /// How many actions.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The actions, in the order the kernel must carry them out.
    pub fn iter(&self) -> impl Iterator<Item = Action<'_>> + '_ {
        self.ops[..self.n].iter().flatten().map(move |op| match *op {
            Op::Post { file, start, len } => {
                Action::Post { file, bytes: &self.arena[start as usize..start as usize + len as usize] }
            }
            Op::Daemon { file } => Action::PostDaemonRecord { file },
            Op::Install { file, cookie } => Action::Install { file, cookie },
            Op::Close { file } => Action::Close { file },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_come_back_in_order_with_their_bytes() {
        let mut fx = Effects::new();
        fx.post(FileId::System, b"abc");
        fx.close(FileId::Ja(5));
        fx.install(FileId::System, 9);
        fx.post(FileId::Ja(5), b"de");
        fx.post_daemon(FileId::System);
        let v: Vec<Action<'_>> = fx.iter().collect();
        assert_eq!(
            v,
            [
                Action::Post { file: FileId::System, bytes: b"abc" },
                Action::Close { file: FileId::Ja(5) },
                Action::Install { file: FileId::System, cookie: 9 },
                Action::Post { file: FileId::Ja(5), bytes: b"de" },
                Action::PostDaemonRecord { file: FileId::System },
            ]
        );
        assert_eq!(fx.len(), 5);
        assert!(Effects::new().is_empty());
    }

    #[test]
    fn worst_cases_fit() {
        // An exit that ends a job: chain + EOJ to a ja file (then closed), chain + EOJ to the
        // system file.
        let mut fx = Effects::new();
        fx.post(FileId::Ja(1), &[0; CHAIN_MAX]);
        fx.post(FileId::Ja(1), &[0; ACCTEOJ_SIZE]);
        fx.close(FileId::Ja(1));
        fx.post(FileId::System, &[0; CHAIN_MAX]);
        fx.post(FileId::System, &[0; ACCTEOJ_SIZE]);
        assert_eq!(fx.len(), 5);
        // AC_START switching files: FILE to the old, close, install, BOOT and ON to the new.
        let mut fx = Effects::new();
        fx.post(FileId::System, &[0; ACCTCFG_SIZE]);
        fx.close(FileId::System);
        fx.install(FileId::System, 1);
        fx.post(FileId::System, &[0; ACCTCFG_SIZE]);
        fx.post(FileId::System, &[0; ACCTCFG_SIZE]);
        assert_eq!(fx.len(), 5);
    }
}
