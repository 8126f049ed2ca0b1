//! `cargo xtask profile WHAT`: where the instructions of one benchmark operation go.
//!
//! The numbers in docs/microstate-accounting.md §9 and docs/taskstats.md "Costs" come from
//! here. The release kernel boots under QEMU with `-icount` and `-singlestep` (one guest
//! instruction per translation block), running `ubench --profile WHAT N` as init's command.
//! ubench prints `UBENCH START WHAT` just before its timed loop and waits for a line on the
//! console; this side then turns QEMU's execution log on through the monitor
//! (`log exec,nochain`; `nochain` is on from boot so no block is chained past the log) and
//! types the line. When the `BENCHRAW` line (printed after the loop) appears, the log is
//! turned off (`log none`) and QEMU is quit. So only the loop is logged, not the ~300M
//! instructions of boot.
//!
//! Each log line `Trace 0: 0x... [cs_base/PC/flags/cflags]` is one executed instruction
//! (one instruction per block). The log is cut into *iterations* at each entry of the
//! `syscall` instruction's handler (`tally_syscall_entry`), a fixed number of system calls
//! per operation ([`syscalls_per_op`]). Among the middle iterations (the first and last
//! quarter left out: warm-up, and the `BENCHRAW` line's own calls after the loop) the one of
//! median length is shown: its instruction count, and per function (found with `nm`: kernel
//! symbols at their ELF address + [`build::KERNEL_BASE`], ubench's at their own) how many
//! of its instructions ran there, the function's own ("self") count, not its callees'.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{build, qemu, BuildOpts};

/// The ubench modes that can be profiled, and how many system calls one operation makes.
pub fn syscalls_per_op(what: &str) -> Option<usize> {
    match what {
        "getpid" | "msa" => Some(1),
        "tsget" => Some(2), // sendto + recvfrom
        // One hop of the 2-process pipe ring: a `write` that wakes the peer, then this
        // process's blocking `read`, the switch, and the peer's `read` returning.
        "ctx" => Some(2),
        // A process's life: spawn, the child's run and exit, wait, the listener's reads;
        // no fixed count of calls, so the whole loop is shown, per operation.
        "exit0" | "exit1" => Some(0),
        _ => None,
    }
}

/// `ubench`'s arguments for profiling `what` over `iters` operations (the ring's size for
/// `ctx`).
fn ubench_args(what: &str, iters: u64) -> String {
    match what {
        "exit0" => format!("exit {iters} 0"),
        "exit1" => format!("exit {iters} 1"),
        "ctx" => format!("ctx {iters} 2"),
        _ => format!("{what} {iters}"),
    }
}

/// The kernel symbol every system call enters through.
const SYSCALL_ENTRY: &str = "tally_syscall_entry";

/// A symbol table: (address, name), sorted by address.
#[derive(Debug, Default)]
pub struct Symbols(Vec<(u64, String)>);

impl Symbols {
    /// From `nm -C --defined-only` output, keeping code symbols (t, T, w, W), each address
    /// moved by `base`.
    pub fn from_nm(text: &str, base: u64) -> Self {
        let mut v: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut p = l.splitn(3, ' ');
                let (addr, kind, name) = (p.next()?, p.next()?, p.next()?);
                if !matches!(kind, "t" | "T" | "w" | "W") {
                    return None;
                }
                Some((u64::from_str_radix(addr, 16).ok()?.wrapping_add(base), name.to_string()))
            })
            .collect();
        v.sort();
        Symbols(v)
    }

    /// The function containing `pc`: the nearest symbol at or below it.
    pub fn lookup(&self, pc: u64) -> Option<&str> {
        let i = self.0.partition_point(|(a, _)| *a <= pc);
        i.checked_sub(1).map(|i| self.0[i].1.as_str())
    }

    pub fn address(&self, name: &str) -> Option<u64> {
        self.0.iter().find(|(_, n)| n == name).map(|(a, _)| *a)
    }
}

/// The guest PCs of a QEMU `exec` log, one per `Trace` line, in order.
pub fn parse_pcs(log: impl BufRead) -> std::io::Result<Vec<u64>> {
    let mut pcs = Vec::new();
    for line in log.lines() {
        let line = line?;
        let Some(rest) = line.strip_prefix("Trace ") else { continue };
        // `0: 0x7f93dc000100 [0000000000000000/ffff800000051120/00c0c2b0/ff020201]`
        let pc =
            rest.split_once('[').and_then(|(_, f)| f.split('/').nth(1)).and_then(|pc| u64::from_str_radix(pc, 16).ok());
        if let Some(pc) = pc {
            pcs.push(pc);
        }
    }
    Ok(pcs)
}

/// Cut `pcs` into iterations: each starts at an execution of `entry` and holds `per_op`
/// system calls. What comes before the first entry, and an unfinished last iteration, are
/// dropped.
pub fn iterations(pcs: &[u64], entry: u64, per_op: usize) -> Vec<&[u64]> {
    let starts: Vec<usize> = pcs.iter().enumerate().filter(|(_, &pc)| pc == entry).map(|(i, _)| i).collect();
    starts
        .iter()
        .step_by(per_op.max(1))
        .zip(starts.iter().step_by(per_op.max(1)).skip(1))
        .map(|(&a, &b)| &pcs[a..b])
        .collect()
}

/// Which iteration to show: of the first `ops` (the loop's), leave out the first and last
/// quarter, and take the one of median length among the rest.
pub fn pick_median(lens: &[usize], ops: usize) -> Option<usize> {
    let n = lens.len().min(ops);
    let (lo, hi) = if n >= 4 { (n / 4, n - n / 4) } else { (0, n) };
    let mut middle: Vec<usize> = (lo..hi).collect();
    middle.sort_by_key(|&i| (lens[i], i));
    middle.get(middle.len().checked_sub(1)? / 2).copied()
}

/// Instructions per function in `seg`, most first (ties by name): kernel functions
/// (`pc >= kbase`) prefixed `K `, user ones `U `, unknown addresses `?`.
pub fn attribute(seg: &[u64], kernel: &Symbols, user: &Symbols, kbase: u64) -> Vec<(String, usize)> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut cache: HashMap<u64, String> = HashMap::new();
    for &pc in seg {
        let name = cache.entry(pc).or_insert_with(|| {
            let (prefix, syms) = if pc >= kbase { ("K", kernel) } else { ("U", user) };
            format!("{prefix} {}", syms.lookup(pc).unwrap_or("?"))
        });
        *counts.entry(name.clone()).or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// `nm -C --defined-only ELF` as a symbol table.
fn nm(elf: &Path, base: u64) -> Result<Symbols, String> {
    let out = Command::new("nm")
        .args(["-C", "--defined-only"])
        .arg(elf)
        .output()
        .map_err(|e| format!("cannot run nm ({e}): install binutils (apt-get install binutils)"))?;
    if !out.status.success() {
        return Err(format!("nm {} failed: {}", elf.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(Symbols::from_nm(&String::from_utf8_lossy(&out.stdout), base))
}

/// QEMU's human monitor on a unix socket: send a command, wait for the next prompt.
struct Monitor(UnixStream);

impl Monitor {
    fn connect(path: &Path) -> Result<Self, String> {
        let start = Instant::now();
        let stream = loop {
            match UnixStream::connect(path) {
                Ok(s) => break s,
                Err(e) if start.elapsed() > Duration::from_secs(10) => {
                    return Err(format!("cannot connect to QEMU's monitor at {}: {e}", path.display()))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
        let mut m = Monitor(stream);
        m.prompt()?; // the banner
        Ok(m)
    }

    fn prompt(&mut self) -> Result<(), String> {
        let mut seen = Vec::new();
        let mut buf = [0u8; 512];
        while !seen.windows(7).any(|w| w == b"(qemu) ") {
            let n = self.0.read(&mut buf).map_err(|e| format!("QEMU's monitor: {e}"))?;
            if n == 0 {
                return Err("QEMU's monitor closed".into());
            }
            seen.extend_from_slice(&buf[..n]);
        }
        Ok(())
    }

    fn send(&mut self, cmd: &str) -> Result<(), String> {
        self.0.write_all(format!("{cmd}\n").as_bytes()).map_err(|e| format!("QEMU's monitor: {e}"))?;
        self.prompt()
    }
}

/// Boot, log the loop of `ubench --profile WHAT iters` into `log`; returns the console text.
fn trace(image: &Path, what: &str, iters: u64, log: &Path) -> Result<String, String> {
    let dir = log.parent().expect("log in a directory");
    let sock = dir.join(format!("profile-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&sock);
    let _ = std::fs::remove_file(log);
    let disk = crate::acctdisk::Disk::fresh("profile")?;
    let q = qemu::Qemu::new(image, disk.path())
        .cmdline(&format!("demo=off -- ubench --profile {}", ubench_args(what, iters)))
        .icount(true)
        .monitor(&sock)
        // QEMU 7.2 spells one instruction per block `-singlestep` (later: one-insn-per-tb).
        .args(&["-singlestep", "-d", "nochain", "-D", &log.display().to_string()]);
    let mut child = q
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start qemu-system-x86_64: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line.trim_end().to_string()).is_err() {
                break;
            }
        }
    });
    let result = (|| {
        let mut console = String::new();
        let mut mon = Monitor::connect(&sock)?;
        let mut wait_for = |prefix: &str, secs: u64| -> Result<(), String> {
            let deadline = Instant::now() + Duration::from_secs(secs);
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match rx.recv_timeout(left) {
                    Ok(line) => {
                        console.push_str(&line);
                        console.push('\n');
                        if line.starts_with(prefix) {
                            return Ok(());
                        }
                    }
                    Err(e) => {
                        let tail: Vec<&str> = console.lines().rev().take(15).collect();
                        let why = if matches!(e, mpsc::RecvTimeoutError::Timeout) { "timed out" } else { "QEMU ended" };
                        return Err(format!(
                            "no `{prefix}` line from the guest ({why}); last console lines:\n{}",
                            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                        ));
                    }
                }
            }
        };
        wait_for("UBENCH START", 180)?;
        mon.send("log exec,nochain")?;
        stdin.write_all(b"\n").and_then(|()| stdin.flush()).map_err(|e| format!("cannot type to the guest: {e}"))?;
        wait_for("BENCHRAW", 120)?;
        mon.send("log none")?;
        let _ = mon.0.write_all(b"quit\n");
        Ok(console)
    })();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();
    let _ = std::fs::remove_file(&sock);
    result
}

pub fn run(what: &str, no_accounting: bool, iters: u64) -> Result<ExitCode, String> {
    let per_op = syscalls_per_op(what)
        .ok_or_else(|| format!("cannot profile {what:?}: choose getpid, msa, tsget, ctx, exit0 or exit1"))?;
    if iters < 4 {
        return Err("--iters must be at least 4".into());
    }
    qemu::ensure_installed()?;
    Command::new("nm").arg("--version").output().map_err(|e| format!("nm not found ({e}): install binutils"))?;
    let opts = BuildOpts { release: true, hz: None, no_accounting };
    let image = build::image(&opts)?;
    let ubench = build::userland(&opts)?
        .into_iter()
        .find(|(name, _)| name == "ubench")
        .map(|(_, elf)| elf)
        .ok_or("the user programs have no ubench")?;
    let kernel = nm(&build::kernel_elf(&opts), build::KERNEL_BASE)?;
    let user = nm(&ubench, 0)?;
    let entry = kernel.address(SYSCALL_ENTRY).ok_or_else(|| format!("the kernel ELF has no symbol {SYSCALL_ENTRY}"))?;

    let variant = if no_accounting { "-noacct" } else { "" };
    let log: PathBuf = build::target_dir().join("tally").join(format!("profile-{what}{variant}.log"));
    let label = if no_accounting { "accounting compiled out" } else { "accounting compiled in" };
    eprintln!("profile: tracing `ubench {what} {iters}` ({label}) with one instruction per block...");
    let console = trace(&image, what, iters, &log)?;
    let file = std::fs::File::open(&log).map_err(|e| format!("QEMU wrote no log {}: {e}", log.display()))?;
    let pcs = parse_pcs(BufReader::new(file)).map_err(|e| format!("cannot read {}: {e}", log.display()))?;
    if pcs.is_empty() {
        return Err(format!("the log {} holds no executed instructions (is `log exec` supported?)", log.display()));
    }
    if per_op == 0 {
        // The whole loop, per operation (see `syscalls_per_op`).
        let rows = attribute(&pcs, &kernel, &user, build::KERNEL_BASE);
        if let Some(raw) = console.lines().find(|l| l.starts_with("BENCHRAW ")) {
            println!("{raw}");
        }
        let per = |n: usize| n as f64 / iters as f64;
        println!(
            "ubench {what} ({label}): {} instructions in {iters} operations, {:.1} per operation",
            pcs.len(),
            per(pcs.len())
        );
        println!("{:>9} {:>6}  function (instructions per operation)", "instr", "%");
        for (name, n) in &rows {
            println!("{:>9.1} {:>5.1}%  {name}", per(*n), *n as f64 * 100.0 / pcs.len() as f64);
        }
        println!("log: {}", log.display());
        return Ok(ExitCode::SUCCESS);
    }
    let iterations = iterations(&pcs, entry, per_op);
    if iterations.len() < 4 {
        return Err(format!(
            "only {} iterations in {} ({} instructions; {SYSCALL_ENTRY} at {entry:#x}: kernel base {:#x} wrong?)",
            iterations.len(),
            log.display(),
            pcs.len(),
            build::KERNEL_BASE
        ));
    }
    let lens: Vec<usize> = iterations.iter().map(|s| s.len()).collect();
    // `ctx 2` passes the token twice per round: two hops (iterations) per loop turn.
    let ops = iters as usize * if what == "ctx" { 2 } else { 1 };
    let i = pick_median(&lens, ops).expect("at least 4 iterations");
    let rows = attribute(iterations[i], &kernel, &user, build::KERNEL_BASE);

    if let Some(raw) = console.lines().find(|l| l.starts_with("BENCHRAW ")) {
        println!("{raw}");
    }
    let mut sorted = lens[..lens.len().min(ops)].to_vec();
    sorted.sort();
    println!(
        "{} instructions logged, {} iterations of {per_op} system call(s); lengths min {} / median {} / max {}",
        pcs.len(),
        iterations.len(),
        sorted[0],
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1]
    );
    println!("ubench {what} ({label}): iteration {i}, {} instructions", lens[i]);
    println!("{:>6} {:>6}  function", "instr", "%");
    for (name, n) in &rows {
        println!("{n:>6} {:>5.1}%  {name}", *n as f64 * 100.0 / lens[i] as f64);
    }
    println!("log: {}", log.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB: u64 = 0xffff_8000_0000_0000;

    fn syms() -> (Symbols, Symbols) {
        let k = Symbols::from_nm(
            "0000000000001000 T tally_syscall_entry\n\
             0000000000001100 t tally_kernel::syscall::process::getpid\n\
             0000000000002000 b SOME_DATA\n\
             0000000000001200 T tally_kernel::ret\n",
            KB,
        );
        let u = Symbols::from_nm("0000000000201000 T ubench::main\n0000000000201800 T tally_rt::sys::getpid\n", 0);
        (k, u)
    }

    #[test]
    fn parses_trace_lines_only() {
        let log = "IN: \n\
                   Trace 0: 0x7f93dc000100 [0000000000000000/ffff800000051120/00c0c2b0/ff020201] \n\
                   Stopped execution of TB chain before 0x7f93dc000100\n\
                   Trace 0: 0x7f93dc000280 [0000000000000000/0000000000201004/00c0c2b0/ff020201] ubench::main\n";
        assert_eq!(parse_pcs(log.as_bytes()).unwrap(), vec![0xffff_8000_0005_1120, 0x20_1004]);
    }

    #[test]
    fn symbols_lookup_and_data_ignored() {
        let (k, u) = syms();
        assert_eq!(k.address("tally_syscall_entry"), Some(KB + 0x1000));
        assert_eq!(k.lookup(KB + 0x1105), Some("tally_kernel::syscall::process::getpid"));
        assert_eq!(k.lookup(KB + 0x2005), Some("tally_kernel::ret")); // data symbols skipped
        assert_eq!(k.lookup(KB + 0xfff), None);
        assert_eq!(u.lookup(0x20_1900), Some("tally_rt::sys::getpid"));
    }

    #[test]
    fn splits_at_entry_drops_prefix_and_tail() {
        let e = 100;
        let pcs = [1, 2, e, 3, 4, e, 5, e, 6, 7, 8, e, 9];
        let it = iterations(&pcs, e, 1);
        assert_eq!(it, vec![&[e, 3, 4][..], &[e, 5][..], &[e, 6, 7, 8][..]]);
        // Two system calls per operation: entries pair up from the first.
        let it = iterations(&pcs, e, 2);
        assert_eq!(it, vec![&[e, 3, 4, e, 5][..]]);
        assert!(iterations(&[1, 2, 3], e, 1).is_empty());
    }

    #[test]
    fn median_of_the_middle_iterations() {
        // 8 loop iterations then 2 after the loop: only indices 2..6 are candidates.
        let lens = [900, 500, 10, 12, 11, 40, 1, 1000, 5000, 5000];
        assert_eq!(pick_median(&lens, 8), Some(4)); // sorted middle: 10, 11, 12, 40 -> 11
        assert_eq!(pick_median(&[7, 8], 2), Some(0));
        assert_eq!(pick_median(&[], 3), None);
    }

    #[test]
    fn attributes_kernel_and_user_self_counts() {
        let (k, u) = syms();
        let seg = [KB + 0x1000, KB + 0x1004, KB + 0x1100, KB + 0x1108, KB + 0x110c, 0x20_1010, 0x20_1810, 0x10];
        let rows = attribute(&seg, &k, &u, KB);
        assert_eq!(
            rows,
            vec![
                ("K tally_kernel::syscall::process::getpid".to_string(), 3),
                ("K tally_syscall_entry".to_string(), 2),
                ("U ?".to_string(), 1),
                ("U tally_rt::sys::getpid".to_string(), 1),
                ("U ubench::main".to_string(), 1),
            ]
        );
    }
}
