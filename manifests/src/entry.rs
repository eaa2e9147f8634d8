//! The values a manifest is made of: a digest, one entry (path + digest + the form its line
//! used), and the manifest itself.
//!
//! Paths are raw bytes, never `String`: a Unix file name may hold any byte but NUL, and a
//! manifest must name such a file exactly, so converting to UTF-8 anywhere here would lose
//! files. Lossy strings are only made at the edges, for people and JSON.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::{Serialize, Serializer};

/// A SHA-256 digest. Displays (and serializes) as 64 lowercase hex digits, as sha256sum
/// writes it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// The SHA-256 of `bytes` held in memory (a link's target, say).
    pub fn of(bytes: &[u8]) -> Digest {
        use sha2::Digest as _;
        Digest(sha2::Sha256::digest(bytes).into())
    }

    /// Reads exactly 64 hex digits, either case. Anything else is `None`.
    pub fn from_hex(hex: &[u8]) -> Option<Digest> {
        if hex.len() != 64 {
            return None;
        }
        // A table and one check at the end rather than a branch per digit: the digits of a
        // digest are random, so a branch on digit-or-letter is mispredicted half the time, and
        // a manifest of 100,000 lines spent more time here than opening its files.
        let mut out = [0u8; 32];
        let mut bad = 0u8;
        for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
            let (high, low) = (HEX[usize::from(pair[0])], HEX[usize::from(pair[1])]);
            bad |= (high | low) & NOT_HEX;
            *byte = (high << 4) | (low & 0xf);
        }
        (bad == 0).then_some(Digest(out))
    }

    /// The 64 lowercase hex digits, as sha256sum writes them: [`hex`] of the 32 bytes.
    ///
    /// ```
    /// let digest = manifests::Digest::of(b"abc");
    /// assert_eq!(
    ///     digest.to_hex(),
    ///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    /// );
    /// ```
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

/// Lowercase hex of any bytes, two digits a byte: the house's one hex encoder, for a digest
/// ([`Digest::to_hex`]) or a part of one (a short key from its first bytes).
///
/// ```
/// assert_eq!(manifests::hex(&[0x00, 0xab, 0x10, 0xff]), "00ab10ff");
/// assert_eq!(manifests::hex(&manifests::Digest::of(b"").0[..4]), "e3b0c442");
/// ```
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

/// Marks a byte that is not a hex digit in [`HEX`].
const NOT_HEX: u8 = 0x80;

/// Each byte's value as a hex digit (either case), or [`NOT_HEX`].
const HEX: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => NOT_HEX,
        };
        c += 1;
    }
    table
};

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

impl Serialize for Digest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

/// Which of sha256sum's line forms an entry was read from (or is to be written in).
///
/// The form changes nothing about what is checked (sha256sum reads every file in binary on
/// GNU systems); it is kept so a manifest read and written back comes out byte-identical.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// `HEX  PATH`, what `sha256sum FILE` writes.
    #[default]
    Text,
    /// `HEX *PATH`, what `sha256sum -b FILE` writes.
    Binary,
    /// `SHA256 (PATH) = HEX`, what `sha256sum --tag FILE` writes.
    Tagged,
    /// `HEX PATH` with one blank (the BSD `md5 -r` order), which no sha256sum writes but
    /// `sha256sum -c` reads when a file's first untagged line is so; only ever read, and
    /// written back as it was read (see `line`).
    Reversed,
}

/// One line of a manifest: a relative path (raw bytes) and the digest it must have.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The file name exactly as the file system knows it, unescaped.
    pub path: Vec<u8>,
    /// The expected SHA-256 of the file's content.
    pub digest: Digest,
    /// The line form; [`Form::Text`] unless read from another form.
    pub form: Form,
}

impl Entry {
    /// An entry in the default form (`HEX  PATH`).
    pub fn new(path: impl Into<Vec<u8>>, digest: Digest) -> Entry {
        Entry {
            path: path.into(),
            digest,
            form: Form::Text,
        }
    }

    /// The path as a [`Path`], byte for byte.
    pub fn os_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.path))
    }

    /// The path for people and JSON: invalid UTF-8 becomes U+FFFD.
    pub fn path_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.path)
    }
}

/// A parsed or generated manifest: entries in file order (duplicates allowed, as in
/// sha256sum).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The entries, in the order of the lines that held them.
    pub entries: Vec<Entry>,
}

impl Manifest {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no entries (never true for a parsed manifest).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Entry> {
        self.entries.iter()
    }
}

impl<'a> IntoIterator for &'a Manifest {
    type Item = &'a Entry;
    type IntoIter = std::slice::Iter<'a, Entry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_accepts_upper_case() {
        let hex = "00ff10aB".repeat(8);
        let d = Digest::from_hex(hex.as_bytes()).unwrap();
        assert_eq!(d.to_hex(), hex.to_lowercase());
    }

    #[test]
    fn hex_of_wrong_length_or_alphabet_is_refused() {
        assert_eq!(Digest::from_hex(&[b'a'; 63]), None);
        assert_eq!(Digest::from_hex(&[b'a'; 65]), None);
        assert_eq!(Digest::from_hex(&[b'g'; 64]), None);
        assert_eq!(Digest::from_hex(b""), None);
        // Every byte, in either digit of a pair: a hex digit gives its value, anything else
        // refuses the whole digest.
        for b in 0..=255u8 {
            let value = char::from(b).to_digit(16);
            for at in [0, 1, 62, 63] {
                let mut hex = [b'0'; 64];
                hex[at] = b;
                let got = Digest::from_hex(&hex).map(|d| d.0[at / 2]);
                let shift = if at % 2 == 0 { 4 } else { 0 };
                assert_eq!(got, value.map(|v| (v as u8) << shift), "{b:#x} at {at}");
            }
        }
    }
}
