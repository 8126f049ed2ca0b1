//! # tally-selftests — the kernel's self-test table, generated from the scenarios in `tests/`
//!
//! A QEMU scenario (`tests/NAME.toml`, described in `xtask/src/scenario.rs`) that runs a
//! kernel self-test names the test's function, and that one line registers it:
//!
//! ```toml
//! selftest = "ring3::smoke"  # a path from kernel/src/selftest/; `crate::demo::run` for one elsewhere
//! cmdline = "loglevel=debug" # optional: more words for the kernel command line
//! ```
//!
//! The self-test takes the scenario's name: `test=NAME` on the kernel command line runs the
//! function of `tests/NAME.toml`. Two halves read the same files through this crate:
//!
//! * the kernel's build script (`kernel/build.rs`, on the host) turns every scenario with a
//!   `selftest` into one entry of the table `TESTS` ([`generate`]), which
//!   `kernel/src/selftest/mod.rs` includes; a malformed `selftest` stops the build here, and
//!   a path that names no function stops it in the compiler, on the table's line, which
//!   names its scenario file. The table is rebuilt whenever `tests/` changes, so it cannot
//!   disagree with the scenarios;
//! * `cargo xtask test` boots each scenario with [`kernel_cmdline`]: `test=NAME`, then the
//!   scenario's own `cmdline` words.
//!
//! Scenarios without `selftest` (a shell script, init's arguments) keep their `cmdline` as
//! it is and add nothing to the table.

use std::path::{Path, PathBuf};

/// One scenario's self-test: the scenario's name and the path of the function it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selftest {
    /// The scenario's name (its file name without `.toml`): the `NAME` of `test=NAME`.
    pub name: String,
    /// The function, as a Rust path from `kernel/src/selftest/` (e.g. `ring3::smoke`).
    pub path: String,
}

/// The kernel command line a scenario boots with: with a self-test, `test=NAME` followed by
/// the scenario's `cmdline` words; without one, its `cmdline` unchanged.
pub fn kernel_cmdline(name: &str, selftest: Option<&str>, cmdline: &str) -> String {
    match (selftest, cmdline.trim()) {
        (None, _) => cmdline.to_string(),
        (Some(_), "") => format!("test={name}"),
        (Some(_), words) => format!("test={name} {words}"),
    }
}

/// Check a scenario's `selftest` against its name and its `cmdline`: the name must be a plain
/// command-line word, the path a Rust path, and `cmdline` must not choose a test of its own.
pub fn check(name: &str, selftest: &str, cmdline: &str) -> Result<(), String> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return Err(format!(
            "the scenario name {name:?} becomes `test={name}` on the kernel command line: \
             use letters, digits, `_` and `-` only"
        ));
    }
    check_path(selftest)?;
    let own = cmdline.split_whitespace().take_while(|w| *w != "--").find(|w| *w == "test" || w.starts_with("test="));
    if let Some(word) = own {
        return Err(format!(
            "`cmdline` has `{word}`, but `selftest` already puts `test={name}` on the command line: drop it"
        ));
    }
    Ok(())
}

/// A Rust path: identifiers separated by `::`.
fn check_path(path: &str) -> Result<(), String> {
    let ident = |s: &str| {
        let mut chars = s.chars();
        s != "_"
            && chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if path.split("::").all(ident) {
        Ok(())
    } else {
        Err(format!(
            "selftest = {path:?} is not a Rust path to a function \
             (e.g. \"ring3::smoke\", from kernel/src/selftest/, or \"crate::demo::run\")"
        ))
    }
}

/// The self-test of one scenario, from its file's text: `None` when it names none.
pub fn parse(name: &str, text: &str) -> Result<Option<Selftest>, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| toml_error(text, &e))?;
    let cmdline = match table.get("cmdline") {
        None => "",
        Some(toml::Value::String(s)) => s,
        Some(_) => return Err("`cmdline` must be a string".into()),
    };
    match table.get("selftest") {
        None => Ok(None),
        Some(toml::Value::String(path)) => {
            check(name, path, cmdline)?;
            Ok(Some(Selftest { name: name.to_string(), path: path.clone() }))
        }
        Some(_) => Err("`selftest` must be a string: the path of the test's function, e.g. \"ring3::smoke\"".into()),
    }
}

/// A TOML syntax error on one line (a build script's error is one line): where, and what.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message.to_string(),
    }
}

/// The scenario files in `dir` (every `*.toml`), sorted by name.
pub fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?.path();
        if path.extension().and_then(|e| e.to_str()) == Some("toml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The self-tests the scenario files name, in the files' order; every file's errors, each
/// prefixed with its path.
pub fn load(files: &[PathBuf]) -> Result<Vec<Selftest>, Vec<String>> {
    let mut tests = Vec::new();
    let mut errors = Vec::new();
    for path in files {
        let name = path.file_stem().unwrap_or_default().to_string_lossy();
        let parsed = std::fs::read_to_string(path).map_err(|e| e.to_string()).and_then(|text| parse(&name, &text));
        match parsed {
            Ok(Some(test)) => tests.push(test),
            Ok(None) => {}
            Err(e) => errors.push(format!("{}: {e}", path.display())),
        }
    }
    if errors.is_empty() {
        Ok(tests)
    } else {
        Err(errors)
    }
}

/// The table `TESTS` as Rust source, for `include!` in `kernel/src/selftest/mod.rs` (where
/// the type `Test` and the paths resolve). Each entry's line ends with its scenario file, so
/// a compiler error on a path that names no function shows which file to fix.
pub fn generate(tests: &[Selftest]) -> String {
    let mut out = String::from(
        "// Generated by kernel/build.rs from tests/*.toml (crate tally-selftests): do not edit.\n\
         // One entry per scenario with `selftest = \"PATH\"`: the scenario's name, the function.\n\
         const TESTS: &[(&str, Test)] = &[\n",
    );
    for t in tests {
        let (name, path) = (&t.name, &t.path);
        out.push_str(&format!("    (\"{name}\", {path}), // tests/{name}.toml: selftest = \"{path}\"\n"));
    }
    out.push_str("];\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(name: &str, path: &str) -> Selftest {
        Selftest { name: name.into(), path: path.into() }
    }

    #[test]
    fn a_selftest_puts_test_name_first_then_the_scenarios_words() {
        assert_eq!(kernel_cmdline("heap", Some("memory::heap_and_frames"), ""), "test=heap");
        assert_eq!(kernel_cmdline("heap", Some("memory::heap_and_frames"), "  "), "test=heap");
        assert_eq!(
            kernel_cmdline("heap_debug", Some("memory::heap"), "loglevel=debug"),
            "test=heap_debug loglevel=debug"
        );
        assert_eq!(kernel_cmdline("x", Some("f"), " demo=off -- hello a ; sh "), "test=x demo=off -- hello a ; sh");
    }

    #[test]
    fn without_a_selftest_the_cmdline_is_kept_as_written() {
        assert_eq!(kernel_cmdline("shell", None, "init=sh demo=off"), "init=sh demo=off");
        assert_eq!(kernel_cmdline("default_boot", None, ""), "");
        assert_eq!(kernel_cmdline("init", None, "demo=off -- hello one ; sh"), "demo=off -- hello one ; sh");
    }

    #[test]
    fn parse_reads_selftest_and_ignores_the_judges_fields() {
        let text = "description = \"d\"\nselftest = \"user::smoke\"\nexpect = \"success\"\nserial = [\"a\"]\n";
        assert_eq!(parse("user_smoke", text), Ok(Some(test("user_smoke", "user::smoke"))));
        assert_eq!(parse("demo", "selftest = \"crate::demo::run\"\n"), Ok(Some(test("demo", "crate::demo::run"))));
        assert_eq!(
            parse("boot", "selftest = \"boot\"\ncmdline = \"loglevel=debug\"\n"),
            Ok(Some(test("boot", "boot")))
        );
        assert_eq!(parse("shell", "cmdline = \"init=sh demo=off\"\nexpect = \"success\"\n"), Ok(None));
        assert_eq!(parse("default_boot", "cmdline = \"\"\n"), Ok(None));
    }

    #[test]
    fn parse_refuses_what_would_not_make_a_table_entry() {
        let err = |name: &str, text: &str| parse(name, text).unwrap_err();
        assert!(err("x", "selftest = [\"user::smoke\"]\n").contains("must be a string"));
        assert!(err("x", "selftest = \"f\"\ncmdline = 3\n").contains("`cmdline` must be a string"));
        let bad_paths =
            ["", "user::", "::smoke", "user smoke", "user::smoke()", "user.smoke", "1user::smoke", "_", "f; panic!()"];
        for bad in bad_paths {
            let e = err("x", &format!("selftest = {bad:?}\n"));
            assert!(e.contains("is not a Rust path"), "{bad:?}: {e}");
        }
        let e = err("heap", "selftest = \"memory::heap_and_frames\"\ncmdline = \"test=heap\"\n");
        assert!(e.contains("`test=heap`") && e.contains("drop it"), "{e}");
        assert!(err("x", "selftest = \"f\"\ncmdline = \"loglevel=debug test\"\n").contains("`test`"));
        let init_words = "selftest = \"f\"\ncmdline = \"-- test=1\"\n";
        assert_eq!(parse("x", init_words), Ok(Some(test("x", "f"))), "the words after `--` are init's");
        assert!(err("two words", "selftest = \"f\"\n").contains("letters, digits"));
        assert!(err("a=b", "selftest = \"f\"\n").contains("letters, digits"));
        assert_eq!(
            err("x", "description = \"d\"\nselftest = \"f\n"),
            "line 2, column 14: invalid basic string, expected `\"`"
        );
    }

    #[test]
    fn load_reports_every_bad_file_by_path_and_keeps_the_order() {
        let dir = std::env::temp_dir().join(format!("tally-selftests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        write("b.toml", "selftest = \"sched::sleep\"\n");
        write("a.toml", "selftest = \"boot\"\n");
        write("c.toml", "cmdline = \"init=sh\"\n");
        write("b_debug.toml", "selftest = \"sched::sleep\"\ncmdline = \"loglevel=debug\"\n");
        write("notes.txt", "selftest = \"ignored\"\n");
        let files = scenario_files(&dir).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ["a.toml", "b.toml", "b_debug.toml", "c.toml"]);
        let two_of_one = vec![test("a", "boot"), test("b", "sched::sleep"), test("b_debug", "sched::sleep")];
        assert_eq!(load(&files), Ok(two_of_one), "one function, two scenarios: two entries");
        write("d.toml", "selftest = \"no such\"\n");
        write("e.toml", "selftest = 1\n");
        let errors = load(&scenario_files(&dir).unwrap()).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("d.toml: selftest = \"no such\" is not a Rust path"), "{}", errors[0]);
        assert!(errors[1].contains("e.toml: `selftest` must be a string"), "{}", errors[1]);
    }

    #[test]
    fn generate_writes_one_entry_per_selftest_naming_its_file() {
        let src = generate(&[test("boot", "boot"), test("user_smoke", "user::smoke")]);
        assert!(src.contains("const TESTS: &[(&str, Test)] = &[\n"), "{src}");
        assert!(src.contains("\n    (\"boot\", boot), // tests/boot.toml: selftest = \"boot\"\n"), "{src}");
        assert!(
            src.contains("\n    (\"user_smoke\", user::smoke), // tests/user_smoke.toml: selftest = \"user::smoke\"\n"),
            "{src}"
        );
        assert!(src.ends_with("];\n"), "{src}");
        assert!(generate(&[]).ends_with("= &[\n];\n"), "an empty table is still a table");
    }
}
