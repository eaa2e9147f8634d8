//! gate.toml's reading: paths, keys, durations, overrides and the suite keys, each refused at
//! its line when wrong.

use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("cand/gate.toml"))
}

#[test]
fn a_suites_junit_report_is_a_path_in_the_checkout_and_tap_its_alternative() {
    use report::results::Source;
    let with = |keys: &str| {
        format!("base=\"a\"\npatch=\"p\"\nmanifest=\"m\"\n[[suite]]\nname=\"x\"\nrun=\"true\"\n{keys}\n")
    };
    let results = |keys: &str| parse(&with(keys)).unwrap().suites[0].results.clone();
    assert_eq!(
        results("junit = \"./reports/junit.xml\""),
        Source::Junit("reports/junit.xml".into())
    );
    assert_eq!(results("tap = true"), Source::Tap);
    assert_eq!(results("tap = false"), Source::Log);
    assert_eq!(results(""), Source::Log);
    let e = |keys: &str| parse(&with(keys)).unwrap_err().to_string();
    assert_eq!(
        e("junit = \"/tmp/junit.xml\""),
        "cand/gate.toml:7: `junit` \"/tmp/junit.xml\" is absolute (write it relative to the tree's root)"
    );
    assert!(
        e("junit = \"../junit.xml\"")
            .starts_with("cand/gate.toml:7: `junit` \"../junit.xml\" climbs"),
        "{}",
        e("junit = \"../junit.xml\"")
    );
    assert_eq!(
        e("junit = \"j.xml\"\ntap = true"),
        "cand/gate.toml:8: a suite reads `junit` or `tap`, not both"
    );
    assert!(e("tap = \"yes\"").starts_with("cand/gate.toml:7:"));
}

const GOOD: &str = r#"
base = "a3f6e9e6"
patch = "build.patch"
manifest = "candidate-manifest.sha256"

[env]
DOCKER_HOST = "unix:///nonexistent"

[[suite]]
name = "bus"
run = "node --test packages/bus/tests"
timeout = "15m"

[[suite]]
glob = "scripts/test-*.sh"
"#;

#[test]
fn a_good_file_resolves_paths_against_its_folder() {
    let c = parse(GOOD).unwrap();
    assert_eq!(c.base, "a3f6e9e6");
    assert_eq!(c.head, "HEAD");
    assert_eq!(c.patch, Path::new("cand/build.patch"));
    assert_eq!(c.suites.len(), 2);
    assert_eq!(c.suites[0].timeout, Some(Duration::from_secs(900)));
    assert_eq!(c.suites[1].timeout, None);
    assert_eq!(
        c.suites[1].command,
        crate::suite::Command::Glob("scripts/test-*.sh".into())
    );
    assert_eq!(c.env["DOCKER_HOST"], "unix:///nonexistent");
}

#[test]
fn an_unknown_key_names_its_line() {
    let bad = GOOD.replace("timeout = \"15m\"", "tmeout = \"15m\"");
    let e = parse(&bad).unwrap_err();
    assert_eq!(e.line, Some(12), "{e}");
    assert!(
        e.to_string()
            .starts_with("cand/gate.toml:12: unknown field `tmeout`"),
        "{e}"
    );
}

#[test]
fn a_bad_duration_names_its_line() {
    let bad = GOOD.replace("\"15m\"", "\"15 minutes\"");
    let e = parse(&bad).unwrap_err();
    assert_eq!(e.line, Some(12), "{e}");
    assert!(e.message.contains("15 minutes"), "{e}");
}

#[test]
fn missing_and_duplicate_fields_are_errors() {
    assert!(parse("patch = \"p\"\nmanifest = \"m\"\n")
        .unwrap_err()
        .message
        .contains("pass --base"));
    let dup = format!("{GOOD}\n[[suite]]\nname = \"bus\"\nrun = \"true\"\n");
    assert!(parse(&dup).unwrap_err().message.contains("two suites"));
    let neither = "base=\"a\"\npatch=\"p\"\nmanifest=\"m\"\n[[suite]]\nname=\"x\"\n";
    assert!(parse(neither).unwrap_err().message.contains("neither"));
}

#[test]
fn a_file_of_suites_only_is_completed_by_the_command_line() {
    let suites = "[[suite]]\nname = \"unit\"\nrun = \"true\"\n";
    let all = Overrides {
        base: Some("main".into()),
        patch: Some("/c/build.patch".into()),
        manifest: Some("m.sha256".into()),
    };
    let c = Config::parse_with(suites, Path::new("cand/gate.toml"), &all).unwrap();
    assert_eq!(c.base, "main");
    assert_eq!(c.patch, Path::new("/c/build.patch"));
    assert_eq!(c.manifest, Path::new("m.sha256"));
    assert_eq!(c.suites.len(), 1);
    // Each field missing from both places is one error naming its flag.
    for (key, flag, overrides) in [
        (
            "base",
            "--base REV",
            Overrides {
                base: None,
                ..all.clone()
            },
        ),
        (
            "patch",
            "--patch FILE",
            Overrides {
                patch: None,
                ..all.clone()
            },
        ),
        (
            "manifest",
            "--manifest FILE",
            Overrides {
                manifest: None,
                ..all.clone()
            },
        ),
    ] {
        let e = Config::parse_with(suites, Path::new("cand/gate.toml"), &overrides).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "cand/gate.toml: no `{key}`: set `{key}` in this file or pass {flag} on \
                 the command line"
            )
        );
    }
    // A field the file holds is still checked when the command line replaces it.
    let e =
        Config::parse_with(&format!("base = \"\"\n{suites}"), Path::new("g"), &all).unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
}

#[test]
fn nul_bytes_and_bad_env_names_name_their_line() {
    let nul = GOOD.replace("unix:///nonexistent", "unix:///x\\u0000y");
    let e = parse(&nul).unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert!(e.message.contains("NUL"), "{e}");
    let in_suite = format!("{GOOD}env = {{ A = \"a\\u0000\" }}\n");
    let e = parse(&in_suite).unwrap_err();
    assert_eq!(e.line, Some(16), "{e}");
    assert!(e.message.contains("NUL"), "{e}");
    let eq = GOOD.replace("DOCKER_HOST =", "\"A=B\" =");
    let e = parse(&eq).unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert!(e.message.contains("the name holds `=`"), "{e}");
    let run = GOOD.replace("node --test", "node\\u0000--test");
    assert!(parse(&run).unwrap_err().message.contains("NUL"));
}

#[test]
fn timeouts_are_bounded_and_never_overflow() {
    assert_eq!(report::duration::timeout("30d").unwrap(), MAX_TIMEOUT);
    for bad in [
        "31d",
        "0s",
        "18446744073709551615s",
        "99999999999d 99999999999d 99999999999d 99999999999d",
        "1e9s",
    ] {
        assert!(report::duration::timeout(bad).is_err(), "{bad}");
    }
    let bad = GOOD.replace("\"15m\"", "\"9999d\"");
    let e = parse(&bad).unwrap_err();
    assert_eq!(e.line, Some(12), "{e}");
    assert!(e.message.contains("30 days"), "{e}");
}

#[test]
fn the_patch_and_manifest_may_be_anywhere_and_the_command_line_wins() {
    // They are only read: absolute, climbing out with `..`, or a link out are all fine.
    for path in ["../build.patch", "sub/../../x", "/tmp/build.patch"] {
        let c = parse(&GOOD.replace("\"build.patch\"", &format!("{path:?}"))).unwrap();
        assert_eq!(c.patch, Path::new("cand").join(path), "{path}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("gate.toml");
    std::fs::write(&toml, GOOD).unwrap();
    let c = Config::load_with(
        &toml,
        &Overrides {
            base: Some("v2".into()),
            patch: Some("/elsewhere/p.patch".into()),
            manifest: None,
        },
    )
    .unwrap();
    assert_eq!(c.base, "v2");
    assert_eq!(c.patch, Path::new("/elsewhere/p.patch"));
    assert_eq!(c.manifest, tmp.path().join("candidate-manifest.sha256"));
    // A glob matches files of the candidate's tree, so it stays inside it.
    for glob in ["../scripts/*.sh", "/tmp/*.sh"] {
        let bad = GOOD.replace("\"scripts/test-*.sh\"", &format!("{glob:?}"));
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, Some(15), "{e}");
        assert!(e.message.starts_with("`glob`"), "{e}");
    }
}

#[test]
fn a_file_without_suites_is_refused_by_require_suites() {
    let c = parse("base = \"a\"\npatch = \"p\"\nmanifest = \"m\"\n").unwrap();
    let e = c.require_suites().unwrap_err();
    assert!(
        e.to_string().starts_with("cand/gate.toml: no [[suite]]"),
        "{e}"
    );
    parse(GOOD).unwrap().require_suites().unwrap();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    #[test]
    fn any_text_is_a_config_or_an_error_never_a_panic(text in "\\PC*") {
        let _ = parse(&text);
    }

    #[test]
    fn any_edit_of_a_good_file_is_a_config_or_an_error(
        at in 0usize..400,
        insert in "[\\x00-\\x7f\u{1b}\u{202e}]{0,12}",
    ) {
        let mut text = GOOD.to_string();
        let at = text.char_indices().map(|(i, _)| i).nth(at % text.chars().count()).unwrap();
        text.insert_str(at, &insert);
        if let Err(e) = parse(&text) {
            proptest::prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn any_timeout_text_is_a_bounded_duration_or_an_error(t in "[0-9.smhd ]{0,80}") {
        if let Ok(d) = report::duration::timeout(&t) {
            proptest::prop_assert!(!d.is_zero() && d <= MAX_TIMEOUT);
        }
    }
}
