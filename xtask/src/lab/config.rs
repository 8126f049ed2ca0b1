//! `labs/labs.toml`: the labs, the files each hands out, the graded items and their points,
//! and the graders' own (protected) files. The file's header comment teaches the format.

use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

/// Points a lab's tests are worth; the written answers are worth [`MANUAL_POINTS`] more.
pub const TEST_POINTS: u32 = 85;
pub const MANUAL_POINTS: u32 = 15;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Labs {
    pub protected: Protected,
    #[serde(default, rename = "lab")]
    pub labs: Vec<Lab>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Protected {
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lab {
    pub number: u32,
    /// The slug: the handout is `docs/labs/NN-name.md`.
    pub name: String,
    pub title: String,
    /// Whether the starting point boots (its stubs keep the kernel running).
    pub boots: bool,
    /// The files the student may change; the lab's regions lie in them.
    pub files: Vec<String>,
    /// Earlier labs whose subject this one builds on (for the handouts' sequence).
    #[serde(default)]
    pub depends: Vec<u32>,
    #[serde(default, rename = "item")]
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    pub name: String,
    /// A host test as `cargo xtask test` names it; `…::*` is every test under a path.
    #[serde(default)]
    pub host: Option<String>,
    /// A QEMU scenario (`tests/NAME.toml`).
    #[serde(default)]
    pub qemu: Option<String>,
    pub points: u32,
    /// The item that must pass before this one is run.
    #[serde(default)]
    pub parent: Option<String>,
}

/// What an item runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Test {
    Host(String),
    Qemu(String),
}

impl Item {
    pub fn test(&self) -> Test {
        match (&self.host, &self.qemu) {
            (Some(h), _) => Test::Host(h.clone()),
            (None, Some(q)) => Test::Qemu(q.clone()),
            (None, None) => Test::Qemu(String::new()),
        }
    }
}

impl Test {
    pub fn kind(&self) -> &'static str {
        match self {
            Test::Host(_) => "host",
            Test::Qemu(_) => "qemu",
        }
    }
    pub fn id(&self) -> &str {
        match self {
            Test::Host(s) | Test::Qemu(s) => s,
        }
    }
}

impl Lab {
    /// `docs/labs/NN-name.md`.
    pub fn handout(&self) -> String {
        format!("docs/labs/{:02}-{}.md", self.number, self.name)
    }
    /// The student's written answers, at the top of the tree.
    pub fn answers(&self) -> String {
        format!("answers-{:02}.md", self.number)
    }
    pub fn item(&self, name: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.name == name)
    }
}

impl Labs {
    pub fn load(root: &Path) -> Result<Labs, String> {
        let path = root.join("labs/labs.toml");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Labs::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The labs of a `labs.toml`'s text (a reference commit's, for official grading).
    pub fn parse(text: &str) -> Result<Labs, String> {
        let labs: Labs = toml::from_str(text).map_err(|e| e.to_string())?;
        labs.validate()?;
        Ok(labs)
    }

    pub fn lab(&self, number: u32) -> Result<&Lab, String> {
        self.labs.iter().find(|l| l.number == number).ok_or_else(|| {
            let have: Vec<String> = self.labs.iter().map(|l| l.number.to_string()).collect();
            format!("there is no lab {number} (labs: {})", have.join(", "))
        })
    }

    /// The rules of the file that need no other file to check: numbering, points, items.
    fn validate(&self) -> Result<(), String> {
        let mut last = 0;
        for lab in &self.labs {
            let n = lab.number;
            if n <= last {
                return Err(format!(
                    "labs must be numbered in increasing order from 1; lab {n} comes after lab {last}"
                ));
            }
            last = n;
            if lab.name.is_empty()
                || !lab.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                return Err(format!("lab {n}: name {:?} must be a lowercase slug", lab.name));
            }
            if lab.files.is_empty() {
                return Err(format!("lab {n}: no files"));
            }
            if let Some(d) = lab.depends.iter().find(|&&d| d >= n) {
                return Err(format!("lab {n}: depends on lab {d}, which is not an earlier lab"));
            }
            let total: u32 = lab.items.iter().map(|i| i.points).sum();
            if total != TEST_POINTS {
                return Err(format!("lab {n}: items are worth {total} points, not {TEST_POINTS}"));
            }
            let mut seen = BTreeSet::new();
            for item in &lab.items {
                if !seen.insert(item.name.as_str()) {
                    return Err(format!("lab {n}: two items are named {:?}", item.name));
                }
                if item.host.is_some() == item.qemu.is_some() {
                    return Err(format!("lab {n}: item {:?} needs exactly one of `host` and `qemu`", item.name));
                }
                if let Some(p) = &item.parent {
                    // Parents come first, so the order of the file is an order to run them in.
                    if !seen.contains(p.as_str()) || p == &item.name {
                        return Err(format!("lab {n}: item {:?}'s parent {p:?} is not an item above it", item.name));
                    }
                }
            }
            for f in &lab.files {
                if self.is_protected(f) {
                    return Err(format!("lab {n}: {f} is a protected file; a student cannot be asked to change it"));
                }
            }
        }
        Ok(())
    }

    /// Whether `path` (relative, `/`-separated) is one of the graders' files.
    pub fn is_protected(&self, path: &str) -> bool {
        self.protected.paths.iter().any(|p| matches(p, path))
    }
}

/// `pattern` against a relative path: a trailing `/` matches everything below a directory;
/// `*` matches within one component.
pub fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, dir) = match pattern.strip_suffix('/') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let pat: Vec<&str> = pattern.split('/').collect();
    let comps: Vec<&str> = path.split('/').collect();
    if comps.len() < pat.len() || (!dir && comps.len() != pat.len()) || (dir && comps.len() == pat.len()) {
        return false;
    }
    pat.iter().zip(&comps).all(|(p, c)| glob(p, c))
}

fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else { return false };
            (0..=rest.len()).filter(|&i| rest.is_char_boundary(i)).any(|i| glob(tail, &rest[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_patterns() {
        assert!(matches("tests/", "tests/boot.toml"));
        assert!(!matches("tests/", "tests"));
        assert!(matches("kernel/libs/*/tests/", "kernel/libs/msgbus/tests/common/mod.rs"));
        assert!(matches("kernel/libs/*/src/*_tests.rs", "kernel/libs/microstate/src/clock_tests.rs"));
        assert!(!matches("kernel/libs/*/src/*_tests.rs", "kernel/libs/microstate/src/clock.rs"));
        assert!(matches("Cargo.toml", "Cargo.toml"));
        assert!(!matches("Cargo.toml", "boot/Cargo.toml"));
        assert!(matches("*/Cargo.toml", "boot/Cargo.toml"));
    }

    fn lab(items: &str) -> Result<Labs, String> {
        let text = format!(
            "[protected]\npaths = [\"tests/\"]\n[[lab]]\nnumber = 1\nname = \"clock\"\ntitle = \"t\"\nboots = true\nfiles = [\"a.rs\"]\n{items}"
        );
        let labs: Labs = toml::from_str(&text).map_err(|e| e.to_string())?;
        labs.validate().map(|()| labs)
    }

    #[test]
    fn points_parents_and_kinds_are_checked() {
        let ok = "[[lab.item]]\nname = \"a\"\nhost = \"x::y\"\npoints = 40\n[[lab.item]]\nname = \"b\"\nqemu = \"boot\"\npoints = 45\nparent = \"a\"\n";
        assert!(lab(ok).is_ok());
        assert!(lab(&ok.replace("45", "44")).unwrap_err().contains("84 points"));
        assert!(lab(&ok.replace("parent = \"a\"", "parent = \"c\"")).unwrap_err().contains("not an item above"));
        assert!(lab(&ok.replace("qemu = \"boot\"", "")).unwrap_err().contains("exactly one"));
    }
}
