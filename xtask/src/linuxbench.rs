//! `cargo xtask bench --linux`: the same operations on Linux, under the same QEMU and time base.
//!
//! Tally's numbers mean little alone; this puts them beside the system Tally teaches.
//! The steps, each cached under `target/linux/`:
//!
//! 1. **The kernel**: Debian's `linux-image-amd64`, fetched with `apt-get download`. That
//!    package is empty but for a dependency on the versioned one (`linux-image-6.1.0-NN-amd64`),
//!    which is downloaded too and unpacked with `dpkg-deb -x`; its `boot/vmlinuz-*` is copied to
//!    `target/linux/vmlinuz` and the version to `target/linux/version`. Delete the directory
//!    to fetch a newer one.
//! 2. **The peer program**: `xtask/linux-peer/peer.c`, built with the host's `gcc -static`,
//!    packed as `/init`, the only file of a newc cpio (the ramdisk writer of `tally_loader`).
//! 3. **The run**: `qemu-system-x86_64 -kernel vmlinuz -initrd peer.cpio` with the machine of
//!    Tally's bench (`-machine pc -cpu max -m 256M -smp 1`, `-icount shift=0,sleep=off` unless
//!    `--no-icount`), the console on COM1, kernel options `console=ttyS0 quiet delayacct
//!    panic=-1`. The peer prints one `LINUXBENCH {"name","param","ops","ns"}` line per result
//!    and powers the machine off.
//!
//! Then [`compare`] pairs its results with Tally's ([`PAIRS`]) into one table with the ratio
//! Linux / Tally. Any step that cannot be done (no apt-get, no package, no gcc or static libc,
//! a boot that fails) is an error message for the Linux half only: `bench.rs` prints it and
//! keeps Tally's results.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::bench::Sample;
use crate::build;

/// The Debian package that names the current kernel.
const PACKAGE: &str = "linux-image-amd64";
/// The kernel command line: the console on COM1, no boot chatter, delay accounting on
/// (taskstats' delay fields, off by default since 5.14), and a panic ends QEMU at once.
const APPEND: &str = "console=ttyS0 quiet delayacct panic=-1";
/// How long the Linux run may take on a slow host (~1 minute is usual).
const TIMEOUT: Duration = Duration::from_secs(600);

/// One result line of the peer: `ns` of guest time for `ops` operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinuxSample {
    pub name: String,
    #[serde(default)]
    pub param: u64,
    pub ops: u64,
    pub ns: u64,
}

impl LinuxSample {
    pub fn ns_per_op(&self) -> f64 {
        self.ns as f64 / self.ops.max(1) as f64
    }
}

/// Where a row's number comes from: one benchmark `(name, param)`, or the difference of two
/// (what the first costs more than the second).
#[derive(Debug, Clone, Copy)]
pub enum Measure {
    One(&'static str, u64),
    Diff((&'static str, u64), (&'static str, u64)),
}

impl Measure {
    pub fn value(self, find: impl Fn(&str, u64) -> Option<f64>) -> Option<f64> {
        match self {
            Measure::One(name, param) => find(name, param),
            Measure::Diff((a, pa), (b, pb)) => Some(find(a, pa)? - find(b, pb)?),
        }
    }
}

/// One row of the comparison: its label, Linux's measure, and Tally's (`None`: Tally has no
/// such benchmark, printed "not measured").
pub struct Pair {
    pub label: &'static str,
    pub linux: Measure,
    pub tally: Option<Measure>,
}

/// The operations compared, Linux's peer (`peer.c`) on the left, Tally's benchmarks (`ubench`
/// and `kernel/src/bench/`, accounting compiled in) on the right.
pub const PAIRS: [Pair; 9] = [
    Pair {
        label: "null system call: getpid",
        linux: Measure::One("getpid", 0),
        tally: Some(Measure::One("null_syscall", 0)),
    },
    Pair {
        label: "own CPU clocks: getrusage(SELF) / msa(MSA_SELF)",
        linux: Measure::One("getrusage", 0),
        tally: Some(Measure::One("msa_self", 0)),
    },
    Pair {
        label: "thread CPU clock: clock_gettime(THREAD_CPUTIME) / msa(MSA_THREAD)",
        linux: Measure::One("clock_thread", 0),
        // `ubench msathread`: read from the thread's vvar page, no system call.
        tally: Some(Measure::One("msa_thread", 0)),
    },
    Pair {
        label: "taskstats GET by pid, round trip",
        linux: Measure::One("taskstats_get", 0),
        tally: Some(Measure::One("taskstats_get", 0)),
    },
    Pair {
        label: "lat_ctx, 2 processes, per hop",
        linux: Measure::One("lat_ctx", 2),
        tally: Some(Measure::One("lat_ctx", 2)),
    },
    Pair {
        label: "new program: fork+exec+exit+wait / spawn /test/exiter",
        linux: Measure::One("exec_exit", 0),
        tally: Some(Measure::One("acct_exit", 0)),
    },
    // A process's life, with and without a listener: Linux forks, Tally (which has no fork)
    // spawns `/test/exiter`; both exit at once and are waited for (`bus_records.rs`).
    Pair {
        label: "process life, no listener: fork+exit+wait / spawn+exit+wait",
        linux: Measure::One("fork_exit", 0),
        tally: Some(Measure::One("taskstats_exit_user", 0)),
    },
    Pair {
        label: "process life, one taskstats listener (same)",
        linux: Measure::One("fork_exit", 1),
        tally: Some(Measure::One("taskstats_exit_user", 1)),
    },
    Pair {
        label: "an exit's extra cost with one listener",
        linux: Measure::Diff(("fork_exit", 1), ("fork_exit", 0)),
        tally: Some(Measure::Diff(("taskstats_exit_user", 1), ("taskstats_exit_user", 0))),
    },
];

/// A row of the comparison as printed and saved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub label: String,
    pub linux_ns_per_op: Option<f64>,
    pub tally_ns_per_op: Option<f64>,
    /// Tally has no benchmark of this operation (rather than: it did not run this time).
    pub tally_not_measured: bool,
    /// Linux / Tally: above 1, Tally does it in fewer instructions.
    pub linux_over_tally: Option<f64>,
}

/// The `linux` section of `bench.json`.
#[derive(Debug, Serialize)]
pub struct Section {
    /// The package the kernel came from, e.g. `linux-image-6.1.0-56-amd64 6.1.192-2`.
    pub kernel: String,
    /// What the peer read from sysfs at boot: `clocksource: tsc`, `spectre_v2: Mitigation: ...`.
    pub info: Vec<String>,
    pub samples: Vec<LinuxSample>,
    pub comparison: Vec<Row>,
}

/// The `LINUXBENCH {json}` lines of the console output (QEMU's serial output ends lines in
/// CR LF; kernel messages may come between them).
pub fn parse(serial: &str) -> Result<Vec<LinuxSample>, String> {
    serial
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').split_once("LINUXBENCH ").map(|(_, json)| json))
        .map(|json| serde_json::from_str(json.trim()).map_err(|e| format!("bad LINUXBENCH line {json:?}: {e}")))
        .collect()
}

/// Pair the Linux samples with Tally's (accounting compiled in), one row per [`PAIRS`] entry.
pub fn compare(linux: &[LinuxSample], tally: &[Sample]) -> Vec<Row> {
    compare_pairs(&PAIRS, linux, tally)
}

/// [`compare`] over the rows `pairs`.
fn compare_pairs(pairs: &[Pair], linux: &[LinuxSample], tally: &[Sample]) -> Vec<Row> {
    pairs
        .iter()
        .map(|p| {
            let l =
                p.linux.value(|n, q| linux.iter().find(|s| s.name == n && s.param == q).map(LinuxSample::ns_per_op));
            let t = p
                .tally
                .and_then(|m| m.value(|n, q| tally.iter().find(|s| s.name == n && s.param == q).map(|s| s.ns_per_op)));
            Row {
                label: p.label.to_string(),
                linux_ns_per_op: l,
                tally_ns_per_op: t,
                tally_not_measured: p.tally.is_none(),
                linux_over_tally: l.zip(t).filter(|&(_, t)| t > 0.0).map(|(l, t)| l / t),
            }
        })
        .collect()
}

/// The table, as `cargo xtask bench --linux` prints it.
pub fn table(kernel: &str, rows: &[Row]) -> String {
    let mut out = format!("Linux ({kernel}) and Tally (accounting in), ns/op of guest time:\n");
    out += &format!("{:<66} {:>10} {:>12} {:>11}\n", "operation", "Linux", "Tally", "Linux/Tally");
    for r in rows {
        let linux = r.linux_ns_per_op.map_or("-".to_string(), |v| format!("{v:.1}"));
        let tally = match r.tally_ns_per_op {
            Some(v) => format!("{v:.1}"),
            None if r.tally_not_measured => "not measured".to_string(),
            None => "-".to_string(),
        };
        let ratio = r.linux_over_tally.map_or("-".to_string(), |x| format!("{x:.2}"));
        out += &format!("{:<66} {:>10} {:>12} {:>11}\n", r.label, linux, tally, ratio);
    }
    out
}

/// Run `cmd`; its standard output if it succeeded, else an error naming `what`.
fn output(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("cannot run {what}: `{}` is not installed", cmd.get_program().to_string_lossy())
        }
        _ => format!("cannot run {what}: {e}"),
    })?;
    if !out.status.success() {
        return Err(format!("{what} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The versioned package a `Depends:` field names, e.g. `linux-image-6.1.0-56-amd64 (= 6.1.192-2)`
/// → `linux-image-6.1.0-56-amd64`.
pub fn versioned_package(depends: &str) -> Option<&str> {
    depends
        .split([',', '|'])
        .map(|d| d.split_whitespace().next().unwrap_or(""))
        .find(|name| name.starts_with("linux-image-") && *name != PACKAGE)
}

/// The only `.deb` in `dir` whose name starts with `prefix_`.
fn deb(dir: &Path, prefix: &str) -> Result<PathBuf, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{prefix}_")) && n.ends_with(".deb"))
        })
        .ok_or_else(|| format!("apt-get download {prefix} left no .deb in {}", dir.display()))
}

/// Debian's kernel, from the cache or fetched: `(vmlinuz, "package version")`.
fn kernel(dir: &Path) -> Result<(PathBuf, String), String> {
    let vmlinuz = dir.join("vmlinuz");
    let version = dir.join("version");
    if let (true, Ok(v)) = (vmlinuz.exists(), std::fs::read_to_string(&version)) {
        return Ok((vmlinuz, v.trim().to_string()));
    }
    let debs = dir.join("debs");
    std::fs::create_dir_all(&debs).map_err(|e| format!("cannot create {}: {e}", debs.display()))?;
    let download = |package: &str| {
        eprintln!("bench: fetching {package} with apt-get download...");
        output(
            Command::new("apt-get").arg("download").arg(package).current_dir(&debs),
            &format!("apt-get download {package}"),
        )
        .map_err(|e| {
            format!(
                "{e}\n(the comparison with Linux needs Debian's {PACKAGE} package, from `apt-get download`: \
                     on Debian or Ubuntu with its package lists (`apt-get update`))"
            )
        })
    };
    download(PACKAGE)?;
    let meta = deb(&debs, PACKAGE)?;
    let depends = output(Command::new("dpkg-deb").arg("-f").arg(&meta).arg("Depends"), "dpkg-deb -f")?;
    let versioned = versioned_package(&depends)
        .ok_or_else(|| format!("{PACKAGE} depends on no versioned kernel package: {depends:?}"))?
        .to_string();
    download(&versioned)?;
    let pkg = deb(&debs, &versioned)?;
    let root = dir.join("root");
    output(Command::new("dpkg-deb").arg("-x").arg(&pkg).arg(&root), "dpkg-deb -x")?;
    let boot = root.join("boot");
    let image = std::fs::read_dir(&boot)
        .map_err(|e| format!("cannot read {}: {e}", boot.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("vmlinuz-")))
        .ok_or_else(|| format!("{versioned} has no boot/vmlinuz-*"))?;
    std::fs::copy(&image, &vmlinuz).map_err(|e| format!("cannot copy {}: {e}", image.display()))?;
    let version_text =
        output(Command::new("dpkg-deb").arg("-f").arg(&pkg).arg("Version"), "dpkg-deb -f").unwrap_or_default();
    let label = format!("{versioned} {}", version_text.trim());
    std::fs::write(&version, &label).map_err(|e| format!("cannot write {}: {e}", version.display()))?;
    Ok((vmlinuz, label))
}

/// Build the peer with the host's `gcc -static` and pack it as `/init`; returns the cpio.
fn peer(dir: &Path) -> Result<PathBuf, String> {
    let source = build::root().join("xtask").join("linux-peer").join("peer.c");
    let exe = dir.join("peer");
    output(
        Command::new("gcc").args(["-static", "-O2", "-Wall", "-Wextra", "-o"]).arg(&exe).arg(&source),
        "gcc -static (the peer needs gcc and a static C library, Debian's libc6-dev)",
    )?;
    let bytes = std::fs::read(&exe).map_err(|e| format!("cannot read {}: {e}", exe.display()))?;
    let mut archive = tally_loader::cpio::Builder::new();
    archive.file("init", &bytes, 0o755).map_err(|e| e.to_string())?;
    let cpio = dir.join("peer.cpio");
    std::fs::write(&cpio, archive.finish()).map_err(|e| format!("cannot write {}: {e}", cpio.display()))?;
    Ok(cpio)
}

/// Boot `vmlinuz` with the peer as init; the console output.
fn boot(vmlinuz: &Path, cpio: &Path, icount: bool) -> Result<String, String> {
    let mut cmd = Command::new("qemu-system-x86_64");
    cmd.args(crate::qemu::MACHINE)
        .args(["-no-reboot", "-display", "none", "-monitor", "none", "-serial", "stdio"])
        .arg("-kernel")
        .arg(vmlinuz)
        .arg("-initrd")
        .arg(cpio)
        .args(["-append", APPEND]);
    if icount {
        cmd.args(["-icount", "shift=0,sleep=off"]);
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start qemu-system-x86_64: {e}"))?;
    let (status, text, _) = crate::child::wait_with_timeout(child, Some(TIMEOUT))?;
    let tail = || crate::test::tail(&text, 20);
    match status {
        None => Err(format!("Linux did not power off within {} s; last lines:\n{}", TIMEOUT.as_secs(), tail())),
        Some(s) if !text.contains("linuxbench: done") => {
            Err(format!("Linux ended ({s}) before the peer finished; last lines:\n{}", tail()))
        }
        Some(_) => Ok(text),
    }
}

/// Fetch, build, boot and parse: Linux's samples, the kernel's name and the peer's
/// `linuxbench: info` lines.
pub fn run(icount: bool) -> Result<(Vec<LinuxSample>, String, Vec<String>), String> {
    let dir = build::target_dir().join("linux");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let (vmlinuz, kernel) = kernel(&dir)?;
    let cpio = peer(&dir)?;
    eprintln!("bench: running the Linux peer under {kernel}...");
    let serial = boot(&vmlinuz, &cpio, icount)?;
    for note in serial.lines().filter(|l| l.starts_with("linuxbench: ") && !l.contains("start") && !l.contains("done"))
    {
        eprintln!("bench: {}", note.trim_end_matches('\r'));
    }
    let samples = parse(&serial)?;
    if samples.is_empty() {
        return Err("the Linux peer printed no results".into());
    }
    let info = serial
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix("linuxbench: info "))
        .map(str::to_string)
        .collect();
    Ok((samples, kernel, info))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(name: &str, param: u64, ns_per_op: f64) -> Sample {
        Sample { name: name.into(), param, ops: 1, ticks: 0, ns_per_op, unit: "ns".into() }
    }

    #[test]
    fn parses_linuxbench_lines_among_kernel_messages() {
        let serial = "[    1.2] random: crng init done\r\n\
                      LINUXBENCH {\"name\":\"getpid\",\"param\":0,\"ops\":100000,\"ns\":32138164}\r\n\
                      linuxbench: start\r\n\
                      [    3.4] LINUXBENCH {\"name\":\"lat_ctx\",\"param\":2,\"ops\":10000,\"ns\":62074942}\r\n";
        let s = parse(serial).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0], LinuxSample { name: "getpid".into(), param: 0, ops: 100_000, ns: 32_138_164 });
        assert!((s[0].ns_per_op() - 321.38164).abs() < 1e-9);
        assert_eq!((s[1].name.as_str(), s[1].param, s[1].ops), ("lat_ctx", 2, 10_000));
    }

    #[test]
    fn a_bad_line_is_an_error_that_quotes_it() {
        let e = parse("LINUXBENCH {\"name\":\"getpid\",\"ops\":1}\n").unwrap_err();
        assert!(e.contains("bad LINUXBENCH line") && e.contains("getpid"), "{e}");
        assert_eq!(parse("no results here\n").unwrap(), vec![]);
    }

    #[test]
    fn pairs_rows_with_ratio_difference_and_gaps() {
        let linux = [
            LinuxSample { name: "getpid".into(), param: 0, ops: 10, ns: 3100 },
            LinuxSample { name: "clock_thread".into(), param: 0, ops: 1, ns: 763 },
            LinuxSample { name: "fork_exit".into(), param: 0, ops: 2, ns: 200_000 },
            LinuxSample { name: "fork_exit".into(), param: 1, ops: 2, ns: 220_000 },
        ];
        let tally = [
            tally("null_syscall", 0, 310.0),
            tally("msa_thread", 0, 50.0),
            tally("taskstats_exit_user", 0, 24_000.0),
            tally("taskstats_exit_user", 1, 30_000.0),
        ];
        let rows = compare(&linux, &tally);
        assert_eq!(rows.len(), PAIRS.len());
        let row = |label: &str| rows.iter().find(|r| r.label.starts_with(label)).unwrap();

        let getpid = row("null system call");
        assert_eq!((getpid.linux_ns_per_op, getpid.tally_ns_per_op), (Some(310.0), Some(310.0)));
        assert_eq!(getpid.linux_over_tally, Some(1.0));

        // MSA_THREAD read from the vvar page against Linux's system call.
        let thread = row("thread CPU clock");
        assert_eq!((thread.linux_ns_per_op, thread.tally_ns_per_op), (Some(763.0), Some(50.0)));
        assert!(!thread.tally_not_measured);
        assert_eq!(thread.linux_over_tally, Some(763.0 / 50.0));

        // A difference of two rows on each side: 110,000 − 100,000 and 30,000 − 24,000.
        let extra = row("an exit's extra cost");
        assert_eq!((extra.linux_ns_per_op, extra.tally_ns_per_op), (Some(10_000.0), Some(6_000.0)));
        assert!((extra.linux_over_tally.unwrap() - 10.0 / 6.0).abs() < 1e-12);

        // Neither side ran: dashes, not a ratio of nothing.
        let tsget = row("taskstats GET");
        assert_eq!((tsget.linux_ns_per_op, tsget.tally_ns_per_op, tsget.linux_over_tally), (None, None, None));

        let text = table("linux-image-x 1", &rows);
        assert_eq!(text.lines().count(), 2 + PAIRS.len());

        // A row Tally has no benchmark for: "not measured", no ratio.
        let none = [Pair { label: "only on Linux", linux: Measure::One("clock_thread", 0), tally: None }];
        let rows = compare_pairs(&none, &linux, &tally);
        assert_eq!((rows[0].linux_ns_per_op, rows[0].tally_ns_per_op), (Some(763.0), None));
        assert!(rows[0].tally_not_measured);
        assert_eq!(rows[0].linux_over_tally, None);
        assert!(table("linux-image-x 1", &rows).contains("not measured"));
    }

    #[test]
    fn a_benchmark_filtered_out_is_not_called_unmeasured() {
        let linux = [LinuxSample { name: "lat_ctx".into(), param: 2, ops: 2, ns: 13_000 }];
        let rows = compare(&linux, &[tally("lat_ctx", 16, 3000.0)]);
        let r = rows.iter().find(|r| r.label.starts_with("lat_ctx")).unwrap();
        assert_eq!((r.linux_ns_per_op, r.tally_ns_per_op), (Some(6500.0), None));
        assert!(!r.tally_not_measured, "lat_ctx ran, only not with 2 processes");
    }

    #[test]
    fn finds_the_versioned_kernel_package() {
        assert_eq!(versioned_package("linux-image-6.1.0-56-amd64 (= 6.1.192-2)"), Some("linux-image-6.1.0-56-amd64"));
        assert_eq!(versioned_package("linux-image-6.12.9-amd64 (= 6.12.9-1), foo"), Some("linux-image-6.12.9-amd64"));
        assert_eq!(versioned_package("libc6"), None);
    }
}
