//! Runs on the host before the kernel is compiled: writes the self-test table `TESTS`
//! (`$OUT_DIR/selftests.rs`, included by `src/selftest/mod.rs`) from the scenarios in
//! `tests/`, one entry per scenario with `selftest = "PATH"` (see the crate
//! `tally-selftests`, `xtask/selftests`). A malformed `selftest` fails the build here with the
//! file's name; a path that names no function fails it in the compiler, on the entry's line.

use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let tests = manifest_dir.parent().expect("the kernel lives in the workspace").join("tests");
    // The directory (a scenario added or removed), then each file (a scenario edited).
    println!("cargo::rerun-if-changed={}", tests.display());
    let table = tally_selftests::scenario_files(&tests).map_err(|e| vec![e]).and_then(|files| {
        for file in &files {
            println!("cargo::rerun-if-changed={}", file.display());
        }
        tally_selftests::load(&files)
    });
    match table {
        Ok(selftests) => {
            let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("selftests.rs");
            std::fs::write(&out, tally_selftests::generate(&selftests))
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
        }
        Err(errors) => {
            for e in errors {
                println!("cargo::error=self-test table: {e}");
            }
        }
    }
}
