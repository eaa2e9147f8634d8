//! What "read strictly" means for a record read back: every field present. serde lets a
//! missing `Option` field through as `None`, which would let a truncated report pass for one
//! that says "nothing here"; a field read through [`required`] must be there, even as `null`.
//! (Unknown fields are refused by `#[serde(deny_unknown_fields)]` on each record.)

use serde::{Deserialize, Deserializer};

/// An `Option` field that must be present: `null` is `None`, a missing field is an error.
pub(crate) fn required<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}
