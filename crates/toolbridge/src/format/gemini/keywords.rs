//! What Gemini's `parameters` schema (an OpenAPI 3.0 subset) accepts, per
//! keyword and type, and small steps on one node's keywords.

use crate::format::schema::{self, JsonObject, types_of};
use serde_json::{Value, json};

/// The keywords Gemini's `parameters` schema accepts; nothing else is ever emitted.
pub(crate) const ALLOWED_KEYWORDS: [&str; 19] = [
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "anyOf",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "title",
    "default",
    "propertyOrdering",
];

/// The order keys are written in.
pub(crate) const OUTPUT_ORDER: [&str; 12] = [
    "type",
    "title",
    "description",
    "format",
    "nullable",
    "enum",
    "default",
    "items",
    "properties",
    "required",
    "propertyOrdering",
    "anyOf",
];

/// The types Gemini knows.
pub(crate) const TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

/// Keywords that describe rather than constrain; they stay on a union node.
pub(crate) const ANNOTATIONS: [&str; 3] = ["description", "title", "default"];

/// Whether a node conversion converts keyword `key` of a node of type `ty`
/// (the others are dropped, and noted).
pub(crate) fn handled(key: &str, ty: &str) -> bool {
    const ALWAYS: [&str; 7] = [
        "type",
        "nullable",
        "description",
        "title",
        "default",
        "const",
        "enum",
    ];
    let for_type: &[&str] = match ty {
        "string" => &["format", "minLength", "maxLength", "pattern"],
        "number" | "integer" => &["format", "minimum", "maximum"],
        "array" => &["items", "prefixItems", "minItems", "maxItems"],
        "object" => &["properties", "required", "propertyOrdering"],
        _ => &[],
    };
    ALWAYS.contains(&key) || for_type.contains(&key)
}

/// Whether a union branch only admits `null`.
pub(crate) fn is_null_schema(branch: &Value) -> bool {
    let Value::Object(b) = branch else {
        return false;
    };
    types_of(b) == ["null"]
        || b.get("const") == Some(&Value::Null)
        || b.get("enum") == Some(&Value::Array(vec![Value::Null]))
}

/// Whether keyword `key` applies to type `ty` (when a type list is split).
pub(crate) fn relevant(key: &str, ty: &str) -> bool {
    let keys: &[&str] = match ty {
        "object" => &[
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyOrdering",
        ],
        "array" => &["items", "prefixItems", "minItems", "maxItems"],
        "string" => &[
            "minLength",
            "maxLength",
            "pattern",
            "format",
            "enum",
            "const",
        ],
        "number" | "integer" => &["minimum", "maximum", "format", "enum", "const"],
        "boolean" => &["enum", "const"],
        _ => &[],
    };
    keys.contains(&key)
}

/// The type a schema without `type` evidently has.
pub(crate) fn infer_type(m: &JsonObject) -> Option<&'static str> {
    let has = |keys: &[&str]| keys.iter().any(|k| m.contains_key(*k));
    if has(&[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
    ]) {
        Some("object")
    } else if has(&["items", "prefixItems", "minItems", "maxItems"]) {
        Some("array")
    } else if has(&["minLength", "maxLength", "pattern", "format"]) {
        Some("string")
    } else if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        Some("number")
    } else {
        None
    }
}

pub(crate) fn copy_annotations(m: &JsonObject, out: &mut JsonObject) {
    annotate(out, schema::members(m, ["description", "title"]));
}

/// Copies a string `description` and `title`, in that order, to `out`.
pub(crate) fn annotate(out: &mut JsonObject, [description, title]: [Option<&Value>; 2]) {
    for (key, value) in [("description", description), ("title", title)] {
        if let Some(Value::String(s)) = value {
            out.insert(key.into(), Value::from(s.clone()));
        }
    }
}

/// Copies `value` to `out` as `key` if it is `ok`.
pub(crate) fn copy_if(
    out: &mut JsonObject,
    key: &str,
    value: Option<&Value>,
    ok: fn(&Value) -> bool,
) {
    if let Some(v) = value.filter(|v| ok(v)) {
        out.insert(key.into(), v.clone());
    }
}

/// The keywords of a node that a simple node conversion reads, found in one pass
/// over the node instead of hashing each name.
#[derive(Default)]
pub(crate) struct Keywords<'a> {
    pub(crate) nullable: Option<&'a Value>,
    pub(crate) ty: Option<&'a Value>,
    pub(crate) constant: Option<&'a Value>,
    pub(crate) values: Option<&'a Value>,
    pub(crate) default: Option<&'a Value>,
    pub(crate) description: Option<&'a Value>,
    pub(crate) title: Option<&'a Value>,
    pub(crate) format: Option<&'a Value>,
    pub(crate) min_length: Option<&'a Value>,
    pub(crate) max_length: Option<&'a Value>,
    pub(crate) pattern: Option<&'a Value>,
    pub(crate) minimum: Option<&'a Value>,
    pub(crate) maximum: Option<&'a Value>,
    pub(crate) items: Option<&'a Value>,
    pub(crate) prefix_items: Option<&'a Value>,
    pub(crate) min_items: Option<&'a Value>,
    pub(crate) max_items: Option<&'a Value>,
    pub(crate) properties: Option<&'a Value>,
    pub(crate) required: Option<&'a Value>,
    pub(crate) property_ordering: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    pub(crate) fn of(m: &'a JsonObject) -> Self {
        let mut kw = Keywords::default();
        for (key, value) in m {
            let slot = match key.as_str() {
                "nullable" => &mut kw.nullable,
                "type" => &mut kw.ty,
                "const" => &mut kw.constant,
                "enum" => &mut kw.values,
                "default" => &mut kw.default,
                "description" => &mut kw.description,
                "title" => &mut kw.title,
                "format" => &mut kw.format,
                "minLength" => &mut kw.min_length,
                "maxLength" => &mut kw.max_length,
                "pattern" => &mut kw.pattern,
                "minimum" => &mut kw.minimum,
                "maximum" => &mut kw.maximum,
                "items" => &mut kw.items,
                "prefixItems" => &mut kw.prefix_items,
                "minItems" => &mut kw.min_items,
                "maxItems" => &mut kw.max_items,
                "properties" => &mut kw.properties,
                "required" => &mut kw.required,
                "propertyOrdering" => &mut kw.property_ordering,
                _ => continue,
            };
            *slot = Some(value);
        }
        kw
    }
}

/// What stands in for a part that is cut (recursion, depth): its simple type,
/// or a plain object/array/string.
pub(crate) fn stub(m: &JsonObject) -> JsonObject {
    let types = types_of(m);
    let ty = ["string", "number", "integer", "boolean"]
        .into_iter()
        .find(|t| types.contains(t))
        .or_else(|| {
            if types.contains(&"object") || m.contains_key("properties") {
                Some("object")
            } else if types.contains(&"array") || m.contains_key("items") {
                Some("array")
            } else {
                None
            }
        })
        .unwrap_or("string");
    let mut out = JsonObject::new();
    out.insert("type".into(), Value::from(ty));
    if ty == "array" {
        out.insert("items".into(), json!({"type": "string"}));
    }
    copy_annotations(m, &mut out);
    out
}
