//! A suite: the one type gate.toml's `[[suite]]` and mutants.toml's `[suites.NAME]` are read
//! into, the one validation both files get, and the one way a suite is run ([`run`]).
//!
//! Both files take the same keys with the same rules (`run`, `build`, `build_timeout`,
//! `timeout`, `env`, `junit`, `tap`), so a suite copied from one to the other means the same
//! thing; `inputs` and `fail_fast` are mutants' alone. A key that means nothing to one tool is refused there with one line saying why and
//! what to write instead: mutants.toml names a suite by its table (`[suites.NAME]`), so `name`
//! is refused there, and a mutant names one suite, so `glob` (one suite per matching file) is
//! gate's alone. Every problem is `FILE:LINE: what is wrong`, before anything runs.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use files::located::Located;
use report::results::Source;

pub mod run;
pub mod select;

pub use run::{run_suite, run_suite_watched, Alone, Built, Ran, Share, SuiteJob, Timeouts};
pub use select::{Items, Select};

/// A suite as either file writes it: every key any tool takes, so that a key one tool does not
/// take is refused with a reason rather than as an unknown field. Unknown keys are refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSuite {
    name: Option<Spanned<String>>,
    run: Option<Spanned<String>>,
    glob: Option<Spanned<String>>,
    build: Option<Spanned<String>>,
    build_timeout: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    junit: Option<Spanned<String>>,
    tap: Option<Spanned<bool>>,
    inputs: Option<Spanned<Vec<String>>>,
    fail_fast: Option<Spanned<bool>>,
    select: Option<Spanned<String>>,
    floor: Option<Spanned<String>>,
    watch: Option<Spanned<String>>,
}

impl RawSuite {
    /// The `run` command as written, with its span.
    pub fn run(&self) -> Option<&Spanned<String>> {
        self.run.as_ref()
    }

    /// The `name` key as written, with its span.
    pub fn name(&self) -> Option<&Spanned<String>> {
        self.name.as_ref()
    }
}

/// What the suite runs: a shell command, or every file a glob matches (gate.toml only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Run(String),
    Glob(String),
}

/// A validated suite, from either file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    pub name: String,
    pub command: Command,
    /// Run before the suite, each time it runs, under its own timeout: a build that fails or
    /// hangs means the suite could not run (gate: the suite fails; mutants: the mutant is an
    /// `error`, or `unviable` when generated).
    pub build: Option<String>,
    /// The file's own timeout, if it gives one (gate's default is 30 minutes; mutants derives
    /// one from the baseline).
    pub timeout: Option<Duration>,
    /// The file's own timeout for the `build` step, if it gives one.
    pub build_timeout: Option<Duration>,
    pub env: BTreeMap<String, String>,
    /// Where its counts and failed tests are read from: the log, the runner's JUnit file
    /// (`junit = "reports/junit.xml"`), or TAP on stdout (`tap = true`).
    pub results: Source,
    /// What the suite reads (mutants.toml only): globs of the tree's files, relative to its
    /// root (`inputs = ["src/**", "tests/**"]`). `mutants run --incremental` keeps a verdict
    /// while the files they match (and the mutated file) are unchanged; empty means every
    /// tracked file.
    pub inputs: Vec<String>,
    /// Stop at the first failed test (mutants.toml only, on unless `fail_fast = false`): a
    /// mutant's run is stopped once its runner's report of a failed test is complete. gate's
    /// suites always run whole.
    pub fail_fast: bool,
    /// The command that runs only some of its tests (mutants.toml only): `node --test {files}`,
    /// `python3 -m pytest {tests}`. A mutant first runs the tests that cover it through it,
    /// then the whole suite (`run`) when they do not fail.
    pub select: Option<Select>,
    /// The runner started with no test selected (mutants.toml only:
    /// `floor = "npx vitest run --passWithNoTests -t '^$'"`): the least a mutant can cost with a
    /// process per mutant. `mutants run` times it after the baseline and says each suite's time
    /// per mutant as a multiple of it; it never judges a mutant.
    pub floor: Option<String>,
    /// A warm runner that reruns after each change of a file (mutants.toml only:
    /// `watch = "npx vitest --watch"`): one per checkout, read after each swap, so a mutant
    /// pays for the rerun and not for the runner's start-up. A survivor, and anything the
    /// warm runner leaves in doubt, is judged by a cold run of `run`.
    pub watch: Option<String>,
}

impl Suite {
    /// The shell command, for a `run` suite (every suite of a mutants.toml is one).
    pub fn run(&self) -> Option<&str> {
        match &self.command {
            Command::Run(run) => Some(run),
            Command::Glob(_) => None,
        }
    }
}

/// Where a suite is read from, which decides the keys it takes and how it is named.
#[derive(Clone, Copy, Debug)]
pub enum Form<'a> {
    /// gate.toml's `[[suite]]`, the `index`th (from 0): named by `name`, or by its `glob`.
    Gate { index: usize },
    /// mutants.toml's `[suites.NAME]`: named by its table.
    Mutants { name: &'a str },
}

/// Reads one suite, the one validation for both files. `at` turns a span of the file into
/// its `FILE:LINE: problem`.
pub fn read(
    spanned: &Spanned<RawSuite>,
    form: Form,
    at: &dyn Fn(Option<Range<usize>>, String) -> Located,
) -> Result<Suite, Located> {
    let raw = spanned.get_ref();
    let whole = Some(spanned.span());
    // A problem said of this suite: mutants.toml's name each (the table may be far above).
    let at = |span: Option<Range<usize>>, message: String| match form {
        Form::Gate { .. } => at(span, message),
        Form::Mutants { name } => at(span, format!("suite {name:?}: {message}")),
    };
    let text = |s: &Spanned<String>, key: &str, empty_ok: bool| {
        if !empty_ok && s.get_ref().trim().is_empty() {
            Err(at(Some(s.span()), format!("`{key}` is empty")))
        } else if s.get_ref().contains('\0') {
            Err(at(
                Some(s.span()),
                format!("`{key}` holds a NUL byte, which no command line can carry"),
            ))
        } else {
            Ok(s.get_ref().clone())
        }
    };
    if let Form::Mutants { .. } = form {
        if let Some(name) = &raw.name {
            return Err(at(
                Some(name.span()),
                "`name` means nothing in mutants.toml: a suite is named by its table, \
                 [suites.NAME]"
                    .into(),
            ));
        }
        if let Some(glob) = &raw.glob {
            return Err(at(
                Some(glob.span()),
                "`glob` means nothing in mutants.toml: a mutant names one suite, so each suite \
                 has one `run` (write `run = \"./FILE\"` in a suite of its own per script)"
                    .into(),
            ));
        }
    }
    if let (Form::Gate { .. }, Some(inputs)) = (form, &raw.inputs) {
        return Err(at(
            Some(inputs.span()),
            "`inputs` means nothing in gate.toml: it says what an incremental mutants run may \
             compare, and gate runs every suite every time (put it in mutants.toml's suite)"
                .into(),
        ));
    }
    if let (Form::Gate { .. }, Some(fail_fast)) = (form, &raw.fail_fast) {
        return Err(at(
            Some(fail_fast.span()),
            "`fail_fast` means nothing in gate.toml: gate runs every suite whole, to report \
             every failed test (put it in mutants.toml's suite)"
                .into(),
        ));
    }
    let fail_fast =
        matches!(form, Form::Mutants { .. }) && raw.fail_fast.as_ref().is_none_or(|f| *f.get_ref());
    if let (Form::Gate { .. }, Some(select)) = (form, &raw.select) {
        return Err(at(
            Some(select.span()),
            "`select` means nothing in gate.toml: it runs only the tests that cover a mutant, \
             and gate runs every suite whole (put it in mutants.toml's suite)"
                .into(),
        ));
    }
    let select = match &raw.select {
        Some(t) => Some(
            Select::parse(&text(t, "select", false)?)
                .map_err(|why| at(Some(t.span()), format!("`select` {why}")))?,
        ),
        None => None,
    };
    if let Form::Gate { .. } = form {
        for (key, value, why) in [
            (
                "floor",
                &raw.floor,
                "it is the runner's start-up a mutants run measures its mutants against",
            ),
            (
                "watch",
                &raw.watch,
                "it is the warm runner a mutants run reruns after each swap",
            ),
        ] {
            if let Some(value) = value {
                return Err(at(
                    Some(value.span()),
                    format!(
                        "`{key}` means nothing in gate.toml: {why}, and gate runs each suite \
                         once (put it in mutants.toml's suite)"
                    ),
                ));
            }
        }
    }
    let floor = raw
        .floor
        .as_ref()
        .map(|f| text(f, "floor", false))
        .transpose()?;
    let watch = raw
        .watch
        .as_ref()
        .map(|w| text(w, "watch", false))
        .transpose()?;
    let inputs = match &raw.inputs {
        Some(list) => {
            let mut globs = Vec::new();
            for pattern in list.get_ref() {
                let bad =
                    |why: String| at(Some(list.span()), format!("`inputs` {pattern:?} {why}"));
                if pattern.trim().is_empty() {
                    return Err(bad("is empty".into()));
                }
                files::path::relative(pattern).map_err(|why| bad(why.to_string()))?;
                globset::GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| bad(format!("is not a glob: {}", e.kind())))?;
                globs.push(pattern.clone());
            }
            globs
        }
        None => Vec::new(),
    };
    let command = match (&raw.run, &raw.glob) {
        (Some(run), None) => Command::Run(text(run, "run", false)?),
        (None, Some(glob)) => {
            let pattern = text(glob, "glob", false)?;
            // A glob matches files of the candidate's tree, so it is relative to it.
            files::path::relative(&pattern)
                .map_err(|why| at(Some(glob.span()), format!("`glob` {pattern:?} {why}")))?;
            Command::Glob(pattern)
        }
        (Some(_), Some(glob)) => {
            return Err(at(
                Some(glob.span()),
                "a suite has either `run` or `glob`, not both".into(),
            ))
        }
        (None, None) => {
            return Err(match form {
                Form::Gate { index } => at(
                    whole,
                    format!("suite {} has neither `run` nor `glob`", index + 1),
                ),
                Form::Mutants { .. } => at(whole, "no `run`: the command that runs it".into()),
            })
        }
    };
    let name = match (form, &raw.name, &command) {
        (Form::Mutants { name }, _, _) => name.to_string(),
        (Form::Gate { .. }, Some(n), _) => text(n, "name", false)?,
        (Form::Gate { .. }, None, Command::Glob(g)) => g.clone(),
        (Form::Gate { index }, None, Command::Run(_)) => {
            return Err(at(whole, format!("suite {} has no `name`", index + 1)))
        }
    };
    let duration = |t: &Option<Spanned<String>>, key: &str| match t {
        Some(t) => report::duration::timeout(t.get_ref())
            .map(Some)
            .map_err(|why| at(Some(t.span()), format!("{key}: {why}"))),
        None => Ok(None),
    };
    let timeout = duration(&raw.timeout, "timeout")?;
    let build_timeout = duration(&raw.build_timeout, "build_timeout")?;
    if let (Some(t), None) = (&raw.build_timeout, &raw.build) {
        return Err(at(
            Some(t.span()),
            "build_timeout without a `build` step".into(),
        ));
    }
    let build = match &raw.build {
        // An empty `build` is no build step, as it always was.
        Some(b) => Some(text(b, "build", true)?).filter(|b| !b.trim().is_empty()),
        None => None,
    };
    Ok(Suite {
        name,
        command,
        build,
        timeout,
        build_timeout,
        env: env_table(&raw.env, &at)?,
        results: results(&raw.junit, &raw.tap, &at)?,
        inputs,
        fail_fast,
        select,
        floor,
        watch,
    })
}

/// A suite's `junit` and `tap` keys: `junit` names the runner's JUnit file by the one path
/// rule (relative to the checkout, never absolute or climbing), `tap = true` says the runner
/// prints TAP; not both. The error is at the key's line.
fn results(
    junit: &Option<Spanned<String>>,
    tap: &Option<Spanned<bool>>,
    at: &dyn Fn(Option<Range<usize>>, String) -> Located,
) -> Result<Source, Located> {
    match (junit, tap.as_ref().map(|t| (*t.get_ref(), t.span()))) {
        (Some(_), Some((true, span))) => Err(at(
            Some(span),
            "a suite reads `junit` or `tap`, not both".into(),
        )),
        (Some(path), _) => Source::junit(path.get_ref()).map_err(|why| {
            at(
                Some(path.span()),
                format!("`junit` {:?} {why}", files::escape::text(path.get_ref())),
            )
        }),
        (None, Some((true, _))) => Ok(Source::Tap),
        (None, _) => Ok(Source::Log),
    }
}

/// An `env` table checked (a suite's, or gate.toml's `[env]` under every suite), the one rule: `execve` takes
/// `NAME=VALUE` strings ended by a NUL, so a name that is empty or holds `=` or NUL, or a value
/// that holds NUL, would be cut short or refused. The error is at the entry's line, as
/// `env NAME: why`.
pub fn env_table(
    raw: &BTreeMap<String, Spanned<String>>,
    at: &dyn Fn(Option<Range<usize>>, String) -> Located,
) -> Result<BTreeMap<String, String>, Located> {
    let mut env = BTreeMap::new();
    for (name, value) in raw {
        let why = if name.is_empty() {
            Some("the name is empty")
        } else if name.contains('\0') {
            Some("the name holds a NUL byte")
        } else if name.contains('=') {
            Some("the name holds `=`")
        } else if value.get_ref().contains('\0') {
            Some("the value holds a NUL byte, which no environment can carry")
        } else {
            None
        };
        if let Some(why) = why {
            let shown = files::escape::text(name);
            return Err(at(Some(value.span()), format!("env {shown}: {why}")));
        }
        env.insert(name.clone(), value.get_ref().clone());
    }
    Ok(env)
}

#[cfg(test)]
mod tests;
