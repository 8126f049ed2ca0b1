//! The CSA state: what is switched on, which files are open, what each file has received.
//!
//! ```text
//!                 index  name    state            param
//!   kernel/daemon   0    csa     OFF|ERROFF|ON     -      process, SOJ and EOJ records
//!   kinds           1    job     OFF|ERROFF|ON     -      (kept, writes nothing: as Linux CSA)
//!                   2    wkmg    OFF|ERROFF|ON     -      daemon records (AC_WRACCT)
//!                   3,4  site1,2 OFF|ERROFF|ON     -      daemon records
//!   record kinds    6    mem     OFF|ON            -      continuation records in the system file
//!                   7    io      OFF|ON            -
//!                   8    delay   OFF|ON            -
//!   thresholds      9    memt    OFF|ON            KB     virtual high-water below it: not in the system file
//!                  10    time    OFF|ON            µs     user+system CPU below it: not in the system file
//!                  11,12 rsite1,2 OFF|ON           -      (kept, unused)
//!
//!   files           the system file (one, shared by every kind: CSA's pacct), open while any
//!                   kind needs it; a ja file per job that asked for one
//! ```
//!
//! **ERROFF** is the state the *kernel* sets: when writing the system file fails (the disk
//! is full, the disk failed), the file is closed and every kind that was ON becomes ERROFF,
//! so `csaswitch -c status` shows "Error" until an administrator starts accounting again.
//! A ja file that fails is closed and its job's ja state becomes ERROFF; the system file
//! and the other jobs' ja files carry on. Nothing else ever sets ERROFF.
//!
//! The decisions that change this state live next door: [`mod@crate::route`] (process exits,
//! job creation) and [`crate::control`] (the `csa_ctl` requests). Both return
//! [`Effects`] and never touch a file.

use alloc::vec::Vec;

use tally_uapi::csa::{
    ACCT_KERN_CSA, ACCT_MAXKDS, ACCT_PATH, ACCT_RCDS, ACCT_RCD_DELAY, ACCT_RCD_IO, ACCT_RCD_MEM, ACCT_THD_MEM,
    ACCT_THD_TIME, ACS_ERROFF, ACS_OFF, ACS_ON, NUM_KDS, NUM_RCDS,
};

use crate::config_record::{CfgRecord, Uname};
use crate::effects::{Effects, FileId};
use crate::jobs::{Jid, Jobs};
use crate::process::{ns_to_secs, Continuations};
use crate::route::Routing;
use tally_uapi::csa::{ACCT_DELAY, ACCT_IO, ACCT_MEM};

/// The state of one entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum State {
    #[default]
    Off,
    /// Turned off by the kernel after a write error.
    ErrOff,
    On,
}

impl State {
    /// `ACS_OFF`, `ACS_ERROFF`, `ACS_ON`.
    pub const fn code(self) -> u32 {
        match self {
            State::Off => ACS_OFF,
            State::ErrOff => ACS_ERROFF,
            State::On => ACS_ON,
        }
    }

    /// The state of an `ACS_*` code (`None` for anything else).
    pub const fn from_code(c: u32) -> Option<State> {
        match c {
            ACS_OFF => Some(State::Off),
            ACS_ERROFF => Some(State::ErrOff),
            ACS_ON => Some(State::On),
            _ => None,
        }
    }
}

/// An entry's state and parameter (a threshold's value; what `AC_START` gave otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Setting {
    pub state: State,
    pub param: i64,
}

/// What one file has received, for its kstat. Counts only grow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FileCounters {
    /// Records handed to the file: a base record with its continuations counts once, as
    /// does each SOJ, EOJ, CFG and daemon record.
    pub records: u64,
    /// Bytes of those records.
    pub bytes: u64,
    /// Process records kept out of this file by a threshold (system file only).
    pub dropped_below_threshold: u64,
    /// Write errors that closed the file.
    pub errors: u64,
}

impl FileCounters {
    pub(crate) fn wrote(&mut self, bytes: usize) {
        self.records += 1;
        self.bytes += bytes as u64;
    }
}

/// An accounting file path (at most 127 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path {
    bytes: [u8; ACCT_PATH],
    len: u8,
}

impl Path {
    pub const EMPTY: Path = Path { bytes: [0; ACCT_PATH], len: 0 };

    /// `p` cut to 127 bytes.
    pub fn new(p: &[u8]) -> Path {
        let mut bytes = [0; ACCT_PATH];
        let n = p.len().min(ACCT_PATH - 1);
        bytes[..n].copy_from_slice(&p[..n]);
        Path { bytes, len: n as u8 }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// The system file's slot: its path (kept after it closes, as CSA's status shows it), the
/// cookie of the open file (`None`: closed), its counters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SystemFile {
    pub(crate) path: Path,
    pub(crate) cookie: Option<u64>,
    pub(crate) counters: FileCounters,
}

/// A job's ja file.
#[derive(Clone, Copy, Debug)]
pub struct JaFile {
    pub jid: Jid,
    pub path: Path,
    /// The open file's cookie; `None` once a write error closed it (state ERROFF).
    pub cookie: Option<u64>,
    pub counters: FileCounters,
}

impl JaFile {
    /// ON while open, ERROFF after a write error closed it.
    pub fn state(&self) -> State {
        if self.cookie.is_some() {
            State::On
        } else {
            State::ErrOff
        }
    }
}

/// How the kernel sets CSA up at boot.
#[derive(Clone, Copy, Debug)]
pub struct CsaConfig {
    /// The upper half of every jid (`tally_uapi::csa::JOB_HOST_ID`).
    pub host_id: u32,
    /// Most processes that may be in jobs at once (the kernel's task limit): the job table
    /// and the ja table are allocated for this many and never grow.
    pub capacity: usize,
    /// The machine's name for configuration records.
    pub uname: Uname,
    /// When the machine booted, ns since 1970.
    pub boot_unix_ns: u64,
}

/// CSA: the job table, the switches, the files. One per kernel, behind a lock.
#[derive(Clone, Debug)]
pub struct Csa {
    pub(crate) jobs: Jobs,
    pub(crate) kd: [Setting; NUM_KDS],
    pub(crate) rcd: [Setting; NUM_RCDS],
    pub(crate) system: SystemFile,
    pub(crate) ja: Vec<JaFile>,
    pub(crate) ja_total: FileCounters,
    pub(crate) uname: Uname,
    pub(crate) boot_unix_ns: u64,
    /// Has the boot configuration record been written (to the first system file)?
    pub(crate) boot_recorded: bool,
    pub(crate) next_cookie: u64,
}

impl Csa {
    /// Everything off, no file, no job. Allocates the tables here, and only here.
    pub fn new(config: CsaConfig) -> Csa {
        Csa {
            jobs: Jobs::new(config.host_id, config.capacity),
            kd: [Setting::default(); NUM_KDS],
            rcd: [Setting::default(); NUM_RCDS],
            system: SystemFile { path: Path::EMPTY, cookie: None, counters: FileCounters::default() },
            ja: Vec::with_capacity(config.capacity),
            ja_total: FileCounters::default(),
            uname: config.uname,
            boot_unix_ns: config.boot_unix_ns,
            boot_recorded: false,
            next_cookie: 1,
        }
    }

    /// Does any exit concern CSA now, i.e. is any process in a job? (A process in no job
    /// gets no record, whatever is switched on.) The kernel mirrors this in an atomic for
    /// its exit observer's `listening()`, updating it after each call that changes jobs.
    pub fn wants_exits(&self) -> bool {
        self.jobs.member_count() > 0
    }

    /// The job table (`job_getjid`: `csa.jobs().jid_of(pid)`).
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }

    /// Entry `ind`'s setting (`None` for an index that is not one).
    pub fn setting(&self, ind: u32) -> Option<Setting> {
        if ind < ACCT_MAXKDS {
            Some(self.kd[ind as usize])
        } else {
            self.rcd.get(ind.checked_sub(ACCT_RCDS)? as usize).copied()
        }
    }

    pub(crate) fn setting_mut(&mut self, ind: u32) -> Option<&mut Setting> {
        if ind < ACCT_MAXKDS {
            Some(&mut self.kd[ind as usize])
        } else {
            self.rcd.get_mut(ind.checked_sub(ACCT_RCDS)? as usize)
        }
    }

    pub(crate) fn on(&self, ind: u32) -> bool {
        self.setting(ind).is_some_and(|s| s.state == State::On)
    }

    /// The system file's path (the last one, even after it closed; empty if never opened).
    pub fn system_path(&self) -> &[u8] {
        self.system.path.as_bytes()
    }

    /// Is the system file open?
    pub fn system_open(&self) -> bool {
        self.system.cookie.is_some()
    }

    /// The counters of the system file (since boot, across file switches).
    pub fn system_counters(&self) -> FileCounters {
        self.system.counters
    }

    /// The summed counters of every ja file since boot.
    pub fn ja_counters(&self) -> FileCounters {
        self.ja_total
    }

    /// Job `jid`'s ja file, if it has one (open, or closed by an error).
    pub fn ja_file(&self, jid: Jid) -> Option<&JaFile> {
        self.ja.iter().find(|j| j.jid == jid)
    }

    pub(crate) fn ja_index(&self, jid: Jid) -> Option<usize> {
        self.ja.iter().position(|j| j.jid == jid)
    }

    /// Every job's ja file.
    pub fn ja_files(&self) -> impl Iterator<Item = &JaFile> {
        self.ja.iter()
    }

    /// A file's counters.
    pub fn counters(&self, file: FileId) -> Option<FileCounters> {
        match file {
            FileId::System => Some(self.system.counters),
            FileId::Ja(jid) => self.ja_file(jid).map(|j| j.counters),
        }
    }

    /// `ac_kdmask`: bit `i` for each kernel/daemon kind `i` that is ON.
    pub fn kdmask(&self) -> u32 {
        self.kd.iter().enumerate().filter(|(_, s)| s.state == State::On).fold(0, |m, (i, _)| m | 1 << i)
    }

    /// `ac_rmask`: bit `i - 6` for each record kind or threshold `i` that is ON.
    pub fn rmask(&self) -> u32 {
        self.rcd.iter().enumerate().filter(|(_, s)| s.state == State::On).fold(0, |m, (i, _)| m | 1 << i)
    }

    /// A configuration record of the current state.
    pub(crate) fn cfg(&self, event: u8, now_unix_ns: u64) -> [u8; tally_uapi::csa::ACCTCFG_SIZE] {
        CfgRecord {
            kdmask: self.kdmask(),
            rmask: self.rmask(),
            uptimelen: 0,
            event,
            boottime: ns_to_secs(self.boot_unix_ns),
            curtime: ns_to_secs(now_unix_ns),
            uname: self.uname,
        }
        .encode()
    }

    /// Post `bytes` to the system file (if open) and count them.
    pub(crate) fn post_system(&mut self, fx: &mut Effects, bytes: &[u8]) {
        if self.system.cookie.is_some() {
            fx.post(FileId::System, bytes);
            self.system.counters.wrote(bytes.len());
        }
    }

    /// Post `bytes` to job `jid`'s ja file (if open) and count them.
    pub(crate) fn post_ja(&mut self, fx: &mut Effects, jid: Jid, bytes: &[u8]) {
        if let Some(j) = self.ja.iter_mut().find(|j| j.jid == jid && j.cookie.is_some()) {
            fx.post(FileId::Ja(jid), bytes);
            j.counters.wrote(bytes.len());
            self.ja_total.wrote(bytes.len());
        }
    }

    /// How the current state routes job `jid`'s process records.
    pub fn routing(&self, jid: Jid) -> Routing {
        let mut kinds = 0;
        for (ind, bit) in [(ACCT_RCD_MEM, ACCT_MEM), (ACCT_RCD_IO, ACCT_IO), (ACCT_RCD_DELAY, ACCT_DELAY)] {
            if self.on(ind) {
                kinds |= bit;
            }
        }
        let threshold = |ind| self.setting(ind).filter(|s| s.state == State::On).map(|s| s.param);
        Routing {
            csa_on: self.on(ACCT_KERN_CSA),
            system_open: self.system_open(),
            kinds: Continuations(kinds),
            thd_mem_kb: threshold(ACCT_THD_MEM),
            thd_time_us: threshold(ACCT_THD_TIME),
            ja_open: self.ja_file(jid).is_some_and(|j| j.cookie.is_some()),
        }
    }

    /// The kernel's report that writing the file opened with `cookie` failed with `errno`
    /// (from the disk owner's `on_error`, or a `post` that failed at once). That file is
    /// closed: the system file's ON kinds become ERROFF, a ja file's job gets ja state
    /// ERROFF. A cookie of a file already closed (a second error from the same file) or
    /// unknown changes nothing and returns no effect.
    pub fn file_error(&mut self, cookie: u64, _errno: i32) -> Effects {
        let mut fx = Effects::new();
        if self.system.cookie == Some(cookie) {
            self.system.cookie = None;
            self.system.counters.errors += 1;
            for s in &mut self.kd {
                if s.state == State::On {
                    s.state = State::ErrOff;
                }
            }
            fx.close(FileId::System);
        } else if let Some(j) = self.ja.iter_mut().find(|j| j.cookie == Some(cookie)) {
            j.cookie = None;
            j.counters.errors += 1;
            self.ja_total.errors += 1;
            fx.close(FileId::Ja(j.jid));
        }
        fx
    }

    pub(crate) fn new_cookie(&mut self) -> u64 {
        let c = self.next_cookie;
        self.next_cookie += 1;
        c
    }
}
