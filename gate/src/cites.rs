//! `gate cites`: does a review text cite this exact head?
//!
//! Reviews cite commits by abbreviated hashes of whatever width the writer's git chose (7, 8,
//! 9, 12...), so matching is width-free: any hex token of 7 or more characters that the head's
//! full id starts with counts. An approval bound to a tree (the `tree` line of a gate summary)
//! cites every commit whose tree that is, so a token the head's tree id starts with counts too,
//! and the answer says which of the two it matched. The tokens that match nothing are listed too: they are the
//! positive control showing the scan found citations at all (an empty list on a text full of
//! hashes would mean the scan is broken, not that nobody cited the head).

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

/// What a cited token matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Match {
    /// The head's commit id starts with it.
    Commit,
    /// The head's tree id starts with it (an approval bound to the tree).
    Tree,
}

/// One hex token found in the text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Token {
    pub text: String,
    pub line: usize,
    /// What it matched, for a cited token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<Match>,
}

/// The answer.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Citations {
    pub head: String,
    /// The head's tree id.
    pub tree: String,
    /// Tokens that the head's id starts with.
    pub cited: Vec<Token>,
    /// Tokens that do not.
    pub others: Vec<Token>,
}

impl Citations {
    pub fn is_cited(&self) -> bool {
        !self.cited.is_empty()
    }
}

/// Every hex token of 7 or more characters, standing alone as a word.
pub(crate) fn tokens(text: &str) -> Vec<Token> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"\b[0-9a-fA-F]{7,}\b").expect("static pattern"));
    text.lines()
        .enumerate()
        .flat_map(|(i, line)| {
            re.find_iter(line).map(move |m| Token {
                text: m.as_str().to_string(),
                line: i + 1,
                matched: None,
            })
        })
        .collect()
}

/// Splits the text's tokens into those that `head` or `tree` (full ids) start with, each
/// marked with what it matched, and the rest.
pub(crate) fn find(head: &str, tree: &str, text: &str) -> Citations {
    let head = head.to_ascii_lowercase();
    let tree = tree.to_ascii_lowercase();
    let (mut cited, mut others) = (Vec::new(), Vec::new());
    for mut t in tokens(text) {
        let lower = t.text.to_ascii_lowercase();
        t.matched = if head.starts_with(&lower) {
            Some(Match::Commit)
        } else if tree.starts_with(&lower) {
            Some(Match::Tree)
        } else {
            None
        };
        if t.matched.is_some() {
            cited.push(t);
        } else {
            others.push(t);
        }
    }
    Citations {
        head,
        tree,
        cited,
        others,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d";
    const TREE: &str = "b335940e697e64712e89cd948b284e0890ecc7f9";

    fn find(head: &str, text: &str) -> Citations {
        super::find(head, TREE, text)
    }

    #[test]
    fn a_tree_id_cites_the_head_and_says_so() {
        let c = find(HEAD, "approved tree b335940e697e, and 9c1d2e3f");
        let got: Vec<_> = c
            .cited
            .iter()
            .map(|t| (t.text.as_str(), t.matched))
            .collect();
        assert_eq!(
            got,
            [
                ("b335940e697e", Some(Match::Tree)),
                ("9c1d2e3f", Some(Match::Commit))
            ]
        );
        assert!(!find(HEAD, "tree b335940f").is_cited());
    }

    #[test]
    fn any_width_from_seven_counts() {
        for cite in ["9c1d2e3", "9c1d2e3f", "9c1d2e3f4", "9C1D2E3F4A5B", HEAD] {
            let c = find(HEAD, &format!("gated {cite} today"));
            assert!(c.is_cited(), "{cite}");
        }
    }

    #[test]
    fn six_characters_or_a_wrong_digit_do_not() {
        assert!(!find(HEAD, "gated 9c1d2e").is_cited());
        assert!(!find(HEAD, "gated 9c1d2e4").is_cited());
        assert!(!find(HEAD, "gated 9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0").is_cited());
    }

    #[test]
    fn tokens_inside_words_are_not_citations_and_others_are_listed() {
        let c = find(HEAD, "x_9c1d2e3f y\nabc1234 and deadbeef0\n");
        assert!(!c.is_cited());
        let others: Vec<(&str, usize)> =
            c.others.iter().map(|t| (t.text.as_str(), t.line)).collect();
        assert_eq!(others, [("abc1234", 2), ("deadbeef0", 2)]);
    }
}
