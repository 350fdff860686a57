//! The wall between the layers, checked: nothing under `src/app` may name `src/tui`.
//!
//! The state machine must stay testable without a terminal and must not grow a dependency on
//! how it is drawn; the terminal layer depends on it, never the other way. The compiler cannot
//! say so for two modules of one crate, so this test reads every file under `src/app` and fails
//! on any path into the `tui` module (`crate::tui…`, `toolscope::tui…`, `tui` inside a
//! `crate::{…}` group, or enough `super::` to climb to the crate root), naming file and line.
//! It lives outside `src/app`, since its own cases name the `tui`.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("src/app is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The text as tokens with their byte offsets: identifiers, `::`, and single other characters
/// (whitespace dropped, so `crate :: tui` and a group split over lines read the same).
fn tokens(text: &str) -> Vec<(usize, &str)> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if ident(c) {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek().filter(|&&(_, d)| ident(d)) {
                end = j + d.len_utf8();
                chars.next();
            }
            out.push((i, &text[i..end]));
        } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
            chars.next();
            out.push((i, "::"));
        } else if !c.is_whitespace() {
            out.push((i, &text[i..i + c.len_utf8()]));
        }
    }
    out
}

/// The byte offsets in `text` where a path reaches the `tui` module. `depth` is how many
/// modules below the crate root the file is (`src/app/mod.rs`: 1, `src/app/x.rs`: 2), so that
/// `super::` climbing to the root counts as the root.
fn tui_paths(text: &str, depth: usize) -> Vec<usize> {
    let t = tokens(text);
    let at = |i: usize| t.get(i).map_or("", |&(_, s)| s);
    let mut found = Vec::new();
    for p in 0..t.len() {
        if p > 0 && at(p - 1) == "::" {
            continue; // Inside a path: only paths that start here are read.
        }
        // The first token after the root and its `::`.
        let next = match at(p) {
            "crate" | "toolscope" if at(p + 1) == "::" => p + 2,
            "super" => {
                let mut q = p;
                let mut climbs = 0;
                while at(q) == "super" && at(q + 1) == "::" {
                    climbs += 1;
                    q += 2;
                }
                if climbs < depth {
                    continue;
                }
                q
            }
            _ => continue,
        };
        match at(next) {
            "tui" => found.push(t[next].0),
            "{" => {
                // A group: an item at its top level that starts with `tui`.
                let mut depth = 0;
                let mut item_start = true;
                for &(offset, s) in t.iter().skip(next + 1) {
                    if item_start && depth == 0 && s == "tui" {
                        found.push(offset);
                    }
                    item_start = false;
                    match s {
                        "{" => depth += 1,
                        "}" if depth == 0 => break,
                        "}" => depth -= 1,
                        "," if depth == 0 => item_start = true,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    found
}

#[test]
fn finds_every_way_of_naming_the_tui() {
    let cases: &[(&str, usize, usize)] = &[
        ("use crate::tui::View;", 2, 1),
        ("use crate :: tui;", 2, 1),
        ("let v = toolscope::tui::draw(f, a, v);", 2, 1),
        ("use crate::{app::App, tui::layout};", 2, 1),
        ("use crate::{\n    app,\n    tui,\n};", 2, 1),
        ("use super::super::tui::View;", 2, 1),
        ("use super::tui::View;", 1, 1),
        // Not the tui: another module of the app, a name that only starts alike, the app's
        // own `super`.
        ("use super::tui::View;", 2, 0),
        ("use crate::app::tui_like;", 2, 0),
        ("use crate::{app::{layout, tui}, cli};", 2, 0),
        ("use toolscope_core::tui;", 2, 0),
        ("// the `tui` layer draws it", 2, 0),
    ];
    for &(text, depth, want) in cases {
        assert_eq!(tui_paths(text, depth).len(), want, "{text:?}");
    }
}

#[test]
fn the_app_never_names_the_tui() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources(&root.join("app"));
    assert!(
        files.iter().any(|f| f.ends_with("app/update.rs")),
        "the scan found the state machine's files: {files:?}"
    );
    let mut offences = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&root).expect("under src");
        let depth = match relative.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs") => relative.components().count() - 1,
            _ => relative.components().count(),
        };
        let text = std::fs::read_to_string(file).expect("a source file is readable");
        for offset in tui_paths(&text, depth) {
            let line = text[..offset].matches('\n').count() + 1;
            offences.push(format!("{}:{line}", file.display()));
        }
    }
    assert!(
        offences.is_empty(),
        "src/app must not import src/tui (the terminal depends on the state, never the other \
         way):\n{}",
        offences.join("\n")
    );
}
