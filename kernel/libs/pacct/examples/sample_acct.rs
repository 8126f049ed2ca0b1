//! Writes the sample session of `tests/sample/mod.rs` as an accounting file, the one the
//! golden outputs in `tests/fixtures/` were captured from with GNU acct:
//!
//! ```text
//! cargo run -p tally-pacct --example sample_acct -- FILE
//! ```

#[path = "../tests/sample/mod.rs"]
mod sample;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: sample_acct FILE");
        std::process::exit(2);
    };
    if let Err(e) = std::fs::write(&path, sample::file_bytes()) {
        eprintln!("sample_acct: {path}: {e}");
        std::process::exit(1);
    }
}
