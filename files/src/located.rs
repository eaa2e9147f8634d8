//! Problems located in a file the user wrote (gate.toml, mutants.toml, a manifest): one error
//! type, printed `FILE:LINE: what is wrong`, and the byte-offset-to-line mapping that locates
//! what a TOML parser reports as a span.

use std::fmt;
use std::ops::Range;
use std::path::Path;

/// A problem in a file, at a line when one is known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Located {
    /// The file as the user named it.
    pub file: String,
    /// 1-based; `None` when the problem is the whole file (unreadable, not UTF-8).
    pub line: Option<usize>,
    pub message: String,
}

impl Located {
    /// A problem with the whole of `file`.
    pub fn file(file: &Path, message: impl Into<String>) -> Located {
        Located {
            file: file.display().to_string(),
            line: None,
            message: message.into(),
        }
    }

    /// A problem at the line holding the start of `span` (a parser's byte range into `text`).
    pub fn at(
        file: &Path,
        text: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> Located {
        Located {
            file: file.display().to_string(),
            line: span.map(|s| line_of(text, s.start)),
            message: message.into(),
        }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// The 1-based line holding byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines() {
        let text = "a = 1\nb = 2\n\nc = 3";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 6), 2);
        assert_eq!(line_of(text, 13), 4);
        assert_eq!(line_of(text, 999), 4);
    }

    #[test]
    fn a_problem_prints_file_line_and_message_or_file_and_message() {
        let p = Path::new("gate.toml");
        assert_eq!(
            Located::at(p, "a = 1\nb = 2\n", Some(6..7), "bad b").to_string(),
            "gate.toml:2: bad b"
        );
        assert_eq!(
            Located::file(p, "not UTF-8").to_string(),
            "gate.toml: not UTF-8"
        );
    }
}
