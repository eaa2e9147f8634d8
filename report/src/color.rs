//! Colour on a terminal, and only there: the one place every tool decides it.
//!
//! The rule, as ripgrep and cargo follow it: `--color always` and `--color never` are obeyed as
//! given; `auto` (the default) colours only when the stream is a terminal, `NO_COLOR` is unset
//! or empty (<https://no-color.org>) and `TERM` is not `dumb`. Files written to disk are never
//! coloured: a tool paints only what it prints, after the report text is rendered.

use std::fmt;
use std::io::IsTerminal;
use std::str::FromStr;

/// What the user asked for with `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// The names `--color` takes, for help texts and parsers.
    pub const NAMES: [&'static str; 3] = ["auto", "always", "never"];

    /// Whether to colour a stream that is (`terminal`) or is not a terminal, given the
    /// environment's `NO_COLOR` and `TERM`.
    pub fn decide(self, terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb")
            }
        }
    }

    /// Whether to colour stdout, reading the process's environment.
    pub fn for_stdout(self) -> bool {
        self.decide_env(std::io::stdout().is_terminal())
    }

    /// Whether to colour stderr, reading the process's environment.
    pub fn for_stderr(self) -> bool {
        self.decide_env(std::io::stderr().is_terminal())
    }

    fn decide_env(self, terminal: bool) -> bool {
        let no_color = std::env::var("NO_COLOR").ok();
        let term = std::env::var("TERM").ok();
        self.decide(terminal, no_color.as_deref(), term.as_deref())
    }
}

impl FromStr for ColorChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<ColorChoice, String> {
        match s {
            "auto" => Ok(ColorChoice::Auto),
            "always" => Ok(ColorChoice::Always),
            "never" => Ok(ColorChoice::Never),
            other => Err(format!(
                "--color must be one of auto, always, never, not {other:?}"
            )),
        }
    }
}

impl fmt::Display for ColorChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ColorChoice::Auto => "auto",
            ColorChoice::Always => "always",
            ColorChoice::Never => "never",
        })
    }
}

/// The few styles the tools use: good news, bad news, a warning, emphasis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Good,
    Bad,
    Warn,
    Bold,
}

impl Style {
    fn sgr(self) -> &'static str {
        match self {
            Style::Good => "1;32",
            Style::Bad => "1;31",
            Style::Warn => "1;33",
            Style::Bold => "1",
        }
    }
}

/// Paints text when colour is on, and passes it through untouched when it is off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Painter {
    on: bool,
}

impl Painter {
    pub fn new(on: bool) -> Painter {
        Painter { on }
    }

    /// A painter that never colours (for files).
    pub fn plain() -> Painter {
        Painter { on: false }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    pub fn paint(&self, text: &str, style: Style) -> String {
        if self.on && !text.is_empty() {
            format!("\x1b[{}m{text}\x1b[0m", style.sgr())
        } else {
            text.to_string()
        }
    }
}

/// `text` without terminal escapes, for text that must be plain (a runner's log, a painted
/// line): CSI sequences (colours, `ESC [3J`: parameters, then one final byte in `@`..`~`), OSC
/// sequences (up to BEL or `ESC \\`), and two-byte ones (`ESC c`, the screen reset).
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(d) = chars.next() {
                    if d == '\u{7}' {
                        break;
                    }
                    if d == '\x1b' {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_colours_a_terminal_only_without_no_color() {
        let auto = ColorChoice::Auto;
        assert!(auto.decide(true, None, Some("xterm-256color")));
        assert!(!auto.decide(false, None, Some("xterm")));
        assert!(!auto.decide(true, Some("1"), Some("xterm")));
        // An empty NO_COLOR does not count, as no-color.org says.
        assert!(auto.decide(true, Some(""), None));
        assert!(!auto.decide(true, None, Some("dumb")));
    }

    #[test]
    fn always_and_never_are_obeyed_as_given() {
        assert!(ColorChoice::Always.decide(false, Some("1"), Some("dumb")));
        assert!(!ColorChoice::Never.decide(true, None, Some("xterm")));
    }

    #[test]
    fn choices_parse_and_print_by_name() {
        for name in ColorChoice::NAMES {
            assert_eq!(name.parse::<ColorChoice>().unwrap().to_string(), name);
        }
        assert!("sometimes".parse::<ColorChoice>().is_err());
    }

    #[test]
    fn styles_paint_only_when_on_and_strip_back() {
        let p = Painter::new(true);
        assert_eq!(p.paint("PASS", Style::Good), "\x1b[1;32mPASS\x1b[0m");
        assert_eq!(p.paint("FAIL", Style::Bad), "\x1b[1;31mFAIL\x1b[0m");
        assert_eq!(strip(&p.paint("SURVIVED", Style::Bad)), "SURVIVED");
        assert_eq!(Painter::plain().paint("PASS", Style::Good), "PASS");
        assert_eq!(p.paint("", Style::Warn), "");
    }
}
