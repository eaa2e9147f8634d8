//! Lower-case hex of bytes: the one encoder for the digests and ids candidate writes (patch
//! and manifest sha256s, cache keys, kept-checkout ids), so they read the same everywhere.

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
