//! The sha256 manifest exactly as GNU coreutils `sha256sum` writes it and
//! `sha256sum -c --strict` reads it: parse and write ([`parse`], [`write`]), the path rules
//! that keep a check inside its tree ([`check_path`]), hashing on every core
//! ([`hash_files`]), checking a tree against a manifest ([`verify`]) and making a manifest
//! for a tree ([`manifest_for`]).
//!
//! Paths are raw bytes throughout, because Unix file names are.

mod entry;
mod format;
mod generate;
mod hash;
mod path;
mod tree;
mod verify;

pub use entry::{Digest, Entry, Form, Manifest};
pub use format::{escape_name, parse, write, write_entry, LineProblem, ParseError};
pub use generate::manifest_for;
pub use hash::{hash_file, hash_files, hash_reader};
pub use path::{check_path, PathError, PathProblem};
pub use tree::TreeError;
pub use verify::{verify, Checked, Status, Summary, Verification};
