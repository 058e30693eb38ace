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
        why: "the wgpu runtime is the one GPU boundary; everything else goes through runtime::executor",
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
        allowed: &["src/runtime/"],
        why: "callers run kernels through runtime::executor, which owns each entry's programs",
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
