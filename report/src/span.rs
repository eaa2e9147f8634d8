//! Locating a problem in a config file the user wrote: byte offsets (as TOML parsers report
//! them) turned into the 1-based line numbers an error message names.

/// The 1-based line holding byte `offset` of `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines() {
        let text = "a = 1\nb = 2\n\nc = 3";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 6), 2);
        assert_eq!(line_of(text, 13), 4);
        assert_eq!(line_of(text, 999), 4);
    }
}
