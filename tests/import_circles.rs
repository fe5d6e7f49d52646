//! No import circles between the modules (files) of any crate of the workspace, and no
//! module that takes from its parent (a `mod.rs` or a crate root) what belongs in a sibling.
//!
//! A module depends on another when its code names it: a `use` of `crate::`, `super::`,
//! `self::` or a child module's path, or the same path written inline (`super::Thing`,
//! `child::run()`). `mod child;` alone is no dependency, and neither is a module's use of
//! its own descendants: a parent that calls its children is the tree's shape. A circle (two
//! or more files that reach each other otherwise) is a place where no file can be read
//! without the others. A child that takes a type or a function its parent defines (or
//! re-exports from one of its own children) hides a circle the other way: the parent calls
//! the child and the child leans on the parent, so neither reads alone; what both need
//! belongs in a sibling module of its own. Code under `#[cfg(test)]` is left out: a test
//! module's `use super::*` is how Rust tests are written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's modules: module path (`["run", "feed"]`) -> its file.
struct Crate {
    files: BTreeMap<Vec<String>, PathBuf>,
}

fn module_tree(root_file: &Path) -> Crate {
    let mut files = BTreeMap::new();
    let mut todo = vec![(Vec::<String>::new(), root_file.to_path_buf())];
    while let Some((module, file)) = todo.pop() {
        let code = code_of(&file);
        // A child of `a/b.rs` lives in `a/b/`; of `a/mod.rs`, `lib.rs` or `main.rs` in `a/`.
        let stem = file.file_stem().unwrap().to_str().unwrap();
        let dir = if module.is_empty() || stem == "mod" {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for child in declared_modules(&code) {
            let flat = dir.join(format!("{child}.rs"));
            let nested = dir.join(&child).join("mod.rs");
            let child_file = if flat.exists() { flat } else { nested };
            assert!(child_file.exists(), "{}: `mod {child};` has no file", file.display());
            let mut path = module.clone();
            path.push(child);
            todo.push((path, child_file));
        }
        files.insert(module, file);
    }
    Crate { files }
}

/// The names of `mod x;` lines (modules in their own file).
fn declared_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in code.lines() {
        let line = line.trim();
        let line = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
        if let Some(rest) = line.strip_prefix("mod ") {
            if let Some(name) = rest.strip_suffix(';') {
                names.push(name.trim().to_string());
            }
        }
    }
    names
}

/// The file's text without comments, string and character literals (they name no module).
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") || rest.starts_with("br\"") {
            let hashes =
                rest.bytes().skip_while(|&b| b == b'b' || b == b'r').take_while(|&b| b == b'#').count();
            let open = rest.find('"').unwrap();
            let close = format!("\"{}", "#".repeat(hashes));
            i += open + 1 + rest[open + 1..].find(&close).map_or(rest.len(), |end| end + close.len());
            out.push_str("\"\"");
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            i = j + 1;
            out.push_str("\"\"");
        } else if bytes[i] == b'\'' && char_literal_len(rest).is_some() {
            i += char_literal_len(rest).unwrap();
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    without_tests(&out)
}

/// `code` without the items under `#[cfg(test)]` (a `mod tests { … }` or a single item).
fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    let next_test_item =
        |text: &str| ["#[cfg(test)]", "#[cfg(all(test,"].iter().filter_map(|attr| text.find(attr)).min();
    while let Some(at) = next_test_item(rest) {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        // The item ends at its closing brace (braces counted) or at a `;` before any brace.
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The length of a character literal at the start of `text` (`'a'`, `'\n'`, `'\''`), or None
/// for a lifetime (`'a`).
fn char_literal_len(text: &str) -> Option<usize> {
    let mut chars = text.char_indices().skip(1);
    let (_, first) = chars.next()?;
    if first == '\\' {
        let end = text[2..].find('\'')?;
        return Some(2 + end + 1 + usize::from(text[2..].starts_with('\'')));
    }
    let (at, second) = chars.next()?;
    (second == '\'').then_some(at + 1)
}

/// Every path the code writes that starts at `crate`, `super`, `self` or a child module,
/// braces of `use` lines expanded: `use super::{a::X, b};` -> `super::a::X`, `super::b`.
fn paths_in(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let tokens = tokenize(code);
    let mut paths = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let starts_path =
            matches!(tokens[i].as_str(), "crate" | "super" | "self") || children.contains(&tokens[i]);
        let after_path_sep = i > 0 && tokens[i - 1] == "::";
        if starts_path && !after_path_sep && tokens.get(i + 1).is_some_and(|t| t == "::") {
            let (found, end) = expand(&tokens, i, Vec::new());
            paths.extend(found);
            i = end;
        } else {
            i += 1;
        }
    }
    paths
}

/// Reads `a::b::{c, d::e}` from `tokens[at]`; returns the paths and the index after them.
fn expand(tokens: &[String], mut at: usize, mut prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    loop {
        match tokens.get(at).map(String::as_str) {
            Some("{") => {
                let mut all = Vec::new();
                at += 1;
                while at < tokens.len() && tokens[at] != "}" {
                    if tokens[at] == "," {
                        at += 1;
                        continue;
                    }
                    let (found, end) = expand(tokens, at, prefix.clone());
                    all.extend(found);
                    at = end.max(at + 1);
                    while at < tokens.len() && tokens[at] != "," && tokens[at] != "}" {
                        at += 1; // `as name`
                    }
                }
                return (all, at + 1);
            }
            Some(word) if is_word(word) || word == "*" => {
                prefix.push(word.to_string());
                at += 1;
                if tokens.get(at).map(String::as_str) != Some("::") {
                    return (vec![prefix], at);
                }
                at += 1;
            }
            _ => return (vec![prefix], at),
        }
    }
}

fn is_word(token: &str) -> bool {
    token.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_')
}

fn tokenize(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut word = c.to_string();
            while let Some(&next) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                word.push(next);
                chars.next();
            }
            tokens.push(word);
        } else if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            tokens.push("::".into());
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    tokens
}

/// The module a path lands in: the deepest module its leading segments name.
fn resolve(krate: &Crate, from: &[String], path: &[String]) -> Option<Vec<String>> {
    resolve_with_rest(krate, from, path).map(|(module, _)| module)
}

/// The module a path lands in, and the first segment past it (the item it names there).
fn resolve_with_rest(
    krate: &Crate,
    from: &[String],
    path: &[String],
) -> Option<(Vec<String>, Option<String>)> {
    let mut at: Vec<String> = from.to_vec();
    let mut segments = path.iter().peekable();
    match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            at.clear();
            segments.next();
        }
        Some("self") => {
            segments.next();
        }
        _ => {}
    }
    while segments.peek().is_some_and(|s| *s == "super") {
        at.pop()?;
        segments.next();
    }
    for segment in segments {
        let mut deeper = at.clone();
        deeper.push(segment.clone());
        if !krate.files.contains_key(&deeper) {
            return Some((at, Some(segment.clone())));
        }
        at = deeper;
    }
    Some((at, None))
}

/// What a module's file defines at its top level (types, functions, constants, traits,
/// macros), and what it re-exports from its own children (`pub use child::Thing`).
fn own_items(code: &str) -> BTreeSet<String> {
    let children: BTreeSet<String> = declared_modules(code).into_iter().collect();
    let tokens = tokenize(code);
    let mut items = BTreeSet::new();
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        match token.as_str() {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "struct" | "enum" | "fn" | "trait" | "type" | "const" | "static" | "union" if depth == 0 => {
                if let Some(name) = tokens.get(i + 1).filter(|n| is_word(n) && !is_keyword(n)) {
                    items.insert(name.clone());
                }
            }
            "macro_rules" if depth == 0 => {
                if let Some(name) = tokens.get(i + 2) {
                    items.insert(name.clone());
                }
            }
            "use" if depth == 0 && i > 0 && (tokens[i - 1] == "pub" || tokens[i - 1] == ")") => {
                for path in expand(&tokens, i + 1, Vec::new()).0 {
                    let path: Vec<&String> = path.iter().skip_while(|s| *s == "self").collect();
                    if path.len() > 1 && children.contains(path[0].as_str()) {
                        items.insert(path[path.len() - 1].clone());
                    }
                }
            }
            _ => {}
        }
    }
    items
}

fn is_keyword(word: &str) -> bool {
    matches!(word, "fn" | "_" | "mut" | "unsafe" | "async" | "extern")
}

/// Every place where a module takes an item its parent (or a further ancestor) defines or
/// re-exports from a child: `(module, ancestor, item)`.
fn taken_from_ancestors(krate: &Crate) -> Vec<(Vec<String>, Vec<String>, String)> {
    let items: BTreeMap<&Vec<String>, BTreeSet<String>> =
        krate.files.iter().map(|(module, file)| (module, own_items(&code_of(file)))).collect();
    let mut taken = BTreeSet::new();
    for (module, file) in &krate.files {
        let code = code_of(file);
        let children: BTreeSet<String> = declared_modules(&code).into_iter().collect();
        for path in paths_in(&code, &children) {
            let Some((target, Some(name))) = resolve_with_rest(krate, module, &path) else { continue };
            if target.len() >= module.len() || !module.starts_with(&target) {
                continue;
            }
            let defined = &items[&target];
            if defined.contains(&name) || (name == "*" && !defined.is_empty()) {
                taken.insert((module.clone(), target, name));
            }
        }
    }
    taken.into_iter().collect()
}

fn edges(krate: &Crate) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut edges = BTreeMap::new();
    for (module, file) in &krate.files {
        let code = code_of(file);
        let children: BTreeSet<String> = declared_modules(&code).into_iter().collect();
        let targets: BTreeSet<Vec<String>> = paths_in(&code, &children)
            .iter()
            .filter_map(|path| resolve(krate, module, path))
            .filter(|target| !target.starts_with(module))
            .collect();
        edges.insert(module.clone(), targets);
    }
    edges
}

/// Strongly connected components of two or more modules (Tarjan's algorithm).
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct State<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on_stack: BTreeSet<&'a Vec<String>>,
        found: Vec<Vec<Vec<String>>>,
    }
    fn visit<'a>(s: &mut State<'a>, node: &'a Vec<String>) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        for next in s.edges.get(node).into_iter().flatten() {
            if !s.index.contains_key(next) {
                visit(s, next);
                let low = s.low[node].min(s.low[next]);
                s.low.insert(node, low);
            } else if s.on_stack.contains(next) {
                let low = s.low[node].min(s.index[next]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = Vec::new();
            loop {
                let member = s.stack.pop().unwrap();
                s.on_stack.remove(member);
                component.push(member.clone());
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

fn crate_roots() -> Vec<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![workspace.join("src/lib.rs"), workspace.join("src/main.rs")];
    for member in std::fs::read_dir(workspace.join("crates")).unwrap() {
        let lib = member.unwrap().path().join("src/lib.rs");
        if lib.exists() {
            roots.push(lib);
        }
    }
    roots
}

fn describe(
    krate: &Crate,
    circle: &[Vec<String>],
    edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
) -> String {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = |m: &Vec<String>| {
        krate.files[m].strip_prefix(workspace).unwrap_or(&krate.files[m]).display().to_string()
    };
    let mut lines = vec![circle.iter().map(name).collect::<Vec<_>>().join(", ")];
    for from in circle {
        for to in edges[from].iter().filter(|to| circle.contains(to)) {
            lines.push(format!("    {} -> {}", name(from), name(to)));
        }
    }
    lines.join("\n")
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut found = Vec::new();
    let mut modules = 0;
    for root in crate_roots() {
        let krate = module_tree(&root);
        modules += krate.files.len();
        let edges = edges(&krate);
        for circle in circles(&edges) {
            found.push(describe(&krate, &circle, &edges));
        }
    }
    assert!(modules > 100, "read {modules} modules: the module tree was not followed");
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_reader_sees_a_circle_through_a_parent_and_through_braces() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod run;\nmod other;\n");
    write("other.rs", "// crate::run::feed would be a circle, but this is a comment\npub fn f() {}\n");
    write("run/mod.rs", "mod feed;\nmod output;\npub struct Shared;\npub fn go() { feed::start(); }\n");
    write(
        "run/feed.rs",
        "use super::{output::Sink, Shared};\npub fn start() { let _ = \"crate::other\"; }\n",
    );
    write("run/output.rs", "pub struct Sink;\n");
    let super_edges = |root: &Path| edges(&module_tree(root));
    let edges = super_edges(&dir.path().join("lib.rs"));
    let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(edges[&path(&["run", "feed"])], BTreeSet::from([path(&["run"]), path(&["run", "output"])]));
    assert!(edges[&path(&["run"])].is_empty(), "a parent's use of its child is the tree's shape");
    assert!(edges[&path(&["other"])].is_empty(), "a comment or a string is no import");
    assert!(circles(&edges).is_empty());
    write("run/output.rs", "pub struct Sink;\nfn back() { super::feed::start() }\n");
    let edges = super_edges(&dir.path().join("lib.rs"));
    assert_eq!(circles(&edges), vec![vec![path(&["run", "feed"]), path(&["run", "output"])]]);
}

/// Parents whose children still take from them what belongs in a sibling, with how many
/// (child, item) pairs: the number may only fall. `check`'s data checks take their `Finding`,
/// `Context` and helpers from `checks/mod.rs`; the knowledge base's children their shared
/// types from `kb/mod.rs`; the log reader's input its entry points
/// (`scan`, `scan_mapped`) from `log/mod.rs`.
const KNOWN_PARENTS: &[(&str, usize)] = &[
    ("crates/logs/src/kb/mod.rs", 8),
    ("crates/logs/src/log/mod.rs", 2),
    ("src/check/checks/mod.rs", 61),
    ("src/check/mod.rs", 27),
];

#[test]
fn no_module_takes_from_its_parent_what_belongs_in_a_sibling() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut by_parent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for root in crate_roots() {
        let krate = module_tree(&root);
        let name = |m: &Vec<String>| {
            let file = &krate.files[m];
            file.strip_prefix(workspace).unwrap_or(file).display().to_string()
        };
        for (module, ancestor, item) in taken_from_ancestors(&krate) {
            by_parent.entry(name(&ancestor)).or_default().push(format!("{} takes {item}", name(&module)));
        }
    }
    let mut wrong = Vec::new();
    for (parent, taken) in &by_parent {
        let allowed = KNOWN_PARENTS.iter().find(|(p, _)| p == parent).map_or(0, |(_, n)| *n);
        if taken.len() > allowed {
            wrong.push(format!(
                "{parent}: {} taken by its children (at most {allowed}): move what they share into a sibling\n    {}",
                taken.len(),
                taken.join("\n    ")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_reader_sees_a_child_take_from_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod rules;\npub mod shared;\npub use shared::Helper;\npub struct Doc;\n");
    write("shared.rs", "pub struct Helper;\n");
    write(
        "rules/mod.rs",
        "mod one;\npub use one::Rule;\npub fn snippet() {}\nimpl X { fn inner() {} }\n#[cfg(test)]\nmod tests { use super::*; }\n",
    );
    write(
        "rules/one.rs",
        "use super::snippet;\nuse crate::{Doc, Helper};\nuse crate::shared::Helper as H;\npub struct Rule;\n\
         fn f() { super::super::Doc; }\n#[cfg(test)]\nmod tests { use super::super::inner; }\n",
    );
    let krate = module_tree(&dir.path().join("lib.rs"));
    let taken: Vec<String> = taken_from_ancestors(&krate)
        .into_iter()
        .map(|(module, ancestor, item)| format!("{} <- {}: {item}", module.join("::"), ancestor.join("::")))
        .collect();
    // `shared::Helper` named through its own module is no finding; a function inside an
    // `impl` is no item of the file; a test module's imports are left out.
    assert_eq!(taken, ["rules::one <- : Doc", "rules::one <- : Helper", "rules::one <- rules: snippet"]);
}

// --- Python ---------------------------------------------------------------------------
// The package's modules, function-level imports included: the reader is
// tests/python/test_import_circles.py (Python's own `ast`, every import anywhere in a file,
// relative imports resolved), run here so that this test covers both languages.

fn python_circle_check(call: &str) {
    let python = std::env::var_os("ASSERTSCOPE_TEST_PYTHON").unwrap_or_else(|| "python3".into());
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python");
    let code = format!(
        "import pathlib, sys, tempfile\nsys.path.insert(0, {:?})\nimport test_import_circles as circles\nwith tempfile.TemporaryDirectory() as scratch:\n    circles.{call}\n",
        tests.to_str().expect("a UTF-8 path")
    );
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(code)
        .output()
        .unwrap_or_else(|e| panic!("this test needs a Python 3 ({}): {e}", python.to_string_lossy()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_python_package_has_no_import_circle() {
    python_circle_check("test_the_package_has_no_import_circle()");
}

#[test]
fn the_python_reader_sees_a_circle_through_a_function_level_import() {
    python_circle_check("test_a_circle_through_a_function_level_import_is_seen(pathlib.Path(scratch))");
}
