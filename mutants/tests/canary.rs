//! Canaries: before the first mutant of each mutated file, the file is made unloadable and its
//! suites must fail. A suite that reads your checkout instead of the working copy passes, and
//! the run stops (exit 4) before any verdict about code nobody mutated.

use crate::common::*;
use testkit::Output;

/// The usual fixture, with its suite reading `lib.sh` from `$LIB_DIR` when that is set: the
/// shape of an editable install, whose imports resolve to the user's checkout.
fn fixture(spec_extra: &str) -> Fixture {
    let spec = format!(
        "{SUITE}{}{}{spec_extra}",
        mutant("plus to minus", "$1 + $2", "$1 - $2", ""),
        "[[mutant]]\nname = \"control: readme\"\nfile = \"README.md\"\nanchor = \"Hello\"\nreplace = \"Hullo\"\nsuite = \"unit\"\nexpect = \"survive\"\n"
    );
    let fx = Fixture::new(&spec);
    fx.repo.write("README.md", "Hello\n").write(
        "test.sh",
        TEST.replace(". ./lib.sh", ". \"${LIB_DIR:-.}/lib.sh\""),
    );
    fx.repo.commit_all("readme; lib from LIB_DIR");
    fx
}

#[test]
fn a_suite_that_reads_the_working_copy_kills_each_mutated_files_canary_and_controls_get_none() {
    let fx = fixture("");
    let out = fx.run(&[]);
    out.assert_exit(0);
    let report = fx.report();
    let canaries = report["canaries"].as_array().unwrap();
    assert_eq!(
        canaries.len(),
        1,
        "lib.sh only, not the control's README: {report}"
    );
    assert_eq!(canaries[0]["file"], "lib.sh");
    assert_eq!(canaries[0]["verdict"], "canary killed");
    assert_eq!(report["canaries_skipped"], false);
    let text = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        text.contains("canary: lib.sh made unloadable, suite unit: canary killed"),
        "{text}"
    );
    // The canary's bytes never reached the user's checkout.
    assert_eq!(fx.repo.read("lib.sh"), LIB.as_bytes());
}

#[test]
fn a_suite_that_reads_the_users_checkout_stops_the_run_at_its_canary_with_exit_4() {
    let fx = fixture("");
    let out = Output::of(fx.cmd().env("LIB_DIR", fx.repo.path()).args([
        "run",
        "mutants.toml",
        "--out",
        fx.out().to_str().unwrap(),
    ]));
    out.assert_exit(4);
    assert!(out.stderr.contains("canary SURVIVED"), "{out}");
    assert!(out.stderr.contains("lib.sh"), "{out}");
    assert!(out.stderr.contains("editable install"), "{out}");
    let report = fx.report();
    assert_eq!(report["canaries"][0]["verdict"], "CANARY SURVIVED");
    assert_eq!(report["exit_code"], 4);
    assert!(
        report["mutants"].as_array().unwrap().is_empty(),
        "no mutant judged"
    );
    let text = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(text.contains("CANARY SURVIVED: a suite passed"), "{text}");
    // The JUnit file of an exit-4 run is never green: the canary is a failing testcase.
    if let Some(junit) = testkit::junit(&fx.out().join("junit.xml")) {
        assert!(junit["failures"].as_u64().unwrap() > 0, "{junit}");
        let canary = junit["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["classname"] == "mutants.canary")
            .unwrap_or_else(|| panic!("no canary testcase: {junit}"));
        assert!(
            canary["name"].as_str().unwrap().contains("lib.sh"),
            "{canary}"
        );
        assert_eq!(canary["results"][0]["kind"], "Failure", "{canary}");
    }

    // Without the canary the same run says every mutant SURVIVED: the verdict the canary
    // exists to stop. The report says the canaries were skipped.
    let out = Output::of(fx.cmd().env("LIB_DIR", fx.repo.path()).args([
        "run",
        "mutants.toml",
        "--out",
        fx.out().to_str().unwrap(),
        "--no-canary",
    ]));
    out.assert_exit(1);
    let report = fx.report();
    assert_eq!(verdicts(&report)[0].1, "SURVIVED");
    assert_eq!(report["canaries_skipped"], true);
    let text = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(text.contains("canary: skipped (--no-canary)"), "{text}");
}

#[test]
fn canary_skip_leaves_a_mutated_file_out_and_the_report_says_which_and_why() {
    // The suite reads the user's checkout: without the skip the run stops at lib.sh's canary.
    let fx = fixture("\n[canary]\nskip = [\"*.sh\"]\n");
    let out = Output::of(fx.cmd().env("LIB_DIR", fx.repo.path()).args([
        "run",
        "mutants.toml",
        "--out",
        fx.out().to_str().unwrap(),
    ]));
    out.assert_exit(1);
    let report = fx.report();
    assert!(
        report["canaries"].as_array().unwrap().is_empty(),
        "{report}"
    );
    assert_eq!(report["canaries_left_out"][0]["file"], "lib.sh");
    assert_eq!(
        report["canaries_left_out"][0]["why"],
        "[canary] skip \"*.sh\""
    );
    let text = std::fs::read_to_string(fx.out().join("mutants.txt")).unwrap();
    assert!(
        text.contains(
            "canary: lib.sh left out ([canary] skip \"*.sh\"): no canary proves a suite reads it"
        ),
        "{text}"
    );
}

#[test]
fn a_canary_skip_glob_that_climbs_out_is_bad_input_at_its_line() {
    let fx = fixture("\n[canary]\nskip = [\"../*.sh\"]\n");
    let out = fx.run(&[]);
    out.assert_exit(2);
    assert!(out.stderr.contains("mutants.toml:"), "{out}");
    assert!(out.stderr.contains("canary.skip \"../*.sh\""), "{out}");
}
