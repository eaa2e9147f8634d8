//! The command line as typed (clap derive; the doc comments are the help text).
//!
//! These structs are raw arguments; `commands` turns them into typed settings before
//! anything runs, so a bad spec or a bad option exits 2 with nothing written. [`Cli`] is public:
//! it is the one entry point's input (`mutants::commands::run(Cli::parse())`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use cmdline::cli::{ColorArg, Describe, FormatArgs};
use report::Format;

use crate::record::Shard;

/// Exact-anchor mutation runs: prove a suite notices each hand-written mutant, and that it does
/// not notice the controls.
#[derive(Debug, Parser)]
#[command(name = "mutants", version, about, max_term_width = 100)]
pub struct Cli {
    // Colour goes to the verdict words only; files written to disk are never coloured.
    #[command(flatten)]
    pub(crate) color: ColorArg,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Count each anchor in its file; exit 1 if any does not occur exactly once.
    Check {
        #[command(flatten)]
        target: SpecIn,
        /// Print the counts as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List each mutant with the lines its anchor spans in its file (as `check` finds it).
    List {
        #[command(flatten)]
        target: SpecIn,
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the baseline, then every mutant, in private checkouts; write the report.
    Run(Box<RunArgs>),
    /// Propose exact-anchor mutants for the lines a change touches (a candidate, a diff, or
    /// whole files): a spec whose claims you name (each `undoes` says TODO: until then), then
    /// check and run.
    Suggest(Box<SuggestArgs>),
    /// Join the outputs of `run --shard K/N` into one report, as a single run would write it.
    Merge {
        /// The output folders of the shards.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged report goes.
        #[arg(long, default_value = "mutants-out")]
        out: PathBuf,
        /// The spec the shards ran: each shard must hold exactly its share of it, each row the
        /// spec's mutant [default: the spec the shards name, when it is here unchanged].
        #[arg(long, value_name = "SPEC")]
        spec: Option<PathBuf>,
        /// Accept only shards whose statement (`--attest OUT/mutants.intoto.json --sign-key
        /// KEY`) is signed by a key this file lists and names their very mutants.json.
        #[arg(long, value_name = "FILE")]
        allowed_signers: Option<PathBuf>,
        /// Also write the merged findings as SARIF 2.1.0 to FILE (for GitHub code scanning).
        #[arg(long, value_name = "FILE")]
        sarif: Option<PathBuf>,
        #[command(flatten)]
        output: FormatArgs,
    },
    /// Remove the build outputs kept between runs (`[worktree] cache`) for DIR's repository,
    /// or for every repository with --all. Always safe: the next run builds cold.
    Clean {
        /// The git repository whose cache goes [default: the current directory].
        #[arg(long, conflicts_with = "all")]
        dir: Option<PathBuf>,
        /// Every repository's cache (the whole `worktrees` folder of the cache folder).
        #[arg(long)]
        all: bool,
    },
    #[command(flatten)]
    Describe(Describe),
}

/// The spec and the repository its files are in, as `check` and `list` take them.
#[derive(Debug, Args)]
pub(crate) struct SpecIn {
    /// The spec.
    #[arg(default_value = "mutants.toml")]
    pub spec: PathBuf,
    /// The git repository the spec's files are in [default: the current directory].
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// `mutants suggest`'s arguments, as typed.
#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("source")
        .args(["candidate", "diff", "dir"])
        .required(true)
        .multiple(true)
))]
pub(crate) struct SuggestArgs {
    /// With --dir alone: the files (or folders) to propose for, whole, relative to DIR as
    /// `git -C DIR` takes them [default: every tracked source file].
    #[arg(value_name = "PATH", requires = "dir", conflicts_with_all = ["candidate", "diff"])]
    pub paths: Vec<PathBuf>,
    /// The lines a candidate changes (gate.toml: base, patch, manifest), read from the
    /// candidate's own checkout as `run --candidate` builds it.
    #[arg(long, value_name = "GATE_TOML", conflicts_with_all = ["diff", "dir"])]
    pub candidate: Option<PathBuf>,
    /// With --candidate: the base, in place of gate.toml's `base`.
    #[arg(long, value_name = "REV", requires = "candidate", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub base: Option<String>,
    /// With --candidate: the patch, in place of gate.toml's `patch` (only read).
    #[arg(long, value_name = "FILE", requires = "candidate")]
    pub patch: Option<PathBuf>,
    /// With --candidate: the manifest, in place of gate.toml's `manifest` (only read).
    #[arg(long, value_name = "FILE", requires = "candidate")]
    pub manifest: Option<PathBuf>,
    /// The lines changed from REV to DIR as `run` reads it: HEAD plus uncommitted changes,
    /// untracked files (not ignored) as wholly new.
    #[arg(long, value_name = "REV", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub diff: Option<String>,
    /// The git repository [default: the current directory]; without --diff, whole files of it.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub pick: Pick,
    /// Write the spec to FILE instead of stdout (never over an existing file without --force).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// With --out: replace FILE if it exists.
    #[arg(long, requires = "out")]
    pub force: bool,
    /// Print the proposals, each file's outcome and the counts as JSON (with --out, the spec
    /// still goes to FILE).
    #[arg(long)]
    pub json: bool,
}

/// Which proposals `suggest` and `run --suggested` make.
#[derive(Debug, Args)]
pub(crate) struct Pick {
    /// The suite every proposal runs under [default: the only one the candidate's gate.toml,
    /// DIR's mutants.toml or DIR's gate.toml defines].
    #[arg(long, value_name = "NAME")]
    pub suite: Option<String>,
    /// Every operator that applies on each changed line, not one mutant per line.
    #[arg(long)]
    pub all: bool,
}

/// `mutants run`'s arguments, as typed; `commands` turns them into the session's
/// settings.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The spec [default: mutants.toml].
    pub spec: Option<PathBuf>,
    /// The git repository to mutate a checkout of (HEAD plus uncommitted changes)
    /// [default: the current directory].
    #[arg(long, conflicts_with = "candidate")]
    pub dir: Option<PathBuf>,
    /// Build the checkout from a candidate as `gate apply` does (gate.toml: base, patch,
    /// manifest), and check its manifest before the first mutant and after the last.
    #[arg(long, value_name = "GATE_TOML")]
    pub candidate: Option<PathBuf>,
    /// Propose mutants as `mutants suggest` does (for --candidate, --diff REV or --dir DIR)
    /// and run them, with no SPEC: the spec is written to OUT/suggested.toml, and each
    /// surviving mutant is shown as a review finding with the hunk it came from.
    #[arg(long, conflicts_with = "spec")]
    pub suggested: bool,
    /// With --suggested: the lines changed from REV to DIR (HEAD plus uncommitted changes).
    #[arg(long, value_name = "REV", requires = "suggested", conflicts_with = "candidate", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub diff: Option<String>,
    /// With --suggested: the suite every proposal runs under [default: the only one defined].
    #[arg(long, value_name = "NAME", requires = "suggested")]
    pub suite: Option<String>,
    /// With --suggested: every operator that applies on each changed line.
    #[arg(long, requires = "suggested")]
    pub all: bool,
    /// With --candidate: the base, in place of gate.toml's `base`.
    #[arg(long, value_name = "REV", requires = "candidate", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub base: Option<String>,
    /// With --candidate: the patch, in place of gate.toml's `patch` (only read).
    #[arg(long, value_name = "FILE", requires = "candidate")]
    pub patch: Option<PathBuf>,
    /// With --candidate: the manifest, in place of gate.toml's `manifest` (only read).
    #[arg(long, value_name = "FILE", requires = "candidate")]
    pub manifest: Option<PathBuf>,
    /// Run N mutants at once, each in its own checkout.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// Timeout for every mutant's suite run (e.g. 90s, 5m); overrides the spec's and the
    /// derived one (max(20s, 5x baseline)).
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Run only this mutant (repeatable).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Run from this mutant to the end of the spec.
    #[arg(long, value_name = "NAME")]
    pub from: Option<String>,
    /// Run the K-th of N deterministic shares (e.g. 2/4).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Reuse the verdict in --out's report of every mutant that is unchanged (the same
    /// identity) and reads what it read (the code without the spec, or its suites' `inputs`;
    /// the lockfiles and toolchain versions it depends on) with the same candidate; judge only
    /// the rest. Reused rows say from which tree and when.
    #[arg(long, conflicts_with_all = ["only", "from", "suggested"])]
    pub incremental: bool,
    /// With --incremental: judge nothing and write nothing; list each mutant an incremental
    /// run would judge, and why (exit 1 when any is listed, 0 when --out's verdicts are all
    /// current). No setup, baseline or suite runs: the check CI runs against a committed
    /// report folder.
    #[arg(long, requires = "incremental", conflicts_with_all = ["keep", "attest", "sarif"])]
    pub dry_run: bool,
    /// Where the report and logs go.
    #[arg(long, default_value = "mutants-out")]
    pub out: PathBuf,
    /// Leave the checkouts in place (their paths are printed).
    #[arg(long)]
    pub keep: bool,
    /// Neither use nor save the build outputs kept between runs (`[worktree] cache`); the
    /// checkouts still get the first checkout's build.
    #[arg(long)]
    pub no_cache: bool,
    /// Skip the canaries: by default, before the first mutant of each mutated file, that file
    /// is made unloadable and its suites must fail (proof they read the checkout, not
    /// your checkout or an install of it). The report says when they were skipped.
    #[arg(long)]
    pub no_canary: bool,
    /// Hand the builds and suites no shared jobserver (CARGO_MAKEFLAGS): each cargo may then
    /// start a compiler per core in every job at once. By default they share one pool of the
    /// cores, or the jobserver of the make or cargo that runs this one.
    #[arg(long)]
    pub no_jobserver: bool,
    /// What to print on stdout (the files in --out, junit.xml among them, are the same).
    #[command(flatten)]
    pub output: FormatArgs,
    /// Also write an in-toto Statement v1 to FILE: the tree the mutants ran on (gitTree), its
    /// commit (gitCommit) and a candidate's patch (sha256), with the spec's digest and every
    /// verdict (result PASSED only for a complete run where everything held).
    #[arg(long, value_name = "FILE")]
    pub attest: Option<PathBuf>,
    /// Also write the findings as SARIF 2.1.0 to FILE, for GitHub code scanning: a result per
    /// survivor, killed control, skipped and error row (unviable rows as notes), at the lines
    /// of the mutant's anchor; rewritten with the report after every mutant.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Sign the --attest statement with this SSH key (`ssh-keygen -Y sign`, namespace
    /// gatekit-attestation), writing FILE.sig beside it; `gate verify` checks it.
    #[arg(long, value_name = "KEY", requires = "attest")]
    pub sign_key: Option<PathBuf>,
}

impl RunArgs {
    /// What to print on stdout, `--json` folded into `--format`.
    pub(crate) fn stdout_format(&self) -> Format {
        self.output.chosen()
    }
}

/// `--timeout`: the spec's rule (more than zero, at most 30 days).
fn parse_duration(s: &str) -> Result<Duration, String> {
    crate::spec::check_duration(s)
}
