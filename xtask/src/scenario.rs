//! Integration scenarios: one TOML file per scenario in `tests/`.
//!
//! ```toml
//! description = "What the scenario proves, in one sentence."
//! selftest = "heap_frames::heap_and_frames"  # the kernel self-test this boot runs (see below)
//! cmdline = "loglevel=debug"     # kernel command line words (optional; see below)
//! expect = "success"             # or "failure" for scenarios that must end in a fault, or "killed",
//!                                # or "exited" with exit_status: init (pid 1) ended with that status
//! exit_status = 7                # with expect = "exited" only: the status init ended with (1..=111)
//! serial = ["heap: counters back to baseline", "selftest heap: ok"]  # must appear, in order
//! timeout = 60                   # seconds before the run is killed and failed (default 60)
//! icount = false                 # deterministic guest time: QEMU -icount, 1 ns per instruction
//! script = """                   # optional (also spelt `stdin`): typed on the console
//! hello                          # once the kernel is ready, then ^D (end of input);
//! echo done                      # without it the console gets no input at all
//! """
//! repeat_line = "# a comment"    # optional, with repeat_bytes: this line (a newline added)
//! repeat_bytes = 1048576         # typed again and again, up to this many bytes, before
//!                                # `script` (a large input without a large file)
//! capture_serial = ["exit record", "pid 7 (spin)"]  # optional: see below
//! prstat_rows_add_up = true      # optional: each prstat row's columns add up to 100 %
//!                                # (± rounding), or the scenario fails (`prstat_rows.rs`)
//!
//! add = ["tests/added/linuxprog.c"]  # optional: C sources built on the host with musl-gcc
//!                                # and packed as `run --add FILE` packs them: /bin/linuxprog
//!                                # (the scenario boots an image of its own with them)
//! acct_disk_mib = 4              # optional: the accounting disk's size, 4 to 64 MiB (default
//!                                # 8); the scenarios that fill it take a small one
//!
//! kill_after = "$ hello 5"       # with expect = "killed": kill QEMU once this appears
//! kill_delay_ms = 20             # … this long after it (default 0)
//!
//! [[host_check]]                 # optional, repeatable: a file of /var judged on the host
//! file = "/var/account/pacct"    # pulled out of the run's accounting disk after QEMU ends
//! record_size = 64               # optional: its size must be whole records (64 implied by a tool)
//! min_records = 4                # optional: at least this many records (default 0)
//! tool = "dump-acct"             # optional: GNU acct's "dump-acct", "lastcomm" or "sa" on it
//! args = []                      # optional: the tool's options ("--pid"; "-a" for sa)
//! same_as = "$ dump-acct /var/account/pacct"  # optional: the tool prints what Tally printed
//! patterns = ["hello", "spin"]   # optional: in the tool's output, in order
//! ```
//!
//! `selftest` names the function of a kernel self-test by its Rust path from
//! `kernel/src/selftest/` (`crate::demo::run` for one elsewhere); that line is the test's whole
//! registration. The scenario boots with `test=NAME` (NAME: the file's name, e.g. `heap` for
//! `heap.toml`) followed by the words of `cmdline`, if any. The kernel's build script makes its
//! table of self-tests from these same files (crate `tally-selftests`), so a path that names no
//! function fails the kernel build. A scenario without `selftest` (a shell script, init's
//! arguments) boots with `cmdline` alone (default: empty).
//!
//! A pattern is found as a substring, after the previous one's match. It may span lines
//! (`"$ hello\nhello: pid"` says the second line follows the first at once): the console
//! sends each newline as CR LF, and the judge reads CR LF as `\n`.
//!
//! With `capture_serial`, the guest's second serial port (COM2, `/dev/ttyS1`) is attached
//! to a temporary file; after the run the file is decoded as `cargo xtask decode` does
//! (`decode.rs`), and the patterns must appear in the decoded text, in order. A capture that
//! does not decode fails the scenario with the offset of the bad bytes.
//!
//! `expect = "killed"` with `kill_after`: QEMU is killed (SIGKILL, a power cut to the guest)
//! `kill_delay_ms` after the console first shows `kill_after` (CR LF read as `\n`); a run
//! that ends before that fails. The `serial` patterns are then found in what came before the
//! kill, and the disk is checked as after any run: this is how a scenario shows that a
//! machine stopped mid-write leaves whole records and a clean file system.
//!
//! **The accounting disk.** Every scenario boots with its own fresh copy of the accounting
//! disk (`acctdisk.rs`; the kernel's `/var`). After the run, `fsck.fat -n` must find its file
//! system clean, in every scenario — with one exception after a kill (`expect = "killed"`):
//! `embedded-sdmmc` links a new cluster into the FAT before fsd writes the file's new size
//! into its directory entry, so a kill in between leaves a file being appended to with a
//! cluster chain longer than its size (`docs/files.md` §3). fsck.fat's "File size is N
//! bytes, cluster chain length is > M bytes" (M: N rounded up to whole clusters) for a
//! `[[host_check]]` file is accepted then and printed as a note under the scenario's result;
//! any other finding, or that one for another file, fails (`acctdisk::fsck_after_kill`). Then each `[[host_check]]` pulls `file` out of it with
//! `fatfs`: a missing file fails, and so does a size that is not a whole number of
//! `record_size`-byte records (64 when a `tool` reads it: acct v3, and GNU's `lastcomm`
//! crashes on a partial record) or fewer than `min_records`. `tool` runs GNU acct's real tool
//! on the file (`gnuacct.rs`: fetched with `apt-get download`, never installed; run with
//! `TZ=UTC`): anything on its standard error fails. With `same_as`, the console's lines after
//! the first line that is exactly `same_as` (the shell's echo of the command), up to the next
//! line that starts with the prompt `$ `, leaving out the kernel's log lines
//! (`[    0.465057] INFO  …`), must be the tool's output, line for line; user and
//! terminal names, which GNU takes from this host, are reconciled through `tally-pacct`
//! (`hostcheck.rs` says how). `patterns` are found in the tool's output as `serial` in the
//! console. A scenario that fails keeps its disk and names it, for `cargo xtask acct`.

use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    Success,
    Failure,
    /// Killed by the runner at `kill_after`.
    Killed,
    /// Init (pid 1) ended with the non-zero status `exit_status`.
    Exited,
}

impl Expect {
    /// What the scenario waits for, in the words of [`crate::qemu::Status`]'s display.
    fn describe(self) -> &'static str {
        match self {
            Expect::Success => "success (status 0)",
            Expect::Failure => "the kernel's failure verdict",
            Expect::Killed => "QEMU killed on purpose",
            Expect::Exited => "init (pid 1) ending with the scenario's exit_status",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(skip)]
    pub name: String,
    pub description: String,
    /// The self-test's function, a path from `kernel/src/selftest/`: boots with `test=NAME`.
    #[serde(default)]
    pub selftest: Option<String>,
    /// Kernel command line words; with `selftest`, those after `test=NAME`.
    #[serde(default)]
    pub cmdline: String,
    pub expect: Expect,
    /// With `expect = "exited"`: the status init (pid 1) must end with.
    #[serde(default)]
    pub exit_status: Option<u8>,
    #[serde(default)]
    pub serial: Vec<String>,
    #[serde(default = "default_timeout")]
    pub timeout: u64,
    #[serde(default)]
    pub icount: bool,
    /// Console input: sent once the kernel is ready, followed by `^D` (see `qemu.rs`).
    #[serde(default, alias = "stdin")]
    pub script: Option<String>,
    /// Typed before `script`, repeated up to `repeat_bytes` bytes (whole lines).
    #[serde(default)]
    pub repeat_line: Option<String>,
    #[serde(default)]
    pub repeat_bytes: u64,
    /// Patterns the decoded COM2 capture must show, in order (COM2 is attached only then).
    #[serde(default)]
    pub capture_serial: Option<Vec<String>>,
    /// With `expect = "killed"`: QEMU is killed once the console shows this pattern.
    #[serde(default)]
    pub kill_after: Option<String>,
    /// How long after `kill_after` appears QEMU is killed, in milliseconds.
    #[serde(default)]
    pub kill_delay_ms: u64,
    /// The accounting disk's size in MiB (default: `acctdisk::DISK_BYTES`).
    #[serde(default)]
    pub acct_disk_mib: Option<u64>,
    /// C sources (paths from the repository's root) compiled on the host with `musl-gcc
    /// -static` and packed as `cargo xtask run --add` packs a file: the scenario boots an
    /// image of its own with them in `/bin` under their file names.
    #[serde(default)]
    pub add: Vec<String>,
    /// Files of the accounting disk judged on the host after the run (`hostcheck.rs`).
    #[serde(default)]
    pub host_check: Vec<crate::hostcheck::HostCheck>,
    /// Every prstat table's rows must add up to 100 % (`prstat_rows.rs`).
    #[serde(default)]
    pub prstat_rows_add_up: bool,
}

fn default_timeout() -> u64 {
    60
}

/// Every `*.toml` in `dir`, sorted by name.
pub fn load_all(dir: &Path) -> Result<Vec<Scenario>, String> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut s: Scenario = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        s.name = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        for c in &s.host_check {
            c.validate().map_err(|e| format!("{}: {e}", path.display()))?;
        }
        if s.acct_disk_mib
            .is_some_and(|m| !(crate::acctdisk::MIN_DISK_MIB..=crate::acctdisk::MAX_DISK_MIB).contains(&m))
        {
            return Err(format!(
                "{}: acct_disk_mib must be {} to {}",
                path.display(),
                crate::acctdisk::MIN_DISK_MIB,
                crate::acctdisk::MAX_DISK_MIB
            ));
        }
        if (s.expect == Expect::Exited) != s.exit_status.is_some()
            || s.exit_status.is_some_and(|n| !(1..=111).contains(&n))
        {
            return Err(format!("{}: `expect = \"exited\"` and `exit_status` (1 to 111) go together", path.display()));
        }
        if (s.expect == Expect::Killed) != s.kill_after.is_some() {
            return Err(format!("{}: `expect = \"killed\"` and `kill_after` go together", path.display()));
        }
        if let Some(selftest) = &s.selftest {
            tally_selftests::check(&s.name, selftest, &s.cmdline).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        out.push(s);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

impl Scenario {
    /// The kernel command line this scenario boots with: `test=NAME` and `cmdline` for a
    /// self-test, `cmdline` alone otherwise.
    pub fn kernel_cmdline(&self) -> String {
        tally_selftests::kernel_cmdline(&self.name, self.selftest.as_deref(), &self.cmdline)
    }

    /// QEMU for this scenario on `image`, with `disk` as its accounting disk: its command
    /// line, guest time, console input and kill point.
    pub fn qemu(&self, image: &Path, disk: &Path) -> crate::qemu::Qemu {
        let q =
            crate::qemu::Qemu::new(image, disk).cmdline(&self.kernel_cmdline()).icount(self.icount).input(self.input());
        match &self.kill_after {
            Some(p) => q.kill_after(p, std::time::Duration::from_millis(self.kill_delay_ms)),
            None => q,
        }
    }

    /// What this scenario types on the console.
    pub fn input(&self) -> crate::qemu::Input {
        let mut bytes = Vec::new();
        if let Some(line) = &self.repeat_line {
            let line = format!("{line}\n");
            while bytes.len() as u64 + line.len() as u64 <= self.repeat_bytes {
                bytes.extend_from_slice(line.as_bytes());
            }
        }
        match &self.script {
            Some(s) => bytes.extend_from_slice(s.as_bytes()),
            None if bytes.is_empty() => return crate::qemu::Input::Closed,
            None => {}
        }
        crate::qemu::Input::Script(bytes)
    }

    /// Check a finished run: the exit status and the serial patterns, in order.
    pub fn judge(&self, status: crate::qemu::Status, serial: &str) -> Result<(), String> {
        use crate::qemu::Status;
        match (self.expect, status) {
            (Expect::Success, Status::Success) | (Expect::Failure, Status::Failure) => {}
            (Expect::Killed, Status::Killed) => {}
            (Expect::Exited, Status::Exited(n)) if Some(n) == self.exit_status => {}
            (Expect::Killed, got) => {
                return Err(format!(
                    "expected to be killed after \"{}\", the run ended first, with {got}",
                    self.kill_after.as_deref().unwrap_or_default()
                ))
            }
            (_, Status::Timeout) => return Err(format!("timed out after {} s", self.timeout)),
            (want, got) => return Err(format!("expected {}, the run ended with {got}", want.describe())),
        }
        // The UART sends every "\n" as "\r\n": patterns spanning lines are written with "\n".
        let serial = serial.replace("\r\n", "\n");
        find_in_order(&serial, &self.serial)
            .map_err(|p| format!("serial output lacks {p:?} (after the previous match)"))?;
        if self.prstat_rows_add_up {
            crate::prstat_rows::check(&serial)?;
        }
        Ok(())
    }

    /// Check the COM2 capture of a run against `capture_serial` (nothing to check without it).
    pub fn judge_capture(&self, capture: &[u8]) -> Result<(), String> {
        let Some(patterns) = &self.capture_serial else { return Ok(()) };
        let text = crate::decode::decode(capture)
            .map_err(|e| format!("the COM2 capture ({} bytes) does not decode: {e}", capture.len()))?;
        find_in_order(&text, patterns).map_err(|p| {
            format!(
                "the decoded COM2 capture ({} bytes) lacks {p:?} (after the previous match); decoded:\n{text}",
                capture.len()
            )
        })
    }
}

impl Scenario {
    /// Check the accounting disk of a finished run with each `[[host_check]]`, in order.
    pub fn judge_disk(&self, disk: &Path, serial: &str) -> Result<(), String> {
        for (i, c) in self.host_check.iter().enumerate() {
            let scratch = std::env::temp_dir().join(format!("tally-{}-{}-{i}.pulled", self.name, std::process::id()));
            c.judge(disk, serial, &scratch)?;
        }
        Ok(())
    }
}

/// `Err(pattern)` for the first pattern not found in `text` after the previous one's match.
pub fn find_in_order<'p>(text: &str, patterns: &'p [String]) -> Result<(), &'p str> {
    let mut from = 0;
    for pattern in patterns {
        match text[from..].find(pattern.as_str()) {
            Some(at) => from += at + pattern.len(),
            None => return Err(pattern),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_patterns_may_span_lines_written_as_crlf() {
        let s: Scenario = toml::from_str(
            "description = \"d\"\ncmdline = \"\"\nexpect = \"success\"\n\
             serial = [\"$ hello\\nhello: pid\", \"done\"]\n",
        )
        .unwrap();
        use crate::qemu::Status;
        assert_eq!(s.judge(Status::Success, "$ hello\r\nhello: pid 3\r\ndone\r\n"), Ok(()));
        assert!(
            s.judge(Status::Success, "$ hello\r\nother\r\nhello: pid 3\r\ndone\r\n").is_err(),
            "lines must follow each other"
        );
    }

    #[test]
    fn a_killed_scenario_passes_only_if_it_was_killed() {
        use crate::qemu::Status;
        let s = scenario(
            "k",
            "description = \"d\"\nexpect = \"killed\"\nkill_after = \"$ hello 8\"\nserial = [\"$ hello 1\"]\n",
        );
        assert_eq!(s.judge(Status::Killed, "$ hello 1\r\n$ hello 8\r\n"), Ok(()));
        let e = s.judge(Status::Success, "$ hello 1\r\n").unwrap_err();
        assert!(e.contains("expected to be killed after \"$ hello 8\""), "{e}");
        assert!(s.judge(Status::Killed, "$ hello 8\r\n").is_err(), "serial still checked");
        let plain = scenario("p", "description = \"d\"\nexpect = \"success\"\n");
        assert!(plain.judge(Status::Killed, "").is_err());

        let dir = std::env::temp_dir().join(format!("tally-killed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.toml"), "description = \"d\"\nexpect = \"killed\"\n").unwrap();
        let e = load_all(&dir).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("go together"), "{e}");
    }

    #[test]
    fn capture_patterns_are_checked_in_order_on_the_decoded_text() {
        let mut s: Scenario = toml::from_str(
            "description = \"d\"\ncmdline = \"\"\nexpect = \"success\"\ncapture_serial = [\"0 messages\"]\n",
        )
        .unwrap();
        assert_eq!(s.judge_capture(&[]), Ok(()));
        s.capture_serial = Some(vec!["replies".into(), "0 messages".into()]);
        let e = s.judge_capture(&[]).unwrap_err();
        assert!(e.contains("lacks \"0 messages\""), "{e}");
        let e = s.judge_capture(&[1, 2, 3]).unwrap_err();
        assert!(e.contains("does not decode: offset 0"), "{e}");
        s.capture_serial = None;
        assert_eq!(s.judge_capture(&[1, 2, 3]), Ok(()), "no capture_serial: nothing checked");
    }

    fn scenario(name: &str, text: &str) -> Scenario {
        let mut s: Scenario = toml::from_str(text).unwrap();
        s.name = name.into();
        s
    }

    #[test]
    fn a_selftest_boots_with_test_name_then_the_cmdline_words() {
        let s = scenario("heap", "description = \"d\"\nselftest = \"memory::heap_and_frames\"\nexpect = \"success\"\n");
        assert_eq!(s.kernel_cmdline(), "test=heap");
        let text = "description = \"d\"\nselftest = \"memory::heap_and_frames\"\n\
                    cmdline = \"loglevel=debug\"\nexpect = \"success\"\n";
        let s = scenario("heap_debug", text);
        assert_eq!(s.kernel_cmdline(), "test=heap_debug loglevel=debug");
        let s = scenario("shell", "description = \"d\"\ncmdline = \"init=sh demo=off\"\nexpect = \"success\"\n");
        assert_eq!(s.kernel_cmdline(), "init=sh demo=off");
        let s = scenario("default_boot", "description = \"d\"\nexpect = \"success\"\n");
        assert_eq!(s.kernel_cmdline(), "", "no selftest, no cmdline: the default boot");
    }

    #[test]
    fn load_all_refuses_a_cmdline_that_picks_its_own_test() {
        let dir = std::env::temp_dir().join(format!("tally-scenarios-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("heap.toml");
        let text = "description = \"d\"\nselftest = \"memory::heap_and_frames\"\n\
                    cmdline = \"test=heap\"\nexpect = \"success\"\n";
        std::fs::write(&file, text).unwrap();
        let e = load_all(&dir).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("heap.toml: `cmdline` has `test=heap`"), "{e}");
    }

    /// The scenarios of this tree as xtask runs them and as the kernel's build script tables
    /// them: the same self-tests, each booted with its own name.
    #[test]
    fn xtask_and_the_kernel_table_read_tests_alike() {
        let dir = crate::build::root().join("tests");
        let scenarios = load_all(&dir).unwrap();
        let table = tally_selftests::load(&tally_selftests::scenario_files(&dir).unwrap()).unwrap();
        let with_selftest: Vec<(&str, &str)> =
            scenarios.iter().filter_map(|s| Some((s.name.as_str(), s.selftest.as_deref()?))).collect();
        let tabled: Vec<(&str, &str)> = table.iter().map(|t| (t.name.as_str(), t.path.as_str())).collect();
        assert_eq!(with_selftest, tabled);
        assert!(!tabled.is_empty());
        for s in &scenarios {
            let cmdline = s.kernel_cmdline();
            let kernel_words = cmdline.split_whitespace().take_while(|w| *w != "--");
            let tests: Vec<&str> = kernel_words.filter(|w| w.starts_with("test=")).collect();
            let want = if s.selftest.is_some() { vec![format!("test={}", s.name)] } else { vec![] };
            assert_eq!(tests, want, "{}: {cmdline:?}", s.name);
        }
    }
}
