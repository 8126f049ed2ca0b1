//! `cargo xtask` — builds, boots and tests Tally from the host.
//!
//! * `run`: build userland, kernel and BIOS image, boot QEMU with the serial console on the
//!   terminal, return the kernel's verdict as the exit status. `--script FILE` types FILE
//!   on the console, then `^D` (end of input); a standard input that is not a terminal is
//!   forwarded the same way (see `qemu.rs`).
//!   The guest's second serial port (COM2, `/dev/ttyS1`) is written to a host file,
//!   `--capture FILE` (default `target/tally/ttyS1.bin`), named at the end of the run.
//!   `--add FILE[:NAME]` (repeatable) puts a host program into the ramdisk as `/bin/NAME`;
//!   the tree's C programs (`userland/c/*.c`) are always there (`cprogs.rs`).
//! * `test [FILTER]`: host unit tests of every host-testable crate, then every scenario in
//!   `tests/` in its own QEMU; a line per test and a final `N passed, N failed`.
//! * `bench [--linux]`: the in-kernel and ring-3 benchmarks, accounting compiled in and out
//!   (`bench.rs`); `--linux` adds the same operations on Debian's Linux (`linuxbench.rs`).
//! * `profile WHAT`: instructions per function of one operation of a ring-3 benchmark
//!   (`ubench WHAT`), from a QEMU instruction log of its loop (see `profile.rs`).
//! * `decode FILE`: print a capture of bus datagrams (`getdelays -w /dev/ttyS1`) as text.
//! * `acct IMAGE ls|cat|dump|lastcomm|csacom PATH`: the files of an accounting disk (`/var`),
//!   printed as Tally's tools print them (`acct.rs`, `acctdisk.rs`).
//! * `lab list|export N --out DIR|handin N|check` and `grade N [--official]`: the
//!   coursework labs (`lab/`, docs/labs/README.md).
//! * `layers`: the kernel's floors and which module calls which, checked (`layers.rs`).
//! * `lint`: rustfmt, clippy with warnings denied, and the floors: the gate CI runs first.
//!
//! QEMU's `isa-debug-exit` device turns the kernel's exit value `v` into the status
//! `(v << 1) | 1`: 33 means success, 31 the kernel's failure verdict (`run` exits with 1),
//! and a kernel that ends with init's exit status N writes `0x10 + N`, status `33 + 2N`
//! (`run` exits with N); anything else (a crash, a timeout) is a failure (`qemu.rs`).

mod acct;
mod acctdisk;
mod bench;
mod build;
mod child;
mod cprogs;
mod decode;
// GNU acct as the judge of Tally's accounting files: called by the scenarios' host checks
// (`hostcheck.rs`) and by its own tests, not by a subcommand.
#[cfg_attr(not(test), allow(dead_code))]
mod gnuacct;
mod hostcheck;
mod hosttest;
mod lab;
mod layers;
mod lint;
mod linuxbench;
mod profile;
mod prstat_rows;
mod qemu;
mod scenario;
mod test;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Build, run and test the Tally kernel")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options that choose which kernel is built.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct BuildOpts {
    /// Build with optimisations (the `release` profile).
    #[arg(long)]
    pub release: bool,
    /// Timer tick rate in Hz, 19 to 10000, fixed at build time (default 1000).
    #[arg(long, value_parser = parse_hz)]
    pub hz: Option<u32>,
    /// Build without microstate accounting (the kernel's `accounting` feature off).
    #[arg(long)]
    pub no_accounting: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Build everything and boot the kernel in QEMU with the serial console on this terminal.
    Run {
        #[command(flatten)]
        build: BuildOpts,
        /// Start QEMU halted, waiting for gdb on localhost:1234.
        #[arg(long)]
        gdb: bool,
        /// Kill QEMU after this many seconds (0 = never).
        #[arg(long, default_value_t = 0)]
        timeout: u64,
        /// Deterministic time: guest time advances with executed instructions.
        #[arg(long)]
        icount: bool,
        /// Kernel command line, e.g. "test=heap loglevel=debug".
        #[arg(long, default_value = "")]
        cmdline: String,
        /// Type this file on the console once the kernel is ready, then ^D (end of input).
        /// Without it, a standard input that is not a terminal is forwarded line by line,
        /// then ^D (so `cargo xtask run < /dev/null` sends just the end of input).
        #[arg(long, value_name = "FILE")]
        script: Option<std::path::PathBuf>,
        /// Where the guest's second serial port (COM2, /dev/ttyS1) is written
        /// (default target/tally/ttyS1.bin); read it with `cargo xtask decode FILE`.
        #[arg(long, value_name = "FILE")]
        capture: Option<std::path::PathBuf>,
        /// Use this file as the accounting disk (/var) and keep it across runs: created from
        /// the template if missing. Without it each run gets a fresh copy, target/tally/acct.img.
        #[arg(long, value_name = "FILE")]
        acct_disk: Option<std::path::PathBuf>,
        /// Put this host program into the ramdisk as /bin/NAME (default: the file's name);
        /// repeatable. A static Linux executable (`musl-gcc -static`) runs unmodified. NAME
        /// may not be a program Tally already has (see xtask/src/cprogs.rs).
        #[arg(long = "add", value_name = "FILE[:NAME]", value_parser = cprogs::parse_added)]
        added: Vec<cprogs::Added>,
    },
    /// Run host unit tests and every QEMU scenario in tests/.
    Test {
        /// Only run tests whose name contains this.
        filter: Option<String>,
        #[command(flatten)]
        build: BuildOpts,
        /// Parallel QEMU instances (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Skip the host unit tests.
        #[arg(long)]
        no_host: bool,
        /// List the QEMU scenarios with their descriptions instead of running anything.
        #[arg(long)]
        list: bool,
    },
    /// Run the in-kernel benchmarks, accounting compiled in and out, side by side.
    Bench {
        /// Only run benchmarks whose name contains this.
        filter: Option<String>,
        /// Measure real (TCG) time instead of instruction-count time (-icount): noisier.
        #[arg(long)]
        no_icount: bool,
        /// Where to save the results (default target/tally/bench.json).
        #[arg(long)]
        json: Option<std::path::PathBuf>,
        /// Also run the same operations on Debian's Linux kernel (`apt-get download
        /// linux-image-amd64`, a static C peer built with gcc) in the same QEMU, side by side.
        #[arg(long)]
        linux: bool,
    },
    /// Instructions per function of one operation of a ring-3 micro-benchmark (`ubench WHAT`),
    /// from a QEMU instruction log of its loop on the release kernel.
    Profile {
        /// The benchmark: getpid, msa, tsget or ctx (one hop of the 2-process pipe ring).
        what: String,
        /// Profile the kernel built without microstate accounting.
        #[arg(long)]
        no_accounting: bool,
        /// Operations in the logged loop.
        #[arg(long, default_value_t = 40)]
        iters: u64,
    },
    /// Print a capture of bus datagrams (e.g. `getdelays -w /dev/ttyS1`) as text.
    Decode {
        /// The capture: netlink messages as received, one after another.
        file: std::path::PathBuf,
    },
    /// Read an accounting disk (the guest's /var) on the host: list, print and decode its files.
    Acct {
        /// The disk image: target/tally/acct.img after `cargo xtask run`, or an --acct-disk FILE.
        image: std::path::PathBuf,
        #[command(subcommand)]
        what: acct::AcctCmd,
    },
    /// Coursework labs: list, export a starting point, hand in, and CI's check of every lab.
    Lab {
        #[command(subcommand)]
        what: lab::LabCmd,
    },
    /// Grade lab N on this tree: one line per rubric item, `Score: N/85`, JSON results;
    /// exits 0 on full marks, 1 otherwise, 2 if the graders' files were changed.
    Grade {
        lab: u32,
        /// Official grading: the hand-out's graders' files restored, only the lab's files taken
        /// from the hand-in, a secret proptest seed, more cases, a second tick rate, each
        /// QEMU item three times.
        #[arg(long)]
        official: bool,
        /// With --official: the hand-in archive (`cargo xtask lab handin`) instead of this tree.
        #[arg(long, value_name = "FILE", requires = "official")]
        handin: Option<std::path::PathBuf>,
        /// Where to write the JSON results (default target/tally/grade-NN.json).
        #[arg(long, value_name = "FILE")]
        results: Option<std::path::PathBuf>,
        /// The proptest seed (an official run picks a secret one).
        #[arg(long, hide = true)]
        seed: Option<u64>,
        #[arg(long, hide = true)]
        cases: Option<u32>,
        #[arg(long, hide = true, default_value_t = 1)]
        repeat: u32,
        #[arg(long, hide = true)]
        second_hz: Option<u32>,
        #[arg(long, hide = true)]
        timeout_cap: Option<u64>,
        #[arg(long, hide = true)]
        all_items: bool,
        #[arg(long, hide = true)]
        restored: bool,
    },
    /// Show the kernel's floors, which module calls which, and any call that goes up a floor.
    Layers,
    /// Check formatting (rustfmt), lints (clippy, warnings denied) and the kernel's floors.
    Lint,
    /// Build the kernel and the boot image only.
    Build {
        #[command(flatten)]
        build: BuildOpts,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run { build, gdb, timeout, icount, cmdline, script, capture, acct_disk, added } => {
            let opts = RunOpts { gdb, timeout, icount, cmdline, script, capture, acct_disk, added };
            run(&build, &opts)
        }
        Command::Profile { what, no_accounting, iters } => profile::run(&what, no_accounting, iters),
        Command::Decode { file } => decode::run(&file),
        Command::Acct { image, what } => acct::run(&image, &what),
        Command::Lint => lint::run(),
        Command::Lab { what } => lab::run(&what),
        Command::Grade { lab, official: true, handin, results, seed, .. } => {
            lab::grade::official(lab, handin.as_deref(), results, seed)
        }
        Command::Grade { lab, results, seed, cases, repeat, second_hz, timeout_cap, all_items, restored, .. } => {
            let rigour = lab::grade::Rigour { timeout_cap, all_items, seed, cases, repeat, second_hz };
            lab::grade::grade(&lab::grade::GradeArgs { lab, results, rigour, restored })
        }
        Command::Layers => Ok(if layers::print(&build::root()) { ExitCode::SUCCESS } else { ExitCode::FAILURE }),
        Command::Test { list: true, .. } => test::list(),
        Command::Test { filter, build, jobs, no_host, .. } => test::run(filter.as_deref(), &build, jobs, no_host),
        Command::Bench { filter, no_icount, json, linux } => bench::run(filter.as_deref(), !no_icount, json, linux),
        Command::Build { build } => build::image(&build).map(|img| {
            println!("{}", img.display());
            ExitCode::SUCCESS
        }),
    };
    result.unwrap_or_else(|e| {
        eprintln!("xtask: {e}");
        ExitCode::FAILURE
    })
}

/// `--hz N`: a number within the kernel's range ([`build::HZ_RANGE`]).
fn parse_hz(s: &str) -> Result<u32, String> {
    let (lo, hi) = (build::HZ_RANGE.start(), build::HZ_RANGE.end());
    match s.parse::<u32>() {
        Ok(hz) if build::HZ_RANGE.contains(&hz) => Ok(hz),
        _ => Err(format!(
            "the tick rate must be a number of Hz within {lo}..={hi} (the PIT cannot tick slower than {lo} Hz)"
        )),
    }
}

/// `cargo xtask run`'s options besides the build's.
struct RunOpts {
    gdb: bool,
    timeout: u64,
    icount: bool,
    cmdline: String,
    script: Option<std::path::PathBuf>,
    capture: Option<std::path::PathBuf>,
    acct_disk: Option<std::path::PathBuf>,
    added: Vec<cprogs::Added>,
}

fn run(opts: &BuildOpts, run: &RunOpts) -> Result<ExitCode, String> {
    let RunOpts { gdb, timeout, icount, ref cmdline, ref script, ref capture, ref acct_disk, ref added } = *run;
    for a in added {
        if !a.file.is_file() {
            return Err(format!("--add {}: no such file", a.file.display()));
        }
    }
    let script = match script {
        Some(p) => Some(std::fs::read(p).map_err(|e| format!("cannot read the script {}: {e}", p.display()))?),
        None => None,
    };
    qemu::ensure_installed()?;
    let image = build::image_with(opts, added)?;
    // COM2 is always attached (a program may write to /dev/ttyS1 without being asked); only
    // an explicit --capture makes an empty capture worth a word at the end.
    let asked = capture.is_some();
    let capture = capture.clone().unwrap_or_else(|| build::target_dir().join("tally").join("ttyS1.bin"));
    if let Some(dir) = capture.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let disk = match acct_disk {
        Some(path) => acctdisk::Disk::keep(path)?,
        None => acctdisk::Disk::fresh_at(&build::target_dir().join("tally").join("acct.img"))?,
    };
    let mut q = qemu::Qemu::new(&image, disk.path())
        .cmdline(cmdline)
        .icount(icount)
        .input(qemu::Input::for_run(script))
        .capture(&capture);
    if gdb {
        q = q.gdb();
        println!("QEMU is waiting for a debugger. In another terminal:");
        println!(
            "  gdb -ex 'target remote :1234' -ex 'symbol-file -o {:#x} {}'",
            build::KERNEL_BASE,
            build::kernel_elf(opts).display()
        );
    }
    let status = q.run_interactive(timeout)?;
    eprintln!(
        "xtask: the accounting disk (/var) is {}; `cargo xtask acct {} ls /var/account` lists it",
        disk.path().display(),
        disk.path().display()
    );
    match std::fs::metadata(&capture) {
        Ok(m) if m.len() > 0 => eprintln!(
            "xtask: the second serial port (guest /dev/ttyS1) was captured in {} ({} bytes); \
             `cargo xtask decode {}` prints it",
            capture.display(),
            m.len(),
            capture.display()
        ),
        _ if asked => eprintln!(
            "xtask: nothing was written to the second serial port (guest /dev/ttyS1); capture file {}",
            capture.display()
        ),
        _ => {}
    }
    Ok(match status {
        qemu::Status::Success => ExitCode::SUCCESS,
        qemu::Status::Failure => {
            eprintln!(
                "xtask: the kernel reported failure (a panic, a fault, a failed self-test or pid 1 killed by a \
                 signal: its last lines say which); exit status 1"
            );
            ExitCode::from(1)
        }
        qemu::Status::Exited(n) => {
            eprintln!("xtask: init (pid 1) ended with status {n}; exit status {n}");
            ExitCode::from(n)
        }
        qemu::Status::Timeout => {
            eprintln!("xtask: QEMU killed after {timeout} s (--timeout); exit status 124");
            ExitCode::from(124)
        }
        qemu::Status::Killed => {
            eprintln!("xtask: QEMU killed; exit status 2");
            ExitCode::from(2)
        }
        other @ qemu::Status::Other(_) => {
            eprintln!("xtask: the run ended with {other}; exit status 2");
            ExitCode::from(2)
        }
    })
}
