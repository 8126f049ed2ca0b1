//! Starting QEMU: the machine Tally runs on, how a run ends, and what its keyboard types.
//!
//! The machine: a PC (`-machine pc`) under TCG (KVM hangs in the boot loader on these nested
//! machines), 256 MiB, COM1 on stdio (a `-chardev`: see the keys below), no display, no reboot (a triple fault ends QEMU rather
//! than looping), the `isa-debug-exit` device at port 0xF4, and the kernel command line in
//! the fw_cfg file `opt/tally/cmdline`. The boot disk is opened with `snapshot=on`, so
//! several QEMUs can boot one image at once and nothing a run writes persists.
//! A 4 MiB data disk (`build::data_disk`) is the primary slave, also with `snapshot=on`.
//! The accounting disk (`acctdisk.rs`, mounted at `/var`) is the secondary master, a file of
//! the run's own that the guest writes for real.
//! COM2 (the guest's `/dev/ttyS1`) exists only when a capture file is given
//! ([`Qemu::capture`]): QEMU writes everything the guest sends there to that file, byte
//! for byte (`getdelays -w /dev/ttyS1`; `cargo xtask decode FILE` reads it).
//!
//! **Console input** ([`Input`]). COM1's receiver is the guest's keyboard. A UART has no way
//! to say "end of file", so xtask does what a terminal does: it sends the EOF character
//! `^D` (0x04) when its input ends, and the kernel's tty turns a `^D` at the start of a
//! `read` into a return of 0. A script (`cargo xtask run --script FILE`, a scenario's
//! `script`) is sent whole, then `^D`; xtask's own standard input, when it is not a
//! terminal (`cargo xtask run < cmds.txt`, `< /dev/null`), is forwarded line by line, then
//! `^D` at its end. On a terminal QEMU reads the keyboard itself, in raw mode, so a `^D`
//! (or `^C`, `^Z`, `^\`) typed there reaches the guest as it is. Input is held back until the kernel has printed
//! [`READY`]: before that the firmware and the boot loader own the UART, and the kernel's
//! driver resets its FIFO, so bytes sent then are lost (the `tty_typeahead` scenario fails
//! when the feeder does not wait). From [`READY`] on, nothing is lost however early or
//! however much is typed: the console's receive interrupt is on, and its flow control
//! (`kernel/src/drivers/tty.rs`) stops taking bytes while its buffer is full, which makes
//! QEMU stop reading this pipe, so the feeder's `write` simply waits. A script is thus
//! written whole at once — text typed before the shell is up waits in the kernel — and a
//! 1 MiB script runs to its end (`tty_flow_control`). In those piped modes QEMU's output
//! passes through xtask (which watches for [`READY`]) on its way to the terminal or the
//! capture.
//!
//! **Exit status.** The kernel ends a run by writing a value `v` to the exit device, and
//! QEMU exits with `(v << 1) | 1` (`kernel/hal/src/qemu.rs`). A program's exit status `N`
//! (init's, pid 1, which hands on the shell's) is written as `0x10 + N`: status 33 is
//! N = 0, [`Status::Success`], and any odd status from 35 up is [`Status::Exited`]`(N)`.
//! The kernel's own failure verdict (a panic, a fault, a failed self-test, pid 1 killed by a
//! signal) is `0x0F`, status 31, [`Status::Failure`]: it never collides with a program's
//! status, so "init ended with status 1" and "the kernel failed" are told apart. Its success
//! verdict (a self-test passed) is `0x10`, the same status 33 as N = 0.
//!
//! **The keys of the VM** ([`console_chardev`]). The console's chardev has `signal=off`,
//! so `^C`, `^Z` and `^\` typed on the terminal reach the guest (as bytes 0x03, 0x1a,
//! 0x1c) instead of killing or suspending QEMU. On a terminal, QEMU's multiplexer reads
//! the escape `Ctrl-A`: `Ctrl-A x` ends the VM (QEMU exits with status 0, [`Status::Other`]),
//! `Ctrl-A Ctrl-A` types one `Ctrl-A`. Piped and scripted input has no escape: every byte
//! goes to the guest.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const QEMU: &str = "qemu-system-x86_64";
/// The machine every run boots: Tally's, and Linux's for `bench --linux` (`linuxbench.rs`).
pub const MACHINE: [&str; 8] = ["-machine", "pc", "-cpu", "max", "-m", "256M", "-smp", "1"];

/// What the kernel prints once its console can take input (`kernel/src/main.rs`).
pub const READY: &[u8] = b"kernel: ready";
/// End of input on a terminal: `^D`.
pub const EOT: u8 = 0x04;

/// What QEMU's serial input (the guest's keyboard) is fed from; see the module comment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Input {
    /// Nothing: standard input is closed, the guest never receives a byte.
    #[default]
    Closed,
    /// The terminal: QEMU reads xtask's standard input itself (raw mode).
    Terminal,
    /// These bytes, then `^D`.
    Script(Vec<u8>),
    /// xtask's standard input, line by line, then `^D` when it ends.
    Stdin,
}

impl Input {
    /// For `cargo xtask run`: the script if one was given, else the terminal if standard
    /// input is one, else standard input forwarded.
    pub fn for_run(script: Option<Vec<u8>>) -> Self {
        match script {
            Some(bytes) => Input::Script(bytes),
            None if std::io::stdin().is_terminal() => Input::Terminal,
            None => Input::Stdin,
        }
    }
}

/// How a QEMU run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Status 33: the kernel wrote 0x10 — its success verdict, or a program's exit status 0.
    Success,
    /// Status 31: the kernel wrote 0x0F, its failure verdict (a failed test, a panic, a
    /// fault, pid 1 killed by a signal).
    Failure,
    /// Status `33 + 2N`: the kernel wrote `0x10 + N` for init's exit status `N` >= 1.
    Exited(u8),
    /// Killed by the runner's timeout.
    Timeout,
    /// Killed on purpose once the console showed a pattern ([`Qemu::kill_after`]).
    Killed,
    /// Any other end: status 0 (`Ctrl-A x` on the terminal, or a triple fault with
    /// -no-reboot), QEMU's own error (status 1), a signal (`None`).
    Other(Option<i32>),
}

impl Status {
    fn from_code(code: Option<i32>) -> Self {
        match code {
            Some(33) => Status::Success,
            Some(31) => Status::Failure,
            Some(c) if (35..=255).contains(&c) && c % 2 == 1 => Status::Exited(((c - 33) / 2) as u8),
            other => Status::Other(other),
        }
    }
}

impl std::fmt::Display for Status {
    /// How the run ended, in words: "init (pid 1) ended with status 3", "the kernel's
    /// failure verdict", …
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Success => write!(f, "success (status 0)"),
            Status::Failure => write!(f, "the kernel's failure verdict (QEMU status 31)"),
            Status::Exited(n) => write!(f, "init (pid 1) ended with status {n}"),
            Status::Timeout => write!(f, "a timeout (QEMU killed)"),
            Status::Killed => write!(f, "QEMU killed on purpose"),
            Status::Other(Some(0)) => write!(f, "QEMU status 0 (Ctrl-A x, or a reset: a triple fault)"),
            Status::Other(Some(c)) => write!(f, "QEMU status {c}, not through the exit device"),
            Status::Other(None) => write!(f, "QEMU killed by a signal"),
        }
    }
}

/// Make sure QEMU is there: install it with apt when running as root, otherwise say how.
pub fn ensure_installed() -> Result<(), String> {
    let present = Command::new(QEMU).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if matches!(present, Ok(s) if s.success()) {
        return Ok(());
    }
    apt_install(QEMU, "qemu-system-x86")
}

/// Install the Debian package `package`, which provides the missing `program`, with apt-get
/// when xtask runs as root; otherwise say how.
pub fn apt_install(program: &str, package: &str) -> Result<(), String> {
    let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if uid.ok().as_deref() != Some("0") {
        return Err(format!(
            "{program} is not installed. Install it with:\n    sudo apt-get update && \
             sudo apt-get install -y {package}"
        ));
    }
    eprintln!("xtask: {program} not found; installing {package} with apt-get");
    for args in [&["update"][..], &["install", "-y", package][..]] {
        let ok = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            return Err(format!("apt-get {} failed", args.join(" ")));
        }
    }
    Ok(())
}

/// A QEMU invocation being assembled.
pub struct Qemu {
    image: PathBuf,
    acct_disk: PathBuf,
    cmdline: String,
    icount: bool,
    gdb: bool,
    input: Input,
    capture: Option<PathBuf>,
    monitor: Option<PathBuf>,
    extra: Vec<String>,
    kill_after: Option<(Vec<u8>, Duration)>,
}

impl Qemu {
    /// QEMU booting `image`, with `acct_disk` as the accounting disk (secondary master,
    /// `ata2`; see `acctdisk.rs`): every run has one, and it is not a snapshot, since what
    /// the guest writes there is read afterwards.
    pub fn new(image: &Path, acct_disk: &Path) -> Self {
        Self {
            image: image.to_path_buf(),
            acct_disk: acct_disk.to_path_buf(),
            cmdline: String::new(),
            icount: false,
            gdb: false,
            input: Input::Closed,
            capture: None,
            monitor: None,
            extra: Vec::new(),
            kill_after: None,
        }
    }

    /// Put QEMU's monitor on a unix socket at `path` (server, not waiting for a client).
    pub fn monitor(mut self, path: &Path) -> Self {
        self.monitor = Some(path.to_path_buf());
        self
    }

    /// More QEMU options, appended as given (e.g. `-singlestep`, `-D FILE`).
    pub fn args(mut self, args: &[&str]) -> Self {
        self.extra.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// For [`Qemu::run_captured`]: kill QEMU (SIGKILL, as a power cut would end the machine)
    /// `delay` after the console first shows `pattern` (`\n` in it matches the console's
    /// CR LF); the run then ends with [`Status::Killed`].
    pub fn kill_after(mut self, pattern: &str, delay: Duration) -> Self {
        self.kill_after = Some((pattern.replace('\n', "\r\n").into_bytes(), delay));
        self
    }

    pub fn cmdline(mut self, cmdline: &str) -> Self {
        self.cmdline = cmdline.to_string();
        self
    }

    pub fn icount(mut self, on: bool) -> Self {
        self.icount = on;
        self
    }

    pub fn gdb(mut self) -> Self {
        self.gdb = true;
        self
    }

    pub fn input(mut self, input: Input) -> Self {
        self.input = input;
        self
    }

    /// Attach COM2 (the guest's `/dev/ttyS1`) to the file `path` (created or truncated).
    pub fn capture(mut self, path: &Path) -> Self {
        self.capture = Some(path.to_path_buf());
        self
    }

    pub fn command(&self) -> Command {
        let mut c = Command::new(QEMU);
        let monitor =
            self.monitor.as_ref().map_or_else(|| "none".to_string(), |p| format!("unix:{},server,nowait", p.display()));
        c.args(MACHINE)
            .args(["-no-reboot", "-display", "none", "-monitor", &monitor])
            .arg("-chardev")
            .arg(console_chardev(&self.input))
            .args(["-serial", "chardev:console"])
            .args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"])
            .arg("-drive")
            .arg(format!("format=raw,file={},if=ide,index=0,snapshot=on", self.image.display()));
        // The data disk (primary slave, `ata1`) of the ATA driver's tests; see `build::data_disk`.
        c.arg("-drive")
            .arg(format!("format=raw,file={},if=ide,index=1,snapshot=on", crate::build::data_disk_path().display()));
        // The accounting disk (secondary master, `ata2`), written in place.
        c.arg("-drive").arg(format!("format=raw,file={},if=ide,index=2", self.acct_disk.display()));
        // The second -serial is COM2.
        if let Some(path) = &self.capture {
            c.arg("-serial").arg(format!("file:{}", path.display()));
        }
        // QEMU refuses an empty fw_cfg string, and its option syntax needs commas doubled.
        if !self.cmdline.is_empty() {
            c.arg("-fw_cfg").arg(format!("name=opt/tally/cmdline,string={}", self.cmdline.replace(',', ",,")));
        }
        if self.icount {
            c.args(["-icount", "shift=0,sleep=off"]);
        }
        if self.gdb {
            c.args(["-s", "-S"]);
        }
        c.args(&self.extra);
        c
    }

    /// Run with the console on this terminal: QEMU's output goes to stdout, its input comes
    /// from [`Input`] (the terminal itself, or a script / standard input through xtask).
    pub fn run_interactive(&self, timeout_secs: u64) -> Result<Status, String> {
        let timeout = (timeout_secs > 0).then(|| Duration::from_secs(timeout_secs));
        let mut cmd = self.command();
        match self.input {
            Input::Terminal => {}
            Input::Closed => {
                cmd.stdin(Stdio::null());
            }
            Input::Script(_) | Input::Stdin => {
                cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
            }
        }
        let mut child = cmd.spawn().map_err(|e| format!("cannot start {QEMU}: {e}"))?;
        let Some(stdout) = child.stdout.take() else { return wait(child, timeout) };
        let (ready_tx, ready_rx) = mpsc::channel();
        let out = std::thread::spawn(move || {
            pump(stdout, ready_tx, |bytes| {
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(bytes).and_then(|()| o.flush());
            })
        });
        let feeder = start_feeder(&mut child, &self.input, ready_rx);
        let status = wait(child, timeout)?;
        let _ = out.join();
        // A script feeder ends once QEMU is gone (its pipe breaks); one forwarding standard
        // input may be blocked reading it, and is left behind.
        if matches!(self.input, Input::Script(_)) {
            if let Some(f) = feeder {
                let _ = f.join();
            }
        }
        Ok(status)
    }

    /// Run headless, capturing the serial output; kill after `timeout`. Only a
    /// [`Input::Script`] is fed; any other input is closed.
    pub fn run_captured(&self, timeout: Duration) -> Result<(Status, String, Duration), String> {
        let start = Instant::now();
        let scripted = matches!(self.input, Input::Script(_));
        let mut child = self
            .command()
            .stdin(if scripted { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {QEMU}: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let (ready_tx, ready_rx) = mpsc::channel();
        // When the console first showed the kill pattern, if there is one.
        let seen = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
        let pattern = self.kill_after.as_ref().map(|(p, _)| p.clone());
        let out = {
            let seen = std::sync::Arc::clone(&seen);
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                pump(stdout, ready_tx, |bytes| {
                    let from = buf.len().saturating_sub(pattern.as_ref().map_or(0, |p| p.len()));
                    buf.extend_from_slice(bytes);
                    if let Some(p) = pattern.as_ref().filter(|p| !p.is_empty() && seen.get().is_none()) {
                        if buf[from..].windows(p.len()).any(|w| w == p.as_slice()) {
                            let _ = seen.set(Instant::now());
                        }
                    }
                });
                buf
            })
        };
        let err = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        });
        let feeder = if scripted { start_feeder(&mut child, &self.input, ready_rx) } else { None };
        let kill = self.kill_after.as_ref().map(|(_, delay)| (&*seen, *delay));
        let status = wait_or_kill(child, Some(timeout), kill)?;
        if let Some(f) = feeder {
            let _ = f.join();
        }
        let mut text = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
        let err = err.join().unwrap_or_default();
        if !err.is_empty() {
            text.push_str("\n[qemu stderr] ");
            text.push_str(&String::from_utf8_lossy(&err));
        }
        Ok((status, text, start.elapsed()))
    }
}

/// QEMU's `-chardev` for COM1, the console, on QEMU's standard input and output.
///
/// `signal=off` always: QEMU must not turn a typed `^C` into a SIGINT of its own (which
/// ends it with "terminating on signal 2") nor let `^Z` suspend it on the host — the bytes
/// 0x03, 0x1a and 0x1c go to the guest, whose tty makes them signals. On a terminal
/// ([`Input::Terminal`]) the chardev is also multiplexed (`mux=on`): QEMU then reads the
/// escape `Ctrl-A` itself, and `Ctrl-A x` ends the VM (`Ctrl-A h` lists the others,
/// `Ctrl-A Ctrl-A` sends one `Ctrl-A` to the guest). Piped or scripted input is not
/// multiplexed, so every byte of it, 0x01 included, reaches the guest as it is.
fn console_chardev(input: &Input) -> String {
    let mux = if matches!(input, Input::Terminal) { ",mux=on" } else { "" };
    format!("stdio,id=console{mux},signal=off")
}

/// Copies QEMU's output to `sink` as it arrives, and signals `ready` once it has contained
/// [`READY`] (the marker may be split across reads).
fn pump(mut from: impl Read, ready: mpsc::Sender<()>, mut sink: impl FnMut(&[u8])) {
    let mut window: Vec<u8> = Vec::new();
    let mut ready = Some(ready);
    let mut buf = [0u8; 4096];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        sink(&buf[..n]);
        if ready.is_some() {
            window.extend_from_slice(&buf[..n]);
            if window.windows(READY.len()).any(|w| w == READY) {
                let _ = ready.take().map(|tx| tx.send(()));
                window = Vec::new();
            } else {
                let keep = window.len().saturating_sub(READY.len() - 1);
                window.drain(..keep);
            }
        }
    }
    // Dropping `ready` unsent tells a waiting feeder that the kernel never got there.
}

/// Starts the thread that types [`Input::Script`] or [`Input::Stdin`] into QEMU once the
/// kernel is ready, ending with `^D`. Its writes block while the guest's console buffer is
/// full (flow control, see the module comment): nothing is dropped on the way.
fn start_feeder(child: &mut Child, input: &Input, ready: mpsc::Receiver<()>) -> Option<std::thread::JoinHandle<()>> {
    let to = child.stdin.take()?;
    let input = input.clone();
    Some(std::thread::spawn(move || {
        if ready.recv().is_err() {
            return; // QEMU ended before the kernel was ready: nobody to type to
        }
        // A write error means QEMU has exited (a broken pipe): nothing more to do.
        let _ = feed(to, &input);
    }))
}

fn feed(mut to: ChildStdin, input: &Input) -> std::io::Result<()> {
    match input {
        Input::Script(bytes) => to.write_all(bytes)?,
        Input::Stdin => {
            let mut stdin = std::io::stdin().lock();
            let mut line = Vec::new();
            loop {
                line.clear();
                if stdin.read_until(b'\n', &mut line)? == 0 {
                    break;
                }
                to.write_all(&line)?;
                to.flush()?;
            }
        }
        Input::Closed | Input::Terminal => return Ok(()),
    }
    to.write_all(&[EOT])?;
    to.flush()
    // `to` is dropped here: QEMU then reads end of file on its standard input, which
    // it takes as "no more input" (the guest has the ^D already).
}

fn wait(child: Child, timeout: Option<Duration>) -> Result<Status, String> {
    wait_or_kill(child, timeout, None)
}

/// Waits for QEMU to end; kills it after `timeout`, or `kill.1` after the moment `kill.0`
/// is set.
fn wait_or_kill(
    mut child: Child,
    timeout: Option<Duration>,
    kill: Option<(&std::sync::OnceLock<Instant>, Duration)>,
) -> Result<Status, String> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(Status::from_code(s.code()));
        }
        if let Some((seen, delay)) = kill {
            if seen.get().is_some_and(|t| t.elapsed() >= delay) {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Status::Killed);
            }
        }
        if timeout.is_some_and(|t| start.elapsed() >= t) {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Status::Timeout);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_of(input: Input) -> Vec<String> {
        let q = Qemu::new(Path::new("boot.img"), Path::new("acct.img")).input(input);
        q.command().get_args().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    /// The value after `flag`, for each time `flag` appears.
    fn values<'a>(args: &'a [String], flag: &str) -> Vec<&'a str> {
        args.windows(2).filter(|w| w[0] == flag).map(|w| w[1].as_str()).collect()
    }

    #[test]
    fn the_console_never_lets_qemu_take_signals_and_only_a_terminal_gets_the_escape() {
        for input in [Input::Closed, Input::Script(b"hello\n".to_vec()), Input::Stdin] {
            let a = args_of(input.clone());
            assert_eq!(values(&a, "-chardev"), ["stdio,id=console,signal=off"], "{input:?}");
            assert_eq!(values(&a, "-serial"), ["chardev:console"], "{input:?}");
        }
        let a = args_of(Input::Terminal);
        assert_eq!(values(&a, "-chardev"), ["stdio,id=console,mux=on,signal=off"]);
        assert_eq!(values(&a, "-serial"), ["chardev:console"]);
        assert!(!a.iter().any(|x| x == "stdio"), "no second user of stdio: {a:?}");
    }

    #[test]
    fn the_monitor_and_the_capture_keep_their_own_places() {
        let q = Qemu::new(Path::new("boot.img"), Path::new("acct.img"))
            .input(Input::Terminal)
            .monitor(Path::new("/tmp/m.sock"))
            .capture(Path::new("/tmp/c.bin"));
        let a: Vec<String> = q.command().get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(values(&a, "-monitor"), ["unix:/tmp/m.sock,server,nowait"]);
        // COM1 first, COM2 second: QEMU numbers the serial ports in order.
        assert_eq!(values(&a, "-serial"), ["chardev:console", "file:/tmp/c.bin"]);
        assert_eq!(values(&args_of(Input::Closed), "-monitor"), ["none"]);
    }

    #[test]
    fn exit_statuses_tell_the_kernels_verdict_from_inits_status() {
        assert_eq!(Status::from_code(Some(33)), Status::Success);
        assert_eq!(Status::from_code(Some(31)), Status::Failure);
        assert_eq!(Status::from_code(Some(35)), Status::Exited(1));
        assert_eq!(Status::from_code(Some(39)), Status::Exited(3));
        assert_eq!(Status::from_code(Some(255)), Status::Exited(111));
        assert_eq!(Status::from_code(Some(0)), Status::Other(Some(0)));
        assert_eq!(Status::from_code(Some(1)), Status::Other(Some(1)));
        assert_eq!(Status::from_code(Some(34)), Status::Other(Some(34)));
        assert_eq!(Status::from_code(None), Status::Other(None));
        assert_eq!(Status::Exited(1).to_string(), "init (pid 1) ended with status 1");
        assert!(Status::Failure.to_string().contains("kernel's failure verdict"));
    }
}
