//! Which language a path is, which grammar reads it, and which paths hold test code.
//!
//! Every per-path rule lives here, so `propose` and its callers ask one place.

use crate::Language;

impl Language {
    /// The language of a path, by its ending; `None` for anything without a grammar here.
    pub fn of_path(path: &str) -> Option<Language> {
        let name = file_name(path);
        let (_, ending) = name.rsplit_once('.')?;
        match ending {
            "rs" => Some(Language::Rust),
            "js" | "mjs" | "cjs" | "jsx" => Some(Language::JavaScript),
            "ts" | "mts" | "cts" => Some(Language::TypeScript),
            "tsx" => Some(Language::Tsx),
            "py" => Some(Language::Python),
            "go" => Some(Language::Go),
            _ => None,
        }
    }

    /// The language's name in output: `rust`, `javascript`, `typescript`, `tsx`, `python`, `go`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Python => "python",
            Language::Go => "go",
        }
    }

    /// The tree-sitter grammar that reads the language.
    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether a path holds test code by the conventions of its language: Rust `tests/` folders,
/// Go `*_test.go`, Python `test_*.py`, `*_test.py`, `tests/` and `conftest.py`, and JavaScript
/// or TypeScript `*.test.*`, `*.spec.*` and `__tests__/`.
pub fn is_test_path(path: &str) -> bool {
    let name = file_name(path);
    let folders: Vec<&str> = path.split('/').collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    let in_folder = |wanted: &[&str]| folders.iter().any(|f| wanted.contains(f));
    match Language::of_path(path) {
        Some(Language::Rust) => in_folder(&["tests"]),
        Some(Language::Go) => name.ends_with("_test.go"),
        Some(Language::Python) => {
            (name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py")
                || in_folder(&["tests"])
        }
        Some(_) => {
            let parts: Vec<&str> = name.split('.').collect();
            let marked = parts.len() >= 3
                && parts[1..parts.len() - 1]
                    .iter()
                    .any(|p| *p == "test" || *p == "spec");
            marked || in_folder(&["__tests__"])
        }
        None => false,
    }
}

/// Lockfiles and other files tools write, known by name.
pub(crate) fn generated_name(path: &str) -> Option<&'static str> {
    const NAMES: &[&str] = &[
        "Cargo.lock",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "go.sum",
        "bun.lockb",
    ];
    let name = file_name(path);
    NAMES.iter().copied().find(|n| *n == name)
}
