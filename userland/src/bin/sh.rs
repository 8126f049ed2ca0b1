//! `sh` — a line shell on the console: reads commands on standard input and runs them.
//!
//! ```text
//! $ hello a b              run /bin/hello, wait for it
//! $ spin 500 &             run it in the background: prints its pid, does not wait
//! $ wait                   wait for every background job
//! $ jobs                   the job table: Running, Stopped, Done (^Z stops the foreground job)
//! $ fg %1                  job 1 to the foreground (continued if stopped); bg %1: in the background
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
//! **Job control** (POSIX's, as bash does it; `docs/job-control.md`). When the shell leads a
//! session (init starts it so) it takes the console as its controlling terminal
//! (`TIOCSCTTY`), ignores SIGINT, SIGQUIT, SIGTSTP, SIGTTIN and SIGTTOU, and runs each
//! command as a *job* in a process group of its own (`spawn`'s process-group attribute).
//! A foreground job's group is the console's foreground group while it runs (set by `spawn`
//! before the job can run, `SPAWN_TCSETPGRP`), so ^C, ^\ and ^Z reach it and not the shell;
//! the shell then waits with `WUNTRACED` and takes the console back (`tcsetpgrp`). A job
//! that stops (^Z, `kill -STOP`, or SIGTTIN for a background job reading the console) enters
//! the job table as "Stopped"; `jobs` lists it bash's way (`[1]+  Stopped                 spin
//! 10000`), `fg [%N]` makes it the foreground job and continues it (SIGCONT to its group), `bg
//! [%N]` continues it in the background. `%N` (or `N`), `%+`/`%%` (the current job, marked
//! `+`) and `%-` (the previous one, `-`) name jobs. Background jobs are still announced as
//! `[pid] text &` and reported by pid when they end. A shell that does not lead a session
//! and is not in the console's foreground group runs without job control, as before.
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
use tally_rt::process::{
    describe, exit_code, exited, parse_i64, shell_status, signal_name, spawn_command_attr, spawn_failure_status,
    term_signal,
};
use tally_rt::uapi::errno::{ECHILD, EINTR};
use tally_rt::uapi::signal::{SIGCONT, SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU};
use tally_rt::uapi::syscall::{POSIX_SPAWN_SETPGROUP, SPAWN_TCSETPGRP, WCONTINUED, WNOHANG, WUNTRACED};
use tally_rt::uapi::wait::{wifcontinued, wifstopped, wstopsig};
use tally_rt::{eprintln, print, println, sys, Errno};

tally_rt::entry!(main);

const PROMPT: &str = "$ ";

/// Status of a command that does not exist (POSIX; `wait` on a pid that is not a child
/// answers it too, as bash does).
const NOT_FOUND: i32 = 127;

struct Shell {
    /// `$?`: the status of the last command.
    last: i32,
    /// The job table: background and stopped jobs not yet reported as ended.
    jobs: Vec<Job>,
    /// The shell's process group, when job control is on (see the module comment).
    job_control: Option<usize>,
    /// Job numbers from the least to the most recently stopped or backgrounded: the last is
    /// the current job (`+`), the one before it the previous job (`-`).
    recency: Vec<usize>,
}

/// One job: a command in a process group of its own (its pid is the group's id).
struct Job {
    /// `%N`.
    num: usize,
    pid: usize,
    text: String,
    stopped: bool,
}

enum Line {
    /// A line (without its newline); the flag says whether input ended right after it.
    Text(String, bool),
    /// End of input with nothing pending.
    Eof,
}

fn main() -> i32 {
    let mut sh = Shell { last: 0, jobs: Vec::new(), job_control: start_job_control(), recency: Vec::new() };
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
            "jobs" => self.jobs_builtin(),
            "fg" | "bg" => self.fg_bg(&words),
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
        // With job control, a job of its own, made the foreground job before it can run.
        let flags = match (self.job_control, background) {
            (None, _) => 0,
            (Some(_), true) => POSIX_SPAWN_SETPGROUP,
            (Some(_), false) => POSIX_SPAWN_SETPGROUP | SPAWN_TCSETPGRP,
        };
        let started = spawn_command_attr(words, flags, 0);
        drop(stdout);
        let pid = match started {
            Ok(pid) => pid,
            Err(e) => {
                eprintln!("sh: {}: {e}", words[0]);
                self.last = spawn_failure_status(e);
                return;
            }
        };
        if background {
            println!("[{pid}] {text} &");
            self.add_job(pid, text, false);
            self.last = 0;
            return;
        }
        self.wait_foreground(pid, text, None);
    }

    /// Waits for the foreground job `pid` to end or stop (a stopped one joins the job table,
    /// as job `num` if it had one), then takes the console back.
    fn wait_foreground(&mut self, pid: usize, text: String, num: Option<usize>) {
        let options = if self.job_control.is_some() { WUNTRACED } else { 0 };
        match wait_pid(pid, options) {
            Ok(Some(status)) if wifstopped(status) => {
                self.last = 128 + wstopsig(status);
                let n = self.add_job_numbered(pid, text, true, num);
                println!();
                self.print_job(n);
            }
            Ok(Some(status)) => {
                self.last = shell_status(status);
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
        if let Some(pgid) = self.job_control {
            if let Err(e) = sys::tcsetpgrp(0, pgid) {
                eprintln!("sh: tcsetpgrp: {e}");
            }
        }
    }

    /// Enters a job in the table with the next free number (bash's: one more than the
    /// highest in use); returns its number.
    fn add_job(&mut self, pid: usize, text: String, stopped: bool) -> usize {
        self.add_job_numbered(pid, text, stopped, None)
    }

    fn add_job_numbered(&mut self, pid: usize, text: String, stopped: bool, num: Option<usize>) -> usize {
        let num = num.unwrap_or_else(|| self.jobs.iter().map(|j| j.num).max().unwrap_or(0) + 1);
        self.jobs.push(Job { num, pid, text, stopped });
        self.jobs.sort_by_key(|j| j.num);
        self.touch(num);
        num
    }

    /// Job `num` becomes the current job (`+`).
    fn touch(&mut self, num: usize) {
        self.recency.retain(|&n| n != num);
        self.recency.push(num);
    }

    fn forget(&mut self, pid: usize) {
        if let Some(i) = self.jobs.iter().position(|j| j.pid == pid) {
            let num = self.jobs.remove(i).num;
            self.recency.retain(|&n| n != num);
        }
    }

    /// `+` for the current job, `-` for the previous one, else a blank.
    fn mark(&self, num: usize) -> char {
        let mut r = self.recency.iter().rev().filter(|n| self.jobs.iter().any(|j| j.num == **n));
        match (r.next(), r.next()) {
            (Some(&c), _) if c == num => '+',
            (_, Some(&p)) if p == num => '-',
            _ => ' ',
        }
    }

    /// One line of `jobs`, bash's layout: `[1]+  Stopped                 spin 10000`.
    fn print_job(&self, num: usize) {
        if let Some(j) = self.jobs.iter().find(|j| j.num == num) {
            let (state, amp) = if j.stopped { ("Stopped", "") } else { ("Running", " &") };
            println!("[{}]{}  {:<24}{}{}", j.num, self.mark(num), state, j.text, amp);
        }
    }

    /// `jobs`: every job, after collecting what changed (those that ended are shown as
    /// `Done`, `Exit N` or the signal that killed them, once, and leave the table).
    fn jobs_builtin(&mut self) {
        let nums: Vec<usize> = self.jobs.iter().map(|j| j.num).collect();
        for num in nums {
            let Some(pid) = self.jobs.iter().find(|j| j.num == num).map(|j| j.pid) else { continue };
            match wait_pid(pid, WNOHANG | WUNTRACED | WCONTINUED) {
                Ok(Some(status)) if wifstopped(status) || wifcontinued(status) => {
                    if let Some(j) = self.jobs.iter_mut().find(|j| j.num == num) {
                        j.stopped = wifstopped(status);
                    }
                    self.print_job(num);
                }
                Ok(Some(status)) => {
                    let state = if exited(status) && exit_code(status) == 0 {
                        String::from("Done")
                    } else if exited(status) {
                        alloc::format!("Exit {}", exit_code(status))
                    } else {
                        String::from(signal_name(term_signal(status)))
                    };
                    let mark = self.mark(num);
                    let text = self.jobs.iter().find(|j| j.num == num).map(|j| j.text.clone()).unwrap_or_default();
                    println!("[{num}]{mark}  {state:<24}{text}");
                    self.forget(pid);
                }
                Ok(None) => self.print_job(num),
                Err(_) => self.forget(pid),
            }
        }
        self.last = 0;
    }

    /// `fg [%N]` / `bg [%N]` (see the module comment).
    fn fg_bg(&mut self, words: &[&str]) {
        let cmd = words[0];
        self.last = 1;
        if self.job_control.is_none() {
            eprintln!("sh: {cmd}: no job control");
            return;
        }
        let num = match words.get(1) {
            None => self.recency.iter().rev().copied().find(|n| self.jobs.iter().any(|j| j.num == *n)),
            Some(&spec) => self.job_spec(spec),
        };
        let Some((num, pid, text, stopped)) =
            num.and_then(|n| self.jobs.iter().find(|j| j.num == n)).map(|j| (j.num, j.pid, j.text.clone(), j.stopped))
        else {
            eprintln!("sh: {cmd}: {}: no such job", words.get(1).copied().unwrap_or("current"));
            return;
        };
        if cmd == "bg" {
            if !stopped {
                eprintln!("sh: bg: job {num} already in background");
                self.last = 0;
                return;
            }
            if let Err(e) = sys::kill(-(pid as isize), i32::from(SIGCONT)) {
                eprintln!("sh: bg: {e}");
                return;
            }
            if let Some(j) = self.jobs.iter_mut().find(|j| j.num == num) {
                j.stopped = false;
            }
            self.touch(num);
            println!("[{num}]{} {text} &", self.mark(num));
            self.last = 0;
            return;
        }
        // fg: the job's group gets the console, then SIGCONT, then the shell waits for it.
        println!("{text}");
        self.forget(pid);
        if let Err(e) = sys::tcsetpgrp(0, pid) {
            eprintln!("sh: fg: tcsetpgrp: {e}");
        }
        if let Err(e) = sys::kill(-(pid as isize), i32::from(SIGCONT)) {
            eprintln!("sh: fg: {e}");
        }
        self.wait_foreground(pid, text, Some(num));
    }

    /// A job named `%N`, `N`, `%+`, `%%` or `%-`.
    fn job_spec(&self, spec: &str) -> Option<usize> {
        let live = |n: &&usize| self.jobs.iter().any(|j| j.num == **n);
        match spec.strip_prefix('%').unwrap_or(spec) {
            "" | "+" | "%" => self.recency.iter().rev().find(live).copied(),
            "-" => self.recency.iter().rev().filter(live).nth(1).copied(),
            n => tally_rt::process::parse_u64(n).and_then(|n| usize::try_from(n).ok()),
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
            None => self.jobs.iter().filter(|j| !j.stopped).map(|j| j.pid).collect(),
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
            if let Some(j) = self.jobs.iter().find(|j| j.pid == pid && j.stopped) {
                // A stopped job would never end: say so instead of waiting (as bash does).
                let num = j.num;
                self.print_job(num);
                last = 128 + i32::from(SIGTSTP);
                continue;
            }
            let options = if self.job_control.is_some() { WUNTRACED } else { 0 };
            match wait_pid(pid, options) {
                Ok(Some(status)) if wifstopped(status) => {
                    // A job that stops is not waited for further (bash's `wait` returns too).
                    match self.jobs.iter().position(|j| j.pid == pid) {
                        Some(i) => {
                            self.jobs[i].stopped = true;
                            let num = self.jobs[i].num;
                            self.touch(num);
                            self.print_job(num);
                        }
                        None => {
                            let n = self.add_job(pid, alloc::format!("pid {pid}"), true);
                            self.print_job(n);
                        }
                    }
                    last = 128 + wstopsig(status);
                }
                Ok(Some(status)) => {
                    self.forget(pid);
                    report(pid, status);
                    last = shell_status(status);
                }
                Ok(None) => {}
                Err(e) if e.0 == ECHILD => {
                    eprintln!("sh: wait: pid {pid} is not a child of this shell");
                    self.forget(pid);
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

    /// Reports (and reaps) the background jobs that have ended, without waiting; with job
    /// control, also the jobs that stopped (a background job reading the console gets
    /// SIGTTIN) or were continued by someone else.
    fn report_finished_jobs(&mut self) {
        let options = if self.job_control.is_some() { WNOHANG | WUNTRACED | WCONTINUED } else { WNOHANG };
        let mut i = 0;
        while i < self.jobs.len() {
            let (pid, num) = (self.jobs[i].pid, self.jobs[i].num);
            match wait_pid(pid, options) {
                Ok(Some(status)) if wifstopped(status) || wifcontinued(status) => {
                    // A continue the shell sent itself (`bg`) changes nothing to report.
                    let changed = self.jobs[i].stopped != wifstopped(status);
                    self.jobs[i].stopped = wifstopped(status);
                    if wifstopped(status) {
                        self.touch(num);
                    }
                    if changed {
                        self.print_job(num);
                    }
                    i += 1;
                }
                Ok(Some(status)) => {
                    report(pid, status);
                    self.forget(pid);
                }
                Ok(None) => i += 1,
                Err(e) => {
                    eprintln!("sh: wait4({pid}): {e}");
                    self.forget(pid);
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

/// Turns job control on if the shell can have it (see the module comment): a session
/// leader takes the console; the shell must then lead its process group and be the
/// console's foreground group. Returns the shell's process group, or `None`.
fn start_job_control() -> Option<usize> {
    let pid = sys::getpid().ok()?;
    if sys::getsid(0).ok()? == pid {
        let _ = sys::set_controlling_tty(0, false);
    }
    let pgrp = sys::getpgrp().ok()?;
    if sys::tcgetpgrp(0).ok()? != pgrp {
        return None; // a background shell, or the console is not its terminal
    }
    // The job-control signals are for the jobs, not for the shell.
    for sig in [SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU] {
        sys::ignore_signal(sig, true).ok()?;
    }
    if pgrp != pid {
        // A shell started by another shell: a group of its own, in the foreground.
        sys::setpgid(0, 0).ok()?;
        sys::tcsetpgrp(0, pid).ok()?;
    }
    Some(pid)
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

/// `[pid] exited N` or `[pid] killed by SIGSEGV (11)[, core flag]` (no core file is written).
fn report(pid: usize, status: i32) {
    if exited(status) {
        println!("[{pid}] exited {}", exit_code(status));
    } else {
        println!("[{pid}] {}", describe(status));
    }
}

fn help() {
    println!("commands: PROGRAM [ARGS...] [&]   run /bin/PROGRAM (in the background with &)");
    println!("builtins: wait [PID]   wait for background jobs (or one)");
    println!("          jobs         list the jobs: Running, Stopped, Done");
    println!("          fg [%N]      continue job N in the foreground (^Z stops it again)");
    println!("          bg [%N]      continue job N in the background");
    println!("          exit [N]     leave with status N (default: the last command's)");
    println!("          echo WORDS   print the words");
    println!("          help         this text");
    println!("          CMD > FILE   standard output to FILE (>> FILE appends)");
    println!("keys: ^C interrupts the foreground job, ^\\ quits it, ^Z stops it; ^U ^W erase");
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
