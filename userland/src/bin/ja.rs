//! `ja [-c] [-l] [-h] [-s] [-e] [-J] [-t] [-n NAME] [FILE]` — SGI CSA's user job
//! accounting: start it for the caller's job, report on the job, stop it.
//!
//! ```text
//! $ ja                      start: the job's records go to /var/tmp/ja<N> from now on
//! $ hello
//! $ ja -c -s                report: a line per command, then the job's summary
//! $ ja -t                   stop
//! ```
//!
//! * **Start** (no report option, no `-t`): creates FILE (empty) and asks the kernel to
//!   write every record of the caller's job to it (`csa_ctl(AC_JASTART)`), in full
//!   whatever the system's CSA switches and thresholds; its first record is a
//!   configuration record, the job's end-of-job record its last. Anyone in a job may (a
//!   process in no job: `No data available` — start one with `newjob`).
//! * **Report** (`-c`, `-l`, `-h`, `-s`, `-e`, `-J`): reads FILE and prints the parts asked
//!   for in CSA's `ja` layout (`tally_csa::report::ja`): `-c` a line per command (`-l` long,
//!   `-h` with high-water marks), `-s` the job summary (`-e` extended, `-J` record counts).
//!   `-n NAME` selects commands called NAME (`NAME*`: starting with NAME). System billing
//!   units use the weights of `/var/csa.cfg` if it exists (`tally_rt::acct::sbu_weights`).
//! * **Stop** (`-t`): `csa_ctl(AC_JASTOP)` (the kernel closes the file); with report
//!   options the report follows, from the complete file. The file is kept.
//!
//! FILE defaults to `/var/tmp/ja<N>`, N the process-id half of the job id in decimal, so
//! that every `ja` of one job finds the same file (`/var/tmp` is made if missing). The
//! processes still running (the shell, this `ja`) have no record yet: a report counts the
//! commands that have ended.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::string::String;

use tally_csa::report::ja::{ja_report, JaOptions};
use tally_csa::report::Selection;
use tally_rt::acct::{make_parent_dir, read_acct_file, sbu_weights, JA_DIR};
use tally_rt::fs::File;
use tally_rt::uapi::csa::{self, ActCtl};
use tally_rt::uapi::fs::{O_CREAT, O_TRUNC, O_WRONLY};
use tally_rt::{eprintln, sys};

tally_rt::entry!(main);

fn usage() -> i32 {
    eprintln!("usage: ja [-c] [-l] [-h] [-s] [-e] [-J] [-t] [-n NAME] [FILE]");
    2
}

fn main() -> i32 {
    let mut o = JaOptions::default();
    let mut stop = false;
    let mut file: Option<&'static str> = None;
    let mut name: Option<&'static str> = None;
    let mut args = tally_rt::args().skip(1);
    while let Some(a) = args.next() {
        match a.strip_prefix('-') {
            Some("n") => match args.next() {
                Some(n) => name = Some(n),
                None => return usage(),
            },
            Some(flags) if !flags.is_empty() => {
                for c in flags.chars() {
                    match c {
                        'c' => o.command = true,
                        'l' => o.long = true,
                        'h' => o.hiwater = true,
                        's' => o.summary = true,
                        'e' => o.extended = true,
                        'J' => o.counts = true,
                        't' => stop = true,
                        _ => return usage(),
                    }
                }
            }
            _ if file.is_some() => return usage(),
            _ => file = Some(a),
        }
    }
    // -l, -h imply the command report, -e and -J the summary (as CSA's ja).
    o.command |= o.long || o.hiwater;
    o.summary |= o.extended || o.counts;
    let report = o.command || o.summary;

    // The job matters to start, to stop and for the default file; a report on a named
    // file can be made from anywhere.
    let jid = if report && !stop && file.is_some() {
        None
    } else {
        match sys::job_getjid(0) {
            Ok(j) => Some(j),
            Err(e) => {
                eprintln!("ja: this process is in no job ({}): start one with newjob", e.strerror());
                return 1;
            }
        }
    };
    let default_path;
    let path: &str = match (file, jid) {
        (Some(f), _) => f,
        (None, j) => {
            default_path = format!("{JA_DIR}/ja{}", (j.unwrap_or(0) & 0xffff_ffff) % 1_000_000);
            &default_path
        }
    };

    if !report && !stop {
        return start(path, file.is_none());
    }
    if stop {
        if let Err(e) = sys::csa_ctl_actctl(csa::AC_JASTOP, &mut ActCtl::default()) {
            eprintln!("ja: cannot stop job accounting: {}", e.strerror());
            return 1;
        }
        if !report {
            return 0;
        }
    }
    let Some(bytes) = read_acct_file(path) else { return 1 };
    o.file_name = path;
    o.select = Selection { command: name.map(str::as_bytes), ..Selection::default() };
    o.weights = sbu_weights("ja");
    let mut out = String::new();
    let r = ja_report(&mut out, &bytes, &o);
    tally_rt::io::write_out(&out);
    match r {
        Ok(t) if t.commands == 0 => {
            eprintln!("ja: No commands were selected for the report.");
            1
        }
        Ok(_) => 0,
        Err(e) => {
            eprintln!("ja: {path}: {e}");
            1
        }
    }
}

/// Creates `path` empty and starts job accounting to it.
fn start(path: &str, default: bool) -> i32 {
    let made = (if default { make_parent_dir(path) } else { Ok(()) })
        .and_then(|_| File::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644))
        .and_then(File::close);
    if let Err(e) = made {
        eprintln!("ja: {path}: {}", e.strerror());
        return 1;
    }
    let mut c = ActCtl::default();
    c.set_path(path.as_bytes());
    match sys::csa_ctl_actctl(csa::AC_JASTART, &mut c) {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("ja: cannot start job accounting to {path}: {}", e.strerror());
            1
        }
    }
}
