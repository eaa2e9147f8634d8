//! The output guard against real folders: inputs by any name, links where gatekit picks the
//! path, a record that lets a fresh run remove only what a run wrote.

use std::fs;

use files::atomic::write_bytes_atomic as write;
use files::outputs::{clear_previous, create, own, Plan};
use std::os::unix::fs::symlink;

fn reason(plan: &Plan) -> String {
    plan.check().unwrap_err().to_string()
}

#[test]
fn an_output_onto_an_input_by_any_name_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    fs::write(t.join("build.patch"), "patch").unwrap();
    fs::hard_link(t.join("build.patch"), t.join("hard")).unwrap();
    fs::create_dir(t.join("sub")).unwrap();
    let base = || {
        let mut p = Plan::new();
        p.input("patch", &t.join("build.patch"));
        p
    };
    for junit in [
        t.join("build.patch"),
        t.join("sub/../build.patch"),
        t.join("hard"),
    ] {
        let mut p = base();
        p.file("--junit", &junit);
        assert!(
            reason(&p).contains("is the run's patch"),
            "{junit:?}: {}",
            reason(&p)
        );
    }
    let mut p = base();
    p.folder("--out", t);
    assert!(
        reason(&p).contains("holds the run's patch"),
        "{}",
        reason(&p)
    );
    let mut p = base();
    p.folder("--out", &t.join("sub"));
    p.file("--junit", &t.join("sub/x.xml"));
    p.check().unwrap();
    assert_eq!(fs::read_to_string(t.join("build.patch")).unwrap(), "patch");
}

#[test]
fn links_are_refused_where_gatekit_picks_the_path_and_followed_where_the_user_typed_one() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    fs::create_dir(t.join("real")).unwrap();
    symlink(t.join("real"), t.join("out")).unwrap();
    let mut p = Plan::new();
    p.folder("--out", &t.join("out"))
        .file_in(&t.join("out"), "gate.json")
        .folder_in(&t.join("out"), "logs");
    p.check().unwrap();
    fs::write(t.join("victim"), "keep").unwrap();
    symlink(t.join("victim"), t.join("real/gate.json")).unwrap();
    assert!(reason(&p).contains("is a link"), "{}", reason(&p));
    fs::remove_file(t.join("real/gate.json")).unwrap();
    symlink(t.join("elsewhere"), t.join("real/logs")).unwrap();
    assert!(reason(&p).contains("is a link"), "{}", reason(&p));
    let mut q = Plan::new();
    q.file("--junit", &t.join("out/../victim-link"));
    symlink(t.join("victim"), t.join("victim-link")).unwrap();
    assert!(reason(&q).contains("is a link"), "{}", reason(&q));
}

#[test]
fn two_outputs_on_one_path_and_outputs_in_git_or_a_checkout_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let out = t.join("out");
    let mut p = Plan::new();
    p.folder("--out", &out)
        .file_in(&out, "gate.json")
        .file("--junit", &out.join("gate.json"));
    assert!(
        reason(&p).contains("is also the run's gate.json"),
        "{}",
        reason(&p)
    );
    let mut p = Plan::new();
    p.folder("--out", &out)
        .folder_in(&out, "logs")
        .file("--junit", &out.join("logs/x.xml"));
    assert!(reason(&p).contains("which the run fills"), "{}", reason(&p));
    fs::create_dir_all(t.join("repo/.git")).unwrap();
    let mut p = Plan::new();
    p.forbid("the repository's .git", &t.join("repo/.git"))
        .folder("--out", &t.join("repo/.git/out"));
    assert!(
        reason(&p).contains("is inside the repository's .git"),
        "{}",
        reason(&p)
    );
    fs::create_dir_all(t.join("co/.git")).unwrap();
    fs::write(t.join("co/.git/gatekit-owner"), "run 1 1\n").unwrap();
    let mut p = Plan::new();
    p.folder("--out", &t.join("co/deep/out"));
    assert!(
        reason(&p).contains("inside a gatekit checkout"),
        "{}",
        reason(&p)
    );
}

#[test]
fn a_fresh_run_removes_only_what_a_run_recorded_and_never_overwrites_a_users_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    fs::create_dir_all(out.join("logs")).unwrap();
    fs::write(out.join("logs/01-mine.log"), "the user's").unwrap();
    own(&out).unwrap();
    create(&out.join("logs/02-ours.log")).unwrap();
    write(&out.join("gate.json"), b"{}").unwrap();
    assert!(create(&out.join("logs/01-mine.log")).is_err());
    let mut p = Plan::new();
    p.folder("--out", &out).file_in(&out, "logs/01-mine.log");
    assert!(
        reason(&p).contains("no earlier gatekit run recorded it"),
        "{}",
        reason(&p)
    );
    let mut p = Plan::new();
    p.folder("--out", &out).file_in(&out, "gate.json");
    p.check().unwrap();
    assert_eq!(clear_previous(&out).unwrap(), 2);
    assert!(!out.join("logs/02-ours.log").exists());
    assert!(!out.join("gate.json").exists());
    assert_eq!(
        fs::read_to_string(out.join("logs/01-mine.log")).unwrap(),
        "the user's"
    );
}

#[test]
fn a_folder_link_raced_in_below_an_owned_folder_is_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    own(&out).unwrap();
    symlink(&elsewhere, out.join("logs")).unwrap();
    assert!(create(&out.join("logs/a.log")).is_err());
    assert!(write(&out.join("logs/b.json"), b"{}").is_err());
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn a_link_raced_in_after_the_checks_is_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    fs::create_dir_all(&out).unwrap();
    fs::write(tmp.path().join("victim"), "keep").unwrap();
    own(&out).unwrap();
    create(&out.join("a.log")).unwrap();
    fs::remove_file(out.join("a.log")).unwrap();
    symlink(tmp.path().join("victim"), out.join("a.log")).unwrap();
    assert!(create(&out.join("a.log")).is_err());
    assert_eq!(
        fs::read_to_string(tmp.path().join("victim")).unwrap(),
        "keep"
    );
}
