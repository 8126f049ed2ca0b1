//! Lab markers in the reference code, and the stripping that turns the reference into a
//! lab's starting point.
//!
//! A lab is a set of regions of the reference code itself, as JOS's `#if SOL >= n` regions
//! are (docs/labs/README.md):
//!
//! ```text
//!     // BEGIN LAB 1: charge the span since the last change to the state being left
//!     // STUB: self.last = now;
//!     let span = now.saturating_sub(self.last);
//!     ...
//!     // END LAB 1
//! ```
//!
//! The starting point of lab n keeps the two marker lines, and between them puts the `STUB`
//! lines without their prefix (at the `BEGIN` line's indentation) or, when there is none,
//! `todo!("lab n: Type::function")`. Every other lab's marker lines are dropped and its
//! reference code kept. Regions are never nested and lie inside one function body.

use std::fmt;

/// One `BEGIN LAB n` … `END LAB n` region of a file (line numbers from 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub lab: u32,
    pub hint: String,
    /// The line of `// BEGIN LAB n`.
    pub begin: usize,
    /// The line of `// END LAB n`.
    pub end: usize,
    /// The `// STUB:` lines' code, in order (empty: the stub is `todo!`).
    pub stub: Vec<String>,
    /// `Type::function` (or `function`) the region lies in, for `todo!` and the reports.
    pub function: String,
}

/// A malformed marker, with its line (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerError {
    pub line: usize,
    pub what: String,
}

impl fmt::Display for MarkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

enum Marker<'a> {
    Begin { lab: u32, hint: &'a str },
    End { lab: u32 },
    Stub(&'a str),
}

/// Recognises a marker line. A line that mentions a marker but is not one exactly (a typo
/// such as `// BEGIN LAB1`) is an error rather than code, so a region cannot silently vanish.
fn marker(line: &str) -> Result<Option<Marker<'_>>, String> {
    let t = line.trim_start();
    let Some(comment) = t.strip_prefix("//") else { return Ok(None) };
    let c = comment.trim_start();
    if let Some(rest) = c.strip_prefix("BEGIN LAB ") {
        let (num, hint) = rest.split_once(':').ok_or("`// BEGIN LAB n: hint` needs the colon and a hint")?;
        let lab = num.trim().parse().map_err(|_| format!("`{}` is not a lab number", num.trim()))?;
        if hint.trim().is_empty() {
            return Err("`// BEGIN LAB n:` needs a hint for the student".into());
        }
        return Ok(Some(Marker::Begin { lab, hint: hint.trim() }));
    }
    if let Some(rest) = c.strip_prefix("END LAB ") {
        let lab = rest.trim().parse().map_err(|_| format!("`{}` is not a lab number", rest.trim()))?;
        return Ok(Some(Marker::End { lab }));
    }
    if let Some(rest) = c.strip_prefix("STUB:") {
        return Ok(Some(Marker::Stub(rest.strip_prefix(' ').unwrap_or(rest))));
    }
    let stub_like = c.strip_prefix("STUB").is_some_and(|r| !r.starts_with(|ch: char| ch.is_alphanumeric()));
    if c.starts_with("BEGIN LAB") || c.starts_with("END LAB") || stub_like {
        return Err(format!("malformed lab marker `{}`", t.trim_end()));
    }
    Ok(None)
}

/// The function (and `impl` type) a line lies in: the nearest `fn NAME` above it whose body
/// is still open there (so a nested helper `fn` above the region is skipped), and the nearest
/// `impl … TYPE` above that with a smaller indentation. `None` if no function is open.
fn enclosing_function(lines: &[&str], at: usize) -> Option<(usize, String)> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let fn_name = |l: &str| -> Option<String> {
        let t = code_part(l).trim_start();
        let after = t.split_once("fn ")?.1;
        let before = &t[..t.len() - after.len() - 3];
        // `fn` as a keyword: at the start, or after `pub`, `const`, `unsafe`, `pub(crate)`…
        if !(before.is_empty() || before.ends_with(' ')) || before.contains('"') {
            return None;
        }
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        (!name.is_empty()).then_some(name)
    };
    let (fn_line, name) = (0..at).rev().find_map(|i| {
        let name = fn_name(lines[i])?;
        (brace_depth(&lines[i..at]) > 0).then_some((i, name))
    })?;
    let fn_indent = indent(lines[fn_line]);
    let ty = lines[..fn_line].iter().rev().find_map(|l| {
        let t = l.trim_start();
        if indent(l) >= fn_indent || !t.starts_with("impl") {
            return None;
        }
        // `impl<T> Trait for Type<T> {` → `Type`; `impl Type {` → `Type`.
        let head = t.trim_end_matches('{').trim();
        let head = head.split(" where ").next().unwrap_or(head);
        let ty = head.rsplit(" for ").next().unwrap_or(head);
        let ty = ty.strip_prefix("impl").unwrap_or(ty).trim();
        let ty = if ty.starts_with('<') { skip_generics(ty) } else { ty };
        let name: String = ty.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        (!name.is_empty()).then_some(name)
    });
    let full = match ty {
        Some(t) => format!("{t}::{name}"),
        None => name,
    };
    Some((fn_line, full))
}

/// Braces opened minus braces closed over `lines`, comments left out.
fn brace_depth(lines: &[&str]) -> i64 {
    lines.iter().map(|l| code_part(l)).map(|l| l.matches('{').count() as i64 - l.matches('}').count() as i64).sum()
}

fn skip_generics(s: &str) -> &str {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return &s[i + 1..];
                }
            }
            _ => {}
        }
    }
    s
}

/// The regions of one file, checked: matched, never nested, inside a function body.
pub fn regions(text: &str) -> Result<Vec<Region>, MarkerError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut open: Option<Region> = None;
    for (i, line) in lines.iter().enumerate() {
        let err = |what: String| MarkerError { line: i + 1, what };
        match marker(line).map_err(err)? {
            None => {}
            Some(Marker::Begin { lab, hint }) => {
                if let Some(o) = &open {
                    return Err(err(format!(
                        "BEGIN LAB {lab} inside the region of LAB {} (line {})",
                        o.lab,
                        o.begin + 1
                    )));
                }
                let (_, function) = enclosing_function(&lines, i)
                    .ok_or_else(|| err(format!("BEGIN LAB {lab} is not inside the body of a function")))?;
                open = Some(Region { lab, hint: hint.to_string(), begin: i, end: 0, stub: Vec::new(), function });
            }
            Some(Marker::Stub(code)) => match &mut open {
                Some(r) if r.begin + 1 + r.stub.len() == i => r.stub.push(code.to_string()),
                Some(r) => return Err(err(format!("STUB lines of LAB {} must follow its BEGIN line directly", r.lab))),
                None => return Err(err("STUB line outside a lab region".into())),
            },
            Some(Marker::End { lab }) => match open.take() {
                Some(mut r) if r.lab == lab => {
                    r.end = i;
                    out.push(r);
                }
                Some(r) => return Err(err(format!("END LAB {lab} closes the region of LAB {}", r.lab))),
                None => return Err(err(format!("END LAB {lab} without a BEGIN"))),
            },
        }
    }
    if let Some(r) = open {
        return Err(MarkerError { line: r.begin + 1, what: format!("BEGIN LAB {} without an END", r.lab) });
    }
    Ok(out)
}

/// A line without its `//` comment (good enough for counting braces of rustfmt'd code).
fn code_part(line: &str) -> &str {
    line.split("//").next().unwrap_or(line)
}

/// Lab `lab`'s starting point of a file: its regions replaced by their stubs, every other
/// lab's marker lines dropped. `None` when the file has no marker at all (copy it as is).
pub fn strip(text: &str, lab: u32) -> Result<Option<String>, MarkerError> {
    let regions = regions(text)?;
    if regions.is_empty() {
        return Ok(None);
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    for r in &regions {
        out.extend(lines[i..r.begin].iter().map(|l| l.to_string()));
        if r.lab == lab {
            let indent = &lines[r.begin][..lines[r.begin].len() - lines[r.begin].trim_start().len()];
            out.push(lines[r.begin].to_string());
            if r.stub.is_empty() {
                out.push(format!("{indent}todo!(\"lab {lab}: {}\")", r.function));
            } else {
                out.extend(r.stub.iter().map(|s| format!("{indent}{s}")));
            }
            out.push(lines[r.end].to_string());
        } else {
            out.extend(lines[r.begin + 1 + r.stub.len()..r.end].iter().map(|l| l.to_string()));
        }
        i = r.end + 1;
    }
    out.extend(lines[i..].iter().map(|l| l.to_string()));
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    Ok(Some(s))
}

/// The lines of a file outside lab `lab`'s regions, its marker lines included: what a
/// student must leave as handed out (the code they write goes between the markers).
/// Each line with its number (from 1).
pub fn outside(text: &str, lab: u32) -> Result<Vec<(usize, String)>, MarkerError> {
    let regions = regions(text)?;
    let inside = |i: usize| regions.iter().any(|r| r.lab == lab && i > r.begin && i < r.end);
    Ok(text.lines().enumerate().filter(|(i, _)| !inside(*i)).map(|(i, l)| (i + 1, l.to_string())).collect())
}

/// `pristine` (the hand-out's file) with the bodies of lab `lab`'s regions taken from
/// `theirs`, region by region: official grading takes nothing else from a hand-in.
pub fn splice(pristine: &str, theirs: &str, lab: u32) -> Result<String, String> {
    let ours: Vec<Region> =
        regions(pristine).map_err(|e| e.to_string())?.into_iter().filter(|r| r.lab == lab).collect();
    let them: Vec<Region> =
        regions(theirs).map_err(|e| format!("its markers: {e}"))?.into_iter().filter(|r| r.lab == lab).collect();
    if ours.len() != them.len() {
        return Err(format!("it has {} region(s) of lab {lab}, the hand-out {}", them.len(), ours.len()));
    }
    let p: Vec<&str> = pristine.lines().collect();
    let t: Vec<&str> = theirs.lines().collect();
    let mut out: Vec<&str> = Vec::with_capacity(p.len());
    let mut i = 0;
    for (o, h) in ours.iter().zip(&them) {
        out.extend(&p[i..=o.begin]);
        out.extend(&t[h.begin + 1..h.end]);
        i = o.end;
    }
    out.extend(&p[i..]);
    let mut s = out.join("\n");
    if pristine.ends_with('\n') {
        s.push('\n');
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "impl Clock {
    pub fn switch(&mut self, now: u64) {
        // BEGIN LAB 1: charge the span
        // STUB: self.last = now;
        let span = now - self.last;
        self.total += span;
        self.last = now;
        // END LAB 1
    }

    fn other(&self) -> u64 {
        // BEGIN LAB 3: the sum
        self.total + 1
        // END LAB 3
    }
}
";

    #[test]
    fn finds_regions_with_their_function_and_stub() {
        let r = regions(SRC).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].lab, r[0].begin, r[0].end), (1, 2, 7));
        assert_eq!(r[0].stub, ["self.last = now;"]);
        assert_eq!(r[0].function, "Clock::switch");
        assert_eq!(r[0].hint, "charge the span");
        assert_eq!((r[1].lab, r[1].function.as_str()), (3, "Clock::other"));
    }

    #[test]
    fn strips_its_own_lab_and_unmarks_the_others() {
        let one = strip(SRC, 1).unwrap().unwrap();
        assert!(
            one.contains("        // BEGIN LAB 1: charge the span\n        self.last = now;\n        // END LAB 1\n")
        );
        assert!(!one.contains("span = now"));
        assert!(!one.contains("LAB 3"), "other labs' markers are dropped");
        assert!(one.contains("        self.total + 1\n"), "other labs' code is kept");
        let three = strip(SRC, 3).unwrap().unwrap();
        assert!(three.contains(
            "        // BEGIN LAB 3: the sum\n        todo!(\"lab 3: Clock::other\")\n        // END LAB 3\n"
        ));
        assert!(three.contains("let span = now - self.last;"));
        assert!(!three.contains("STUB"));
    }

    #[test]
    fn a_file_without_markers_is_left_alone() {
        assert_eq!(strip("fn main() {}\n", 1).unwrap(), None);
    }

    #[test]
    fn malformed_markers_are_errors_with_their_line() {
        let bad = |src: &str| regions(src).unwrap_err();
        assert_eq!(bad("fn f() {\n// BEGIN LAB 1: a\n}\n").what, "BEGIN LAB 1 without an END");
        assert_eq!(bad("fn f() {\n// END LAB 2\n}\n").line, 2);
        assert!(bad("fn f() {\n// BEGIN LAB 1: a\n// BEGIN LAB 2: b\n// END LAB 2\n// END LAB 1\n}\n")
            .what
            .contains("inside the region"));
        assert!(bad("fn f() {\n// BEGIN LAB 1: a\n// END LAB 2\n}\n").what.contains("closes the region of LAB 1"));
        assert!(bad("fn f() {\n// BEGIN LAB1: a\n}\n").what.contains("malformed"));
        assert!(bad("fn f() {\n// BEGIN LAB 1\n}\n").what.contains("colon"));
        assert!(bad("// BEGIN LAB 1: a\n// END LAB 1\n").what.contains("not inside the body"));
        assert!(bad("fn f() {}\n// BEGIN LAB 1: a\n// END LAB 1\n").what.contains("not inside the body"));
        assert!(bad("fn f() {\n// BEGIN LAB 1: a\nx();\n// STUB: y\n// END LAB 1\n}\n").what.contains("directly"));
    }

    #[test]
    fn splice_takes_only_the_regions_bodies() {
        let start = strip(SRC, 1).unwrap().unwrap();
        let theirs = start
            .replace(
                "        self.last = now;\n        // END LAB 1",
                "        self.last = now + 0;\n        // END LAB 1",
            )
            .replace("impl Clock {", "impl Clock { // edited outside");
        let graded = splice(&start, &theirs, 1).unwrap();
        assert!(graded.contains("self.last = now + 0;"));
        assert!(graded.starts_with("impl Clock {\n"), "changes outside the regions are not taken");
        let text = |src: &str| outside(src, 1).unwrap().into_iter().map(|(_, l)| l).collect::<Vec<_>>();
        assert_ne!(text(&start), text(&theirs));
        let inside_only =
            start.replace("        self.last = now;\n", "        let x = 1;\n        self.last = now + x;\n");
        assert_eq!(text(&start), text(&inside_only));
        assert!(splice(&start, "fn f() {}\n", 1).unwrap_err().contains("0 region(s)"));
    }

    #[test]
    fn nested_helpers_and_comments_do_not_hide_the_function() {
        let src = "impl A {\n    fn outer(&self) {\n        fn helper() {}\n        x(); // a fn pointer\n        // BEGIN LAB 1: y\n        // END LAB 1\n    }\n}\n";
        assert_eq!(regions(src).unwrap()[0].function, "A::outer");
        assert!(regions("fn f() {\n    // STUBBORN comment\n}\n").unwrap().is_empty());
    }

    #[test]
    fn generic_and_trait_impls_name_their_type() {
        let src = "impl<T: Clock> Tick for Queue<T> {\n    fn tick(&mut self) {\n        // BEGIN LAB 2: x\n        // END LAB 2\n    }\n}\n";
        assert_eq!(regions(src).unwrap()[0].function, "Queue::tick");
        let free = "pub(crate) fn free(x: u8) -> u8 {\n    // BEGIN LAB 2: x\n    x\n    // END LAB 2\n}\n";
        assert_eq!(regions(free).unwrap()[0].function, "free");
    }
}
