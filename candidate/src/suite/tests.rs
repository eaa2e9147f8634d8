//! The one suite reader through both forms, and the one run: build first, its failure and
//! its hang as the suite's record, the environment layered, the scratch TMPDIR.

use std::path::Path;

use super::*;

/// `[[suite]]` (gate) or `[suites.x]` (mutants) holding `keys`, read as that file reads it.
fn read_as(gate: bool, keys: &str) -> Result<Suite, Located> {
    #[derive(Deserialize)]
    struct Gate {
        suite: Vec<Spanned<RawSuite>>,
    }
    #[derive(Deserialize)]
    struct Mutants {
        suites: BTreeMap<String, Spanned<RawSuite>>,
    }
    let (text, file) = if gate {
        (format!("[[suite]]\n{keys}\n"), "gate.toml")
    } else {
        (format!("[suites.x]\n{keys}\n"), "mutants.toml")
    };
    let at = |span: Option<Range<usize>>, m: String| Located::at(Path::new(file), &text, span, m);
    let parsed = |e: toml::de::Error| at(e.span(), e.message().trim().to_string());
    if gate {
        let raw: Gate = toml::from_str(&text).map_err(parsed)?;
        read(&raw.suite[0], Form::Gate { index: 0 }, &at)
    } else {
        let raw: Mutants = toml::from_str(&text).map_err(parsed)?;
        read(&raw.suites["x"], Form::Mutants { name: "x" }, &at)
    }
}

fn error(gate: bool, keys: &str) -> String {
    read_as(gate, keys).unwrap_err().to_string()
}

#[test]
fn both_files_read_the_same_keys_into_the_same_suite() {
    let keys = "run = \"make test\"\nbuild = \"make\"\nbuild_timeout = \"5m\"\ntimeout = \"30s\"\n\
                env = { A = \"1\" }\ntap = true";
    let gate = read_as(true, &format!("name = \"x\"\n{keys}")).unwrap();
    let mutants = read_as(false, keys).unwrap();
    // Only fail_fast differs: mutants stops at the first failure unless told not to.
    assert!(mutants.fail_fast && !gate.fail_fast);
    assert_eq!(
        gate,
        Suite {
            fail_fast: false,
            ..mutants
        }
    );
    assert_eq!(gate.run(), Some("make test"));
    assert_eq!(gate.build.as_deref(), Some("make"));
    assert_eq!(gate.build_timeout, Some(Duration::from_secs(300)));
    assert_eq!(gate.timeout, Some(Duration::from_secs(30)));
    assert_eq!(gate.env["A"], "1");
    assert_eq!(gate.results, Source::Tap);
}

#[test]
fn keys_that_mean_nothing_to_mutants_are_refused_there_with_why() {
    let e = error(false, "run = \"true\"\nglob = \"t/*.sh\"");
    assert!(
        e.starts_with("mutants.toml:3: suite \"x\": `glob` means nothing in mutants.toml"),
        "{e}"
    );
    assert!(e.contains("run = \"./FILE\""), "{e}");
    let e = error(false, "name = \"y\"\nrun = \"true\"");
    assert!(
        e.starts_with("mutants.toml:2: suite \"x\": `name` means nothing in mutants.toml"),
        "{e}"
    );
    assert!(e.contains("[suites.NAME]"), "{e}");
    // The same keys are gate's own.
    assert_eq!(
        read_as(true, "glob = \"t/*.sh\"").unwrap().command,
        Command::Glob("t/*.sh".into())
    );
}

#[test]
fn inputs_are_globs_of_the_tree_read_by_mutants_and_refused_by_gate() {
    let s = read_as(
        false,
        "run = \"true\"\ninputs = [\"src/**\", \"tests/*.py\"]",
    )
    .unwrap();
    assert_eq!(s.inputs, ["src/**", "tests/*.py"]);
    assert!(read_as(false, "run = \"true\"").unwrap().inputs.is_empty());
    for (bad, why) in [
        ("\"/etc/**\"", "is absolute"),
        ("\"../up/**\"", "climbs"),
        ("\"\"", "is empty"),
        ("\"src/[\"", "is not a glob"),
    ] {
        let e = error(false, &format!("run = \"true\"\ninputs = [{bad}]"));
        assert!(
            e.starts_with("mutants.toml:3: suite \"x\": `inputs`"),
            "{e}"
        );
        assert!(e.contains(why), "{bad}: {e}");
    }
    let e = error(true, "name = \"x\"\nrun = \"true\"\ninputs = [\"src/**\"]");
    assert!(
        e.starts_with("gate.toml:4: `inputs` means nothing in gate.toml"),
        "{e}"
    );
}

#[test]
fn fail_fast_is_on_for_mutants_unless_turned_off_and_refused_by_gate() {
    assert!(read_as(false, "run = \"true\"").unwrap().fail_fast);
    assert!(
        read_as(false, "run = \"true\"\nfail_fast = true")
            .unwrap()
            .fail_fast
    );
    assert!(
        !read_as(false, "run = \"true\"\nfail_fast = false")
            .unwrap()
            .fail_fast
    );
    let e = error(true, "name = \"x\"\nrun = \"true\"\nfail_fast = false");
    assert!(
        e.starts_with("gate.toml:4: `fail_fast` means nothing in gate.toml"),
        "{e}"
    );
    let e = error(false, "run = \"true\"\nfail_fast = \"yes\"");
    assert!(e.starts_with("mutants.toml:3:"), "{e}");
}

#[test]
fn select_is_a_template_read_by_mutants_and_refused_by_gate() {
    let s = read_as(false, "run = \"pytest\"\nselect = \"pytest {tests}\"").unwrap();
    let select = s.select.unwrap();
    assert_eq!(select.items, Items::Tests);
    assert_eq!(select.template, "pytest {tests}");
    assert!(read_as(false, "run = \"true\"").unwrap().select.is_none());
    for (bad, why) in [
        ("node --test", "neither `{files}` nor `{tests}`"),
        ("x {files} {tests}", "both"),
        ("", "is empty"),
    ] {
        let e = error(false, &format!("run = \"true\"\n\nselect = \"{bad}\""));
        assert!(
            e.starts_with("mutants.toml:4: suite \"x\": `select`"),
            "{e}"
        );
        assert!(e.contains(why), "{bad}: {e}");
    }
    let e = error(
        true,
        "name = \"x\"\nrun = \"true\"\nselect = \"node --test {files}\"",
    );
    assert!(
        e.starts_with("gate.toml:4: `select` means nothing in gate.toml"),
        "{e}"
    );
}

#[test]
fn floor_and_watch_are_commands_read_by_mutants_and_refused_by_gate() {
    let s = read_as(
        false,
        "run = \"npx vitest run\"\nfloor = \"npx vitest run -t '^$'\"\nwatch = \"npx vitest --watch\"",
    )
    .unwrap();
    assert_eq!(s.floor.as_deref(), Some("npx vitest run -t '^$'"));
    assert_eq!(s.watch.as_deref(), Some("npx vitest --watch"));
    let plain = read_as(false, "run = \"true\"").unwrap();
    assert_eq!((plain.floor, plain.watch), (None, None));
    for key in ["floor", "watch"] {
        let e = error(false, &format!("run = \"true\"\n{key} = \" \""));
        assert!(
            e.starts_with(&format!("mutants.toml:3: suite \"x\": `{key}` is empty")),
            "{e}"
        );
        let e = error(
            true,
            &format!("name = \"x\"\nrun = \"true\"\n{key} = \"x\""),
        );
        assert!(
            e.starts_with(&format!("gate.toml:4: `{key}` means nothing in gate.toml")),
            "{e}"
        );
    }
}

#[test]
fn every_refusal_names_its_line_in_either_file() {
    for gate in [true, false] {
        let name = if gate { "name = \"x\"\n" } else { "" };
        let at = |keys: &str| error(gate, &format!("{name}{keys}"));
        let line = |n: usize| {
            let file = if gate { "gate.toml" } else { "mutants.toml" };
            format!("{file}:{}:", n + usize::from(gate))
        };
        let e = at("run = \"true\"\nbuild_timeout = \"5m\"");
        assert!(e.starts_with(&line(3)), "{e}");
        assert!(e.contains("build_timeout without a `build` step"), "{e}");
        let e = at("run = \"true\"\nbuild = \"ma\\u0000ke\"");
        assert!(
            e.starts_with(&line(3)) && e.contains("`build` holds a NUL"),
            "{e}"
        );
        let e = at("run = \"true\"\nbuild = \"make\"\nbuild_timeout = \"5 minutes\"");
        assert!(
            e.starts_with(&line(4)) && e.contains("build_timeout:"),
            "{e}"
        );
        let e = at("run = \"  \"");
        assert!(
            e.starts_with(&line(2)) && e.contains("`run` is empty"),
            "{e}"
        );
        let e = at("run = \"true\"\ntmeout = \"5m\"");
        assert!(
            e.starts_with(&line(3)) && e.contains("unknown field `tmeout`"),
            "{e}"
        );
    }
    let e = error(false, "timeout = \"5m\"");
    assert!(e.contains("suite \"x\": no `run`"), "{e}");
}

#[test]
fn an_empty_build_is_no_build_step() {
    let s = read_as(false, "run = \"true\"\nbuild = \" \"").unwrap();
    assert_eq!(s.build, None);
}

mod running {
    use super::super::run::*;
    use super::*;
    use report::{Outcome, RunRecord};
    use std::io;

    fn job(run: &str, build: Option<&str>, build_timeout: Duration) -> SuiteJob {
        SuiteJob {
            run: run.into(),
            build: build.map(String::from),
            env: BTreeMap::from([("OWN".to_string(), "own".to_string())]),
            results: Source::Log,
            timeouts: Timeouts {
                run: Duration::from_secs(60),
                build: build_timeout,
            },
            echo: false,
        }
    }

    fn ran(j: &SuiteJob) -> (tempfile::TempDir, Ran) {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("01-s.log");
        let ran = run_suite(j, dir.path(), &log, &Alone).unwrap();
        (dir, ran)
    }

    #[test]
    fn a_passing_build_runs_the_suite_after_it() {
        let (dir, ran) = ran(&job(
            "test -f built && echo \"run $OWN\"",
            Some("touch built && echo building"),
            Duration::from_secs(60),
        ));
        assert_eq!(ran.record.outcome(), Outcome::Passed, "{:?}", ran.record);
        let built = ran.build.unwrap();
        assert_eq!(built.failed, None);
        assert_eq!(built.log, dir.path().join("01-s.build.log"));
        let build_log = std::fs::read_to_string(&built.log).unwrap();
        assert_eq!(build_log, "building\n");
        assert_eq!(ran.record.run.log, dir.path().join("01-s.log"));
        assert_eq!(
            std::fs::read_to_string(&ran.record.run.log).unwrap(),
            "run own\n"
        );
    }

    #[test]
    fn a_failed_build_is_the_suites_record_and_the_suite_never_runs() {
        let (dir, ran) = ran(&job("touch ran", Some("exit 3"), Duration::from_secs(60)));
        assert!(!dir.path().join("ran").exists());
        assert_eq!(ran.record.outcome(), Outcome::CouldNotStart);
        assert_eq!(
            ran.record.run.ended.could_not_start(),
            Some("build failed (exit 3)")
        );
        assert_eq!(ran.record.run.log, dir.path().join("01-s.build.log"));
        assert!(ran.build_failed());
        assert_eq!(
            ran.build.unwrap().failed.as_deref(),
            Some("build failed (exit 3)")
        );
    }

    #[test]
    fn a_hung_build_is_timed_out_and_never_a_hang_of_the_suite() {
        let (dir, ran) = ran(&job(
            "touch ran",
            Some("sleep 30"),
            Duration::from_millis(300),
        ));
        assert!(!dir.path().join("ran").exists());
        assert_eq!(ran.record.outcome(), Outcome::CouldNotStart);
        let why = ran.record.run.ended.could_not_start().unwrap();
        assert!(why.starts_with("build timed out after"), "{why}");
        assert!(ran.build_failed());
        assert!(ran.build.unwrap().secs < 10.0);
    }

    #[test]
    fn each_run_gets_its_own_scratch_tmpdir_and_fresh_pytest_cache() {
        let (dir, ran) = ran(&job(
            "echo \"$TMPDIR\" > tmp.txt; echo \"$PYTEST_ADDOPTS\" > addopts.txt",
            None,
            Duration::from_secs(1),
        ));
        assert_eq!(ran.record.outcome(), Outcome::Passed);
        assert!(ran.build.is_none());
        let tmp = std::fs::read_to_string(dir.path().join("tmp.txt")).unwrap();
        let tmp = tmp.trim();
        assert!(!tmp.is_empty() && tmp != std::env::temp_dir().to_str().unwrap());
        // Removed afterwards.
        assert!(!Path::new(tmp).exists(), "{tmp}");
        let addopts = std::fs::read_to_string(dir.path().join("addopts.txt")).unwrap();
        assert!(
            addopts
                .trim_end()
                .ends_with(&format!("-o 'cache_dir={tmp}/pytest-cache'")),
            "{addopts}"
        );
    }

    #[test]
    fn the_suites_env_is_over_the_files() {
        let suite = Suite {
            name: "s".into(),
            command: Command::Run("true".into()),
            build: None,
            timeout: None,
            build_timeout: None,
            env: BTreeMap::from([("A".to_string(), "own".to_string())]),
            results: Source::Log,
            inputs: Vec::new(),
            fail_fast: false,
            select: None,
            floor: None,
            watch: None,
        };
        let file = BTreeMap::from([
            ("A".to_string(), "file".to_string()),
            ("B".to_string(), "file".to_string()),
        ]);
        let t = Timeouts {
            run: Duration::from_secs(1),
            build: Duration::from_secs(1),
        };
        let j = SuiteJob::of(&suite, "true", &file, t);
        assert_eq!(j.env["A"], "own");
        assert_eq!(j.env["B"], "file");
    }

    /// A share that refuses every build its turn, as an interrupt during the wait does.
    struct NoTurn;
    impl Share for NoTurn {
        fn build_turn(
            &self,
            _: &str,
            _: &mut dyn FnMut() -> io::Result<RunRecord>,
        ) -> Option<io::Result<RunRecord>> {
            None
        }
    }

    #[test]
    fn a_build_whose_turn_never_came_is_interrupted_and_nothing_runs() {
        let dir = tempfile::tempdir().unwrap();
        let j = job("touch ran", Some("touch built"), Duration::from_secs(5));
        let ran = run_suite(&j, dir.path(), &dir.path().join("l.log"), &NoTurn).unwrap();
        assert_eq!(ran.record.outcome(), Outcome::Interrupted);
        assert!(ran.build.is_none());
        assert!(!dir.path().join("built").exists() && !dir.path().join("ran").exists());
    }
}
