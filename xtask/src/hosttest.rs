//! Host unit tests: every test binary of the hardware-independent crates, run one by one so
//! that each test gets its own line, labelled with its crate.

use serde::Deserialize;
use std::path::PathBuf;
use std::process::Stdio;

use crate::build::cargo;

/// The name of the result [`run_binary`] adds when it had to kill a binary at its timeout.
pub const KILLED: &str = "(killed at its timeout)";

/// One test's result, as libtest reported it.
pub struct HostResult {
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    package_id: String,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    profile: Option<Profile>,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    manifest_path: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Target {
    name: String,
}

#[derive(Deserialize)]
struct Profile {
    test: bool,
}

/// One test binary of a host crate, labelled as its tests are printed (`tally_kstat`,
/// `tally_msgbus/flow`).
pub struct TestBinary {
    pub label: String,
    pub exe: PathBuf,
    pub dir: PathBuf,
}

/// Compile the test binaries of the workspace's default (host) members.
pub fn build() -> Result<Vec<TestBinary>, String> {
    build_packages(&[])
}

/// Compile the test binaries of these packages (all default members when empty).
pub fn build_packages(packages: &[String]) -> Result<Vec<TestBinary>, String> {
    let mut cmd = cargo();
    cmd.args(["test", "--no-run", "--quiet", "--message-format=json-render-diagnostics"]);
    for p in packages {
        cmd.args(["--package", p]);
    }
    let out = cmd.stderr(Stdio::inherit()).output().map_err(|e| format!("cannot start cargo: {e}"))?;
    if !out.status.success() {
        return Err("host unit tests did not compile".into());
    }
    let mut bins = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(m) = serde_json::from_str::<Message>(line) else { continue };
        if m.reason != "compiler-artifact" || !m.profile.as_ref().is_some_and(|p| p.test) {
            continue;
        }
        if let (Some(exe), Some(target), Some(manifest)) = (m.executable, m.target, m.manifest_path) {
            let dir = manifest.parent().map(PathBuf::from).unwrap_or_default();
            // package_id looks like "path+file:///…/kernel/libs/tasktable#tally-tasktable@0.1.0".
            let package = m.package_id.rsplit('#').next().and_then(|p| p.split('@').next()).unwrap_or("");
            let crate_name = package.replace('-', "_");
            let target_name = target.name.replace('-', "_");
            let label = if crate_name.is_empty() || crate_name == target_name {
                target_name
            } else {
                format!("{crate_name}/{target_name}")
            };
            bins.push(TestBinary { label, exe, dir });
        }
    }
    Ok(bins)
}

/// Run the host tests whose `crate::path` contains `filter`.
pub fn run(filter: Option<&str>) -> Result<Vec<HostResult>, String> {
    let mut results = Vec::new();
    for bin in build()? {
        let mut cmd = std::process::Command::new(&bin.exe);
        cmd.current_dir(&bin.dir);
        // A filter naming the crate runs all of it; otherwise libtest filters by test path.
        if let Some(f) = filter.filter(|f| !bin.label.contains(f)) {
            cmd.arg(f);
        }
        results.extend(run_binary(&bin, cmd, None)?);
    }
    Ok(results)
}

/// Run one test binary as `cmd` (its arguments chosen by the caller) and read libtest's
/// verdicts; a binary that runs longer than `timeout` is killed and reported as hung.
pub fn run_binary(
    bin: &TestBinary,
    mut cmd: std::process::Command,
    timeout: Option<std::time::Duration>,
) -> Result<Vec<HostResult>, String> {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.exe.display()))?;
    let (status, stdout, stderr) = crate::child::wait_with_timeout(child, timeout)?;
    let mut results = Vec::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix("test ") else { continue };
        let Some((name, verdict)) = rest.rsplit_once(" ... ") else { continue };
        let passed = match verdict.trim() {
            "ok" => true,
            "FAILED" => false,
            _ => continue, // ignored tests are neither passed nor failed
        };
        let detail = if passed { String::new() } else { failure_detail(&stdout, name) };
        results.push(HostResult { name: format!("{}::{}", bin.label, name), passed, detail });
    }
    // Killed: the tests that finished are reported; the rest never ended.
    let Some(status) = status else {
        results.push(HostResult {
            name: format!("{} {KILLED}", bin.label),
            passed: false,
            detail: format!("killed after {} s: a test never ended", timeout.unwrap_or_default().as_secs()),
        });
        return Ok(results);
    };
    if !status.success() && results.iter().all(|r| r.passed) {
        // The binary failed without naming a failing test (a crash, an abort).
        results.push(HostResult { name: format!("{} (test binary)", bin.label), passed: false, detail: stderr });
    }
    Ok(results)
}

/// The `---- name stdout ----` section libtest prints for a failed test.
fn failure_detail(stdout: &str, name: &str) -> String {
    let header = format!("---- {name} stdout ----");
    stdout
        .split_once(&header)
        .map(|(_, rest)| rest.split("\n---- ").next().unwrap_or("").trim().to_string())
        .unwrap_or_default()
}
