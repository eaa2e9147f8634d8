//! The command-line pieces all three tools share, defined once and flattened into each tool's
//! clap definitions: `--color`, `--format`/`--json`, the `completions` and `man` subcommands,
//! and the value parsers for durations and percentages. One definition means one spelling,
//! one help text and one set of accepted values across gate, mutants and probe.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};

use report::{ColorChoice, Format};

/// `--color WHEN`, global to a tool's subcommands.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ColorArg {
    /// When to colour output: on a terminal only (`auto`, honouring NO_COLOR), `always` or
    /// `never`.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto", value_parser = color_parser())]
    pub color: ColorChoice,
}

/// `--format FORMAT` and its shorthand `--json`, for a command that prints a report.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct FormatArgs {
    /// Print the JSON report on stdout (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// What to print on stdout: the text report, GitHub-flavoured Markdown for a pull request,
    /// or the JSON report. The files in --out are the same either way.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = format_parser())]
    pub format: Format,
}

impl FormatArgs {
    /// What to print on stdout, `--json` folded into `--format`.
    pub fn chosen(&self) -> Format {
        self.format.with_json_flag(self.json)
    }
}

/// The subcommands that describe a tool's own command line, flattened into its subcommand
/// enum with `#[command(flatten)]`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Describe {
    /// Print a shell completion script, e.g. `TOOL completions bash >
    /// /etc/bash_completion.d/TOOL`.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: crate::manual::Shell,
    },
    /// Print the man page (roff) on stdout, or write TOOL.1 and one page per subcommand to DIR.
    Man {
        /// Write the pages into DIR instead.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

impl Describe {
    /// Prints the completion script or the man pages of `cmd` (the tool's whole command line,
    /// `Cli::command()`); a closed stdout is no error (see [`crate::exit::print()`]).
    pub fn run(&self, cmd: clap::Command) -> std::io::Result<()> {
        match self {
            Describe::Completions { shell } => crate::manual::write_completions(*shell, cmd),
            Describe::Man { out } => crate::manual::write_man_pages(cmd, out.as_deref()),
        }
    }
}

/// `--color`'s values, listed in help and completions, parsed into [`ColorChoice`].
pub fn color_parser() -> impl TypedValueParser<Value = ColorChoice> {
    PossibleValuesParser::new(ColorChoice::NAMES).map(|s| s.parse().expect("a listed value"))
}

/// `--format`'s values, listed in help and completions, parsed into [`Format`].
pub fn format_parser() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(Format::NAMES).map(|s| s.parse().expect("a listed value"))
}

/// A timeout as people write it (`300s`, `15m`, `1h30m`; see [`report::duration`]): more than
/// zero, since nothing could finish in none, and at most [`report::duration::MAX`].
pub fn timeout(text: &str) -> Result<Duration, String> {
    report::duration::timeout(text).map_err(|e| e.to_string())
}

/// A share such as `20%` (or `0.2`, or `20`, read as percent from 1 up) as a fraction from 0
/// to under 1. Digits and one point only: no sign, no exponent, no `inf` or `NaN`.
pub fn percent(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, percent) = match t.strip_suffix('%') {
        Some(num) => (num.trim(), true),
        None => (t, false),
    };
    let bad = || format!("{text:?} is not a percentage such as 20%");
    if num.is_empty()
        || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || num.bytes().filter(|&b| b == b'.').count() > 1
    {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let fraction = if percent || v >= 1.0 { v / 100.0 } else { v };
    if !(0.0..1.0).contains(&fraction) {
        return Err(format!("{text:?} must be from 0% to under 100%"));
    }
    Ok(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Tool {
        #[command(flatten)]
        color: ColorArg,
        #[command(subcommand)]
        command: Sub,
    }

    #[derive(Debug, clap::Subcommand)]
    enum Sub {
        Report {
            #[command(flatten)]
            format: FormatArgs,
        },
        #[command(flatten)]
        Describe(Describe),
    }

    fn parse(args: &[&str]) -> Result<Tool, clap::Error> {
        Tool::try_parse_from(std::iter::once("tool").chain(args.iter().copied()))
    }

    #[test]
    fn the_shared_pieces_parse_where_they_are_flattened() {
        let t = parse(&["report", "--color", "never", "--json"]).unwrap();
        assert_eq!(t.color.color, ColorChoice::Never);
        let Sub::Report { format } = t.command else {
            panic!("report")
        };
        assert_eq!(format.chosen(), Format::Json);
        let t = parse(&["report", "--format", "markdown"]).unwrap();
        let Sub::Report { format } = t.command else {
            panic!("report")
        };
        assert_eq!(format.chosen(), Format::Markdown);
        assert!(parse(&["report", "--json", "--format", "text"]).is_err());
        assert!(parse(&["report", "--color", "sometimes"]).is_err());
        assert!(matches!(
            parse(&["completions", "bash"]).unwrap().command,
            Sub::Describe(Describe::Completions { .. })
        ));
        assert!(matches!(
            parse(&["man"]).unwrap().command,
            Sub::Describe(Describe::Man { out: None })
        ));
    }

    #[test]
    fn timeouts_are_more_than_zero_and_bounded() {
        assert_eq!(timeout("90s"), Ok(Duration::from_secs(90)));
        assert!(timeout("0s").unwrap_err().contains("zero"));
        assert!(timeout("31d").is_err());
        assert!(timeout("30").is_err());
    }

    #[test]
    fn percentages_are_fractions_under_one() {
        assert_eq!(percent("20%"), Ok(0.2));
        assert_eq!(percent("0.25"), Ok(0.25));
        assert_eq!(percent("20"), Ok(0.2));
        assert!(percent("100%").is_err());
        assert!(percent("-5%").is_err());
        assert!(percent("1e1").is_err());
        assert!(percent("NaN").is_err());
        assert!(percent("").is_err());
    }
}
