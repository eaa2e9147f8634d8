//! Writing a manifest's bytes exactly as `sha256sum` (`-b`, `--tag`) writes them, each entry in
//! its own [`Form`], so a manifest read and written back comes out byte for byte.

use crate::entry::{Entry, Form, Manifest};
use crate::escape::{escape_name, needs_escape};

/// Writes one line, newline included, exactly as `sha256sum` (`-b`, `--tag`) would.
pub fn write_entry(out: &mut Vec<u8>, entry: &Entry) {
    let escaped = needs_escape(&entry.path);
    if escaped {
        out.push(b'\\');
    }
    let name = if escaped {
        escape_name(&entry.path)
    } else {
        entry.path.clone()
    };
    let hex = entry.digest.to_hex();
    match entry.form {
        Form::Text | Form::Binary | Form::Reversed => {
            out.extend_from_slice(hex.as_bytes());
            out.extend_from_slice(match entry.form {
                Form::Text => b"  ",
                Form::Binary => b" *",
                _ => b" ",
            });
            out.extend_from_slice(&name);
        }
        Form::Tagged => {
            out.extend_from_slice(b"SHA256 (");
            out.extend_from_slice(&name);
            out.extend_from_slice(b") = ");
            out.extend_from_slice(hex.as_bytes());
        }
    }
    out.push(b'\n');
}

/// The bytes `sha256sum` writes for these entries, each in its own [`Form`]: a manifest
/// written here is read back by `sha256sum -c --strict`, and one sha256sum wrote comes back
/// out byte for byte after [`crate::parse`].
pub fn write(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 80);
    for entry in entries {
        write_entry(&mut out, entry);
    }
    out
}

impl Manifest {
    /// The bytes `sha256sum` would write for these entries; see [`write()`].
    pub fn to_bytes(&self) -> Vec<u8> {
        write(&self.entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Digest;

    const HEX: &str = "50e721e49c013f00c62cf59f2163542a9d8df02464efeb615d31051b0fddc326";

    fn digest() -> Digest {
        Digest::from_hex(HEX.as_bytes()).unwrap()
    }

    #[test]
    fn writing_matches_sha256sum_byte_for_byte() {
        let d = digest();
        let mut tagged = Entry::new(&b"p)q"[..], d);
        tagged.form = Form::Tagged;
        let mut binary = Entry::new(&b"b"[..], d);
        binary.form = Form::Binary;
        let mut tagged_escaped = Entry::new(&b"n\nl"[..], d);
        tagged_escaped.form = Form::Tagged;
        let out = write(&[
            Entry::new(&b"sp ace"[..], d),
            Entry::new(&b"a\\b"[..], d),
            Entry::new(&b"c\rr"[..], d),
            binary,
            tagged,
            tagged_escaped,
        ]);
        let want = format!(
            "{HEX}  sp ace\n\\{HEX}  a\\\\b\n\\{HEX}  c\\rr\n{HEX} *b\nSHA256 (p)q) = {HEX}\n\\SHA256 (n\\nl) = {HEX}\n"
        );
        assert_eq!(String::from_utf8_lossy(&out), want);
        assert_eq!(crate::parse(&out).unwrap().to_bytes(), out);
    }
}
