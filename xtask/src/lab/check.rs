//! `cargo xtask lab check`: CI's proof that every lab is sound. For each lab: its markers
//! are well formed and lie in its files; the files a student edits hold no tests; the
//! reference scores full marks (its QEMU items at both tick rates of an official run) and
//! every rubric item names a test that exists; the starting
//! point compiles (host tests, the kernel with accounting on and off) and boots if the lab
//! says so; every item with points fails on the starting point; stripping changes no code
//! outside the lab's files. The starting points are built in one scratch tree
//! (`target/lab/check`), rewritten file by file so each lab's build is incremental.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::time::Instant;

use super::config::{Labs, Test, TEST_POINTS};
use super::grade::{self, Rigour};
use super::{markers, tree};
use crate::{build, scenario};

pub fn run(only: Option<u32>, timeout_cap: u64) -> Result<ExitCode, String> {
    let started = Instant::now();
    let root = build::root();
    let labs = Labs::load(&root)?;
    let files = tree::tracked(&root)?;
    let mut problems: Vec<String> = Vec::new();
    let selected: Vec<_> = labs.labs.iter().filter(|l| only.is_none_or(|n| n == l.number)).collect();
    if selected.is_empty() {
        return Err(format!("no lab {}", only.unwrap_or_default()));
    }

    // 1. The markers and the rubric, without building anything.
    let regions = tree::regions(&files)?;
    let paths: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let scenarios: BTreeSet<String> = scenario::load_all(&root.join("tests"))?.into_iter().map(|s| s.name).collect();
    for (path, rs) in &regions {
        // With --lab n, only lab n's regions (the others may belong to labs not yet written).
        for r in rs.iter().filter(|r| only.is_none_or(|n| n == r.lab)) {
            match labs.lab(r.lab) {
                Err(e) => problems.push(format!("{path}:{}: {e}", r.begin + 1)),
                Ok(lab) if !lab.files.contains(path) => problems.push(format!(
                    "{path}:{}: a region of lab {} in a file lab {} does not hand out",
                    r.begin + 1,
                    r.lab,
                    r.lab
                )),
                Ok(_) => {}
            }
        }
    }
    for lab in &selected {
        let n = lab.number;
        if !paths.contains(lab.handout().as_str()) {
            problems.push(format!("lab {n}: no handout {}", lab.handout()));
        }
        let count: usize = regions.values().flatten().filter(|r| r.lab == n).count();
        if count == 0 {
            problems.push(format!("lab {n}: no region is marked `// BEGIN LAB {n}:`"));
        }
        for f in &lab.files {
            match files.iter().find(|x| &x.path == f) {
                None => problems.push(format!("lab {n}: {f} is not a file of the tree")),
                Some(x) => {
                    let text = String::from_utf8_lossy(&x.bytes);
                    for bad in ["#[test]", "proptest!", "mod tests {"] {
                        if text.contains(bad) {
                            problems.push(format!(
                                "lab {n}: {f} holds `{bad}`: tests a student could edit cannot grade (move them to a protected *_tests.rs)"
                            ));
                        }
                    }
                }
            }
        }
        for item in &lab.items {
            if let Test::Qemu(q) = item.test() {
                if !scenarios.contains(&q) {
                    problems.push(format!("lab {n}: item {:?} names no scenario tests/{q}.toml", item.name));
                }
            }
        }
        // Stripping changes code only in the lab's files: elsewhere only marker lines go.
        let (start, changed) = tree::starting_point(&files, lab)?;
        for c in &changed {
            if !lab.files.contains(c) {
                problems.push(format!("lab {n}: stripping changed {c}, which is not one of its files"));
            }
        }
        for (r, s) in files.iter().zip(&start) {
            if r.bytes != s.bytes && !lab.files.contains(&r.path) && unmarked(&r.bytes) != unmarked(&s.bytes) {
                problems.push(format!("lab {n}: stripping changed code in {}", r.path));
            }
        }
        println!("lab {n}: {count} region(s) in {} file(s), {} item(s)", lab.files.len(), lab.items.len());
    }
    if !problems.is_empty() {
        return Ok(report(&problems, started));
    }

    // 2. The reference scores full marks: every test any selected lab names, run once.
    let mut union: Vec<Test> = Vec::new();
    for lab in &selected {
        for item in &lab.items {
            if !union.contains(&item.test()) {
                union.push(item.test());
            }
        }
    }
    // QEMU items at the official run's second tick rate too: a correct hand-in must be able
    // to pass the official grading.
    println!(
        "== the reference: {} test(s) named by the rubrics (QEMU items at 1000 and {} Hz)",
        union.len(),
        grade::OFFICIAL_HZ
    );
    let rigour = Rigour { second_hz: Some(grade::OFFICIAL_HZ), ..Rigour::default() };
    let outcomes = grade::run_tests(&union, &rigour, &|_| false);
    for lab in &selected {
        let graded = grade::score(lab, &outcomes);
        let score: u32 = graded.iter().map(|g| g.2).sum();
        println!("lab {}: the reference scores {score}/{TEST_POINTS}", lab.number);
        for (item, o, _) in graded.iter().filter(|g| !g.1.passed) {
            problems.push(format!(
                "lab {}: item {:?} ({}) fails on the reference: {}",
                lab.number,
                item.name,
                item.test().id(),
                o.detail.lines().take(6).collect::<Vec<_>>().join(" / ")
            ));
        }
    }

    // 3. Each starting point: compiles, boots if it should, and fails every item with points.
    let scratch = build::target_dir().join("lab").join("check");
    for lab in &selected {
        let n = lab.number;
        let lab_started = Instant::now();
        println!("== lab {n}'s starting point (in {})", scratch.display());
        let (start, _) = tree::starting_point(&files, lab)?;
        tree::sync(&scratch, &start)?;
        // Every host crate's tests but the boot image packer's (the reference's is used, and
        // building it would build the boot loader's stages once more).
        let mut host = std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        host.current_dir(&scratch).args(["test", "--no-run", "--quiet"]).env_remove("CARGO_TARGET_DIR");
        for p in host_packages(&root)? {
            host.args(["--package", &p]);
        }
        if !quiet_ok(host) {
            problems.push(format!("lab {n}: the starting point's host tests do not compile"));
            continue;
        }
        for (what, args) in [("accounting on", &["build"][..]), ("accounting off", &["build", "--no-accounting"][..])] {
            let mut cmd = grade::scratch_xtask(&scratch)?;
            cmd.args(args);
            if !quiet_ok(cmd) {
                problems.push(format!("lab {n}: the starting point's kernel ({what}) does not build"));
            }
        }
        if lab.boots {
            let mut cmd = grade::scratch_xtask(&scratch)?;
            cmd.args(["run", "--timeout", "120"]);
            if !quiet_ok(cmd) {
                problems.push(format!(
                    "lab {n}: labs.toml says the starting point boots, but `cargo xtask run < /dev/null` did not end with success"
                ));
            } else {
                println!("lab {n}: the starting point boots and `cargo xtask run < /dev/null` ends with success");
            }
        }
        let results = scratch.join("target").join(format!("lab-check-{n:02}.json"));
        let _ = std::fs::remove_file(&results);
        let mut cmd = grade::scratch_xtask(&scratch)?;
        cmd.args(["grade", &n.to_string(), "--all-items", "--timeout-cap", &timeout_cap.to_string(), "--results"])
            .arg(&results);
        // Its failing items are the point here: the verdicts are read from the results.
        let _ = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status();
        match read_results(&results) {
            Err(e) => problems.push(format!("lab {n}: grading the starting point gave no results: {e}")),
            Ok(items) => {
                let passing: Vec<&str> = items
                    .iter()
                    .filter(|(_, points, passed)| *points > 0 && *passed)
                    .map(|(n, ..)| n.as_str())
                    .collect();
                for p in &passing {
                    problems.push(format!("lab {n}: item {p:?} passes on the starting point, yet carries points"));
                }
                if passing.is_empty() {
                    println!("lab {n}: every item with points fails on the starting point");
                }
            }
        }
        println!("lab {n}: checked in {:.0} s", lab_started.elapsed().as_secs_f64());
    }
    Ok(report(&problems, started))
}

/// The workspace's default members (the host crates) but the boot image packer.
fn host_packages(root: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| format!("Cargo.toml: {e}"))?;
    let v: toml::Value = toml::from_str(&text).map_err(|e| format!("Cargo.toml: {e}"))?;
    let members = v["workspace"]["default-members"].as_array().ok_or("Cargo.toml has no default-members")?;
    let mut out = Vec::new();
    for m in members.iter().filter_map(|m| m.as_str()).filter(|m| *m != "boot") {
        let manifest =
            std::fs::read_to_string(root.join(m).join("Cargo.toml")).map_err(|e| format!("{m}/Cargo.toml: {e}"))?;
        let pkg: toml::Value = toml::from_str(&manifest).map_err(|e| format!("{m}/Cargo.toml: {e}"))?;
        out.push(pkg["package"]["name"].as_str().ok_or("a member without a name")?.to_string());
    }
    Ok(out)
}

/// A file's lines other than lab markers, to compare code with the markers left out.
fn unmarked(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let Ok(regions) = markers::regions(&text) else { return text.lines().map(str::to_string).collect() };
    let marker_lines: BTreeSet<usize> = regions
        .iter()
        .flat_map(|r| [r.begin, r.end].into_iter().chain((0..r.stub.len()).map(|i| r.begin + 1 + i)))
        .collect();
    text.lines().enumerate().filter(|(i, _)| !marker_lines.contains(i)).map(|(_, l)| l.to_string()).collect()
}

/// Run `cmd`, showing its output only when it fails.
fn quiet_ok(mut cmd: std::process::Command) -> bool {
    match cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null()).output() {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            let lines: Vec<&str> = text.lines().collect();
            for l in &lines[lines.len().saturating_sub(60)..] {
                println!("     | {l}");
            }
            false
        }
        Err(e) => {
            println!("     | cannot run: {e}");
            false
        }
    }
}

/// (name, points, whether its test passed — its parent's verdict left out) of each item in a
/// grade's JSON results.
fn read_results(path: &Path) -> Result<Vec<(String, u64, bool)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let items = v["items"].as_array().ok_or("no items")?;
    Ok(items
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap_or_default().to_string(),
                i["points"].as_u64().unwrap_or_default(),
                i["test_passed"].as_bool().unwrap_or(false),
            )
        })
        .collect())
}

fn report(problems: &[String], started: Instant) -> ExitCode {
    println!();
    for p in problems {
        println!("PROBLEM {p}");
    }
    println!("(wall time {:.1} s)", started.elapsed().as_secs_f64());
    if problems.is_empty() {
        println!("lab check: every lab is sound");
        ExitCode::SUCCESS
    } else {
        println!("lab check: {} problem(s)", problems.len());
        ExitCode::FAILURE
    }
}
