//! What a canary is, for both tools: a file of the checkout under review made unloadable, so a
//! suite that still passes is proved not to read that checkout (`mutants run` before each
//! mutated file's first mutant, `gate run --canary` for each source path of the candidate).

use std::path::Path;

/// What a canary file holds: a NUL (no source language accepts one outside a string) and
/// unbalanced brackets and quotes, on one line.
pub const UNLOADABLE: &[u8] =
    b"\0 )]}'\"` <<< gatekit canary: this file was made unloadable on purpose >>> ({[\n";

/// The usual reasons a suite does not read the checkout it runs in, for the message that stops
/// a run on a canary.
pub const USUAL_CAUSES: &str = "an editable install in a linked virtualenv (a .pth or direct_url.json pointing at your checkout), an absolute path in a build output or cache, a runner or import path that reads a global install";

/// File name endings of source code: the candidate paths `gate run --canary` makes unloadable
/// (documentation, data and lockfiles are not expected to be read by any suite).
const SOURCE_EXTENSIONS: &[&str] = &[
    "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "vue", "svelte", "rs", "go",
    "java", "kt", "kts", "scala", "groovy", "rb", "php", "c", "h", "cc", "cpp", "cxx", "hpp", "hh",
    "cs", "fs", "swift", "m", "mm", "sh", "bash", "lua", "pl", "pm", "ex", "exs", "erl", "hs",
    "ml", "clj", "dart", "r", "jl", "zig", "nim", "cr", "elm",
];

/// Whether `path` names source code by its ending.
pub fn is_source(path: &Path) -> bool {
    path.extension()
        .and_then(|x| x.to_str())
        .is_some_and(|x| SOURCE_EXTENSIONS.contains(&x.to_ascii_lowercase().as_str()))
}
