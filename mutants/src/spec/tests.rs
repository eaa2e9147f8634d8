//! The spec reader's tests: valid specs, every refusal at its line, and fuzzed input.

use super::*;
use proptest::strategy::Strategy as _;

fn parse(text: &str) -> Result<Spec, SpecError> {
    Spec::parse(text, Path::new("mutants.toml"))
}

const SUITE: &str = "[suites.bus]\nrun = \"true\"\n\n";

#[test]
fn a_full_spec_parses_with_defaults() {
    let spec = parse(&format!(
        "{SUITE}[suites.old]\nrun = \"true\"\ntimeout = \"30s\"\n\n[[mutant]]\nname = \"a\"\nsite = \"broker\"\nfile = \"./src/x.js\"\nanchor = \"ref > after\"\nreplace = \"ref >= after\"\nundoes = \"the page starts past after\"\nsuite = \"bus\"\nalso = [\"old\"]\n\n[[mutant]]\nname = \"b\"\nfile = \"README.md\"\nanchor = \"a:\"\nreplace = \"a;\"\nsuite = \"bus\"\nexpect = \"survive\"\n"
    ))
    .unwrap();
    assert_eq!(spec.mutants.len(), 2);
    let a = &spec.mutants[0];
    assert_eq!(a.file, "src/x.js");
    assert_eq!(a.also, vec!["old"]);
    assert_eq!(a.line, 8);
    assert_eq!(a.expect, Expect::Kill);
    assert!(spec.mutants[1].is_control());
    assert_eq!(spec.suites["old"].timeout, Some(Duration::from_secs(30)));
    assert_eq!(spec.suites["bus"].timeout, None);
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

const FULL: &str = "[suites.bus]\nrun = \"true\"\nbuild = \"true\"\ntimeout = \"30s\"\nenv = { A = \"1\" }\n\n[[mutant]]\nname = \"a\"\nsite = \"broker\"\nfile = \"src/x.js\"\nanchor = \"ref > after\"\nreplace = \"ref >= after\"\nundoes = \"the page starts past after\"\nsuite = \"bus\"\n";

/// A parse error names a line that exists (or the empty one after the last newline, where
/// an unclosed table is found at the end of the file), on one line of text.
fn check_error(text: &str, e: &SpecError) -> Result<(), proptest::test_runner::TestCaseError> {
    if let Some(line) = e.line {
        proptest::prop_assert!(line >= 1 && line <= text.lines().count() + 1, "{e}");
    }
    proptest::prop_assert!(!e.to_string().contains('\n'), "{e:?}");
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    // Fuzzing the spec reader (outside input): random text never panics.
    #[test]
    fn any_text_is_a_spec_or_a_located_error(text in "\\PC{0,400}") {
        if let Err(e) = parse(&text) {
            check_error(&text, &e)?;
        }
    }

    // A valid spec damaged at one place: a byte replaced, a line cut short, a value swapped
    // for an absurd one; never a panic, and every error names a line of the file.
    #[test]
    fn a_damaged_spec_is_read_or_refused_at_a_line(
        at in 0usize..400,
        byte in proptest::prelude::any::<u8>(),
        value in proptest::prop_oneof![
            proptest::prelude::Just("\"99999999999999999999d\"".to_string()),
            proptest::prelude::Just("\"\\u0000\"".to_string()),
            proptest::prelude::Just("[]".to_string()),
            proptest::prelude::Just("{}".to_string()),
            proptest::prelude::Just("-1".to_string()),
            "\\PC{0,20}".prop_map(|s| format!("{s:?}")),
        ],
    ) {
        let mut bytes = FULL.as_bytes().to_vec();
        let i = at % bytes.len();
        bytes[i] = byte;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Err(e) = parse(&text) {
            check_error(&text, &e)?;
        }
        let cut = &FULL[..FULL.char_indices().nth(at % FULL.len()).map_or(0, |(i, _)| i)];
        if let Err(e) = parse(cut) {
            check_error(cut, &e)?;
        }
        for key in ["timeout", "anchor", "file", "env", "suite", "run"] {
            let swapped: String = FULL
                .lines()
                .map(|l| if l.starts_with(&format!("{key} =")) { format!("{key} = {value}") } else { l.to_string() })
                .collect::<Vec<_>>()
                .join("\n");
            if let Err(e) = parse(&swapped) {
                check_error(&swapped, &e)?;
            }
        }
    }
}

#[test]
fn unknown_keys_name_their_line() {
    let e = error(&format!(
        "{SUITE}[[mutant]]\nname = \"a\"\nfile = \"x\"\nanchor = \"q\"\nreplace = \"r\"\nsuite = \"bus\"\nsuit = \"bus\"\n"
    ));
    assert!(
        e.starts_with("mutants.toml:10: unknown field `suit`"),
        "{e}"
    );
}

#[test]
fn missing_fields_name_the_mutant() {
    let e = error(&format!("{SUITE}[[mutant]]\nname = \"a\"\nfile = \"x\"\n"));
    assert!(e.starts_with("mutants.toml:4: missing field"), "{e}");
}

#[test]
fn a_suites_junit_report_is_a_path_in_the_checkout_and_tap_its_alternative() {
    use report::results::Source;
    let with = |keys: &str| {
        format!("[suites.bus]\nrun = \"true\"\n{keys}\n\n[[mutant]]\nname = \"a\"\nfile = \"x\"\nanchor = \"q\"\nreplace = \"r\"\nsuite = \"bus\"\n")
    };
    let spec = parse(&with("junit = \"reports/junit.xml\"")).unwrap();
    assert_eq!(
        spec.suites["bus"].results,
        Source::Junit("reports/junit.xml".into())
    );
    assert_eq!(
        parse(&with("tap = true")).unwrap().suites["bus"].results,
        Source::Tap
    );
    assert_eq!(parse(&with("")).unwrap().suites["bus"].results, Source::Log);
    assert!(
        error(&with("junit = \"/abs/j.xml\""))
            .starts_with("mutants.toml:3: suite \"bus\": `junit` \"/abs/j.xml\" is absolute"),
        "{}",
        error(&with("junit = \"/abs/j.xml\""))
    );
    assert!(error(&with("junit = \"a/../j.xml\""))
        .starts_with("mutants.toml:3: suite \"bus\": `junit`"));
    assert_eq!(
        error(&with("junit = \"j.xml\"\ntap = true")),
        "mutants.toml:4: suite \"bus\": a suite reads `junit` or `tap`, not both"
    );
}

#[test]
fn unknown_suites_duplicates_and_files_outside_are_refused_at_their_line() {
    let m = |extra: &str, file: &str, suite: &str| {
        format!("{SUITE}[[mutant]]\nname = \"a\"\nfile = \"{file}\"\nanchor = \"q\"\nreplace = \"r\"\nsuite = \"{suite}\"\n{extra}")
    };
    let e = error(&m("", "x", "nope"));
    assert!(
        e.starts_with("mutants.toml:9: unknown suite \"nope\""),
        "{e}"
    );
    let e = error(&m("", "../x", "bus"));
    assert!(
        e.starts_with("mutants.toml:6: file \"../x\" is outside the tree"),
        "{e}"
    );
    let e = error(&m("", "/etc/passwd", "bus"));
    assert!(
        e.contains(":6: file \"/etc/passwd\" is outside the tree"),
        "{e}"
    );
    let twice = format!(
        "{}\n{}",
        m("", "x", "bus"),
        m("", "y", "bus").replace(SUITE, "")
    );
    let e = error(&twice);
    assert!(
        e.starts_with("mutants.toml:12: two mutants are named \"a\""),
        "{e}"
    );
    let e = error(&m("expect = \"maybe\"\n", "x", "bus"));
    assert!(e.starts_with("mutants.toml:10: expect must be"), "{e}");
    let e = error(&format!(
        "{SUITE}[suites.t]\nrun = \"x\"\ntimeout = \"5\"\n"
    ));
    assert!(
        e.starts_with("mutants.toml:6: suite \"t\": timeout: bad duration"),
        "{e}"
    );
    let e = error("[suites.bus\n");
    assert!(e.starts_with("mutants.toml:1:"), "{e}");
}

#[test]
fn durations_are_bounded_and_env_entries_must_fit_execve() {
    assert_eq!(check_duration("30d"), Ok(report::duration::MAX));
    assert!(check_duration("30d1s").unwrap_err().contains("30 days"));
    assert!(check_duration("0s").unwrap_err().contains("zero"));
    assert!(check_duration("99999999999999999999999999d").is_err());
    // Keys and values as TOML writes them (`\u0000` is a NUL).
    let env = |entry: &str| {
        error(&format!(
            "{SUITE}[suites.e]\nrun = \"x\"\nenv = {{ {entry} }}\n"
        ))
    };
    // A good entry passes, and the spec is refused only later, for having no mutant.
    assert!(env(r#"A = "x y=z""#).contains("no [[mutant]] entries"));
    let e = env(r#"A = "x\u0000y""#);
    assert!(
        e.starts_with("mutants.toml:6: suite \"e\": env A: the value holds a NUL byte"),
        "{e}"
    );
    assert!(env(r#""A\u0000" = "x""#).contains("the name holds a NUL byte"));
    assert!(env(r#""A=B" = "x""#).contains("the name holds `=`"));
    assert!(env(r#""" = "x""#).contains("the name is empty"));
}

#[test]
fn a_replace_equal_to_its_anchor_and_nul_bytes_are_refused() {
    let e = error(&format!(
        "{SUITE}[[mutant]]\nname = \"a\"\nfile = \"x\"\nanchor = \"q\"\nreplace = \"q\"\nsuite = \"bus\"\n"
    ));
    assert!(
        e.starts_with("mutants.toml:8: mutant \"a\": `replace` equals"),
        "{e}"
    );
    let e = error("[suites.bus]\nrun = \"a\\u0000b\"\n");
    assert!(
        e.starts_with("mutants.toml:2: suite \"bus\": `run` holds a NUL"),
        "{e}"
    );
    let e = error(&format!(
        "{SUITE}[[mutant]]\nname = \"a\"\nfile = \"x\\u0000\"\nanchor = \"q\"\nreplace = \"r\"\nsuite = \"bus\"\n"
    ));
    assert!(e.contains(":6: file") && e.contains("NUL"), "{e}");
}

#[test]
fn an_operator_marks_a_generated_mutant_and_an_unknown_one_is_refused_at_its_line() {
    let m = |operator: &str| {
        format!("{SUITE}[[mutant]]\nname = \"a\"\nfile = \"x\"\nanchor = \"q\"\nreplace = \"r\"\nundoes = \"TODO: the claim this mutant undoes\"\nsuite = \"bus\"\n{operator}")
    };
    let spec = parse(&m("operator = \"return-value\"\n")).unwrap();
    assert_eq!(spec.mutants[0].operator.as_deref(), Some("return-value"));
    assert!(!spec.mutants[0].claim_named());
    assert_eq!(spec.mutants[0].context, None);
    assert_eq!(parse(&m("")).unwrap().mutants[0].operator, None);
    let e = error(&m("operator = \"off-by-one\"\n"));
    assert!(
        e.starts_with("mutants.toml:11: unknown operator `off-by-one` (known: boundary,"),
        "{e}"
    );
    assert!(error(&m("operator = 3\n")).starts_with("mutants.toml:11:"));
}
