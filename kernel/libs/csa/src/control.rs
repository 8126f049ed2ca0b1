//! `csa_ctl(request, arg)`: switching CSA on and off, asking its state, `ja`, daemon records.
//!
//! ## The requests
//!
//! | request | who | argument | what it does |
//! |---|---|---|---|
//! | `AC_START` 0 | root | actctl | entries `ac_stat[0..n]` (`n = ac_sttnum`, 0 meaning 1) become ON with their `ac_param`. A path names the system file: if it is not the open one, the new file replaces the old (which gets a FILE record last); a file opened for the first time since boot gets the BOOT record first. No path and no open file: `EINVAL`. Then an ON record. The entries are written back with their new states. |
//! | `AC_STOP` 1 | root | actctl | entries `ac_stat[0..n]` become OFF, parameter 0; an OFF record; if no kernel/daemon kind is ON any more the system file is closed. Entries written back. |
//! | `AC_HALT` 2 | root | — | everything OFF; an OFF record; the system file is closed. |
//! | `AC_CHECK` 3 | anyone | actstat | fills in the state and parameter of entry `ac_ind`. |
//! | `AC_KDSTAT` 4 | anyone | actctl | `ac_stat[0..n]` = kinds 0..n (`n = min(ac_sttnum, 5)`, `ac_sttnum` ≤ 0 is `EINVAL`), `ac_sttnum = n`, `ac_path` = the system file's path. |
//! | `AC_RCDSTAT` 5 | anyone | actctl | the same for record kinds and thresholds 6..6+n (`n ≤ 7`). |
//! | `AC_JASTART` 6 | anyone in a job | actctl | opens `ac_path` as the caller's job's ja file (replacing one it had); an ON record is its first record. No path: `EINVAL`; caller in no job: `ENODATA`. |
//! | `AC_JASTOP` 7 | anyone in a job | actctl | closes the caller's job's ja file (if any). Caller in no job: `ENODATA`. |
//! | `AC_WRACCT` 8 | root | actwra | writes `ac_buf[..ac_len]` to the system file if kind `ac_did` is ON, and to job `ac_jid`'s ja file if it has one (whatever the kinds' states, as CSA). |
//! | `AC_AUTH` 9 | root | — | succeeds: "may this caller change the accounting?" |
//!
//! "root" is where CSA requires `CAP_SYS_PACCT`; anyone else gets `EPERM`, before anything
//! else is looked at (the request code aside: an unknown one is `EINVAL`). Indices are
//! checked as CSA's `acctctl` does: 0..5 and 6..13 (5 is the gap between the two ranges);
//! an `ac_sttnum` above 12 or negative is `EINVAL`; a path must end in a NUL within its 128
//! bytes (`EINVAL`). Where CSA's daemon and the SGI CSA design are silent or odd, Tally
//! decides, and says so:
//!
//! * `AC_STOP` validates its indices like `AC_START` (CSA's daemon would accept 5 and refuse
//!   12).
//! * `AC_JASTART` writes its ON record to the ja file only: a user's ja switch is not a
//!   change of the system's configuration (CSA's daemon writes it to the system file too,
//!   which would let any user fill the administrator's file with records).
//! * `AC_WRACCT` refuses (`EINVAL`) a buffer that is not one or more whole records of a
//!   daemon type: each must start with the magic, its `ah_size` must fit, the sizes must sum
//!   to `ac_len`, and its type must not be one the kernel writes (CSA 01–020), so that a
//!   daemon can neither break the file's structure nor forge process or job records. A
//!   non-zero `ac_jid` of no live job is `ENODATA` and nothing is written (CSA writes the
//!   system file first and then fails).
//! * On a write error the file is closed and every kernel/daemon kind that was ON becomes
//!   ERROFF ([`Csa::file_error`]); CSA's daemon marks the kind that wrote and CSA, leaving
//!   the others ON with no file.
//! * Threshold values are taken as given; a negative one holds nothing back.
//!
//! ## Two steps, because opening a file sleeps
//!
//! ```text
//!   kernel (csa_ctl)                                    this module
//!   ────────────────                                    ───────────
//!   check_request(req, privileged)?        EINVAL / EPERM, before touching user memory
//!   copy arg in (ctl_arg_size(req) bytes)  EFAULT
//!   CtlArg::decode(req, bytes)
//!   lock; prepare(req, caller, &arg)?; unlock ──────►   validates; says whether a file must be opened,
//!   if Open{path, cookie}:                              and reserves the cookie for its errors
//!       file = RecordFile::open(path, cookie, on_error)?     (may sleep; ENOENT, EACCES, …)
//!   lock; fx = control(req, caller, &mut arg, opened, now)?; unlock
//!   carry out fx (Install puts `file` in its slot)  ──   validates again: the state may have changed
//!   copy arg out if ctl_copies_out(req)               while the file was being opened
//! ```
//!
//! If `control` fails after a file was opened, the kernel drops that file.

use tally_uapi::csa::{
    ctl_arg_size, valid_index, ActCtl, ActStat, ActWra, ACCT_KERNEL_CFG, ACCT_MAGIC, ACCT_MAXKDS, ACCT_RCDS, AC_AUTH,
    AC_CHECK, AC_CONFCHG_BOOT, AC_CONFCHG_FILE, AC_CONFCHG_OFF, AC_CONFCHG_ON, AC_HALT, AC_JASTART, AC_JASTOP,
    AC_KDSTAT, AC_MREQ, AC_RCDSTAT, AC_START, AC_STOP, AC_WRACCT, NUM_KDRCDS, NUM_KDS, NUM_RCDS,
};
use tally_uapi::errno::{EINVAL, ENODATA, EPERM};

use crate::effects::{Effects, FileId};
use crate::header::Header;
use crate::state::{Csa, FileCounters, JaFile, Path, Setting, State};

/// Who is calling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The calling process (its job is the one `ja` requests act on).
    pub pid: u32,
    /// May it change the accounting? (uid 0 in Tally, which has no capabilities.)
    pub privileged: bool,
}

/// The argument of a request, decoded. (One lives on the kernel stack for the length of a
/// `csa_ctl`; boxing the 1040-byte `actwra` would buy nothing but an allocation.)
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtlArg {
    None,
    Ctl(ActCtl),
    Stat(ActStat),
    Wra(ActWra),
}

impl CtlArg {
    /// Decode the bytes the kernel copied from `arg` for `request` (exactly
    /// `ctl_arg_size(request)` of them). `EINVAL` for an unknown request or a wrong length.
    pub fn decode(request: u32, bytes: &[u8]) -> Result<CtlArg, i32> {
        let size = ctl_arg_size(request).ok_or(EINVAL)?;
        if bytes.len() != size {
            return Err(EINVAL);
        }
        Ok(match size {
            0 => CtlArg::None,
            ActCtl::SIZE => CtlArg::Ctl(ActCtl::from_bytes(bytes.try_into().map_err(|_| EINVAL)?)),
            ActStat::SIZE => CtlArg::Stat(ActStat::from_bytes(bytes.try_into().map_err(|_| EINVAL)?)),
            _ => CtlArg::Wra(ActWra::from_bytes(bytes.try_into().map_err(|_| EINVAL)?)),
        })
    }

    /// Write the argument back into `out` (its `ctl_arg_size` bytes); returns how many.
    pub fn encode(&self, out: &mut [u8]) -> usize {
        match self {
            CtlArg::None => 0,
            CtlArg::Ctl(c) => put(out, &c.to_bytes()),
            CtlArg::Stat(s) => put(out, &s.to_bytes()),
            CtlArg::Wra(w) => put(out, &w.to_bytes()),
        }
    }
}

fn put(out: &mut [u8], b: &[u8]) -> usize {
    out[..b.len()].copy_from_slice(b);
    b.len()
}

/// What the kernel must do between [`Csa::prepare`] and [`Csa::control`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prepared<'a> {
    /// Nothing: call `control` with `opened = None`.
    Ready,
    /// Open `path` (an existing regular file on /var) with `cookie` as its error cookie,
    /// then call `control` with `opened = Some(cookie)`.
    Open { path: &'a [u8], cookie: u64 },
}

/// Does `request` need the caller to be privileged?
pub const fn needs_privilege(request: u32) -> bool {
    matches!(request, AC_START | AC_STOP | AC_HALT | AC_WRACCT | AC_AUTH)
}

/// The checks that come before the argument is read: `EINVAL` for an unknown request,
/// `EPERM` for an unprivileged caller of a privileged one.
pub const fn check_request(request: u32, privileged: bool) -> Result<(), i32> {
    if request >= AC_MREQ {
        Err(EINVAL)
    } else if needs_privilege(request) && !privileged {
        Err(EPERM)
    } else {
        Ok(())
    }
}

/// The entries of an actctl a START or STOP names: `ac_sttnum` (0 meaning 1), each index
/// valid.
fn entries(c: &ActCtl) -> Result<usize, i32> {
    let n = if c.ac_sttnum == 0 { 1 } else { c.ac_sttnum };
    let n = usize::try_from(n).map_err(|_| EINVAL)?;
    if n > NUM_KDRCDS || !c.ac_stat[..n].iter().all(|s| valid_index(s.ac_ind)) {
        return Err(EINVAL);
    }
    Ok(n)
}

/// Is `buf` one or more whole records of daemon types?
fn whole_daemon_records(buf: &[u8]) -> bool {
    let mut at = 0;
    while at < buf.len() {
        let Some(h) = Header::read(&buf[at..]) else { return false };
        let size = h.size as usize;
        if h.magic != ACCT_MAGIC || size < Header::SIZE || size > buf.len() - at || h.ah_type <= ACCT_KERNEL_CFG {
            return false;
        }
        at += size;
    }
    at > 0
}

/// What a validated request needs.
enum Need<'a> {
    Nothing,
    File(&'a [u8]),
}

impl Csa {
    /// Checks common to `prepare` and `control`.
    fn validate<'a>(&self, request: u32, caller: &Caller, arg: &'a CtlArg) -> Result<Need<'a>, i32> {
        check_request(request, caller.privileged)?;
        let in_job = || self.jobs.jid_of(caller.pid).ok_or(ENODATA);
        match (request, arg) {
            (AC_START, CtlArg::Ctl(c)) => {
                entries(c)?;
                let path = c.path().ok_or(EINVAL)?;
                if !path.is_empty() && !(self.system_open() && path == self.system_path()) {
                    Ok(Need::File(path))
                } else if self.system_open() {
                    Ok(Need::Nothing)
                } else {
                    Err(EINVAL)
                }
            }
            (AC_STOP, CtlArg::Ctl(c)) => entries(c).map(|_| Need::Nothing),
            (AC_HALT | AC_AUTH, _) => Ok(Need::Nothing),
            (AC_CHECK, CtlArg::Stat(s)) if valid_index(s.ac_ind) => Ok(Need::Nothing),
            (AC_KDSTAT | AC_RCDSTAT, CtlArg::Ctl(c)) if c.ac_sttnum > 0 => Ok(Need::Nothing),
            (AC_JASTART, CtlArg::Ctl(c)) => {
                let path = c.path().filter(|p| !p.is_empty()).ok_or(EINVAL)?;
                in_job()?;
                Ok(Need::File(path))
            }
            (AC_JASTOP, CtlArg::Ctl(_)) => in_job().map(|_| Need::Nothing),
            (AC_WRACCT, CtlArg::Wra(w)) => {
                let did = u32::try_from(w.ac_did).map_err(|_| EINVAL)?;
                let rec = w.record().ok_or(EINVAL)?;
                if did >= ACCT_MAXKDS || !whole_daemon_records(rec) {
                    return Err(EINVAL);
                }
                if w.ac_jid != 0 && self.jobs.job(w.ac_jid).is_none() {
                    return Err(ENODATA);
                }
                Ok(Need::Nothing)
            }
            _ => Err(EINVAL),
        }
    }

    /// Step one of `csa_ctl` (see the module documentation): validate, and say whether a
    /// file must be opened first (reserving the cookie its errors will carry).
    pub fn prepare<'a>(&mut self, request: u32, caller: &Caller, arg: &'a CtlArg) -> Result<Prepared<'a>, i32> {
        match self.validate(request, caller, arg)? {
            Need::Nothing => Ok(Prepared::Ready),
            Need::File(path) => Ok(Prepared::Open { path, cookie: self.new_cookie() }),
        }
    }

    /// Step two: carry out `request`. `opened` is the cookie of the file the kernel opened
    /// because `prepare` asked (`None` if it did not ask). Updates `arg` for the requests
    /// that answer in it; returns the effects to carry out in order.
    ///
    /// The request is validated again. If `prepare` asked for a file and none was opened
    /// (another `csa_ctl` opened the same path meanwhile), `AC_START` uses the system file
    /// that is open, and `AC_JASTART` fails with `EINVAL`.
    pub fn control(
        &mut self,
        request: u32,
        caller: &Caller,
        arg: &mut CtlArg,
        opened: Option<u64>,
        now_unix_ns: u64,
    ) -> Result<Effects, i32> {
        let need_file = matches!(self.validate(request, caller, arg)?, Need::File(_));
        let mut fx = Effects::new();
        match (request, arg) {
            (AC_START, CtlArg::Ctl(c)) => {
                if opened.is_none() && need_file && !self.system_open() {
                    return Err(EINVAL);
                }
                let n = entries(c)?;
                if let Some(cookie) = opened {
                    let path = Path::new(c.path().unwrap_or_default());
                    self.switch_system_file(&mut fx, path, cookie, now_unix_ns);
                }
                for s in &mut c.ac_stat[..n] {
                    if let Some(set) = self.setting_mut(s.ac_ind) {
                        *set = Setting { state: State::On, param: s.ac_param };
                        s.ac_state = set.state.code();
                    }
                }
                let cfg = self.cfg(AC_CONFCHG_ON, now_unix_ns);
                self.post_system(&mut fx, &cfg);
            }
            (AC_STOP, CtlArg::Ctl(c)) => {
                let n = entries(c)?;
                for s in &mut c.ac_stat[..n] {
                    if let Some(set) = self.setting_mut(s.ac_ind) {
                        *set = Setting { state: State::Off, param: 0 };
                        s.ac_state = set.state.code();
                        s.ac_param = 0;
                    }
                }
                let cfg = self.cfg(AC_CONFCHG_OFF, now_unix_ns);
                self.post_system(&mut fx, &cfg);
                if self.kd.iter().all(|s| s.state != State::On) {
                    self.close_system(&mut fx);
                }
            }
            (AC_HALT, _) => {
                for s in self.kd.iter_mut().chain(self.rcd.iter_mut()) {
                    *s = Setting { state: State::Off, param: 0 };
                }
                let cfg = self.cfg(AC_CONFCHG_OFF, now_unix_ns);
                self.post_system(&mut fx, &cfg);
                self.close_system(&mut fx);
            }
            (AC_CHECK, CtlArg::Stat(s)) => {
                let set = self.setting(s.ac_ind).unwrap_or_default();
                s.ac_state = set.state.code();
                s.ac_param = set.param;
            }
            (AC_KDSTAT, CtlArg::Ctl(c)) => self.status(c, 0, NUM_KDS),
            (AC_RCDSTAT, CtlArg::Ctl(c)) => self.status(c, ACCT_RCDS, NUM_RCDS),
            (AC_JASTART, CtlArg::Ctl(c)) => {
                let (Some(cookie), Some(jid)) = (opened, self.jobs.jid_of(caller.pid)) else { return Err(EINVAL) };
                let path = Path::new(c.path().unwrap_or_default());
                match self.ja_index(jid) {
                    Some(i) => {
                        if self.ja[i].cookie.is_some() {
                            fx.close(FileId::Ja(jid));
                        }
                        self.ja[i].path = path;
                        self.ja[i].cookie = Some(cookie);
                    }
                    None => {
                        // Room is reserved for one ja file per possible job (a job has at
                        // least one member): this push never reallocates.
                        if self.ja.len() >= self.ja.capacity() {
                            return Err(tally_uapi::errno::EAGAIN);
                        }
                        self.ja.push(JaFile { jid, path, cookie: Some(cookie), counters: FileCounters::default() });
                    }
                }
                fx.install(FileId::Ja(jid), cookie);
                let cfg = self.cfg(AC_CONFCHG_ON, now_unix_ns);
                self.post_ja(&mut fx, jid, &cfg);
            }
            (AC_JASTOP, CtlArg::Ctl(_)) => {
                let jid = self.jobs.jid_of(caller.pid).ok_or(ENODATA)?;
                if let Some(i) = self.ja_index(jid) {
                    if self.ja[i].cookie.is_some() {
                        fx.close(FileId::Ja(jid));
                    }
                    self.ja.remove(i);
                }
            }
            (AC_WRACCT, CtlArg::Wra(w)) => {
                let len = w.record().map_or(0, <[u8]>::len);
                if self.on(w.ac_did as u32) && self.system_open() {
                    fx.post_daemon(FileId::System);
                    self.system.counters.wrote(len);
                }
                if let Some(j) = self.ja.iter_mut().find(|j| j.jid == w.ac_jid && j.cookie.is_some()) {
                    fx.post_daemon(FileId::Ja(j.jid));
                    j.counters.wrote(len);
                    self.ja_total.wrote(len);
                }
            }
            (AC_AUTH, _) => {}
            _ => return Err(EINVAL),
        }
        Ok(fx)
    }

    /// AC_START's new file: FILE to the old one, close it, install the new one, BOOT first
    /// if this is the first file since boot.
    fn switch_system_file(&mut self, fx: &mut Effects, path: Path, cookie: u64, now_unix_ns: u64) {
        if self.system_open() {
            let cfg = self.cfg(AC_CONFCHG_FILE, now_unix_ns);
            self.post_system(fx, &cfg);
            fx.close(FileId::System);
        }
        self.system.path = path;
        self.system.cookie = Some(cookie);
        fx.install(FileId::System, cookie);
        if !self.boot_recorded {
            self.boot_recorded = true;
            let cfg = self.cfg(AC_CONFCHG_BOOT, now_unix_ns);
            self.post_system(fx, &cfg);
        }
    }

    fn close_system(&mut self, fx: &mut Effects) {
        if self.system.cookie.take().is_some() {
            fx.close(FileId::System);
        }
    }

    /// KDSTAT / RCDSTAT: `count` entries from index `first`.
    fn status(&self, c: &mut ActCtl, first: u32, count: usize) {
        let n = (c.ac_sttnum as usize).min(count);
        for (i, s) in c.ac_stat[..n].iter_mut().enumerate() {
            let ind = first + i as u32;
            let set = self.setting(ind).unwrap_or_default();
            *s = ActStat { ac_ind: ind, ac_state: set.state.code(), ac_param: set.param };
        }
        c.ac_sttnum = n as i32;
        c.set_path(self.system_path());
    }
}
