//! The source tree keeps the shape `docs/ARCHITECTURE.md` describes: every pass beside
//! its WGSL, no module importing in a circle, the map naming every folder and every
//! file of the render wiring and the passes, and no WGSL layout attribute the web loses.
//!
//! Plain text checks on `src/`, no GPU and no Bevy app.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const ARCHITECTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ARCHITECTURE.md");

/// A module path such as `["render", "passes", "scan"]`; the crate root is `[]`.
type ModPath = Vec<String>;

/// Every `.rs` file under `src/`, by the module it defines.
fn modules() -> BTreeMap<ModPath, PathBuf> {
    let mut found = BTreeMap::new();
    let mut stack = vec![PathBuf::from(SRC)];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.insert(module_path(&path), path);
            }
        }
    }
    found
}

fn module_path(file: &Path) -> ModPath {
    let relative = file.strip_prefix(SRC).expect("under src/");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts
}

/// The file's code without comments, string literals and its inline test module
/// (whose `super` means the file itself).
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every path the code names: `use` trees expanded, plus paths written inline.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut inline = String::with_capacity(code.len());
    let mut rest = code;
    // `use` declarations, with their brace groups expanded and cut from the code.
    while let Some(at) = find_word(rest, "use") {
        let after = &rest[at + 3..];
        let Some(end) = after.find(';') else { break };
        inline.push_str(&rest[..at]);
        expand_use(&after[..end], &mut Vec::new(), &mut paths);
        rest = &after[end..];
    }
    inline.push_str(rest);
    // Inline paths (`super::common::WORKGROUP_SIZE`, `passes::SplatPipelines::new`).
    for token in inline.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
        let segments: Vec<String> = token
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if token.contains("::") && !segments.is_empty() {
            paths.push(segments);
        }
    }
    paths
}

fn find_word(haystack: &str, word: &str) -> Option<usize> {
    let bytes = haystack.as_bytes();
    let mut from = 0;
    while let Some(found) = haystack[from..].find(word) {
        let at = from + found;
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + word.len()).copied();
        let boundary = |b: Option<u8>| b.is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_'));
        if boundary(before) && after.is_some_and(|b| b.is_ascii_whitespace()) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand_use(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let depth = prefix.len();
        prefix.extend(head);
        let mut level = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => level += 1,
                '}' => level -= 1,
                ',' if level == 0 => {
                    expand_use(&inner[start..i], prefix, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use(&inner[start..], prefix, out);
        prefix.truncate(depth);
    } else if !tree.is_empty() {
        let name = tree.split(" as ").next().unwrap_or(tree);
        let mut path = prefix.clone();
        path.extend(
            name.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        out.push(path);
    }
}

/// The module a path lands in, if it is one of ours.
fn resolve(
    from: &ModPath,
    path: &[String],
    known: &BTreeSet<ModPath>,
    children: &BTreeSet<String>,
) -> Option<ModPath> {
    let mut base: ModPath;
    let mut segments = path.iter().peekable();
    match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            base = Vec::new();
            segments.next();
        }
        Some("super") | Some("self") => {
            base = from.clone();
            while let Some(s) = segments.peek() {
                match s.as_str() {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                segments.next();
            }
        }
        Some(first) if children.contains(first) => base = from.clone(),
        _ => return None,
    }
    // The longest prefix that names a module of ours.
    let mut resolved = base.clone();
    for segment in segments {
        base.push(segment.clone());
        if known.contains(&base) {
            resolved = base.clone();
        } else {
            break;
        }
    }
    Some(resolved)
}

fn import_graph() -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let files = modules();
    let known: BTreeSet<ModPath> = files.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, file) in &files {
        let text = fs::read_to_string(file).expect("a readable source file");
        let code = code_of(&text);
        let children: BTreeSet<String> = known
            .iter()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].clone())
            .collect();
        let edges: BTreeSet<ModPath> = paths_in(&code)
            .iter()
            .filter_map(|p| resolve(module, p, &known, &children))
            // A module reaching into its own descendants is not an import of itself.
            .filter(|target| target != module)
            .collect();
        graph.insert(module.clone(), edges);
    }
    graph
}

/// A cycle through the graph, if there is one.
fn find_cycle(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &ModPath,
        graph: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        marks: &mut BTreeMap<ModPath, Mark>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = stack.iter().position(|m| m == node).unwrap_or(0);
                let mut cycle = stack[start..].to_vec();
                cycle.push(node.clone());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.clone(), Mark::Open);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut marks, &mut Vec::new()))
}

fn show(path: &ModPath) -> String {
    if path.is_empty() {
        "crate".to_owned()
    } else {
        path.join("::")
    }
}

#[test]
fn no_module_imports_in_a_circle() {
    let graph = import_graph();
    // The checker sees the imports it must: a sanity check on its parsing.
    let module = |path: &[&str]| path.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let prepare = graph
        .get(&module(&["render", "prepare", "view_buffers"]))
        .expect("render::prepare::view_buffers exists");
    assert!(prepare.contains(&module(&["render", "passes"])));
    assert!(prepare.contains(&module(&["render", "view", "sizing"])));
    if let Some(cycle) = find_cycle(&graph) {
        let names: Vec<String> = cycle.iter().map(show).collect();
        panic!("modules import in a circle: {}", names.join(" → "));
    }
}

#[test]
fn the_checker_finds_a_circle() {
    let a = vec!["a".to_owned()];
    let b = vec!["a".to_owned(), "b".to_owned()];
    let graph = BTreeMap::from([
        (a.clone(), BTreeSet::from([b.clone()])),
        (b.clone(), BTreeSet::from([a.clone()])),
    ]);
    assert_eq!(find_cycle(&graph), Some(vec![a.clone(), b, a]));
    let render = vec!["render".to_owned()];
    let view = vec!["render".to_owned(), "view".to_owned()];
    let bands = vec!["render".to_owned(), "view".to_owned(), "bands".to_owned()];
    let known = BTreeSet::from([render, view.clone(), bands.clone()]);
    let mut paths = Vec::new();
    expand_use(
        "super::{bands::{Band, BandNeed}, Other}",
        &mut Vec::new(),
        &mut paths,
    );
    let from = vec!["render".to_owned(), "view".to_owned(), "sizing".to_owned()];
    let targets: Vec<_> = paths
        .iter()
        .filter_map(|p| resolve(&from, p, &known, &BTreeSet::new()))
        .collect();
    assert_eq!(targets, vec![bands.clone(), bands, view]);
}

#[test]
fn every_pass_sits_beside_its_wgsl() {
    let passes = Path::new(SRC).join("render/passes");
    assert!(
        !Path::new(SRC).join("render/shaders").exists(),
        "shaders live beside their passes, not in render/shaders"
    );
    let mut rust = BTreeSet::new();
    let mut wgsl = BTreeSet::new();
    let mut folders = Vec::new();
    for entry in fs::read_dir(&passes).expect("src/render/passes exists") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            folders.push(path);
            continue;
        }
        let stem = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        match path.extension().and_then(|e| e.to_str()) {
            Some("rs") if stem != "mod" => {
                rust.insert(stem);
            }
            Some("wgsl") => {
                wgsl.insert(stem);
            }
            _ => {}
        }
    }
    // The shader library, its Rust↔WGSL contract test and the pipeline builders are
    // no pass.
    let not_passes = ["library", "contract", "builder", "kernel_stats"];
    for pass in rust.iter().filter(|m| !not_passes.contains(&m.as_str())) {
        assert!(
            wgsl.contains(pass),
            "passes/{pass}.rs has no passes/{pass}.wgsl"
        );
    }
    // Every shader is compiled by a pass of its own stem or one it extends
    // (`scan_setup.wgsl` belongs to `scan.rs`), or is a module of the shader library
    // that such a pass imports (`preprocess_types.wgsl`).
    let library = fs::read_to_string(passes.join("library.rs")).expect("readable");
    for shader in &wgsl {
        let owner = rust
            .iter()
            .filter(|pass| shader == *pass || shader.starts_with(&format!("{pass}_")))
            .max_by_key(|pass| pass.len())
            .unwrap_or_else(|| panic!("passes/{shader}.wgsl belongs to no pass"));
        let source = fs::read_to_string(passes.join(format!("{owner}.rs"))).expect("readable");
        let named = |text: &str| {
            text.contains(&format!("include_str!(\"{shader}.wgsl\")"))
                || text.contains(&format!("wgsl_file!(\"{shader}.wgsl\")"))
        };
        // The library lists its modules' files by name, once.
        let listed = library.contains(&format!("\"{shader}.wgsl\""));
        assert!(
            named(&source) || listed,
            "neither passes/{owner}.rs nor the shader library compiles passes/{shader}.wgsl"
        );
    }
    // A pass split into a folder (`radix_sort/`) keeps its WGSL in that folder, each
    // file compiled by the folder's Rust or a module of the shader library.
    for folder in folders {
        let name = folder
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        assert!(
            folder.join("mod.rs").exists(),
            "passes/{name}/ is no pass: it has no mod.rs"
        );
        let mut sources = String::new();
        let mut shaders = Vec::new();
        for entry in fs::read_dir(&folder).expect("a readable folder") {
            let path = entry.expect("a directory entry").path();
            let file = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            match path.extension().and_then(|e| e.to_str()) {
                Some("rs") => sources.push_str(&fs::read_to_string(&path).expect("readable")),
                Some("wgsl") => shaders.push(file),
                _ => {}
            }
        }
        assert!(!shaders.is_empty(), "passes/{name}/ has no WGSL");
        for shader in shaders {
            let compiled = sources.contains(&format!("!(\"{shader}\")"))
                || library.contains(&format!("\"{name}/{shader}\""));
            assert!(
                compiled,
                "neither passes/{name}/ nor the shader library compiles passes/{name}/{shader}"
            );
        }
    }
}

#[test]
fn the_architecture_map_names_every_folder_and_render_file() {
    let map = fs::read_to_string(ARCHITECTURE).expect("docs/ARCHITECTURE.md exists");
    let mut missing = Vec::new();
    for file in modules().values() {
        let relative = file.strip_prefix(SRC).expect("under src/");
        let folder = relative.parent().unwrap_or(Path::new(""));
        if !folder.as_os_str().is_empty() {
            let name = format!("{}/", folder.display());
            if !map.contains(&name) {
                missing.push(name);
            }
        }
        // The render wiring and the passes are named file by file.
        let in_render = folder == Path::new("render")
            || folder == Path::new("render/passes")
            || folder == Path::new("render/view");
        let name = relative
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if in_render && name != "mod.rs" && !map.contains(&name) {
            missing.push(relative.display().to_string());
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md does not mention {missing:?}"
    );
}

/// No WGSL struct of the crate sets its layout with `@size` or `@align`. On the web
/// wgpu hands the browser WGSL that naga writes back from the composed module, and
/// naga's WGSL writer drops both attributes (naga 29, `back::wgsl::write_struct`):
/// the browser would lay the struct out naturally while the host writes it padded.
/// The prefix scan's 256-byte state records did exactly that and drew nothing in
/// Chromium, with every native test passing. Pad with named fields instead.
#[test]
fn no_wgsl_struct_sets_its_layout_by_attribute() {
    let mut found = Vec::new();
    let mut folders = vec![PathBuf::from(SRC)];
    let mut wgsl_files = 0;
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).expect("a readable folder") {
            let path = entry.expect("a readable entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "wgsl") {
                wgsl_files += 1;
                let text = fs::read_to_string(&path).expect("readable WGSL");
                for (line, code) in text.lines().enumerate() {
                    let code = code.split("//").next().unwrap_or_default();
                    if code.contains("@size(") || code.contains("@align(") {
                        found.push(format!("{}:{}", path.display(), line + 1));
                    }
                }
            }
        }
    }
    assert!(wgsl_files > 20, "found only {wgsl_files} WGSL files");
    assert!(
        found.is_empty(),
        "layout attributes the web loses: {found:?}"
    );
}
