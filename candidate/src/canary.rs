//! What a canary is, for both tools: a file of the checkout under review made unloadable, so a
//! suite that still passes is proved not to read that checkout (`mutants run` before each
//! mutated file's first mutant, `gate run --canary` for each source path of the candidate).
//!
//! Which files are code is decided here, once, for both tools ([`Canary::classify`]): a file
//! whose ending names a source language, an executable-looking script that starts with `#!`
//! (`bin/add`), and any file a suite's command names (`sh test.sh`, `./tools/check`). A
//! generated file the suites never read (a `dist/` bundle) is left out by the `[canary]`
//! table's `skip` globs, and each left-out path is reported with its reason.

use std::ops::Range;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use toml::Spanned;

/// What a canary file holds: a NUL (no source language accepts one outside a string) and
/// unbalanced brackets and quotes, on one line.
pub const UNLOADABLE: &[u8] =
    b"\0 )]}'\"` <<< gatekit canary: this file was made unloadable on purpose >>> ({[\n";

/// The usual reasons a suite does not read the checkout it runs in, for the message that stops
/// a run on a canary.
pub const USUAL_CAUSES: &str = "an editable install in a linked virtualenv (a .pth or direct_url.json pointing at your checkout), an absolute path in a build output or cache, a runner or import path that reads a global install";

/// File name endings of source code (documentation, data and lockfiles are not expected to be
/// read by any suite).
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

/// The `[canary]` table as written (gate.toml and mutants.toml alike).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCanary {
    #[serde(default)]
    pub skip: Vec<Spanned<String>>,
}

/// The `[canary]` table validated: the globs of files no canary is written into.
#[derive(Clone, Debug, Default)]
pub struct Canary {
    skip: Vec<String>,
    set: GlobSet,
}

/// Why a path is, or is not, made unloadable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Code: a canary is written into it, for the reason given.
    Source(&'static str),
    /// Code or not, `[canary] skip` leaves it out: the glob that matched.
    LeftOut(String),
    /// Not code (documentation, data): no suite is expected to read it.
    NotSource,
}

impl Canary {
    /// Validates the table; an error carries the byte span it is about, for FILE:LINE. A
    /// glob is read as a shell reads it: `*` stays within one folder, `**` crosses them.
    pub fn validate(raw: &RawCanary) -> Result<Canary, (Option<Range<usize>>, String)> {
        let mut builder = GlobSetBuilder::new();
        let mut skip = Vec::new();
        for glob in &raw.skip {
            let text = glob.get_ref();
            if let Err(why) = files::path::relative(text) {
                return Err((Some(glob.span()), format!("canary.skip {text:?} {why}")));
            }
            let built = GlobBuilder::new(text)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    (
                        Some(glob.span()),
                        format!("canary.skip {text:?}: {}", e.kind()),
                    )
                })?;
            builder.add(built);
            skip.push(text.clone());
        }
        let set = builder
            .build()
            .map_err(|e| (None, format!("canary.skip: {e}")))?;
        Ok(Canary { skip, set })
    }

    /// Whether `rel` (a path of the candidate, in the checkout `dir`) is code a canary must
    /// prove read, left out by `[canary] skip`, or not code. `named` holds the words of the
    /// suites' commands (see [`command_words`]).
    pub fn classify(&self, dir: &Path, rel: &str, named: &[String]) -> Decision {
        let decision = if is_source(Path::new(rel)) {
            Decision::Source("its name ends as source code does")
        } else if named.iter().any(|w| w == rel) {
            Decision::Source("a suite's command names it")
        } else if starts_with_shebang(&dir.join(rel)) {
            Decision::Source("it is a script (it starts with #!)")
        } else {
            Decision::NotSource
        };
        match self.skipped(rel) {
            Some(why) if decision != Decision::NotSource => Decision::LeftOut(why),
            _ => decision,
        }
    }

    /// Whether the table leaves nothing out.
    pub fn is_empty(&self) -> bool {
        self.skip.is_empty()
    }

    /// `Some("[canary] skip \"GLOB\"")` when a skip glob matches `rel`.
    pub fn skipped(&self, rel: &str) -> Option<String> {
        let i = *self.set.matches(rel).first()?;
        Some(format!("[canary] skip {:?}", self.skip[i]))
    }
}

/// Whether the regular file at `path` (not through a link) begins with `#!`.
fn starts_with_shebang(path: &Path) -> bool {
    use std::io::Read;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"#!"
}

/// The words of a shell command as paths of the tree could appear in it: split at white space
/// and shell operators, quotes taken off, a leading `./` dropped, and the value of a
/// `--flag=VALUE` kept too. Rough on purpose: a word that is no path of the candidate matches
/// nothing.
pub fn command_words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in command.split(|c: char| c.is_whitespace() || ";&|()<>`".contains(c)) {
        let word: String = raw.chars().filter(|c| !"'\"".contains(*c)).collect();
        let mut add = |w: &str| {
            let w = w.trim_start_matches("./");
            if !w.is_empty() && !out.iter().any(|o: &String| o == w) {
                out.push(w.to_string());
            }
        };
        add(&word);
        if let Some((_, value)) = word.split_once('=') {
            add(value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canary(skip: &[&str]) -> Canary {
        let text = format!(
            "skip = [{}]",
            skip.iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        Canary::validate(&toml::from_str(&text).unwrap()).unwrap()
    }

    #[test]
    fn code_is_known_by_ending_by_shebang_and_by_a_suites_command() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("bin/add"), "#!/bin/sh\necho $(($1+$2))\n").unwrap();
        std::fs::write(dir.path().join("check"), "echo ok\n").unwrap();
        std::fs::write(dir.path().join("NOTES"), "notes\n").unwrap();
        let c = canary(&[]);
        let named = command_words("cd . && sh ./check --level=2 'x y'");
        assert!(matches!(
            c.classify(dir.path(), "lib.py", &named),
            Decision::Source(_)
        ));
        assert!(matches!(
            c.classify(dir.path(), "bin/add", &named),
            Decision::Source(_)
        ));
        assert!(matches!(
            c.classify(dir.path(), "check", &named),
            Decision::Source(_)
        ));
        assert_eq!(c.classify(dir.path(), "NOTES", &named), Decision::NotSource);
        assert_eq!(
            c.classify(dir.path(), "README.md", &named),
            Decision::NotSource
        );
    }

    #[test]
    fn skip_globs_leave_code_out_with_the_glob_that_matched() {
        let dir = tempfile::tempdir().unwrap();
        let c = canary(&["dist/**", "gen/*.js"]);
        assert_eq!(
            c.classify(dir.path(), "dist/a/b.js", &[]),
            Decision::LeftOut("[canary] skip \"dist/**\"".into())
        );
        assert!(matches!(
            c.classify(dir.path(), "gen/sub/b.js", &[]),
            Decision::Source(_)
        ));
        assert_eq!(
            c.classify(dir.path(), "dist/notes.md", &[]),
            Decision::NotSource
        );
    }

    #[test]
    fn a_bad_or_escaping_glob_is_refused_at_its_span() {
        for bad in ["a/[b", "../x/**", "/abs/*"] {
            let raw: RawCanary = toml::from_str(&format!("skip = [{bad:?}]")).unwrap();
            let (span, why) = Canary::validate(&raw).unwrap_err();
            assert!(
                span.is_some() && why.starts_with("canary.skip"),
                "{bad}: {why}"
            );
        }
    }
}
