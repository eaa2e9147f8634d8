//! The one output guard, from outside: every path `gate run` writes is refused (exit 2, one
//! line, before any suite runs) when it would land on an input, on another output, through a
//! link, in the repository's `.git` or in a gatekit checkout; and a fresh run removes only the
//! files an earlier run recorded as its own in `--out`.

use std::fs;
use std::os::unix::fs::symlink;

use crate::common::{stderr, stdout, Fixture};

#[test]
fn an_output_onto_an_input_another_output_a_link_git_or_a_checkout_is_exit_2_before_any_suite() {
    let f = Fixture::new();
    f.pack();
    let marker = f.out.path().join("suite-ran");
    let config = f.config(&format!(
        "[[suite]]\nname = \"s\"\nrun = \"touch '{}'\"\n",
        marker.display()
    ));
    let out = f.out.path().join("o");
    let patch = fs::read(f.patch()).unwrap();
    let manifest = fs::read(f.manifest()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let hard = elsewhere.path().join("manifest-again.xml");
    fs::hard_link(f.manifest(), &hard).unwrap();
    let victim = elsewhere.path().join("victim");
    fs::write(&victim, "keep me\n").unwrap();
    symlink(&victim, elsewhere.path().join("link.xml")).unwrap();
    let checkout = elsewhere.path().join("checkout");
    fs::create_dir_all(checkout.join(".git")).unwrap();
    fs::write(checkout.join(".git/gatekit-owner"), "kept 0123\n").unwrap();

    let junit_cases = [
        (f.patch(), "is the run's patch"),
        (hard.clone(), "is the run's manifest"),
        (config.clone(), "is the run's gate.toml"),
        (out.join("gate.json"), "is also the run's gate.json"),
        (out.join("logs/x.xml"), "which the run fills"),
        (elsewhere.path().join("link.xml"), "is a link"),
        (
            f.repo.path().join(".git/junit.xml"),
            "inside the repository's .git",
        ),
        (checkout.join("junit.xml"), "inside a gatekit checkout"),
    ];
    for (junit, why) in &junit_cases {
        let o = f
            .run(&config, &out)
            .arg("--junit")
            .arg(junit)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "--junit {junit:?}: {}",
            stderr(&o)
        );
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(
            stderr(&o).contains(why),
            "--junit {junit:?}: {}",
            stderr(&o)
        );
    }
    // A link among the folders the run fills itself: an --out whose `logs` folder is a link
    // to a folder elsewhere (the folders the user typed, on the way to --out, may be links).
    let linked = elsewhere.path().join("linked");
    fs::create_dir(&linked).unwrap();
    let linked_out = elsewhere.path().join("linked-out");
    fs::create_dir(&linked_out).unwrap();
    symlink(&linked, linked_out.join("logs")).unwrap();
    let o = f.run(&config, &linked_out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is a link"), "{}", stderr(&o));
    assert_eq!(
        fs::read_dir(&linked).unwrap().count(),
        0,
        "written through a link"
    );
    let out_cases = [
        (f.patch(), "is not a folder"),
        (f.out.path().to_path_buf(), "holds the run's gate.toml"),
        (f.repo.path().join(".git/o"), "inside the repository's .git"),
        (checkout.join("deep/o"), "inside a gatekit checkout"),
    ];
    for (bad, why) in &out_cases {
        let o = f.run(&config, bad).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "--out {bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "--out {bad:?}: {}", stderr(&o));
    }
    assert!(
        !marker.exists(),
        "a suite ran before the outputs were checked"
    );
    assert_eq!(fs::read(f.patch()).unwrap(), patch);
    assert_eq!(fs::read(f.manifest()).unwrap(), manifest);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(!f.repo.path().join(".git/o").exists());
    assert!(!f.repo.path().join(".git/junit.xml").exists());
    assert!(!checkout.join("deep").exists());

    // The same guard passes a good --junit, even one inside --out.
    let o = f
        .run(&config, &out)
        .arg("--junit")
        .arg(out.join("junit.xml"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(marker.exists());
}

#[test]
fn a_fresh_run_removes_only_what_an_earlier_run_recorded_and_never_a_users_file() {
    let f = Fixture::new();
    f.pack();
    let out = f.out.path().join("o");
    fs::create_dir_all(out.join("logs")).unwrap();
    // Files of the user's, named like gate's own logs and reports.
    let mine = [
        "logs/07-notes.log",
        "logs/rerun-1-01-a.log",
        "gate-summary.txt.bak",
        "notes.txt",
    ];
    for name in mine {
        fs::write(out.join(name), "the user's\n").unwrap();
    }
    let two = f.config(
        "[[suite]]\nname = \"a\"\nrun = \"true\"\n[[suite]]\nname = \"b\"\nrun = \"true\"\n",
    );
    let o = f.run(&two, &out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.join("logs/02-b.log").exists());

    // A fresh run of one suite: the other suite's log of the first run goes, the user's stay.
    let one = f.config("[[suite]]\nname = \"a\"\nrun = \"true\"\n");
    let o = f.run(&one, &out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !out.join("logs/02-b.log").exists(),
        "a log of the earlier run stayed"
    );
    assert!(out.join("logs/01-a.log").exists());
    for name in mine {
        assert_eq!(
            fs::read_to_string(out.join(name)).unwrap(),
            "the user's\n",
            "{name} was touched"
        );
    }

    // A user's file exactly where a log of this run would go: refused before any suite runs.
    let fresh = f.out.path().join("o2");
    fs::create_dir_all(fresh.join("logs")).unwrap();
    fs::write(fresh.join("logs/01-a.log"), "the user's\n").unwrap();
    let marker = f.out.path().join("suite-ran");
    let touching = f.config(&format!(
        "[[suite]]\nname = \"a\"\nrun = \"touch '{}'\"\n",
        marker.display()
    ));
    let o = f.run(&touching, &fresh).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("no earlier gatekit run recorded it"),
        "{}",
        stderr(&o)
    );
    assert!(!marker.exists(), "a suite ran");
    assert_eq!(
        fs::read_to_string(fresh.join("logs/01-a.log")).unwrap(),
        "the user's\n"
    );
}
