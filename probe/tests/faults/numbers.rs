//! Every number from the command line is bounded before use: one line naming it, exit 2.

use super::*;

// ---- numbers from the command line -------------------------------------------------------

#[test]
fn every_bad_number_is_refused_with_one_line_naming_it_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_s = out.display().to_string();
    let many: String = (1..=1001)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let b = |extra: &[&str]| -> Vec<String> {
        let mut v = vec!["bracket", "--client", "true", "--out", &out_s];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect()
    };
    let c = |extra: &[&str]| -> Vec<String> {
        let mut v = vec![
            "check", "--client", "true", "--out", &out_s, "--expect", "100",
        ];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect()
    };
    let o = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (o(&["call", "--n", "10000001", "--", "true"]), "10000001"),
        (
            o(&["call", "--n", "99999999999999999999999", "--", "true"]),
            "99999999999999999999999",
        ),
        (o(&["call", "--n", "1e3", "--", "true"]), "1e3"),
        (o(&["call", "--n=-5", "--", "true"]), "-5"),
        (
            o(&["call", "--cap", "18446744073709551616", "--", "true"]),
            "18446744073709551616",
        ),
        (o(&["call", "--timeout", "31d", "--", "true"]), "31d"),
        (
            o(&["call", "--timeout", "18446744073709551615s", "--", "true"]),
            "18446744073709551615s",
        ),
        (o(&["call", "--timeout", "0s", "--", "true"]), "0s"),
        (
            o(&["test-client", "--mcp-config", "x", "--n", "10000001"]),
            "10000001",
        ),
        (
            o(&["test-client", "--mcp-config", "x", "--n", "1", "--limit=-1"]),
            "-1",
        ),
        (o(&["model", "--port", "65536"]), "65536"),
        (
            o(&["model", "--count-tokens", "18446744073709551616"]),
            "18446744073709551616",
        ),
        (o(&["model", "--input-tokens=-1"]), "-1"),
        (
            o(&["model", "--output-tokens", "18446744073709551616"]),
            "18446744073709551616",
        ),
        (b(&["--around", "5", "--step", "0"]), "0"),
        (b(&["--around", "5", "--step", "10"]), "5-10"),
        (b(&["--around", "9999999", "--step", "10"]), "9999999+10"),
        (
            b(&["--around", "18446744073709551615", "--step", "1"]),
            "18446744073709551615",
        ),
        (b(&["--around=-5", "--step", "1"]), "-5"),
        (b(&["--points", "1,20000000"]), "20000000"),
        (b(&["--points", "1,,2"]), "1,,2"),
        (b(&["--points", &many]), "1001 points"),
        (b(&["--bisect", "9..3"]), "9..3"),
        (b(&["--bisect", "3..3"]), "3..3"),
        (
            b(&["--bisect", "0..18446744073709551616"]),
            "18446744073709551616",
        ),
        (b(&["--points", "1", "--timeout", "99999d"]), "99999d"),
        (
            b(&["--points", "1", "--count-tokens", "99999999999999999999"]),
            "99999999999999999999",
        ),
        (c(&["--margin", "100%"]), "100%"),
        (c(&["--margin", "150"]), "150"),
        (c(&["--margin=-5%"]), "-5%"),
        (c(&["--margin", "NaN"]), "NaN"),
        (c(&["--margin", "inf%"]), "inf%"),
        (c(&["--margin", "1e2%"]), "1e2%"),
        (
            o(&[
                "check", "--client", "true", "--out", &out_s, "--expect", "10000000",
            ]),
            "10000000",
        ),
    ];
    for (args, value) in cases {
        let output = testkit::bin(PROBE)
            .args(&args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(
            err.contains(value),
            "{args:?}: does not name {value}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote output");
    }
}
