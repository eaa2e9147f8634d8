//! How a name is escaped in a sha256sum line, both ways: a name holding a backslash, newline or
//! carriage return is written with `\\`, `\n` and `\r` and its line led by `\`, so one line
//! is always one entry. Manifest lines, result lines and error messages all escape this way.

/// Whether a name must be written in the escaped form (the line then starts with `\`).
pub(crate) fn needs_escape(name: &[u8]) -> bool {
    name.iter().any(|&b| matches!(b, b'\\' | b'\n' | b'\r'))
}

/// A name as sha256sum 9.x prints it inside an escaped line: `\` -> `\\`, newline -> `\n`,
/// CR -> `\r`; every other byte as is (unchanged for a name holding none of the three).
pub fn escape_name(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 2);
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
    out
}

/// Undoes [`escape_name`]. Only `\\`, `\n` and `\r` are escapes; any other, or a lone
/// trailing backslash, is malformed (GNU refuses them too).
pub(crate) fn unescape_name(name: &[u8]) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::with_capacity(name.len());
    let mut bytes = name.iter();
    while let Some(&b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'\\') => out.push(b'\\'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(_) => return Err("unknown escape in file name (only \\\\, \\n and \\r)"),
            None => return Err("file name ends with a lone backslash"),
        }
    }
    Ok(out)
}
