//! Source files read with tree-sitter grammars, and the exact-anchor mutants proposed for the
//! lines a change touches.
//!
//! This crate sits below `mutants` alone, so that `gate` and `probe` never compile the
//! grammars. It knows nothing of specs, suites or git: it is handed one file's path, bytes and
//! changed lines, and gives back typed proposals (each an anchor that occurs exactly once in the
//! file, its replacement, the operator that made it) or the reason the file was skipped.

use std::collections::BTreeSet;
use std::fmt;

/// The languages proposals are made for, each known by its file ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Rust,
    JavaScript,
    TypeScript,
    /// TypeScript with JSX (`.tsx`), which has a grammar of its own.
    Tsx,
    Python,
    Go,
}

/// Which lines of a file the change touches (1-based line numbers of the file as it is now).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every line (`mutants suggest --dir DIR PATH...`).
    Whole,
    /// Only these lines.
    Lines(BTreeSet<usize>),
}

/// How many proposals to make.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Every operator that applies, not one mutant per changed line.
    pub all: bool,
}

/// The operator families, in the order one-per-line picks from (a condition or boundary first,
/// then a return value, a removed call or block, arithmetic, a constant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// `<` for `<=`, `>` for `>=` and back.
    Boundary,
    /// `==` for `!=` and back (and `===`/`!==`, `is`/`is not`).
    Equality,
    /// `&&` for `||` and back (`and`/`or`).
    Logical,
    /// A condition negated.
    Negation,
    /// `true` for `false` and back.
    Boolean,
    /// A function body replaced by a value of its return type.
    ReturnValue,
    /// A call statement removed.
    RemoveCall,
    /// A block, an `else` branch or a guard removed.
    RemoveBlock,
    /// `+` for `-`, `*` for `/` and the like.
    Arithmetic,
    /// `&` for `|`, `<<` for `>>` and the like.
    Bitwise,
    /// `+=` for `-=` and the like.
    Assignment,
    /// `++` for `--` and back.
    Update,
    /// `?.` for `.`.
    OptionalChaining,
    /// A string literal emptied (or an empty one given content).
    String,
    /// A numeric constant off by one.
    Constant,
    /// An array or list literal emptied.
    EmptyArray,
    /// An object or dict literal emptied.
    EmptyObject,
    /// A regex literal changed.
    Regex,
    /// A control: a comment edit the suite must not notice.
    Control,
}

/// One proposal: swap `anchor` (which occurs exactly once in the file) for `replace`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposal {
    /// The 1-based line where the mutated text starts.
    pub line: usize,
    /// The enclosing function (`Parser::next`, `parse`), if any.
    pub site: Option<String>,
    pub anchor: String,
    pub replace: String,
    pub operator: Operator,
    /// What the swap does, for people: `replace < with <=`.
    pub description: String,
}

/// What was proposed for one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposals {
    pub language: Language,
    /// In file order.
    pub mutants: Vec<Proposal>,
    /// The file's control (a comment edit), if one could be made.
    pub control: Option<Proposal>,
    /// Proposals dropped because the file no longer parsed after the swap.
    pub dropped: usize,
}

/// Why a file got no proposals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    /// No grammar for its ending.
    NotSource,
    /// Test code is not mutated.
    TestCode,
    NotUtf8,
    /// Larger than 1 MiB.
    TooLarge {
        bytes: u64,
    },
    /// Generated: a marker, a lockfile name, or an attribute the caller found
    /// (`linguist-generated`); `why` says which, for people.
    Generated {
        why: String,
    },
    /// A line over 1,000 characters (minified or generated).
    LongLine {
        line: usize,
    },
    /// The grammar found an error at this line.
    DoesNotParse {
        line: usize,
    },
}

/// One file's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Proposed(Proposals),
    Skipped(Skip),
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::NotSource => write!(f, "not a source file of a known language"),
            Skip::TestCode => write!(f, "test code"),
            Skip::NotUtf8 => write!(f, "not UTF-8"),
            Skip::TooLarge { bytes } => write!(f, "larger than 1 MiB ({bytes} bytes)"),
            Skip::Generated { why } => write!(f, "generated ({why})"),
            Skip::LongLine { line } => write!(f, "line {line} is over 1,000 characters"),
            Skip::DoesNotParse { line } => write!(f, "does not parse (line {line})"),
        }
    }
}

mod anchor;
mod checks;
mod control;
mod edit;
mod engine;
mod language;
mod operator;
mod rules;
mod site;
#[cfg(test)]
mod tests;

pub use engine::propose;
pub use language::is_test_path;
pub use operator::UnknownOperator;
