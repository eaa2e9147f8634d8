//! `gate cites` over a pull request's surfaces: its reviews, issue comments and review
//! comments, as GitHub's REST API returns them (saved by the user, e.g. `gh api
//! repos/O/R/pulls/N/reviews > reviews.json`; a `gh api --paginate` stream of arrays, or
//! `--slurp`'s array of arrays, reads the same).
//!
//! An item binds to a commit in two ways, and the answer names both: the commit GitHub
//! recorded for it, and the hex tokens of its text (width-free, see [`crate::cites`]). A
//! review carries the `commit_id` it was submitted on. A review comment carries two:
//! `original_commit_id`, the commit its writer commented on, binds it; `commit_id` is where
//! GitHub shows it now (it can move a comment onto later commits), so it is reported and not
//! counted. An issue comment carries no commit at all: only its text can bind it, which is
//! why a green "approved" there says nothing about the head unless it names it.
//!
//! Each surface keeps its own positive control: the tokens of its texts that match nothing,
//! proof the scan read citations there at all.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::Value;

use crate::cites::{self, Citations, Token};

/// The three surfaces of a pull request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    Reviews,
    IssueComments,
    ReviewComments,
}

impl Kind {
    pub(crate) fn title(self) -> &'static str {
        match self {
            Kind::Reviews => "reviews",
            Kind::IssueComments => "issue comments",
            Kind::ReviewComments => "review comments",
        }
    }

    fn item(self) -> &'static str {
        match self {
            Kind::Reviews => "review",
            Kind::IssueComments | Kind::ReviewComments => "comment",
        }
    }

    /// The field whose commit binds an item of this surface, if it has one.
    pub(crate) fn commit_field(self) -> Option<&'static str> {
        match self {
            Kind::Reviews => Some("commit_id"),
            Kind::IssueComments => None,
            Kind::ReviewComments => Some("original_commit_id"),
        }
    }
}

/// One review or comment.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Item {
    pub id: Option<u64>,
    pub html_url: Option<String>,
    pub user: Option<String>,
    /// A review's `state` (`APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`, ...).
    pub state: Option<String>,
    /// `submitted_at` (reviews) or `created_at` (comments).
    pub at: Option<String>,
    /// A review comment's file.
    pub path: Option<String>,
    /// The binding commit (see [`Kind::commit_field`]), as GitHub gave it.
    pub commit: Option<String>,
    pub commit_is_head: bool,
    /// A review comment whose `commit_id` is the head while its `original_commit_id` is not:
    /// GitHub moved it onto the head; its writer did not comment on the head.
    pub moved_to_head: bool,
    /// The text's tokens: those citing the head or its tree, and the rest.
    pub text: Citations,
}

impl Item {
    pub(crate) fn cites_head(&self) -> bool {
        self.commit_is_head || self.text.is_cited()
    }

    /// How to name the item in a line: `review 80 by alice`.
    pub(crate) fn label(&self, kind: Kind) -> String {
        let mut s = kind.item().to_string();
        if let Some(id) = self.id {
            s.push_str(&format!(" {id}"));
        }
        if let Some(user) = &self.user {
            s.push_str(&format!(" by {user}"));
        }
        s
    }
}

/// One surface read from its file.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Surface {
    pub kind: Kind,
    pub file: String,
    pub items: Vec<Item>,
}

impl Surface {
    /// Whether some item of this surface cites the head (by its commit or its text).
    pub(crate) fn cites_head(&self) -> bool {
        self.items.iter().any(Item::cites_head)
    }

    /// The positive control: every token of this surface's texts that matches nothing, with
    /// the item it is in.
    pub(crate) fn others(&self) -> Vec<(&Item, &Token)> {
        self.items
            .iter()
            .flat_map(|i| i.text.others.iter().map(move |t| (i, t)))
            .collect()
    }
}

/// Reads surface `kind` from `path` and matches each item against `head` and `tree` (full
/// ids). A file that is not the JSON GitHub returns for the surface is an error naming it.
pub(crate) fn read(kind: Kind, path: &Path, head: &str, tree: &str) -> Result<Surface> {
    let shown = path.display().to_string();
    let bytes = files::input::read(path).with_context(|| shown.clone())?;
    let objects = objects(&bytes).map_err(|e| anyhow::anyhow!("{shown}: {e}"))?;
    let items = objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            item(kind, o, head, tree).map_err(|e| anyhow::anyhow!("{shown}: item {}: {e}", i + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Surface {
        kind,
        file: shown,
        items,
    })
}

/// Every object of a saved answer: one JSON array of objects, a stream of them (`gh api
/// --paginate`), or an array of such arrays (`--slurp`).
fn objects(bytes: &[u8]) -> Result<Vec<Value>, String> {
    let mut all = Vec::new();
    let mut pages = 0;
    for value in serde_json::Deserializer::from_slice(bytes).into_iter::<Value>() {
        let value = value.map_err(|e| format!("not JSON: {e}"))?;
        pages += 1;
        let Value::Array(list) = value else {
            return Err(format!(
                "expected the JSON array GitHub returns, found {}",
                report::json::kind_of(&value)
            ));
        };
        for v in list {
            match v {
                Value::Object(_) => all.push(v),
                Value::Array(inner) => {
                    for o in inner {
                        if !o.is_object() {
                            return Err(format!(
                                "expected objects, found {}",
                                report::json::kind_of(&o)
                            ));
                        }
                        all.push(o);
                    }
                }
                other => {
                    return Err(format!(
                        "expected objects, found {}",
                        report::json::kind_of(&other)
                    ))
                }
            }
        }
    }
    if pages == 0 {
        return Err("empty: expected the JSON array GitHub returns".into());
    }
    Ok(all)
}

fn item(kind: Kind, o: &Value, head: &str, tree: &str) -> Result<Item, String> {
    let text = |key: &str| -> Result<Option<String>, String> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!(
                "{key} is {}, not a string",
                report::json::kind_of(other)
            )),
        }
    };
    let is_head = |c: &Option<String>| c.as_deref().is_some_and(|c| c.eq_ignore_ascii_case(head));
    let body = text("body")?.unwrap_or_default();
    let commit = match kind.commit_field() {
        Some(field) => text(field)?,
        None => None,
    };
    let moved_to_head =
        kind == Kind::ReviewComments && !is_head(&commit) && is_head(&text("commit_id")?);
    Ok(Item {
        id: o.get("id").and_then(Value::as_u64),
        html_url: text("html_url")?,
        user: o
            .get("user")
            .and_then(|u| u.get("login"))
            .and_then(Value::as_str)
            .map(str::to_string),
        state: text("state")?,
        at: match kind {
            Kind::Reviews => text("submitted_at")?,
            _ => text("created_at")?,
        },
        path: text("path")?,
        commit_is_head: is_head(&commit),
        commit,
        moved_to_head,
        text: cites::find(head, tree, &body),
    })
}

/// Reads every surface named, in the order of the command line's flags.
pub(crate) fn read_all(files: &[(Kind, &Path)], head: &str, tree: &str) -> Result<Vec<Surface>> {
    if files.is_empty() {
        bail!("no surface to read");
    }
    files
        .iter()
        .map(|(kind, path)| read(*kind, path, head, tree))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d";
    const OLD: &str = "1111111f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d";
    const TREE: &str = "b335940e697e64712e89cd948b284e0890ecc7f9";

    fn items(kind: Kind, json: &str) -> Vec<Item> {
        objects(json.as_bytes())
            .unwrap()
            .iter()
            .map(|o| item(kind, o, HEAD, TREE).unwrap())
            .collect()
    }

    #[test]
    fn a_review_binds_by_its_commit_and_by_its_text_and_says_both() {
        let got = items(
            Kind::Reviews,
            &format!(
                r#"[{{"id":1,"user":{{"login":"a"}},"body":"","state":"APPROVED","commit_id":"{HEAD}"}},
                   {{"id":2,"user":{{"login":"b"}},"body":"LGTM at 9c1d2e3f4","state":"APPROVED","commit_id":"{OLD}"}},
                   {{"id":3,"user":{{"login":"c"}},"body":"old 1111111","state":"APPROVED","commit_id":"{OLD}"}}]"#
            ),
        );
        assert!(got[0].commit_is_head && !got[0].text.is_cited());
        assert!(!got[1].commit_is_head && got[1].text.is_cited());
        assert!(!got[2].cites_head());
        assert_eq!(got[2].text.others[0].text, "1111111");
    }

    #[test]
    fn a_review_comment_binds_by_the_commit_its_writer_saw() {
        let got = items(
            Kind::ReviewComments,
            &format!(
                r#"[{{"id":7,"body":"nit","path":"a.rs","commit_id":"{HEAD}","original_commit_id":"{OLD}"}},
                   {{"id":8,"body":"nit","path":"a.rs","commit_id":"{HEAD}","original_commit_id":"{HEAD}"}}]"#
            ),
        );
        assert!(!got[0].cites_head() && got[0].moved_to_head);
        assert!(got[1].cites_head() && !got[1].moved_to_head);
    }

    #[test]
    fn an_issue_comment_binds_by_its_text_alone() {
        let got = items(
            Kind::IssueComments,
            &format!(r#"[{{"id":5,"body":"gated tree b335940e6","commit_id":"{HEAD}"}}]"#),
        );
        assert!(got[0].commit.is_none() && got[0].text.is_cited());
        let got = items(
            Kind::IssueComments,
            &format!(r#"[{{"id":5,"body":"approved","commit_id":"{HEAD}"}}]"#),
        );
        assert!(!got[0].cites_head());
    }

    #[test]
    fn paginated_and_slurped_answers_read_the_same() {
        let one = r#"[{"id":1,"body":"a"},{"id":2,"body":"b"}]"#;
        let stream = r#"[{"id":1,"body":"a"}] [{"id":2,"body":"b"}]"#;
        let slurp = r#"[[{"id":1,"body":"a"}],[{"id":2,"body":"b"}]]"#;
        for text in [one, stream, slurp] {
            let ids: Vec<_> = objects(text.as_bytes())
                .unwrap()
                .iter()
                .map(|o| o["id"].as_u64())
                .collect();
            assert_eq!(ids, [Some(1), Some(2)], "{text}");
        }
        for bad in ["", "{}", "[1]", "[{]", r#"[{"body":1}]"#] {
            let r = objects(bad.as_bytes()).and_then(|os| {
                os.iter()
                    .map(|o| item(Kind::Reviews, o, HEAD, TREE))
                    .collect::<Result<Vec<_>, _>>()
            });
            assert!(r.is_err(), "{bad}");
        }
    }
}
