//! Order for throughput: with a previous report in `--out`, the longest mutants are taken
//! first (so the last job does not run one long mutant alone), and the report's rows stay in
//! the spec's order.

use testkit::{Output, Repo};

use crate::common::{report_in, verdicts};

#[test]
fn mutants_are_taken_longest_first_when_the_last_report_timed_them() {
    let repo = Repo::new();
    let pids = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    repo.write("lib.sh", "a=0\nb=0\nc=0\n")
        .write(
            "test.sh",
            ". ./lib.sh\necho \"$a$b$c\" >> \"$PIDS/order\"\n\
             [ $b = 1 ] && sleep 1.2\n[ $c = 1 ] && sleep 0.6\n\
             if [ \"$a$b$c\" = 000 ]; then echo '1 passed, 0 failed'; else echo '0 passed, 1 failed'; exit 1; fi\n",
        )
        .write(
            "mutants.toml",
            "[suites.unit]\nrun = \"sh test.sh\"\ntimeout = \"30s\"\n\n\
             [[mutant]]\nname = \"quick\"\nfile = \"lib.sh\"\nanchor = \"a=0\"\nreplace = \"a=1\"\nsuite = \"unit\"\n\n\
             [[mutant]]\nname = \"longest\"\nfile = \"lib.sh\"\nanchor = \"b=0\"\nreplace = \"b=1\"\nsuite = \"unit\"\n\n\
             [[mutant]]\nname = \"middling\"\nfile = \"lib.sh\"\nanchor = \"c=0\"\nreplace = \"c=1\"\nsuite = \"unit\"\n",
        );
    repo.commit_all("base");
    let run = || {
        let _ = std::fs::remove_file(pids.path().join("order"));
        Output::of(
            testkit::bin(env!("CARGO_BIN_EXE_mutants"))
                .current_dir(repo.path())
                .env("PIDS", pids.path())
                .args(["run", "--out"])
                .arg(out.path().join("report")),
        )
        .assert_exit(0);
        std::fs::read_to_string(pids.path().join("order")).unwrap()
    };
    // No report yet: the spec's order (after the baseline's unmutated 000).
    assert_eq!(run(), "000\n100\n010\n001\n");
    // The report just written timed them: longest (b) first, then c, then a.
    assert_eq!(run(), "000\n010\n001\n100\n");
    let names: Vec<String> = verdicts(&report_in(&out.path().join("report")))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        ["quick", "longest", "middling"],
        "rows stay in spec order"
    );
}
