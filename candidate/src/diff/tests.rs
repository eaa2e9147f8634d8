use super::*;
use std::fs;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

fn lines(v: &[usize]) -> BTreeSet<usize> {
    v.iter().copied().collect()
}

fn file<'a>(diffs: &'a [FileDiff], path: &str) -> &'a FileDiff {
    diffs
        .iter()
        .find(|f| f.path == path.as_bytes())
        .unwrap_or_else(|| panic!("no {path} in {diffs:?}"))
}

const TEN: &str = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";

#[test]
fn the_changed_lines_of_each_file_are_read_from_reals_gits_diff_whatever_its_config_or_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    git(dir, &["init", "-q"]);
    for name in ["plain.rs", "sp ace.py", "ta\tb.js", "ü.go", "gone.rs"] {
        fs::write(dir.join(name), TEN).unwrap();
    }
    fs::write(dir.join("moved.rs"), format!("{TEN}11\n12\n")).unwrap();
    fs::write(dir.join("b.bin"), b"a\0b").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "one"]);
    // The repository's own config would change git's text: none of it may.
    for setting in [
        "diff.noprefix=true",
        "diff.mnemonicPrefix=true",
        "color.ui=always",
        "diff.external=false",
        "diff.renames=false",
        "diff.context=0",
        "diff.renameLimit=1",
        "core.quotePath=false",
    ] {
        let (k, v) = setting.split_once('=').unwrap();
        git(dir, &["config", k, v]);
    }
    fs::write(
        dir.join("plain.rs"),
        "1\n2\nthree\n4\n5\n6\n7\n8\nnine\n10\n11\n",
    )
    .unwrap();
    fs::write(dir.join("sp ace.py"), "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n").unwrap();
    fs::write(dir.join("ta\tb.js"), "1\n2\n3\n4\n5\n6\n7\n8\n9\nten").unwrap();
    fs::write(dir.join("ü.go"), "1\n2\n3\n5\n6\n7\n8\n9\n10\n").unwrap();
    fs::remove_file(dir.join("gone.rs")).unwrap();
    fs::create_dir(dir.join("sub")).unwrap();
    git(dir, &["mv", "moved.rs", "sub/there.rs"]);
    fs::write(dir.join("sub/there.rs"), format!("{TEN}11\ntwelve\n")).unwrap();
    fs::write(dir.join("b.bin"), b"a\0c").unwrap();

    let diffs = worktree_since(&Git::at(dir), "HEAD").unwrap();
    assert_eq!(file(&diffs, "plain.rs").changed_lines(), lines(&[3, 9, 11]));
    assert_eq!(file(&diffs, "sp ace.py").changed_lines(), lines(&[1]));
    // A last line without its newline, changed.
    assert_eq!(file(&diffs, "ta\tb.js").changed_lines(), lines(&[10]));
    // A line removed adds none.
    assert!(file(&diffs, "ü.go").changed_lines().is_empty());
    let gone = file(&diffs, "gone.rs");
    assert!(gone.deleted && gone.changed_lines().is_empty());
    // Followed as a rename: only the changed line counts, not the whole file.
    let moved = file(&diffs, "sub/there.rs");
    assert_eq!(moved.renamed_from.as_deref(), Some(&b"moved.rs"[..]));
    assert_eq!(moved.changed_lines(), lines(&[12]));
    let bin = file(&diffs, "b.bin");
    assert!(bin.binary && bin.changed_lines().is_empty());

    // The hunk of a changed line, with git's three lines of context.
    let plain = file(&diffs, "plain.rs");
    let hunk = plain.hunk_at(9).unwrap();
    assert_eq!(
        hunk.text(),
        "@@ -1,10 +1,11 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n+11\n"
    );
    assert_eq!(
        hunk.around(9, 1).text(),
        "@@ -8,3 +8,3 @@\n 8\n-9\n+nine\n 10\n"
    );
    assert!(plain.hunk_at(12).is_none());
}

#[test]
fn a_link_and_a_staged_candidate_are_read_from_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    git(dir, &["init", "-q"]);
    fs::write(dir.join("a.rs"), "x\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "one"]);
    std::os::unix::fs::symlink("a.rs", dir.join("link.rs")).unwrap();
    fs::write(dir.join("a.rs"), "x\ny\n").unwrap();
    git(dir, &["add", "-A"]);
    // After staging, the work tree changes again: the index is what is read.
    fs::write(dir.join("a.rs"), "x\ny\nz\n").unwrap();
    let diffs = index_since(&Git::at(dir), "HEAD").unwrap();
    assert_eq!(file(&diffs, "a.rs").changed_lines(), lines(&[2]));
    let link = file(&diffs, "link.rs");
    assert_eq!(link.mode.as_deref(), Some("120000"));
    assert!(link.changed_lines().is_empty());
}

#[test]
fn an_unknown_revision_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q"]);
    assert!(worktree_since(&Git::at(tmp.path()), "no-such-rev").is_err());
}

#[test]
fn new_and_context_hunks_count_their_lines() {
    let h = Hunk::new_file(b"a\nb\nc");
    assert_eq!(h.text(), "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n");
    assert_eq!(h.around(3, 1).text(), "@@ -0,0 +2,2 @@\n+b\n+c\n");
    assert_eq!(Hunk::new_file(b"").text(), "@@ -0,0 +0,0 @@\n");
    assert_eq!(
        Hunk::context(b"a\nb\nc\nd\n", 2, 3).text(),
        "@@ -2,2 +2,2 @@\n b\n c\n"
    );
}

#[test]
fn quoted_names_are_read_back_as_bytes() {
    let (name, rest) = c_unquote(br#""a\tb\303\274\"q\\" tail"#).unwrap();
    assert_eq!(name, b"a\tb\xc3\xbc\"q\\");
    assert_eq!(rest, b" tail");
    assert!(c_unquote(br#""unclosed"#).is_none());
    assert!(c_unquote(br#""\39""#).is_none());
    assert_eq!(header_path(b"a/x y b/x y"), Some(b"x y".to_vec()));
    assert_eq!(
        header_path(br#""a/\303\274" "b/\303\274""#),
        Some(b"\xc3\xbc".to_vec())
    );
}

proptest::proptest! {
    // Outside text: anything git (or a hostile file) could put in a diff is read or passed
    // over, never a panic.
    #[test]
    fn any_text_parses_without_a_panic(text in proptest::collection::vec(
        proptest::prop_oneof![
            proptest::prelude::Just(b"diff --git a/x b/x\n".to_vec()),
            proptest::prelude::Just(b"@@ -1,2 +1,3 @@\n".to_vec()),
            proptest::prelude::Just(b"@@ -0 +18446744073709551615,2 @@\n".to_vec()),
            proptest::prelude::Just(b"+++ \"b/\\3".to_vec()),
            proptest::prelude::Just(b"rename to \"".to_vec()),
            proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20),
        ],
        0..30,
    )) {
        let text = text.concat();
        for f in parse(&text) {
            let lines = f.changed_lines();
            for l in lines {
                if let Some(h) = f.hunk_at(l) {
                    let _ = h.around(l, 3).text();
                }
            }
        }
    }
}
