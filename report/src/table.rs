//! Tables a reviewer pastes: aligned plain text, TSV for scripts, GitHub-flavoured Markdown.
//!
//! Widths are counted in `char`s, not bytes, so a non-ASCII path does not skew the columns.
//!
//! Cells hold outside text (paths, suite and mutant names, messages), so every renderer passes
//! each cell through [`crate::escape`]: a cell can never break its row into a second line that
//! reads like one gatekit wrote (`verdict   PASS`), nor reach a terminal as an escape sequence.

use std::fmt::Write as _;

/// A header row and data rows of cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<I, S>(headers: I) -> Table
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are blank, extra cells widen the table.
    pub fn row<I, S>(&mut self, cells: I) -> &mut Table
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn columns(&self) -> usize {
        self.rows
            .iter()
            .map(Vec::len)
            .chain(std::iter::once(self.headers.len()))
            .max()
            .unwrap_or(0)
    }

    fn cell(row: &[String], i: usize) -> &str {
        row.get(i).map(String::as_str).unwrap_or("")
    }

    /// Columns padded to their widest cell, two spaces apart, with a rule under the header.
    /// Every cell is [`crate::escape::text`]: line breaks, tabs and other controls are shown
    /// as `\n`, `\t`, `\u{1b}`, so one row stays one line.
    pub fn render_text(&self) -> String {
        let n = self.columns();
        let clean = |s: &str| crate::escape::text(s).into_owned();
        let header: Vec<String> = (0..n)
            .map(|i| clean(Self::cell(&self.headers, i)))
            .collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| (0..n).map(|i| clean(Self::cell(r, i))).collect())
            .collect();
        let mut widths = vec![0usize; n];
        for r in std::iter::once(&header).chain(rows.iter()) {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                if i + 1 == n {
                    s.push_str(c);
                } else {
                    let pad = widths[i] - c.chars().count();
                    let _ = write!(s, "{c}{}  ", " ".repeat(pad));
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&header, &mut out);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(&rule, &mut out);
        for r in &rows {
            line(r, &mut out);
        }
        out
    }

    /// Tab-separated values with the header first; every cell is [`crate::escape::text`], so
    /// a tab or line break inside a cell is `\t` or `\n` and never a separator.
    pub fn render_tsv(&self) -> String {
        let n = self.columns();
        let mut out = String::new();
        for r in std::iter::once(&self.headers).chain(self.rows.iter()) {
            let cells: Vec<String> = (0..n)
                .map(|i| crate::escape::text(Self::cell(r, i)).into_owned())
                .collect();
            out.push_str(&cells.join("\t"));
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured Markdown table. Cells are Markdown already (callers quote outside
    /// text with [`crate::markdown::escape`] or [`crate::markdown::code`], whose backslashes
    /// must survive), so here only what would break the row is made safe: control characters
    /// become visible escapes ([`crate::markdown::controls`]) and `|` is escaped.
    pub fn render_markdown(&self) -> String {
        let n = self.columns();
        let esc = |s: &str| crate::markdown::controls(s).replace('|', "\\|");
        let mut out = String::new();
        let mut line = |r: &[String]| {
            let cells: Vec<String> = (0..n).map(|i| esc(Self::cell(r, i))).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        };
        line(&self.headers);
        line(&vec!["---".to_string(); n]);
        for r in &self.rows {
            line(r);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_columns_align_by_characters() {
        let mut t = Table::new(["Suite", "Exit", "Counts"]);
        t.row(["bus", "0", "12 passed"]);
        t.row(["héllo-wörld", "1", "3 passed, 1 failed"]);
        let text = t.render_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Suite        Exit  Counts");
        assert_eq!(lines[1], "-----------  ----  ------------------");
        assert_eq!(lines[2], "bus          0     12 passed");
        assert_eq!(lines[3], "héllo-wörld  1     3 passed, 1 failed");
    }

    #[test]
    fn tsv_and_markdown_escape_their_separators() {
        let mut t = Table::new(["a", "b"]);
        t.row(["x\ty", "p|q"]);
        assert_eq!(t.render_tsv(), "a\tb\nx\\ty\tp|q\n");
        assert_eq!(
            t.render_markdown(),
            "| a | b |\n| --- | --- |\n| x\\ty | p\\|q |\n"
        );
    }

    #[test]
    fn no_cell_can_forge_a_line_or_an_escape_in_any_rendering() {
        let mut t = Table::new(["suite", "result"]);
        t.row(["x\nverdict   PASS", "\u{1b}[31mred\r"]);
        for (out, lines) in [
            (t.render_text(), 3),
            (t.render_tsv(), 2),
            (t.render_markdown(), 3),
        ] {
            assert_eq!(out.lines().count(), lines, "{out}");
            assert!(!out.lines().any(|l| l.starts_with("verdict")), "{out}");
            assert!(!out.contains('\u{1b}') && !out.contains('\r'), "{out:?}");
        }
    }
}
