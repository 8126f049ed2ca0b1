//! The kernel command line: `key=value` words from QEMU's fw_cfg file `opt/tally/cmdline`.
//!
//! `cargo xtask run --cmdline "..."` and the test scenarios set it; e.g. `test=heap` runs
//! one self-test, `loglevel=debug` shows more. A key the kernel does not know, or a value a
//! key does not take, is ignored with a warning on the console ([`KEYS`] lists them): as
//! Linux's "Unknown kernel command line parameters … will be passed to user space", a typo
//! is visible rather than silently lost. As on Linux, the words after a lone `--` are not
//! the kernel's: they are handed to init as its arguments (`demo=off -- hello a ; sh` makes
//! `/bin/init` run `hello a`, then the shell).

use alloc::string::String;
use spin::Once;

/// The kernel's keys and the values each takes (`None`: any value; the key's user checks
/// it, as `test=` and `bench=` do). README.md lists them for users.
pub const KEYS: [(&str, Option<&[&str]>); 5] = [
    ("test", None),
    ("bench", None),
    ("demo", Some(&["on", "off"])),
    ("init", None),
    ("loglevel", Some(&super::console::LEVEL_NAMES)),
];

static CMDLINE: Once<String> = Once::new();
const MAX_LEN: usize = 4096;

pub fn init() {
    CMDLINE.call_once(|| {
        let mut buf = [0u8; MAX_LEN];
        let len = hal::fw_cfg::read_file("opt/tally/cmdline", &mut buf).unwrap_or(0).min(MAX_LEN);
        let text = core::str::from_utf8(&buf[..len]).unwrap_or("");
        String::from(text.trim_end_matches('\0').trim())
    });
    log::info!("command line: \"{}\"", line());
    warn_unknown();
}

/// Say which of the kernel's words will be ignored: an unknown key, a value its key does not
/// take. The words after `--` are init's and are not checked here.
fn warn_unknown() {
    for word in kernel_words() {
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        match KEYS.iter().find(|(k, _)| *k == key) {
            None => println!("kernel: unknown command-line key `{key}` (ignored)"),
            Some((_, Some(values))) if !values.contains(&value) => {
                println!("kernel: command-line `{word}`: `{key}` takes {} (ignored)", values.join(", "))
            }
            Some(_) => {}
        }
    }
}

pub fn line() -> &'static str {
    CMDLINE.get().map_or("", |s| s.as_str())
}

/// The kernel's own words: those before a lone `--`.
fn kernel_words() -> impl Iterator<Item = &'static str> {
    line().split_whitespace().take_while(|w| *w != "--")
}

/// The words after the first lone `--`: init's arguments.
pub fn init_args() -> impl Iterator<Item = &'static str> {
    line().split_whitespace().skip_while(|w| *w != "--").skip(1)
}

/// The value of `key=value`, or `""` for a bare `key`; `None` if absent.
pub fn get(key: &str) -> Option<&'static str> {
    kernel_words().find_map(|word| match word.split_once('=') {
        Some((k, v)) if k == key => Some(v),
        None if word == key => Some(""),
        _ => None,
    })
}
