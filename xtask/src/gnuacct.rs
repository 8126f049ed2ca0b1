//! GNU acct on the host: the real `dump-acct`, `lastcomm` and `sa`, as the judge of Tally's
//! process-accounting files.
//!
//! Tally's records are Linux's `struct acct_v3`, and the proof is that the tools every Linux
//! distribution ships read them. This module fetches those tools without installing them
//! (installing Debian's `acct` package would switch accounting on for the host): `apt-get
//! download acct` and `dpkg -x` unpack the package under `target/tools/acct/root`, once.
//! [`run`] runs one tool on a file with `TZ=UTC` (Tally's clock is UTC) and returns what it
//! printed; [`verify`] runs all three and checks that Tally's own formatters
//! (`tally-pacct`) print the same bytes for the same file — with user and terminal names
//! from this host ([`HostNames`]), since that is where GNU's come from.
//!
//! The accounting scenario pulls a file out of the accounting disk and calls these; the unit
//! test below does the same on a file made by `tally-pacct`'s builder, and is skipped (with
//! a note) on a host that cannot fetch the package.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tally_pacct::names::Names;

/// How long `apt-get download` and the tools may take before they are given up on.
const TIMEOUT: Duration = Duration::from_secs(120);

/// One of the tools of GNU acct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// `dump-acct FILE`: every field of every record.
    DumpAcct,
    /// `lastcomm -f FILE`: the commands, newest first.
    Lastcomm,
    /// `sa -i FILE`: the per-command summary (`-i`: never the host's own summary files).
    Sa,
}

impl Tool {
    fn path(self) -> &'static str {
        match self {
            Tool::DumpAcct => "usr/sbin/dump-acct",
            Tool::Lastcomm => "usr/bin/lastcomm",
            Tool::Sa => "usr/sbin/sa",
        }
    }
}

/// Where the package is unpacked.
pub fn tools_dir() -> PathBuf {
    crate::build::target_dir().join("tools").join("acct")
}

/// Runs `cmd` to completion, killing it after [`TIMEOUT`]; its exit status, stdout, stderr.
fn run_with_timeout(mut cmd: Command, what: &str) -> Result<(bool, String, String), String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    // Read both pipes on threads, so a talkative tool cannot fill one and stall.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).map(|_| v)
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).map(|_| v)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| format!("{what}: {e}"))? {
            break s;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: no answer after {} s, killed", TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = |h: std::thread::JoinHandle<std::io::Result<Vec<u8>>>| {
        h.join().ok().and_then(|r| r.ok()).map(|v| String::from_utf8_lossy(&v).into_owned()).unwrap_or_default()
    };
    Ok((status.success(), text(out), text(err)))
}

/// Makes sure the tools are unpacked under [`tools_dir`]`/root`, fetching the Debian
/// package `acct` if they are not; returns that root. Safe to call from several threads and
/// processes at once: each process unpacks into its own directory and the first to finish
/// moves it in place.
pub fn ensure() -> Result<PathBuf, String> {
    // One fetch at a time in this process (its directory is named after the process).
    static FETCHING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = FETCHING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = tools_dir();
    let root = dir.join("root");
    if [Tool::DumpAcct, Tool::Lastcomm, Tool::Sa].iter().all(|t| root.join(t.path()).is_file()) {
        return Ok(root);
    }
    let work = dir.join(format!("fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let result = fetch_into(&work).and_then(|unpacked| match std::fs::rename(&unpacked, &root) {
        Ok(()) => Ok(()),
        // Another process got there first: its copy is as good.
        Err(_) if root.join(Tool::Sa.path()).is_file() => Ok(()),
        Err(e) => Err(format!("cannot move {} to {}: {e}", unpacked.display(), root.display())),
    });
    let _ = std::fs::remove_dir_all(&work);
    result.map(|()| root)
}

/// `apt-get download acct` in `work`, then `dpkg -x` into `work/root`. A fresh machine may
/// have no package lists yet: when the download fails and xtask runs as root, the lists are
/// fetched (`apt-get update`, as `qemu::apt_install` does) and the download tried once more.
fn fetch_into(work: &Path) -> Result<PathBuf, String> {
    let download = || {
        let mut dl = Command::new("apt-get");
        // No retries and a short timeout: a host without a network should learn it quickly.
        dl.args(["-o", "Acquire::Retries=0", "-o", "Acquire::http::Timeout=20", "download", "acct"]).current_dir(work);
        run_with_timeout(dl, "apt-get download acct")
    };
    let mut result = download();
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if root && !matches!(result, Ok((true, _, _))) {
        let mut update = Command::new("apt-get");
        update.args(["-o", "Acquire::Retries=0", "update"]).env("DEBIAN_FRONTEND", "noninteractive");
        if matches!(run_with_timeout(update, "apt-get update"), Ok((true, _, _))) {
            result = download();
        }
    }
    let (ok, _, err) = result.map_err(|e| {
        format!(
            "{e} (GNU acct is fetched with apt-get: on a host without it, unpack Debian's `acct` package under {})",
            tools_dir().join("root").display()
        )
    })?;
    if !ok {
        return Err(format!(
            "apt-get download acct failed: {} (run `apt-get update` first, or unpack Debian's `acct` package under {})",
            err.trim(),
            tools_dir().join("root").display()
        ));
    }
    let deb = std::fs::read_dir(work)
        .map_err(|e| format!("{}: {e}", work.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or("apt-get download acct succeeded but left no .deb")?;
    let unpacked = work.join("root");
    let mut x = Command::new("dpkg");
    x.arg("-x").arg(&deb).arg(&unpacked);
    let (ok, _, err) = run_with_timeout(x, "dpkg -x")?;
    if !ok {
        return Err(format!("dpkg -x {} failed: {}", deb.display(), err.trim()));
    }
    Ok(unpacked)
}

/// Runs `tool` of GNU acct on `file` with `args` (options, and for `lastcomm` the words that
/// select records), in UTC and the C locale, and returns its standard output. Anything on
/// standard error (such as "unknown acct file format") or a failing exit status is an
/// error: the file is not what GNU acct expects.
pub fn run(tool: Tool, file: &Path, args: &[&str]) -> Result<String, String> {
    let root = ensure()?;
    let mut cmd = Command::new(root.join(tool.path()));
    cmd.env("TZ", "UTC").env("LC_ALL", "C");
    match tool {
        Tool::DumpAcct => cmd.args(args).arg(file),
        Tool::Lastcomm => cmd.arg("-f").arg(file).args(args),
        Tool::Sa => cmd.arg("-i").args(args).arg(file),
    };
    let what = format!("{} {}", tool.path().rsplit('/').next().unwrap_or("?"), file.display());
    let (ok, out, err) = run_with_timeout(cmd, &what)?;
    if !ok || !err.is_empty() {
        return Err(format!("{what}: {}{}", if ok { "" } else { "failed: " }, err.trim()));
    }
    Ok(out)
}

/// User and terminal names as GNU acct finds them on this host: `/etc/passwd`, and the
/// character devices directly under `/dev`.
pub struct HostNames {
    users: HashMap<u32, String>,
    ttys: HashMap<u16, String>,
}

impl HostNames {
    pub fn load() -> HostNames {
        let mut users = HashMap::new();
        for line in std::fs::read_to_string("/etc/passwd").unwrap_or_default().lines() {
            let f: Vec<&str> = line.split(':').collect();
            if let (Some(name), Some(Ok(uid))) = (f.first(), f.get(2).map(|u| u.parse::<u32>())) {
                users.entry(uid).or_insert_with(|| name.to_string());
            }
        }
        let mut ttys = HashMap::new();
        if let Ok(dir) = std::fs::read_dir("/dev") {
            use std::os::unix::fs::{FileTypeExt, MetadataExt};
            for entry in dir.flatten() {
                let Ok(meta) = std::fs::metadata(entry.path()) else { continue };
                // GNU keys its table on `st_rdev` itself, which for a major and minor below
                // 256 is `major << 8 | minor`: the record's `old_encode_dev` value.
                let (rdev, name) = (meta.rdev(), entry.file_name().to_string_lossy().into_owned());
                if meta.file_type().is_char_device() && rdev <= u64::from(u16::MAX) {
                    ttys.insert(rdev as u16, name);
                }
            }
        }
        HostNames { users, ttys }
    }
}

impl Names for HostNames {
    fn user(&self, uid: u32) -> Option<&str> {
        self.users.get(&uid).map(String::as_str)
    }

    fn tty(&self, dev: u16) -> Option<&str> {
        self.ttys.get(&dev).map(String::as_str)
    }
}

/// Runs `dump-acct`, `lastcomm` and `sa -a` on `file` and checks that `tally-pacct`'s
/// formatters print the same bytes for it (names from [`HostNames`]). Returns GNU's three
/// outputs, joined, for the caller to show or search.
pub fn verify(file: &Path) -> Result<String, String> {
    use tally_pacct::{dump, lastcomm, sa};
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    tally_pacct::file::whole_records(&bytes).map_err(|e| format!("{}: {e:?}", file.display()))?;
    let names = HostNames::load();
    let fail = |e: std::fmt::Error| e.to_string();

    let mut ours = String::new();
    dump::write_dump(&mut ours, &bytes, &names).map_err(fail)?;
    let gnu_dump = run(Tool::DumpAcct, file, &[])?;
    compare("dump-acct", &gnu_dump, &ours)?;

    ours.clear();
    let opts = lastcomm::LastcommOptions::default();
    lastcomm::write_lastcomm(&mut ours, &bytes, &lastcomm::Filter::default(), &names, &opts).map_err(fail)?;
    let gnu_lastcomm = run(Tool::Lastcomm, file, &[])?;
    compare("lastcomm", &gnu_lastcomm, &ours)?;

    ours.clear();
    let mut table = vec![sa::CommandStats::EMPTY; bytes.len() / tally_pacct::AcctV3::SIZE + 1];
    let mut summary = sa::Summary::new(&mut table);
    summary.add_file(&bytes).map_err(|e| format!("{e:?}"))?;
    summary.write(&mut ours, &sa::SaOptions { all: true, ..Default::default() }).map_err(fail)?;
    let gnu_sa = run(Tool::Sa, file, &["-a"])?;
    compare("sa -a", &gnu_sa, &ours)?;

    Ok(format!("{gnu_dump}{gnu_lastcomm}{gnu_sa}"))
}

fn compare(what: &str, gnu: &str, tally: &str) -> Result<(), String> {
    compare_as(what, ("GNU", gnu), ("tally-pacct", tally))
}

/// `Err` naming the first line where the texts `a` and `b` differ, each shown under its label.
pub fn compare_as(what: &str, (a_name, gnu): (&str, &str), (b_name, tally): (&str, &str)) -> Result<(), String> {
    if gnu == tally {
        return Ok(());
    }
    let (mut g, mut t) = (gnu.lines(), tally.lines());
    let mut n = 1;
    let (g, t) = loop {
        match (g.next(), t.next()) {
            (Some(a), Some(b)) if a == b => n += 1,
            // Same lines, different line ends: the first difference is in the bytes.
            (None, None) => break ("(line ends differ)", "(line ends differ)"),
            (a, b) => break (a.unwrap_or("(end)"), b.unwrap_or("(end)")),
        }
    };
    let w = a_name.len().max(b_name.len()) + 1;
    Err(format!(
        "{what}: {a_name} and {b_name} differ at line {n}:\n  {:w$} {g:?}\n  {:w$} {t:?}",
        format!("{a_name}:"),
        format!("{b_name}:")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_pacct::record::{build, ProcessSummary};
    use tally_uapi::acct::{ACORE, AFORK, ASU, AXSIG, TTY_S0};

    /// A few processes, each field exercised, built with `tally-pacct`'s builder.
    fn sample_file() -> Vec<u8> {
        let comm = |s: &[u8]| {
            let mut c = [0u8; 16];
            c[..s.len()].copy_from_slice(s);
            c
        };
        let base = ProcessSummary {
            pid: 10,
            ppid: 1,
            tty: TTY_S0,
            exit_unix_s: 1_764_054_120,
            elapsed_ns: 1_234_567_890,
            utime_ns: 450_000_000,
            stime_ns: 20_000_000,
            vm_kb: 2_000,
            minflt: 40,
            comm: comm(b"sh"),
            ..ProcessSummary::default()
        };
        let procs = [
            base,
            ProcessSummary { pid: 11, exit_status: 2 << 8, elapsed_ns: 3_000_000_000, ..base },
            ProcessSummary {
                pid: 12,
                uid: 4242,
                gid: 4242,
                tty: 0,
                flags: ASU | AXSIG,
                exit_status: 9,
                comm: comm(b"spin"),
                ..base
            },
            ProcessSummary {
                pid: 13,
                flags: AXSIG | ACORE,
                exit_status: 0x8b,
                utime_ns: 99_999 * 1_000_000_000,
                comm: comm(b"crash"),
                ..base
            },
            ProcessSummary {
                pid: 14,
                flags: AFORK,
                elapsed_ns: 200_000 * 1_000_000_000 + 10_000_000,
                comm: comm(b"worker"),
                ..base
            },
        ];
        procs.iter().flat_map(|p| build(p).to_bytes()).collect()
    }

    #[test]
    fn gnu_acct_reads_tally_records_as_tally_prints_them() {
        if let Err(e) = ensure() {
            println!("note: GNU acct is not available on this host, check skipped: {e}");
            return;
        }
        let file = tools_dir().join(format!("check-{}.acct", std::process::id()));
        std::fs::write(&file, sample_file()).unwrap();
        let result = verify(&file);
        let _ = std::fs::remove_file(&file);
        let text = result.unwrap();
        assert!(text.contains("spin            |v3|"), "dump-acct saw the records:\n{text}");
    }

    #[test]
    fn differences_name_the_first_differing_line() {
        assert_eq!(compare("x", "a\nb\n", "a\nb\n"), Ok(()));
        let e = compare("sa", "a\nb\nc\n", "a\nB\nc\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("\"b\"") && e.contains("\"B\""), "{e}");
        let e = compare("sa", "a\n", "a\nextra\n").unwrap_err();
        assert!(
            e.contains("line 2")
                && e.contains("  GNU:         \"(end)\"\n  tally-pacct: \"extra\"")
                && e.contains("\"extra\""),
            "{e}"
        );
    }

    #[test]
    fn gnu_acct_complains_about_a_foreign_record() {
        if ensure().is_err() {
            println!("note: GNU acct is not available on this host, check skipped");
            return;
        }
        let mut bytes = sample_file();
        bytes[1] = 9; // a version GNU acct does not know
        let file = tools_dir().join(format!("bad-{}.acct", std::process::id()));
        std::fs::write(&file, &bytes).unwrap();
        let result = run(Tool::DumpAcct, &file, &[]);
        let _ = std::fs::remove_file(&file);
        let err = result.unwrap_err();
        assert!(err.contains("unknown acct file format"), "{err}");
    }
}
