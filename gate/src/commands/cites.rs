//! `gate cites`: does a review text cite this head (or its tree)?

use std::path::Path;

use anyhow::{Context, Result};

use report::escape::text as esc;
use report::outln;
use report::Exit;

use super::finished;
use crate::cites;
use candidate::git::Git;

pub(super) fn cmd_cites(repo: &Git, head: &str, file: Option<&Path>, json: bool) -> Result<Exit> {
    let head_sha = repo.commit_id(head).context("head")?;
    let text = match file {
        Some(path) => {
            let bytes = report::input::read(path).with_context(|| report::escape::path(path))?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        None => {
            let buf = report::input::read_stdin().context("reading standard input")?;
            String::from_utf8_lossy(&buf).into_owned()
        }
    };
    let tree = repo
        .text(["rev-parse", "--verify", &format!("{head_sha}^{{tree}}")])
        .context("head's tree")?;
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
            let list = |ts: &[cites::Token]| {
                ts.iter()
                    .map(|t| match t.matched {
                        Some(cites::Match::Commit) => {
                            format!("{} (line {}, commit)", t.text, t.line)
                        }
                        Some(cites::Match::Tree) => format!("{} (line {}, tree)", t.text, t.line),
                        None => format!("{} (line {})", t.text, t.line),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
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
