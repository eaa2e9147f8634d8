//! Checking trees: statuses, the path rules on disk (symlinks in and out of the tree), odd
//! file types, making manifests, and the JSON a tool puts in its report.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::make_tree;
use manifests::{
    hash_files, hash_reader, manifest_for, parse, verify, Digest, Entry, Manifest, PathProblem,
    Status, TreeError,
};

fn digest_of(bytes: &[u8]) -> Digest {
    hash_reader(bytes).unwrap()
}

fn manifest(entries: &[(&[u8], &[u8])]) -> Manifest {
    Manifest {
        entries: entries
            .iter()
            .map(|(path, content)| Entry::new(*path, digest_of(content)))
            .collect(),
    }
}

fn escape_of(err: TreeError) -> (Vec<u8>, Vec<u8>) {
    match err {
        TreeError::Path(e) => match e.problem {
            PathProblem::LinkEscapes { link, .. } => (e.path, link),
            other => panic!("expected a link escape, got {other:?}"),
        },
        other => panic!("expected a path error, got {other}"),
    }
}

#[test]
fn statuses_come_in_manifest_order_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("good"), "good").unwrap();
    fs::write(root.join("bad"), "changed").unwrap();
    fs::create_dir(root.join("dir")).unwrap();
    fs::write(root.join("file"), "f").unwrap();
    let m = manifest(&[
        (b"bad", b"original"),
        (b"gone", b"x"),
        (b"good", b"good"),
        (b"dir", b"x"),
        (b"file/under", b"x"),
    ]);
    let v = verify(root, &m).unwrap();
    let got: Vec<(Status, Option<&str>)> = v
        .entries
        .iter()
        .map(|c| (c.status, c.detail.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            (Status::Failed, Some("content differs")),
            (Status::Missing, Some("no such file")),
            (Status::Ok, None),
            (Status::Failed, Some("is a directory")),
            (Status::Missing, Some("no such file")),
        ]
    );
    assert_eq!(v.entries[0].actual, Some(digest_of(b"changed")));
    assert_eq!(v.summary().to_string(), "1/5 OK, 2 FAILED, 2 MISSING");
}

#[test]
fn links_inside_the_tree_are_followed_like_sha256sum_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    make_tree(root, &[b"docs/readme".to_vec()]);
    let content = fs::read(root.join("docs/readme")).unwrap();
    symlink("docs/readme", root.join("README")).unwrap();
    symlink("docs", root.join("d")).unwrap();
    symlink("../docs/readme", root.join("docs/again")).unwrap();
    symlink("sub/../readme", root.join("docs/twisty")).unwrap();
    fs::create_dir(root.join("docs/sub")).unwrap();
    // An absolute link is fine when it names a place inside the tree.
    let canon = root.canonicalize().unwrap();
    symlink(canon.join("docs/readme"), root.join("abs")).unwrap();
    let m = manifest(&[
        (b"README", &content),
        (b"d/readme", &content),
        (b"d/again", &content),
        (b"docs/twisty", &content),
        (b"abs", &content),
    ]);
    let v = verify(root, &m).unwrap();
    assert!(v.all_ok(), "{v}");
}

#[test]
fn a_link_out_of_the_tree_is_refused_as_bad_input() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), "s").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("ok"), "ok").unwrap();
    symlink(outside.path().join("secret"), root.join("abs")).unwrap();
    symlink("../x", root.join("rel")).unwrap();

    let (path, link) =
        escape_of(verify(root, &manifest(&[(b"ok", b"ok"), (b"abs", b"s")])).unwrap_err());
    assert_eq!(
        (path.as_slice(), link.as_slice()),
        (&b"abs"[..], &b"abs"[..])
    );
    // Refused even though the target does not exist: reading outside is the problem.
    let (_, link) = escape_of(verify(root, &manifest(&[(b"rel", b"s")])).unwrap_err());
    assert_eq!(link, b"rel");
}

#[test]
fn a_link_in_a_parent_directory_out_of_the_tree_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), "s").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("a")).unwrap();
    symlink(outside.path(), root.join("a/out")).unwrap();
    symlink("../..", root.join("a/up")).unwrap();
    symlink(".", root.join("here")).unwrap();

    let err = verify(root, &manifest(&[(b"a/out/secret", b"s")])).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("'a/out/secret'") && message.contains("'a/out'"),
        "{message}"
    );
    assert!(message.contains("leads out of the tree"), "{message}");
    let (_, link) = escape_of(verify(root, &manifest(&[(b"a/up/x", b"s")])).unwrap_err());
    assert_eq!(link, b"a/up");
    // `here -> .` stays inside; a `..` after it climbs out, which only shows once `here` is
    // followed (lexically `here/../x` looks like it stays in).
    symlink("here/../x", root.join("twisty")).unwrap();
    let (_, link) = escape_of(verify(root, &manifest(&[(b"twisty", b"s")])).unwrap_err());
    assert_eq!(link, b"twisty");
    // `here -> .` stays inside, but `here/a/up/..` does not.
    let (_, link) = escape_of(verify(root, &manifest(&[(b"here/a/up/secret", b"s")])).unwrap_err());
    assert_eq!(link, b"a/up");
}

#[test]
fn dangling_in_tree_links_are_missing_and_loops_fail() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    symlink("nowhere", root.join("dangling")).unwrap();
    symlink("loop2", root.join("loop1")).unwrap();
    symlink("loop1", root.join("loop2")).unwrap();
    let v = verify(root, &manifest(&[(b"dangling", b""), (b"loop1", b"")])).unwrap();
    assert_eq!(v.entries[0].status, Status::Missing);
    assert_eq!(v.entries[1].status, Status::Failed);
    assert_eq!(
        v.entries[1].detail.as_deref(),
        Some("too many levels of symbolic links")
    );
}

#[test]
fn a_fifo_fails_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let made = Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let v = verify(root, &manifest(&[(b"pipe", b"")])).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(v.entries[0].status, Status::Failed);
    assert_eq!(v.entries[0].detail.as_deref(), Some("not a regular file"));
}

#[test]
fn paths_breaking_the_rules_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f"), "f").unwrap();
    for (path, want) in [
        (&b"/etc/passwd"[..], PathProblem::Absolute),
        (b"../f", PathProblem::ParentDir),
        (b"", PathProblem::Empty),
    ] {
        let m = Manifest {
            entries: vec![
                Entry::new(&b"f"[..], digest_of(b"f")),
                Entry::new(path, digest_of(b"")),
            ],
        };
        match verify(dir.path(), &m) {
            Err(TreeError::Path(e)) => assert_eq!(e.problem, want),
            other => panic!("{path:?}: {other:?}"),
        }
        assert!(matches!(
            hash_files(dir.path(), &[path]),
            Err(TreeError::Path(_))
        ));
        assert!(matches!(
            manifest_for(dir.path(), &[path]),
            Err(TreeError::Path(_))
        ));
    }
}

#[test]
fn manifest_for_hashes_in_the_order_given_and_refuses_what_cannot_check_ok() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let names: Vec<Vec<u8>> = ["z", "a", "m/n"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    make_tree(root, &names);
    let m = manifest_for(root, &names).unwrap();
    let paths: Vec<&[u8]> = m.iter().map(|e| e.path.as_slice()).collect();
    assert_eq!(paths, vec![&b"z"[..], b"a", b"m/n"]);
    assert_eq!(
        m.entries[0].digest,
        digest_of(&fs::read(root.join("z")).unwrap())
    );
    assert_eq!(parse(&m.to_bytes()).unwrap(), m);

    assert!(matches!(
        manifest_for(root, &[&b"gone"[..]]),
        Err(TreeError::Missing { .. })
    ));
    assert!(matches!(
        manifest_for(root, &[&b"m"[..]]),
        Err(TreeError::Unreadable { .. })
    ));
    assert!(matches!(
        manifest_for::<&[u8]>(root, &[]),
        Err(TreeError::NoPaths)
    ));
    assert!(matches!(
        manifest_for(Path::new("/nonexistent/root"), &[&b"a"[..]]),
        Err(TreeError::Root { .. })
    ));
}

#[test]
fn the_json_carries_summary_statuses_and_escaped_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("a\nb"), "x").unwrap();
    let v = verify(root, &manifest(&[(b"a\nb", b"x"), (b"gone\xff", b"x")])).unwrap();
    let json: serde_json::Value = serde_json::to_value(&v).unwrap();
    assert_eq!(json["summary"], "1/2 OK, 1 MISSING");
    assert_eq!(json["ok"], 1);
    assert_eq!(json["missing"], 1);
    assert_eq!(json["entries"][0]["status"], "OK");
    assert_eq!(json["entries"][0]["path"], "a\nb");
    assert_eq!(json["entries"][0]["path_escaped"], "a\\nb");
    assert_eq!(json["entries"][0]["expected"], digest_of(b"x").to_hex());
    assert_eq!(json["entries"][1]["status"], "MISSING");
    assert_eq!(json["entries"][1]["path"], "gone\u{fffd}");
    assert_eq!(json["entries"][1]["actual"], serde_json::Value::Null);
}

#[test]
fn an_empty_tree_root_that_does_not_exist_is_an_error() {
    let err = verify(Path::new("/nonexistent/root"), &manifest(&[(b"a", b"")])).unwrap_err();
    assert!(
        err.to_string().starts_with("tree /nonexistent/root: "),
        "{err}"
    );
}

#[test]
fn a_missing_file_alone_fails_the_check() {
    // Only OK and MISSING, no FAILED: `N/N OK` must not be reached by leaving the missing out.
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("here"), "here\n").unwrap();
    let m = manifests::Manifest {
        entries: vec![
            manifests::Entry::new(b"here", manifests::hash_reader(&b"here\n"[..]).unwrap()),
            manifests::Entry::new(b"gone", manifests::hash_reader(&b"gone\n"[..]).unwrap()),
        ],
    };
    let v = manifests::verify(dir.path(), &m).unwrap();
    let statuses: Vec<manifests::Status> = v.entries.iter().map(|c| c.status).collect();
    assert_eq!(
        statuses,
        [manifests::Status::Ok, manifests::Status::Missing]
    );
    assert!(!v.summary().all_ok());
    assert!(!v.all_ok());
    assert_eq!(v.summary().to_string(), "1/2 OK, 1 MISSING");
}
