//! Starting QEMU: the machine Tally runs on, and how a run ends.
//!
//! The machine: a PC (`-machine pc`) under TCG (KVM hangs in the boot loader on these nested
//! machines), 256 MiB, COM1 on stdio, no display, no reboot (a triple fault ends QEMU rather
//! than looping), the `isa-debug-exit` device at port 0xF4, and the kernel command line in
//! the fw_cfg file `opt/tally/cmdline`. The boot disk is opened with `snapshot=on`, so
//! several QEMUs can boot one image at once and nothing a run writes persists.
//! A 4 MiB data disk (`build::data_disk`) is the primary slave, also with `snapshot=on`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const QEMU: &str = "qemu-system-x86_64";

/// How a QEMU run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The kernel wrote 0x10 to the exit device (QEMU status 33).
    Success,
    /// The kernel wrote 0x11 (QEMU status 35): a failed test, a panic, a fault.
    Failure,
    /// Killed by the runner's timeout.
    Timeout,
    /// Any other end: QEMU's own error, a triple fault with -no-reboot (status 0), a signal.
    Other(Option<i32>),
}

impl Status {
    fn from_code(code: Option<i32>) -> Self {
        match code {
            Some(33) => Status::Success,
            Some(35) => Status::Failure,
            other => Status::Other(other),
        }
    }
}

/// Make sure QEMU is there: install it with apt when running as root, otherwise say how.
pub fn ensure_installed() -> Result<(), String> {
    let present = Command::new(QEMU).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if matches!(present, Ok(s) if s.success()) {
        return Ok(());
    }
    let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if uid.ok().as_deref() != Some("0") {
        return Err(format!(
            "{QEMU} is not installed. Install it with:\n    sudo apt-get update && sudo apt-get install -y qemu-system-x86"
        ));
    }
    eprintln!("xtask: {QEMU} not found; installing qemu-system-x86 with apt-get");
    for args in [&["update"][..], &["install", "-y", "qemu-system-x86"][..]] {
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
    cmdline: String,
    icount: bool,
    gdb: bool,
}

impl Qemu {
    pub fn new(image: &Path) -> Self {
        Self { image: image.to_path_buf(), cmdline: String::new(), icount: false, gdb: false }
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

    fn command(&self) -> Command {
        let mut c = Command::new(QEMU);
        c.args(["-machine", "pc", "-cpu", "max", "-m", "256M", "-smp", "1"])
            .args(["-no-reboot", "-display", "none", "-monitor", "none", "-serial", "stdio"])
            .args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"])
            .arg("-drive")
            .arg(format!("format=raw,file={},if=ide,index=0,snapshot=on", self.image.display()));
        // The data disk (primary slave, `ata1`) of the ATA driver's tests; see `build::data_disk`.
        c.arg("-drive").arg(format!("format=raw,file={},if=ide,index=1,snapshot=on", crate::build::data_disk_path().display()));
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
        c
    }

    /// Run with the terminal attached (serial on stdin/stdout).
    pub fn run_interactive(&self, timeout_secs: u64) -> Result<Status, String> {
        let child = self.command().spawn().map_err(|e| format!("cannot start {QEMU}: {e}"))?;
        let timeout = (timeout_secs > 0).then(|| Duration::from_secs(timeout_secs));
        wait(child, timeout)
    }

    /// Run headless, capturing the serial output; kill after `timeout`.
    pub fn run_captured(&self, timeout: Duration) -> Result<(Status, String, Duration), String> {
        let start = Instant::now();
        let mut child = self
            .command()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {QEMU}: {e}"))?;
        let mut stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let out = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf);
            buf
        });
        let err = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        });
        let status = wait(child, Some(timeout))?;
        let mut text = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
        let err = err.join().unwrap_or_default();
        if !err.is_empty() {
            text.push_str("\n[qemu stderr] ");
            text.push_str(&String::from_utf8_lossy(&err));
        }
        Ok((status, text, start.elapsed()))
    }
}

fn wait(mut child: Child, timeout: Option<Duration>) -> Result<Status, String> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(Status::from_code(s.code()));
        }
        if timeout.is_some_and(|t| start.elapsed() >= t) {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Status::Timeout);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
