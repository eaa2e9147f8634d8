//! `probe clients` for a person: the table of clients (one row each: version, the size limit
//! in its unit, what happens above it, a cap) and the table of every limit kind each client
//! has (size, lines, tokens, the per-turn total), each with its unit and what happens above
//! it, or the reason it was not found. The runner ([`super::matrix`]) only builds the record.

use super::kinds::Finding;
use super::matrix::Matrix;
use report::table::Cell;
use report::{Painter, Table};

/// The matrix as stdout shows it, one rendering per `--format`.
pub(crate) struct Shown<'a>(pub &'a Matrix);

impl cmdline::Document for Shown<'_> {
    fn text(&self, paint: Painter) -> String {
        format!(
            "{}\n{}",
            table(self.0).render_painted(paint),
            limits_table(self.0).render_painted(paint)
        )
    }

    fn markdown(&self) -> String {
        format!(
            "## probe clients\n\n{}\n### Every limit\n\n{}",
            table(self.0).render_markdown(),
            limits_table(self.0).render_markdown()
        )
    }

    fn json(&self) -> anyhow::Result<String> {
        Ok(format!("{}\n", serde_json::to_string_pretty(self.0)?))
    }
}

/// `clients.txt`: both tables, never painted.
pub(crate) fn file_text(m: &Matrix) -> String {
    format!(
        "{}\n{}",
        table(m).render_text(),
        limits_table(m).render_text()
    )
}

/// What happens above the limit, in a few words: the verdict, where the text was changed, and
/// the start of the client's own note.
fn above(v: crate::bracket::Verdict, shape: Option<&crate::bracket::Shape>) -> String {
    match shape {
        Some(s) => {
            let place = serde_json::to_value(s.place)
                .ok()
                .and_then(|p| p.as_str().map(String::from))
                .unwrap_or_default();
            let note = s
                .note
                .as_deref()
                .map(|n| format!(" {}", report::text::clip(n, 60)))
                .unwrap_or_default();
            format!("{v} ({place}){note}")
        }
        None => v.to_string(),
    }
}

/// The table a person reads: one row per client, the status and the behaviour above coloured
/// by their kind.
pub(crate) fn table(m: &Matrix) -> Table {
    let mut t = Table::new([
        "client", "version", "model", "limit", "unit", "above", "cap", "status", "note",
    ]);
    // Within the text width: every column of words wraps inside itself (the widest first, the
    // note in practice), so a row stays one row however long a version or a note is.
    t.wrap(1).wrap(2).wrap(3).wrap(4).wrap(5).wrap(8);
    let dash = || "-".to_string();
    for r in &m.rows {
        let unit = r.unit.map(|u| match r.offset {
            Some(o) => format!("{u} (+{o} wrapper)"),
            None => u.to_string(),
        });
        // Tokens only where the fills disagree a little in bytes: a client estimating them.
        let limit = r.limit.map(|l| match (r.tokens_estimate, r.estimate) {
            (Some(t), true) => format!("~{l} (~{t} tokens)"),
            _ => l.to_string(),
        });
        t.row([
            Cell::from(r.client.name()),
            Cell::from(r.version.clone().unwrap_or_else(dash)),
            Cell::from(r.model.clone().unwrap_or_else(dash)),
            Cell::from(limit.unwrap_or_else(dash)),
            Cell::from(unit.unwrap_or_else(dash)),
            match r.above {
                Some(v) => Cell::styled(above(v, r.above_shape.as_ref()), v.style()),
                None => Cell::from(dash()),
            },
            Cell::from(r.suggested_cap.map(|c| c.to_string()).unwrap_or_else(dash)),
            Cell::styled(r.status.word(), r.status.style()),
            Cell::from(r.note.clone().unwrap_or_default()),
        ]);
    }
    t
}

/// Every kind of limit of every client run: one line per kind, found with its value, unit and
/// what happens above it, or why not ("not reachable: ...").
pub(crate) fn limits_table(m: &Matrix) -> Table {
    let mut t = Table::new(["client", "kind", "limit", "unit", "above", "note"]);
    // Within the text width: what happens above and the note wrap in their columns.
    t.wrap(4).wrap(5);
    for r in &m.rows {
        for l in &r.limits {
            let limit = match (l.found, l.limit) {
                (Finding::Found, Some(v)) => v.to_string(),
                (found, _) => found.word().to_string(),
            };
            let kind = match l.calls {
                Some(k) => format!("{} ({k} results)", l.kind.word()),
                None => l.kind.word().to_string(),
            };
            t.row([
                Cell::from(r.client.name()),
                Cell::from(kind),
                match l.found {
                    Finding::Found => Cell::from(limit),
                    _ => Cell::styled(limit, report::color::Style::Warn),
                },
                Cell::from(l.unit.clone().unwrap_or_else(|| "-".into())),
                match l.above {
                    Some(v) => Cell::styled(above(v, l.above_shape.as_ref()), v.style()),
                    None => Cell::from("-"),
                },
                Cell::from(l.note.clone().unwrap_or_default()),
            ]);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp::emit::Fill;

    #[test]
    fn what_happens_above_is_the_verdict_where_and_the_clients_note() {
        use crate::bracket::Verdict;
        let blocks = mcp::emit::emit_with_nonce(
            mcp::emit::EmitArgs {
                n: 20_000,
                fill: Fill::Ascii,
                blocks: 1,
            },
            "0badcafe",
        )
        .blocks;
        let w = &blocks[0];
        let got = format!("{}\n…9000 tokens truncated…\n{}", &w[..1000], &w[19_000..]);
        let shape = crate::bracket::compare_for_test(&blocks, &got).unwrap();
        assert_eq!(
            above(Verdict::Cut, Some(&shape)),
            "cut (middle) \"…9000 tokens truncated…\""
        );
        assert_eq!(above(Verdict::Saved, None), "saved");
    }

    #[test]
    fn every_limit_kind_is_a_line_found_with_its_unit_or_saying_why_not() {
        use super::super::kinds::{Limit, LimitKind};
        let limit = |kind, found, value: Option<u64>, note: &str| Limit {
            kind,
            found,
            limit: value,
            unit: value.map(|_| "utf16".to_string()),
            calls: (kind == LimitKind::Turn).then_some(20),
            above: value.map(|_| crate::bracket::Verdict::Saved),
            above_shape: None,
            note: Some(note.into()),
        };
        let mut matrix = super::super::matrix::one_row_for_test();
        matrix.rows[0].limits = vec![
            limit(LimitKind::Size, Finding::Found, Some(50_000), ""),
            limit(
                LimitKind::Tokens,
                Finding::NotReachable,
                None,
                "behind the save",
            ),
            limit(
                LimitKind::Turn,
                Finding::NoneFound,
                None,
                "whole up to 500000",
            ),
        ];
        let text = limits_table(&matrix).render_text();
        let lines: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].contains("size") && lines[0].contains("50000") && lines[0].contains("saved"),
            "{text}"
        );
        assert!(
            lines[1].contains("not reachable") && lines[1].ends_with("behind the save"),
            "{text}"
        );
        assert!(
            lines[2].contains("turn (20 results)") && lines[2].contains("none found"),
            "{text}"
        );
    }
}
