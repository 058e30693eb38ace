//! Tidy checks: the architecture's invariants that grep can check, as tests (after
//! rust-analyzer's `tidy.rs`).
//!
//! In: the source tree on disk (`src/`, `tests/`, `examples/`) and ARCHITECTURE.md. Out: a
//! failing test naming the file and line that breaks a rule. Invariant: each rule is one row
//! of a table — where a name may appear and why — so adding a boundary is adding a row.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir` (relative to the crate root), sorted.
fn rust_files(dir: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The path relative to the crate root, with `/` separators.
fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The lines of a file that are code, not comments (doc or plain), with their numbers.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line))
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
}

/// A name that only some files may use in code.
struct Boundary {
    /// The text searched for.
    name: &'static str,
    /// Path prefixes (from the crate root) where it is allowed.
    allowed: &'static [&'static str],
    /// Why (printed when the rule breaks).
    why: &'static str,
}

const BOUNDARIES: &[Boundary] = &[
    Boundary {
        name: "wgpu::",
        allowed: &["src/runtime/gpu/"],
        why: "the wgpu runtime is the one GPU boundary; everything else goes through session::executor",
    },
    Boundary {
        name: "wasm_bindgen",
        allowed: &["src/web/", "src/runtime/gpu/browser.rs"],
        why: "web/ is the only code that knows JavaScript, besides the GPU runtime's browser objects",
    },
    Boundary {
        name: "lower::lower",
        allowed: &["src/compile.rs", "src/lower/"],
        why: "the compile pipeline (compile.rs) is the one caller of lowering",
    },
    Boundary {
        name: "emit_schedule(",
        allowed: &["src/compile.rs", "src/codegen/", "src/runtime/gpu/"],
        why: "WGSL is emitted by the compile pipeline and kept in the entry",
    },
    Boundary {
        name: "gpu::Program",
        allowed: &["src/runtime/", "src/session/executor.rs"],
        why: "callers run kernels through session::executor, which owns each entry's programs",
    },
    Boundary {
        name: "rustpython_vm",
        allowed: &["src/frontend/"],
        why: "the Python VM is the front end's business; the compiler never sees a Python object",
    },
    Boundary {
        name: "println!",
        allowed: &["src/bin/"],
        why: "the library does no IO (STYLE.md); only the command line prints",
    },
];

#[test]
fn every_file_starts_with_a_module_header() {
    let missing: Vec<String> = ["src", "tests", "examples"]
        .iter()
        .flat_map(|dir| rust_files(dir))
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|path| relative(&path))
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` header saying where they sit, what goes in and out, and their invariant: {missing:?}"
    );
}

#[test]
fn names_stay_inside_their_boundaries() {
    let mut broken = Vec::new();
    for path in rust_files("src") {
        let file = relative(&path);
        let text = std::fs::read_to_string(&path).expect("a source file reads");
        for rule in BOUNDARIES {
            if rule.allowed.iter().any(|prefix| file.starts_with(prefix)) {
                continue;
            }
            for (line, code) in code_lines(&text) {
                if code.contains(rule.name) {
                    broken.push(format!("{file}:{line}: `{}` ({})", rule.name, rule.why));
                }
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_code_map_names_every_module() {
    let architecture =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md reads");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut unnamed = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src/ reads").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // Named in backticks, bare (`cache.rs`, `lower/`) or with its path (`src/main.rs`).
        let mapped = if entry.path().is_dir() {
            format!("{name}/")
        } else if name.ends_with(".rs") && name != "lib.rs" {
            format!("{name}`")
        } else {
            continue;
        };
        if !architecture.contains(&mapped) {
            unnamed.push(name);
        }
    }
    unnamed.sort();
    assert!(
        unnamed.is_empty(),
        "ARCHITECTURE.md's code map does not name these modules of src/: {unnamed:?}"
    );
}

/// The floors of the library, bottom first: a module may import (`crate::…`) only modules on
/// floors below its own, so the imports form a DAG and the house reads from the bottom up.
/// Modules on one floor do not import each other. A new module of `src/` needs a row here.
const FLOORS: &[(&[&str], &str)] = &[
    (
        &["symbolic", "config", "trace", "message"],
        "leaves: expressions over sizes, the learner's settings, the records the page shows",
    ),
    (
        &["graph"],
        "the IR: nodes over symbolic shapes, and its reference evaluation",
    ),
    (
        &["shape"],
        "the ShapeEnv and one shape rule per op, over the graph",
    ),
    (
        &["guard", "lower"],
        "guards from the ShapeEnv; lowering a graph to kernels",
    ),
    (&["codegen"], "WGSL for the lowered kernels"),
    (
        &["compile", "runtime"],
        "the compile pipeline; the CPU and GPU runtimes",
    ),
    (
        &["frontend"],
        "the user's Python on a real VM, captured into a graph",
    ),
    (
        &["weights", "spec", "torch_trace"],
        "values, input specifications and PyTorch's traces from outside",
    ),
    (
        &["error"],
        "every floor's errors in one enum, and their messages",
    ),
    (
        &["cache"],
        "torch.compile's guard cache: hit, recompile or eager",
    ),
    (
        &["session"],
        "load, explain and run calls: the one way in for callers",
    ),
    (
        &["script", "quiz"],
        "script mode; the quiz and generated exercises",
    ),
    (&["compare"], "a PyTorch trace beside a script's run"),
    (&["bench"], "the benchmark"),
    (&["web"], "the page's JS API"),
];

/// The floor of top-level module `module`, if the table has it.
fn floor_of(module: &str) -> Option<usize> {
    FLOORS
        .iter()
        .position(|(modules, _)| modules.contains(&module))
}

/// The modules `code` takes names from through `crate::` (the first segment after it, and
/// each item of a grouped import such as `use crate::{graph::Graph, shape};`), with the
/// line each is on.
fn crate_references(code: &str) -> Vec<(usize, String)> {
    let ident = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let line_at = |offset: usize| code[..offset].matches('\n').count() + 1;
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let after = at + "crate::".len();
        let Some(group) = code[after..].strip_prefix('{') else {
            names.push((line_at(at), ident(&code[after..])));
            continue;
        };
        let mut depth = 1;
        let mut item_start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 1 => item_start = true,
                c if depth == 1 && item_start && (c.is_alphanumeric() || c == '_') => {
                    names.push((line_at(after + 1 + i), ident(&group[i..])));
                    item_start = false;
                }
                _ => {}
            }
            if depth == 0 {
                break;
            }
        }
    }
    names
}

#[test]
fn imports_only_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: Vec<String> = std::fs::read_dir(&src)
        .expect("src/ reads")
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let module = if entry.path().is_dir() {
                name
            } else {
                name.strip_suffix(".rs")?.to_string()
            };
            (module != "lib" && module != "bin").then_some(module)
        })
        .collect();
    let mut broken: Vec<String> = modules
        .iter()
        .filter(|module| floor_of(module).is_none())
        .map(|module| format!("src/{module}: not in tidy.rs's FLOORS table; give it a floor"))
        .collect();
    for path in rust_files("src") {
        let file = relative(&path);
        let inside = file.trim_start_matches("src/");
        // The crate root declares the floors; the CLI is a crate of its own (`tailor::…`);
        // unit tests may build whatever they check with (a test file, or a file's last
        // `#[cfg(test)] mod`, which is where this crate keeps them).
        if inside == "lib.rs" || inside.starts_with("bin/") || inside.contains("tests") {
            continue;
        }
        let module = inside
            .split('/')
            .next()
            .expect("a path has a first part")
            .trim_end_matches(".rs");
        let Some(floor) = floor_of(module) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("a source file reads");
        let text = text.split("#[cfg(test)]\nmod ").next().unwrap_or(&text);
        // Comment lines blanked, so that line numbers stay the file's.
        let code: String = text
            .lines()
            .map(|line| {
                if line.trim_start().starts_with("//") {
                    ""
                } else {
                    line
                }
            })
            .flat_map(|line| [line, "\n"])
            .collect();
        for (line, name) in crate_references(&code) {
            if name == module {
                continue;
            }
            match floor_of(&name) {
                Some(target) if target < floor => {}
                Some(target) => broken.push(format!(
                    "{file}:{line}: `{module}` (floor {floor}) imports `{name}` (floor {target}): \
                     an import may only point down ({})",
                    FLOORS[floor].1
                )),
                None => broken.push(format!(
                    "{file}:{line}: `crate::{name}` is not a module: name the module that \
                     defines it, since the root's re-exports are for the crate's users"
                )),
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The module paths a file's code names through `crate::`, `super::` or `self::`, resolved
/// from `module` (the file's own path: `["frontend", "objects"]`; a `mod.rs` is its folder's),
/// each group of a grouped import (`use super::{a::B, c};`) a path of its own.
fn module_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    fn ident(text: &str) -> &str {
        let end = text
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(text.len());
        &text[..end]
    }
    /// The paths under `prefix` written at the start of `text` (after a `::`).
    fn read(text: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let text = text.trim_start();
        if let Some(group) = text.strip_prefix('{') {
            let mut depth = 0;
            let mut item = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        read(&group[item..i], prefix.clone(), out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        read(&group[item..i], prefix.clone(), out);
                        item = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let name = ident(text);
        if name.is_empty() {
            out.push(prefix);
            return;
        }
        let mut path = prefix;
        path.push(name.to_string());
        match text[name.len()..].strip_prefix("::") {
            Some(rest) => read(rest, path, out),
            None => out.push(path),
        }
    }
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    for start in 0..code.len() {
        if !code.is_char_boundary(start) {
            continue;
        }
        let boundary = start == 0
            || !(bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_'
                || bytes[start - 1] == b':');
        if !boundary {
            continue;
        }
        let rest = &code[start..];
        let (mut base, mut tail) = if let Some(tail) = rest.strip_prefix("crate::") {
            (Vec::new(), tail)
        } else if let Some(tail) = rest.strip_prefix("self::") {
            (module.to_vec(), tail)
        } else if let Some(tail) = rest.strip_prefix("super::") {
            (module[..module.len().saturating_sub(1)].to_vec(), tail)
        } else {
            continue;
        };
        while let Some(more) = tail.strip_prefix("super::") {
            base.pop();
            tail = more;
        }
        read(tail, base, &mut paths);
    }
    paths
}

#[test]
fn files_of_a_folder_import_as_a_dag() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // Every file as its module path (`src/frontend/call/mod.rs` is `frontend::call`).
    let files: Vec<(String, Vec<String>)> = rust_files("src")
        .into_iter()
        .filter_map(|path| {
            let inside = path
                .strip_prefix(&src)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            if inside == "lib.rs" || inside.starts_with("bin/") || inside.ends_with("tests.rs") {
                return None;
            }
            let mut module: Vec<String> = inside
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_string)
                .collect();
            if module.last().is_some_and(|last| last == "mod") {
                module.pop();
            }
            Some((inside, module))
        })
        .collect();
    let is_module = |path: &[String]| files.iter().any(|(_, m)| m.starts_with(path));
    // Edges between the children of one folder: `a::b -> a::c` when a file in `a::b` names
    // `a::c` (a folder's own `mod.rs` only names its children, so it is not a node).
    let mut edges: std::collections::BTreeSet<(String, String)> = Default::default();
    for (inside, module) in &files {
        let text = std::fs::read_to_string(src.join(inside)).expect("a source file reads");
        let text = text.split("#[cfg(test)]\nmod ").next().unwrap_or(&text);
        let code: String = code_lines(text)
            .flat_map(|(_, line)| [line, "\n"])
            .collect();
        for path in module_paths(&code, module) {
            let common = module.iter().zip(&path).take_while(|(a, b)| a == b).count();
            if common >= module.len() || common >= path.len() {
                continue;
            }
            let from = module[..=common].join("::");
            let to = path[..=common].join("::");
            if is_module(&path[..=common]) {
                edges.insert((from, to));
            }
        }
    }
    // A loop is a strongly connected set of two or more children; Tarjan's would do, but
    // the folders are small: a child is in a loop with each child it reaches and back.
    let reaches = |from: &str, to: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut pending = vec![from.to_string()];
        while let Some(node) = pending.pop() {
            for (a, b) in &edges {
                if *a == node && seen.insert(b.clone()) {
                    if b == to {
                        return true;
                    }
                    pending.push(b.clone());
                }
            }
        }
        false
    };
    let mut broken = Vec::new();
    for (a, b) in &edges {
        if reaches(b, a) {
            broken.push(format!(
                "`{a}` imports `{b}`, and `{b}` reaches `{a}` again: the files of a folder \
                 import as a DAG (move what both need into a file below them)"
            ));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
