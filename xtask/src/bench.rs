//! `cargo xtask bench`: the in-kernel benchmarks, accounting compiled in and out.
//!
//! Both kernels (release builds, the `accounting` feature on and off) boot with
//! `bench=FILTER` on the command line. The kernel times each benchmark with the TSC and
//! prints one `BENCH {json}` line per result; this side pairs the results of the two kernels,
//! prints them side by side with the overhead of accounting as a ratio, and saves them as
//! JSON. By default QEMU runs with `-icount`, so guest time is instruction count: the two
//! builds are compared by the work they do, free of host noise (`--no-icount` measures TCG
//! wall time instead). No threshold is checked here: benchmarks report, tests judge.
//!
//! User-mode benchmarks (`/bin/ubench`, kernel case `user`) time themselves with `rdtsc`
//! and print `BENCHRAW {"name","param","ops","t0","t1"}` lines instead; they are aggregated
//! here per (name, param) — (max t1 − min t0) / (sum of ops) ticks per op — and converted
//! to ns with the TSC frequency of the kernel's `bench: accounting compiled ...; TSC <hz> Hz`
//! line, then join the other samples.
//!
//! `--linux` also runs the same operations on Debian's Linux kernel in the same QEMU
//! (`linuxbench.rs`) and prints one more table, Linux beside Tally (accounting compiled in),
//! saved as the `linux` section of the JSON. If the Linux half cannot run (no apt-get, no
//! package, no gcc), it says why and Tally's results stand.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::{build, qemu, BuildOpts};

/// One result line from the kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    pub name: String,
    /// The benchmark's parameter (threads, processes, bytes...), 0 if none.
    #[serde(default)]
    pub param: u64,
    pub ops: u64,
    pub ticks: u64,
    pub ns_per_op: f64,
    #[serde(default)]
    pub unit: String,
}

/// One line from a user-mode benchmark process (timed in ring 3 with `rdtsc`).
#[derive(Debug, Deserialize)]
struct RawSample {
    name: String,
    #[serde(default)]
    param: u64,
    ops: u64,
    t0: u64,
    t1: u64,
}

/// The TSC frequency from the kernel's `bench: ...; TSC <hz> Hz` line.
fn tsc_hz(serial: &str) -> Option<u64> {
    serial
        .lines()
        .find_map(|l| l.strip_prefix("bench: ")?.split("; TSC ").nth(1)?.strip_suffix(" Hz")?.trim().parse().ok())
}

/// Aggregate the BENCHRAW lines per (name, param), in order of first appearance: the
/// window from the first start to the last end over the sum of the operations.
fn aggregate_raw(serial: &str, hz: u64) -> Result<Vec<Sample>, String> {
    let mut groups: Vec<(String, u64, u64, u64, u64)> = Vec::new(); // name, param, ops, min t0, max t1
    for json in serial.lines().filter_map(|l| l.strip_prefix("BENCHRAW ")) {
        let r: RawSample = serde_json::from_str(json.trim()).map_err(|e| format!("bad BENCHRAW line {json:?}: {e}"))?;
        match groups.iter_mut().find(|g| g.0 == r.name && g.1 == r.param) {
            Some(g) => {
                g.2 += r.ops;
                g.3 = g.3.min(r.t0);
                g.4 = g.4.max(r.t1);
            }
            None => groups.push((r.name, r.param, r.ops, r.t0, r.t1)),
        }
    }
    Ok(groups
        .into_iter()
        .map(|(name, param, ops, t0, t1)| {
            let ticks = t1.saturating_sub(t0);
            let ns = ticks as f64 * 1e9 / hz as f64;
            Sample { name, param, ops, ticks, ns_per_op: ns / ops.max(1) as f64, unit: "ns".into() }
        })
        .collect())
}

#[derive(Debug, Serialize)]
struct Row {
    name: String,
    param: u64,
    accounting_ns_per_op: Option<f64>,
    no_accounting_ns_per_op: Option<f64>,
    /// accounting / no accounting.
    ratio: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Report {
    icount: bool,
    accounting: Vec<Sample>,
    no_accounting: Vec<Sample>,
    comparison: Vec<Row>,
    derived: Vec<Derived>,
    /// `--linux`: the peer's samples and the Linux/Tally table.
    #[serde(skip_serializing_if = "Option::is_none")]
    linux: Option<crate::linuxbench::Section>,
}

/// A ratio of two benchmarks of the same kernel.
#[derive(Debug, Serialize)]
struct Derived {
    label: String,
    accounting: Option<f64>,
    no_accounting: Option<f64>,
}

/// (label, numerator, denominator), each a (name, param) benchmark.
const DERIVED: [(&str, (&str, u64), (&str, u64)); 3] = [
    ("msa(MSA_SELF) / getpid (target <= 1.3x)", ("msa_self", 0), ("null_syscall", 0)),
    ("taskstats GET round trip / getpid (target <= 4x)", ("taskstats_get", 0), ("null_syscall", 0)),
    ("exit path, one listener / none", ("taskstats_exit", 1), ("taskstats_exit", 0)),
];

/// `num / den` among `samples`, when both ran.
fn derive(samples: &[Sample], num: (&str, u64), den: (&str, u64)) -> Option<f64> {
    let find =
        |(name, param): (&str, u64)| samples.iter().find(|s| s.name == name && s.param == param).map(|s| s.ns_per_op);
    match (find(num), find(den)) {
        (Some(n), Some(d)) if d > 0.0 => Some(n / d),
        _ => None,
    }
}

fn run_variant(no_accounting: bool, filter: &str, icount: bool) -> Result<Vec<Sample>, String> {
    let opts = BuildOpts { release: true, hz: None, no_accounting };
    let image = build::image(&opts)?;
    let label = if no_accounting { "accounting compiled out" } else { "accounting compiled in" };
    eprintln!("bench: running the kernel with {label}...");
    let disk = crate::acctdisk::Disk::fresh("bench")?;
    let (status, serial, _) = qemu::Qemu::new(&image, disk.path())
        .cmdline(&format!("bench={filter}"))
        .icount(icount)
        .run_captured(Duration::from_secs(600))?;
    if status != qemu::Status::Success {
        let tail: Vec<&str> = serial.lines().rev().take(20).collect();
        return Err(format!(
            "the benchmark kernel ({label}) ended with {status:?}; last lines:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    let mut samples: Vec<Sample> = serial
        .lines()
        .filter_map(|l| l.strip_prefix("BENCH "))
        .map(|json| serde_json::from_str(json).map_err(|e| format!("bad BENCH line {json:?}: {e}")))
        .collect::<Result<_, _>>()?;
    if serial.lines().any(|l| l.starts_with("BENCHRAW ")) {
        let hz = tsc_hz(&serial)
            .filter(|&hz| hz > 0)
            .ok_or_else(|| format!("the kernel ({label}) printed no TSC frequency"))?;
        samples.extend(aggregate_raw(&serial, hz)?);
    }
    for note in serial.lines().filter(|l| l.starts_with("bench: user")) {
        eprintln!("{note}");
    }
    if samples.is_empty() {
        return Err(format!("the kernel ({label}) printed no benchmark results"));
    }
    Ok(samples)
}

pub fn run(filter: Option<&str>, icount: bool, json: Option<PathBuf>, linux: bool) -> Result<ExitCode, String> {
    qemu::ensure_installed()?;
    let filter = filter.unwrap_or("all");
    let with = run_variant(false, filter, icount)?;
    let without = run_variant(true, filter, icount)?;

    let mut rows = Vec::new();
    for s in &with {
        let other = without.iter().find(|o| o.name == s.name && o.param == s.param);
        rows.push(Row {
            name: s.name.clone(),
            param: s.param,
            accounting_ns_per_op: Some(s.ns_per_op),
            no_accounting_ns_per_op: other.map(|o| o.ns_per_op),
            ratio: other.filter(|o| o.ns_per_op > 0.0).map(|o| s.ns_per_op / o.ns_per_op),
        });
    }
    for o in without.iter().filter(|o| !with.iter().any(|s| s.name == o.name && s.param == o.param)) {
        rows.push(Row {
            name: o.name.clone(),
            param: o.param,
            accounting_ns_per_op: None,
            no_accounting_ns_per_op: Some(o.ns_per_op),
            ratio: None,
        });
    }

    println!(
        "time base: {}",
        if icount { "QEMU -icount (1 instruction = 1 ns of guest time)" } else { "TCG wall time" }
    );
    println!("{:<28} {:>8} {:>16} {:>16} {:>10}", "benchmark", "param", "acct in ns/op", "acct out ns/op", "in/out");
    let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    for r in &rows {
        println!(
            "{:<28} {:>8} {:>16} {:>16} {:>10}",
            r.name,
            r.param,
            fmt(r.accounting_ns_per_op),
            fmt(r.no_accounting_ns_per_op),
            r.ratio.map_or("-".to_string(), |x| format!("{x:.3}"))
        );
    }
    // Ratios between benchmarks of one kernel (targets from the issues; reported, not judged).
    let derived: Vec<Derived> = DERIVED
        .iter()
        .map(|&(label, num, den)| Derived {
            label: label.to_string(),
            accounting: derive(&with, num, den),
            no_accounting: derive(&without, num, den),
        })
        .filter(|d| d.accounting.is_some() || d.no_accounting.is_some())
        .collect();
    if !derived.is_empty() {
        println!();
        println!("{:<46} {:>12} {:>12}", "ratio", "acct in", "acct out");
        let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}x"));
        for d in &derived {
            println!("{:<46} {:>12} {:>12}", d.label, fmt(d.accounting), fmt(d.no_accounting));
        }
    }
    for (label, v) in [("acct in", &with), ("acct out", &without)] {
        if let Some(ns) = v.iter().find(|s| s.name == "taskstats_deliver").map(|s| s.ns_per_op).filter(|ns| *ns > 0.0) {
            println!("exit-record delivery throughput ({label}): {:.0} records/s", 1e9 / ns);
        }
    }
    let linux = if linux { linux_section(icount, &with) } else { None };
    let path = json.unwrap_or_else(|| build::target_dir().join("tally").join("bench.json"));
    let report = Report { icount, accounting: with, no_accounting: without, comparison: rows, derived, linux };
    let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("saved {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// `--linux`: run the Linux peer and print its table beside Tally's `with` (accounting in).
/// A failure is reported and leaves the section out; it does not fail the bench.
fn linux_section(icount: bool, with: &[Sample]) -> Option<crate::linuxbench::Section> {
    use crate::linuxbench;
    match linuxbench::run(icount) {
        Ok((samples, kernel, info)) => {
            let comparison = linuxbench::compare(&samples, with);
            println!();
            print!("{}", linuxbench::table(&kernel, &comparison));
            Some(linuxbench::Section { kernel, info, samples, comparison })
        }
        Err(e) => {
            println!();
            println!("bench --linux: no Linux comparison: {e}");
            println!("bench --linux: (Tally's results above are complete)");
            None
        }
    }
}
