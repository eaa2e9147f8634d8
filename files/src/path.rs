//! The one rule for a relative path read from a file or a flag: a gate.toml `glob`, a
//! mutants.toml `file`, a `[worktree]` `link` or `cache`, a manifest line.
//!
//! Such a path names something inside a tree (the candidate's checkout, the repository), so it
//! may never leave it by its spelling. Whether a link on the way leads out is a question for
//! the tree at run time ([`crate::walk`], `manifests`' lookup); this rule reads only the text.
//!
//! The rule, case by case (each is tested once below):
//! - **empty** (zero bytes): refused, [`PathError::Empty`]. A name of only spaces is a name (a
//!   file may be called ` `); a config that means "blank is a mistake" says so of all its
//!   strings, before a path is read.
//! - **NUL**: refused, [`PathError::Nul`]: no file name and no argument can carry one.
//! - **too long** ([`PATH_MAX`] bytes or more): refused, [`PathError::TooLong`]: the kernel
//!   opens no such path, and an error quoting it whole would be a megabyte long.
//! - **absolute** (starts with `/`): refused, [`PathError::Absolute`].
//! - **`..` anywhere**: refused, [`PathError::ParentDir`], even `a/../b`, which stays inside:
//!   a path that climbs is a mistake or an attack, never what a user means.
//! - **`.`, `./.`, `./`**: refused, [`PathError::NoName`]: they name the tree itself.
//! - **`./a`, `a/./b`, `a//b`**: accepted, what some tools write (`find . | xargs sha256sum`
//!   writes `./a`, and sha256sum reads it back); [`RelPath::as_bytes`] gives the plain form
//!   `a/b`, and a caller that keeps the path as written (a manifest, a glob) may.
//! - **trailing `/`** (`node_modules/`): accepted, and it says the path names a folder
//!   ([`RelPath::names_folder`]); a caller that needs a file (a manifest line, a mutant's
//!   file) refuses it as naming no file.
//! - **backslash**: an ordinary byte of a name, as on every Unix file system and in git: no
//!   separator, no escape.
//! - **bytes that are not UTF-8**: accepted by [`relative_bytes`] (a manifest names files by
//!   their bytes); text from a TOML file is UTF-8 already and goes through [`relative`].

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// Linux's `PATH_MAX`: a path of this many bytes or more cannot be opened (the count includes
/// the closing NUL).
pub const PATH_MAX: usize = 4096;

/// Why a path breaks the rule. The message is a predicate (`is empty`), so each caller can put
/// its own file, line, key and path in front of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("is empty")]
    Empty,
    #[error("holds a NUL byte")]
    Nul,
    #[error("is {PATH_MAX} bytes or longer, so no file can be opened by it")]
    TooLong,
    #[error("is absolute (write it relative to the tree's root)")]
    Absolute,
    #[error("climbs out of the tree with `..`")]
    ParentDir,
    #[error("names the tree's root itself, not a path in it")]
    NoName,
}

/// A path that passed the rule, in its plain form: its names joined by single `/`, without
/// `.` components or a trailing `/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelPath {
    plain: Vec<u8>,
    folder: bool,
}

impl RelPath {
    /// The plain form's bytes (`./a//b/` gives `a/b`).
    pub fn as_bytes(&self) -> &[u8] {
        &self.plain
    }

    /// The plain form as a path, to join onto a root.
    pub fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.plain))
    }

    /// The plain form as text; always `Some` for a path read by [`relative`].
    pub fn to_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.plain).ok()
    }

    /// Whether it was written with a trailing `/`, which says it names a folder.
    pub fn names_folder(&self) -> bool {
        self.folder
    }
}

/// Checks `text` against the rule (see the module doc).
pub fn relative(text: &str) -> Result<RelPath, PathError> {
    relative_bytes(text.as_bytes())
}

/// Checks `path`, as bytes, against the rule (see the module doc).
pub fn relative_bytes(path: &[u8]) -> Result<RelPath, PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.len() >= PATH_MAX {
        return Err(PathError::TooLong);
    }
    if path.contains(&0) {
        return Err(PathError::Nul);
    }
    if path[0] == b'/' {
        return Err(PathError::Absolute);
    }
    let names: Vec<&[u8]> = path
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .collect();
    if names.iter().any(|c| *c == b"..") {
        return Err(PathError::ParentDir);
    }
    if names.is_empty() {
        return Err(PathError::NoName);
    }
    Ok(RelPath {
        plain: names.join(&b'/'),
        folder: path.ends_with(b"/"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(p: &str) -> String {
        relative(p).unwrap().to_str().unwrap().to_string()
    }

    #[test]
    fn empty_is_refused_but_a_name_of_spaces_is_a_name() {
        assert_eq!(relative(""), Err(PathError::Empty));
        assert_eq!(plain(" "), " ");
    }

    #[test]
    fn a_nul_byte_is_refused() {
        assert_eq!(relative("a\0b"), Err(PathError::Nul));
    }

    #[test]
    fn a_path_the_kernel_cannot_open_is_refused() {
        assert_eq!(relative(&"a".repeat(PATH_MAX)), Err(PathError::TooLong));
        assert!(relative(&"a".repeat(PATH_MAX - 1)).is_ok());
    }

    #[test]
    fn absolute_is_refused() {
        assert_eq!(relative("/etc/passwd"), Err(PathError::Absolute));
    }

    #[test]
    fn a_dot_dot_anywhere_is_refused() {
        for p in ["..", "../a", "a/..", "a/../b", "./.."] {
            assert_eq!(relative(p), Err(PathError::ParentDir), "{p}");
        }
    }

    #[test]
    fn dot_alone_names_the_root_and_is_refused() {
        for p in [".", "./.", "./", ".//."] {
            assert_eq!(relative(p), Err(PathError::NoName), "{p}");
        }
    }

    #[test]
    fn dot_components_and_doubled_slashes_are_plain_names_joined() {
        assert_eq!(plain("./a"), "a");
        assert_eq!(plain("a/./b"), "a/b");
        assert_eq!(plain("a//b"), "a/b");
        assert_eq!(plain("...") + &plain(".hidden"), "....hidden");
        assert!(!relative("a/./b").unwrap().names_folder());
    }

    #[test]
    fn a_trailing_slash_names_a_folder() {
        let p = relative("node_modules/").unwrap();
        assert!(p.names_folder());
        assert_eq!(p.as_path(), Path::new("node_modules"));
    }

    #[test]
    fn a_backslash_is_an_ordinary_byte() {
        assert_eq!(plain("a\\b"), "a\\b");
        assert_eq!(plain("..\\x"), "..\\x");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_a_name() {
        let p = relative_bytes(b"a/\xff\xfe").unwrap();
        assert_eq!(p.as_bytes(), b"a/\xff\xfe");
        assert_eq!(p.to_str(), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Whatever passes joins onto a root below it: no `..`, no absolute part, no NUL.
        #[test]
        fn what_passes_stays_below_the_root(path in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(b'/'),
                proptest::strategy::Just(b'.'),
                proptest::strategy::Just(0u8),
                proptest::strategy::Just(b'a'),
            ],
            0..10,
        )) {
            if let Ok(p) = relative_bytes(&path) {
                let joined = Path::new("/root").join(p.as_path());
                proptest::prop_assert!(joined.starts_with("/root") && joined != Path::new("/root"));
                proptest::prop_assert!(p.as_path().components().all(|c| matches!(c, std::path::Component::Normal(_))));
                proptest::prop_assert!(!p.as_bytes().contains(&0));
            }
        }
    }
}
