//! JSON Schemas generated from the record types (schemars), so a schema in `docs/schema/` can
//! never drift from what a tool writes: each tool's test regenerates its schema and compares it
//! with the committed file (`GATEKIT_BLESS=1` rewrites the file instead).
//!
//! The house rules for a record's schema: draft 2020-12; every object refuses unknown fields
//! (`#[schemars(deny_unknown_fields)]`); every field is required, `null` included (schemars
//! leaves an `Option` out of `required`; [`generate`] puts it back), except a field the tool
//! leaves out when empty, marked `#[schemars(extend("x-optional" = true))]`; patterns and
//! bounds on the fields whose text has a form (shas, timestamps).

use std::path::Path;

use schemars::JsonSchema;
use serde_json::Value;

/// The schema of `T` as a JSON value, with its `$id` (the committed file's address).
pub fn generate<T: JsonSchema>(id: &str) -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or(Value::Null);
    require_every_field(&mut value);
    if let Value::Object(fields) = &mut value {
        fields.insert("$id".into(), Value::String(id.into()));
    }
    value
}

/// Makes every property of every object schema in `schema` required, except those marked
/// `x-optional` (the mark is removed).
fn require_every_field(schema: &mut Value) {
    match schema {
        Value::Object(fields) => {
            if let Some(Value::Object(props)) = fields.get_mut("properties") {
                let mut required = Vec::new();
                for (name, prop) in props.iter_mut() {
                    let optional = prop
                        .as_object_mut()
                        .and_then(|p| p.remove("x-optional"))
                        .is_some_and(|v| v == Value::Bool(true));
                    if !optional {
                        required.push(Value::String(name.clone()));
                    }
                }
                fields.insert("required".into(), Value::Array(required));
            }
            for v in fields.values_mut() {
                require_every_field(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(require_every_field),
        _ => {}
    }
}

/// The text a schema is committed as: pretty JSON with a final line break.
pub fn to_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Compares `schema` with the committed file at `path`: `Ok` when they are the same; with
/// `GATEKIT_BLESS=1` in the environment the file is rewritten instead. `Err` says what to do.
pub fn check_committed(path: &Path, schema: &Value) -> Result<(), String> {
    let text = to_text(schema);
    if std::env::var_os("GATEKIT_BLESS").is_some_and(|v| v == "1") {
        return std::fs::write(path, &text).map_err(|e| format!("writing {}: {e}", path.display()));
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed == text {
        Ok(())
    } else {
        Err(format!(
            "{} is not the schema the record types generate: regenerate it with \
             GATEKIT_BLESS=1 cargo test (and review the diff)",
            path.display()
        ))
    }
}

/// The `$ref`-free schema of a string of the given form, for hand-written `JsonSchema` impls of
/// types that serialize as text (a timestamp, a summary line).
pub fn string_with_pattern(description: &str, pattern: &str) -> schemars::Schema {
    schemars::json_schema!({
        "description": description,
        "type": "string",
        "pattern": pattern,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[schemars(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        always: u32,
        written_as_null: Option<String>,
        #[schemars(extend("x-optional" = true))]
        sometimes: Option<String>,
    }

    #[test]
    fn a_generated_schema_refuses_unknown_fields_and_requires_what_is_always_written() {
        let s = generate::<Sample>("https://example.invalid/sample.json");
        assert_eq!(s["$id"], "https://example.invalid/sample.json");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(
            s["required"],
            serde_json::json!(["always", "written_as_null"])
        );
        assert!(s["properties"]["sometimes"].get("x-optional").is_none());
        let null = serde_json::json!({"type": "null"});
        let nullable = &s["properties"]["written_as_null"];
        assert!(
            nullable["type"] == serde_json::json!(["string", "null"])
                || nullable["anyOf"]
                    .as_array()
                    .is_some_and(|a| a.contains(&null)),
            "{nullable}"
        );
    }

    #[test]
    fn a_committed_schema_must_equal_the_generated_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let s = generate::<Sample>("x");
        std::fs::write(&path, to_text(&s)).unwrap();
        assert_eq!(check_committed(&path, &s), Ok(()));
        std::fs::write(&path, to_text(&s).replace("always", "alwayz")).unwrap();
        assert!(check_committed(&path, &s)
            .unwrap_err()
            .contains("GATEKIT_BLESS"));
    }
}
