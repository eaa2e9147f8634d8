//! Pieces of GitHub-flavoured Markdown shared by the tools' pull-request summaries; the tables
//! themselves are [`Table::render_markdown`].
//!
//! A summary quotes what it cannot control (paths, commit subjects, finding texts), so those go
//! into code spans whose fence is longer than any run of backticks inside, and `|` is escaped
//! so a value cannot split a table row. Control characters (a line break, `\r`, an ANSI
//! escape) never pass raw: they are shown as visible escapes (`\n`, `\u{1b}`), so a file name
//! cannot start a line of its own in the summary.

use crate::table::Table;

/// `text` as an inline code span that survives backticks inside it; control characters are
/// shown as escapes (a code span shows backslashes as they are).
pub fn code(text: &str) -> String {
    let text = files::escape::text(text).into_owned();
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick needs a space to keep it apart from the fence.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// `text` as a fenced code block (`info` after the opening fence, `diff` for a hunk) whose fence
/// is longer than any run of backticks inside, so no line of it can close the block; control
/// characters other than the line breaks and tabs are shown as escapes.
pub fn fenced(info: &str, text: &str) -> String {
    let lines: Vec<String> = text
        .trim_end_matches('\n')
        .split('\n')
        // Tabs kept: Go and Makefiles indent with them, and a tab cannot end the block.
        .map(|l| {
            l.split('\t')
                .map(|part| files::escape::text(part).into_owned())
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect();
    let longest = lines
        .iter()
        .flat_map(|l| l.split(|c| c != '`').map(str::len))
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{}\n{fence}\n", lines.join("\n"))
}

/// Plain text with the characters Markdown would act on escaped (`|` is left to the table),
/// and control characters shown as escapes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if files::escape::is_unsafe(c) => out.push_str(&files::escape::text(&c.to_string())),
            c => out.push(c),
        }
    }
    out
}

/// A two-column table of facts (name, value); values are already Markdown.
pub fn facts<'a>(rows: impl IntoIterator<Item = (&'a str, String)>) -> String {
    let mut t = Table::new(["", ""]);
    for (name, value) in rows {
        t.row([format!("**{name}**"), value]);
    }
    t.render_markdown()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_blocks_outgrow_the_backticks_inside() {
        assert_eq!(fenced("diff", "-a\n+b\n"), "```diff\n-a\n+b\n```\n");
        assert_eq!(fenced("", "```\nx\u{1b}"), "````\n```\nx\\u{1b}\n````\n");
        assert_eq!(
            fenced("diff", "+\tif a {\r\n"),
            "```diff\n+\tif a {\\r\n```\n"
        );
    }

    #[test]
    fn code_spans_outgrow_the_backticks_inside() {
        assert_eq!(code("a.rs"), "`a.rs`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("two\nlines"), "`two\\nlines`");
        assert_eq!(code("\u{1b}[31m"), "`\\u{1b}[31m`");
    }

    #[test]
    fn text_escapes_what_markdown_acts_on() {
        assert_eq!(escape("a_b *c* | d"), "a\\_b \\*c\\* | d");
        assert_eq!(escape("x\nverdict\r"), "x\\nverdict\\r");
    }

    #[test]
    fn facts_are_a_two_column_table() {
        let t = facts([("base", code("f1aa")), ("tree", "x|y".to_string())]);
        assert_eq!(
            t,
            "|  |  |\n| --- | --- |\n| **base** | `f1aa` |\n| **tree** | x\\|y |\n"
        );
    }
}
