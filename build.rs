//! Build script: the Python the front end freezes into the binary, from two places.
//!
//! - Tailor's own packages in `py/` (the `torch` stand-in, `einops`, `numpy`, `math`,
//!   `dataclasses`, `contextlib`, the front end's helpers): `frontend::interpreter` freezes
//!   that folder with `py_freeze!`, which cargo does not track by itself, hence
//!   `rerun-if-changed=py`. A folder with an `__init__.py` is a package (`einops.layers.torch`).
//! - The CPython modules in `STDLIB`: taken unchanged from the `Lib/` folder of the
//!   `rustpython-pylib` crate (CPython's pure-Python standard library as RustPython 0.6.0
//!   ships it, under the PSF licence: `Lib/PSF-LICENSE`, that crate's licence file) and
//!   compiled here, with the compiler `py_freeze!` uses, into one frozen library,
//!   `$OUT_DIR/stdlib.frozen`, which `frontend::interpreter` includes beside `py/`.
//!   The crate's `freeze-stdlib` feature would freeze all of `Lib/` instead: the page's wasm
//!   would carry hundreds of modules no model imports.
//!
//! `dataclasses` is not in the list: CPython's imports `inspect`, which needs the native
//! `_opcode` and `_tokenize` of RustPython's standard library crate and an `os` without
//! `posix`; `py/dataclasses.py` is Tailor's own small stand-in instead, and so is
//! `py/contextlib.py`: CPython's imports `os`, which would load as a stand-in module.
//! Invariant: this script writes only under `OUT_DIR`.

use rustpython_compiler::core::frozen::{FrozenCodeObject, FrozenLib, FrozenModule};
use rustpython_compiler::{CompileOpts, Mode};
use std::path::{Path, PathBuf};

/// The CPython modules frozen in, by module name, and why each is there: those
/// `import typing` needs, those `copy.deepcopy` needs (model files clone layers with it),
/// and `re` (a package: its submodules by dotted name).
/// The VM itself provides the native modules they import (`_abc`, `_collections`, `_sre`, …).
const STDLIB: [&str; 19] = [
    "typing",           // model files' annotations (`from typing import Optional`)
    "abc",              // typing, _collections_abc: `ABCMeta`
    "_collections_abc", // collections (it is `collections.abc`), typing, weakref
    "collections",      // typing; `py/torch` (`namedtuple`); a package
    "copyreg",          // typing; copy's dispatch table
    "functools",        // typing; model files (`functools.partial`)
    "keyword",          // collections: `namedtuple` checks field names
    "operator",         // typing, collections
    "reprlib",          // collections, functools: `recursive_repr`
    "types",            // typing, functools, copy, _weakrefset
    "copy",             // `copy.deepcopy`
    "weakref",          // copy: `weakref.ref` is copied as an atomic value
    "_weakrefset",      // weakref: `WeakSet`
    "re",               // model files parsing config strings (EfficientNet's `re.split`)
    "re._compiler",     // re
    "re._parser",       // re
    "re._constants",    // re
    "re._casefix",      // re._compiler
    "enum",             // re: its flags are an `enum.IntFlag`
];

fn main() {
    println!("cargo::rerun-if-changed=py");
    println!("cargo::rerun-if-changed=build.rs");
    let lib = Path::new(rustpython_pylib::LIB_PATH);
    let modules: Vec<(&str, FrozenModule<Vec<u8>>)> = STDLIB
        .iter()
        .map(|&name| (name, freeze(lib, name)))
        .collect();
    let frozen = FrozenLib::encode(modules.iter().map(|(name, module)| {
        let code = FrozenCodeObject {
            bytes: module.code.bytes.as_slice(),
        };
        let package = module.package;
        (*name, FrozenModule { code, package })
    }));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("stdlib.frozen"), frozen.bytes).expect("OUT_DIR is writable");
}

/// Compiles module `name` of `lib` (a package is its folder's `__init__.py`; a dotted name
/// is a module of a package) as `py_freeze!` does.
fn freeze(lib: &Path, name: &str) -> FrozenModule<Vec<u8>> {
    let relative = name.replace('.', "/");
    let package_init = lib.join(&relative).join("__init__.py");
    let package = package_init.is_file();
    let path = if package {
        package_init
    } else {
        lib.join(format!("{relative}.py"))
    };
    println!("cargo::rerun-if-changed={}", path.display());
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("reading {}: {err}", path.display()));
    let code = rustpython_compiler::compile(&source, Mode::Exec, name, CompileOpts::default())
        .unwrap_or_else(|err| panic!("compiling {}: {err}", path.display()));
    FrozenModule {
        code: FrozenCodeObject::encode(&code),
        package,
    }
}
