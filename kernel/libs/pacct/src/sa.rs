//! `sa`: a summary per command, as GNU acct 6.6.4's `sa` prints it by default.
//!
//! ```text
//!        5       0.07re       0.03cp         0avio       812k
//!        3       0.05re       0.03cp         0avio       800k   spin
//!        2       0.02re       0.00cp         0avio       830k   ***other
//! └ calls   real time       CPU time    I/O per call   memory per call   command
//! ```
//!
//! The first line is the total; then one line per command, the busiest (most CPU) first.
//! Records group by command name **and** the AFORK flag: a process that forked and never
//! called exec is a different "command" from one that did, and is marked with `*`.
//! Commands seen only once, and names with unprintable bytes, are lumped into `***other`
//! unless every command is asked for (`-a`); if nothing is left outside `***other`, `sa`
//! prints nothing at all. Columns:
//!
//! * **re** — elapsed time, in minutes (`-j`: seconds per call);
//! * **cp** — user + system CPU time, likewise (`-l` splits it into `u` and `s`);
//! * **avio** — `ac_io` per call, divided by AHZ as GNU does (it is 0 from Linux and Tally);
//! * **k** — `ac_mem` per call, divided by 4: GNU treats the field as pages and
//!   "converts" them to KB by dividing by the KB per page (4096 / 1024), so a process of
//!   1234 KB shows `308k`. Tally prints the same, so that its `sa` and GNU's agree.
//!
//! Sums are kept as `f64` and added in file order, exactly as GNU's `sa` adds them, so the
//! rounding of every printed column is the same. Entries with the same sort key are
//! ordered by GNU by its hash table's order; here by command name, then without `*` first.
//!
//! The kernel has no allocator to lend: a [`Summary`] fills a table the caller provides.

use core::cmp::Ordering;
use core::fmt::{self, Write};

use tally_uapi::acct::{AcctV3, ACCT_COMM, AFORK, AHZ};

use crate::encoding::decode_comp_t;
use crate::text::{is_printable, CFloat};

/// GNU `sa`'s `PAGES_TO_KB` divisor on a 4 KiB-page machine (see the module docs).
const KB_PER_PAGE: f64 = 4.0;

/// What one command (or all, or `***other`) used, summed over its records, in the units
/// `sa` prints: seconds, and `ac_mem` / 4.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub calls: u64,
    pub user_s: f64,
    pub sys_s: f64,
    pub real_s: f64,
    pub io: f64,
    pub mem_k: f64,
}

impl Stats {
    /// The numbers of one record, as `sa` reads them.
    pub fn of(r: &AcctV3) -> Stats {
        let ahz = f64::from(AHZ);
        Stats {
            calls: 1,
            user_s: decode_comp_t(r.ac_utime) as f64 / ahz,
            sys_s: decode_comp_t(r.ac_stime) as f64 / ahz,
            real_s: f64::from(r.ac_etime) / ahz,
            io: decode_comp_t(r.ac_io) as f64 / ahz,
            mem_k: decode_comp_t(r.ac_mem) as f64 / KB_PER_PAGE,
        }
    }

    /// Adds `s` field by field, in GNU's order.
    pub fn add(&mut self, s: &Stats) {
        self.user_s += s.user_s;
        self.sys_s += s.sys_s;
        self.real_s += s.real_s;
        self.io += s.io;
        self.mem_k += s.mem_k;
        self.calls += s.calls;
    }

    fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// One line of the table: a command name (as a 16-byte, NUL-padded key), whether its
/// processes forked without exec, and their sums.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommandStats {
    comm: [u8; ACCT_COMM],
    fork: bool,
    other: bool,
    pub stats: Stats,
}

impl CommandStats {
    /// An unused table slot.
    pub const EMPTY: CommandStats = CommandStats {
        comm: [0; ACCT_COMM],
        fork: false,
        other: false,
        stats: Stats { calls: 0, user_s: 0.0, sys_s: 0.0, real_s: 0.0, io: 0.0, mem_k: 0.0 },
    };

    /// The command name, without padding.
    pub fn comm(&self) -> &[u8] {
        let len = self.comm.iter().position(|&c| c == 0).unwrap_or(ACCT_COMM);
        &self.comm[..len]
    }

    /// Whether these are processes that forked and did not exec (printed with `*`).
    pub fn fork(&self) -> bool {
        self.fork
    }
}

impl Default for CommandStats {
    fn default() -> Self {
        CommandStats::EMPTY
    }
}

/// The caller's table has no room for another command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableFull;

/// How the table is sorted (GNU's default is CPU time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SaSort {
    /// User + system time (the default).
    #[default]
    Cpu,
    /// `-n`: number of calls.
    Calls,
}

/// `sa`'s options that change the table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SaOptions {
    /// `-a`: list every command, none lumped into `***other`.
    pub all: bool,
    /// `-c`: a percentage of the total after calls, real and CPU time.
    pub percentages: bool,
    /// `-j`: seconds per call instead of total minutes.
    pub seconds_per_call: bool,
    /// `-l`: user and system time in separate columns.
    pub separate_times: bool,
    /// `-n` and the default.
    pub sort: SaSort,
    /// `-r`: smallest first.
    pub reverse: bool,
}

/// The per-command sums of a file, in a table of the caller's.
pub struct Summary<'t> {
    table: &'t mut [CommandStats],
    used: usize,
    total: Stats,
}

impl<'t> Summary<'t> {
    /// An empty summary that keeps its commands in `table` (one slot per distinct command
    /// name and AFORK flag).
    pub fn new(table: &'t mut [CommandStats]) -> Summary<'t> {
        Summary { table, used: 0, total: Stats::default() }
    }

    /// Adds one record. `TableFull` if it is of a command not yet in the table and the table
    /// has no free slot (the total then does not count it either).
    pub fn add(&mut self, r: &AcctV3) -> Result<(), TableFull> {
        let mut key = [0u8; ACCT_COMM];
        key[..r.comm_bytes().len()].copy_from_slice(r.comm_bytes());
        let fork = r.ac_flag & AFORK != 0;
        let s = Stats::of(r);
        let i = match self.table[..self.used].iter().position(|c| c.comm == key && c.fork == fork) {
            Some(i) => i,
            None => {
                let slot = self.table.get_mut(self.used).ok_or(TableFull)?;
                *slot = CommandStats { comm: key, fork, ..CommandStats::EMPTY };
                self.used += 1;
                self.used - 1
            }
        };
        self.table[i].stats.add(&s);
        self.total.add(&s);
        Ok(())
    }

    /// Adds every v3 record of a file's bytes; returns how many records of another version
    /// were skipped.
    pub fn add_file(&mut self, bytes: &[u8]) -> Result<usize, TableFull> {
        let mut skipped = 0;
        for r in crate::file::records(bytes) {
            match r {
                Ok(r) => self.add(&r)?,
                Err(_) => skipped += 1,
            }
        }
        Ok(skipped)
    }

    /// The sums over all records added.
    pub fn total(&self) -> &Stats {
        &self.total
    }

    /// The commands seen so far, in the order first seen.
    pub fn commands(&self) -> &[CommandStats] {
        &self.table[..self.used]
    }

    /// Prints the table as `sa` does (see the module docs). Sorts the caller's table.
    pub fn write<W: Write + ?Sized>(&mut self, out: &mut W, opts: &SaOptions) -> fmt::Result {
        let mut other = CommandStats { other: true, ..CommandStats::EMPTY };
        let mut listed = 0;
        for c in &mut self.table[..self.used] {
            c.other = !opts.all && (c.stats.calls == 1 || !is_printable(c.comm()));
            if c.other {
                other.stats.add(&c.stats);
                other.fork |= c.fork;
            } else {
                listed += 1;
            }
        }
        if listed == 0 {
            return Ok(());
        }
        let rows = &mut self.table[..self.used];
        rows.sort_unstable_by(|a, b| a.other.cmp(&b.other).then_with(|| compare(a, b, opts)));
        let total = self.total;
        write_stats(out, &total, &total, opts)?;
        out.write_char('\n')?;
        // `***other` is sorted among the commands, as GNU sorts it.
        let mut other_done = other.stats.calls == 0;
        for c in rows[..listed].iter() {
            if !other_done && compare(&other, c, opts) != Ordering::Greater {
                write_row(out, &other, &total, opts)?;
                other_done = true;
            }
            write_row(out, c, &total, opts)?;
        }
        if !other_done {
            write_row(out, &other, &total, opts)?;
        }
        Ok(())
    }
}

/// GNU's `compare_stats_entry`: the sort key, largest first (`-r` smallest), then calls,
/// user, system and real time, I/O and memory, all largest first; then (where GNU leaves
/// the order to its hash table) the name, and without `*` before with. `***other` sorts as
/// an empty name.
fn compare(a: &CommandStats, b: &CommandStats, opts: &SaOptions) -> Ordering {
    let (x, y) = (&a.stats, &b.stats);
    let key = |s: &Stats| match opts.sort {
        SaSort::Cpu => s.cpu_s(),
        SaSort::Calls => s.calls as f64,
    };
    let desc = |p: f64, q: f64| {
        let o = q.partial_cmp(&p).unwrap_or(Ordering::Equal);
        if opts.reverse {
            o.reverse()
        } else {
            o
        }
    };
    desc(key(x), key(y))
        .then_with(|| desc(x.calls as f64, y.calls as f64))
        .then_with(|| desc(x.user_s, y.user_s))
        .then_with(|| desc(x.sys_s, y.sys_s))
        .then_with(|| desc(x.real_s, y.real_s))
        .then_with(|| desc(x.io, y.io))
        .then_with(|| desc(x.mem_k, y.mem_k))
        .then_with(|| name_of(a).cmp(name_of(b)))
        .then_with(|| a.fork.cmp(&b.fork))
}

fn name_of(c: &CommandStats) -> &[u8] {
    if c.other {
        b"***other"
    } else {
        c.comm()
    }
}

fn write_row<W: Write + ?Sized>(out: &mut W, c: &CommandStats, total: &Stats, opts: &SaOptions) -> fmt::Result {
    write_stats(out, &c.stats, total, opts)?;
    out.write_str("   ")?;
    for &b in name_of(c) {
        out.write_char(if b.is_ascii() { char::from(b) } else { '?' })?;
    }
    if c.fork {
        out.write_char('*')?;
    }
    out.write_char('\n')
}

/// GNU's `print_stats_nicely`: the numeric columns of one line.
fn write_stats<W: Write + ?Sized>(out: &mut W, s: &Stats, total: &Stats, opts: &SaOptions) -> fmt::Result {
    let calls = s.calls as f64;
    let per = if opts.seconds_per_call { calls } else { 60.0 };
    let pct = |part: f64, whole: f64| CFloat(if whole != 0.0 { part / whole * 100.0 } else { 0.0 }, 7, 2);
    write!(out, "{:8} ", s.calls)?;
    if opts.percentages {
        write!(out, "{}% ", pct(calls, total.calls as f64))?;
    }
    write!(out, "{}re ", CFloat(s.real_s / per, 10, 2))?;
    if opts.percentages {
        write!(out, "{}% ", pct(s.real_s, total.real_s))?;
    }
    if opts.separate_times {
        write!(out, "{}u ", CFloat(s.user_s / per, 10, 2))?;
        if opts.percentages {
            write!(out, "{}% ", pct(s.user_s, total.user_s))?;
        }
        write!(out, "{}s", CFloat(s.sys_s / per, 10, 2))?;
        if opts.percentages {
            write!(out, " {}%", pct(s.sys_s, total.sys_s))?;
        }
    } else {
        write!(out, "{}cp", CFloat(s.cpu_s() / per, 10, 2))?;
        if opts.percentages {
            write!(out, " {}%", pct(s.cpu_s(), total.cpu_s()))?;
        }
    }
    write!(out, "{}avio {}k", CFloat(s.io / calls, 10, 0), CFloat(s.mem_k / calls, 9, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_uapi::acct::ACCT_VERSION;

    fn rec(name: &[u8], flags: u8, ut: u16, st: u16, etime: f32, mem: u16) -> AcctV3 {
        let mut r = AcctV3 {
            ac_flag: flags,
            ac_version: ACCT_VERSION,
            ac_utime: ut,
            ac_stime: st,
            ac_etime: etime,
            ac_mem: mem,
            ..AcctV3::zeroed()
        };
        r.ac_comm[..name.len()].copy_from_slice(name);
        r
    }

    fn table(records: &[AcctV3], opts: SaOptions) -> String {
        let mut slots = [CommandStats::EMPTY; 8];
        let mut s = Summary::new(&mut slots);
        for r in records {
            s.add(r).unwrap();
        }
        let mut out = String::new();
        s.write(&mut out, &opts).unwrap();
        out
    }

    #[test]
    fn groups_by_name_and_fork_flag() {
        let recs =
            [rec(b"sh", 0, 7, 3, 250.0, 1234), rec(b"sh", AFORK, 0, 1, 1.0, 100), rec(b"sh", 0, 1, 0, 50.0, 1000)];
        let mut slots = [CommandStats::EMPTY; 4];
        let mut s = Summary::new(&mut slots);
        for r in &recs {
            s.add(r).unwrap();
        }
        assert_eq!(s.commands().len(), 2);
        assert_eq!(s.commands()[0].stats.calls, 2);
        assert!(s.commands()[1].fork());
        assert_eq!(s.total().calls, 3);
        assert!((s.total().real_s - 3.01).abs() < 1e-12);
    }

    // The expected tables below are GNU sa 6.6.4's output (Debian `acct` 6.6.4-5, `sa -i
    // [options] FILE`) for files holding the same records, written by a script.

    #[test]
    fn default_table_lumps_single_calls_into_other() {
        let recs = [
            rec(b"sh", 0, 7, 3, 250.0, 1234),
            rec(b"sh", 0, 1, 0, 50.0, 1000),
            rec(b"spin", 0, 300, 2, 400.0, 2000),
            rec(b"ls", 0, 1, 1, 5.0, 800),
        ];
        assert_eq!(
            table(&recs, SaOptions::default()),
            concat!(
                "       4       0.12re       0.05cp         0avio       315k\n",
                "       2       0.07re       0.05cp         0avio       350k   ***other\n",
                "       2       0.05re       0.00cp         0avio       279k   sh\n",
            )
        );
        // All single calls: nothing at all.
        assert_eq!(table(&recs[2..], SaOptions::default()), "");
        assert_eq!(
            table(&recs, SaOptions { all: true, ..Default::default() }),
            concat!(
                "       4       0.12re       0.05cp         0avio       315k\n",
                "       1       0.07re       0.05cp         0avio       500k   spin\n",
                "       2       0.05re       0.00cp         0avio       279k   sh\n",
                "       1       0.00re       0.00cp         0avio       200k   ls\n",
            )
        );
    }

    #[test]
    fn options_change_columns_and_order() {
        let recs = [rec(b"a", 0, 100, 50, 6000.0, 40), rec(b"b", 0, 1, 0, 100.0, 8), rec(b"b", AFORK, 1, 0, 100.0, 8)];
        let o = SaOptions { all: true, seconds_per_call: true, separate_times: true, ..Default::default() };
        assert_eq!(
            table(&recs, o),
            concat!(
                "       3      20.67re       0.34u       0.17s         0avio         5k\n",
                "       1      60.00re       1.00u       0.50s         0avio        10k   a\n",
                "       1       1.00re       0.01u       0.00s         0avio         2k   b\n",
                "       1       1.00re       0.01u       0.00s         0avio         2k   b*\n",
            )
        );
        assert_eq!(
            table(&recs, SaOptions { all: true, sort: SaSort::Calls, reverse: true, ..Default::default() }),
            concat!(
                "       3       1.03re       0.03cp         0avio         5k\n",
                "       1       0.02re       0.00cp         0avio         2k   b\n",
                "       1       0.02re       0.00cp         0avio         2k   b*\n",
                "       1       1.00re       0.03cp         0avio        10k   a\n",
            )
        );
        assert_eq!(
            table(&recs, SaOptions { all: true, percentages: true, ..Default::default() }),
            concat!(
                "       3  100.00%       1.03re  100.00%       0.03cp  100.00%         0avio         5k\n",
                "       1   33.33%       1.00re   96.77%       0.03cp   98.68%         0avio        10k   a\n",
                "       1   33.33%       0.02re    1.61%       0.00cp    0.66%         0avio         2k   b\n",
                "       1   33.33%       0.02re    1.61%       0.00cp    0.66%         0avio         2k   b*\n",
            )
        );
    }

    #[test]
    fn unprintable_names_are_other_and_a_full_table_refuses() {
        let recs = [
            rec(b"x\x01", 0, 1, 0, 1.0, 4),
            rec(b"x\x01", 0, 1, 0, 1.0, 4),
            rec(b"ok", 0, 1, 0, 1.0, 4),
            rec(b"ok", 0, 1, 0, 1.0, 4),
        ];
        assert_eq!(
            table(&recs, SaOptions::default()),
            concat!(
                "       4       0.00re       0.00cp         0avio         1k\n",
                "       2       0.00re       0.00cp         0avio         1k   ***other\n",
                "       2       0.00re       0.00cp         0avio         1k   ok\n",
            )
        );
        let mut slots = [CommandStats::EMPTY; 1];
        let mut s = Summary::new(&mut slots);
        assert_eq!(s.add(&recs[2]), Ok(()));
        assert_eq!(s.add(&recs[3]), Ok(()), "same command, same slot");
        assert_eq!(s.add(&recs[0]), Err(TableFull));
        assert_eq!(s.total().calls, 2);
    }
}
