//! The kernel's floors, checked: every module of the kernel binary calls only the floors
//! below its own (`docs/architecture.md`).
//!
//! The kernel binary (`kernel/src/`) is built in floors, each a folder. A module may use
//! any floor below its own, and a few named neighbours on its own floor ([`SIDEWAYS`]);
//! `main.rs` wires them all. The check reads the source: every `crate::NAME` path (in
//! code, not in comments) from a file under `kernel/src/FLOOR/` is an edge FLOOR → NAME.
//! `cargo xtask layers` prints the floors and the edges found; the host tests below fail on
//! an edge that goes up, a module that belongs to no floor, two module files with one name
//! (or one named like a library crate), a `.S` file outside the self-tests, and a system-call
//! number written as a number in a test program's assembly.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, lowest first. A module may call the modules of any lower floor.
pub const FLOORS: &[(&str, &[&str])] = &[
    ("base", &["base"]),
    ("sync", &["sync"]),
    ("sched", &["sched"]),
    ("file, bus, drivers, fs", &["file", "bus", "drivers", "fs"]),
    ("proc, acct", &["proc", "acct"]),
    ("irq, trap", &["irq", "trap"]),
    ("stats", &["stats"]),
    ("syscall", &["syscall"]),
    ("demo, selftest, bench", &["demo", "selftest", "bench"]),
];

/// Calls between two modules of the same floor that are allowed, caller first. They go one
/// way only, so the floors stay free of cycles.
pub const SIDEWAYS: &[(&str, &str)] = &[
    // A descriptor may be a bus socket.
    ("file", "bus"),
    // A descriptor may be a file on /var.
    ("file", "fs"),
    // A descriptor may be the console (poll asks the tty whether a read would wait).
    ("file", "drivers"),
    // The file system's owner thread reads and writes the accounting disk.
    ("fs", "drivers"),
    // The readers of the accounting read the task table.
    ("acct", "proc"),
    // The boot demo is also a self-test.
    ("selftest", "demo"),
];

/// The module that wires the floors together, allowed to call every one.
const ROOT: &str = "main";

/// The floor index of top-level module `m`.
pub fn floor_of(m: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, ms)| ms.contains(&m))
}

/// May module `from` use module `to`?
pub fn allowed(from: &str, to: &str) -> bool {
    if from == to || from == ROOT {
        return true;
    }
    match (floor_of(from), floor_of(to)) {
        (Some(a), Some(b)) => b < a || (a == b && SIDEWAYS.contains(&(from, to))),
        _ => false,
    }
}

/// `text` without its comments (`//` to the end of a line, `/* */`) and string literals,
/// so that a path named in a doc comment or a message is not taken for a call.
pub fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1).copied()) {
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            (b'"', _) => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            // A character literal that is a quote ('"') would open a string above.
            (b'\'', Some(b'"')) => {
                out.push_str("'\"'");
                i += 3;
            }
            (c, _) => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

/// The top-level modules a piece of code names through `crate::`: `crate::a::b`, and each
/// name in `crate::{a, b::c}`.
pub fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let boundary = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric() && rest.as_bytes()[at - 1] != b'_';
        if boundary {
            if let Some(group) = after.strip_prefix('{') {
                for name in top_level_names(group) {
                    found.insert(name);
                }
            } else {
                let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
        rest = after;
    }
    found
}

/// The first path segment of each item of a `{...}` use group (up to its closing brace).
fn top_level_names(group: &str) -> Vec<String> {
    let mut names = Vec::new();
    let (mut depth, mut item_start) = (0usize, true);
    let mut chars = group.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && (c.is_alphanumeric() || c == '_') => {
                let name: String = group[i..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                for _ in 1..name.chars().count() {
                    chars.next();
                }
                if name != "self" {
                    names.push(name);
                }
                item_start = false;
            }
            _ => {}
        }
    }
    names
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    files_with(dir, "rs")
}

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The top-level module a file of `src` belongs to (`main` for `main.rs`).
fn top_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let first = rel.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// How deep in the module tree `file` is (`a/mod.rs` and `a.rs` 1, `a/b.rs` 2): that many
/// `super::` lead from its code to the crate root.
fn module_depth(src: &Path, file: &Path) -> usize {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let n = rel.components().count();
    if rel.file_name().is_some_and(|f| f == "mod.rs") {
        n - 1
    } else {
        n
    }
}

/// The top-level modules that code at module depth `depth` reaches with enough `super::` to
/// climb to the crate root (`super::super::proc` from `sched/state.rs`).
pub fn super_paths(code: &str, depth: usize) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    if depth == 0 {
        return found;
    }
    let climb = "super::".repeat(depth);
    let mut rest = code;
    while let Some(at) = rest.find(&climb) {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + climb.len()..];
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            if let Some(group) = after.strip_prefix('{') {
                found.extend(top_level_names(group));
            } else {
                let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != "super" {
                    found.insert(name);
                }
            }
        }
        rest = after;
    }
    found
}

/// The edges of the kernel binary whose sources are in `src`: (from, to) → the files.
pub fn edges(src: &Path) -> BTreeMap<(String, String), Vec<PathBuf>> {
    let mut edges: BTreeMap<(String, String), Vec<PathBuf>> = BTreeMap::new();
    for file in rust_files(src) {
        let from = top_module(src, &file);
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let code = code_only(&text);
        let depth = if from == ROOT { 0 } else { module_depth(src, &file) };
        for to in crate_paths(&code).into_iter().chain(super_paths(&code, depth)) {
            if to != from {
                edges.entry((from.clone(), to)).or_default().push(file.clone());
            }
        }
    }
    edges
}

/// Everything wrong with the floors of the kernel in `root` (the workspace), one line each.
pub fn check(root: &Path) -> Vec<String> {
    let src = root.join("kernel/src");
    let mut problems = Vec::new();
    for file in rust_files(&src) {
        let m = top_module(&src, &file);
        if m != ROOT && floor_of(&m).is_none() {
            problems.push(format!("{}: module `{m}` is on no floor (add it to xtask/src/layers.rs)", file.display()));
        }
    }
    for ((from, to), files) in edges(&src) {
        if !allowed(&from, &to) {
            problems.push(format!("`{from}` calls `{to}`, which is not below it: {}", files[0].display()));
        }
    }
    problems.extend(check_names(root));
    problems.extend(check_assembly(root));
    problems
}

/// A module's name as `mod` declares it: the file's stem, or its folder's for `mod.rs`.
fn module_name(file: &Path) -> String {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if stem == "mod" {
        file.parent().and_then(|p| p.file_name()).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    } else {
        stem
    }
}

/// No two modules of the kernel binary share a name, and none is named like a library
/// crate (`kernel/libs/NAME`) or the HAL.
fn check_names(root: &Path) -> Vec<String> {
    let src = root.join("kernel/src");
    let mut crates: BTreeSet<String> = std::fs::read_dir(root.join("kernel/libs"))
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    crates.insert("hal".into());
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut problems = Vec::new();
    for file in rust_files(&src) {
        if file == src.join("main.rs") {
            continue;
        }
        let name = module_name(&file);
        if crates.contains(&name) {
            problems.push(format!("{}: module `{name}` has the name of a library crate", file.display()));
        }
        if let Some(first) = seen.insert(name.clone(), file.clone()) {
            problems.push(format!("module name `{name}` is used twice: {} and {}", first.display(), file.display()));
        }
    }
    problems
}

/// Assembly lives only with the self-tests, and system-call numbers in it come from
/// `tally_uapi` as `{NAME}` operands: a `mov eax, N` that a `syscall` follows (before eax is
/// written again or the code branches) is a number written by hand.
fn check_assembly(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for file in files_with(&root.join("kernel"), "S").into_iter().chain(files_with(&root.join("userland"), "S")) {
        if !file.starts_with(root.join("kernel/src/selftest")) {
            problems.push(format!("{}: assembly outside kernel/src/selftest", file.display()));
        }
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        problems.extend(
            raw_syscall_numbers(&text).into_iter().map(|n| format!("{}:{n}: a raw system-call number", file.display())),
        );
    }
    problems
}

/// The 1-based lines of `asm` that load a literal number into eax/rax for a `syscall`.
pub fn raw_syscall_numbers(asm: &str) -> Vec<usize> {
    let lines: Vec<String> = asm
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").split('#').next().unwrap_or("").trim().to_lowercase())
        .collect();
    let mut found = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(operand) = l.strip_prefix("mov eax,").or_else(|| l.strip_prefix("mov rax,")) else { continue };
        let operand = operand.trim();
        let literal = operand.parse::<i64>().is_ok() || operand.starts_with("0x");
        if !literal {
            continue;
        }
        for next in &lines[i + 1..] {
            if next == "syscall" {
                found.push(i + 1);
                break;
            }
            let writes_eax = next.starts_with("mov eax") || next.starts_with("mov rax") || next.starts_with("xor eax");
            if writes_eax
                || next.starts_with('j')
                || next.ends_with(':')
                || next.starts_with("div")
                || next.starts_with("call")
            {
                break;
            }
        }
    }
    found
}

/// `cargo xtask layers`: the floors, what each module calls, and any problem.
pub fn print(root: &Path) -> bool {
    let src = root.join("kernel/src");
    let edges = edges(&src);
    for (i, (name, _)) in FLOORS.iter().enumerate().rev() {
        println!("floor {i}: {name}");
    }
    println!("\ncalls (from -> to):");
    let mut by_from: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        by_from.entry(from).or_default().push(to);
    }
    for (from, tos) in by_from {
        println!("  {from:<9} -> {}", tos.join(" "));
    }
    let problems = check(root);
    if problems.is_empty() {
        println!("\nevery call goes down a floor (or to a named neighbour); module names are unique");
        true
    } else {
        println!();
        for p in &problems {
            println!("layers: {p}");
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
    }

    #[test]
    fn the_kernel_calls_only_down_its_floors() {
        let problems = check(&root());
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn the_check_sees_the_calls_that_exist() {
        // A check that found no edge at all would pass for the wrong reason.
        let e = edges(&root().join("kernel/src"));
        for (from, to) in [("proc", "sched"), ("sched", "sync"), ("syscall", "proc"), ("acct", "proc"), ("file", "bus")]
        {
            assert!(e.contains_key(&(from.to_string(), to.to_string())), "{from} -> {to} not found");
        }
    }

    #[test]
    fn an_upward_call_is_refused() {
        assert!(!allowed("sched", "proc"));
        assert!(!allowed("bus", "proc"));
        assert!(!allowed("proc", "acct"));
        assert!(!allowed("sync", "sched"));
        assert!(!allowed("drivers", "irq"));
        assert!(!allowed("bus", "file"));
        assert!(allowed("proc", "sched"));
        assert!(allowed("main", "selftest"));
        assert!(!allowed("nowhere", "base"));
    }

    #[test]
    fn paths_are_read_from_code_not_comments_or_strings() {
        let code = code_only(
            "//! see `crate::proc`\nuse crate::{sched::{self, slot_of}, sync};\nfn f() { crate::base::x(); \
             let s = \"crate::bus\"; let c = '\"'; /* crate::acct */ }\nuse crate::file::{a, b};",
        );
        let found: Vec<String> = crate_paths(&code).into_iter().collect();
        assert_eq!(found, ["base", "file", "sched", "sync"]);
    }

    #[test]
    fn paths_that_climb_to_the_root_count_too() {
        let code = "use super::state;\nuse super::super::proc;\nfn f() { super::super::{sync, base::x}; }";
        assert_eq!(super_paths(code, 2).into_iter().collect::<Vec<_>>(), ["base", "proc", "sync"]);
        assert_eq!(super_paths("use super::sched;", 1).into_iter().collect::<Vec<_>>(), ["sched"]);
        assert!(super_paths("use super::state;", 2).is_empty());
    }

    #[test]
    fn raw_numbers_before_syscall_are_found() {
        let asm = "mov eax, 1\n  xor edx, edx\n  div ecx\nmov eax, {SYS_EXIT}\nsyscall\n\
                   mov eax, 60 // exit\nmov edi, 3\nsyscall\nmov eax, 0x27\nsyscall\n";
        assert_eq!(raw_syscall_numbers(asm), [6, 9]);
    }
}
