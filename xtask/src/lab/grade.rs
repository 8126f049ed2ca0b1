//! `cargo xtask grade N`: a lab's rubric run on this tree, in the manner of MIT 6.1810's
//! `make grade` — one line per item with its points, the failing output, `Score: N/85`,
//! JSON results — with the tamper check of Pintos's pristine tests and the hidden rigour of
//! an official run (docs/labs/README.md, "Grading").
//!
//! Host items run the test binaries `cargo xtask test` runs, with proptest's seed fixed and
//! its failure files off; QEMU items boot their scenario through the same judge
//! (`test::run_one`). An item whose parent failed is not run and earns nothing.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::config::{Item, Lab, Labs, Test, MANUAL_POINTS, TEST_POINTS};
use super::{markers, tree};
use crate::scenario;
use crate::{build, hosttest, BuildOpts};

/// The proptest seed of an ordinary `grade`: fixed, so a student's run is repeatable.
pub const GRADE_SEED: u64 = 0x7a11_1ab5;
/// How long one host test binary may run for one item before it counts as hung.
const HOST_TIMEOUT: Duration = Duration::from_secs(120);
/// The second tick rate of an official run (Linux's default `CONFIG_HZ_250`).
pub const OFFICIAL_HZ: u32 = 250;

/// How an item is run: the knobs of `lab check` and of an official run.
#[derive(Clone, Debug, Default)]
pub struct Rigour {
    /// Cap every QEMU item's timeout (a stub that hangs then costs seconds).
    pub timeout_cap: Option<u64>,
    /// Run children whose parent failed too (`lab check` proves each item fails alone).
    pub all_items: bool,
    pub seed: Option<u64>,
    /// `PROPTEST_CASES` (tests that pin their own case count keep it).
    pub cases: Option<u32>,
    /// Each QEMU item runs this many times (at least once); every run must pass.
    pub repeat: u32,
    /// QEMU items also run on a kernel built with this tick rate.
    pub second_hz: Option<u32>,
}

/// One item's verdict.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub passed: bool,
    /// Why it failed (the test's output), or why it was not run.
    pub detail: String,
    pub seconds: f64,
    pub ran: bool,
    /// The test's own verdict, before its parent's is applied (what `lab check` proves).
    pub test_passed: bool,
}

/// Run `tests` (each once, whatever items name them) on the tree at `build::root()`.
pub fn run_tests(tests: &[Test], rigour: &Rigour, skip: &dyn Fn(&Test) -> bool) -> Vec<(Test, Outcome)> {
    let mut out: Vec<(Test, Outcome)> = Vec::new();
    let host: Vec<&String> = tests.iter().filter_map(|t| if let Test::Host(h) = t { Some(h) } else { None }).collect();
    if !host.is_empty() {
        println!("grade: building the host tests");
        // Only the crates the items name: `tally_memacct/integrals::…` is tally-memacct's.
        let mut packages: Vec<String> =
            host.iter().map(|h| h.split(['/', ':']).next().unwrap_or_default().replace('_', "-")).collect();
        packages.sort();
        packages.dedup();
        match hosttest::build_packages(&packages) {
            Ok(bins) => {
                let run: Vec<&String> = host.iter().filter(|h| !skip(&Test::Host((**h).clone()))).copied().collect();
                let mut outcomes = run_host(&bins, &run, rigour);
                for h in host {
                    let o = outcomes.remove(h.as_str()).unwrap_or_else(not_run);
                    out.push((Test::Host(h.clone()), o));
                }
            }
            Err(e) => {
                for h in host {
                    out.push((Test::Host(h.clone()), failed(format!("the host tests did not compile: {e}"))));
                }
            }
        }
    }
    let qemu: Vec<&String> = tests
        .iter()
        .filter_map(|t| if let Test::Qemu(q) = t { Some(q) } else { None })
        .filter(|q| !skip(&Test::Qemu((*q).clone())))
        .collect();
    if !qemu.is_empty() {
        out.extend(run_qemu(&qemu, rigour));
    }
    for t in tests {
        if !out.iter().any(|(u, _)| u == t) {
            out.push((t.clone(), not_run()));
        }
    }
    out
}

fn not_run() -> Outcome {
    Outcome {
        passed: false,
        detail: "not run: its parent item failed".into(),
        seconds: 0.0,
        ran: false,
        test_passed: false,
    }
}

fn failed(detail: String) -> Outcome {
    Outcome { passed: false, detail, seconds: 0.0, ran: true, test_passed: false }
}

/// Host items: `LABEL::path` (one test, exactly) or `LABEL::path::*` (every test under it).
/// Each test binary runs once for all the items it holds, under one timeout, so a test
/// that never ends costs that timeout once.
fn run_host<'a>(
    bins: &[hosttest::TestBinary],
    items: &[&'a String],
    rigour: &Rigour,
) -> std::collections::BTreeMap<&'a str, Outcome> {
    let mut out = std::collections::BTreeMap::new();
    let timeout = rigour.timeout_cap.map_or(HOST_TIMEOUT, |c| HOST_TIMEOUT.min(Duration::from_secs(c)));
    // Each item's binary (the longest label it starts with) and its path inside it.
    let mut by_bin: Vec<(&hosttest::TestBinary, Vec<(&'a String, String)>)> = Vec::new();
    for item in items {
        let Some(bin) =
            bins.iter().filter(|b| item.starts_with(&format!("{}::", b.label))).max_by_key(|b| b.label.len())
        else {
            out.insert(
                item.as_str(),
                failed(format!("no test binary is labelled like {item:?} (see `cargo xtask test` for the names)")),
            );
            continue;
        };
        let path = item[bin.label.len() + 2..].to_string();
        match by_bin.iter_mut().find(|(b, _)| std::ptr::eq(*b, bin)) {
            Some((_, v)) => v.push((item, path)),
            None => by_bin.push((bin, vec![(item, path)])),
        }
    }
    for (bin, mine) in by_bin {
        let started = Instant::now();
        let mut cmd = Command::new(&bin.exe);
        cmd.current_dir(&bin.dir);
        // libtest runs the tests whose names contain any of the filters; exact names and
        // prefixes are sorted out below.
        for (_, path) in &mine {
            match path.strip_suffix("::*") {
                Some(prefix) => cmd.arg(format!("{prefix}::")),
                None if path == "*" => cmd.arg(""),
                None => cmd.arg(path),
            };
        }
        cmd.env("PROPTEST_RNG_SEED", rigour.seed.unwrap_or(GRADE_SEED).to_string());
        cmd.env("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1");
        // The assertion's message is the report; a backtrace of the test harness is not.
        cmd.env("RUST_BACKTRACE", "0");
        match rigour.cases {
            Some(c) => cmd.env("PROPTEST_CASES", c.to_string()),
            None => cmd.env_remove("PROPTEST_CASES"),
        };
        let results = hosttest::run_binary(bin, cmd, Some(timeout));
        let seconds = started.elapsed().as_secs_f64();
        for (item, path) in mine {
            let o = match &results {
                Err(e) => failed(e.clone()),
                Ok(results) => host_outcome(bin, item, &path, results, timeout),
            };
            out.insert(item.as_str(), Outcome { seconds, ..o });
        }
    }
    out
}

/// One host item's verdict from its binary's results.
fn host_outcome(
    bin: &hosttest::TestBinary,
    item: &str,
    path: &str,
    results: &[hosttest::HostResult],
    timeout: Duration,
) -> Outcome {
    let prefix = format!("{}::{}", bin.label, path.trim_end_matches('*'));
    let exact = !path.ends_with('*');
    let mine: Vec<&hosttest::HostResult> =
        results.iter().filter(|r| if exact { r.name == prefix } else { r.name.starts_with(&prefix) }).collect();
    let killed = results.iter().any(|r| r.name.ends_with(hosttest::KILLED));
    if mine.is_empty() {
        let why = if killed {
            format!("did not finish within {} s: does a loop in your code never end?", timeout.as_secs())
        } else {
            let crash = results.iter().find(|r| !r.passed).map(|r| format!(":\n{}", r.detail)).unwrap_or_default();
            format!("no test named {item:?} ran{crash}")
        };
        return failed(why);
    }
    let mut failures: Vec<String> =
        mine.iter().filter(|r| !r.passed).map(|r| format!("{} failed:\n{}", r.name, r.detail.trim())).collect();
    if killed && !exact {
        failures.push(format!(
            "and the binary was killed after {} s: a test under {item:?} never ended",
            timeout.as_secs()
        ));
    }
    let detail = if mine.len() > 1 && !failures.is_empty() {
        format!("{} of {} tests failed\n{}", failures.len(), mine.len(), failures.join("\n"))
    } else {
        failures.join("\n")
    };
    Outcome { passed: failures.is_empty(), detail, seconds: 0.0, ran: true, test_passed: failures.is_empty() }
}

/// QEMU items: each scenario `repeat` times on the default kernel, and as often on the
/// second tick rate's, two QEMUs at a time; an item passes if every run did.
fn run_qemu(names: &[&String], rigour: &Rigour) -> Vec<(Test, Outcome)> {
    let all = match scenario::load_all(&build::root().join("tests")) {
        Ok(s) => s,
        Err(e) => return names.iter().map(|n| (Test::Qemu((*n).clone()), failed(e.clone()))).collect(),
    };
    if let Err(e) = crate::qemu::ensure_installed() {
        return names.iter().map(|n| (Test::Qemu((*n).clone()), failed(e.clone()))).collect();
    }
    let mut kernels = vec![None];
    kernels.extend(rigour.second_hz.map(Some));
    let mut runs = VecDeque::new();
    let mut results: Vec<(Test, Outcome)> = Vec::new();
    for hz in kernels {
        let opts = BuildOpts { hz, ..BuildOpts::default() };
        let what = hz.map_or("the kernel".to_string(), |h| format!("the kernel at {h} Hz"));
        println!("grade: building {what}");
        let image = match build::image(&opts) {
            Ok(i) => i,
            Err(e) => {
                for n in names {
                    results.push((Test::Qemu((*n).clone()), failed(format!("building {what} failed: {e}"))));
                }
                continue;
            }
        };
        for n in names {
            let Some(s) = all.iter().find(|s| &s.name == *n) else {
                results.push((Test::Qemu((*n).clone()), failed(format!("there is no scenario tests/{n}.toml"))));
                continue;
            };
            let mut s = s.clone();
            if let Some(cap) = rigour.timeout_cap {
                s.timeout = s.timeout.min(cap);
            }
            for _ in 0..rigour.repeat.max(1) {
                runs.push_back((s.clone(), image.clone(), hz));
            }
        }
    }
    let total = runs.len();
    if total > 0 {
        println!("grade: {total} QEMU run(s)");
    }
    let queue = Arc::new(Mutex::new(runs));
    let done: Arc<Mutex<Vec<(String, Option<u32>, Result<(), String>, f64)>>> = Arc::default();
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1);
    let workers: Vec<_> = (0..jobs)
        .map(|_| {
            let queue = Arc::clone(&queue);
            let done = Arc::clone(&done);
            std::thread::spawn(move || loop {
                let Some((s, image, hz)) = queue.lock().unwrap().pop_front() else { break };
                let (verdict, serial, took, _notes) = crate::test::run_one(&image, &s);
                forget_kept_disk(&verdict);
                let verdict = verdict.map_err(|why| {
                    let why = match why.rsplit_once("\n(accounting disk kept in ") {
                        Some((head, _)) => head.to_string(),
                        None => why,
                    };
                    format!("{why}\nlast serial lines:\n{}", crate::test::tail(&serial, 15))
                });
                done.lock().unwrap().push((s.name.clone(), hz, verdict, took.as_secs_f64()));
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let done = std::mem::take(&mut *done.lock().unwrap());
    for n in names {
        if results.iter().any(|(t, _)| t.id() == n.as_str()) {
            continue;
        }
        let mine: Vec<_> = done.iter().filter(|(name, ..)| name == *n).collect();
        let seconds = mine.iter().map(|r| r.3).sum();
        let fails: Vec<String> = mine
            .iter()
            .filter_map(|(_, hz, v, _)| {
                v.as_ref().err().map(|why| match hz {
                    Some(h) => format!("at {h} Hz: {why}"),
                    None => why.clone(),
                })
            })
            .collect();
        let detail = match (fails.len(), mine.len()) {
            (0, _) => String::new(),
            (_, 1) => fails[0].clone(),
            (f, m) => format!("{f} of {m} runs failed; the first:\n{}", fails[0]),
        };
        results.push((
            Test::Qemu((*n).clone()),
            Outcome { passed: fails.is_empty(), detail, seconds, ran: true, test_passed: fails.is_empty() },
        ));
    }
    results
}

/// Remove the accounting disk a failed scenario kept (`test::run_one` names it): a grade's
/// failures would otherwise leave 8 MiB each in the temporary directory, run after run.
/// (`cargo xtask test --no-host NAME` keeps it, to read it with `cargo xtask acct`.)
fn forget_kept_disk(verdict: &Result<(), String>) {
    let Err(why) = verdict else { return };
    if let Some(path) =
        why.rsplit_once("(accounting disk kept in ").and_then(|(_, p)| p.split_once(')')).map(|(p, _)| p)
    {
        let _ = std::fs::remove_file(path);
    }
}

/// The items of a lab with their outcomes, parents applied: an item earns its points if it
/// passed and its parent earned (an item not run because of its parent failed).
pub fn score(lab: &Lab, outcomes: &[(Test, Outcome)]) -> Vec<(Item, Outcome, u32)> {
    let mut graded: Vec<(Item, Outcome, u32)> = Vec::new();
    for item in &lab.items {
        let mut o = outcomes.iter().find(|(t, _)| *t == item.test()).map(|(_, o)| o.clone()).unwrap_or_else(not_run);
        // A failed parent fails its children, as in gradelib (its verdict already carries
        // its own parent's).
        if let Some(p) = &item.parent {
            if !graded.iter().any(|(i, po, _)| &i.name == p && po.passed) {
                if o.passed {
                    o.passed = false;
                    o.detail = format!("passed, but its parent item {p:?} did not: no points until it does");
                } else if !o.ran {
                    o.detail = format!("not run: its parent item {p:?} failed");
                }
            }
        }
        let earned = if o.passed { item.points } else { 0 };
        graded.push((item.clone(), o, earned));
    }
    graded
}

/// Options of `cargo xtask grade`.
pub struct GradeArgs {
    pub lab: u32,
    pub results: Option<PathBuf>,
    pub rigour: Rigour,
    /// An official run inside its scratch tree: the protected files were restored.
    pub restored: bool,
}

pub fn grade(args: &GradeArgs) -> Result<ExitCode, String> {
    let root = build::root();
    let labs = Labs::load(&root)?;
    let lab = labs.lab(args.lab)?;
    let started = Instant::now();
    println!("== lab {}: {}", lab.number, lab.title);
    // The graders' own files, first: a changed checker would make every line below a lie.
    let mut tampered = Vec::new();
    if args.restored {
        println!("protected files: restored from the hand-out (official grading)");
    } else {
        match tree::check_lock(&root, &labs)? {
            None => println!("protected files: not checked (no {}: this is the reference tree)", tree::LOCK),
            Some(t) => {
                if t.lab != lab.number {
                    println!("note: this tree was handed out for lab {}, not lab {}", t.lab, lab.number);
                }
                if t.findings.is_empty() {
                    println!("protected files: {} unchanged (checked against {})", t.checked, tree::LOCK);
                } else {
                    println!(
                        "PROTECTED FILES CHANGED ({} finding(s), {} files checked): grading goes on, but this tree's score \
                         does not count. Restore a protected file with `git checkout $(git rev-list --max-parents=0 HEAD) -- FILE`; \
                         in the lab's own files, keep your code between the markers. Or grade with --official.",
                        t.findings.len(),
                        t.checked
                    );
                    for f in &t.findings {
                        println!("  {f}");
                    }
                    tampered = t.findings;
                }
            }
        }
    }
    let r = &args.rigour;
    if r.second_hz.is_some() || r.repeat > 1 || r.cases.is_some() {
        println!(
            "official rigour: proptest seed {}, {} cases, each QEMU item {} time(s) at 1000 Hz{}",
            r.seed.unwrap_or(GRADE_SEED),
            r.cases.map_or("the tests' own".to_string(), |c| c.to_string()),
            r.repeat.max(1),
            r.second_hz.map_or(String::new(), |h| format!(" and at {h} Hz"))
        );
    }
    let tests: Vec<Test> = lab.items.iter().map(Item::test).collect();
    // A QEMU item whose parent is a host item is not booted when the parent failed.
    let host_first: Vec<(Test, Outcome)> = if r.all_items {
        Vec::new()
    } else {
        let host: Vec<Test> = tests.iter().filter(|t| matches!(t, Test::Host(_))).cloned().collect();
        run_tests(&host, r, &|_| false)
    };
    let failed_host = |t: &Test| host_first.iter().any(|(u, o)| u == t && !o.passed);
    let skip = |t: &Test| -> bool {
        !r.all_items
            && lab.items.iter().any(|i| {
                i.test() == *t && i.parent.as_ref().is_some_and(|p| lab.item(p).is_some_and(|p| failed_host(&p.test())))
            })
    };
    let rest: Vec<Test> = if r.all_items {
        tests.clone()
    } else {
        tests.iter().filter(|t| matches!(t, Test::Qemu(_))).cloned().collect()
    };
    let mut outcomes = host_first.clone();
    outcomes.extend(run_tests(&rest, r, &skip));
    let graded = score(lab, &outcomes);

    println!();
    for (item, o, earned) in &graded {
        let verdict = if o.passed { "PASS" } else { "FAIL" };
        let test = item.test();
        println!(
            "{verdict} {:<4} {:<24} {earned:>2}/{:<2} {} ({:.1} s)",
            test.kind(),
            item.name,
            item.points,
            test.id(),
            o.seconds
        );
        if !o.passed {
            // A property test's minimal failing input is at the end of its report.
            let lines: Vec<&str> = o.detail.lines().collect();
            if lines.len() > 40 {
                lines[..20].iter().for_each(|l| println!("     | {l}"));
                println!("     | … ({} lines; all of them are in the JSON results)", lines.len());
                lines[lines.len() - 20..].iter().for_each(|l| println!("     | {l}"));
            } else {
                lines.iter().for_each(|l| println!("     | {l}"));
            }
        }
    }
    let score: u32 = graded.iter().map(|g| g.2).sum();
    let passed = graded.iter().filter(|g| g.1.passed).count();
    println!();
    println!(
        "Score: {score}/{TEST_POINTS} (+{MANUAL_POINTS} by hand: {}){}",
        lab.answers(),
        if tampered.is_empty() { "" } else { " — protected files changed: does not count" }
    );
    println!("(wall time {:.1} s)", started.elapsed().as_secs_f64());
    println!("{passed} passed, {} failed", graded.len() - passed);

    let results = args
        .results
        .clone()
        .unwrap_or_else(|| build::target_dir().join("tally").join(format!("grade-{:02}.json", lab.number)));
    write_json(&results, lab, &graded, score, &tampered, r)?;
    println!("results: {}", results.display());
    Ok(if !tampered.is_empty() {
        ExitCode::from(2)
    } else if score == TEST_POINTS {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// At most `max` bytes of `text`: its head and its tail.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut head = max / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - max / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}\n… ({} bytes left out) …\n{}", &text[..head], tail - head, &text[tail..])
}

fn write_json(
    path: &Path,
    lab: &Lab,
    graded: &[(Item, Outcome, u32)],
    score: u32,
    tampered: &[String],
    r: &Rigour,
) -> Result<(), String> {
    let items: Vec<serde_json::Value> = graded
        .iter()
        .map(|(i, o, e)| {
            let t = i.test();
            serde_json::json!({
                "name": i.name, "kind": t.kind(), "test": t.id(), "points": i.points, "earned": e,
                "passed": o.passed, "test_passed": o.test_passed, "ran": o.ran, "seconds": o.seconds,
                "detail": clip(&o.detail, 16 * 1024),
                "parent": i.parent,
            })
        })
        .collect();
    let json = serde_json::json!({
        "lab": lab.number, "title": lab.title, "score": score, "max": TEST_POINTS,
        "manual": { "points": MANUAL_POINTS, "file": lab.answers() },
        "tampered": tampered, "items": items,
        "rigour": { "seed": r.seed.unwrap_or(GRADE_SEED), "cases": r.cases, "repeat": r.repeat.max(1),
                    "second_hz": r.second_hz, "timeout_cap": r.timeout_cap, "all_items": r.all_items },
    });
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

// --- Official grading ---------------------------------------------------------------------

/// `grade N --official [--handin FILE]`: the hand-out's pristine tree with only the lab's
/// files taken from the hand-in (an archive, or this tree), graded in a scratch tree with a
/// secret proptest seed, more cases, a second tick rate and every QEMU item three times.
pub fn official(
    lab_number: u32,
    handin: Option<&Path>,
    results: Option<PathBuf>,
    seed: Option<u64>,
) -> Result<ExitCode, String> {
    let root = build::root();
    let (source, cleanup) = match handin {
        Some(a) => (tree::unpack(a, "handin")?, true),
        None => (root.clone(), false),
    };
    let graded = official_tree(&root, &source, lab_number);
    if cleanup {
        let _ = std::fs::remove_dir_all(&source);
    }
    let (files, labs) = graded?;
    let lab = labs.lab(lab_number)?;
    let scratch = build::target_dir().join("lab").join("official");
    tree::sync(&scratch, &files)?;
    let seed = seed
        .or_else(|| std::env::var("TALLY_OFFICIAL_SEED").ok().and_then(|s| s.parse().ok()))
        .unwrap_or_else(secret_seed);
    let results = results
        .unwrap_or_else(|| build::target_dir().join("tally").join(format!("grade-{:02}-official.json", lab.number)));
    // The child runs in the scratch tree: a relative path would land (and be lost) there.
    let results =
        if results.is_relative() { std::env::current_dir().map_err(|e| e.to_string())?.join(results) } else { results };
    let mut cmd = scratch_xtask(&scratch)?;
    cmd.args([
        "grade",
        &lab.number.to_string(),
        "--restored",
        "--seed",
        &seed.to_string(),
        "--cases",
        "1024",
        "--repeat",
        "3",
    ])
    .args(["--second-hz", &OFFICIAL_HZ.to_string()])
    .arg("--results")
    .arg(&results);
    let status = cmd.status().map_err(|e| format!("cannot run cargo xtask in {}: {e}", scratch.display()))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(2) => ExitCode::from(2),
        _ => ExitCode::FAILURE,
    })
}

/// The tree an official run grades, and the labs it was handed out with: the hand-out's
/// pristine files (made from the reference commit the hand-in's lock names, in the
/// reference tree; the hand-out's one commit, in a student's tree), with the bodies of the
/// lab's regions and the answers taken from the hand-in, and nothing else.
fn official_tree(root: &Path, source: &Path, lab_number: u32) -> Result<(Vec<tree::File>, Labs), String> {
    let (pristine, labs) = if root.join(tree::LOCK).exists() {
        let first = tree::root_commit(root).ok_or("this tree has no commit")?;
        let labs = Labs::load(root)?;
        if let Some(t) = tree::check_lock(root, &labs)? {
            if t.findings.iter().any(|f| f.contains(" boot/")) {
                return Err("boot/ changed in this tree; its boot image packer cannot grade officially".into());
            }
        }
        (tree::files_of_commit(root, &first)?, labs)
    } else {
        let lock = std::fs::read_to_string(source.join(tree::LOCK)).unwrap_or_default();
        let reference =
            lock.lines().find_map(|l| l.strip_prefix("reference = \"")).map(|r| r.trim_end_matches('"').to_string());
        let at_commit = reference.as_deref().filter(|r| {
            !r.ends_with("-dirty") && tree::git(root, &["cat-file", "-e", &format!("{r}^{{commit}}")]).is_ok()
        });
        let files = match at_commit {
            Some(r) => {
                println!("the hand-out was made from reference commit {r}: graded against it");
                tree::files_of_commit(root, r)?
            }
            None => {
                println!(
                    "note: the hand-in does not name a reference commit of this tree ({}): graded against the working tree",
                    reference.as_deref().unwrap_or("no labs/lock.toml")
                );
                tree::tracked(root)?
            }
        };
        let text = files
            .iter()
            .find(|f| f.path == "labs/labs.toml")
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
            .ok_or("the reference has no labs/labs.toml")?;
        let labs = Labs::parse(&text)?;
        let lab = labs.lab(lab_number)?;
        (tree::starting_point(&files, lab)?.0, labs)
    };
    let lab = labs.lab(lab_number)?;
    let mut files = pristine;
    let mut notes = Vec::new();
    for f in files.iter_mut() {
        let Ok(theirs) = std::fs::read(source.join(&f.path)) else {
            if lab.files.contains(&f.path) {
                notes.push(format!("the hand-in has no {}: the starting point's is graded", f.path));
            }
            continue;
        };
        if theirs == f.bytes || f.path == tree::LOCK {
            continue;
        }
        if lab.files.contains(&f.path) {
            let ours = String::from_utf8_lossy(&f.bytes).into_owned();
            let text = String::from_utf8_lossy(&theirs).into_owned();
            if let Some(why) = tree::outside_change(&ours, &text, lab.number) {
                notes.push(format!("ignored: {} changed outside the lab's regions ({why})", f.path));
            }
            match markers::splice(&ours, &text, lab.number) {
                Ok(graded) => f.bytes = graded.into_bytes(),
                Err(e) => notes.push(format!("{}: {e}; the starting point's is graded", f.path)),
            }
        } else if labs.is_protected(&f.path) {
            notes.push(format!("restored: {} (a protected file; the hand-out's is graded)", f.path));
        } else {
            notes.push(format!("ignored: {} (only the lab's files are graded)", f.path));
        }
    }
    let known: std::collections::BTreeSet<String> = files.iter().map(|f| f.path.clone()).collect();
    for p in
        tree::all_files(source)?.into_iter().filter(|p| !known.contains(p) && *p != lab.answers() && p != tree::LOCK)
    {
        notes.push(format!("ignored: {p} (a file the hand-out did not have)"));
    }
    let answers = lab.answers();
    match std::fs::read(source.join(&answers)) {
        Ok(b) => {
            files.retain(|f| f.path != answers);
            files.push(tree::File { path: answers.clone(), bytes: b, exec: false });
        }
        Err(_) => notes.push(format!("the hand-in has no {answers} (the {MANUAL_POINTS} points graded by hand)")),
    }
    for n in &notes {
        println!("{n}");
    }
    Ok((files, labs))
}

/// A seed nobody chose: the clock's nanoseconds and the process id.
fn secret_seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (t.as_nanos() as u64).rotate_left(17) ^ u64::from(std::process::id()).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// `cargo xtask` in a scratch tree: its own target directory (inside it), and this tree's
/// boot image packer, so that the boot loader's stages are not built again.
pub fn scratch_xtask(scratch: &Path) -> Result<Command, String> {
    let status = build::cargo()
        .args(["build", "--quiet", "--package", "tally-boot"])
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err("building the boot image packer failed".into());
    }
    let packer = build::target_dir().join("debug").join("tally-boot");
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(scratch)
        .arg("xtask")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_MANIFEST_DIR")
        .env(build::BOOT_TOOL_ENV, packer)
        .stdin(Stdio::null());
    Ok(cmd)
}
