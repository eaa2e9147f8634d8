//! JSON that names no key twice in one object.
//!
//! RFC 8259 leaves an object with a repeated key to each reader: serde_json keeps the last,
//! other parsers the first or refuse it. A signed statement holding `"result": "FAILED"` and
//! then `"result": "PASSED"` would read as two different answers from the same signed bytes,
//! so such a statement is refused before anything is judged.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Checks that no object in the JSON text `bytes` repeats a key (at any depth); the error
/// names the key and where, as serde_json places it.
pub(crate) fn check(bytes: &[u8]) -> Result<(), serde_json::Error> {
    serde_json::from_slice::<Unique>(bytes).map(|_| ())
}

/// Any JSON value, read only to walk it.
struct Unique;

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unique, D::Error> {
        d.deserialize_any(Walk)
    }
}

struct Walk;

impl<'de> Visitor<'de> for Walk {
    type Value = Unique;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut seen = HashSet::new();
        // Keys as decoded: `"a"` and `"\u0061"` are one key to every reader.
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "the key {key:?} appears twice in one object (readers differ on which \
                     value counts)"
                )));
            }
            map.next_value::<Unique>()?;
        }
        Ok(Unique)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_at_any_depth_is_refused_and_named() {
        check(br#"{"a": [1, {"b": null, "c": true}], "d": 1.5}"#).unwrap();
        for bad in [
            r#"{"a": 1, "a": 2}"#,
            r#"{"p": {"result": "FAILED", "result": "PASSED"}}"#,
            r#"[{"x": {"result": 1, "r\u0065sult": 2}}]"#,
        ] {
            let e = check(bad.as_bytes()).unwrap_err().to_string();
            assert!(e.contains("appears twice in one object"), "{bad}: {e}");
        }
        // Not JSON at all is an error too, never a pass.
        assert!(check(b"{\"a\": ").is_err());
    }
}
