//! Tables a reviewer pastes: aligned plain text, TSV for scripts, GitHub-flavoured Markdown.
//!
//! Widths are counted in `char`s, not bytes, so a non-ASCII path does not skew the columns.
//!
//! Cells hold outside text (paths, suite and mutant names, messages), so every renderer passes
//! each cell through [`crate::escape`]: a cell can never break its row into a second line that
//! reads like one gatekit wrote (`verdict   PASS`), nor reach a terminal as an escape sequence.
//!
//! A cell may carry a [`Style`], which the caller takes from the value's kind (a verdict's
//! `style()`), never from its word: the text renderer pads every cell first and paints after,
//! so colour never skews a column and a plain rendering is the same text without it.

use std::fmt::Write as _;

use crate::color::{Painter, Style};

/// One cell: its text and, for a painted rendering, its style.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    text: String,
    style: Option<Style>,
}

impl Cell {
    /// A cell painted in `style` where the rendering is painted.
    pub fn styled(text: impl Into<String>, style: Style) -> Cell {
        Cell {
            text: text.into(),
            style: Some(style),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, style: None }
    }
}

impl From<&String> for Cell {
    fn from(text: &String) -> Cell {
        Cell::from(text.clone())
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_string())
    }
}

impl From<std::borrow::Cow<'_, str>> for Cell {
    fn from(text: std::borrow::Cow<'_, str>) -> Cell {
        Cell::from(text.into_owned())
    }
}

/// A header row and data rows of cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<Cell>>,
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
    pub fn row<I, C>(&mut self, cells: I) -> &mut Table
    where
        I: IntoIterator<Item = C>,
        C: Into<Cell>,
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

    fn data(row: &[Cell], i: usize) -> &str {
        row.get(i).map(Cell::text).unwrap_or("")
    }

    fn style(&self, row: usize, i: usize) -> Option<Style> {
        self.rows.get(row)?.get(i)?.style
    }

    /// Columns padded to their widest cell, two spaces apart, with a rule under the header.
    /// Every cell is [`crate::escape::text`]: line breaks, tabs and other controls are shown
    /// as `\n`, `\t`, `\u{1b}`, so one row stays one line.
    pub fn render_text(&self) -> String {
        self.render_painted(Painter::plain())
    }

    /// [`Table::render_text`] with each styled cell painted by `paint`, after padding.
    pub fn render_painted(&self, paint: Painter) -> String {
        let n = self.columns();
        let clean = |s: &str| crate::escape::text(s).into_owned();
        let header: Vec<String> = (0..n)
            .map(|i| clean(Self::cell(&self.headers, i)))
            .collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| (0..n).map(|i| clean(Self::data(r, i))).collect())
            .collect();
        let mut widths = vec![0usize; n];
        for r in std::iter::once(&header).chain(rows.iter()) {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = String::new();
        let line = |cells: &[String], row: Option<usize>, out: &mut String| {
            // The padding goes after the paint, and trailing blanks are never written.
            let last = cells
                .iter()
                .rposition(|c| !c.is_empty())
                .map_or(0, |i| i + 1);
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate().take(last) {
                match row.and_then(|r| self.style(r, i)) {
                    Some(style) => s.push_str(&paint.paint(c, style)),
                    None => s.push_str(c),
                }
                if i + 1 < last {
                    let pad = widths[i] - c.chars().count();
                    let _ = write!(s, "{}  ", " ".repeat(pad));
                }
            }
            out.push_str(s.trim_end_matches(' '));
            out.push('\n');
        };
        line(&header, None, &mut out);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(&rule, None, &mut out);
        for (r, cells) in rows.iter().enumerate() {
            line(cells, Some(r), &mut out);
        }
        out
    }

    /// Tab-separated values with the header first; every cell is [`crate::escape::text`], so
    /// a tab or line break inside a cell is `\t` or `\n` and never a separator.
    pub fn render_tsv(&self) -> String {
        let n = self.columns();
        let mut out = String::new();
        let mut line = |cells: Vec<String>| {
            out.push_str(&cells.join("\t"));
            out.push('\n');
        };
        line(
            (0..n)
                .map(|i| crate::escape::text(Self::cell(&self.headers, i)).into_owned())
                .collect(),
        );
        for r in &self.rows {
            line(
                (0..n)
                    .map(|i| crate::escape::text(Self::data(r, i)).into_owned())
                    .collect(),
            );
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
            let cells: Vec<String> = r.iter().map(|c| c.text.clone()).collect();
            line(&cells);
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
    fn styled_cells_are_padded_first_and_painted_after() {
        let mut t = Table::new(["mutant", "verdict", "secs"]);
        t.row([
            Cell::from("a"),
            Cell::styled("killed", Style::Good),
            Cell::from("1.0"),
        ]);
        t.row([
            Cell::from("bb"),
            Cell::styled("SURVIVED", Style::Bad),
            Cell::from("2.0"),
        ]);
        let plain = t.render_text();
        let painted = t.render_painted(Painter::new(true));
        assert_eq!(crate::color::strip(&painted), plain);
        assert!(
            painted.contains("\x1b[1;32mkilled\x1b[0m    1.0"),
            "{painted:?}"
        );
        assert!(
            painted.contains("\x1b[1;31mSURVIVED\x1b[0m  2.0"),
            "{painted:?}"
        );
        assert_eq!(t.render_painted(Painter::plain()), plain);
        // The header and the rule are never painted; nor is any cell of a plain painter.
        assert!(!plain.contains('\x1b'));
        assert!(painted.lines().take(2).all(|l| !l.contains('\x1b')));
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
