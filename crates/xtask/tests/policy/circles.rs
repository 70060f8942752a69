//! No import circle between the top-level modules of a crate: a check of `tests/policy/main.rs`.
//!
//! Each `.rs` file under a crate's `src/` belongs to its top-level module (`src/catalog.rs` and
//! `src/catalog/generated.rs` are both `catalog`); the crate root (`lib.rs`, `main.rs`) is not a
//! module here. A module uses another when its code (comments left out) names
//! `crate::other`, or names an item the root re-exports from it (`crate::{Failure, ..}` with
//! `pub use failure::Failure;` in the root). The check fails for every set of modules that use
//! one another in a circle, naming the edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Modules and the modules each uses.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// `text` without `//` comments (doc comments included) and without string literals' contents,
/// so a link in a doc comment or a path in a message is not a use.
pub fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let mut prev = '\0';
        for c in line.chars() {
            if in_string {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_string = false;
                    out.push('"');
                }
                continue;
            }
            if c == '/' && prev == '/' {
                out.pop();
                break;
            }
            if c == '"' {
                in_string = true;
            }
            out.push(c);
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// The byte position of the `}` that closes a block whose `{` came just before `text` (the
/// text's length when it never closes).
fn closing_brace(text: &str) -> usize {
    let mut depth = 1;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// `code` without its `#[cfg(test)] mod NAME { … }` blocks: a test module may use any part of
/// the crate's API without making its module depend on it.
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let Some(body) = trimmed
            .strip_prefix("mod ")
            .and_then(|m| m.find('{').map(|b| &m[b + 1..]))
        else {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        };
        rest = body.get(closing_brace(body) + 1..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// The identifiers `code` names right after `crate::`: `crate::catalog::X` gives `catalog`,
/// `crate::{Flavor, table::Regions}` gives `Flavor` and `table` (the first segment of each
/// path of the group, nested groups included).
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` or `my_crate::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = closing_brace(group).min(group.len());
            // Split the group's top level at commas; each part's first segment is a name.
            let (mut depth, mut start) = (0, 0);
            let inner = &group[..end];
            let mut parts = Vec::new();
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(&inner[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            parts.push(&inner[start..]);
            for part in parts {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != "self" {
                    names.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// What the crate root re-exports: item name → the top-level module it comes from
/// (`pub use failure::Failure;`, `pub use resolve::{a, b};`).
fn root_exports(root: &str) -> BTreeMap<String, String> {
    let mut exports = BTreeMap::new();
    for statement in code_only(root).split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.strip_prefix("crate::").unwrap_or(rest);
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        for item in items.split([',', '{', '}']) {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            let name = name.rsplit("::").next().unwrap_or(name);
            if !name.is_empty() && name != "*" {
                exports.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    exports
}

/// The module graph of the crate whose sources are in `src`.
pub fn graph(src: &Path) -> Result<Graph, String> {
    let root_file = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{}: no lib.rs or main.rs", src.display()))?;
    let root =
        std::fs::read_to_string(&root_file).map_err(|e| format!("{}: {e}", root_file.display()))?;
    let exports = root_exports(&root);
    let mut files = Vec::new();
    collect_rs(src, &mut files)?;
    let mut graph = Graph::new();
    let mut uses: Vec<(String, Vec<String>)> = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap_or(&file);
        let mut parts = rel.components();
        let first = parts
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
        if module == "lib" || module == "main" || (module == "bin" && parts.next().is_some()) {
            continue;
        }
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        graph.entry(module.clone()).or_default();
        uses.push((
            module,
            crate_paths(&without_test_modules(&code_only(&text))),
        ));
    }
    for (module, names) in uses {
        for name in names {
            let used = if graph.contains_key(&name) {
                Some(name)
            } else {
                exports.get(&name).cloned()
            };
            if let Some(used) = used.filter(|u| *u != module && graph.contains_key(u)) {
                graph.entry(module.clone()).or_default().insert(used);
            }
        }
    }
    Ok(graph)
}

/// Every `.rs` file under `dir`, in name order.
pub fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The sets of two or more modules that use one another in a circle (strongly connected
/// components), each sorted; empty when the graph has none.
pub fn circles(graph: &Graph) -> Vec<Vec<String>> {
    // Two modules are in one circle when each reaches the other.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(m) = stack.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for m in graph.keys() {
        if done.contains(m) || !reachable[m].contains(m) {
            continue;
        }
        let set: Vec<String> = graph
            .keys()
            .filter(|o| *o == m || (reachable[m].contains(*o) && reachable[*o].contains(m)))
            .cloned()
            .collect();
        done.extend(set.iter().cloned());
        found.push(set);
    }
    found
}

/// Every import circle of the crates whose `src/` directories are given, as messages.
pub fn check(srcs: &[&Path], problems: &mut Vec<String>) -> Result<(), String> {
    for src in srcs {
        let graph = graph(src)?;
        for circle in circles(&graph) {
            let edges: Vec<String> = circle
                .iter()
                .flat_map(|m| {
                    graph[m]
                        .iter()
                        .filter(|u| circle.contains(u))
                        .map(move |u| format!("{m} → {u}"))
                })
                .collect();
            problems.push(format!(
                "{}: an import circle between {}: {}",
                src.display(),
                circle.join(", "),
                edges.join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_come_from_code_paths_and_root_exports_not_comments_or_strings() {
        let code = code_only(
            "use crate::{Flavor, table::{A, B}, self};\n// crate::hidden\nlet s = \"crate::quoted\";\n$crate::not_ours::x; crate::catalog::X",
        );
        assert_eq!(crate_paths(&code), ["Flavor", "table", "catalog"]);
        let exports = root_exports("pub use failure::Failure;\npub use resolve::{a, b as c};\n");
        assert_eq!(exports["Failure"], "failure");
        assert_eq!(exports["c"], "resolve");
        let code =
            "use crate::a;\n#[cfg(test)]\nmod tests { fn f() { crate::b::g(); } }\nuse crate::c;";
        assert_eq!(crate_paths(&without_test_modules(code)), ["a", "c"]);
    }

    #[test]
    fn a_circle_is_found_and_a_chain_is_not() {
        let mut graph = Graph::new();
        let edge = |g: &mut Graph, a: &str, b: &str| {
            g.entry(a.into()).or_default().insert(b.into());
            g.entry(b.into()).or_default();
        };
        edge(&mut graph, "a", "b");
        edge(&mut graph, "b", "c");
        assert!(circles(&graph).is_empty());
        edge(&mut graph, "c", "a");
        edge(&mut graph, "c", "d");
        assert_eq!(circles(&graph), [vec!["a", "b", "c"]]);
    }

    #[test]
    fn the_workspace_has_no_circle() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let graph = graph(&root.join("src")).unwrap();
        // The graph is read: the core's resolver uses its catalog.
        assert!(graph["resolve"].contains("catalog"), "{graph:?}");
        assert!(circles(&graph).is_empty(), "{:?}", circles(&graph));
    }
}
