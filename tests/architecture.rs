//! The layers of lioscope and the rules between them.
//!
//! A module may use its own layer and the layers below it, never one above. The test
//! reads every source file under `src/`, finds each path outside comments that names an
//! item of the crate (in `use` lines and in code): `crate::` paths, `super::` and `self::`
//! paths (resolved from the module they are written in, inline modules included), and the
//! relative paths of `use` lines. Each is followed through the `use` lines that re-export
//! it (those of `src/lib.rs` for names at the crate root, those of a folder's `mod.rs`)
//! to the layer and the file that define it. The test fails on an import of a higher
//! layer.
//!
//! Within a layer, the files of one folder (and its subfolders, each taken as one whole)
//! must not use each other in a cycle: a file `a.rs` using `b.rs` while `b.rs` uses
//! `a.rs`, directly or through others, is an item in the wrong file. The folder's
//! `mod.rs`, which declares and re-exports its files, is not one of them. A cycle that
//! cannot be broken yet is listed in [`KNOWN_CYCLES`]: a debt to pay down, not a licence;
//! the list may only shrink.
//!
//! `src/lib.rs` declares the layers' modules in the order of [`LAYERS`], top down.
//!
//! Above the engine stand two crates built on its public API alone (its layers are
//! private, so they cannot reach past it): lioscope-lab (the experiments and benchmarks)
//! and lioscope-cli (the `lioscope` command, over both). The engine depends on neither,
//! nor on any terminal, chart or command-line crate: checked here from the manifests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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

/// Cycles between the files of one folder still in the code, each the files (under
/// `src/`) that use each other round.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// `text` with its comments blanked out (line comments, block comments) and its string
/// and character literals emptied, so that doc links and text do not count as imports.
fn without_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let after_ident = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            i = end;
        } else if bytes[i] == b'r' && !after_ident && raw_string_hashes(&bytes[i + 1..]).is_some() {
            // A raw string, `r"..."` or `r#"..."#`: kept as an empty string.
            let hashes = raw_string_hashes(&bytes[i + 1..]).expect("checked");
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + 2 + hashes;
            let end = text[body..].find(&close).map_or(bytes.len(), |e| body + e + close.len());
            out.push_str("\"\"");
            out.extend(text[i..end].chars().filter(|&c| c == '\n'));
            i = end;
        } else if bytes[i] == b'"' {
            // A string literal: kept as an empty one, so that `//` inside it is no comment.
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\n' {
                    out.push('\n');
                }
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i += 1;
        } else if bytes[i] == b'\'' && char_literal_len(&text[i..]).is_some() {
            // A character literal (`'"'`, `'{'`, `'\n'`), not a lifetime.
            out.push_str("' '");
            i += char_literal_len(&text[i..]).expect("checked");
        } else {
            let c = text[i..].chars().next().expect("inside the text");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The number of `#` of a raw string whose `r` comes just before `rest`, if it is one.
fn raw_string_hashes(rest: &[u8]) -> Option<usize> {
    let hashes = rest.iter().take_while(|&&b| b == b'#').count();
    (rest.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// The length in bytes of the character literal `text` starts with, if it starts with
/// one rather than a lifetime or a label.
fn char_literal_len(text: &str) -> Option<usize> {
    let mut chars = text.char_indices().skip(1);
    let (_, first) = chars.next()?;
    if first == '\\' {
        return text[2..].find('\'').map(|e| 2 + e + 1);
    }
    let (at, second) = chars.next()?;
    (second == '\'').then_some(at + 1)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// The tokens of comment-free code, each with its line (from 1).
fn tokens(code: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            out.push((Token::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// A path to an item of the crate as written in a file.
#[derive(Debug, Clone, PartialEq)]
struct Written {
    /// The module it is written in: the file's, or that of an inline module inside it.
    scope: Vec<String>,
    /// Its segments as written: `crate`, `super` or `self` first, or a relative path of a
    /// `use` line; `*` last for a glob.
    segments: Vec<String>,
    /// The name a `use` line binds it to (its last segment, or the name after `as`);
    /// `None` for a path in code.
    binds: Option<String>,
    line: usize,
}

fn ident(token: Option<&(Token, usize)>) -> Option<&str> {
    match token {
        Some((Token::Ident(name), _)) => Some(name),
        _ => None,
    }
}

fn is(token: Option<&(Token, usize)>, want: &Token) -> bool {
    token.is_some_and(|(t, _)| t == want)
}

/// Every path of comment-free `code` (the file of module `module`) that may name an item
/// of the crate: the paths of `use` lines, and the `crate::`, `super::` and `self::` paths
/// in code; inline modules (`mod tests { ... }`) are followed, so that their `super::`
/// paths start from them.
fn written_paths(code: &str, module: &[String]) -> Vec<Written> {
    let toks = tokens(code);
    let mut out = Vec::new();
    let mut scope = module.to_vec();
    // The brace depth outside each open inline module.
    let mut inline: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let line = toks[i].1;
        match &toks[i].0 {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last() == Some(&depth) {
                    inline.pop();
                    scope.pop();
                }
                i += 1;
            }
            Token::Ident(k) if k == "mod" && is(toks.get(i + 2), &Token::Punct('{')) => {
                scope.push(ident(toks.get(i + 1)).unwrap_or_default().to_owned());
                inline.push(depth);
                depth += 1;
                i += 3;
            }
            // `use ::name` names another crate.
            Token::Ident(k) if k == "use" && !is(toks.get(i + 1), &Token::PathSep) => {
                let mut found = Vec::new();
                i = use_tree(&toks, i + 1, &[], &mut found);
                out.extend(found.into_iter().map(|(segments, binds)| Written {
                    scope: scope.clone(),
                    segments,
                    binds: Some(binds),
                    line,
                }));
            }
            Token::Ident(k)
                if matches!(k.as_str(), "crate" | "super" | "self")
                    && is(toks.get(i + 1), &Token::PathSep)
                    && !(i > 0
                        && (is(toks.get(i - 1), &Token::PathSep) || is(toks.get(i - 1), &Token::Punct('$')))) =>
            {
                let mut segments = vec![k.clone()];
                i += 1;
                while is(toks.get(i), &Token::PathSep) && ident(toks.get(i + 1)).is_some() {
                    segments.push(ident(toks.get(i + 1)).expect("checked").to_owned());
                    i += 2;
                }
                out.push(Written { scope: scope.clone(), segments, binds: None, line });
            }
            _ => i += 1,
        }
    }
    out
}

/// Reads the use tree starting at token `j` (`a::b`, `a::{b, c::d as e}`, `a::*`), under
/// `prefix`, into `found` as (path, name bound); returns the token after it.
fn use_tree(toks: &[(Token, usize)], mut j: usize, prefix: &[String], found: &mut Vec<(Vec<String>, String)>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(j).map(|t| &t.0) {
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                j += 1;
            }
            Some(Token::Punct('*')) => {
                path.push("*".into());
                found.push((path, "*".into()));
                return j + 1;
            }
            Some(Token::Punct('{')) => {
                j += 1;
                loop {
                    match toks.get(j).map(|t| &t.0) {
                        None => return j,
                        Some(Token::Punct('}')) => return j + 1,
                        Some(Token::Punct(',')) => j += 1,
                        _ => {
                            let next = use_tree(toks, j, &path, found);
                            if next == j {
                                return j; // not a use tree
                            }
                            j = next;
                        }
                    }
                }
            }
            _ => return j,
        }
        if is(toks.get(j), &Token::PathSep) {
            j += 1;
            continue;
        }
        // `a::{self}` is the module `a` itself.
        if path.len() > 1 && path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        let (binds, next) = match (ident(toks.get(j)), ident(toks.get(j + 1))) {
            (Some("as"), Some(alias)) => (alias.to_owned(), j + 2),
            _ => (path.last().cloned().unwrap_or_default(), j),
        };
        found.push((path, binds));
        return next;
    }
}

/// A source file under `src/`.
struct SourceFile {
    /// Its path under `src/`, with `/`.
    relative: String,
    /// The module it is: `txn/undo/mod.rs` is `txn::undo`, `lib.rs` the crate root.
    module: Vec<String>,
    written: Vec<Written>,
}

/// The crate's source files, and what their `use` lines bind.
struct Crate {
    files: Vec<SourceFile>,
    /// The module each file is, to the file.
    modules: BTreeMap<Vec<String>, usize>,
    /// A name a `use` line binds in a module (the module's path and the name), to the
    /// path it names.
    imports: BTreeMap<Vec<String>, Vec<String>>,
}

fn module_of(relative: &str) -> Vec<String> {
    let mut module: Vec<String> = relative.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if module.last().is_some_and(|m| m == "mod" || m == "lib") {
        module.pop();
    }
    module
}

impl Crate {
    /// The crate made of these files (each its path under `src/` and its text).
    fn new(sources: &[(String, String)]) -> Crate {
        let mut files = Vec::new();
        let mut modules = BTreeMap::new();
        for (relative, text) in sources {
            let module = module_of(relative);
            modules.insert(module.clone(), files.len());
            let written = written_paths(&without_comments(text), &module);
            files.push(SourceFile { relative: relative.clone(), module, written });
        }
        let mut krate = Crate { files, modules, imports: BTreeMap::new() };
        let mut imports = BTreeMap::new();
        for w in krate.files.iter().flat_map(|f| &f.written) {
            let Some(name) = w.binds.as_ref().filter(|n| *n != "*") else { continue };
            let key: Vec<String> = w.scope.iter().cloned().chain([name.clone()]).collect();
            if let Some(path) = krate.absolute(w).filter(|p| *p != key) {
                imports.insert(key, path);
            }
        }
        krate.imports = imports;
        krate
    }

    /// The crate read from `src/`.
    fn read() -> Crate {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        source_files(&src, &mut paths);
        let sources: Vec<(String, String)> = paths
            .iter()
            .map(|p| {
                let relative = p.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
                (relative, std::fs::read_to_string(p).unwrap())
            })
            .collect();
        Crate::new(&sources)
    }

    /// The path from the crate root that `w` names, if it names an item of the crate.
    fn absolute(&self, w: &Written) -> Option<Vec<String>> {
        let segments = &w.segments;
        let supers = segments.iter().take_while(|s| *s == "super").count();
        let path: Vec<String> = match segments[0].as_str() {
            "crate" => segments[1..].to_vec(),
            "self" => w.scope.iter().chain(&segments[1..]).cloned().collect(),
            "super" if supers <= w.scope.len() => {
                w.scope[..w.scope.len() - supers].iter().chain(&segments[supers..]).cloned().collect()
            }
            "super" => return None,
            // A relative path of a `use` line: a module declared in the scope, else another
            // crate (or an item in scope, whose own path was read where it was imported).
            first => {
                let child: Vec<String> = w.scope.iter().cloned().chain([first.to_owned()]).collect();
                if w.binds.is_none() || !self.modules.contains_key(&child) {
                    return None;
                }
                w.scope.iter().chain(segments).cloned().collect()
            }
        };
        Some(path)
    }

    /// `path` followed through the `use` lines that bind its leading names to the item
    /// they re-export.
    fn resolve(&self, mut path: Vec<String>) -> Vec<String> {
        'follow: for _ in 0..32 {
            for n in (1..=path.len()).rev() {
                if let Some(target) = self.imports.get(&path[..n]) {
                    let next: Vec<String> = target.iter().chain(&path[n..]).cloned().collect();
                    if next != path {
                        path = next;
                        continue 'follow;
                    }
                }
            }
            break;
        }
        path
    }

    /// The layer a resolved path belongs to: its first name's, or for a module of the
    /// crate root that re-exports names of several layers (`binds`), the highest of them.
    fn layer_of(&self, path: &[String]) -> Option<&'static str> {
        let first = path.first()?;
        if let Some(layer) = LAYERS.iter().copied().find(|l| l == first) {
            return Some(layer);
        }
        self.imports
            .iter()
            .filter(|(k, _)| k.len() > path.len() && k.starts_with(path))
            .filter_map(|(_, target)| LAYERS.iter().copied().find(|l| target.first().is_some_and(|f| f == l)))
            .min_by_key(|l| rank(l))
    }

    /// The file that defines a resolved path: that of its longest leading module.
    fn file_of(&self, path: &[String]) -> Option<usize> {
        (0..=path.len()).rev().find_map(|n| self.modules.get(&path[..n]).copied())
    }

    /// Every path each file writes that names an item of the crate, resolved: (file,
    /// what it wrote, the path it names).
    fn uses(&self) -> impl Iterator<Item = (&SourceFile, &Written, Vec<String>)> {
        self.files
            .iter()
            .flat_map(move |f| f.written.iter().filter_map(move |w| Some((f, w, self.resolve(self.absolute(w)?)))))
    }

    /// Every (file, higher layer) import, with the line of its first use.
    fn upward_imports(&self) -> BTreeMap<(String, &'static str), String> {
        let mut found = BTreeMap::new();
        for (file, w, path) in self.uses() {
            // The crate root sits above every layer.
            let Some(own) = file.module.first().and_then(|m| LAYERS.iter().copied().find(|l| l == m)) else { continue };
            if let Some(used) = self.layer_of(&path).filter(|&l| rank(l) < rank(own)) {
                found
                    .entry((file.relative.clone(), used))
                    .or_insert_with(|| format!("line {}: {}", w.line, w.segments.join("::")));
            }
        }
        found
    }

    /// The uses between the files of each folder: (folder, user, used) to the first line
    /// of it, where user and used are files or subfolders of the folder, never its
    /// `mod.rs`. Test code (a `tests` module, inline or a file) may use any file of its
    /// folder, and is left out.
    fn folder_edges(&self) -> BTreeMap<(String, String, String), String> {
        let mut edges = BTreeMap::new();
        for (file, w, path) in self.uses().filter(|(_, w, _)| !w.scope.iter().any(|s| s == "tests")) {
            let Some(target) = self.file_of(&path) else { continue };
            let from: Vec<&str> = file.relative.split('/').collect();
            let to: Vec<&str> = self.files[target].relative.split('/').collect();
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count().min(from.len().min(to.len()) - 1);
            // Within one layer's folder, between two of its files or subfolders.
            let (user, used) = (from[common], to[common]);
            if common == 0 || user == used || user == "mod.rs" || used == "mod.rs" {
                continue;
            }
            edges
                .entry((from[..common].join("/"), user.to_owned(), used.to_owned()))
                .or_insert_with(|| format!("src/{} line {}: {}", file.relative, w.line, w.segments.join("::")));
        }
        edges
    }

    /// The cycles between the files of one folder: each the sorted files (or
    /// subfolders, under `src/`) that use each other round, with the uses that close it.
    fn cycles(&self) -> BTreeMap<Vec<String>, Vec<String>> {
        let edges = self.folder_edges();
        let mut next: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
        for (folder, user, used) in edges.keys() {
            next.entry((folder, user)).or_default().push(used);
        }
        let reach = |folder: &str, start: &str| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![start.to_owned()];
            while let Some(node) = stack.pop() {
                for n in next.get(&(folder, node.as_str())).into_iter().flatten() {
                    if seen.insert(n.to_string()) {
                        stack.push(n.to_string());
                    }
                }
            }
            seen
        };
        let mut cycles = BTreeMap::new();
        for &(folder, node) in next.keys() {
            let from_here = reach(folder, node);
            if !from_here.contains(node) {
                continue;
            }
            let members: BTreeSet<String> = from_here.into_iter().filter(|m| reach(folder, m).contains(node)).collect();
            let how: Vec<String> = edges
                .iter()
                .filter(|((f, a, b), _)| f == folder && members.contains(a) && members.contains(b))
                .map(|((_, a, b), at)| format!("{a} uses {b} ({at})"))
                .collect();
            cycles.insert(members.iter().map(|m| format!("{folder}/{m}")).collect(), how);
        }
        cycles
    }
}

fn rank(layer: &str) -> usize {
    LAYERS.iter().position(|&l| l == layer).unwrap_or_else(|| panic!("{layer} is not a layer"))
}

fn source_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules a crate root declares with `mod name;` (public or not), in order.
fn declared_modules(lib: &str) -> Vec<String> {
    let toks = tokens(&without_comments(lib));
    let mut depth = 0usize;
    let mut names = Vec::new();
    for (i, (token, _)) in toks.iter().enumerate() {
        match token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => depth = depth.saturating_sub(1),
            Token::Ident(k) if k == "mod" && depth == 0 && is(toks.get(i + 2), &Token::Punct(';')) => {
                names.extend(ident(toks.get(i + 1)).map(str::to_owned));
            }
            _ => {}
        }
    }
    names
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let found = Crate::read().upward_imports();
    let upward: Vec<String> = found
        .iter()
        .map(|((file, layer), at)| format!("src/{file} imports the higher layer `{layer}` ({at})"))
        .collect();
    assert!(upward.is_empty(), "upward imports (the layers, top down: {}):\n{}", LAYERS.join(" > "), upward.join("\n"));
}

#[test]
fn no_files_of_one_folder_use_each_other_in_a_cycle() {
    let found = Crate::read().cycles();
    let known: BTreeSet<Vec<String>> =
        KNOWN_CYCLES.iter().map(|c| c.iter().map(|f| (*f).to_owned()).collect()).collect();
    let new: Vec<String> = found
        .iter()
        .filter(|(members, _)| !known.contains(*members))
        .map(|(members, how)| format!("{} use each other:\n  {}", members.join(", "), how.join("\n  ")))
        .collect();
    assert!(
        new.is_empty(),
        "files of one folder in a cycle (move the item to the file it belongs in):\n{}",
        new.join("\n")
    );
    let gone: Vec<String> = known.iter().filter(|k| !found.contains_key(*k)).map(|k| format!("{k:?}")).collect();
    assert!(gone.is_empty(), "no longer cycles: remove them from KNOWN_CYCLES:\n{}", gone.join("\n"));
}

#[test]
fn lib_rs_declares_the_layers_in_their_order() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    assert_eq!(declared_modules(&lib), LAYERS, "src/lib.rs declares its modules in the order of LAYERS, top down");
}

/// The crate made of these (path under `src/`, text) pairs.
fn made_of(files: &[(&str, &str)]) -> Crate {
    Crate::new(&files.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect::<Vec<_>>())
}

#[test]
fn the_scanner_finds_imports_in_use_groups_and_code_but_not_in_comments() {
    let code = without_comments(
        "use crate::{buffer::BufferCache, txn::{Xid, Uba as U, self}, Result};\n\
         // crate::db::Session in a comment\n\
         /// [`x`](crate::sql::plan)\n\
         let s = \"// not a comment\"; let q = '\"'; let x = crate::exec::run(); /* crate::lab */\n\
         let r = r#\"a \" crate::sql\"#; let b = '{'; fn f<'a>(x: &'a str) { $crate::db::x }\n",
    );
    let found: Vec<(Vec<String>, Option<String>, usize)> =
        written_paths(&code, &["access".into()]).into_iter().map(|w| (w.segments, w.binds, w.line)).collect();
    let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        found,
        [
            (path("crate::buffer::BufferCache"), Some("BufferCache".into()), 1),
            (path("crate::txn::Xid"), Some("Xid".into()), 1),
            (path("crate::txn::Uba"), Some("U".into()), 1),
            (path("crate::txn"), Some("txn".into()), 1),
            (path("crate::Result"), Some("Result".into()), 1),
            (path("crate::exec::run"), None, 4),
        ]
    );
    assert!(rank("db") < rank("storage"), "db is above storage");
}

#[test]
fn super_paths_are_resolved_from_the_module_they_are_written_in() {
    let krate = made_of(&[
        ("lib.rs", "mod exec; mod access;"),
        ("exec/mod.rs", "pub mod source;"),
        ("access/mod.rs", "pub mod modify;"),
        (
            "access/modify.rs",
            "use super::super::exec::source::Source;\n\
             fn f() { super::super::exec::run(); }\n\
             mod tests { use super::super::heap; fn g() { super::super::super::exec::x(); } }\n",
        ),
    ]);
    let upward: Vec<(String, &str, String)> =
        krate.upward_imports().into_iter().map(|((f, l), at)| (f, l, at)).collect();
    assert_eq!(upward, [("access/modify.rs".into(), "exec", "line 1: super::super::exec::source::Source".into())]);
    let resolved: Vec<String> = krate.uses().map(|(_, _, p)| p.join("::")).collect();
    assert_eq!(resolved, ["exec::source::Source", "exec::run", "access::heap", "exec::x"]);
}

#[test]
fn names_reexported_at_the_crate_root_are_read_from_lib_rs() {
    let krate = made_of(&[
        (
            "lib.rs",
            "mod db; mod sql; mod expr; mod error;\n\
             pub use db::{Database, Session as Handle};\n\
             pub use error::{Error, Result};\n\
             pub use sql::plan as plans;\n\
             pub mod binds { pub use crate::expr::name; pub use crate::sql::bind_names; }\n",
        ),
        ("db/mod.rs", "pub use crate::sql::Database;"),
        ("sql/mod.rs", "pub mod plan;"),
        ("sql/plan.rs", ""),
        ("expr/mod.rs", "pub fn name() {}"),
        ("error.rs", ""),
        (
            "expr/functions.rs",
            "use crate::{Result, Handle};\nuse crate::plans::Plan;\nuse crate::binds::bind_names;\nuse crate::binds;\nuse crate::Database;\n",
        ),
    ]);
    let upward: Vec<(&str, String)> = krate.upward_imports().into_iter().map(|((_, l), at)| (l, at)).collect();
    assert_eq!(
        upward,
        [
            ("db", "line 1: crate::Handle".into()),
            ("sql", "line 2: crate::plans::Plan".into()),
            ("sql", "line 3: crate::binds::bind_names".into()),
            ("sql", "line 4: crate::binds".into()),
            ("sql", "line 5: crate::Database".into()),
        ]
        .into_iter()
        .fold(Vec::new(), |mut firsts: Vec<(&str, String)>, (l, at)| {
            if !firsts.iter().any(|(f, _)| *f == l) {
                firsts.push((l, at));
            }
            firsts
        })
    );
    assert_eq!(krate.resolve(vec!["Handle".into()]), ["db", "Session"]);
    assert_eq!(krate.resolve(vec!["Database".into()]), ["sql", "Database"], "followed through db's re-export");
    assert_eq!(krate.layer_of(&["binds".into()]), Some("sql"), "the highest layer binds re-exports from");
    assert_eq!(krate.layer_of(&krate.resolve(vec!["Result".into()])), Some("error"));
}

#[test]
fn a_cycle_between_files_of_one_folder_is_found() {
    let krate = made_of(&[
        ("lib.rs", "mod txn;"),
        ("txn/mod.rs", "pub mod a; pub mod b; pub mod c; pub mod d; pub mod undo; pub use a::A; pub use c::C;"),
        ("txn/a.rs", "use super::b::B; pub struct A;"),
        ("txn/b.rs", "pub struct B(crate::txn::C);"),
        ("txn/c.rs", "use super::A; pub struct C;"),
        ("txn/d.rs", "use super::{A, undo::U};"),
        ("txn/undo/mod.rs", "pub mod u; pub use u::U;"),
        ("txn/undo/u.rs", "pub struct U(super::super::d::D); use super::v::V;"),
        ("txn/undo/v.rs", "pub struct V(super::U);"),
        ("txn/undo/tests.rs", "use crate::txn::d::D;"),
        ("txn/e.rs", "use super::f::F; mod tests { use super::super::e::E; }"),
        ("txn/f.rs", "mod tests { use crate::txn::e::E; }"),
    ]);
    let cycles: Vec<(Vec<String>, usize)> = krate.cycles().into_iter().map(|(m, how)| (m, how.len())).collect();
    let files = |f: &[&str]| f.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        cycles,
        [
            (files(&["txn/a.rs", "txn/b.rs", "txn/c.rs"]), 3),
            (files(&["txn/d.rs", "txn/undo"]), 2),
            (files(&["txn/undo/u.rs", "txn/undo/v.rs"]), 2),
        ],
        "a.rs > b.rs > c.rs > a.rs through mod.rs's re-exports; d.rs and the undo folder; u.rs and v.rs; \
         not e.rs and f.rs, whose uses back are tests"
    );
}

#[test]
fn the_modules_of_a_crate_root_are_read_in_order() {
    let lib = "//! mod not_this;\n#![warn(x)]\nmod db;\npub mod sql;\npub(crate) mod types;\npub mod binds { pub use crate::db::x; }\nmod error;\n";
    assert_eq!(declared_modules(lib), ["db", "sql", "types", "error"]);
}

/// The crates, from the top down, and what each may depend on among them.
const CRATES: &[(&str, &[&str])] = &[
    ("lioscope-cli/Cargo.toml", &["lioscope", "lioscope-lab", "lioscope-server"]),
    // The lab's `bench server` serves a database to pgbench.
    ("lioscope-lab/Cargo.toml", &["lioscope", "lioscope-server"]),
    ("lioscope-server/Cargo.toml", &["lioscope"]),
    // The integration tests' helpers: a dev-dependency of the crates above, never built
    // into them.
    ("testkit/Cargo.toml", &["lioscope"]),
    ("Cargo.toml", &[]),
];

/// What an embedding program must not have to compile: command-line, terminal, chart,
/// statistics and network-protocol crates.
const NOT_IN_THE_ENGINE: &[&str] =
    &["clap", "comfy-table", "indicatif", "plotters", "rustyline", "statrs", "pgwire", "tokio"];

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
    assert!(
        unwanted.is_empty(),
        "the engine depends on {unwanted:?}, which belong in lioscope-cli, lioscope-lab or lioscope-server"
    );
}
