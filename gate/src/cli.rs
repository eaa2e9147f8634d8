//! The command line of `gate`, as clap parses it. Doc comments here are the `--help` text.
//! These raw arguments are turned into library settings in `commands`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use cmdline::cli::{ColorArg, Describe, FormatArgs};

/// Prove a candidate is what was reviewed: apply its patch to a fresh checkout of its
/// base, check its sha256 manifest and drift, and run its suites.
#[derive(Debug, Parser)]
#[command(name = "gate", version, max_term_width = 100)]
pub struct Cli {
    /// The git repository to work on (default: the one the current directory is in).
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) repo: Option<PathBuf>,

    // Colour goes to the verdict words only; files written to disk are never coloured.
    #[command(flatten)]
    pub(crate) color: ColorArg,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Turn the staged changes into DIR/build.patch and DIR/candidate-manifest.sha256.
    Pack {
        /// The commit the candidate is based on.
        #[arg(long, value_name = "REV")]
        base: String,
        /// Where to write the patch and manifest.
        #[arg(long, value_name = "DIR", default_value = ".")]
        out: PathBuf,
        /// Limit the candidate to these paths (git pathspecs).
        paths: Vec<String>,
    },
    /// Apply a patch to a fresh checkout of its base and check it.
    Apply {
        #[arg(long, value_name = "REV")]
        base: String,
        #[arg(long, value_name = "FILE")]
        patch: PathBuf,
        #[arg(long, value_name = "FILE")]
        manifest: PathBuf,
        /// The tip whose commits since the base are checked for drift.
        #[arg(long, value_name = "REV", default_value = "HEAD")]
        head: String,
        /// Where to make the checkout (default: a new folder in the temp dir). It is left in
        /// place for you either way.
        #[arg(long, value_name = "DIR")]
        worktree: Option<PathBuf>,
        /// Print the JSON report instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Apply the candidate of a gate.toml and run its suites in order.
    Run {
        #[arg(long, value_name = "FILE", default_value = "gate.toml")]
        config: PathBuf,
        /// The candidate's base, in place of gate.toml's `base`.
        #[arg(long, value_name = "REV", value_parser = clap::builder::NonEmptyStringValueParser::new())]
        base: Option<String>,
        /// The patch, in place of gate.toml's `patch` (only read: it may be anywhere).
        #[arg(long, value_name = "FILE")]
        patch: Option<PathBuf>,
        /// The manifest, in place of gate.toml's `manifest` (only read: it may be anywhere).
        #[arg(long, value_name = "FILE")]
        manifest: Option<PathBuf>,
        /// Where gate-summary.txt, gate.json and the suite logs go.
        #[arg(long, value_name = "DIR", default_value = "gate-out")]
        out: PathBuf,
        /// Rerun only this suite (repeatable), appending to an existing summary. A candidate
        /// whose base, head, patch, manifest or tree differs from the summary's is refused.
        #[arg(long, value_name = "SUITE")]
        only: Vec<String>,
        /// With --only: start a new summary instead of appending (the old one is replaced).
        /// Suites not run are findings, so the verdict is not PASS until all have passed.
        #[arg(long, requires = "only")]
        fresh: bool,
        /// Keep the checkout after the run.
        #[arg(long)]
        keep: bool,
        /// After the suites pass, make each source path of the candidate unloadable in turn and
        /// rerun the suites until one fails: proof they read the checkout under review, not your
        /// checkout or an install of it. A path no suite notices (or a suite that notices none)
        /// is exit 4. Costs about one suite run per source path, so it is off by default.
        #[arg(long)]
        canary: bool,
        /// Copy each suite's output to stderr as it runs.
        #[arg(long)]
        echo: bool,
        #[command(flatten)]
        output: FormatArgs,
        /// Also write a JUnit XML report to FILE: one testcase per suite (a failed or hung suite
        /// is a failure, one that could not start an error) and one for the candidate's checks.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Also write an in-toto Statement v1 to FILE: the candidate's tree (gitTree), head
        /// commit (gitCommit) and patch (sha256), with the test-result predicate (PASSED only
        /// for a complete PASS, gate.toml's digest, the suites passed and failed).
        #[arg(long, value_name = "FILE")]
        attest: Option<PathBuf>,
        /// Sign the --attest statement with this SSH key (`ssh-keygen -Y sign`, namespace
        /// gatekit-attestation), writing FILE.sig beside it, as git signs commits.
        #[arg(long, value_name = "KEY", requires = "attest")]
        sign_key: Option<PathBuf>,
    },
    /// Check an attestation: its SSH signature against an allowed_signers file (as git's
    /// gpg.ssh.allowedSignersFile), that it attests the tree of --head (or --tree), and that
    /// the run it attests passed. Exit 0 only when all three hold.
    Verify {
        /// The statement (`gate run --attest` or `mutants run --attest`); its signature is
        /// read from ATTESTATION.sig.
        #[arg(value_name = "ATTESTATION")]
        attestation: PathBuf,
        /// Who may sign (ssh-keygen's ALLOWED SIGNERS format). Without it the signature is
        /// not checked, and the answer is NOT verified (exit 1).
        #[arg(long, value_name = "FILE")]
        allowed_signers: Option<PathBuf>,
        /// The commit whose tree must be the attested one.
        #[arg(
            long,
            value_name = "REV",
            default_value = "HEAD",
            conflicts_with = "tree"
        )]
        head: String,
        /// The full tree id that must be the attested one (instead of --head's tree).
        #[arg(long, value_name = "ID")]
        tree: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Check files against a sha256 manifest (`sha256sum -c` with gatekit's path rules).
    Check {
        /// The manifest (`-` for stdin); without it, the first positional argument is the
        /// manifest, as `sha256sum -c FILE` takes it.
        #[arg(long, value_name = "FILE")]
        manifest: Option<PathBuf>,
        /// `[MANIFEST] [DIR]`: the manifest (unless --manifest names it) and the folder its paths
        /// are relative to (default: the current folder).
        #[arg(value_name = "FILE|DIR", num_args = 0..=2)]
        args: Vec<PathBuf>,
        /// Print only what is not OK, and the summary line (sha256sum's --quiet).
        #[arg(long, conflicts_with = "status")]
        quiet: bool,
        /// Print nothing: the exit code is the answer (sha256sum's --status).
        #[arg(long)]
        status: bool,
        /// A file that is missing is neither a failure nor reported (sha256sum's
        /// --ignore-missing); a manifest whose every file is missing still fails.
        #[arg(long)]
        ignore_missing: bool,
        /// Accepted as sha256sum takes it: gatekit always reads strictly, so an improperly
        /// formatted line is already exit 2 naming its line.
        #[arg(long)]
        warn: bool,
        /// Accepted as sha256sum takes it: reading is always strict (see --warn).
        #[arg(long)]
        strict: bool,
        #[arg(long)]
        json: bool,
    },
    /// Print a manifest of files (relative paths, in the order given), in GNU sha256sum's
    /// format: `sha256sum FILE...`, with gatekit's path rules and hashing.
    Hash {
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// The tagged form `SHA256 (PATH) = HEX` (sha256sum's --tag).
        #[arg(long)]
        tag: bool,
    },
    /// Report whether a review text, or a pull request's reviews and comments as GitHub's REST
    /// API returns them, cite the head commit or its tree (any hex prefix of 7+ characters, or
    /// the commit a review was made on).
    Cites {
        #[arg(long, value_name = "REV")]
        head: String,
        /// The review text (default: stdin, unless a --github-* file is given).
        file: Option<PathBuf>,
        /// A pull request's reviews (`gh api repos/O/R/pulls/N/reviews`): each binds by its
        /// `commit_id` and by its text.
        #[arg(long, value_name = "FILE")]
        github_reviews: Option<PathBuf>,
        /// A pull request's issue comments (`gh api repos/O/R/issues/N/comments`): they carry
        /// no commit, so only their text can bind them.
        #[arg(long, value_name = "FILE")]
        github_issue_comments: Option<PathBuf>,
        /// A pull request's review comments (`gh api repos/O/R/pulls/N/comments`): each binds
        /// by its `original_commit_id` (the commit its writer saw) and by its text.
        #[arg(long, value_name = "FILE")]
        github_review_comments: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Remove what earlier runs left: checkouts and scratch of runs that were killed, and every
    /// checkout kept with `--keep` or by `gate apply` (the reviewer's notes in them go too).
    Clean,
    #[command(flatten)]
    Describe(Describe),
}
