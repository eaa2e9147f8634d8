//! Which rendering of a report a tool prints on stdout: `--format text|markdown|json`.
//!
//! One record, several renderings: the text a reviewer reads in a terminal, GitHub-flavoured
//! Markdown to paste into a pull request (or post with `gh pr comment --body-file`), and the JSON
//! report itself. `--json`, older than `--format`, stays as another way to say `--format json`.

use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Text,
    Markdown,
    Json,
}

impl Format {
    /// The names `--format` takes.
    pub const NAMES: [&'static str; 3] = ["text", "markdown", "json"];

    /// `--format` as given, with `--json` overriding the default.
    pub fn with_json_flag(self, json: bool) -> Format {
        if json {
            Format::Json
        } else {
            self
        }
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "--format must be one of text, markdown, json, not {other:?}"
            )),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Text => "text",
            Format::Markdown => "markdown",
            Format::Json => "json",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_by_name_and_json_flag_wins() {
        for name in Format::NAMES {
            assert_eq!(name.parse::<Format>().unwrap().to_string(), name);
        }
        assert!("html".parse::<Format>().is_err());
        assert_eq!(Format::Text.with_json_flag(true), Format::Json);
        assert_eq!(Format::Markdown.with_json_flag(false), Format::Markdown);
    }
}
