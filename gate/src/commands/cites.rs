//! `gate cites`: does a review text, or a pull request's surfaces on GitHub, cite this head
//! (or its tree)?

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use cmdline::outln;
use cmdline::Exit;
use files::escape::text as esc;

use super::finished;
use crate::cites;
use crate::surfaces::{self, Kind, Surface};
use candidate::git::Git;

/// The `--github-*` files: a pull request's surfaces as GitHub's REST API returns them.
#[derive(Debug, Default)]
pub(super) struct GithubFiles {
    pub(super) reviews: Option<PathBuf>,
    pub(super) issue_comments: Option<PathBuf>,
    pub(super) review_comments: Option<PathBuf>,
}

impl GithubFiles {
    fn named(&self) -> Vec<(Kind, &Path)> {
        [
            (Kind::Reviews, &self.reviews),
            (Kind::IssueComments, &self.issue_comments),
            (Kind::ReviewComments, &self.review_comments),
        ]
        .into_iter()
        .filter_map(|(k, p)| p.as_deref().map(|p| (k, p)))
        .collect()
    }
}

pub(super) fn cmd_cites(
    repo: &Git,
    head: &str,
    file: Option<&Path>,
    github: &GithubFiles,
    json: bool,
) -> Result<Exit> {
    let head_sha = repo.commit_id(head).context("head")?;
    let tree = repo
        .text(["rev-parse", "--verify", &format!("{head_sha}^{{tree}}")])
        .context("head's tree")?;
    let named = github.named();
    if !named.is_empty() {
        let surfaces = surfaces::read_all(&named, &head_sha, &tree)?;
        let text = match file {
            Some(path) => Some((path, cites::find(&head_sha, &tree, &read_text(Some(path))?))),
            None => None,
        };
        return print_surfaces(head, &head_sha, &tree, &surfaces, text, json);
    }
    let text = read_text(file)?;
    let found = cites::find(&head_sha, &tree, &text);
    let print = || -> Result<()> {
        if json {
            #[derive(serde::Serialize)]
            struct Cited<'a> {
                head_rev: &'a str,
                result: &'a cites::Citations,
                cited: bool,
            }
            let body = Cited {
                head_rev: head,
                result: &found,
                cited: found.is_cited(),
            };
            crate::json::print("cites", None, &body)?;
        } else {
            outln!("head    {head_sha}  ({})", esc(head))?;
            outln!("tree    {tree}")?;
            if found.is_cited() {
                outln!("cited   yes: {}", list(&found.cited))?;
            } else {
                outln!("cited   NO")?;
            }
            if found.others.is_empty() {
                if found.cited.is_empty() {
                    outln!("others  none: the text holds no hex token of 7+ characters at all")?;
                } else {
                    outln!("others  none")?;
                }
            } else {
                outln!("others  {}", list(&found.others))?;
            }
        }
        Ok(())
    };
    finished(print(), Exit::from_held(found.is_cited()))
}

/// The review text of FILE, or of stdin without one, through the one input reader (a FIFO
/// nobody writes to ends at Ctrl-C; a folder or device is refused).
fn read_text(file: Option<&Path>) -> Result<String> {
    let bytes = match file {
        Some(path) => files::input::read(path).with_context(|| files::escape::path(path))?,
        None => files::input::read_stdin().context("reading standard input")?,
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Tokens as `abc1234 (line 3, commit)`.
fn list(ts: &[cites::Token]) -> String {
    ts.iter()
        .map(|t| match t.matched {
            Some(cites::Match::Commit) => format!("{} (line {}, commit)", t.text, t.line),
            Some(cites::Match::Tree) => format!("{} (line {}, tree)", t.text, t.line),
            None => format!("{} (line {})", t.text, t.line),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The answer over a pull request's surfaces (and the review text, when one is given too):
/// per surface, each item and how it cites the head or why not, and the surface's tokens that
/// match nothing. Exit 0 when some surface cites the head.
fn print_surfaces(
    head: &str,
    head_sha: &str,
    tree: &str,
    surfaces: &[Surface],
    text: Option<(&Path, cites::Citations)>,
    json: bool,
) -> Result<Exit> {
    let cited = surfaces.iter().any(Surface::cites_head)
        || text.as_ref().is_some_and(|(_, c)| c.is_cited());
    let print = || -> Result<()> {
        if json {
            #[derive(serde::Serialize)]
            struct Text<'a> {
                file: String,
                result: &'a cites::Citations,
            }
            #[derive(serde::Serialize)]
            struct Cited<'a> {
                head_rev: &'a str,
                head: &'a str,
                tree: &'a str,
                surfaces: &'a [Surface],
                #[serde(skip_serializing_if = "Option::is_none")]
                text: Option<Text<'a>>,
                cited: bool,
            }
            let body = Cited {
                head_rev: head,
                head: head_sha,
                tree,
                surfaces,
                text: text.as_ref().map(|(p, c)| Text {
                    file: p.display().to_string(),
                    result: c,
                }),
                cited,
            };
            return crate::json::print("cites", None, &body);
        }
        outln!("head    {head_sha}  ({})", esc(head))?;
        outln!("tree    {tree}")?;
        for s in surfaces {
            let citing = s.items.iter().filter(|i| i.cites_head()).count();
            outln!(
                "{} ({}): {}, {citing} cite the head",
                s.kind.title(),
                esc(&s.file),
                report::text::plural(s.items.len(), "item"),
            )?;
            for item in &s.items {
                let mark = if item.cites_head() { "cites" } else { "-    " };
                outln!("  {mark}  {}", describe(s.kind, item))?;
            }
            let others = s.others();
            if others.is_empty() {
                outln!("  others  none: no hex token of 7+ characters that matches nothing")?;
            } else {
                let shown: Vec<String> = others
                    .iter()
                    .map(|(i, t)| {
                        format!("{} ({}, line {})", t.text, esc(&i.label(s.kind)), t.line)
                    })
                    .collect();
                outln!("  others  {}", shown.join(", "))?;
            }
        }
        if let Some((path, found)) = &text {
            let path = path.display().to_string();
            if found.is_cited() {
                outln!(
                    "text ({}): cites the head: {}",
                    esc(&path),
                    list(&found.cited)
                )?;
            } else {
                outln!("text ({}): does not cite the head", esc(&path))?;
            }
            if !found.others.is_empty() {
                outln!("  others  {}", list(&found.others))?;
            }
        }
        let by: Vec<&str> = surfaces
            .iter()
            .filter(|s| s.cites_head())
            .map(|s| s.kind.title())
            .chain(text.iter().filter(|(_, c)| c.is_cited()).map(|_| "text"))
            .collect();
        if cited {
            outln!("cited   yes: {}", by.join(", "))?;
        } else {
            outln!("cited   NO: no surface cites the head or its tree")?;
        }
        Ok(())
    };
    finished(print(), Exit::from_held(cited))
}

/// One item's line: who and when, what its commit says, what its text says.
fn describe(kind: Kind, item: &surfaces::Item) -> String {
    let mut s = esc(&item.label(kind)).into_owned();
    let facts: Vec<String> = [&item.state, &item.at, &item.path]
        .into_iter()
        .flatten()
        .map(|f| esc(f).into_owned())
        .collect();
    if !facts.is_empty() {
        s.push_str(&format!(" ({})", facts.join(", ")));
    }
    let commit = match (kind.commit_field(), &item.commit) {
        (None, _) => "no commit_id (only its text can bind it)".to_string(),
        (Some(field), None) => format!("no {field}"),
        (Some(field), Some(_)) if item.commit_is_head => format!("{field} is the head"),
        (Some(field), Some(c)) => {
            let moved = if item.moved_to_head {
                " (its commit_id is the head: GitHub moved it there)"
            } else {
                ""
            };
            format!("{field} {} is not the head{moved}", esc(c))
        }
    };
    let text = if item.text.is_cited() {
        format!("its text cites it: {}", list(&item.text.cited))
    } else {
        "its text does not".to_string()
    };
    format!("{s}: {commit}; {text}")
}
