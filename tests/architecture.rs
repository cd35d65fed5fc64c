//! The layers of lioscope and the rule between them: a module may use its own layer and
//! the layers below it, never one above. The test reads every source file under `src/`,
//! finds each `crate::...` path outside comments (in `use` lines and in code), and fails
//! on an import of a higher layer.
//!
//! Above the engine stand two crates built on its public API alone (its layers are
//! private, so they cannot reach past it): lioscope-lab (the experiments and benchmarks)
//! and lioscope-cli (the `lioscope` command, over both). The engine depends on neither,
//! nor on any terminal, chart or command-line crate: checked here from the manifests.
//!
//! The upward imports the code still has are listed, file by file, in [`KNOWN_UPWARD`]:
//! a debt to pay down, not a licence. The test fails when a file imports a higher layer
//! that the list does not name for it (a new upward import), and when the list names
//! one that is gone (so the list only ever shrinks).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, from the top down. Each line is one layer.
const LAYERS: &[&str] = &[
    "db",       // Database, and a session's statements handed to sql: the public API
    "sql",      // parsing, binding, planning
    "instance", // what sessions share, the background writers, recovery, sessions
    "exec",     // the pipeline's operators
    "inmemory", // the column store
    "index",    // B-tree indexes
    "expr",     // expressions, functions, aggregates, column bounds
    "access",   // rows of a table's segment
    "txn",      // transactions, undo, read consistency
    "buffer",   // the buffer cache, where redo is made
    "redo",     // the redo log
    "catalog",  // the dictionary's definitions
    "storage",  // on-disk formats and the I/O layer
    "stats",    // statistics and wait events
    "types",    // data types and values
    "error",    // the error type
];

/// Names the crate root re-exports, and the layer each comes from.
const ROOT_REEXPORTS: &[(&str, &str)] = &[
    ("CacheSummary", "buffer"),
    ("Database", "db"),
    ("DatabaseOptions", "db"),
    ("Session", "db"),
    ("StatementKind", "db"),
    ("ParameterValues", "db"),
    ("RecoveryReport", "db"),
    ("io", "storage"),
    ("redo_log", "redo"),
    ("QueryResult", "db"),
    ("Cursor", "db"),
    ("Error", "error"),
    ("Result", "error"),
    ("Stat", "stats"),
];

/// Upward imports still in the code: (file under `src/`, the higher layer it uses).
const KNOWN_UPWARD: &[(&str, &str)] = &[
    // Unit tests that open a database to work in.
    ("index/tests.rs", "db"),
    ("txn/undo/tests.rs", "db"),
    ("txn/undo/tests.rs", "instance"),
];

/// `text` with its comments blanked out (line comments, block comments), so that doc
/// links do not count as imports.
fn without_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            i = end;
        } else if bytes[i] == b'"' {
            // A string literal: kept as an empty one, so that `//` inside it is no comment.
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i += 1;
        } else {
            let c = text[i..].chars().next().expect("inside the text");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The first path segment of each item of a `use` group's body (`a::b, c, d::{e, f}`).
fn group_heads(body: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item = String::new();
    for c in body.chars().chain(std::iter::once(',')) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                let head = item.trim().split("::").next().unwrap_or_default().trim().to_owned();
                if !head.is_empty() && head != "self" {
                    heads.push(head);
                }
                item.clear();
                continue;
            }
            _ => {}
        }
        if depth == 0 || c != '{' {
            item.push(c);
        }
    }
    heads
}

/// The names each `crate::` path of `code` starts with (every item of a `crate::{...}`
/// group).
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let preceded_by_ident = rest[..at].chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_');
        rest = &rest[at + "crate::".len()..];
        if preceded_by_ident {
            continue; // `$crate::` or another identifier ending in `crate`
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            names.extend(group_heads(&group[..end]));
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.push(name);
        }
    }
    names
}

/// The layer a `crate::` path's first name belongs to, if it is a layer.
fn layer_of(name: &str) -> Option<&'static str> {
    LAYERS
        .iter()
        .copied()
        .find(|&l| l == name)
        .or_else(|| ROOT_REEXPORTS.iter().find(|(n, _)| *n == name).map(|&(_, l)| l))
}

fn rank(layer: &str) -> usize {
    LAYERS.iter().position(|&l| l == layer).unwrap_or_else(|| panic!("{layer} is not a layer"))
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every (file, higher layer) import in `src/`, with the line of its first use.
fn upward_imports() -> BTreeMap<(String, &'static str), String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut found = BTreeMap::new();
    for path in files {
        let relative = path.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let top = relative.split('/').next().unwrap().trim_end_matches(".rs");
        // The crate root and the binary sit above every layer.
        let Some(own) = LAYERS.iter().copied().find(|&l| l == top) else { continue };
        let code = without_comments(&std::fs::read_to_string(&path).unwrap());
        for (n, line) in code.lines().enumerate() {
            for name in crate_paths(line) {
                if let Some(used) = layer_of(&name).filter(|&l| rank(l) < rank(own)) {
                    found.entry((relative.clone(), used)).or_insert_with(|| format!("line {}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn no_module_imports_a_layer_above_its_own_beyond_the_known_ones() {
    let found = upward_imports();
    let known: BTreeSet<(String, &str)> = KNOWN_UPWARD.iter().map(|&(f, l)| (f.to_owned(), l)).collect();
    let new: Vec<String> = found
        .iter()
        .filter(|(k, _)| !known.contains(*k))
        .map(|((file, layer), at)| format!("src/{file} imports the higher layer `{layer}` ({at})"))
        .collect();
    assert!(new.is_empty(), "upward imports (the layers, top down: {}):\n{}", LAYERS.join(" > "), new.join("\n"));
    let gone: Vec<String> = known
        .iter()
        .filter(|k| !found.contains_key(*k))
        .map(|(file, layer)| format!("(\"{file}\", \"{layer}\")"))
        .collect();
    assert!(gone.is_empty(), "no longer upward imports: remove them from KNOWN_UPWARD:\n{}", gone.join("\n"));
}

#[test]
fn the_scanner_finds_imports_in_use_groups_and_code_but_not_in_comments() {
    let code = without_comments(
        "use crate::{buffer::BufferCache, txn::{Xid, Uba}, Result};\n\
         // crate::db::Session in a comment\n\
         /// [`x`](crate::sql::plan)\n\
         let s = \"// not a comment\"; let x = crate::exec::run(); /* crate::lab */\n",
    );
    let names: Vec<String> = code.lines().flat_map(crate_paths).collect();
    assert_eq!(names, ["buffer", "txn", "Result", "exec"]);
    assert_eq!(layer_of("Result"), Some("error"));
    assert_eq!(layer_of("Session"), Some("db"));
    assert!(rank("db") < rank("storage"), "db is above storage");
}

/// The crates, from the top down, and what each may depend on among them.
const CRATES: &[(&str, &[&str])] = &[
    ("lioscope-cli/Cargo.toml", &["lioscope", "lioscope-lab"]),
    ("lioscope-lab/Cargo.toml", &["lioscope"]),
    ("Cargo.toml", &[]),
];

/// What an embedding program must not have to compile: command-line, terminal, chart and
/// statistics crates.
const NOT_IN_THE_ENGINE: &[&str] = &["clap", "comfy-table", "indicatif", "plotters", "rustyline", "statrs"];

/// The names under `[dependencies]` of a manifest (not dev-dependencies).
fn dependencies(manifest: &str) -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(manifest)).unwrap();
    let mut in_dependencies = false;
    let mut names = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
            names.push(name.to_owned());
        }
    }
    names
}

#[test]
fn the_crates_depend_downward_and_the_engine_on_no_cli_crate() {
    let crates: Vec<&str> =
        CRATES.iter().map(|(m, _)| m.trim_end_matches("Cargo.toml").trim_end_matches('/')).collect();
    for &(manifest, allowed) in CRATES {
        let ours: Vec<String> =
            dependencies(manifest).into_iter().filter(|d| d == "lioscope" || d.starts_with("lioscope-")).collect();
        for dep in &ours {
            assert!(allowed.contains(&dep.as_str()), "{manifest} depends on {dep} (crates, top down: {crates:?})");
        }
    }
    let engine = dependencies("Cargo.toml");
    assert!(engine.iter().any(|d| d == "sqlparser"), "the manifest reader finds the engine's dependencies");
    let unwanted: Vec<&String> = engine.iter().filter(|d| NOT_IN_THE_ENGINE.contains(&d.as_str())).collect();
    assert!(unwanted.is_empty(), "the engine depends on {unwanted:?}, which belong in lioscope-cli or lioscope-lab");
}
