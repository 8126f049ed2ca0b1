//! A scenario's host checks: after QEMU ends, files pulled out of the scenario's accounting
//! disk and judged on the host — their size, and what GNU acct's real tools print for them
//! next to what Tally's tools printed on the console for the same file.
//!
//! Where it sits: `test.rs` runs a scenario, `scenario.rs` judges the console, then
//! `acctdisk::fsck` the disk, then [`HostCheck::judge`] for each `[[host_check]]` table of
//! the scenario (the keys are documented in `scenario.rs`). The file is read with `fatfs`
//! (`acctdisk::Image`), copied to a temporary file, and handed to `gnuacct::run`.
//!
//! **`same_as`** names a line the console showed — the shell's echo of a command, e.g.
//! `"$ dump-acct /var/account/pacct"` — and the check takes the lines after it, up to the
//! next line that starts with the shell's prompt `$ ` (the shell prints one before it reads
//! again, even at the end of its input), as what Tally printed — leaving out the kernel's
//! own log lines (`[    0.465057] INFO  …`), which may land anywhere. GNU's output must be the
//! same lines. User and terminal names are the one thing that may differ without either
//! side being wrong: GNU's `lastcomm` and `dump-acct` look them up on this host
//! (`/etc/passwd`, `/dev`), Tally's tools in Tally's own table (`TallyNames`: only
//! `root` and `ttyS0`…). When the two tables name a file's records differently, the check
//! goes through `tally-pacct`'s formatter, the code Tally's tools print with: the console
//! must equal it with Tally's names, and GNU must equal it with this host's
//! (`gnuacct::HostNames`). That detour is taken only for `dump-acct` and for `lastcomm`
//! with no options but `--pid` and `-p`; other cases must match byte for byte.

use std::path::Path;

use serde::Deserialize;
use tally_pacct::names::{Names, TallyNames};

use crate::gnuacct::{self, HostNames, Tool};

/// The shell's prompt (`userland/src/bin/sh.rs`): it ends a command's output.
const PROMPT: &str = "$ ";

/// A GNU acct tool, as a scenario names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum GnuTool {
    #[serde(rename = "dump-acct")]
    DumpAcct,
    #[serde(rename = "lastcomm")]
    Lastcomm,
    #[serde(rename = "sa")]
    Sa,
}

impl GnuTool {
    fn tool(self) -> Tool {
        match self {
            GnuTool::DumpAcct => Tool::DumpAcct,
            GnuTool::Lastcomm => Tool::Lastcomm,
            GnuTool::Sa => Tool::Sa,
        }
    }

    fn name(self) -> &'static str {
        match self {
            GnuTool::DumpAcct => "dump-acct",
            GnuTool::Lastcomm => "lastcomm",
            GnuTool::Sa => "sa",
        }
    }
}

/// One `[[host_check]]` table of a scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCheck {
    /// The file, as the guest names it (`/var/account/pacct`).
    pub file: String,
    /// Its size must be a whole number of records of this many bytes (64 is implied when a
    /// GNU tool reads it: acct v3 records).
    #[serde(default)]
    pub record_size: Option<u64>,
    /// At least this many records (of `record_size`, or 64) must be in it.
    #[serde(default)]
    pub min_records: u64,
    /// The GNU acct tool to run on it.
    #[serde(default)]
    pub tool: Option<GnuTool>,
    /// The tool's options (`lastcomm`'s `--pid`, `sa`'s `-a`); `gnuacct::run` adds the
    /// file and, for `sa`, `-i`.
    #[serde(default)]
    pub args: Vec<String>,
    /// A console line (a command's echo): the lines Tally printed after it must be what the
    /// tool prints.
    #[serde(default)]
    pub same_as: Option<String>,
    /// Substrings that must appear in the tool's output, in order.
    #[serde(default)]
    pub patterns: Vec<String>,
}

impl HostCheck {
    /// Refuses a table whose keys make no sense together (found when the scenarios load).
    pub fn validate(&self) -> Result<(), String> {
        if self.tool.is_none() && (self.same_as.is_some() || !self.patterns.is_empty() || !self.args.is_empty()) {
            return Err(format!("host_check {}: `same_as`, `patterns` and `args` need a `tool`", self.file));
        }
        if self.record_size == Some(0) {
            return Err(format!("host_check {}: `record_size` must be at least 1", self.file));
        }
        if self.tool.is_some() && self.record_size.is_some_and(|n| n != 64) {
            return Err(format!("host_check {}: GNU acct reads 64-byte records", self.file));
        }
        Ok(())
    }

    /// Runs the check on the disk image `disk` after a run whose console printed `serial`.
    /// `scratch` is a name for the temporary copy of the file (removed afterwards).
    pub fn judge(&self, disk: &Path, serial: &str, scratch: &Path) -> Result<(), String> {
        let what = format!("host check of {}", self.file);
        let bytes = crate::acctdisk::Image::open(disk)?.read(&self.file).map_err(|e| format!("{what}: {e}"))?;
        let size = self.record_size.or(self.tool.map(|_| 64));
        if let Some(n) = size {
            let len = bytes.len() as u64;
            if !len.is_multiple_of(n) {
                return Err(format!(
                    "{what}: {len} bytes are {} whole {n}-byte records and {} bytes of a partial one",
                    len / n,
                    len % n
                ));
            }
            if len / n < self.min_records {
                return Err(format!("{what}: {} records, fewer than the {} expected", len / n, self.min_records));
            }
        }
        let Some(tool) = self.tool else { return Ok(()) };
        std::fs::write(scratch, &bytes).map_err(|e| format!("cannot write {}: {e}", scratch.display()))?;
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let gnu = gnuacct::run(tool.tool(), scratch, &args);
        let _ = std::fs::remove_file(scratch);
        let gnu = gnu.map_err(|e| format!("{what}: {e}"))?;
        if let Some(line) = &self.same_as {
            let console = console_output(serial, line).map_err(|e| format!("{what}: {e}"))?;
            self.same_lines(tool, &bytes, &gnu, &console, &HostNames::load()).map_err(|e| format!("{what}: {e}"))?;
        }
        crate::scenario::find_in_order(&gnu, &self.patterns).map_err(|p| {
            format!(
                "{what}: GNU {} {} printed no {p:?} (after the previous match):\n{gnu}",
                tool.name(),
                args.join(" ")
            )
        })
    }

    /// GNU's output against the console's, directly or, when this host names users and
    /// terminals differently from Tally, through `tally-pacct` (see the module comment).
    /// `host` is how GNU named them.
    fn same_lines(
        &self,
        tool: GnuTool,
        bytes: &[u8],
        gnu: &str,
        console: &str,
        host: &dyn Names,
    ) -> Result<(), String> {
        let direct = gnuacct::compare_as(tool.name(), ("GNU", gnu), ("Tally's console", console));
        if direct.is_ok() {
            return direct;
        }
        let (Some(with_tally), Some(with_host)) =
            (self.render(tool, bytes, &TallyNames), self.render(tool, bytes, host))
        else {
            return direct;
        };
        if with_tally == with_host {
            return direct; // names are not the difference
        }
        gnuacct::compare_as(tool.name(), ("tally-pacct with Tally's names", &with_tally), ("Tally's console", console))
            .and_then(|()| {
                gnuacct::compare_as(tool.name(), ("GNU", gnu), ("tally-pacct with this host's names", &with_host))
            })
            .map_err(|e| format!("{e}\n(the direct comparison: {})", direct.unwrap_err()))
    }

    /// What `tally-pacct` prints for `bytes` as `tool` with `self.args`, names from
    /// `names`; `None` for a tool or options it does not render here.
    fn render(&self, tool: GnuTool, bytes: &[u8], names: &dyn Names) -> Option<String> {
        use tally_pacct::lastcomm::{write_lastcomm, Filter, LastcommOptions};
        let mut out = String::new();
        match tool {
            GnuTool::DumpAcct if self.args.is_empty() => {
                tally_pacct::dump::write_dump(&mut out, bytes, names).ok()?;
            }
            GnuTool::Lastcomm => {
                let mut opts = LastcommOptions::default();
                for a in &self.args {
                    match a.as_str() {
                        "--pid" => opts.show_pid = true,
                        "-p" | "--show-paging" => opts.show_paging = true,
                        _ => return None,
                    }
                }
                write_lastcomm(&mut out, bytes, &Filter::default(), names, &opts).ok()?;
            }
            _ => return None,
        }
        Some(out)
    }
}

/// Whether `line` is a kernel log message (`[    0.465057] INFO  fs: …`): the kernel logs
/// on the same console whenever it likes, so its lines may land in the middle of a
/// program's output, and are no part of it.
fn is_kernel_log(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('[') else { return false };
    let Some((stamp, _)) = rest.split_once("] ") else { return false };
    let stamp = stamp.trim_start();
    let Some((secs, frac)) = stamp.split_once('.') else { return false };
    !secs.is_empty()
        && secs.bytes().all(|b| b.is_ascii_digit())
        && frac.len() == 6
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// The lines the console showed after the first line that is exactly `line`, up to the next
/// line starting with the shell's prompt, each ending in `\n` (the console's CR LF read as
/// `\n`), without the kernel's log lines.
pub fn console_output(serial: &str, line: &str) -> Result<String, String> {
    let serial = serial.replace("\r\n", "\n");
    let mut lines = serial.split('\n');
    if !lines.by_ref().any(|l| l == line) {
        return Err(format!("the console has no line {line:?}"));
    }
    let mut out = String::new();
    for l in lines {
        if l.starts_with(PROMPT) {
            return Ok(out);
        }
        if is_kernel_log(l) {
            continue;
        }
        out.push_str(l);
        out.push('\n');
    }
    Err(format!("the output after {line:?} is not ended by the shell's prompt (did the run end early?)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acctdisk::{Disk, Image};
    use tally_pacct::record::{build, ProcessSummary};
    use tally_uapi::acct::{AXSIG, TTY_S0};

    /// Records for uids 0 and 1000 (the second named differently by Tally and by most hosts).
    fn records() -> Vec<u8> {
        let mut comm = [0u8; 16];
        comm[..5].copy_from_slice(b"hello");
        let base = ProcessSummary {
            pid: 5,
            ppid: 2,
            tty: TTY_S0,
            exit_unix_s: 1_764_054_120,
            elapsed_ns: 20_000_000,
            utime_ns: 10_000_000,
            comm,
            ..ProcessSummary::default()
        };
        let other = ProcessSummary { pid: 6, uid: 1000, gid: 1000, flags: AXSIG, exit_status: 9, ..base };
        [base, other].iter().flat_map(|p| build(p).to_bytes()).collect()
    }

    /// A console as Tally's shell shows it: each command echoed after the prompt, then the
    /// lines `tally-pacct` prints with Tally's names, CR LF line ends.
    fn console(bytes: &[u8]) -> String {
        let mut dump = String::new();
        tally_pacct::dump::write_dump(&mut dump, bytes, &TallyNames).unwrap();
        let mut last = String::new();
        let f = tally_pacct::lastcomm::Filter::default();
        tally_pacct::lastcomm::write_lastcomm(&mut last, bytes, &f, &TallyNames, &Default::default()).unwrap();
        format!("$ accton off\n$ dump-acct /var/account/pacct\n{dump}$ lastcomm -f /var/account/pacct\n{last}$ \n")
            .replace('\n', "\r\n")
    }

    fn check(text: &str) -> HostCheck {
        let c: HostCheck = toml::from_str(text).unwrap();
        c.validate().unwrap();
        c
    }

    fn disk_with(name: &str, bytes: &[u8]) -> Disk {
        let d = Disk::fresh(name).unwrap();
        Image::open_rw(d.path()).unwrap().write("/var/account/pacct", bytes).unwrap();
        d
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("tally-{name}-{}.pulled", std::process::id()))
    }

    #[test]
    fn the_console_output_of_a_command_ends_at_the_next_prompt() {
        let serial = "boot\r\n$ dump-acct x\r\nline 1\r\nline 2\r\n$ next\r\nz\r\n$ ";
        assert_eq!(console_output(serial, "$ dump-acct x").unwrap(), "line 1\nline 2\n");
        assert_eq!(console_output(serial, "$ next").unwrap(), "z\n");
        assert!(console_output(serial, "$ dump-acct").is_err(), "whole lines only");
        assert!(console_output("$ a\r\nout\r\n", "$ a").unwrap_err().contains("not ended"));
        let serial = "$ a\r\nx\r\n[    0.465057] INFO  fs: /var is ata2\r\n[8] killed by SIGFPE (8)\r\ny\r\n$ ";
        assert_eq!(
            console_output(serial, "$ a").unwrap(),
            "x\n[8] killed by SIGFPE (8)\ny\n",
            "kernel log lines left out"
        );
    }

    #[test]
    fn keys_that_need_a_tool_are_refused_without_one() {
        let c: HostCheck = toml::from_str("file = \"/var/x\"\nsame_as = \"$ x\"\n").unwrap();
        assert!(c.validate().is_err());
        let c: HostCheck = toml::from_str("file = \"/var/x\"\ntool = \"sa\"\nrecord_size = 32\n").unwrap();
        assert!(c.validate().is_err());
        assert!(toml::from_str::<HostCheck>("file = \"/var/x\"\ntool = \"ls\"\n").is_err());
        assert!(toml::from_str::<HostCheck>("file = \"/var/x\"\nsame = \"$ x\"\n").is_err(), "unknown key");
    }

    #[test]
    fn record_size_and_count_are_checked_without_any_tool() {
        let bytes = records();
        let d = disk_with("unit-hc-size", &bytes[..100]);
        let c = check("file = \"/var/account/pacct\"\nrecord_size = 64\n");
        let e = c.judge(d.path(), "", &scratch("unit-hc-size")).unwrap_err();
        assert!(e.contains("100 bytes are 1 whole 64-byte records and 36 bytes"), "{e}");
        let d = disk_with("unit-hc-size2", &bytes);
        assert_eq!(c.judge(d.path(), "", &scratch("unit-hc-size2")), Ok(()));
        let c = check("file = \"/var/account/pacct\"\nrecord_size = 64\nmin_records = 3\n");
        assert!(c.judge(d.path(), "", &scratch("unit-hc-size2")).unwrap_err().contains("2 records, fewer than the 3"));
        let c = check("file = \"/var/account/nothere\"\nrecord_size = 64\n");
        assert!(c.judge(d.path(), "", &scratch("unit-hc-size2")).is_err(), "a missing file fails");
    }

    /// A host that calls uid 1000 `alice`.
    struct Alice;

    impl Names for Alice {
        fn user(&self, uid: u32) -> Option<&str> {
            [(0, "root"), (1000, "alice")].iter().find(|(u, _)| *u == uid).map(|(_, n)| *n)
        }

        fn tty(&self, dev: u16) -> Option<&str> {
            TallyNames.tty(dev)
        }
    }

    #[test]
    fn names_may_differ_but_nothing_else() {
        let bytes = records();
        let last = check("file = \"/var/account/pacct\"\ntool = \"lastcomm\"\nsame_as = \"$ x\"\n");
        let f = tally_pacct::lastcomm::Filter::default();
        let (mut console, mut gnu) = (String::new(), String::new());
        tally_pacct::lastcomm::write_lastcomm(&mut console, &bytes, &f, &TallyNames, &Default::default()).unwrap();
        tally_pacct::lastcomm::write_lastcomm(&mut gnu, &bytes, &f, &Alice, &Default::default()).unwrap();
        assert!(gnu.contains("alice") && console.contains(" 1000 "), "{gnu}{console}");
        assert_eq!(last.same_lines(GnuTool::Lastcomm, &bytes, &gnu, &console, &Alice), Ok(()));
        // Anything else that differs still fails, whichever way the names go.
        let wrong = console.replacen("hello", "hullo", 1);
        assert!(last.same_lines(GnuTool::Lastcomm, &bytes, &gnu, &wrong, &Alice).is_err());
        let wrong = gnu.replacen("0.01", "0.02", 1);
        assert_ne!(wrong, gnu);
        assert!(last.same_lines(GnuTool::Lastcomm, &bytes, &wrong, &console, &Alice).is_err());
        // With options it cannot render, the two must match byte for byte.
        let odd = check("file = \"/var/account/pacct\"\ntool = \"lastcomm\"\nargs = [\"--user\", \"root\"]\n");
        assert!(odd.same_lines(GnuTool::Lastcomm, &bytes, &gnu, &console, &Alice).is_err());
    }

    #[test]
    fn gnu_output_is_compared_with_what_tally_printed() {
        if gnuacct::ensure().is_err() {
            println!("note: GNU acct is not available on this host, check skipped");
            return;
        }
        let bytes = records();
        let d = disk_with("unit-hc-gnu", &bytes);
        let serial = console(&bytes);
        let s = scratch("unit-hc-gnu");
        let dump = check(
            "file = \"/var/account/pacct\"\ntool = \"dump-acct\"\nsame_as = \"$ dump-acct /var/account/pacct\"\n\
             patterns = [\"hello\", \"hello\"]\nmin_records = 2\n",
        );
        assert_eq!(dump.judge(d.path(), &serial, &s), Ok(()));
        let last = check(
            "file = \"/var/account/pacct\"\ntool = \"lastcomm\"\nsame_as = \"$ lastcomm -f /var/account/pacct\"\n",
        );
        assert_eq!(last.judge(d.path(), &serial, &s), Ok(()));

        // A value Tally printed wrong: pid 5 shown as 7.
        let wrong = serial.replacen("|       5|", "|       7|", 1);
        assert_ne!(wrong, serial);
        let e = dump.judge(d.path(), &wrong, &s).unwrap_err();
        assert!(e.contains("differ at line 1"), "{e}");
        // Tally printed one line fewer.
        let mut lines: Vec<&str> = serial.split("\r\n").collect();
        let at = lines.iter().position(|l| l.starts_with("$ lastcomm")).unwrap();
        lines.remove(at + 1);
        let e = last.judge(d.path(), &lines.join("\r\n"), &s).unwrap_err();
        assert!(e.contains("differ"), "{e}");
        // A pattern GNU's output lacks.
        let p =
            check("file = \"/var/account/pacct\"\ntool = \"sa\"\nargs = [\"-a\"]\npatterns = [\"nosuchcommand\"]\n");
        assert!(p.judge(d.path(), &serial, &s).unwrap_err().contains("printed no \"nosuchcommand\""));
        // A partial record never reaches GNU's lastcomm (which would crash on it).
        let d = disk_with("unit-hc-gnu2", &bytes[..70]);
        assert!(last.judge(d.path(), &serial, &s).unwrap_err().contains("partial"));
        assert!(!s.exists(), "the pulled copy is removed");
    }
}
