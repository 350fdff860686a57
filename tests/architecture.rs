//! The walls of the workspace, checked on the sources: the core library depends on no terminal,
//! CLI or HTTP-server crate and keeps its HTTP client behind the `http` feature; it never names
//! the demo model; no crate has a cycle between its modules (a module may use its ancestors
//! and descendants; siblings must depend on each other one way only); and in the core a child
//! module imports an item from the module that defines it, never through an ancestor's
//! re-export (`use super::X` where the parent only re-exports `X` from a sibling).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

type Module = Vec<String>;

/// Every module of a crate (path under `src`, `mod.rs`/`lib.rs`/`main.rs` naming their folder)
/// with its source, test code cut off: what follows a `#[cfg(test)]`, and the test-only modules.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut test_only: Vec<Module> = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Module = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // `#[cfg(test)] mod name;` declares a test-only child.
            let mut rest = text.as_str();
            while let Some(i) = rest.find("#[cfg(test)]") {
                rest = rest[i + "#[cfg(test)]".len()..].trim_start();
                if let Some(name) = module_item(rest).and_then(|r| r.split(';').next()) {
                    let mut child = module.clone();
                    child.push(name.trim().to_string());
                    test_only.push(child);
                }
            }
            // The module's own code ends where an inline test module begins (`#[cfg(test)] mod
            // tests {`); a test-only child declared with `;` ends nothing.
            let inline_tests = text
                .match_indices("#[cfg(test)]")
                .map(|(i, _)| i)
                .find(|&i| {
                    let after = text[i + "#[cfg(test)]".len()..].trim_start();
                    module_item(after).is_some_and(|after| {
                        after
                            .find('{')
                            .is_some_and(|b| after.find(';').is_none_or(|s| b < s))
                    })
                });
            let code = match inline_tests {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            out.insert(module, code);
        }
    }
    for m in test_only {
        out.remove(&m);
    }
    out
}

/// What follows `mod ` when `text` starts with a module item (`mod `, or `pub mod `,
/// `pub(crate) mod `, `pub(super) mod `, `pub(in …) mod `).
fn module_item(text: &str) -> Option<&str> {
    let text = match text.strip_prefix("pub") {
        Some(rest) if rest.starts_with('(') => rest[rest.find(')')? + 1..].trim_start(),
        Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
        _ => text,
    };
    text.strip_prefix("mod ")
}

/// The modules `code` (the source of `module`) refers to through `crate::` and `super::` paths.
fn references(module: &Module, code: &str, all: &BTreeMap<Module, String>) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    let lines = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    // The longest module that a path names (`crate::a::b::Item` names `a::b`).
    let mut resolve = |base: Module, rest: &[&str]| {
        let mut path = base;
        path.extend(rest.iter().map(|s| s.to_string()));
        while !path.is_empty() {
            if all.contains_key(&path) {
                out.insert(path);
                return;
            }
            path.pop();
        }
    };
    for (start, at) in path_starts(&lines) {
        let tail: String = lines[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '{')
            .collect();
        let segments: Vec<&str> = tail.split("::").filter(|s| !s.is_empty()).collect();
        let (mut base, mut rest) = if start == "crate::" {
            (Vec::new(), &segments[1..])
        } else {
            let mut b = module.clone();
            b.pop();
            (b, &segments[1..])
        };
        while rest.first() == Some(&"super") {
            base.pop();
            rest = &rest[1..];
        }
        if rest.first().is_some_and(|s| s.starts_with('{')) {
            // `crate::{a, b::c}`: each member.
            let close = lines[at..].find('}').map_or(lines.len(), |i| at + i);
            let open = lines[at..close].find('{').map_or(close, |i| at + i + 1);
            for member in lines[open..close].split(',') {
                let parts: Vec<&str> = member.trim().split("::").map(str::trim).collect();
                resolve(base.clone(), &parts);
            }
        } else {
            let rest: Vec<&str> = rest.iter().map(|s| s.trim_end_matches('{')).collect();
            resolve(base.clone(), &rest);
        }
    }
    out
}

/// The groups of sibling modules that depend on each other in a circle.
fn cycles(src: &Path) -> Vec<Vec<String>> {
    let all = modules(src);
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, code) in &all {
        for target in references(module, code, &all) {
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            // A module may use its ancestors and descendants.
            if common == module.len() || common == target.len() {
                continue;
            }
            edges
                .entry(module[..=common].to_vec())
                .or_default()
                .insert(target[..=common].to_vec());
        }
    }
    // A cycle exists where a module reaches itself.
    let mut found = Vec::new();
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&Module> = edges[start].iter().collect();
        while let Some(m) = todo.pop() {
            if m == start {
                let mut group: Vec<String> = vec![start.join("::")];
                group.extend(
                    edges[start]
                        .iter()
                        .filter(|n| reaches(&edges, n, start))
                        .map(|n| n.join("::")),
                );
                found.push(group);
                break;
            }
            if seen.insert(m.clone()) {
                todo.extend(edges.get(m).into_iter().flatten());
            }
        }
    }
    found
}

fn reaches(edges: &BTreeMap<Module, BTreeSet<Module>>, from: &Module, to: &Module) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from];
    while let Some(m) = todo.pop() {
        if m == to {
            return true;
        }
        if seen.insert(m.clone()) {
            todo.extend(edges.get(m).into_iter().flatten());
        }
    }
    false
}

#[test]
fn no_crate_has_a_module_cycle() {
    for krate in [
        "crates/toolscope-core/src",
        "crates/toolscope-demo/src",
        "src",
    ] {
        let found = cycles(&root().join(krate));
        assert!(found.is_empty(), "{krate}: module cycles {found:?}");
    }
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let dir = std::env::temp_dir().join(format!("toolscope-arch-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a; mod b;").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::b::x;").unwrap();
    std::fs::write(dir.join("b/mod.rs"), "mod x;").unwrap();
    std::fs::write(dir.join("b/x.rs"), "use super::super::a::thing;").unwrap();
    assert_eq!(cycles(&dir).len(), 2, "a → b and b → a");
    std::fs::write(dir.join("b/x.rs"), "use super::y;").unwrap();
    assert!(cycles(&dir).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where `crate::` and `super::` begin a path in `text` (not the end of a longer name): each
/// with its offset, the `crate::` ones first.
fn path_starts(text: &str) -> impl Iterator<Item = (&'static str, usize)> + '_ {
    let bytes = text.as_bytes();
    ["crate::", "super::"].into_iter().flat_map(move |start| {
        text.match_indices(start)
            .map(move |(at, _)| (start, at))
            .filter(move |&(_, at)| {
                at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_')
            })
    })
}

/// Every path that `code` names through `crate::` or `super::`, as segments, with `use` trees
/// expanded (`super::{a::{B, C}, d}` is `super::a::B`, `super::a::C` and `super::d`) and
/// renames dropped (`X as Y` is `X`).
fn paths(code: &str) -> Vec<Vec<String>> {
    let text = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (_, at) in path_starts(&text) {
        // `super::super::x` is found again at its second `super`; one reading is enough.
        if at >= 7 && &text[at - 7..at] == "super::" {
            continue;
        }
        let mut i = at;
        use_tree(bytes, &mut i, Vec::new(), &mut out);
    }
    out
}

/// Reads one path or `use` tree at `i`, after the segments `prefix`, into `out`.
fn use_tree(b: &[u8], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let skip = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let mut segments = prefix;
    loop {
        skip(i);
        if *i < b.len() && b[*i] == b'{' {
            *i += 1;
            loop {
                skip(i);
                if *i >= b.len() {
                    return;
                }
                if b[*i] == b'}' {
                    *i += 1;
                    return;
                }
                use_tree(b, i, segments.clone(), out);
                skip(i);
                if *i < b.len() && b[*i] == b',' {
                    *i += 1;
                }
            }
        }
        let begin = *i;
        while *i < b.len() && (b[*i].is_ascii_alphanumeric() || b[*i] == b'_' || b[*i] == b'*') {
            *i += 1;
        }
        if *i == begin {
            break;
        }
        segments.push(String::from_utf8_lossy(&b[begin..*i]).into_owned());
        if b[*i..].starts_with(b"::") {
            *i += 2;
            continue;
        }
        // `X as Y`: the path is `X`.
        let mut j = *i;
        skip(&mut j);
        if b[j..].starts_with(b"as ") {
            j += 3;
            skip(&mut j);
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            *i = j;
        }
        break;
    }
    if !segments.is_empty() {
        out.push(segments);
    }
}

/// Whether the module source `code` defines an item named `name` itself (not by `use`).
fn defines(code: &str, name: &str) -> bool {
    code.lines()
        .map(|l| l.split("//").next().unwrap_or("").trim_start())
        .any(|l| {
            let l = l
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub(super) ")
                .trim_start_matches("pub ");
            [
                "fn ",
                "struct ",
                "enum ",
                "trait ",
                "type ",
                "const ",
                "static ",
                "union ",
                "mod ",
                "macro_rules! ",
                "async fn ",
                "const fn ",
                "unsafe fn ",
            ]
            .iter()
            .any(|kw| {
                l.strip_prefix(kw).is_some_and(|rest| {
                    rest.strip_prefix(name).is_some_and(|after| {
                        !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
                })
            })
        })
}

/// The imports in the modules below `room` (of the crate at `src`) that reach an item through
/// an ancestor module's re-export: `file: path` for each.
fn imports_through_reexports(src: &Path, room: &str) -> Vec<String> {
    let all = modules(src);
    let mut found = Vec::new();
    for (module, code) in &all {
        if module.first().map(String::as_str) != Some(room) || module.len() < 2 {
            continue;
        }
        for path in paths(code) {
            let mut base: Module = if path[0] == "crate" {
                Vec::new()
            } else {
                module[..module.len() - 1].to_vec()
            };
            let mut rest = &path[1..];
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            // Down the modules the path names; what follows is the item.
            while let Some(next) = rest.first() {
                let mut child = base.clone();
                child.push(next.clone());
                if !all.contains_key(&child) {
                    break;
                }
                base = child;
                rest = &rest[1..];
            }
            let Some(item) = rest.first().map(String::as_str) else {
                continue;
            };
            let is_ancestor = base.len() < module.len() && module.starts_with(&base);
            if is_ancestor && item != "self" && (item == "*" || !defines(&all[&base], item)) {
                found.push(format!("{}: {}", module.join("/"), path.join("::")));
            }
        }
    }
    found
}

/// The rooms of the core whose children may still import through an ancestor's re-exports
/// (none: `protocol/` and `provider/` are in floors).
const REEXPORT_IMPORTS_STILL_ALLOWED_IN: &[&str] = &[];

#[test]
fn the_core_rooms_import_items_from_where_they_are_defined() {
    let src = root().join("crates/toolscope-core/src");
    let mut rooms: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    rooms.sort();
    for room in ["protocol", "provider"] {
        assert!(rooms.iter().any(|r| r == room), "no {room}/ in the core");
    }
    for room in &rooms {
        if REEXPORT_IMPORTS_STILL_ALLOWED_IN.contains(&room.as_str()) {
            continue;
        }
        let found = imports_through_reexports(&src, room);
        assert!(
            found.is_empty(),
            "{room}/: imports through an ancestor's re-exports (import from the defining module instead):\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn the_reexport_check_finds_an_import_through_a_parent() {
    let dir = std::env::temp_dir().join(format!("toolscope-reexport-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("room/wires")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod room;").unwrap();
    std::fs::write(
        dir.join("room/mod.rs"),
        "mod a; mod wires;\npub use a::Thing;\npub struct Own;\n",
    )
    .unwrap();
    std::fs::write(dir.join("room/a.rs"), "pub struct Thing;").unwrap();
    std::fs::write(dir.join("room/wires/mod.rs"), "mod x;").unwrap();
    let check = |code: &str| {
        std::fs::write(dir.join("room/wires/x.rs"), code).unwrap();
        imports_through_reexports(&dir, "room")
    };
    assert_eq!(check("use super::super::Thing;").len(), 1);
    assert_eq!(check("use crate::room::{Own, Thing as T};").len(), 1);
    assert_eq!(check("use crate::room::*;").len(), 1);
    assert_eq!(check("fn f() { crate::room::Thing; }").len(), 1);
    assert!(
        check("use super::super::a::Thing;\nuse crate::room::{Own, a::{self, Thing}};").is_empty()
    );
    assert!(check("#[cfg(test)]\nmod tests { use super::super::super::Thing; }").is_empty());
    assert!(
        check("#[cfg(test)]\npub(crate) mod tests { use super::super::super::Thing; }").is_empty()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_core_depends_on_no_terminal_cli_or_server_crate() {
    let manifest =
        std::fs::read_to_string(root().join("crates/toolscope-core/Cargo.toml")).unwrap();
    let manifest: toml::Table = manifest.parse().unwrap();
    let deps = manifest["dependencies"].as_table().unwrap();
    for banned in [
        "ratatui",
        "crossterm",
        "syntect",
        "ratatui-textarea",
        "tui-textarea",
        "clap",
        "hyper",
        "hyper-util",
        "toolscope-demo",
    ] {
        assert!(!deps.contains_key(banned), "the core depends on {banned}");
    }
    // The HTTP client and its runtime only with the `http` feature, which is off by default:
    // the default is the parsers alone.
    for optional in ["reqwest", "tokio", "futures", "rmcp", "tokio-util"] {
        let dep = &deps[optional];
        assert_eq!(dep.get("optional").and_then(|v| v.as_bool()), Some(true));
    }
    let features = manifest["features"].as_table().unwrap();
    assert!(
        features["default"].as_array().unwrap().is_empty(),
        "default features: {:?}",
        features["default"]
    );
    assert!(features.contains_key("http"));
}

#[test]
fn the_core_never_names_the_demo() {
    let core = root().join("crates/toolscope-core");
    let mut stack = vec![
        core.join("src"),
        core.join("benches"),
        core.join("examples"),
    ];
    let mut files = vec![core.join("Cargo.toml")];
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in read {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            assert!(
                !line.to_ascii_lowercase().contains("demo"),
                "{}:{}: {line}",
                file.display(),
                n + 1
            );
        }
    }
}
