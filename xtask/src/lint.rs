//! `cargo xtask lint`: the format and lint gate CI runs before the tests.
//!
//! 1. `cargo fmt --all -- --check`: every file as rustfmt (`rustfmt.toml`) writes it;
//! 2. clippy with warnings denied (the lints are `[workspace.lints]` in `Cargo.toml`) on the
//!    host crates with their tests, on the kernel and the HAL for `x86_64-unknown-none` with
//!    accounting compiled in and out, and on userland for that target;
//! 3. the kernel's floors (`layers.rs`).
//!
//! Each step prints one line; the first failure ends the gate with the tool's own output.

use std::process::{Command, ExitCode};

use crate::build::{cargo, root};

const TARGET: &str = "x86_64-unknown-none";
/// The crates built for the kernel's target (everything else is a host crate).
const TARGET_CRATES: [&str; 3] = ["tally-kernel", "tally-hal", "tally-userland"];

fn step(what: &str, mut cmd: Command) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("cannot start {what}: {e}"))?;
    if status.success() {
        println!("PASS lint {what}");
        Ok(())
    } else {
        Err(format!("{what} failed"))
    }
}

fn clippy(packages: &[&str], extra: &[&str]) -> Command {
    let mut c = cargo();
    c.args(["clippy", "--quiet"]);
    for p in packages {
        c.args(["--package", p]);
    }
    c.args(extra).args(["--", "--deny", "warnings"]);
    c
}

pub fn run() -> Result<ExitCode, String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    step("rustfmt", fmt)?;
    let mut host: Vec<&str> = vec!["--workspace", "--all-targets"];
    for c in TARGET_CRATES {
        host.extend(["--exclude", c]);
    }
    step("clippy (host crates)", clippy(&[], &host))?;
    step("clippy (kernel, HAL)", clippy(&["tally-kernel", "tally-hal"], &["--target", TARGET]))?;
    step(
        "clippy (kernel, HAL, accounting compiled out)",
        clippy(&["tally-kernel", "tally-hal"], &["--target", TARGET, "--no-default-features"]),
    )?;
    step("clippy (userland)", clippy(&["tally-userland"], &["--target", TARGET]))?;
    let problems = crate::layers::check(&root());
    if !problems.is_empty() {
        for p in &problems {
            println!("layers: {p}");
        }
        return Err("the kernel's floors are broken (cargo xtask layers)".into());
    }
    println!("PASS lint layers");
    Ok(ExitCode::SUCCESS)
}
