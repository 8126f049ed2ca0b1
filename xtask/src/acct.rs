//! `cargo xtask acct IMAGE …`: the files of an accounting disk, read on the host.
//!
//! After a run, the guest's `/var` is a file on the host (`target/tally/acct.img`, the
//! `--acct-disk` of `cargo xtask run`, a failed scenario's kept disk). This command opens
//! it with `fatfs` (`acctdisk::Image`) and prints its files in the formats of Tally's own
//! tools, through the very code they use (`tally-pacct` for Linux process accounting,
//! `tally-csa`'s reports for CSA), with Tally's names (uid 0 is `root`, the serial ports
//! `ttyS0`…; `tally_pacct::names::TallyNames`): what `dump-acct`, `lastcomm` or `csacom`
//! printed in the guest, this prints from the disk.
//!
//! * `ls [PATH]`: a directory's entries, with their sizes (`/var` by default);
//! * `cat PATH`: a file's bytes, as they are;
//! * `dump PATH`: every record, every field: `dump-acct`'s lines for an acct v3 file, the
//!   CSA field dump for a CSA file (told apart by the first record's header);
//! * `lastcomm PATH`: Linux's `lastcomm`, newest first;
//! * `csacom PATH`: CSA's `csacom`, with its selections and columns.

use std::io::Write;
use std::path::Path;

use clap::Subcommand;
use tally_pacct::names::TallyNames;

use crate::acctdisk::Image;

#[derive(Subcommand, Debug, Clone)]
pub enum AcctCmd {
    /// List a directory: each entry's name and size in bytes (directories end in `/`).
    Ls {
        #[arg(default_value = "/var")]
        path: String,
    },
    /// Write a file's bytes to standard output.
    Cat { path: String },
    /// Every record with every field: dump-acct's lines (acct v3), or CSA's field dump.
    Dump { path: String },
    /// The commands of an acct v3 file, newest first, as lastcomm prints them.
    Lastcomm {
        path: String,
        /// Add the process id and the parent's.
        #[arg(long)]
        pid: bool,
        /// Minor and major faults instead of user and terminal.
        #[arg(short = 'p', long = "show-paging")]
        paging: bool,
    },
    /// The process records of a CSA file, as csacom prints them.
    Csacom {
        path: String,
        /// Only this job (hex, as csacom reads it).
        #[arg(short = 'j', value_name = "JID")]
        jid: Option<String>,
        /// Only this user id.
        #[arg(short = 'u', value_name = "UID")]
        uid: Option<u32>,
        /// Only this command (`name*`: every command starting with `name`).
        #[arg(short = 'n', value_name = "NAME")]
        command: Option<String>,
        /// Show the job id.
        #[arg(short = 'J')]
        job: bool,
        /// Show the process and parent ids.
        #[arg(short = 'p')]
        pids: bool,
        /// System and user time apart.
        #[arg(short = 't')]
        separate: bool,
        /// I/O: characters and calls.
        #[arg(short = 'i')]
        io: bool,
        /// Memory high-water marks (csacom's `-h`; long only here, `-h` is help).
        #[arg(long)]
        hiwater: bool,
        /// Delays: CPU wait and block I/O wait.
        #[arg(short = 'd')]
        delay: bool,
        /// Exit status, nice and flags.
        #[arg(short = 'x')]
        status: bool,
    },
}

/// Runs `cmd` on `image` and writes its output to standard output.
pub fn run(image: &Path, cmd: &AcctCmd) -> Result<std::process::ExitCode, String> {
    let img = Image::open(image)?;
    let out = render(&img, cmd)?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out).and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// Whether `bytes` is a CSA file: it starts with a CSA record header's magic.
fn is_csa(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && u16::from_le_bytes([bytes[0], bytes[1]]) == tally_uapi::csa::ACCT_MAGIC
}

/// An acct v3 file's bytes, refused unless they are whole records.
fn pacct_bytes(img: &Image, path: &str) -> Result<Vec<u8>, String> {
    let bytes = img.read(path)?;
    tally_pacct::file::whole_records(&bytes).map_err(|e| format!("{path}: {e:?}"))?;
    Ok(bytes)
}

/// What `cmd` prints for `img`.
pub fn render(img: &Image, cmd: &AcctCmd) -> Result<Vec<u8>, String> {
    let fmt_err = |e: std::fmt::Error| e.to_string();
    let mut text = String::new();
    match cmd {
        AcctCmd::Ls { path } => {
            for e in img.list(path)? {
                let slash = if e.is_dir { "/" } else { "" };
                text.push_str(&format!("{:>10}  {}{slash}\n", e.size, e.name));
            }
        }
        AcctCmd::Cat { path } => return img.read(path),
        AcctCmd::Dump { path } => {
            let bytes = img.read(path)?;
            if is_csa(&bytes) {
                tally_csa::report::csacom::dump(&mut text, &bytes).map_err(|e| format!("{path}: {e}"))?;
            } else {
                tally_pacct::file::whole_records(&bytes).map_err(|e| format!("{path}: {e:?}"))?;
                let skipped = tally_pacct::dump::write_dump(&mut text, &bytes, &TallyNames).map_err(fmt_err)?;
                if skipped > 0 {
                    eprintln!("xtask: {path}: {skipped} records of another version skipped");
                }
            }
        }
        AcctCmd::Lastcomm { path, pid, paging } => {
            use tally_pacct::lastcomm::{write_lastcomm, Filter, LastcommOptions};
            let bytes = pacct_bytes(img, path)?;
            let opts = LastcommOptions { show_pid: *pid, show_paging: *paging, ..Default::default() };
            write_lastcomm(&mut text, &bytes, &Filter::default(), &TallyNames, &opts).map_err(fmt_err)?;
        }
        AcctCmd::Csacom { path, jid, uid, command, job, pids, separate, io, hiwater, delay, status } => {
            use tally_csa::report::{csacom, Selection};
            let bytes = img.read(path)?;
            let jid = match jid {
                Some(j) => {
                    Some(u64::from_str_radix(j.trim_start_matches("0x"), 16).map_err(|e| format!("-j {j}: {e}"))?)
                }
                None => None,
            };
            let q =
                Selection { jid, uid: *uid, command: command.as_deref().map(str::as_bytes), since: None, until: None };
            let c = csacom::CsacomColumns {
                job: *job,
                pids: *pids,
                separate: *separate,
                io: *io,
                hiwater: *hiwater,
                delay: *delay,
                status: *status,
                sbu: None,
            };
            csacom::csacom(&mut text, &bytes, &q, &c).map_err(|e| format!("{path}: {e}"))?;
        }
    }
    Ok(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acctdisk::Disk;

    /// A fresh disk holding `tally-pacct`'s sample file as `/var/account/pacct`.
    fn disk_with_sample(name: &str) -> (Disk, Vec<u8>) {
        let sample = std::fs::read(crate::build::root().join("kernel/libs/pacct/tests/fixtures/sample.acct")).unwrap();
        let disk = Disk::fresh(name).unwrap();
        Image::open_rw(disk.path()).unwrap().write("/var/account/pacct", &sample).unwrap();
        (disk, sample)
    }

    fn text(img: &Image, cmd: AcctCmd) -> String {
        String::from_utf8(render(img, &cmd).unwrap()).unwrap()
    }

    #[test]
    fn ls_cat_dump_and_lastcomm_read_the_file_the_guest_wrote() {
        let (disk, sample) = disk_with_sample("unit-acct");
        let img = Image::open(disk.path()).unwrap();
        assert_eq!(
            text(&img, AcctCmd::Ls { path: "/var".into() }),
            "         0  ACCOUNT/\n         0  CSA/\n         0  TMP/\n"
        );
        assert_eq!(text(&img, AcctCmd::Ls { path: "/var/account".into() }), format!("{:>10}  PACCT\n", sample.len()));
        assert_eq!(render(&img, &AcctCmd::Cat { path: "/var/account/pacct".into() }).unwrap(), sample);

        let mut want = String::new();
        tally_pacct::dump::write_dump(&mut want, &sample, &TallyNames).unwrap();
        assert_eq!(text(&img, AcctCmd::Dump { path: "/var/account/pacct".into() }), want);
        assert_eq!(want.lines().count(), sample.len() / 64);

        let got = text(&img, AcctCmd::Lastcomm { path: "account/pacct".into(), pid: false, paging: false });
        let records: Vec<_> = tally_pacct::file::records(&sample).map(|r| r.unwrap()).collect();
        let mut want = String::new();
        for r in records.iter().rev() {
            tally_pacct::lastcomm::write_lastcomm_line(&mut want, r, &TallyNames, &Default::default()).unwrap();
        }
        assert_eq!(got, want, "newest first, Tally's names");

        assert!(render(&img, &AcctCmd::Cat { path: "/var/account/nothere".into() }).is_err());
    }

    #[test]
    fn a_partial_record_is_refused_and_a_csa_file_is_dumped_as_csa() {
        let (disk, sample) = disk_with_sample("unit-acct-partial");
        let rw = Image::open_rw(disk.path()).unwrap();
        rw.write("/var/account/pacct", &sample[..sample.len() - 10]).unwrap();
        let e = render(&rw, &AcctCmd::Dump { path: "/var/account/pacct".into() }).unwrap_err();
        assert!(e.contains("PartialRecord"), "{e}");
        // A CSA file: a configuration record made by `tally-csa`.
        let cfg = tally_csa::CfgRecord::default().encode();
        rw.write("/var/csa/pacct", &cfg).unwrap();
        let mut want = String::new();
        tally_csa::report::csacom::dump(&mut want, &cfg).unwrap();
        assert_eq!(text(&rw, AcctCmd::Dump { path: "/var/csa/pacct".into() }), want);
        assert!(!want.is_empty());
    }

    #[test]
    fn csacom_selects_and_prints_a_csa_files_process_records() {
        let comm = |s: &[u8]| {
            let mut c = [0u8; 16];
            c[..s.len()].copy_from_slice(s);
            c
        };
        let exit = |pid, uid, name: &[u8]| tally_csa::ProcessExit {
            pid,
            ppid: 1,
            uid,
            comm: comm(name),
            begin_unix_ns: 1_764_054_120_000_000_000,
            elapsed_ns: 2_000_000_000,
            utime_ns: 30_000_000,
            ..Default::default()
        };
        let mut file = tally_csa::CfgRecord::default().encode().to_vec();
        for (pid, uid, name) in [(5, 0, &b"sh"[..]), (6, 1000, b"hello"), (7, 1000, b"spin")] {
            let mut buf = [0u8; tally_csa::process::CHAIN_MAX];
            let n = exit(pid, uid, name).records(0x7a11_0000_0005).encode(&mut buf);
            file.extend_from_slice(&buf[..n]);
        }
        let disk = Disk::fresh("unit-csacom").unwrap();
        let rw = Image::open_rw(disk.path()).unwrap();
        rw.write("/var/csa/pacct", &file).unwrap();
        let cmd = |uid: Option<u32>, command: Option<&str>| AcctCmd::Csacom {
            path: "/var/csa/pacct".into(),
            jid: None,
            uid,
            command: command.map(String::from),
            job: true,
            pids: true,
            separate: false,
            io: false,
            hiwater: false,
            delay: false,
            status: false,
        };
        let got = text(&rw, cmd(Some(1000), None));
        let q = tally_csa::report::Selection { uid: Some(1000), ..Default::default() };
        let c = tally_csa::report::csacom::CsacomColumns { job: true, pids: true, ..Default::default() };
        let mut want = String::new();
        tally_csa::report::csacom::csacom(&mut want, &file, &q, &c).unwrap();
        assert_eq!(got, want);
        assert!(got.contains("hello") && got.contains("spin") && !got.contains("sh "), "{got}");
        let got = text(&rw, cmd(None, Some("sp*")));
        assert!(got.contains("spin") && !got.contains("hello"), "{got}");
    }
}
