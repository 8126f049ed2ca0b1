//! `cargo xtask test`: host unit tests, then the QEMU scenarios, then one summary line.

use std::collections::VecDeque;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::scenario::{self, Scenario};
use crate::{acctdisk, build, cprogs, hosttest, qemu, BuildOpts};

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
}

impl Tally {
    fn record(&mut self, kind: &str, name: &str, passed: bool, note: &str, detail: &str) {
        if passed {
            self.passed += 1;
            println!("PASS {kind} {name}{note}");
        } else {
            self.failed.push(format!("{kind} {name}"));
            println!("FAIL {kind} {name}{note}");
            for line in detail.lines() {
                println!("     | {line}");
            }
        }
    }
}

pub fn list() -> Result<ExitCode, String> {
    for s in scenario::load_all(&build::root().join("tests"))? {
        println!("{:<20} {}", s.name, s.description);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(filter: Option<&str>, opts: &BuildOpts, jobs: Option<usize>, no_host: bool) -> Result<ExitCode, String> {
    if opts.no_accounting {
        return Err("the scenarios check accounting; test the kernel without it \
                    with `cargo xtask run --no-accounting` or `cargo xtask bench`"
            .into());
    }
    let started = Instant::now();
    let mut tally = Tally::default();

    if !no_host {
        match hosttest::run(filter) {
            Ok(results) => {
                for r in results {
                    tally.record("host", &r.name, r.passed, "", &r.detail);
                }
            }
            Err(e) => tally.record("host", "build", false, "", &e),
        }
    }

    let scenarios: Vec<Scenario> = scenario::load_all(&build::root().join("tests"))?
        .into_iter()
        .filter(|s| filter.is_none_or(|f| s.name.contains(f)))
        .collect();
    if !scenarios.is_empty() {
        qemu::ensure_installed()?;
        // A scenario with `add` boots an image of its own, with its programs added as
        // `run --add` adds them; it runs after the others (the added image has one name).
        let (own, shared): (Vec<Scenario>, Vec<Scenario>) = scenarios.into_iter().partition(|s| !s.add.is_empty());
        match build::image(opts) {
            Ok(image) => run_scenarios(&image, shared, jobs, &mut tally),
            Err(e) => tally.record("qemu", "build", false, "", &e),
        }
        for s in own {
            match cprogs::build_added(&s.add).and_then(|added| build::image_with(opts, &added)) {
                Ok(image) => run_scenarios(&image, vec![s], jobs, &mut tally),
                Err(e) => tally.record("qemu", &s.name, false, "", &e),
            }
        }
    }

    let total = tally.passed + tally.failed.len();
    if !tally.failed.is_empty() {
        println!("\nfailed:");
        for f in &tally.failed {
            println!("  {f}");
        }
    }
    println!("\n(wall time {:.1} s)", started.elapsed().as_secs_f64());
    println!("{} passed, {} failed", tally.passed, tally.failed.len());
    if total == 0 {
        match filter {
            Some(f) => eprintln!("xtask: no test ran (no test name contains `{f}`)"),
            None => eprintln!("xtask: no test ran"),
        }
        return Ok(ExitCode::FAILURE);
    }
    Ok(if tally.failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Boot each scenario in its own QEMU, `jobs` at a time; print each result as it lands.
fn run_scenarios(image: &std::path::Path, scenarios: Vec<Scenario>, jobs: Option<usize>, tally: &mut Tally) {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())).max(1);
    let queue = Arc::new(Mutex::new(scenarios.into_iter().collect::<VecDeque<_>>()));
    let shared = Arc::new(Mutex::new(std::mem::take(tally)));
    let workers: Vec<_> = (0..jobs)
        .map(|_| {
            let queue = Arc::clone(&queue);
            let shared = Arc::clone(&shared);
            let image = image.to_path_buf();
            std::thread::spawn(move || loop {
                let Some(s) = queue.lock().unwrap().pop_front() else { break };
                let (verdict, serial, took, notes) = run_one(&image, &s);
                let mut note = format!(" ({:.1} s)", took.as_secs_f64());
                for n in notes {
                    note.push_str(&format!("\n     note: {n}"));
                }
                let detail = match &verdict {
                    Ok(()) => String::new(),
                    Err(why) => format!("{why}\nlast serial lines:\n{}", tail(&serial, 25)),
                };
                shared.lock().unwrap().record("qemu", &s.name, verdict.is_ok(), &note, &detail);
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    *tally = std::mem::take(&mut *shared.lock().unwrap());
}

/// One scenario in its own QEMU, with its own fresh accounting disk: the verdict (QEMU's
/// status and the console, the COM2 capture, then the disk: `fsck.fat` and the scenario's
/// host checks), the console text, and how long QEMU ran. The temporary files (the disk,
/// the capture) are removed when the scenario passes and kept, and named, when it fails.
pub fn run_one(image: &Path, s: &Scenario) -> (Result<(), String>, String, Duration, Vec<String>) {
    let disk_bytes = s.acct_disk_mib.map_or(acctdisk::DISK_BYTES, |m| m << 20);
    let mut disk = match acctdisk::Disk::fresh_sized(&s.name, disk_bytes) {
        Ok(d) => d,
        Err(e) => return (Err(e), String::new(), Duration::ZERO, Vec::new()),
    };
    let mut q = s.qemu(image, disk.path());
    // COM2 goes to a temporary file when the scenario checks it.
    let capture = s
        .capture_serial
        .is_some()
        .then(|| std::env::temp_dir().join(format!("tally-{}-{}.ttyS1", s.name, std::process::id())));
    if let Some(path) = &capture {
        q = q.capture(path);
    }
    let (mut verdict, serial, took) = match q.run_captured(Duration::from_secs(s.timeout)) {
        Ok((status, serial, took)) => (s.judge(status, &serial), serial, took),
        Err(e) => (Err(e), String::new(), Duration::ZERO),
    };
    if let (Some(path), Ok(())) = (&capture, &verdict) {
        verdict = std::fs::read(path)
            .map_err(|e| format!("cannot read the COM2 capture {}: {e}", path.display()))
            .and_then(|b| s.judge_capture(&b));
    }
    if let Some(path) = &capture {
        match &verdict {
            Ok(()) => {
                let _ = std::fs::remove_file(path);
            }
            Err(why) => verdict = Err(format!("{why}\n(COM2 capture kept in {})", path.display())),
        }
    }
    // The accounting disk is checked whatever the run's verdict: a run that failed may
    // still have left the file system broken, and that is worth saying too. After a kill,
    // an accounting file's over-long cluster chain is the one finding accepted, as a note.
    let mut notes = Vec::new();
    let fsck = if s.expect == scenario::Expect::Killed {
        let files: Vec<&str> = s.host_check.iter().map(|c| c.file.as_str()).collect();
        acctdisk::fsck_after_kill(disk.path(), &files).map(|n| notes = n)
    } else {
        acctdisk::fsck(disk.path())
    };
    let disk_verdict = fsck.and_then(|()| s.judge_disk(disk.path(), &serial));
    verdict = match (verdict, disk_verdict) {
        (Ok(()), d) => d,
        (Err(a), Ok(())) => Err(a),
        (Err(a), Err(b)) => Err(format!("{a}\n{b}")),
    };
    if let Err(why) = &verdict {
        verdict = Err(format!("{why}\n(accounting disk kept in {})", disk.keep_file().display()));
    }
    (verdict, serial, took, notes)
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
