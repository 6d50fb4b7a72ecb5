//! The spec's `processJsonSchema`: any value made a tool input schema every
//! provider accepts at the top, with what it changed noted for the provider
//! it is done for.

use super::JsonObject;
use super::node::{SeenNames, has_type, is_untyped, members};
use super::pointer::Pointer;
use super::refs::{inline, resolve_local_ref, resolve_pointer};
use crate::format::changes::{Change, ChangeKind, Notes};
use serde_json::Value;
use std::borrow::Cow;

/// What a provider refuses at the top of a tool's schema. Decides which of
/// processJsonSchema's changes are noted as ones the provider would have
/// rejected; each provider declares its own, so this module knows none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TopLevelRules {
    /// Whether the provider refuses the top-level keyword `key` (one of those
    /// processJsonSchema drops).
    pub(crate) refuses_keyword: fn(key: &str) -> bool,
    /// Whether it refuses top-level `allOf`/`anyOf`/`oneOf`.
    pub(crate) refuses_composition: bool,
    /// Whether it refuses `required` names that are not properties.
    pub(crate) refuses_unknown_required: bool,
}

impl TopLevelRules {
    /// A provider that takes JSON Schema but wants a plain object at the top:
    /// no composition or `not`/`enum` there (OpenAI, Anthropic).
    pub(crate) const OBJECT_ONLY: TopLevelRules = TopLevelRules {
        refuses_keyword: |key| TOP_LEVEL_COMPOSITION.contains(&key),
        refuses_composition: true,
        refuses_unknown_required: false,
    };
}

/// Top-level keywords that a provider wanting a plain object refuses.
pub(crate) const TOP_LEVEL_COMPOSITION: [&str; 5] = ["anyOf", "oneOf", "allOf", "not", "enum"];

/// The top-level keywords processJsonSchema reads; any other is dropped.
const KEPT: [&str; 11] = [
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "$defs",
    "definitions",
    "$ref",
    "allOf",
    "anyOf",
    "oneOf",
];

/// The schema of a tool that takes no arguments:
/// `{"type":"object","properties":{},"required":[]}`.
pub fn empty_object_schema() -> JsonObject {
    let mut out = JsonObject::new();
    out.insert("type".into(), Value::from("object"));
    out.insert("properties".into(), Value::Object(JsonObject::new()));
    out.insert("required".into(), Value::Array(Vec::new()));
    out
}

/// The spec's `processJsonSchema`: makes any value a tool input schema every
/// provider accepts at the top.
///
/// - not an object, or an empty one: the empty object schema;
/// - an object schema (`type: "object"`, or no type but `properties`): its
///   `properties`, `required` (only names that are properties) and
///   `description`, plus `additionalProperties` and the `$defs`/`definitions`
///   its `$ref`s point into; a top-level `$ref` is followed, and top-level
///   `allOf`/`anyOf`/`oneOf` branches are folded into the properties;
/// - anything else: wrapped as an object schema.
///
/// The result always has `type: "object"`, `properties` and `required`.
pub fn process_json_schema(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(input) => {
            normalize_with(input, TopLevelRules::OBJECT_ONLY, &mut Notes::discarding())
        }
        _ => empty_object_schema(),
    }
}

/// [`process_json_schema`] of a tool's input schema, recording what it
/// changed for a provider with `rules`.
pub(crate) fn normalize(
    input: &JsonObject,
    rules: TopLevelRules,
    notes: &mut Vec<Change>,
) -> JsonObject {
    Notes::record_into(notes, |notes| normalize_with(input, rules, notes))
}

/// [`normalize`], recording into `notes`.
pub(crate) fn normalize_with(
    input: &JsonObject,
    rules: TopLevelRules,
    notes: &mut Notes,
) -> JsonObject {
    Normalized::new(input, rules, notes).into_object()
}

/// What [`process_json_schema`] makes of a tool's input schema, before it is
/// built: its top-level members in order, each borrowed from the input where
/// it is kept unchanged.
///
/// Conversions that rewrite every node anyway (Gemini, OpenAI strict) read
/// this instead of a deep copy of the schema they would throw away.
#[derive(Debug)]
pub(crate) struct Normalized<'a> {
    members: Vec<(&'static str, Cow<'a, Value>)>,
}

/// The top-level members processJsonSchema reads, found in one pass.
struct Top<'a> {
    ty: Option<&'a Value>,
    description: Option<&'a Value>,
    properties: Option<&'a Value>,
    required: Option<&'a Value>,
    additional_properties: Option<&'a Value>,
    /// `allOf`, `anyOf`, `oneOf`, with their names.
    composition: [(&'static str, Option<&'a Value>); 3],
    /// `$defs` and `definitions`.
    defs: [Option<&'a Value>; 2],
}

impl<'a> Top<'a> {
    fn of(source: &'a JsonObject) -> Self {
        let [
            ty,
            description,
            properties,
            required,
            additional_properties,
            all_of,
            any_of,
            one_of,
            defs,
            definitions,
        ] = members(
            source,
            [
                "type",
                "description",
                "properties",
                "required",
                "additionalProperties",
                "allOf",
                "anyOf",
                "oneOf",
                "$defs",
                "definitions",
            ],
        );
        Top {
            ty,
            description,
            properties,
            required,
            additional_properties,
            composition: [("allOf", all_of), ("anyOf", any_of), ("oneOf", one_of)],
            defs: [defs, definitions],
        }
    }

    /// Whether the schema describes an object (typed so, or untyped with
    /// object keywords or nothing at all); anything else gets wrapped.
    fn object_like(&self) -> bool {
        has_type(self.ty, "object")
            || (is_untyped(self.ty)
                && (self.properties.is_some()
                    || self.required.is_some()
                    || self.additional_properties.is_some()
                    || self.ty.is_none()))
    }
}

impl<'a> Normalized<'a> {
    /// processJsonSchema of `input`, recording what it changed for a
    /// provider with `rules`.
    pub(crate) fn new(input: &'a JsonObject, rules: TopLevelRules, notes: &mut Notes) -> Self {
        if input.is_empty() {
            return Normalized {
                members: vec![
                    ("type", Cow::Owned(Value::from("object"))),
                    ("properties", Cow::Owned(Value::Object(JsonObject::new()))),
                    ("required", Cow::Owned(Value::Array(Vec::new()))),
                ],
            };
        }
        let [reference, defs, definitions] = members(input, ["$ref", "$defs", "definitions"]);
        let input_defs = [defs, definitions];
        // Follow a top-level `$ref` (some generators put the whole schema in $defs).
        if let Some(Value::String(reference)) = reference {
            match resolve_local_ref(input, reference) {
                Some(Value::Object(target)) => {
                    let merged = inline(target, input);
                    notes.add(
                        "",
                        ChangeKind::RefInlined,
                        true,
                        format_args!("followed top-level $ref `{reference}`"),
                    );
                    return Normalized::from_source(input, input_defs, &merged, rules, notes)
                        .into_owned();
                }
                _ => notes.add(
                    "",
                    ChangeKind::RefUnresolved,
                    true,
                    format_args!(
                        "top-level $ref `{reference}` does not point into this schema; dropped"
                    ),
                ),
            }
        }
        Normalized::from_source(input, input_defs, input, rules, notes)
    }

    /// The members taken from `source`: `input` itself, or what its
    /// top-level `$ref` points to merged with its other keywords.
    /// `input_defs` are the `$defs` and `definitions` of `input`.
    fn from_source(
        input: &'a JsonObject,
        input_defs: [Option<&'a Value>; 2],
        source: &'a JsonObject,
        rules: TopLevelRules,
        notes: &mut Notes,
    ) -> Self {
        let top = Top::of(source);
        let object_like = top.object_like();
        if !object_like {
            notes.add(
                "",
                ChangeKind::TypeRewritten,
                true,
                format_args!(
                    "top-level type {} is not object; wrapped as an object schema",
                    top.ty.map(Value::to_string).unwrap_or_default()
                ),
            );
        }
        let mut members = Vec::with_capacity(7);
        members.push(("type", Cow::Owned(Value::from("object"))));
        if let Some(description @ Value::String(_)) = top.description {
            members.push(("description", Cow::Borrowed(description)));
        }
        let mut properties = own_properties(&top, object_like, notes);
        let mut required: Vec<&str> = Vec::new();
        if object_like {
            push_required(&mut required, top.required);
        }
        fold_composition(input, &top, &mut properties, &mut required, rules, notes);
        keep_property_names(&mut required, &properties, rules, notes);
        members.push(("properties", properties));
        members.push((
            "required",
            Cow::Owned(Value::Array(
                required.into_iter().map(Value::from).collect(),
            )),
        ));
        if object_like && let Some(additional) = additional_properties(&top, notes) {
            members.push(("additionalProperties", Cow::Borrowed(additional)));
        }
        // Definitions stay where `$ref`s expect them, even when the root was itself a $ref.
        for (i, keyword) in ["$defs", "definitions"].into_iter().enumerate() {
            if let Some(d @ Value::Object(_)) = input_defs[i].or(top.defs[i]) {
                members.push((keyword, Cow::Borrowed(d)));
            }
        }
        note_dropped_keywords(source, rules, notes);
        Normalized { members }
    }

    /// Every member copied, so nothing is borrowed any more.
    fn into_owned(self) -> Normalized<'static> {
        Normalized {
            members: self
                .members
                .into_iter()
                .map(|(key, value)| (key, Cow::Owned(value.into_owned())))
                .collect(),
        }
    }

    /// The member `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.members
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// The names of the members, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.members.iter().map(|(k, _)| *k)
    }

    /// What the local reference `reference` points to, as
    /// [`resolve_local_ref`] finds it in the built schema.
    pub(crate) fn resolve(&self, reference: &str) -> Option<&Value> {
        resolve_pointer(reference, |first| self.get(first))
    }

    /// The schema built, borrowed members copied.
    pub(crate) fn to_object(&self) -> JsonObject {
        let mut out = JsonObject::with_capacity(self.members.len());
        for (key, value) in &self.members {
            out.insert((*key).to_owned(), value.as_ref().clone());
        }
        out
    }

    /// The schema built, borrowed members copied and owned ones moved.
    pub(crate) fn into_object(self) -> JsonObject {
        let mut out = JsonObject::with_capacity(self.members.len());
        for (key, value) in self.members {
            out.insert(key.to_owned(), value.into_owned());
        }
        out
    }
}

/// The top-level `properties`: borrowed when they are an object, else an
/// empty object (noted when a non-object was dropped). Copied later only if
/// composition adds to them.
fn own_properties<'a>(top: &Top<'a>, object_like: bool, notes: &mut Notes) -> Cow<'a, Value> {
    match top.properties {
        Some(props @ Value::Object(_)) if object_like => Cow::Borrowed(props),
        Some(_) if object_like => {
            notes.add(
                "/properties",
                ChangeKind::KeywordDropped,
                true,
                "`properties` is not an object; dropped",
            );
            Cow::Owned(Value::Object(JsonObject::new()))
        }
        _ => Cow::Owned(Value::Object(JsonObject::new())),
    }
}

/// Top-level composition, which providers refuse there: the properties of
/// every branch (a branch's `$ref` followed) are added to `properties`, and
/// the requirements of `allOf` branches, the only binding ones, to `required`.
fn fold_composition<'a>(
    input: &'a JsonObject,
    top: &Top<'a>,
    properties: &mut Cow<'a, Value>,
    required: &mut Vec<&'a str>,
    rules: TopLevelRules,
    notes: &mut Notes,
) {
    for (keyword, branches) in top.composition {
        let Some(branches) = branches else {
            continue;
        };
        let mut folded = 0usize;
        for branch in branches.as_array().into_iter().flatten() {
            let Value::Object(branch) = branch else {
                continue;
            };
            let branch = match branch.get("$ref") {
                Some(Value::String(r)) => match resolve_local_ref(input, r) {
                    Some(Value::Object(target)) => target,
                    _ => branch,
                },
                _ => branch,
            };
            if let Some(Value::Object(props)) = branch.get("properties") {
                for (name, schema) in props {
                    if properties.get(name).is_none()
                        && let Value::Object(p) = properties.to_mut()
                    {
                        p.insert(name.clone(), schema.clone());
                        folded += 1;
                    }
                }
            }
            if keyword == "allOf" {
                push_required(required, branch.get("required"));
            }
        }
        notes.add(
            format_args!("/{keyword}"),
            ChangeKind::CompositionRewritten,
            rules.refuses_composition,
            format_args!("top-level {keyword} folded into the object ({folded} properties added)"),
        );
    }
}

/// Drops the `required` names that are not properties.
fn keep_property_names(
    required: &mut Vec<&str>,
    properties: &Value,
    rules: TopLevelRules,
    notes: &mut Notes,
) {
    let before = required.len();
    required.retain(|name| properties.get(name).is_some());
    if required.len() != before {
        notes.add(
            "/required",
            ChangeKind::RequiredFiltered,
            rules.refuses_unknown_required,
            "dropped required names that are not properties",
        );
    }
}

/// The top-level `additionalProperties` when it is a boolean or a schema;
/// anything else is dropped, and noted.
fn additional_properties<'a>(top: &Top<'a>, notes: &mut Notes) -> Option<&'a Value> {
    match top.additional_properties {
        Some(v @ (Value::Bool(_) | Value::Object(_))) => Some(v),
        Some(_) => {
            notes.add(
                "/additionalProperties",
                ChangeKind::KeywordDropped,
                true,
                "`additionalProperties` is neither a boolean nor a schema; dropped",
            );
            None
        }
        None => None,
    }
}

/// Notes every top-level keyword processJsonSchema does not keep, saying
/// whether the provider would have refused it.
fn note_dropped_keywords(source: &JsonObject, rules: TopLevelRules, notes: &mut Notes) {
    for key in source.keys() {
        if KEPT.contains(&key.as_str()) {
            continue;
        }
        let rejects = (rules.refuses_keyword)(key);
        let why = if rejects {
            "; the provider refuses it"
        } else {
            " by processJsonSchema"
        };
        notes.add(
            Pointer::Root.key(key),
            ChangeKind::KeywordDropped,
            rejects,
            format_args!("top-level `{key}` dropped{why}"),
        );
    }
}

/// Appends the string names in `value` (a `required` array) not yet in `out`.
fn push_required<'a>(out: &mut Vec<&'a str>, value: Option<&'a Value>) {
    if let Some(Value::Array(names)) = value {
        let mut seen = SeenNames::default();
        for name in out.iter() {
            seen.insert(name);
        }
        for name in names.iter().filter_map(Value::as_str) {
            if seen.insert(name) {
                out.push(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().expect("test schemas are objects")
    }

    fn processed(v: Value) -> Value {
        Value::Object(process_json_schema(&v))
    }

    #[test]
    fn empty_and_non_objects_become_the_empty_object_schema() {
        let empty = json!({"type": "object", "properties": {}, "required": []});
        for input in [json!(null), json!({}), json!(3), json!("x"), json!([1])] {
            assert_eq!(processed(input), empty);
        }
    }

    #[test]
    fn object_schemas_keep_properties_required_and_description() {
        let input = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "title": "Args",
            "description": "d",
            "properties": {"a": {"type": "string"}},
            "required": ["a", "ghost", 7],
            "additionalProperties": false
        });
        assert_eq!(
            processed(input),
            json!({
                "type": "object",
                "description": "d",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn other_schemas_are_wrapped() {
        let mut notes = Vec::new();
        let out = normalize(
            &obj(json!({"type": "string"})),
            TopLevelRules::OBJECT_ONLY,
            &mut notes,
        );
        assert_eq!(
            Value::Object(out),
            json!({"type": "object", "properties": {}, "required": []})
        );
        assert!(
            notes
                .iter()
                .any(|n| n.kind == ChangeKind::TypeRewritten && n.would_reject)
        );
    }

    #[test]
    fn missing_type_with_properties_is_an_object() {
        assert_eq!(
            processed(json!({"properties": {"x": {}}})),
            json!({"type": "object", "properties": {"x": {}}, "required": []})
        );
    }

    #[test]
    fn top_level_ref_is_followed_and_defs_kept() {
        let input = json!({
            "$ref": "#/$defs/Args",
            "$defs": {
                "Args": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "required": ["n"]},
                "N": {"type": "integer"}
            }
        });
        let out = processed(input);
        assert_eq!(out["properties"], json!({"n": {"$ref": "#/$defs/N"}}));
        assert_eq!(out["required"], json!(["n"]));
        assert_eq!(out["$defs"]["N"], json!({"type": "integer"}));
    }

    #[test]
    fn top_level_composition_is_folded() {
        let input = json!({
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "allOf": [{"properties": {"x": {"type": "number"}}, "required": ["x"]}],
            "oneOf": [{"required": ["id"]}, {"properties": {"y": {"type": "boolean"}}, "required": ["y"]}]
        });
        let mut notes = Vec::new();
        let out = Value::Object(normalize(
            &obj(input),
            TopLevelRules::OBJECT_ONLY,
            &mut notes,
        ));
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {"id": {"type": "string"}, "x": {"type": "number"}, "y": {"type": "boolean"}},
                "required": ["x"]
            })
        );
        assert_eq!(
            notes
                .iter()
                .filter(|n| n.kind == ChangeKind::CompositionRewritten)
                .count(),
            2
        );
    }
}
