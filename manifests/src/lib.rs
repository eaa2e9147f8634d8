//! The sha256 manifest exactly as GNU coreutils `sha256sum` writes it and
//! `sha256sum -c --strict` reads it: parse and write ([`parse`], [`write()`]), the path rules
//! that keep a check inside its tree ([`check_path`]), hashing on every core
//! ([`hash_files`]), checking a tree against a manifest ([`verify()`]) and making a manifest
//! for a tree ([`manifest_for`]). It also holds the house's one sha256 of a file
//! ([`hash_file`]) and its one hex encoder ([`hex`], [`Digest::to_hex`]).
//!
//! Paths are raw bytes throughout, because Unix file names are. It must not follow a link out
//! of the tree it checks, nor know anything of git, candidates or reports: `candidate` and
//! `gate` build on it.
//!
//! Where things are, lowest first (no two modules import each other): `entry` (digest, entry,
//! manifest), `escape` (a name's escaping), `cores`, `hash` (one reader or file), `path` (the
//! path rules and the walk that follows links), `line` (one manifest line), `read` (a whole
//! manifest), `write`, `tree` (a tree's root and errors), `bulk` (many paths of a tree on every
//! core: `bulk/worker`, `bulk/listing`, `bulk/ring`), `generate` (digests and manifests of
//! paths), `status` (the words and counts a check reports), `verify` (a tree against a
//! manifest).
//!
//! Decisions a user of `sha256sum` should know about:
//! - Statuses are finer than sha256sum's: `MISSING` when nothing is at the path, `FAILED` for
//!   different content *and* for something that cannot be read as a file (a directory, a FIFO,
//!   no permission), with the reason in [`Checked::detail`]. sha256sum says `FAILED open or
//!   read` for all of those.
//! - Symlinks inside the tree are followed, as sha256sum follows them; a link that leads out
//!   of the tree (absolute or by `..`, in the last component or any parent) is an error for the
//!   whole check, never a status: see [`path`](check_path) rules and [`TreeError::Path`].
//! - The single-space `HEX NAME` form is read by GNU's rule (the first untagged line decides
//!   the order of all; see [`parse`]); an empty name, a NUL in a name and a path of
//!   `PATH_MAX` bytes or more are refused, where sha256sum takes lines that can never check OK.
//! - A file literally named `-` is written as `-`, which `sha256sum -c` would take for stdin;
//!   write `./-` in the path list if the manifest must also be checked by sha256sum.

mod bulk;
mod cores;
mod entry;
mod escape;
mod generate;
mod hash;
mod line;
mod path;
mod read;
mod status;
mod tree;
mod verify;
mod write;

pub use entry::{hex, Digest, Entry, Form, Manifest};
pub use escape::escape_name;
pub use generate::{hash_files, manifest_as_recorded, manifest_for};
pub use hash::{hash_file, hash_reader};
pub use path::{check_path, Links, PathError, PathProblem};
pub use read::{parse, LineProblem, ParseError};
pub use status::{ReadError, Status, Summary};
pub use tree::TreeError;
pub use verify::{verify, verify_as_recorded, verify_owned, Checked, Verification};
pub use write::{write, write_entry};
