//! `gate cites` over a pull request's surfaces: reviews, issue comments and review comments as
//! GitHub's REST API returns them (the JSON built here from the field names GitHub documents).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use testkit::{Output, Repo};

use crate::common::gate;

/// A repository with an older commit and the head, and a temp dir for the saved answers.
struct Pr {
    repo: Repo,
    old: String,
    head: String,
    tree: String,
    dir: tempfile::TempDir,
}

impl Pr {
    fn new() -> Pr {
        let repo = Repo::new();
        repo.write("a.txt", "one\n");
        let old = repo.commit_all("first push");
        repo.write("a.txt", "one\ntwo\n");
        let head = repo.commit_all("second push");
        let tree = repo.git(["rev-parse", "HEAD^{tree}"]).trim().to_string();
        Pr {
            repo,
            old,
            head,
            tree,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn save(&self, name: &str, value: serde_json::Value) -> PathBuf {
        let path = self.dir.path().join(name);
        fs::write(&path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
        path
    }

    fn cites(&self, args: &[(&str, &Path)]) -> Output {
        let mut cmd = gate();
        cmd.current_dir(self.repo.path())
            .args(["cites", "--head", "HEAD"]);
        for (flag, path) in args {
            cmd.arg(flag).arg(path);
        }
        Output::of(&mut cmd)
    }
}

/// A review as `GET /repos/{owner}/{repo}/pulls/{n}/reviews` lists it.
fn review(id: u64, login: &str, state: &str, commit_id: &str, body: &str) -> serde_json::Value {
    json!({
        "id": id,
        "node_id": "PRR_x",
        "user": { "login": login, "id": 1, "type": "User" },
        "body": body,
        "state": state,
        "html_url": format!("https://github.com/o/r/pull/1#pullrequestreview-{id}"),
        "pull_request_url": "https://api.github.com/repos/o/r/pulls/1",
        "author_association": "MEMBER",
        "submitted_at": "2026-11-30T10:00:00Z",
        "commit_id": commit_id,
    })
}

/// An issue comment as `GET /repos/{owner}/{repo}/issues/{n}/comments` lists it: no commit.
fn issue_comment(id: u64, login: &str, body: &str) -> serde_json::Value {
    json!({
        "id": id,
        "node_id": "IC_x",
        "url": format!("https://api.github.com/repos/o/r/issues/comments/{id}"),
        "html_url": format!("https://github.com/o/r/pull/1#issuecomment-{id}"),
        "body": body,
        "user": { "login": login, "id": 2, "type": "User" },
        "created_at": "2026-11-30T11:00:00Z",
        "updated_at": "2026-11-30T11:00:00Z",
        "issue_url": "https://api.github.com/repos/o/r/issues/1",
        "author_association": "MEMBER",
    })
}

/// A review comment as `GET /repos/{owner}/{repo}/pulls/{n}/comments` lists it.
fn review_comment(
    id: u64,
    login: &str,
    commit: &str,
    original: &str,
    body: &str,
) -> serde_json::Value {
    json!({
        "id": id,
        "pull_request_review_id": 80,
        "diff_hunk": "@@ -1 +1,2 @@",
        "path": "a.txt",
        "position": 1,
        "original_position": 1,
        "commit_id": commit,
        "original_commit_id": original,
        "user": { "login": login, "id": 3, "type": "User" },
        "body": body,
        "created_at": "2026-11-30T12:00:00Z",
        "html_url": format!("https://github.com/o/r/pull/1#discussion_r{id}"),
    })
}

#[test]
fn each_surface_says_which_items_cite_the_head_and_how() {
    let pr = Pr::new();
    let reviews = pr.save(
        "reviews.json",
        json!([
            review(11, "alice", "APPROVED", &pr.head, "Looks good."),
            // Submitted on the older commit, but its text names the head: both are said.
            review(
                12,
                "bob",
                "APPROVED",
                &pr.old,
                &format!("re-gated {} today", &pr.head[..10])
            ),
            review(
                13,
                "carol",
                "COMMENTED",
                &pr.old,
                &format!("saw {}", &pr.old[..8])
            ),
        ]),
    );
    let issue = pr.save(
        "issue-comments.json",
        json!([
            // Nine characters of the tree id: width-free, by text alone.
            issue_comment(21, "dave", &format!("gate PASS on tree {}", &pr.tree[..9])),
            issue_comment(22, "erin", "approved, ship it (deadbeef01 was the old one)"),
        ]),
    );
    let out = pr.cites(&[
        ("--github-reviews", &reviews),
        ("--github-issue-comments", &issue),
    ]);
    out.assert_exit(0);
    let s = &out.stdout;
    assert!(s.contains("reviews ("), "{out}");
    assert!(s.contains("3 items, 2 cite the head"), "{out}");
    assert!(
        s.contains("cites  review 11 by alice (APPROVED, 2026-11-30T10:00:00Z): commit_id is the head; its text does not"),
        "{out}"
    );
    assert!(
        s.contains(&format!(
            "cites  review 12 by bob (APPROVED, 2026-11-30T10:00:00Z): commit_id {} is not the head; its text cites it: {} (line 1, commit)",
            pr.old,
            &pr.head[..10]
        )),
        "{out}"
    );
    assert!(s.contains("-      review 13 by carol"), "{out}");
    // Each surface's own positive control.
    assert!(
        s.contains(&format!(
            "  others  {} (review 13 by carol, line 1)",
            &pr.old[..8]
        )),
        "{out}"
    );
    assert!(s.contains("issue comments ("), "{out}");
    assert!(
        s.contains(&format!(
            "cites  comment 21 by dave (2026-11-30T11:00:00Z): no commit_id (only its text can bind it); its text cites it: {} (line 1, tree)",
            &pr.tree[..9]
        )),
        "{out}"
    );
    assert!(
        s.contains("-      comment 22 by erin"),
        "an approval that names no commit binds nothing: {out}"
    );
    assert!(
        s.contains("  others  deadbeef01 (comment 22 by erin, line 1)"),
        "{out}"
    );
    assert!(s.contains("cited   yes: reviews, issue comments"), "{out}");

    // Issue comments alone: the tree cited in text is enough.
    pr.cites(&[("--github-issue-comments", &issue)])
        .assert_exit(0);
}

#[test]
fn nothing_citing_the_head_is_exit_1_with_the_controls_shown() {
    let pr = Pr::new();
    let reviews = pr.save(
        "reviews.json",
        json!([review(
            11,
            "alice",
            "APPROVED",
            &pr.old,
            &format!("gated {}", &pr.old[..12])
        )]),
    );
    let issue = pr.save(
        "issue-comments.json",
        json!([issue_comment(21, "dave", "LGTM, approved")]),
    );
    // A comment GitHub moved onto the head was written on the older commit: not a citation.
    let comments = pr.save(
        "review-comments.json",
        json!([review_comment(
            31,
            "frank",
            &pr.head,
            &pr.old,
            "nit: spacing"
        )]),
    );
    let out = pr.cites(&[
        ("--github-reviews", &reviews),
        ("--github-issue-comments", &issue),
        ("--github-review-comments", &comments),
    ]);
    out.assert_exit(1);
    let s = &out.stdout;
    assert!(
        s.contains(&format!(
            "  others  {} (review 11 by alice, line 1)",
            &pr.old[..12]
        )),
        "{out}"
    );
    assert!(
        s.contains("  others  none: no hex token of 7+ characters that matches nothing"),
        "{out}"
    );
    assert!(
        s.contains(&format!(
            "original_commit_id {} is not the head (its commit_id is the head: GitHub moved it there)",
            pr.old
        )),
        "{out}"
    );
    assert!(
        s.contains("cited   NO: no surface cites the head or its tree"),
        "{out}"
    );

    // The same comment written on the head binds it.
    let comments = pr.save(
        "review-comments.json",
        json!([review_comment(
            31,
            "frank",
            &pr.head,
            &pr.head,
            "nit: spacing"
        )]),
    );
    let out = pr.cites(&[("--github-review-comments", &comments)]);
    out.assert_exit(0);
    assert!(
        out.stdout.contains("original_commit_id is the head"),
        "{out}"
    );
}

#[test]
fn paginated_answers_are_read_and_malformed_ones_are_bad_input() {
    let pr = Pr::new();
    // `gh api --paginate` writes one array per page, back to back.
    let path = pr.dir.path().join("reviews.json");
    fs::write(
        &path,
        format!(
            "{}\n{}\n",
            json!([review(1, "a", "COMMENTED", &pr.old, "")]),
            json!([review(2, "b", "APPROVED", &pr.head, "")])
        ),
    )
    .unwrap();
    let out = pr.cites(&[("--github-reviews", &path)]);
    out.assert_exit(0);
    assert!(out.stdout.contains("2 items, 1 cite the head"), "{out}");

    fs::write(&path, r#"{"message": "Not Found"}"#).unwrap();
    let bad = pr.cites(&[("--github-reviews", &path)]);
    bad.assert_exit(2);
    assert!(
        bad.stderr
            .contains("reviews.json: expected the JSON array GitHub returns, found an object"),
        "{bad}"
    );
    fs::write(&path, r#"[{"id": 1, "body": 5}]"#).unwrap();
    let bad = pr.cites(&[("--github-reviews", &path)]);
    bad.assert_exit(2);
    assert!(
        bad.stderr
            .contains("reviews.json: item 1: body is a number"),
        "{bad}"
    );
}
