//! Linux programs in the ramdisk: the tree's C test programs and `run --add FILE[:NAME]`.
//!
//! **The tree's C programs** are `userland/c/*.c`, one program per file, plain portable Linux
//! C with nothing Tally-specific in it (each also runs on the host: they are Linux programs).
//! Each is compiled with Debian's `musl-gcc -static -O2` (package `musl-tools`, installed
//! with `apt-get` like QEMU when it is missing and xtask runs as root, else xtask prints the
//! command) into `target/tally/c/NAME`, and packed into the ramdisk as `/bin/NAME` (NAME: the
//! file's name without `.c`) for `run` and `test` alike. A program is compiled again only
//! when what it is built from changed: its source, the headers beside it
//! (`userland/c/*.h`) or the compiler's command line, whose hash is kept in
//! `target/tally/c/NAME.hash`. So `musl-gcc` is needed (and installed) only when something
//! must be compiled. A name taken by a Rust program (`userland/src/bin/NAME.rs`) fails the
//! build: two programs cannot both be `/bin/NAME`.
//!
//! **Your own programs**: `cargo xtask run --add FILE[:NAME]` (repeatable) packs the host
//! file FILE into the ramdisk as `/bin/NAME` (default: FILE's own name). NAME is a file name
//! of at most [`NAME_MAX`] bytes from `[A-Za-z0-9._+-]`, not starting with a dot; it may not
//! be a program Tally already has (a Rust tool, a tree C program) nor appear twice: an added
//! program never silently replaces one the tests and the shell rely on — pick another NAME
//! (`--add ./sh:mysh`). An ELF file goes in without its debug information and symbols (a
//! stripped copy; the boot loader reads the ramdisk through BIOS calls); anything else
//! goes in as it is. A program the kernel's loader would refuse (`tally_loader::elf::plan`)
//! is still packed, with a warning: running it shows how Tally refuses it (`ENOEXEC`). An
//! image with added programs is written beside the plain one (`…-added.img`), so a run
//! with `--add` never changes the image the scenarios boot.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the tree's C programs live.
pub const C_DIR: &str = "userland/c";
/// The compiler and its flags (part of each program's hash: a change rebuilds everything).
const CC: &str = "musl-gcc";
const CFLAGS: &[&str] = &["-static", "-O2", "-Wall", "-Wextra", "-Werror", "-std=gnu11"];
/// The longest NAME `--add` accepts (a program's name is also its `comm`, 15 bytes on
/// Linux and Tally alike; longer names work but are cut there).
pub const NAME_MAX: usize = 64;

/// One `--add FILE[:NAME]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Added {
    pub file: PathBuf,
    pub name: String,
}

/// Parse `FILE[:NAME]`. A FILE whose own name contains `:` is taken whole when it exists.
pub fn parse_added(arg: &str) -> Result<Added, String> {
    let (file, name) = match arg.rsplit_once(':') {
        Some((file, name)) if !file.is_empty() && !Path::new(arg).exists() => (PathBuf::from(file), name.to_string()),
        _ => {
            let file = PathBuf::from(arg);
            let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (file, name)
        }
    };
    check_name(&name).map_err(|why| format!("--add {arg}: {why}"))?;
    Ok(Added { file, name })
}

/// A program's name in `/bin`: see the module comment.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty (give one: FILE:NAME)".into());
    }
    if name.len() > NAME_MAX {
        return Err(format!("the name {name:?} is longer than {NAME_MAX} bytes"));
    }
    if name.starts_with('.') {
        return Err(format!("the name {name:?} starts with a dot"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || "._+-".contains(*c))) {
        return Err(format!("the name {name:?} has {c:?}: use letters, digits and . _ + -"));
    }
    Ok(())
}

/// FNV-1a, 64 bits: a stable hash of what a program is built from (std's hasher may change
/// between Rust releases, which would rebuild everything for nothing).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.iter().chain(&[0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Files of `dir` ending in `.ext`, sorted.
fn files_with(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext) && p.is_file())
        .collect();
    out.sort();
    Ok(out)
}

/// `musl-gcc` is there, or installed now (root), or the error says how.
fn ensure_musl_gcc() -> Result<(), String> {
    let present = Command::new(CC).arg("--version").output();
    if matches!(present, Ok(o) if o.status.success()) {
        return Ok(());
    }
    crate::qemu::apt_install(CC, "musl-tools")
}

/// Build the tree's C programs (those whose inputs changed) into `target/tally/c/`; returns
/// each one's name and executable, sorted by name.
pub fn build_c_programs() -> Result<Vec<(String, PathBuf)>, String> {
    let src_dir = crate::build::root().join(C_DIR);
    let sources = files_with(&src_dir, "c")?;
    if sources.is_empty() {
        return Ok(Vec::new());
    }
    let mut headers = Vec::new();
    for h in files_with(&src_dir, "h")? {
        headers.push(std::fs::read(&h).map_err(|e| format!("cannot read {}: {e}", h.display()))?);
    }
    let out_dir = crate::build::target_dir().join("tally").join("c");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let mut programs = Vec::new();
    let mut checked_cc = false;
    for src in &sources {
        let name = src.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        check_name(&name).map_err(|why| format!("{}: {why}", src.display()))?;
        let text = std::fs::read(src).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
        let flags = CFLAGS.join(" ");
        let mut parts: Vec<&[u8]> = vec![CC.as_bytes(), flags.as_bytes(), &text];
        parts.extend(headers.iter().map(Vec::as_slice));
        let hash = format!("{:016x}\n", fnv1a(&parts));
        let exe = out_dir.join(&name);
        let stamp = out_dir.join(format!("{name}.hash"));
        let fresh = exe.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == hash);
        if !fresh {
            if !checked_cc {
                ensure_musl_gcc()?;
                checked_cc = true;
            }
            let tmp = exe.with_extension(format!("tmp{}", std::process::id()));
            let status = Command::new(CC)
                .args(CFLAGS)
                .arg("-I")
                .arg(&src_dir)
                .arg("-o")
                .arg(&tmp)
                .arg(src)
                .status()
                .map_err(|e| format!("cannot run {CC}: {e}"))?;
            if !status.success() {
                let _ = std::fs::remove_file(&tmp);
                return Err(format!("{CC} failed on {}", src.display()));
            }
            std::fs::rename(&tmp, &exe).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))?;
            std::fs::write(&stamp, &hash).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
        }
        programs.push((name, exe));
    }
    Ok(programs)
}

/// A scenario's `add`: compile each C source (a path from the repository's root) on the
/// host into `target/tally/added/`, as a user would before `run --add`, and return them as
/// `--add` entries named after their files.
pub fn build_added(sources: &[String]) -> Result<Vec<Added>, String> {
    let out_dir = crate::build::target_dir().join("tally").join("added");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    ensure_musl_gcc()?;
    let mut added = Vec::new();
    for src in sources {
        let path = crate::build::root().join(src);
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        check_name(&name).map_err(|why| format!("{src}: {why}"))?;
        let exe = out_dir.join(&name);
        let status = Command::new(CC)
            .args(CFLAGS)
            .arg("-o")
            .arg(&exe)
            .arg(&path)
            .status()
            .map_err(|e| format!("cannot run {CC}: {e}"))?;
        if !status.success() {
            return Err(format!("{CC} failed on {src}"));
        }
        added.push(Added { file: exe, name });
    }
    Ok(added)
}

/// Is `bytes` an ELF file (to be stripped before packing)?
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_names() {
        let a = parse_added("/tmp/x/prog").unwrap();
        assert_eq!((a.file, a.name.as_str()), (PathBuf::from("/tmp/x/prog"), "prog"));
        let a = parse_added("/tmp/x/prog:other").unwrap();
        assert_eq!((a.file, a.name.as_str()), (PathBuf::from("/tmp/x/prog"), "other"));
        assert!(parse_added("/tmp/x/prog:").is_err(), "an empty name");
        assert!(parse_added("/tmp/x/prog:a/b").is_err(), "a slash");
        assert!(parse_added("/tmp/x/prog:.hidden").is_err(), "a leading dot");
        assert!(parse_added(&format!("p:{}", "n".repeat(NAME_MAX + 1))).is_err(), "too long");
        assert!(parse_added("/").is_err(), "no file name");
        check_name("gcc-12.2_x+y").unwrap();
    }

    #[test]
    fn the_hash_sees_every_part() {
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]), "parts are delimited");
        assert_ne!(fnv1a(&[b"x"]), fnv1a(&[b"y"]));
        assert_eq!(fnv1a(&[b"x"]), fnv1a(&[b"x"]));
    }
}
