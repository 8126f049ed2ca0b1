//! `sh` — a line shell on the console: reads commands on standard input and runs them.
//!
//! ```text
//! $ hello a b              run /bin/hello, wait for it
//! $ spin 500 &             run it in the background: prints its pid, does not wait
//! $ wait                   wait for every background job
//! $ exit 3                 leave with status 3 (without N: the last command's status)
//! $ hello a > /var/tmp/x   standard output to a file (created or truncated); >> appends
//! $ # a comment            blank lines and comments are ignored
//! $ help                   the builtins, and the programs of /bin
//! ```
//!
//! A command is words separated by blanks (no quoting, no variables): the first word names
//! a program of the ramdisk (`hello` is `/bin/hello`), the whole list is its `argv`.
//!
//! **Redirection.** `> FILE` (or `>FILE`) sends the command's standard output to FILE,
//! created or truncated; `>> FILE` appends. The shell does what the first Unix shells did
//! before there was a `dup2` (Tally has one now; this way needs no spare descriptor): it
//! closes its own descriptor 1 and opens FILE, which the kernel then gives the lowest free
//! number — 1 — and spawns the command, which inherits its descriptors; then it closes 1
//! again and reopens `/dev/console` there.
//! (A builtin's output, `echo`'s, is redirected the same way.) A FILE that cannot be opened
//! is reported as `sh: FILE: REASON` and the command does not run (status 1). Tally has no `fork`/`exec`: the shell starts a child with one `spawn` and
//! collects it with `wait4`, whose status says how it ended. A command that ends badly is
//! reported as `[pid] exited N` or `[pid] killed by SIGSEGV (11)`; one that exits with 0
//! silently, as in any shell. A background job is reported when it ends, before the next
//! prompt (or by `wait`). The status of a command, as `$?` would show it, is its exit code,
//! 128 + the signal that killed it, 127 for a program that does not exist and 126 for one
//! that cannot be started.
//!
//! **The console.** The kernel's tty has a line discipline (Linux's `n_tty` in canonical
//! mode, `docs/console.md`): it echoes what is typed, handles backspace/DEL, `^U` and `^W`,
//! and hands over whole lines. So the shell only reads: each `read` of the console returns
//! at most one line, and the shell reads until the line's newline (a line may come in
//! pieces: a long one, or `hel` handed over by `^D` mid-line, which the rest of the line
//! then completes). The bytes after the current line stay in the kernel for whoever reads
//! next, so `io -r 100` in a script reads the script's next lines, not bytes the shell kept.
//! Input from a script is echoed as each line is read, so it appears after its prompt.
//!
//! **The end.** On a terminal, `^D` at the start of a line is end of input: the kernel's
//! `read` returns 0. The shell then exits with the status of the last command — the way
//! `cargo xtask run --script FILE` (which sends the file, then `^D`) gets a script's
//! verdict. A program that reads standard input to its end swallows that `^D`: end such a
//! script with `exit`. `exit abc` and `exit 1 2` are errors, in bash's words (`exit: abc:
//! numeric argument required`, status 2; `exit: too many arguments`, status 1), and the
//! shell stays: bash leaves after the first, but this shell is the console's, and leaving
//! would end the machine over a typo.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use tally_rt::process::{exit_code, exited, parse_i64, signal_name, spawn_command, term_signal};
use tally_rt::uapi::errno::{ECHILD, EINTR, ENOENT};
use tally_rt::uapi::syscall::WNOHANG;
use tally_rt::{eprintln, print, println, sys, Errno};

tally_rt::entry!(main);

const PROMPT: &str = "$ ";

/// Status of a command that does not exist, and of one that cannot be started (POSIX).
const NOT_FOUND: i32 = 127;
const CANNOT_RUN: i32 = 126;

struct Shell {
    /// `$?`: the status of the last command.
    last: i32,
    /// Background jobs not yet reported: pid and command text.
    jobs: Vec<(usize, String)>,
}

enum Line {
    /// A line (without its newline); the flag says whether input ended right after it.
    Text(String, bool),
    /// End of input with nothing pending.
    Eof,
}

fn main() -> i32 {
    let mut sh = Shell { last: 0, jobs: Vec::new() };
    loop {
        sh.report_finished_jobs();
        print!("{PROMPT}");
        let (text, eof) = match read_line() {
            Ok(Line::Text(t, eof)) => (t, eof),
            Ok(Line::Eof) => {
                println!();
                return sh.last;
            }
            Err(e) => {
                println!();
                eprintln!("sh: read: {e}");
                return 1;
            }
        };
        if let Some(code) = sh.run_line(&text) {
            return code;
        }
        if eof {
            return sh.last;
        }
    }
}

/// Reads one line from standard input: the kernel's line discipline has edited and echoed
/// it, and a read returns at most one line (see the module comment).
fn read_line() -> Result<Line, Errno> {
    let mut line: Vec<u8> = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        match sys::read(0, &mut buf) {
            // End of input: `^D` at the start of a line (after `hel^D`, the second `^D`).
            Ok(0) => {
                return Ok(if line.is_empty() {
                    Line::Eof
                } else {
                    println!();
                    Line::Text(String::from_utf8_lossy(&line).into_owned(), true)
                });
            }
            Ok(n) => line.extend_from_slice(&buf[..n]),
            Err(e) if e.0 == EINTR => continue,
            Err(e) => return Err(e),
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            return Ok(Line::Text(String::from_utf8_lossy(&line).into_owned(), false));
        }
    }
}

impl Shell {
    /// Runs one line. `Some(code)`: the shell must exit with `code`.
    fn run_line(&mut self, text: &str) -> Option<i32> {
        let mut words: Vec<&str> = text.split_whitespace().take_while(|w| !w.starts_with('#')).collect();
        // A trailing `&`, alone or stuck to the last word, means "in the background".
        let mut background = false;
        if let Some(last) = words.last_mut() {
            if let Some(stripped) = last.strip_suffix('&') {
                background = true;
                *last = stripped;
                if stripped.is_empty() {
                    words.pop();
                }
            }
        }
        let redirect = match take_redirect(&mut words) {
            Ok(r) => r,
            Err(msg) => {
                eprintln!("sh: syntax error: {msg}");
                self.last = 2;
                return None;
            }
        };
        let Some(&cmd) = words.first() else {
            if background {
                eprintln!("sh: syntax error: '&' without a command");
                self.last = 2;
            }
            return None;
        };
        let stdout = match redirect.map(Redirect::apply).transpose() {
            Ok(guard) => guard,
            Err((path, e)) => {
                eprintln!("sh: {path}: {}", e.strerror());
                self.last = 1;
                return None;
            }
        };
        match cmd {
            "exit" => match self.exit_code(&words) {
                Ok(code) => return Some(code),
                Err(status) => self.last = status,
            },
            "wait" => self.wait_builtin(&words),
            "help" => {
                help();
                self.last = 0;
            }
            "echo" => {
                println!("{}", words[1..].join(" "));
                self.last = 0;
            }
            _ => self.spawn(&words, background, stdout),
        }
        None
    }

    /// Starts `words`; `stdout` (a redirection) is undone as soon as the child has its copy
    /// of the descriptors, so the shell's own messages go to the console.
    fn spawn(&mut self, words: &[&str], background: bool, stdout: Option<StdoutToFile>) {
        let text = words.join(" ");
        let started = spawn_command(words);
        drop(stdout);
        let pid = match started {
            Ok(pid) => pid,
            Err(e) => {
                eprintln!("sh: {}: {e}", words[0]);
                self.last = if e.0 == ENOENT { NOT_FOUND } else { CANNOT_RUN };
                return;
            }
        };
        if background {
            println!("[{pid}] {text} &");
            self.jobs.push((pid, text));
            self.last = 0;
            return;
        }
        match wait_pid(pid, 0) {
            Ok(Some(status)) => {
                self.last = status_code(status);
                if self.last != 0 {
                    report(pid, status);
                }
            }
            Ok(None) => {} // only with WNOHANG
            Err(e) => {
                eprintln!("sh: wait4({pid}): {e}");
                self.last = 1;
            }
        }
    }

    /// `exit [N]`: `Ok` with N (modulo 256, as a process status is 8 bits), or the last
    /// status. A bad argument is an error and the shell stays (see [`exit_args`]): `Err` with
    /// the status the builtin leaves in `$?`.
    fn exit_code(&self, words: &[&str]) -> Result<i32, i32> {
        exit_args(&words[1..], self.last).map_err(|(msg, status)| {
            eprintln!("sh: exit: {msg}");
            status
        })
    }

    /// `wait`: every background job (status 0); `wait PID`: that one (its status).
    fn wait_builtin(&mut self, words: &[&str]) {
        let wanted: Vec<usize> = match words.get(1) {
            None => self.jobs.iter().map(|(p, _)| *p).collect(),
            Some(p) => match tally_rt::process::parse_u64(p).and_then(|p| usize::try_from(p).ok()) {
                Some(pid) => alloc::vec![pid],
                None => {
                    eprintln!("sh: wait: {p}: not a pid");
                    self.last = 2;
                    return;
                }
            },
        };
        let mut last = 0;
        for pid in wanted {
            match wait_pid(pid, 0) {
                Ok(Some(status)) => {
                    self.jobs.retain(|(p, _)| *p != pid);
                    report(pid, status);
                    last = status_code(status);
                }
                Ok(None) => {}
                Err(e) if e.0 == ECHILD => {
                    eprintln!("sh: wait: pid {pid} is not a child of this shell");
                    self.jobs.retain(|(p, _)| *p != pid);
                    last = NOT_FOUND;
                }
                Err(e) => {
                    eprintln!("sh: wait4({pid}): {e}");
                    last = 1;
                }
            }
        }
        // POSIX: `wait` without operands returns 0; with a pid, that job's status.
        self.last = if words.len() > 1 { last } else { 0 };
    }

    /// Reports (and reaps) the background jobs that have ended, without waiting.
    fn report_finished_jobs(&mut self) {
        let mut i = 0;
        while i < self.jobs.len() {
            let pid = self.jobs[i].0;
            match wait_pid(pid, WNOHANG) {
                Ok(Some(status)) => {
                    report(pid, status);
                    self.jobs.remove(i);
                }
                Ok(None) => i += 1,
                Err(e) => {
                    eprintln!("sh: wait4({pid}): {e}");
                    self.jobs.remove(i);
                }
            }
        }
    }
}

/// What `exit ARGS` does, as bash words it: `Ok(code)` to leave with (`last` without an
/// argument); `Err((message, status))` for `exit abc` ("abc: numeric argument required",
/// status 2, as bash) and `exit 1 2` ("too many arguments", status 1, as bash, which stays
/// then too). Unlike bash, which leaves with status 2 after the first, this shell stays:
/// it runs on the console as init's child, so leaving would end the machine over a typo.
fn exit_args(args: &[&str], last: i32) -> Result<i32, (String, i32)> {
    match args {
        [] => Ok(last),
        [n] => match parse_i64(n) {
            Some(v) => Ok((v & 0xff) as i32),
            None => Err((alloc::format!("{n}: numeric argument required"), 2)),
        },
        _ => Err((String::from("too many arguments"), 1)),
    }
}

/// `> FILE` or `>> FILE` of a command line.
struct Redirect<'a> {
    path: &'a str,
    append: bool,
}

/// Takes a `>`/`>>` and its FILE out of `words` (the last one given wins, as in `sh`).
fn take_redirect<'a>(words: &mut Vec<&'a str>) -> Result<Option<Redirect<'a>>, &'static str> {
    let mut found = None;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let (append, rest) = match (w.strip_prefix(">>"), w.strip_prefix('>')) {
            (Some(r), _) => (true, r),
            (None, Some(r)) => (false, r),
            (None, None) => {
                i += 1;
                continue;
            }
        };
        words.remove(i);
        let path = if rest.is_empty() {
            if i >= words.len() {
                return Err("'>' without a file");
            }
            words.remove(i)
        } else {
            rest
        };
        found = Some(Redirect { path, append });
    }
    Ok(found)
}

/// While it lives, descriptor 1 is the redirection's file; dropping it puts the console back.
struct StdoutToFile;

impl Redirect<'_> {
    /// Opens the file as descriptor 1 (see the module comment).
    fn apply(self) -> Result<StdoutToFile, (String, Errno)> {
        use tally_rt::uapi::fs::{O_APPEND, O_CREAT, O_TRUNC, O_WRONLY};
        let flags = O_WRONLY | O_CREAT | if self.append { O_APPEND } else { O_TRUNC };
        // Open it once elsewhere first, so that a file that cannot be opened leaves the
        // console where it is.
        let probe = sys::open(self.path, flags, 0o644).map_err(|e| (String::from(self.path), e))?;
        let _ = sys::close(probe);
        let _ = sys::close(1);
        match sys::open(self.path, flags, 0o644) {
            Ok(1) => Ok(StdoutToFile),
            Ok(fd) => {
                // Descriptor 1 was not the lowest free one (0 is closed): undo.
                let _ = sys::close(fd);
                restore_console();
                Err((String::from(self.path), Errno(tally_rt::uapi::errno::EBADF)))
            }
            Err(e) => {
                restore_console();
                Err((String::from(self.path), e))
            }
        }
    }
}

impl Drop for StdoutToFile {
    fn drop(&mut self) {
        let _ = sys::close(1);
        restore_console();
    }
}

/// Reopens the console as descriptor 1 (the lowest free one, 1 having just been closed).
fn restore_console() {
    let _ = sys::open("/dev/console", tally_rt::uapi::fs::O_WRONLY, 0);
}

/// `wait4(pid, &status, options)`, retrying after `EINTR`: `Ok(None)` if `WNOHANG` found
/// it still running.
fn wait_pid(pid: usize, options: usize) -> Result<Option<i32>, Errno> {
    loop {
        let mut status = 0;
        match sys::wait4(pid as isize, Some(&mut status), options, None) {
            Ok(0) => return Ok(None),
            Ok(_) => return Ok(Some(status)),
            Err(e) if e.0 == EINTR => continue,
            Err(e) => return Err(e),
        }
    }
}

/// `$?` for a wait status: the exit code, or 128 + the signal.
fn status_code(status: i32) -> i32 {
    if exited(status) {
        exit_code(status)
    } else {
        128 + term_signal(status)
    }
}

/// `[pid] exited N` or `[pid] killed by SIGSEGV (11)[, core flag]` (no core file is written).
fn report(pid: usize, status: i32) {
    if exited(status) {
        println!("[{pid}] exited {}", exit_code(status));
    } else {
        let sig = term_signal(status);
        let core = if tally_rt::uapi::wait::wcoredump(status) { ", core flag" } else { "" };
        println!("[{pid}] killed by {} ({sig}){core}", signal_name(sig));
    }
}

fn help() {
    println!("commands: PROGRAM [ARGS...] [&]   run /bin/PROGRAM (in the background with &)");
    println!("builtins: wait [PID]   wait for background jobs (or one)");
    println!("          exit [N]     leave with status N (default: the last command's)");
    println!("          echo WORDS   print the words");
    println!("          help         this text");
    println!("          CMD > FILE   standard output to FILE (>> FILE appends)");
    println!("blank lines and # comments are ignored; end of input (^D) exits like `exit`");
    programs();
}

/// The programs `PROGRAM` can name: the ramdisk's `/bin`, listed as `ls /bin` lists it,
/// in lines of at most 80 columns.
fn programs() {
    let names = match tally_rt::fs::read_dir(tally_rt::process::BIN_DIR) {
        Ok(entries) => entries,
        Err(e) => {
            eprintln!("sh: help: {}: {e}", tally_rt::process::BIN_DIR);
            return;
        }
    };
    let mut line = String::from("programs:");
    for e in names.iter().filter(|e| e.d_type != tally_rt::uapi::fs::DT_DIR) {
        if line.len() + 1 + e.name.len() > 80 {
            println!("{line}");
            line = String::from("         ");
        }
        line.push(' ');
        line.push_str(&e.name);
    }
    println!("{line}");
}
