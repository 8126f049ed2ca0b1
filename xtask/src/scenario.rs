//! Integration scenarios: one TOML file per scenario in `tests/`.
//!
//! ```toml
//! description = "What the scenario proves, in one sentence."
//! cmdline = "test=heap"          # kernel command line for this boot
//! expect = "success"             # or "failure" for scenarios that must end in a fault
//! serial = ["heap: counters back to baseline", "selftest heap: ok"]  # must appear, in order
//! timeout = 60                   # seconds before the run is killed and failed (default 60)
//! icount = false                 # deterministic guest time (see TOOLCHAIN.md)
//! script = """                   # optional (also spelt `stdin`): typed on the console
//! hello                          # once the kernel is ready, then ^D (end of input);
//! echo done                      # without it the console gets no input at all
//! """
//! ```

use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    Success,
    Failure,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(skip)]
    pub name: String,
    pub description: String,
    pub cmdline: String,
    pub expect: Expect,
    #[serde(default)]
    pub serial: Vec<String>,
    #[serde(default = "default_timeout")]
    pub timeout: u64,
    #[serde(default)]
    pub icount: bool,
    /// Console input: sent once the kernel is ready, followed by `^D` (see `qemu.rs`).
    #[serde(default, alias = "stdin")]
    pub script: Option<String>,
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
        out.push(s);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

impl Scenario {
    /// What this scenario types on the console.
    pub fn input(&self) -> crate::qemu::Input {
        match &self.script {
            Some(s) => crate::qemu::Input::Script(s.clone().into_bytes()),
            None => crate::qemu::Input::Closed,
        }
    }

    /// Check a finished run: the exit status and the serial patterns, in order.
    pub fn judge(&self, status: crate::qemu::Status, serial: &str) -> Result<(), String> {
        use crate::qemu::Status;
        match (self.expect, status) {
            (Expect::Success, Status::Success) | (Expect::Failure, Status::Failure) => {}
            (_, Status::Timeout) => return Err(format!("timed out after {} s", self.timeout)),
            (want, got) => return Err(format!("expected {want:?}, QEMU ended with {got:?}")),
        }
        let mut from = 0;
        for pattern in &self.serial {
            match serial[from..].find(pattern.as_str()) {
                Some(at) => from += at + pattern.len(),
                None => return Err(format!("serial output lacks {pattern:?} (after the previous match)")),
            }
        }
        Ok(())
    }
}
