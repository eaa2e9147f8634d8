use std::path::Path;

use syntax::{Language, Proposals, Scope, Skip};

use super::changes::Shown;
use super::output::{comments, JsonOut, SpecOut};
use super::suites::{Chosen, SuiteTable};
use super::*;

fn changed(path: &str, bytes: &[u8]) -> Changed {
    Changed {
        path: path.to_string(),
        content: Ok(bytes.to_vec()),
        scope: Scope::Whole,
        shown: Shown::Whole,
    }
}

fn proposal(line: usize, anchor: &str, replace: &str, operator: Operator) -> Proposal {
    Proposal {
        line,
        site: Some("f".into()),
        anchor: anchor.into(),
        replace: replace.into(),
        operator,
        description: format!("replace {anchor} with {replace}"),
    }
}

fn proposed(mutants: Vec<Proposal>, control: Option<Proposal>, dropped: usize) -> Option<Outcome> {
    Some(Outcome::Proposed(Proposals {
        language: Language::Rust,
        mutants,
        control,
        dropped,
    }))
}

fn suite(run: &str) -> Chosen {
    Chosen {
        name: "unit".into(),
        table: SuiteTable {
            run: run.into(),
            ..SuiteTable::default()
        },
        from: "a test".into(),
        file: None,
        placeholder: false,
        left_out: None,
    }
}

fn suggestion(outcomes: Vec<(Changed, Option<Outcome>)>) -> Suggestion {
    let (entries, files) = assemble(outcomes);
    Suggestion {
        not_holding: None,
        entries,
        files,
        suite: suite("true"),
        inputs: Vec::new(),
        about: "a test".into(),
        repo: Git::at(Path::new(".")),
    }
}

#[test]
fn names_are_unique_anchors_found_once_and_a_control_only_beside_mutants() {
    let text = b"if a < b { a < b }\nlet x = 1;\n// note\n";
    let control = proposal(3, "// note", "// note (unchanged)", Operator::Control);
    let s = suggestion(vec![
        (
            changed("src/a.rs", text),
            proposed(
                vec![
                    // Twice in the file: dropped and counted, never written.
                    proposal(1, "a < b", "a <= b", Operator::Boundary),
                    proposal(2, "let x = 1;", "let x = 2;", Operator::Constant),
                    proposal(2, "let x = 1;", "let x = 2;", Operator::Constant),
                    proposal(2, "x = 1", "x = 1", Operator::Constant),
                ],
                Some(control.clone()),
                1,
            ),
        ),
        (
            changed("src/b.rs", b"// note\n"),
            proposed(Vec::new(), Some(control), 0),
        ),
        (
            changed("tests/t.rs", b"x"),
            Some(Outcome::Skipped(Skip::TestCode)),
        ),
    ]);
    let names: Vec<&str> = s.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "src/a.rs:2: replace let x = 1; with let x = 2;",
            "src/a.rs:2: replace let x = 1; with let x = 2; #2",
            "src/a.rs:3: control: replace // note with // note (unchanged)",
        ]
    );
    assert!(s.entries[2].control);
    assert_eq!((s.mutants(), s.controls()), (2, 1));
    assert_eq!(s.files[0].dropped, 3);
    assert_eq!(s.files[0].proposed, 2);
    // src/b.rs has no mutant: no control either.
    assert_eq!(s.files[1].proposed, 0);
    assert_eq!(s.files[2].skipped.as_deref(), Some("test code"));
    assert_eq!(s.files[2].language, Some(Language::Rust));
    let json = serde_json::to_value(JsonOut::of(&s)).unwrap();
    assert_eq!(
        json["counts"],
        serde_json::json!({"files": 3, "proposed": 2, "controls": 1, "dropped": 3, "skipped": 1})
    );
    assert_eq!(json["mutants"][2]["expect"], "survive");
    assert_eq!(json["mutants"][0]["operator"], "constant");
    assert_eq!(json["files"][2]["skipped"], "test code");
    assert_eq!(json["suites"]["unit"]["run"], "true");
}

#[test]
fn a_file_not_read_is_skipped_with_its_reason_and_the_spec_comments_name_it() {
    let mut bin = changed("b.rs", b"");
    bin.content = Err("binary".into());
    let s = suggestion(vec![
        (bin, None),
        (
            changed("a\nname.rs", b"a < b"),
            proposed(
                vec![proposal(1, "a < b", "a <= b", Operator::Boundary)],
                None,
                0,
            ),
        ),
    ]);
    assert_eq!(s.files[0].skipped.as_deref(), Some("binary"));
    // A name holding a newline stays one line, in the entry's name and in the comments.
    assert_eq!(
        s.entries[0].name,
        "a\\nname.rs:1: replace a < b with a <= b"
    );
    let text = SpecOut::of(&s)
        .to_toml(&comments(&s, Some("s.toml")))
        .unwrap();
    assert!(text.contains("\n# Skipped b.rs: binary\n"), "{text}");
    let spec = crate::spec::Spec::parse(&text, Path::new("s.toml")).unwrap();
    assert_eq!(spec.mutants[0].file, "a\nname.rs");
    assert_eq!(spec.mutants[0].operator.as_deref(), Some("boundary"));
}

#[test]
fn the_placeholder_suite_is_written_and_refused_by_the_spec_reader_where_it_says_todo() {
    let mut s = suggestion(vec![(
        changed("a.rs", b"a < b"),
        proposed(
            vec![proposal(1, "a < b", "a <= b", Operator::Boundary)],
            None,
            0,
        ),
    )]);
    s.suite = suites::choose(suites::Found::default(), None).unwrap();
    let text = SpecOut::of(&s).to_toml(&comments(&s, None)).unwrap();
    let e = crate::spec::Spec::parse(&text, Path::new("s.toml"))
        .unwrap_err()
        .to_string();
    let line = text
        .lines()
        .position(|l| l.starts_with("run = \"TODO:"))
        .unwrap()
        + 1;
    assert!(
        e.starts_with(&format!("s.toml:{line}: suite \"tests\"")),
        "{e}"
    );
    assert!(e.contains("TODO"), "{e}");
}

/// Text a proposal may hold: what breaks hand-written TOML (quotes, backslashes, `'''`,
/// `"""`, newlines and other controls, a comment sign, non-ASCII), in any mix.
fn hostile() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    proptest::collection::vec(
        prop_oneof![
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("'''".to_string()),
            Just("\"\"\"".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("#".to_string()),
            Just("\t".to_string()),
            Just("\u{0}".to_string()),
            Just("\u{1b}[31m".to_string()),
            Just("\u{7f}".to_string()),
            Just("é€😀\u{202e}".to_string()),
            "[a-z <>=!&|]{1,4}",
        ],
        1..8,
    )
    .prop_map(|parts| parts.concat())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    // Whatever an anchor, a replacement, a site or a file name holds, the spec written reads
    // back through the tools' own spec reader as exactly what was proposed.
    #[test]
    fn hostile_proposals_round_trip_through_the_spec_reader(
        anchor in hostile(),
        replace in hostile(),
        site in hostile(),
        name in hostile(),
    ) {
        proptest::prop_assume!(anchor != replace);
        let file = format!("src/{}.rs", name.replace(['\0', '/', '\\', '\n', '\r'], "_"));
        let file = file.trim().to_string();
        let mut p = proposal(1, &anchor, &replace, Operator::String);
        p.site = Some(site.clone());
        let s = suggestion(vec![(changed(&file, anchor.as_bytes()), proposed(vec![p], None, 0))]);
        proptest::prop_assert_eq!(s.entries.len(), 1);
        let text = SpecOut::of(&s).to_toml(&comments(&s, Some(&name))).unwrap();
        let spec = crate::spec::Spec::parse(&text, Path::new("s.toml"))
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}\n{text}")))?;
        let m = &spec.mutants[0];
        proptest::prop_assert_eq!(&m.anchor, &anchor);
        proptest::prop_assert_eq!(&m.replace, &replace);
        proptest::prop_assert_eq!(&m.name, &s.entries[0].name);
        proptest::prop_assert_eq!(m.site.as_deref(), Some(site.as_str()).filter(|s| !s.trim().is_empty()));
        proptest::prop_assert_eq!(&m.file, &file);
        proptest::prop_assert!(!m.claim_named());
    }
}
