//! Anchors: the mutated text grown (to the enclosing node, to whole lines, to more lines)
//! until it occurs exactly once in the file, so the swap can only land in one place.

use tree_sitter::{Node, Point};

/// Where each line starts, for byte-to-line answers.
pub(crate) struct Lines {
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    pub fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines {
            starts,
            len: text.len(),
        }
    }

    /// The 1-based line of a byte offset.
    pub fn line_of(&self, byte: usize) -> usize {
        self.starts.partition_point(|&s| s <= byte).max(1)
    }

    /// The tree-sitter position (0-based row, byte column) of a byte offset.
    pub fn point(&self, byte: usize) -> Point {
        let row = self.line_of(byte) - 1;
        Point::new(row, byte - self.starts[row])
    }

    /// The first byte of the line holding `byte`.
    pub fn line_start(&self, byte: usize) -> usize {
        self.starts[self.line_of(byte) - 1]
    }

    /// The end of the line holding `byte` (its `\n`, or the end of the file).
    pub fn line_end(&self, byte: usize) -> usize {
        let line = self.line_of(byte);
        match self.starts.get(line) {
            Some(next) => next - 1,
            None => self.len,
        }
    }
}

/// How many lines beyond the mutated node's own an anchor may grow before the mutation is
/// given up: an anchor longer than that is no help to a reader.
pub(crate) const MAX_EXTRA_LINES: usize = 12;

/// Whether `needle` occurs exactly once in `hay` (overlapping occurrences count).
pub(crate) fn unique(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let Some(first) = hay.find(needle) else {
        return false;
    };
    let step = needle.chars().next().map_or(1, char::len_utf8);
    !hay[first + step..].contains(needle)
}

/// The smallest range around `start..end` whose text is unique in the file, growing to the
/// next enclosing node or to whole lines, whichever is shorter.
pub(crate) fn grow(
    root: Node,
    text: &str,
    lines: &Lines,
    start: usize,
    end: usize,
) -> Option<(usize, usize)> {
    let (mut a, mut b) = (start, end);
    let mut node = root.descendant_for_byte_range(start, end);
    // An anchor starts from a node a reader recognises: `a < b` rather than `<`, a string
    // rather than its content.
    while let Some(n) = node.filter(|n| !readable(*n, text)) {
        node = n.parent();
    }
    if let Some(n) = node {
        (a, b) = (a.min(n.start_byte()), b.max(n.end_byte()));
    }
    // Text that repeats (generated tables, many identical lines) would otherwise grow an
    // anchor a line at a time across the whole file, searching the file at every step.
    let last_line = lines.line_of(b) + MAX_EXTRA_LINES;
    let first_line = lines.line_of(a).saturating_sub(MAX_EXTRA_LINES);
    loop {
        if unique(text, &text[a..b]) {
            return Some((a, b));
        }
        if lines.line_of(b) > last_line || lines.line_of(a) < first_line {
            return None;
        }
        while let Some(n) = node {
            let r = n.byte_range();
            if r.start <= a && r.end >= b && (r.start < a || r.end > b) {
                break;
            }
            node = n.parent();
        }
        let by_node = node.map(|n| (n.start_byte(), n.end_byte()));
        let by_lines = wider_lines(text, lines, a, b);
        let next = match (by_node, by_lines) {
            (Some(n), Some(l)) => Some(if n.1 - n.0 <= l.1 - l.0 { n } else { l }),
            (n, l) => n.or(l),
        }?;
        (a, b) = next;
    }
}

/// The lines around `a..b`: first whole lines, then one more line below (or above at the end).
fn wider_lines(text: &str, lines: &Lines, a: usize, b: usize) -> Option<(usize, usize)> {
    let (la, lb) = (lines.line_start(a), lines.line_end(b.max(a)));
    if la < a || lb > b {
        return Some((la, lb));
    }
    if b < text.len() {
        return Some((a, lines.line_end(b + 1)));
    }
    if a > 0 {
        return Some((lines.line_start(a - 1), b));
    }
    None
}

/// A named node with a letter or digit in it, and not the inside of a string.
fn readable(node: Node, text: &str) -> bool {
    let kind = node.kind();
    node.is_named()
        && !kind.contains("content")
        && !kind.contains("fragment")
        && text
            .get(node.byte_range())
            .is_some_and(|t| t.chars().any(char::is_alphanumeric))
}
