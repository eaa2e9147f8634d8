//! A suite's `select` template (mutants.toml only): the command that runs only some of its
//! tests, `node --test {files}` or `python3 -m pytest {tests}`, and the one substitution of a
//! list of tests into it.
//!
//! Each test (a file, or a runner's test id such as pytest's `tests/t.py::test_x[a b]`) becomes
//! one shell word, quoted for `sh`, whatever it holds (spaces, brackets, quotes, `$`). The
//! placeholder stands where a word of the command stands, at its top level (not inside quotes
//! of its own).
//!
//! The command runs as `sh -c COMMAND`, one argument, which Linux caps at 128 KiB
//! (`MAX_ARG_STRLEN`). A list whose quoted words would take the command past [`INLINE_MAX`]
//! is written to a file instead, one test a line, and the command reads it into `sh`'s
//! positional parameters and hands them on as `"$@"`: still one run, each test one word of
//! the runner's command line. A list past [`LIST_MAX`] in all would take the runner's own
//! command line past the kernel's limit for all arguments (a quarter of the stack limit, 2 MiB
//! by default), so it is not selected at all: the caller runs the whole suite, which a list
//! that long is close to anyway. Splitting a list into several runs would be several verdicts,
//! so it is never done.

use std::io;
use std::path::Path;

/// What a template's placeholder stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Items {
    /// `{files}`: test files, relative to the checkout's root.
    Files,
    /// `{tests}`: the runner's own test ids.
    Tests,
}

impl Items {
    /// The placeholder as it is written in a template.
    pub fn placeholder(self) -> &'static str {
        match self {
            Items::Files => "{files}",
            Items::Tests => "{tests}",
        }
    }
}

/// A validated `select` template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Select {
    /// The template as written.
    pub template: String,
    pub items: Items,
}

/// The longest command passed inline; the kernel's cap on one argument is 128 KiB.
pub const INLINE_MAX: usize = 96 * 1024;

/// The most bytes of tests a selection passes at all (see the module's comment).
pub const LIST_MAX: usize = 1024 * 1024;

impl Select {
    /// `template` checked: exactly one of `{files}` and `{tests}`, once.
    pub fn parse(template: &str) -> Result<Select, String> {
        let files = template.matches(Items::Files.placeholder()).count();
        let tests = template.matches(Items::Tests.placeholder()).count();
        let items = match (files, tests) {
            (1, 0) => Items::Files,
            (0, 1) => Items::Tests,
            (0, 0) => {
                return Err(
                    "holds neither `{files}` nor `{tests}`: the tests to run go \
                            where one of them stands (`node --test {files}`)"
                        .into(),
                )
            }
            (f, t) if f > 0 && t > 0 => {
                return Err("holds both `{files}` and `{tests}`: it takes one list".into())
            }
            _ => return Err("holds its placeholder more than once: it takes one list".into()),
        };
        Ok(Select {
            template: template.to_string(),
            items,
        })
    }

    /// Whether the template runs cargo (a word `cargo`): cargo's maps are read for it, and
    /// its runs build.
    pub fn runs_cargo(&self) -> bool {
        self.template.split_whitespace().any(|w| w == "cargo")
    }

    /// The command that runs `tests`, or `None` when they cannot be passed (a test that holds
    /// a NUL byte or a line break, or a list past [`LIST_MAX`]): the whole suite runs then.
    /// `list` is where a long list is written (see the module's comment).
    pub fn command(&self, tests: &[String], list: &Path) -> io::Result<Option<String>> {
        if tests
            .iter()
            .any(|t| t.is_empty() || t.contains('\0') || t.contains('\n') || t.contains('\r'))
        {
            return Ok(None);
        }
        let words: Vec<String> = tests.iter().map(|t| report::text::shell_quote(t)).collect();
        let inline = words.join(" ");
        if self.template.len() + inline.len() <= INLINE_MAX {
            return Ok(Some(
                self.template.replace(self.items.placeholder(), &inline),
            ));
        }
        let bytes: usize = tests.iter().map(|t| t.len() + 1).sum();
        if bytes > LIST_MAX {
            return Ok(None);
        }
        let mut text = tests.join("\n");
        text.push('\n');
        std::fs::write(list, text)?;
        let list = report::text::shell_quote(&list.display().to_string());
        // Split on line breaks alone, with globbing off, so each line is one word as it is.
        Ok(Some(format!(
            "set -f; IFS='\n'; set -- $(cat {list}); unset IFS; set +f; {}",
            self.template.replace(self.items.placeholder(), "\"$@\"")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}");
        String::from_utf8(out.stdout)
            .unwrap()
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_template_takes_exactly_one_placeholder_once() {
        assert_eq!(
            Select::parse("node --test {files}").unwrap().items,
            Items::Files
        );
        assert_eq!(
            Select::parse("pytest {tests} -q").unwrap().items,
            Items::Tests
        );
        assert!(Select::parse("pytest").unwrap_err().contains("neither"));
        assert!(Select::parse("x {files} {tests}")
            .unwrap_err()
            .contains("both"));
        assert!(Select::parse("x {files} {files}")
            .unwrap_err()
            .contains("more than once"));
    }

    #[test]
    fn each_test_reaches_the_command_as_one_word_short_or_long() {
        let dir = tempfile::tempdir().unwrap();
        let s = Select::parse("printf '%s\\0' {tests}").unwrap();
        let odd: Vec<String> = [
            "t.py::test[a b]",
            "it's",
            "$HOME `x` $(id)",
            "\"q\"",
            "-x",
            "*",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let short = s.command(&odd, &dir.path().join("l")).unwrap().unwrap();
        assert!(!dir.path().join("l").exists());
        assert_eq!(sh(&short), odd);
        // Past the inline size: through the file, still one word each, in order.
        let mut long = odd.clone();
        long.extend((0..2000).map(|i| format!("tests/t.py::test_{i}[{}]", "x y ".repeat(20))));
        let via = s.command(&long, &dir.path().join("l")).unwrap().unwrap();
        assert!(via.len() < 1024, "{}", via.len());
        assert_eq!(sh(&via), long);
        // Never past the limit for all arguments; never a line break or a NUL.
        let huge: Vec<String> = (0..20_000).map(|i| format!("{i:0>100}")).collect();
        assert_eq!(s.command(&huge, &dir.path().join("l")).unwrap(), None);
        let broken = vec!["a\nb".to_string()];
        assert_eq!(s.command(&broken, &dir.path().join("l")).unwrap(), None);
    }
}
