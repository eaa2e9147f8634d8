//! A manifest summary in the record is the line it always was (`12/12 OK`), read back as
//! the counts it was written from (manifests' reading is the exact inverse of its writing).
//! (`#[serde(with = "summary_text")]` on a `manifests::Summary` field.)

use serde::{Deserialize as _, Deserializer, Serializer};

pub(crate) fn serialize<S: Serializer>(
    summary: &manifests::Summary,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(summary)
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<manifests::Summary, D::Error> {
    let text = String::deserialize(deserializer)?;
    text.parse().map_err(serde::de::Error::custom)
}
