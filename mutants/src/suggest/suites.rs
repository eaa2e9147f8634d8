//! The suite every proposal names, and the `[suites.NAME]` table the written spec defines for
//! it: a spec that names a suite it does not define would be refused by every reader.
//!
//! Where suites come from, first found wins: the candidate's gate.toml (`[[suite]]` entries
//! with `run`; a `glob` suite has no one command a spec could hold), else the repository's
//! `mutants.toml` (`[suites.*]`), else its `gate.toml`, else a placeholder whose `run` says
//! `TODO:` (which `mutants run` and `check` refuse until it is filled in). Each file is read
//! and validated by its own reader, so a broken one is its own `FILE:LINE` error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use candidate::config::Config;
use report::results::Source;

use crate::spec::{Spec, Suite};

/// The placeholder suite's command, which the spec reader refuses until it is replaced.
pub(crate) const PLACEHOLDER_RUN: &str = "TODO: the command that runs your tests";

/// The placeholder suite's name when `--suite` names none.
const PLACEHOLDER_NAME: &str = "tests";

/// A `[suites.NAME]` table as the written spec holds it: every key the spec reader takes,
/// those not set left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SuiteTable {
    pub run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_timeout: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub junit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tap: Option<bool>,
    /// mutants.toml's `select` template, kept so the proposals run their covering tests first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<String>,
    /// mutants.toml's `inputs`, kept so `--incremental` holds the proposals' verdicts to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// `false` only when mutants.toml said so (gate.toml's suites always run whole there, which
    /// is gate's rule, not the suite's: mutants' default stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_fast: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<String>,
}

/// The suite chosen for every proposal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Chosen {
    pub name: String,
    pub table: SuiteTable,
    /// Where it came from, for the spec's opening comment (`gate.toml's [[suite]]`).
    pub from: String,
    /// The file it was read from, an input no output may land on.
    pub file: Option<PathBuf>,
    /// The placeholder: its `run` still says `TODO:`.
    pub placeholder: bool,
    /// Suites of the file read that no spec can run, for the command to say.
    pub left_out: Option<LeftOut>,
}

/// Suites a file defines that a spec cannot run (a `glob` suite has no one command).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LeftOut {
    pub suites: Vec<String>,
    /// The file's description (`gate.toml's [[suite]]`).
    pub of: String,
}

/// The suites found, by name, and where they came from.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub suites: BTreeMap<String, SuiteTable>,
    pub from: String,
    pub file: Option<PathBuf>,
    /// `glob` suites of a gate.toml, left out.
    pub left_out: Vec<String>,
}

/// The suites of a candidate's gate.toml (already read and validated), its `[env]` in each
/// (a suite's own entry wins), as `run --candidate` and gate give it to every suite: the spec
/// runs the same commands with or without the candidate's gate.toml beside it.
pub(crate) fn of_config(config: &Config) -> Found {
    let mut found = from_gate(&config.suites);
    for t in found.suites.values_mut() {
        for (k, v) in &config.env {
            t.env.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    found.from = format!("{}'s [[suite]]", config.file.display());
    found.file = Some(config.file.clone());
    found
}

/// The suites of the repository at `root`: its mutants.toml, else its gate.toml; none found
/// leaves `suites` empty.
pub(crate) fn of_repo(root: &Path) -> Result<Found> {
    let spec = root.join("mutants.toml");
    if spec.is_file() {
        let suites = Spec::load_suites(&spec)?;
        if !suites.is_empty() {
            return Ok(Found {
                suites: suites
                    .values()
                    .filter_map(|s| Some((s.name.clone(), table(s, Origin::Mutants)?)))
                    .collect(),
                from: format!("{}'s [suites]", spec.display()),
                file: Some(spec),
                left_out: Vec::new(),
            });
        }
    }
    let gate = root.join("gate.toml");
    if gate.is_file() {
        let mut found = from_gate(&Config::load_suites(&gate)?);
        if !found.suites.is_empty() || !found.left_out.is_empty() {
            found.from = format!("{}'s [[suite]]", gate.display());
            found.file = Some(gate);
            return Ok(found);
        }
    }
    Ok(Found::default())
}

fn from_gate(suites: &[Suite]) -> Found {
    let mut found = Found::default();
    for s in suites {
        match table(s, Origin::Gate) {
            Some(t) => {
                found.suites.insert(s.name.clone(), t);
            }
            None => found.left_out.push(s.name.clone()),
        }
    }
    found
}

/// Which file a suite was read from: gate.toml's suites have no mutants-only keys, and their
/// `fail_fast` is gate's rule (every suite whole), not a choice to carry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    Gate,
    Mutants,
}

/// A validated suite (either file's) as a spec's table again, every key it was read with;
/// `None` for a `glob` suite, which has no one command a spec could hold. A timeout the file
/// did not set is left unset: a mutant's suite then gets max(20s, 5x its baseline), which is
/// what catches a mutant that hangs (gate's 30-minute default would not).
fn table(s: &Suite, from: Origin) -> Option<SuiteTable> {
    // Destructured whole, so a key the suite gains cannot be left out of the spec unseen.
    let Suite {
        name: _,
        command: _,
        build,
        timeout,
        build_timeout,
        env,
        results,
        inputs,
        fail_fast,
        select,
        floor,
        watch,
    } = s;
    let t = SuiteTable {
        run: s.run()?.to_string(),
        build: build.clone(),
        timeout: timeout.map(duration),
        build_timeout: build_timeout.map(duration),
        env: env.clone(),
        select: select.as_ref().map(|t| t.template.clone()),
        inputs: inputs.clone(),
        fail_fast: (from == Origin::Mutants && !fail_fast).then_some(false),
        floor: floor.clone(),
        watch: watch.clone(),
        ..SuiteTable::default()
    };
    Some(with_results(t, results))
}

fn with_results(mut t: SuiteTable, results: &Source) -> SuiteTable {
    match results {
        Source::Log => {}
        Source::Junit(path) => t.junit = Some(path.to_string_lossy().into_owned()),
        Source::Tap => t.tap = Some(true),
    }
    t
}

/// A duration as the spec reader takes it back exactly: whole seconds, else milliseconds.
fn duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The suite every proposal names: `--suite NAME` among those found, else the only one, else
/// the placeholder (named NAME when given); several and no `--suite` is bad input naming them.
pub(crate) fn choose(found: Found, wanted: Option<&str>) -> Result<Chosen> {
    let left_out = (!found.left_out.is_empty()).then(|| LeftOut {
        suites: found.left_out.clone(),
        of: found.from.clone(),
    });
    let placeholder = |name: &str| Chosen {
        left_out: left_out.clone(),
        ..placeholder(name)
    };
    let names = || found.suites.keys().cloned().collect::<Vec<_>>().join(", ");
    let pick = match wanted {
        Some(name) if found.suites.is_empty() => {
            return Ok(placeholder(name));
        }
        Some(name) => match found.suites.get(name) {
            Some(t) => (name.to_string(), t.clone()),
            None => bail!(
                "--suite {name:?}: no such suite in {} (it defines: {})",
                found.from,
                names()
            ),
        },
        None => match found.suites.len() {
            0 => return Ok(placeholder(PLACEHOLDER_NAME)),
            1 => {
                let (n, t) = found.suites.iter().next().expect("one suite");
                (n.clone(), t.clone())
            }
            _ => bail!(
                "{} defines several suites ({}): name the one the mutants run under with --suite NAME",
                found.from,
                names()
            ),
        },
    };
    Ok(Chosen {
        name: pick.0,
        table: pick.1,
        from: found.from,
        file: found.file,
        placeholder: false,
        left_out,
    })
}

fn placeholder(name: &str) -> Chosen {
    Chosen {
        name: name.to_string(),
        table: SuiteTable {
            run: PLACEHOLDER_RUN.to_string(),
            ..SuiteTable::default()
        },
        from: "a placeholder (no mutants.toml or gate.toml with a suite was found)".into(),
        file: None,
        placeholder: true,
        left_out: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn mutants_toml_wins_over_gate_toml_and_its_suites_come_back_whole() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            tmp.path(),
            "gate.toml",
            "[[suite]]\nname = \"g\"\nrun = \"make test\"\n",
        );
        let found = of_repo(tmp.path()).unwrap();
        assert_eq!(found.suites["g"].run, "make test");
        // gate's default timeout is not carried; a set one is, and the results source too.
        assert_eq!(found.suites["g"].timeout, None);
        // One suite type: gate.toml's build step comes into the spec as it was written.
        write(
            tmp.path(),
            "gate.toml",
            "[[suite]]\nname = \"g\"\nrun = \"make test\"\nbuild = \"make\"\nbuild_timeout = \"2m\"\ntimeout = \"30m\"\n",
        );
        let g = &of_repo(tmp.path()).unwrap().suites["g"];
        assert_eq!(g.build.as_deref(), Some("make"));
        assert_eq!(g.build_timeout.as_deref(), Some("120s"));
        assert_eq!(g.timeout.as_deref(), Some("1800s"));
        write(
            tmp.path(),
            "mutants.toml",
            "[suites.unit]\nrun = \"pytest -q\"\nbuild = \"make\"\ntimeout = \"90s\"\nbuild_timeout = \"1500ms\"\nenv = { A = \"1\" }\njunit = \"r/j.xml\"\nselect = \"pytest -q {tests}\"\n\n[suites.other]\nrun = \"true\"\ntap = true\n",
        );
        let found = of_repo(tmp.path()).unwrap();
        assert_eq!(
            found.suites["unit"],
            SuiteTable {
                run: "pytest -q".into(),
                build: Some("make".into()),
                timeout: Some("90s".into()),
                build_timeout: Some("1500ms".into()),
                env: BTreeMap::from([("A".into(), "1".into())]),
                junit: Some("r/j.xml".into()),
                tap: None,
                select: Some("pytest -q {tests}".into()),
                ..SuiteTable::default()
            }
        );
        assert_eq!(found.suites["other"].tap, Some(true));
        let e = choose(found, None).unwrap_err().to_string();
        assert!(
            e.contains("defines several suites (other, unit): name the one"),
            "{e}"
        );
        let chosen = choose(of_repo(tmp.path()).unwrap(), Some("unit")).unwrap();
        assert_eq!(chosen.name, "unit");
        assert!(!chosen.placeholder);
        let e = choose(of_repo(tmp.path()).unwrap(), Some("nope"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no such suite") && e.contains("other, unit"),
            "{e}"
        );
    }

    /// Every key a mutants.toml suite takes, as the reader itself lists them when refusing an
    /// unknown one (so a key added to the reader is in this list without anyone adding it).
    fn keys_the_reader_takes() -> Vec<String> {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "mutants.toml", "[suites.a]\nno_such_key = 1\n");
        let e = Spec::load_suites(&tmp.path().join("mutants.toml"))
            .unwrap_err()
            .to_string();
        let list = e.split("expected one of").nth(1).expect(&e);
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_suite_with_every_key_comes_back_the_same_suite_from_the_written_spec() {
        let text = "[suites.unit]\nrun = \"pytest -q\"\nbuild = \"make\"\ntimeout = \"90s\"\nbuild_timeout = \"1500ms\"\nenv = { A = \"1\" }\njunit = \"r/j.xml\"\nselect = \"pytest -q {tests}\"\ninputs = [\"src/**\", \"tests/**\"]\nfail_fast = false\nfloor = \"pytest -q -k nothing\"\nwatch = \"ptw\"\n";
        // `name` and `glob` are refused in mutants.toml, `tap` and `junit` exclude each other.
        for key in keys_the_reader_takes() {
            let set = format!("\n{key} = ");
            assert!(
                ["name", "glob", "tap"].contains(&key.as_str()) || text.contains(&set),
                "the suite below does not set `{key}`, a key the reader takes: add it, and write it back"
            );
        }
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "mutants.toml", text);
        let read = Spec::load_suites(&tmp.path().join("mutants.toml")).unwrap();
        let found = of_repo(tmp.path()).unwrap();
        let written = toml::to_string(&BTreeMap::from([("suites", &found.suites)])).unwrap();
        let again = tmp.path().join("again");
        std::fs::create_dir(&again).unwrap();
        write(&again, "mutants.toml", &written);
        assert_eq!(
            Spec::load_suites(&again.join("mutants.toml")).unwrap(),
            read,
            "{written}"
        );
        // A gate.toml suite's `fail_fast` (gate runs every suite whole) is gate's rule, not the
        // suite's: the written suite keeps mutants' default, stopping at the first failure.
        write(
            tmp.path(),
            "gate.toml",
            "[[suite]]\nname = \"g\"\nrun = \"make test\"\n",
        );
        std::fs::remove_file(tmp.path().join("mutants.toml")).unwrap();
        let g = &of_repo(tmp.path()).unwrap().suites["g"];
        assert_eq!(g.fail_fast, None);
    }

    #[test]
    fn a_broken_file_is_its_own_error_and_none_found_is_the_placeholder() {
        let tmp = tempfile::tempdir().unwrap();
        let chosen = choose(of_repo(tmp.path()).unwrap(), None).unwrap();
        assert!(chosen.placeholder);
        assert_eq!(
            (chosen.name.as_str(), chosen.table.run.as_str()),
            ("tests", PLACEHOLDER_RUN)
        );
        assert_eq!(choose(Found::default(), Some("unit")).unwrap().name, "unit");
        write(tmp.path(), "mutants.toml", "[suites.a]\nrun = \"\"\n");
        let e = of_repo(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("mutants.toml:2:"), "{e}");
        // A mutants.toml still holding the placeholder is refused where it says TODO.
        write(
            tmp.path(),
            "mutants.toml",
            "[suites.a]\nrun = \"TODO: x\"\n",
        );
        let e = of_repo(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("mutants.toml:2:") && e.contains("TODO"), "{e}");
    }

    #[test]
    fn a_candidates_env_reaches_its_suites_and_a_suites_own_entry_wins() {
        let config = Config::parse(
            "base = \"HEAD\"\npatch = \"p\"\nmanifest = \"m\"\n[env]\nA = \"top\"\nB = \"top\"\n\n[[suite]]\nname = \"u\"\nrun = \"make\"\nenv = { B = \"own\" }\njunit = \"j.xml\"\n",
            Path::new("gate.toml"),
        )
        .unwrap();
        let found = of_config(&config);
        let u = &found.suites["u"];
        assert_eq!(u.env["A"], "top");
        assert_eq!(u.env["B"], "own");
        assert_eq!(u.junit.as_deref(), Some("j.xml"));
        assert_eq!(found.file.as_deref(), Some(Path::new("gate.toml")));
    }

    #[test]
    fn a_glob_suite_is_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            tmp.path(),
            "gate.toml",
            "[[suite]]\nglob = \"tests/*.sh\"\n\n[[suite]]\nname = \"r\"\nrun = \"true\"\ntimeout = \"2m\"\n",
        );
        let found = of_repo(tmp.path()).unwrap();
        assert_eq!(found.left_out, ["tests/*.sh"]);
        let chosen = choose(found, None).unwrap();
        assert_eq!(chosen.name, "r");
        assert_eq!(chosen.table.timeout.as_deref(), Some("120s"));
    }
}
