//! Coursework labs: `cargo xtask lab list | export N --out DIR | handin N | check` and
//! `cargo xtask grade N [--official]`. The labs are regions of the reference code
//! (`markers.rs`), described by `labs/labs.toml` (`config.rs`); a starting point is the
//! reference with one lab's regions stubbed (`tree.rs`), graded by `grade.rs`, and proven
//! sound for every lab by `check.rs`. The instructor's and the student's sides are taught in
//! docs/labs/README.md.

mod check;
mod config;
pub mod grade;
mod markers;
mod tree;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::build;
use config::Labs;

#[derive(clap::Subcommand)]
pub enum LabCmd {
    /// List the labs: their titles, whether their starting points boot, items and handouts.
    List,
    /// Write lab N's starting point as a fresh repository (one commit, no solution history).
    Export {
        lab: u32,
        /// The new repository's directory (must not exist, or be empty).
        #[arg(long)]
        out: PathBuf,
    },
    /// Check that this tree is committed and pack it for hand-in (`git archive`).
    Handin {
        lab: u32,
        /// Where to write the archive (default target/lab/lab-NN-handin.tar.gz).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// CI's proof: for every lab, the reference scores full marks and the starting point
    /// compiles, boots if it should, and fails every item with points.
    Check {
        /// Check this lab only.
        #[arg(long)]
        lab: Option<u32>,
        /// Cap on each QEMU item's timeout on a starting point, in seconds.
        #[arg(long, default_value_t = 30)]
        timeout_cap: u64,
    },
}

pub fn run(cmd: &LabCmd) -> Result<ExitCode, String> {
    match cmd {
        LabCmd::List => list(),
        LabCmd::Export { lab, out } => export(*lab, out),
        LabCmd::Handin { lab, out } => handin(*lab, out.clone()),
        LabCmd::Check { lab, timeout_cap } => check::run(*lab, *timeout_cap),
    }
}

fn list() -> Result<ExitCode, String> {
    let root = build::root();
    let labs = Labs::load(&root)?;
    let regions = tree::regions(&tree::tracked(&root)?).unwrap_or_default();
    let width = labs.labs.iter().map(|l| l.title.chars().count()).max().unwrap_or(5);
    println!("{:>2}  {:<width$} {:<5} {:>7} {:>5}  handout", "N", "title", "boots", "regions", "items");
    for lab in &labs.labs {
        let count = regions.values().flatten().filter(|r| r.lab == lab.number).count();
        println!(
            "{:>2}  {:<width$} {:<5} {:>7} {:>5}  {}",
            lab.number,
            lab.title,
            if lab.boots { "yes" } else { "no" },
            count,
            lab.items.len(),
            lab.handout()
        );
    }
    println!(
        "\n`cargo xtask lab export N --out DIR` writes lab N's starting point; docs/labs/README.md explains the rest."
    );
    Ok(ExitCode::SUCCESS)
}

fn export(number: u32, out: &std::path::Path) -> Result<ExitCode, String> {
    let root = build::root();
    if root.join(tree::LOCK).exists() {
        return Err(format!(
            "this tree is a lab's starting point ({} exists): export from the reference tree",
            tree::LOCK
        ));
    }
    let labs = Labs::load(&root)?;
    let lab = labs.lab(number)?;
    let files = tree::tracked(&root)?;
    let (start, changed) = tree::starting_point(&files, lab)?;
    if changed.is_empty() {
        return Err(format!("lab {number} has no region marked `// BEGIN LAB {number}:`"));
    }
    let mut reference = tree::git(&root, &["rev-parse", "HEAD"])?.trim().to_string();
    if !tree::git(&root, &["status", "--porcelain", "--untracked-files=no"])?.trim().is_empty() {
        reference.push_str("-dirty");
        eprintln!("xtask: note: the reference tree has uncommitted changes; they are exported as they are");
    }
    tree::export(out, &start, &labs, lab, &reference)?;
    println!("lab {number}: {} written to {}", lab.title, out.display());
    println!("  the student writes: {}", changed.join(", "));
    println!("  handout: {}", lab.handout());
    println!("next: cd {} && cargo xtask grade {number}", out.display());
    Ok(ExitCode::SUCCESS)
}

fn handin(number: u32, out: Option<PathBuf>) -> Result<ExitCode, String> {
    let root = build::root();
    let labs = Labs::load(&root)?;
    let lab = labs.lab(number)?;
    let dirty = tree::git(&root, &["status", "--porcelain"])?;
    if !dirty.trim().is_empty() {
        eprintln!("xtask: this tree has changes that are not committed; commit them (git add, git commit) first:");
        for l in dirty.lines() {
            eprintln!("  {l}");
        }
        return Ok(ExitCode::FAILURE);
    }
    match tree::check_lock(&root, &labs)? {
        None => eprintln!("xtask: note: no {} here: this is not a lab's starting point", tree::LOCK),
        Some(t) if t.lab != number => eprintln!("xtask: note: this tree was handed out for lab {}", t.lab),
        Some(t) if !t.findings.is_empty() => {
            eprintln!(
                "xtask: note: protected files changed ({}); the official grading restores them",
                t.findings.join(", ")
            )
        }
        Some(_) => {}
    }
    if !root.join(lab.answers()).exists() {
        eprintln!("xtask: note: no {}: the written answers are {} of the points", lab.answers(), config::MANUAL_POINTS);
    }
    let out = out.unwrap_or_else(|| build::target_dir().join("lab").join(format!("lab-{number:02}-handin.tar.gz")));
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let head = tree::git(&root, &["rev-parse", "--short", "HEAD"])?;
    tree::git(&root, &["archive", "--format=tar.gz", "-o", &out.to_string_lossy(), "HEAD"])?;
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or_default();
    println!("lab {number}: commit {} packed into {} ({} KiB)", head.trim(), out.display(), size / 1024);
    println!("hand in that file; the instructor grades it with `cargo xtask grade {number} --official --handin FILE`");
    Ok(ExitCode::SUCCESS)
}
