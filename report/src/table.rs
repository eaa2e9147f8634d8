//! Tables a reviewer pastes: aligned plain text, TSV for scripts, GitHub-flavoured Markdown.
//!
//! Widths are counted in `char`s, not bytes, so a non-ASCII path does not skew the columns.
//!
//! Cells hold outside text (paths, suite and mutant names, messages), so every renderer passes
//! each cell through [`files::escape`]: a cell can never break its row into a second line that
//! reads like one gatekit wrote (`verdict   PASS`), nor reach a terminal as an escape sequence.
//!
//! Plain text keeps within [`TEXT_WIDTH`] columns, so a pasted table never wraps in a review:
//! columns the caller marks [`Table::wrap`] (names, claims) wrap inside their column when the
//! table would be wider, each continuation indented so it never starts a line of its own; and
//! columns marked [`Table::below`] (failed tests, counts: cells of any length) leave the grid
//! and follow under it, one line per row. TSV, Markdown and HTML keep every column.
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

/// The widest a text table is made, in characters.
pub const TEXT_WIDTH: usize = 120;

/// The narrowest a wrapped column is made, in characters.
const MIN_WRAP: usize = 12;

/// A header row and data rows of cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<Cell>>,
    wrap: Vec<usize>,
    below: Vec<usize>,
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
            wrap: Vec::new(),
            below: Vec::new(),
        }
    }

    /// Lets column `i` wrap inside itself in plain text, when the table would be wider than
    /// [`TEXT_WIDTH`].
    pub fn wrap(&mut self, i: usize) -> &mut Table {
        self.wrap.push(i);
        self
    }

    /// Moves column `i` under the table in plain text: `FIRST-CELL  HEADER: VALUE; ...`, one
    /// line per row that has a value there.
    pub fn below(&mut self, i: usize) -> &mut Table {
        self.below.push(i);
        self
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

    /// Columns padded to their widest cell, two spaces apart, with a rule under the header,
    /// within [`TEXT_WIDTH`] (see the module doc), then the [`Table::below`] columns.
    /// Every cell is [`files::escape::text`]: line breaks, tabs and other controls are shown
    /// as `\n`, `\t`, `\u{1b}`, so a cell never makes a line of its own.
    pub fn render_text(&self) -> String {
        self.render_painted(Painter::plain())
    }

    /// [`Table::render_text`] with each styled cell painted by `paint`, after padding.
    pub fn render_painted(&self, paint: Painter) -> String {
        let n = self.columns();
        let clean = |s: &str| files::escape::text(s).into_owned();
        let shown: Vec<usize> = (0..n).filter(|i| !self.below.contains(i)).collect();
        let header: Vec<String> = shown
            .iter()
            .map(|&i| clean(Self::cell(&self.headers, i)))
            .collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| shown.iter().map(|&i| clean(Self::data(r, i))).collect())
            .collect();
        let mut widths = vec![0usize; shown.len()];
        for r in std::iter::once(&header).chain(rows.iter()) {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        // Narrow the widest wrapping column, one character at a time, until the table fits or
        // every wrapping column is as narrow as its header and MIN_WRAP allow.
        let floor: Vec<usize> = header
            .iter()
            .map(|h| h.chars().count().max(MIN_WRAP))
            .collect();
        let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
        while total(&widths) > TEXT_WIDTH {
            let widest = (0..shown.len())
                .filter(|&j| self.wrap.contains(&shown[j]) && widths[j] > floor[j])
                .max_by_key(|&j| (widths[j], std::cmp::Reverse(j)));
            match widest {
                Some(j) => widths[j] -= 1,
                None => break,
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
            for (j, c) in cells.iter().enumerate().take(last) {
                match row.and_then(|r| self.style(r, shown[j])) {
                    Some(style) if !c.is_empty() => s.push_str(&paint.paint(c, style)),
                    _ => s.push_str(c),
                }
                if j + 1 < last {
                    let pad = widths[j].saturating_sub(c.chars().count());
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
            let parts: Vec<Vec<String>> = cells
                .iter()
                .zip(&widths)
                .map(|(c, &w)| wrap_cell(c, w))
                .collect();
            let height = parts.iter().map(Vec::len).max().unwrap_or(1);
            for k in 0..height {
                let cells: Vec<String> = parts
                    .iter()
                    .map(|p| p.get(k).cloned().unwrap_or_default())
                    .collect();
                line(&cells, Some(r), &mut out);
            }
        }
        let below = self.below_lines();
        if !below.is_empty() {
            out.push('\n');
            for l in below {
                // Continuations come indented from `wrap_cell`, within the width with it.
                for part in wrap_cell(&l, TEXT_WIDTH) {
                    out.push_str(part.trim_end());
                    out.push('\n');
                }
            }
        }
        out
    }

    /// The [`Table::below`] columns, one line per row that has a value in any of them.
    fn below_lines(&self) -> Vec<String> {
        let clean = |s: &str| files::escape::text(s).into_owned();
        let mut lines = Vec::new();
        for r in &self.rows {
            let parts: Vec<String> = self
                .below
                .iter()
                .filter(|&&i| !Self::data(r, i).is_empty())
                .map(|&i| {
                    format!(
                        "{}: {}",
                        clean(Self::cell(&self.headers, i)),
                        clean(Self::data(r, i))
                    )
                })
                .collect();
            if !parts.is_empty() {
                lines.push(format!("{}  {}", clean(Self::data(r, 0)), parts.join("; ")));
            }
        }
        lines
    }

    /// Tab-separated values with the header first; every cell is [`files::escape::text`], so
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
                .map(|i| files::escape::text(Self::cell(&self.headers, i)).into_owned())
                .collect(),
        );
        for r in &self.rows {
            line(
                (0..n)
                    .map(|i| files::escape::text(Self::data(r, i)).into_owned())
                    .collect(),
            );
        }
        out
    }

    /// A GitHub-flavoured Markdown table. Cells are Markdown already (callers quote outside
    /// text with the markdown module's `escape` or `code`, whose backslashes must survive), so
    /// here only what would break the row is made safe: control characters become visible
    /// escapes ([`files::escape::text`], which leaves backslashes be) and `|` is escaped.
    pub fn render_markdown(&self) -> String {
        let n = self.columns();
        let esc = |s: &str| files::escape::text(s).replace('|', "\\|");
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

/// `cell` cut into pieces of at most `width` characters, at a space or after a `/` where one
/// is, each piece
/// after the first indented by two spaces; one piece when it fits.
fn wrap_cell(cell: &str, width: usize) -> Vec<String> {
    let width = width.max(4);
    let mut out = Vec::new();
    let mut rest: Vec<char> = cell.chars().collect();
    let mut room = width;
    while rest.len() > room {
        // The last space, or the end of a path's folder, that leaves something on this
        // line; else a hard cut.
        let cut = (1..=room)
            .rev()
            .find(|&i| rest[i] == ' ' || rest[i - 1] == '/')
            .unwrap_or(room);
        let piece: String = rest[..cut].iter().collect();
        out.push(piece.trim_end().to_string());
        let skip = rest[cut..].iter().take_while(|&&c| c == ' ').count();
        rest.drain(..cut + skip);
        room = width - 2;
    }
    if out.is_empty() || !rest.is_empty() {
        out.push(rest.iter().collect());
    }
    out.iter()
        .enumerate()
        .map(|(k, p)| if k == 0 { p.clone() } else { format!("  {p}") })
        .collect()
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
    fn a_wide_table_keeps_within_the_width_and_every_column_survives_in_markdown() {
        let claim = "a short preview beside a save note is `saved` (Claude Code's persisted-output), a long head `truncated+saved`";
        let name = "persisted output keeps its preview short and names the saved file";
        let failed = (0..30)
            .map(|i| format!("tests/test_preview.py::test_case_{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut t = Table::new([
            "Mutant",
            "What it undoes",
            "Verdict",
            "Counts",
            "Failed tests",
        ]);
        t.wrap(0).wrap(1).below(3).below(4);
        t.row([
            name,
            claim,
            "killed",
            "42 pass -> 41 passed, 1 failed",
            failed.as_str(),
        ]);
        t.row(["short", "", "SURVIVED", "42 pass -> 42 passed", ""]);
        let text = t.render_text();
        for l in text.lines() {
            assert!(
                l.chars().count() <= TEXT_WIDTH,
                "{} wide: {l}\n{text}",
                l.chars().count()
            );
        }
        // Every word of the long cells is there, and the moved cells follow, one line per row.
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for w in claim.split(' ').chain(name.split(' ')) {
            assert!(flat.contains(w), "{w} missing:\n{text}");
        }
        assert!(
            text.contains("\nshort  Counts: 42 pass -> 42 passed\n"),
            "{text}"
        );
        assert!(
            flat.contains("names the saved file Counts: 42 pass -> 41 passed, 1 failed; Failed tests: tests/test_preview.py::test_case_0,"),
            "{text}"
        );
        assert!(flat.contains("test_case_29"), "{text}");
        // No continuation starts at the first column, where gatekit's own lines start.
        let below_start = text.find("\n\n").unwrap();
        for l in text[..below_start].lines().skip(2) {
            assert!(
                l.starts_with(name.split(' ').next().unwrap())
                    || l.starts_with("short")
                    || l.starts_with(' '),
                "{l}"
            );
        }
        // Markdown and TSV keep every column whole.
        let md = t.render_markdown();
        assert!(
            md.contains(claim) && md.contains(&failed) && md.contains("| Failed tests |"),
            "{md}"
        );
        assert!(t.render_tsv().contains(&failed));
    }

    #[test]
    fn a_table_that_fits_is_left_as_it_is() {
        let mut t = Table::new(["a", "b"]);
        t.wrap(0).wrap(1);
        t.row(["one two three", "x"]);
        assert_eq!(
            t.render_text(),
            "a              b\n-------------  -\none two three  x\n"
        );
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
