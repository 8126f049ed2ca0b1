//! A lab's starting point as a tree of files: made from the reference's tracked files
//! (`markers::strip`), written out as a fresh repository (`export`) or into a scratch tree
//! that is kept between runs (`sync`, for `lab check` and official grading), and the lock
//! file that records the graders' files as they were handed out.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::config::{Lab, Labs};
use super::markers;

/// Where the lock of a handed-out tree lives.
pub const LOCK: &str = "labs/lock.toml";

/// One file of a tree: its path relative to the root, its bytes, whether it is executable.
#[derive(Clone)]
pub struct File {
    pub path: String,
    pub bytes: Vec<u8>,
    pub exec: bool,
}

pub fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .current_dir(root)
        .args(args)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!("git {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The files git tracks in `root`, as they are in the working tree (a tracked file deleted
/// from the working tree is left out).
pub fn tracked(root: &Path) -> Result<Vec<File>, String> {
    let listing = git(root, &["ls-files", "-z", "--stage"])?;
    let mut files = Vec::new();
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        // "100644 <sha> 0\tpath"
        let (meta, path) = entry.split_once('\t').ok_or_else(|| format!("unexpected git ls-files line {entry:?}"))?;
        let exec = meta.starts_with("100755");
        match std::fs::read(root.join(path)) {
            Ok(bytes) => files.push(File { path: path.to_string(), bytes, exec }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read {path}: {e}")),
        }
    }
    Ok(files)
}

/// The reference files with every `.rs` file's lab markers checked: the regions of each
/// file, by path.
pub fn regions(files: &[File]) -> Result<BTreeMap<String, Vec<markers::Region>>, String> {
    let mut out = BTreeMap::new();
    // xtask's own tests spell markers out in string literals; it is never a lab's file.
    for f in files.iter().filter(|f| f.path.ends_with(".rs") && !f.path.starts_with("xtask/")) {
        let text = String::from_utf8_lossy(&f.bytes);
        let r = markers::regions(&text).map_err(|e| format!("{}:{e}", f.path))?;
        if !r.is_empty() {
            out.insert(f.path.clone(), r);
        }
    }
    Ok(out)
}

/// Lab `lab`'s starting point from the reference's files, and the paths it changed.
pub fn starting_point(files: &[File], lab: &Lab) -> Result<(Vec<File>, Vec<String>), String> {
    let mut out = Vec::with_capacity(files.len());
    let mut changed = Vec::new();
    for f in files {
        let mut f = f.clone();
        if f.path.ends_with(".rs") && !f.path.starts_with("xtask/") {
            let text = String::from_utf8_lossy(&f.bytes).into_owned();
            if let Some(stripped) = markers::strip(&text, lab.number).map_err(|e| format!("{}:{e}", f.path))? {
                let has_region =
                    markers::regions(&text).map_err(|e| format!("{}:{e}", f.path))?.iter().any(|r| r.lab == lab.number);
                if has_region {
                    changed.push(f.path.clone());
                }
                f.bytes = stripped.into_bytes();
            }
        }
        out.push(f);
    }
    Ok((out, changed))
}

/// The lock of a handed-out tree: the git object id of every protected file in it.
pub fn lock_of(dir: &Path, labs: &Labs, lab: &Lab, reference: &str) -> Result<String, String> {
    let paths: Vec<String> = all_files(dir)?.into_iter().filter(|p| labs.is_protected(p) && !unlocked(p)).collect();
    let hashes = hash_objects(dir, &paths)?;
    let mut s = format!(
        "# Written by `cargo xtask lab export {n}`: the graders' files of this tree as they were handed\n\
         # out. `cargo xtask grade {n}` says so, and exits 2, if any of them changed.\n\
         lab = {n}\nreference = \"{reference}\"\n\n[files]\n",
        n = lab.number
    );
    for (p, h) in paths.iter().zip(&hashes) {
        s.push_str(&format!("{p:?} = \"{h}\"\n"));
    }
    Ok(s)
}

#[derive(serde::Deserialize)]
struct LockFile {
    lab: u32,
    files: BTreeMap<String, String>,
}

/// What changed among the graders' files, checked against the tree's lock.
pub struct Tamper {
    /// The lab the tree was handed out for.
    pub lab: u32,
    pub checked: usize,
    /// "changed: PATH", "removed: PATH", "added: PATH".
    pub findings: Vec<String>,
}

/// Files under protected paths that are not the graders' to lock: the lock itself, a
/// property test's `*.proptest-regressions` (written by `cargo test` when a case fails),
/// and editors' scratch files (`.x.swp`, `x~`, `#x#`, `.DS_Store`).
fn unlocked(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path == LOCK
        || name.ends_with(".proptest-regressions")
        || (name.starts_with('.') && (name.ends_with(".swp") || name.ends_with(".swo")))
        || name.ends_with('~')
        || (name.starts_with('#') && name.ends_with('#'))
        || name == ".DS_Store"
}

/// The first commit of the repository at `root`: a hand-out's one commit.
pub fn root_commit(root: &Path) -> Option<String> {
    let out = git(root, &["rev-list", "--max-parents=0", "HEAD"]).ok()?;
    out.lines().last().map(str::to_string)
}

/// A file as it was in `commit`.
fn show(root: &Path, commit: &str, path: &str) -> Option<String> {
    git(root, &["show", &format!("{commit}:{path}")]).ok()
}

/// `None` for a tree without a lock (the reference itself). The lock is read from the
/// hand-out's own commit when there is one, so editing or deleting the working copy of
/// `labs/lock.toml` hides nothing.
pub fn check_lock(root: &Path, labs: &Labs) -> Result<Option<Tamper>, String> {
    let path = root.join(LOCK);
    let first = root_commit(root);
    let committed = first.as_deref().and_then(|c| show(root, c, LOCK));
    let text = match (committed, std::fs::read_to_string(&path)) {
        (Some(t), _) => t,
        (None, Ok(t)) => t,
        (None, Err(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        (None, Err(e)) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let lock: LockFile = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let present: BTreeSet<String> = all_files(root)?.into_iter().collect();
    let mut findings = Vec::new();
    let locked: BTreeMap<&String, &String> = lock.files.iter().filter(|(p, _)| !unlocked(p)).collect();
    let kept: Vec<String> = locked.keys().filter(|p| present.contains(**p)).map(|p| p.to_string()).collect();
    let hashes = hash_objects(root, &kept)?;
    for (p, h) in kept.iter().zip(&hashes) {
        if locked[p] != h {
            findings.push(format!("changed: {p}"));
        }
    }
    for p in locked.keys().filter(|p| !present.contains(**p)) {
        findings.push(format!("removed: {p}"));
    }
    for p in present.iter().filter(|p| labs.is_protected(p) && !unlocked(p) && !lock.files.contains_key(*p)) {
        findings.push(format!("added: {p}"));
    }
    // The lab's own files: only the code between the markers is the student's.
    if let (Some(first), Ok(lab)) = (first, labs.lab(lock.lab)) {
        for f in &lab.files {
            let Some(pristine) = show(root, &first, f) else { continue };
            let theirs = std::fs::read_to_string(root.join(f)).unwrap_or_default();
            if let Some(why) = outside_change(&pristine, &theirs, lab.number) {
                findings.push(format!("changed outside the lab's regions: {f} ({why})"));
            }
        }
    }
    Ok(Some(Tamper { lab: lock.lab, checked: locked.len(), findings }))
}

/// How `theirs` differs from the hand-out's `pristine` outside lab `lab`'s regions, if it does.
pub fn outside_change(pristine: &str, theirs: &str, lab: u32) -> Option<String> {
    let ours = markers::outside(pristine, lab).ok()?;
    let them = match markers::outside(theirs, lab) {
        Ok(t) => t,
        Err(e) => return Some(format!("its lab markers are broken: {e}")),
    };
    let same = |a: &(usize, String), b: &(usize, String)| a.1 == b.1;
    if ours.len() == them.len() && ours.iter().zip(&them).all(|(a, b)| same(a, b)) {
        return None;
    }
    let at = ours.iter().zip(&them).position(|(a, b)| !same(a, b)).unwrap_or(ours.len().min(them.len()));
    let line = them.get(at).or(them.last()).map_or(1, |l| l.0);
    Some(format!("line {line}: write only between the markers"))
}

/// `git hash-object` of each path (relative to `dir`), in order.
fn hash_objects(dir: &Path, paths: &[String]) -> Result<Vec<String>, String> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    use std::io::Write;
    let mut child = Command::new("git")
        .current_dir(dir)
        .args(["hash-object", "--no-filters", "--stdin-paths"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git hash-object: {e}"))?;
    let input = paths.join("\n") + "\n";
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| format!("git hash-object: {e}"))?;
    let _ = writer.join();
    let hashes: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    if !out.status.success() || hashes.len() != paths.len() {
        return Err("git hash-object failed".into());
    }
    Ok(hashes)
}

/// Every file below `dir` (relative paths), leaving out `.git/` and the top-level `target/`.
pub fn all_files(dir: &Path) -> Result<Vec<String>, String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for e in entries {
            let e = e.map_err(|e| e.to_string())?;
            let name = e.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
            if name == ".git" || path == "target" {
                continue;
            }
            let ty = e.file_type().map_err(|e| e.to_string())?;
            if ty.is_dir() {
                walk(&e.path(), &path, out)?;
            } else {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    out.sort();
    Ok(out)
}

fn write_file(dir: &Path, f: &File) -> Result<(), String> {
    let path = dir.join(&f.path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(&path, &f.bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mode = if f.exec { 0o755 } else { 0o644 };
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// Make `dir` hold exactly `files` (besides `target/` and `.git/`), rewriting only the files
/// whose bytes differ, so cargo's incremental builds in it stay valid between labs.
pub fn sync(dir: &Path, files: &[File]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let wanted: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for stale in all_files(dir)?.iter().filter(|p| !wanted.contains(p.as_str())) {
        std::fs::remove_file(dir.join(stale)).map_err(|e| format!("cannot remove {stale}: {e}"))?;
    }
    for f in files {
        if std::fs::read(dir.join(&f.path)).ok().as_deref() != Some(&f.bytes[..]) {
            write_file(dir, f)?;
        }
    }
    Ok(())
}

/// Write a fresh repository at `out` holding `files`, the answers template and the lock,
/// committed once: a student's tree carries no history of the solution.
pub fn export(out: &Path, files: &[File], labs: &Labs, lab: &Lab, reference: &str) -> Result<(), String> {
    if out.exists() && std::fs::read_dir(out).map_err(|e| e.to_string())?.next().is_some() {
        return Err(format!("{} exists and is not empty", out.display()));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for f in files {
        write_file(out, f)?;
    }
    let answers = File {
        path: lab.answers(),
        bytes: format!(
            "# Lab {}: {} — answers\n\nAnswer the questions of {} here (15 points, graded by hand).\n",
            lab.number,
            lab.title,
            lab.handout()
        )
        .into_bytes(),
        exec: false,
    };
    write_file(out, &answers)?;
    let lock = lock_of(out, labs, lab, reference)?;
    write_file(out, &File { path: LOCK.into(), bytes: lock.into_bytes(), exec: false })?;
    git(out, &["init", "-q", "-b", "main"])?;
    git(out, &["add", "-A"])?;
    let msg = format!("Tally lab {}: {} (starting point)", lab.number, lab.title);
    git(out, &["-c", "user.name=Tally labs", "-c", "user.email=labs@tally.invalid", "commit", "-q", "-m", &msg])?;
    Ok(())
}

/// Unpack a tar archive (gzipped or not: `tar` tells) into a fresh temporary directory named
/// after `what`; returns the directory.
pub fn unpack(archive: &Path, what: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("tally-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let status = Command::new("tar")
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(&dir)
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !status.success() {
        return Err(format!("cannot unpack {}", archive.display()));
    }
    Ok(dir)
}

/// The files of `commit` in the repository at `root`, as [`File`]s (the hand-out's pristine
/// tree, or the reference a hand-out was made from).
pub fn files_of_commit(root: &Path, commit: &str) -> Result<Vec<File>, String> {
    let archive = std::env::temp_dir().join(format!("tally-commit-{}.tar", std::process::id()));
    git(root, &["archive", "--format=tar", "-o", &archive.to_string_lossy(), commit])?;
    let dir = unpack(&archive, "commit");
    let _ = std::fs::remove_file(&archive);
    let dir = dir?;
    let mut files = Vec::new();
    for path in all_files(&dir)? {
        let full = dir.join(&path);
        let bytes = std::fs::read(&full).map_err(|e| format!("cannot read {path}: {e}"))?;
        let exec = std::fs::metadata(&full).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
        files.push(File { path, bytes, exec });
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(files)
}
