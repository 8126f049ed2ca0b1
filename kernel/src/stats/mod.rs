//! # stats — the kernel's statistics, published as Solaris-style kstats
//!
//! Tally's counters live where they are cheapest to keep; this floor publishes them the way
//! Solaris does (kstat(3KSTAT)): one chain of kstats named `module:instance:name`, whose data
//! sections are the ABI of `tally_uapi::kstat`. The chain is `tally_kstat`'s
//! [`KstatRegistry`]; this module owns the kernel's one instance, decides which kstats exist,
//! and copies each one's data in from its source when it is read (Solaris' `ks_update`):
//!
//! ```text
//!  where the numbers live              the kstat that publishes them       (file)
//!  ----------------------------------  ----------------------------------  --------------
//!  IrqAccounting, per IRQ line  ──┬──> pic:L:<line name>    intr, interrupts   irq_lines.rs
//!    (acct::snapshot().irq_lines) └──> unix:L:irq_timer     timer, interrupts  irq_lines.rs
//!  each ATA disk's IoStats      ─────> ata:N:ataN           io, disk           disks.rs
//!  sched::runq_io()             ─────> unix:0:runq          io, sched          runq.rs
//!  sched, irq, memory, clocks   ─────> unix:0:system_misc   named, misc        system_misc.rs
//!  frames, proc::oom, demand faults ──> unix:0:vm           named, vm          vm_stats.rs
//!  the message bus (`bus`)      ─────> bus:0:genetlink      named, net         genetlink.rs
//!  the console's input (`tty`)  ─────> tty:0:console        named, misc        console_input.rs
//!  acct(2), CSA's files (`acct`) ────> acct:0:pacct, csa:0:pacct, csa:0:ja,  acct_kstats.rs
//!                                      csa:P:ja (one per job with a ja file)
//!  the chain itself             ─────> unix:0:kstat_headers (KID 0) and unix:0:kstat_types
//! ```
//!
//! **Locking.** One spin lock around the registry, taken with interrupts disabled and never
//! from an interrupt handler: values updated in IRQ context stay where they are and are
//! copied on read. The sources are sampled before the lock is taken ([`Sources`]), except the
//! run queue's integrals (`runq::refresh` reads `sched::runq_io()` under it); nothing takes
//! the registry lock while holding the scheduler's. The read path, the chain id and the kstats
//! themselves are in `docs/kstat.md`.

mod acct_kstats;
mod console_input;
mod disks;
mod genetlink;
mod irq_lines;
pub mod kstat_print;
pub mod runq;
mod system_misc;
mod vm_stats;

/// What sits on a legacy PC line (`clock`, `com1`, `ide0`…): the name of its kstats.
pub use irq_lines::line_name as irq_line_name;

use alloc::vec::Vec;
use spin::Mutex;
use tally_kstat::{KstatError, KstatRead, KstatRegistry};
use tally_microstate::IrqLineStats;
use tally_uapi::kstat::{Hrtime, KidT, KstatValue, KSTAT_HEADERS_KID};

use hal::cpu::without_interrupts;
use hal::pic::NR_LINES;

/// The registry and which of its kstats this module maintains.
struct State {
    reg: KstatRegistry,
    /// The two kstats of each IRQ line that has fired.
    lines: [Option<irq_lines::LineKstats>; NR_LINES],
    /// Lines whose kstats could not be created (e.g. a provider took the name): not
    /// retried at every read.
    lines_failed: [bool; NR_LINES],
    /// (KID, disk index) of each disk's io kstat.
    disks: Vec<(KidT, usize)>,
    runq: Option<KidT>,
    misc: Option<KidT>,
    /// `unix:0:vm` (out of memory, `vm_stats.rs`).
    vm: Option<KidT>,
    bus: Option<KidT>,
    console: Option<KidT>,
    acct: Option<acct_kstats::AcctKstats>,
    /// (jid, KID) of each job's ja kstat.
    ja: Vec<(u64, KidT)>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Run `f` on the registry state with interrupts disabled. `None` before [`init`].
fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> Option<R> {
    without_interrupts(|| STATE.lock().as_mut().map(f))
}

/// Sample the sources and run `f` with them on the state; `None` before [`init`] (checked
/// first: the sources include the task layer, which exists only from then on).
fn with_sources<R>(f: impl FnOnce(&mut State, &Sources) -> R) -> Option<R> {
    without_interrupts(|| STATE.lock().is_some()).then(Sources::gather).and_then(|src| with_state(|st| f(st, &src)))
}

/// Nanoseconds since boot as an `hrtime_t`, the time base of every kstat.
pub fn now() -> Hrtime {
    hrtime(crate::base::time::monotonic_ns().unwrap_or(0))
}

/// A `u64` of nanoseconds as an `hrtime_t` (saturating; it would take 292 years).
pub(crate) fn hrtime(ns: u64) -> Hrtime {
    Hrtime::try_from(ns).unwrap_or(Hrtime::MAX)
}

/// What the providers outside this module say, sampled before the registry lock is taken.
pub(crate) struct Sources {
    pub lines: [IrqLineStats; NR_LINES],
    pub irq_counts: [u64; NR_LINES],
    pub irq_spurious: [u64; NR_LINES],
    /// When each line came into use (TSC, 0: never): its kstats' `crtime`.
    pub irq_since: [u64; NR_LINES],
    pub nproc: u32,
    pub nr_switches: u64,
    pub ticks: u64,
    pub mem: crate::base::memory::MemStats,
    pub commit_limit: u64,
    pub zfod: u64,
    pub cow_fault: u64,
    pub frames_shared: u64,
    pub maj_fault: u64,
    pub oom: crate::proc::oom::OomCounters,
    pub bus: tally_msgbus::BusStats,
    pub pacct: crate::acct::process_acct::PacctCounters,
    pub csa: crate::acct::job_acct::CsaCounters,
    pub ja_files: Vec<(u64, tally_csa::state::FileCounters, bool)>,
}

impl Sources {
    fn gather() -> Self {
        let snap = crate::acct::snapshot();
        let (irq_counts, irq_spurious) = crate::irq::counters();
        Sources {
            lines: snap.irq_lines,
            irq_counts,
            irq_spurious,
            irq_since: crate::irq::since(),
            nproc: u32::try_from(snap.tasks.len()).unwrap_or(u32::MAX),
            nr_switches: crate::sched::nr_switches(),
            ticks: crate::irq::ticks(),
            mem: crate::base::memory::stats(),
            commit_limit: crate::proc::oom::commit_limit(),
            zfod: crate::trap::user_fault_counts().1,
            cow_fault: crate::proc::vm::cow_faults(),
            frames_shared: hal::frames::with(|f| f.stats().shared),
            maj_fault: crate::proc::vm_file::counts().0,
            oom: crate::proc::oom::counters(),
            bus: crate::bus::stats(),
            pacct: crate::acct::process_acct::counters(),
            csa: crate::acct::job_acct::counters(),
            ja_files: crate::acct::job_acct::ja_files(),
        }
    }
}

/// Build the registry (`kstat_init`) and create the kstats of everything already there:
/// the disks the driver found, the run queue, `system_misc`, and the IRQ lines that have
/// fired. Runs once in `kmain`, after `drivers::init`; later calls do nothing.
pub fn init() {
    let src = Sources::gather();
    let created = without_interrupts(|| {
        let mut guard = STATE.lock();
        if guard.is_some() {
            return None;
        }
        let t = now();
        let mut st = State {
            reg: KstatRegistry::new(t),
            lines: [None; NR_LINES],
            lines_failed: [false; NR_LINES],
            disks: Vec::new(),
            runq: None,
            misc: None,
            vm: None,
            bus: None,
            console: None,
            acct: None,
            ja: Vec::new(),
        };
        st.disks = disks::create_all(&mut st.reg, t);
        st.runq = log_err("unix:0:runq", runq::create(&mut st.reg, t));
        st.misc = log_err("unix:0:system_misc", system_misc::create(&mut st.reg, t));
        st.vm = log_err("unix:0:vm", vm_stats::create(&mut st.reg, t));
        st.bus = log_err("bus:0:genetlink", genetlink::create(&mut st.reg, t));
        st.console = log_err("tty:0:console", console_input::create(&mut st.reg, t));
        st.acct =
            acct_kstats::create(&mut st.reg, t).map_err(|e| log::warn!("kstat: cannot create acct's: {e:?}")).ok();
        irq_lines::discover(&mut st, &src, t);
        let n = (st.reg.len(), st.reg.chain_id());
        *guard = Some(st);
        Some(n)
    });
    if let Some((len, kcid)) = created {
        log::info!("kstat: {len} kstats in the chain, chain id {kcid}");
    }
}

/// `ks_update` of a named kstat: `values` in the order its statistics were created.
fn set_in_order(
    reg: &mut KstatRegistry,
    kid: KidT,
    values: impl IntoIterator<Item = KstatValue>,
) -> Result<(), KstatError> {
    let named = reg.named_mut(kid)?;
    for (i, v) in values.into_iter().enumerate() {
        named.set(i, v)?;
    }
    Ok(())
}

fn log_err(what: &str, r: Result<KidT, KstatError>) -> Option<KidT> {
    r.map_err(|e| log::warn!("kstat: cannot create {what}: {e:?}")).ok()
}

/// The current chain id (KCID), with kstats for newly fired IRQ lines created first.
pub fn chain_id() -> KidT {
    with_sources(|st, src| {
        irq_lines::discover(st, src, now());
        acct_kstats::discover_ja(&mut st.reg, &mut st.ja, &src.ja_files, now());
        st.reg.chain_id()
    })
    .unwrap_or(0)
}

/// Read KID 0, the chain: one `KstatHeader` per kstat, in increasing KID order, then the
/// KCID in the result. The buffer must hold [`data_size`]`(0)` bytes.
pub fn read_chain(buf: &mut [u8]) -> Result<KstatRead, KstatError> {
    read(KSTAT_HEADERS_KID, buf)
}

/// Read kstat `kid` (`KSTAT_IOC_READ`): refresh it from its source, write its data section
/// into the start of `buf` as ABI records, stamp `ks_snaptime` with the time of the read,
/// and return the header, the length written and the KCID. Errors leave `buf` and the
/// chain as they were, except that kstats of newly fired IRQ lines may have been created.
pub fn read(kid: KidT, buf: &mut [u8]) -> Result<KstatRead, KstatError> {
    with_sources(|st, src| {
        let t = now();
        irq_lines::discover(st, src, t);
        acct_kstats::discover_ja(&mut st.reg, &mut st.ja, &src.ja_files, t);
        refresh(st, kid, src);
        let got = st.reg.read(kid, t, buf)?;
        if let Some(data) = buf.get_mut(..got.len) {
            irq_lines::snapshot_timer(st, kid, src, data);
        }
        Ok(got)
    })
    .unwrap_or(Err(KstatError::NoSuchKstat))
}

/// [`read`] into a buffer that grows until the data fits, as libkstat's `kstat_read`
/// does. For kernel-side readers (the self-test, a console command).
pub fn read_vec(kid: KidT) -> Result<(KstatRead, Vec<u8>), KstatError> {
    let mut buf = Vec::new();
    // The size can only grow between tries when kstats are created; a few tries suffice.
    for _ in 0..8 {
        match read(kid, &mut buf) {
            Ok(got) => {
                buf.truncate(got.len);
                return Ok((got, buf));
            }
            Err(KstatError::BufferTooSmall { needed }) => {
                buf.try_reserve_exact(needed.saturating_sub(buf.len())).map_err(|_| KstatError::NoMemory)?;
                buf.resize(needed, 0);
            }
            Err(e) => return Err(e),
        }
    }
    Err(KstatError::NoMemory)
}

/// The header of `kid` as the chain lists it, with the current chain id (no snapshot is
/// taken: `ks_snaptime` is the last read's). For a reader told its buffer is too small.
pub fn header(kid: KidT) -> Option<(tally_uapi::kstat::KstatHeader, KidT)> {
    with_state(|st| st.reg.header(kid).map(|h| (h, st.reg.chain_id()))).flatten()
}

/// Bytes [`read`] needs for `kid` now.
pub fn data_size(kid: KidT) -> Result<usize, KstatError> {
    with_state(|st| st.reg.data_size(kid)).unwrap_or(Err(KstatError::NoSuchKstat))
}

/// `kstat_lookup`: the KID of `module:instance:name`, if it exists.
pub fn lookup(module: &str, instance: i32, name: &str) -> Option<KidT> {
    with_state(|st| st.reg.lookup(module, instance, name)).flatten()
}

/// For a provider: create and install a named kstat whose statistics it will set with
/// [`set_named`]. `stats` are `(name, KSTAT_DATA_*)` pairs. Returns its KID.
pub fn create_named(
    module: &str,
    instance: i32,
    name: &str,
    class: &str,
    stats: &[(&str, u8)],
) -> Result<KidT, KstatError> {
    with_state(|st| {
        let kid = st.reg.create_named(module, instance, name, class, stats, now())?;
        st.reg.install(kid)?;
        Ok(kid)
    })
    .unwrap_or(Err(KstatError::NoSuchKstat))
}

/// For a provider: set one statistic of a named kstat it created.
pub fn set_named(kid: KidT, statistic: &str, value: KstatValue) -> Result<(), KstatError> {
    with_state(|st| {
        if st.is_managed(kid) {
            return Err(KstatError::Permanent);
        }
        st.reg.named_mut(kid)?.set_by_name(statistic, value)
    })
    .unwrap_or(Err(KstatError::NoSuchKstat))
}

/// `kstat_delete` for a provider's kstat. The kstats this module maintains (and KID 0)
/// are refused with `Permanent`.
pub fn delete(kid: KidT) -> Result<(), KstatError> {
    with_state(|st| {
        if st.is_managed(kid) {
            return Err(KstatError::Permanent);
        }
        st.reg.delete(kid)
    })
    .unwrap_or(Err(KstatError::NoSuchKstat))
}

impl State {
    /// Is `kid` one of the kstats this module keeps (or a system kstat of the registry)?
    fn is_managed(&self, kid: KidT) -> bool {
        kid == KSTAT_HEADERS_KID
            || self.reg.lookup("unix", 0, "kstat_types") == Some(kid)
            || self.runq == Some(kid)
            || self.misc == Some(kid)
            || self.vm == Some(kid)
            || self.bus == Some(kid)
            || self.console == Some(kid)
            || self.acct.is_some_and(|a| a.contains(kid))
            || self.ja.iter().any(|&(_, k)| k == kid)
            || self.disks.iter().any(|&(k, _)| k == kid)
            || self.lines.iter().flatten().any(|l| l.intr == kid || l.timer == kid)
    }
}

/// `ks_update` for `kid`: copy its data in from where it lives. A failure leaves the
/// previous values (a reader sees slightly stale numbers rather than an error).
fn refresh(st: &mut State, kid: KidT, src: &Sources) {
    if st.runq == Some(kid) {
        let _ = runq::refresh(&mut st.reg, kid);
    } else if st.misc == Some(kid) {
        let _ = system_misc::refresh(&mut st.reg, kid, src);
    } else if st.vm == Some(kid) {
        let _ = vm_stats::refresh(&mut st.reg, kid, src);
    } else if st.bus == Some(kid) {
        let _ = genetlink::refresh(&mut st.reg, kid, &src.bus);
    } else if st.console == Some(kid) {
        let _ = console_input::refresh(&mut st.reg, kid);
    } else if let Some(&(jid, _)) = st.ja.iter().find(|&&(_, k)| k == kid) {
        let _ = acct_kstats::refresh_ja(&mut st.reg, kid, jid, &src.ja_files);
    } else if let Some(a) = st.acct.filter(|a| a.contains(kid)) {
        let _ = acct_kstats::refresh(&mut st.reg, &a, kid, &src.pacct, &src.csa);
    } else if let Some(&(_, index)) = st.disks.iter().find(|&&(k, _)| k == kid) {
        let _ = disks::refresh(&mut st.reg, kid, index);
    } else {
        irq_lines::refresh(st, kid, src);
    }
}
