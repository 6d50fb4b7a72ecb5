//! OpenAI tool definitions: Chat Completions and the Responses API, with
//! optional strict mode.
//!
//! Non-strict OpenAI takes nearly any JSON Schema with an object at the top;
//! the one thing MCP servers commonly trip over is an array without `items`.
//! Strict mode (Structured Outputs) takes a subset: every object closed with
//! `additionalProperties: false` and listing every property in `required`
//! (optional ones become nullable), every node typed, no `allOf`/`not`/
//! conditionals/`patternProperties`, at most 10 levels, 5000 properties and
//! 1000 enum values, `$ref` only into `$defs`/`definitions`. A tool whose
//! schema cannot be brought into that subset without changing what it accepts
//! (free-form maps, objects without properties) is sent non-strict.

use super::check::{Change, ChangeKind, Notes};
use super::names::NameTable;
use super::options::FormatOptions;
use super::schema::{self, JsonObject, Normalized, Pointer, Target, resolve_local_ref};
use crate::tools::McpTool;
use serde_json::{Value, json};
use std::fmt;

/// The keywords strict mode accepts; everything else is removed.
pub(crate) const STRICT_KEYWORDS: [&str; 22] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "title",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// String formats strict mode accepts.
const STRICT_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords strict mode refuses and that cannot be dropped without changing
/// what the schema accepts.
const STRICT_UNSUPPORTED: [&str; 16] = [
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "additionalItems",
];

/// The order keys are written in.
const OUTPUT_ORDER: [&str; 10] = [
    "type",
    "title",
    "description",
    "enum",
    "const",
    "anyOf",
    "items",
    "properties",
    "required",
    "additionalProperties",
];

const STRICT_MAX_DEPTH: usize = 10;
/// Nodes one strict conversion may visit; `$ref`s merged with their siblings
/// could otherwise grow a small hostile schema exponentially.
const STRICT_MAX_NODES: usize = 10_000;
const STRICT_MAX_PROPERTIES: usize = 5000;
const STRICT_MAX_ENUM_VALUES: usize = 1000;

/// A tool's `parameters` for OpenAI.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiParameters {
    /// The JSON Schema to send.
    pub schema: Value,
    /// Whether the schema is in strict form (send `strict: true`).
    pub strict: bool,
}

/// Converts one tool's input schema; with `strict`, tries strict mode and
/// falls back to non-strict (noting why) when the schema cannot be made strict.
pub fn parameters(input: &JsonObject, strict: bool, notes: &mut Vec<Change>) -> OpenAiParameters {
    Notes::record_into(notes, |notes| convert(input, strict, notes))
}

/// [`parameters`], recording into `notes`.
fn convert(input: &JsonObject, strict: bool, notes: &mut Notes) -> OpenAiParameters {
    if strict {
        // Kept only if the schema can be made strict.
        let mut strict_notes = notes.fork();
        let normalized = Normalized::new(input, Target::OpenAiStrict, &mut strict_notes);
        match to_strict(&normalized, strict_notes) {
            Ok((schema, strict_notes)) => {
                notes.append(strict_notes);
                return OpenAiParameters {
                    schema,
                    strict: true,
                };
            }
            Err(reason) => {
                let schema = non_strict(input, notes);
                notes.add(
                    "",
                    ChangeKind::StrictFallback,
                    false,
                    format_args!("sent non-strict: {reason}"),
                );
                return OpenAiParameters {
                    schema,
                    strict: false,
                };
            }
        }
    }
    OpenAiParameters {
        schema: non_strict(input, notes),
        strict: false,
    }
}

/// Chat Completions tools: `[{"type":"function","function":{"name",
/// "description","parameters"}}]`, with `"strict"` in each function when
/// `options.strict` is set.
pub fn chat_tools(tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value {
    let out = tools
        .iter()
        .map(|tool| {
            // Each map is made before what goes in it, so memory is laid out
            // in the order dropping the result frees it (why: see schema::object).
            let mut tool_def = JsonObject::with_capacity(2);
            tool_def.insert("type".into(), Value::from("function"));
            let mut function = JsonObject::with_capacity(4);
            names.insert_name_and_description(&mut function, tool);
            let params = convert(&tool.input_schema, options.strict, &mut Notes::discarding());
            function.insert("parameters".into(), params.schema);
            if options.strict {
                function.insert("strict".into(), Value::Bool(params.strict));
            }
            tool_def.insert("function".into(), Value::Object(function));
            Value::Object(tool_def)
        })
        .collect();
    Value::Array(out)
}

/// Responses API tools: `[{"type":"function","name","description",
/// "parameters","strict"}]`. `strict` is always present because the Responses
/// API treats a missing one as `true`.
pub fn responses_tools(tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> Value {
    let out = tools
        .iter()
        .map(|tool| {
            // The map is made before what goes in it (why: see schema::object).
            let mut tool_def = JsonObject::with_capacity(5);
            tool_def.insert("type".into(), Value::from("function"));
            names.insert_name_and_description(&mut tool_def, tool);
            let params = convert(&tool.input_schema, options.strict, &mut Notes::discarding());
            tool_def.insert("parameters".into(), params.schema);
            tool_def.insert("strict".into(), Value::Bool(params.strict));
            Value::Object(tool_def)
        })
        .collect();
    Value::Array(out)
}

/// Removes the `null`s a strict-mode model sends for properties that the
/// tool's own schema leaves optional, at any depth, so the server sees them
/// absent as it expects (strict mode makes every property required and the
/// optional ones nullable). Safe for non-strict calls too.
pub fn strip_strict_nulls(arguments: &mut JsonObject, input_schema: &JsonObject) {
    strip_nulls(arguments, input_schema, input_schema, 0);
}

fn strip_nulls(args: &mut JsonObject, node: &JsonObject, root: &JsonObject, depth: usize) {
    if depth > schema::MAX_DEPTH {
        return;
    }
    let node = match node.get("$ref") {
        Some(Value::String(r)) if schema::is_root_ref(r) => root,
        Some(Value::String(r)) => match resolve_local_ref(root, r) {
            Some(Value::Object(target)) => target,
            _ => return,
        },
        _ => node,
    };
    let Some(Value::Object(props)) = node.get("properties") else {
        return;
    };
    let required: Vec<&str> = match node.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    args.retain(|k, v| !v.is_null() || required.contains(&k.as_str()) || !props.contains_key(k));
    for (key, value) in args.iter_mut() {
        let Some(Value::Object(prop)) = props.get(key) else {
            continue;
        };
        match value {
            Value::Object(inner) => strip_nulls(inner, prop, root, depth + 1),
            Value::Array(items) => {
                if let Some(Value::Object(item_schema)) = prop.get("items") {
                    for item in items.iter_mut() {
                        if let Value::Object(inner) = item {
                            strip_nulls(inner, item_schema, root, depth + 1);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// The non-strict schema: processJsonSchema, and `items` for arrays without.
fn non_strict(input: &JsonObject, notes: &mut Notes) -> Value {
    let mut normalized = schema::normalize_with(input, Target::OpenAi, notes);
    add_missing_items(&mut normalized, notes);
    Value::Object(normalized)
}

/// OpenAI answers "array schema missing items" to `{"type":"array"}`.
fn add_missing_items(schema: &mut JsonObject, notes: &mut Notes) {
    let lacks_items = |node: &JsonObject| {
        let [ty, items] = schema::members(node, ["type", "items"]);
        schema::has_type(ty, "array") && items.is_none()
    };
    // Nearly every schema has none: look before walking.
    if !schema::may_match(schema, &lacks_items) {
        return;
    }
    let mut root = Value::Object(std::mem::take(schema));
    schema::walk_mut(&mut root, &mut |node, path| {
        if lacks_items(node) {
            node.insert("items".into(), Value::Object(JsonObject::new()));
            notes.add(
                path,
                ChangeKind::ItemsAdded,
                true,
                "array without `items` got `items: {}`",
            );
        }
    });
    if let Value::Object(m) = root {
        *schema = m;
    }
}

/// The strict form of a normalized schema and the changes made, or why there
/// is none.
fn to_strict(normalized: &Normalized<'_>, notes: Notes) -> Result<(Value, Notes), String> {
    let mut cx = Strict {
        root: normalized,
        notes,
        properties: 0,
        enum_values: 0,
        expanding: Vec::new(),
        nodes: 0,
    };
    let mut out = cx.root(normalized)?;
    for keyword in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = normalized.get(keyword) {
            let mut strict_defs = JsonObject::new();
            let defs_path = Pointer::Root.key(keyword);
            for (name, def) in defs {
                let path = defs_path.key(name);
                strict_defs.insert(name.clone(), Value::Object(cx.node(def, &path, 1)?));
            }
            out.insert(keyword.into(), Value::Object(strict_defs));
        }
    }
    Ok((Value::Object(out), cx.notes))
}

/// State of one strict conversion.
struct Strict<'a> {
    /// The normalized schema, for resolving `$ref`s.
    root: &'a Normalized<'a>,
    /// Changes made so far; only kept when the conversion succeeds.
    notes: Notes,
    /// Properties seen, against OpenAI's total limit.
    properties: usize,
    /// Enum values seen, against OpenAI's total limit.
    enum_values: usize,
    /// `$ref`s being merged with their siblings, to stop a cycle.
    expanding: Vec<String>,
    /// Nodes visited, against [`STRICT_MAX_NODES`].
    nodes: usize,
}

impl Strict<'_> {
    /// Converts the normalized root. processJsonSchema made it an object
    /// schema with only members strict mode takes, so this takes the steps
    /// [`schema_object`](Self::schema_object) takes for it, reading the
    /// root's members where they are instead of a copy of the whole schema.
    fn root(&mut self, root: &Normalized<'_>) -> Result<JsonObject, String> {
        self.nodes += 1;
        // Written in the output order already: the root has no keyword
        // `ordered` would put after these.
        let mut out = JsonObject::with_capacity(5);
        out.insert("type".into(), Value::from("object"));
        if let Some(description @ Value::String(_)) = root.get("description") {
            out.insert("description".into(), description.clone());
        }
        self.object(
            root.get("additionalProperties"),
            root.get("properties"),
            root.get("required"),
            &mut out,
            &Pointer::Root,
            0,
        )?;
        Ok(schema::ordered(out, &OUTPUT_ORDER))
    }

    fn node(
        &mut self,
        value: &Value,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Result<JsonObject, String> {
        let Value::Object(m) = value else {
            return Err(format!("{} is `{value}`, not a schema object", at(path)));
        };
        self.schema_object(m, path, depth)
    }

    /// Like [`node`](Self::node), for a schema already known to be an object.
    fn schema_object(
        &mut self,
        m: &JsonObject,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Result<JsonObject, String> {
        if depth > STRICT_MAX_DEPTH {
            return Err(format!(
                "{} nests deeper than {STRICT_MAX_DEPTH} levels",
                at(path)
            ));
        }
        self.nodes += 1;
        if self.nodes > STRICT_MAX_NODES {
            return Err(format!("more than {STRICT_MAX_NODES} schema nodes"));
        }

        let [
            reference,
            all_of,
            any_of,
            one_of,
            ty,
            properties,
            items,
            values,
            constant,
            additional_properties,
            required,
        ] = schema::members(
            m,
            [
                "$ref",
                "allOf",
                "anyOf",
                "oneOf",
                "type",
                "properties",
                "items",
                "enum",
                "const",
                "additionalProperties",
                "required",
            ],
        );
        if let Some(reference) = reference {
            return self.reference(m, reference, path, depth);
        }
        if let Some(all) = all_of {
            let Value::Array(branches) = all else {
                return Err(format!("{} has a malformed allOf", at(path)));
            };
            let [Value::Object(only)] = branches.as_slice() else {
                return Err(format!(
                    "{} uses allOf, which strict mode refuses",
                    at(path)
                ));
            };
            let mut merged = m.clone();
            merged.remove("allOf");
            for (k, v) in only {
                merged.entry(k.clone()).or_insert_with(|| v.clone());
            }
            self.note(
                path,
                ChangeKind::CompositionRewritten,
                "single-branch allOf merged",
            );
            return self.node(&Value::Object(merged), path, depth);
        }
        if m.keys().any(|k| STRICT_UNSUPPORTED.contains(&k.as_str()))
            && let Some(keyword) = STRICT_UNSUPPORTED.iter().find(|k| m.contains_key(**k))
        {
            return Err(format!(
                "{} uses `{keyword}`, which strict mode refuses",
                at(path)
            ));
        }

        let mut out = JsonObject::with_capacity(m.len());
        match (any_of, one_of) {
            (Some(_), Some(_)) => {
                return Err(format!("{} has both anyOf and oneOf", at(path)));
            }
            (Some(branches), None) | (None, Some(branches)) => {
                let keyword = if one_of.is_some() { "oneOf" } else { "anyOf" };
                let Value::Array(branches) = branches else {
                    return Err(format!("{} has a malformed {keyword}", at(path)));
                };
                let mut strict_branches = Vec::with_capacity(branches.len());
                let keyword_path = path.key(keyword);
                for (i, branch) in branches.iter().enumerate() {
                    let p = keyword_path.index(i);
                    strict_branches.push(Value::Object(self.node(branch, &p, depth + 1)?));
                }
                if keyword == "oneOf" {
                    self.note(path, ChangeKind::CompositionRewritten, "oneOf became anyOf");
                }
                out.insert("anyOf".into(), Value::Array(strict_branches));
            }
            (None, None) => {}
        }

        match ty {
            None | Some(Value::String(_)) => {}
            Some(Value::Array(ts)) if ts.iter().all(Value::is_string) => {}
            Some(other) => return Err(format!("{} has type `{other}`", at(path))),
        }
        let untyped = schema::is_untyped(ty);
        let is_object = schema::has_type(ty, "object") || (untyped && properties.is_some());
        let is_array = schema::has_type(ty, "array") || (untyped && items.is_some());

        if is_object {
            self.object(
                additional_properties,
                properties,
                required,
                &mut out,
                path,
                depth,
            )?;
        }
        if is_array {
            match items {
                Some(items @ Value::Object(_)) => {
                    let p = path.key("items");
                    out.insert(
                        "items".into(),
                        Value::Object(self.node(items, &p, depth + 1)?),
                    );
                }
                Some(Value::Array(_)) => {
                    return Err(format!("{} uses tuple items", at(path)));
                }
                _ => {
                    return Err(format!("{} is an array without an items schema", at(path)));
                }
            }
        }

        if let Some(t) = ty {
            out.insert("type".into(), t.clone());
        } else if is_object {
            out.insert("type".into(), Value::from("object"));
        } else if is_array {
            out.insert("type".into(), Value::from("array"));
        }
        if let Some(values) = values {
            let Value::Array(values) = values else {
                return Err(format!("{} has a malformed enum", at(path)));
            };
            self.enum_values += values.len();
            if self.enum_values > STRICT_MAX_ENUM_VALUES {
                return Err(format!(
                    "more than {STRICT_MAX_ENUM_VALUES} enum values in total"
                ));
            }
            out.insert("enum".into(), Value::Array(values.clone()));
        }
        if let Some(c) = constant {
            out.insert("const".into(), c.clone());
        }
        if schema::members(&out, ["type", "anyOf", "enum", "const"])
            .iter()
            .all(Option::is_none)
        {
            return Err(format!("{} has no type", at(path)));
        }

        for (key, v) in m {
            let kept = match key.as_str() {
                "type"
                | "properties"
                | "required"
                | "additionalProperties"
                | "items"
                | "enum"
                | "const"
                | "anyOf"
                | "oneOf" => continue,
                "$defs" | "definitions" if depth == 0 => continue,
                "description" | "title" | "pattern" => v.is_string(),
                "format" => {
                    if v.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f)) {
                        true
                    } else {
                        self.notes.add(
                            path,
                            ChangeKind::FormatDropped,
                            true,
                            format_args!("format {v} is not one strict mode accepts"),
                        );
                        continue;
                    }
                }
                "multipleOf" | "maximum" | "exclusiveMaximum" | "minimum" | "exclusiveMinimum" => {
                    v.is_number()
                }
                "minItems" | "maxItems" => v.is_u64(),
                _ => false,
            };
            if kept {
                out.insert(key.clone(), v.clone());
            } else {
                self.notes.add(
                    path.key(key),
                    ChangeKind::KeywordDropped,
                    true,
                    format_args!("`{key}` is not accepted in strict mode"),
                );
            }
        }
        Ok(schema::ordered(out, &OUTPUT_ORDER))
    }

    /// A `$ref` node: kept when it stands alone, merged with its siblings otherwise.
    fn reference(
        &mut self,
        m: &JsonObject,
        reference: &Value,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Result<JsonObject, String> {
        let Value::String(reference) = reference else {
            return Err(format!("{} has a malformed $ref", at(path)));
        };
        let into_defs =
            reference.starts_with("#/$defs/") || reference.starts_with("#/definitions/");
        let resolved = self.root.resolve(reference);
        if m.len() == 1 {
            if schema::is_root_ref(reference) || (into_defs && resolved.is_some()) {
                let mut out = JsonObject::new();
                out.insert("$ref".into(), Value::from(reference.clone()));
                return Ok(out);
            }
            return Err(format!(
                "{} has a $ref strict mode cannot follow: `{reference}`",
                at(path)
            ));
        }
        if self.expanding.iter().any(|r| r == reference) {
            return Err(format!(
                "{} is a recursive $ref with sibling keywords",
                at(path)
            ));
        }
        let Some(Value::Object(target)) = resolved else {
            return Err(format!(
                "{} has a $ref strict mode cannot follow: `{reference}`",
                at(path)
            ));
        };
        let mut merged = target.clone();
        for (k, v) in m {
            if k != "$ref" {
                merged.insert(k.clone(), v.clone());
            }
        }
        self.expanding.push(reference.clone());
        let out = self.node(&Value::Object(merged), path, depth);
        self.expanding.pop();
        self.note(
            path,
            ChangeKind::RefInlined,
            format_args!("$ref `{reference}` with sibling keywords inlined"),
        );
        out
    }

    /// The object part of a node: closed, every property required, optional
    /// ones nullable.
    fn object(
        &mut self,
        additional_properties: Option<&Value>,
        properties: Option<&Value>,
        required: Option<&Value>,
        out: &mut JsonObject,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Result<(), String> {
        let closed = match additional_properties {
            None => false,
            Some(Value::Bool(false)) => true,
            Some(_) => {
                return Err(format!(
                    "{} is a free-form map (additionalProperties)",
                    at(path)
                ));
            }
        };
        let empty = JsonObject::new();
        let props = match properties {
            Some(Value::Object(p)) => p,
            None => &empty,
            Some(_) => return Err(format!("{} has malformed properties", at(path))),
        };
        if props.is_empty() && depth > 0 && !closed {
            return Err(format!(
                "{} is an object without properties (free-form)",
                at(path)
            ));
        }
        self.properties += props.len();
        if self.properties > STRICT_MAX_PROPERTIES {
            return Err(format!(
                "more than {STRICT_MAX_PROPERTIES} properties in total"
            ));
        }
        let required: &[Value] = match required {
            Some(Value::Array(names)) => names,
            _ => &[],
        };
        let mut strict_props = JsonObject::with_capacity(props.len());
        let properties_path = path.key("properties");
        for (name, prop) in props {
            let p = properties_path.key(name);
            // The key before its schema (why: see schema::object).
            let key = name.clone();
            let mut child = self.node(prop, &p, depth + 1)?;
            if !required.iter().any(|r| r.as_str() == Some(name)) {
                make_nullable(&mut child);
                self.note(
                    &p,
                    ChangeKind::StrictAdjusted,
                    "optional property made required and nullable",
                );
            }
            strict_props.insert(key, Value::Object(child));
        }
        if !closed {
            self.note(
                path,
                ChangeKind::StrictAdjusted,
                "object closed with additionalProperties: false",
            );
        }
        let all: Vec<Value> = strict_props.keys().cloned().map(Value::from).collect();
        out.insert("properties".into(), Value::Object(strict_props));
        out.insert("required".into(), Value::Array(all));
        out.insert("additionalProperties".into(), Value::Bool(false));
        Ok(())
    }

    fn note(&mut self, path: &Pointer<'_>, kind: ChangeKind, detail: impl fmt::Display) {
        let would_reject =
            kind == ChangeKind::StrictAdjusted || kind == ChangeKind::CompositionRewritten;
        self.notes.add(path, kind, would_reject, detail);
    }
}

/// Lets a strict schema also accept `null`.
fn make_nullable(node: &mut JsonObject) {
    let null_schema = || json!({"type": "null"});
    // Which keywords are there, in one pass; most nodes only have `type`.
    let [reference, any_of, ty, constant, values] =
        schema::members(node, ["$ref", "anyOf", "type", "const", "enum"]).map(|v| v.is_some());
    if reference {
        let inner = std::mem::take(node);
        node.insert(
            "anyOf".into(),
            Value::Array(vec![Value::Object(inner), null_schema()]),
        );
        return;
    }
    let mut done = false;
    if any_of && let Some(Value::Array(branches)) = node.get_mut("anyOf") {
        let is_null_schema = |b: &Value| {
            b.as_object().is_some_and(|b| {
                b.len() == 1 && b.get("type").and_then(Value::as_str) == Some("null")
            })
        };
        if !branches.iter().any(is_null_schema) {
            branches.push(null_schema());
        }
        done = true;
    }
    let ty = if ty { node.get_mut("type") } else { None };
    match ty {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            node.insert(
                "type".into(),
                Value::Array(vec![Value::String(t), Value::from("null")]),
            );
            done = true;
        }
        Some(Value::Array(ts)) => {
            if !ts.iter().any(|t| t == "null") {
                ts.push(Value::from("null"));
            }
            done = true;
        }
        _ => {}
    }
    if constant && let Some(c) = node.remove("const") {
        node.insert("enum".into(), Value::Array(vec![c]));
    }
    if (values || constant)
        && let Some(Value::Array(values)) = node.get_mut("enum")
    {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
        done = true;
    }
    if !done {
        let inner = std::mem::take(node);
        node.insert(
            "anyOf".into(),
            Value::Array(vec![Value::Object(inner), null_schema()]),
        );
    }
}

fn at(path: &Pointer<'_>) -> String {
    if path.is_root() {
        "the schema".to_owned()
    } else {
        format!("`{path}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().expect("test schemas are objects")
    }

    fn strict(v: Value) -> (OpenAiParameters, Vec<Change>) {
        let mut notes = Vec::new();
        let p = parameters(&obj(v), true, &mut notes);
        (p, notes)
    }

    #[test]
    fn arrays_without_items_get_items() {
        let mut notes = Vec::new();
        let p = parameters(
            &obj(json!({"type": "object", "properties": {"xs": {"type": "array"}}})),
            false,
            &mut notes,
        );
        assert!(!p.strict);
        assert_eq!(
            p.schema["properties"]["xs"],
            json!({"type": "array", "items": {}})
        );
        assert_eq!(notes[0].path, "/properties/xs");
    }

    #[test]
    fn strict_closes_objects_and_makes_optional_nullable() {
        let (p, _) = strict(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "age": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "mode": {"enum": ["a", "b"]},
                "point": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                    "required": ["x"]
                }
            },
            "required": ["name"]
        }));
        assert!(p.strict);
        assert_eq!(
            p.schema,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": ["integer", "null"]},
                    "tags": {"type": ["array", "null"], "items": {"type": "string"}},
                    "mode": {"enum": ["a", "b", null]},
                    "point": {
                        "type": ["object", "null"],
                        "properties": {"x": {"type": "number"}, "y": {"type": ["number", "null"]}},
                        "required": ["x", "y"],
                        "additionalProperties": false
                    }
                },
                "required": ["name", "age", "tags", "mode", "point"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn strict_keeps_refs_into_defs_and_strictifies_them() {
        let (p, _) = strict(json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "string", "default": "x"}},
                "required": ["v"]
            }}
        }));
        assert!(p.strict);
        assert_eq!(
            p.schema["properties"]["node"],
            json!({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]})
        );
        assert_eq!(
            p.schema["$defs"]["Node"],
            json!({
                "type": "object",
                "properties": {
                    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                    "v": {"type": "string"}
                },
                "required": ["next", "v"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn strict_falls_back_for_free_form_maps() {
        for schema in [
            json!({"type": "object", "properties": {"m": {"type": "object"}}}),
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": true}}}),
            json!({"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^x": {}}}}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "properties": {"any": {}}}),
            json!({"type": "object", "properties": {"xs": {"type": "array"}}}),
        ] {
            let (p, notes) = strict(schema.clone());
            assert!(!p.strict, "{schema}");
            assert!(
                notes.iter().any(|n| n.kind == ChangeKind::StrictFallback),
                "{schema}"
            );
            assert!(
                p.schema.get("additionalProperties") != Some(&json!(false))
                    || schema.get("additionalProperties").is_some()
            );
        }
    }

    #[test]
    fn strict_allows_tools_without_arguments() {
        let (p, _) = strict(json!({"type": "object"}));
        assert!(p.strict);
        assert_eq!(
            p.schema,
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
    }

    #[test]
    fn strict_rewrites_one_of_and_drops_unsupported_formats() {
        let (p, notes) = strict(json!({
            "type": "object",
            "properties": {
                "v": {"oneOf": [{"type": "string", "format": "uri"}, {"type": "integer"}]}
            },
            "required": ["v"]
        }));
        assert!(p.strict);
        assert_eq!(
            p.schema["properties"]["v"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert!(notes.iter().any(|n| n.kind == ChangeKind::FormatDropped));
    }

    #[test]
    fn nulls_for_optional_properties_are_removed_before_calling() {
        let schema = obj(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "head": {"type": "number"},
                "keep": {"type": ["string", "null"]},
                "opts": {"$ref": "#/$defs/Opts"},
                "edits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                    "required": ["a"]
                }}
            },
            "required": ["path", "keep"],
            "$defs": {"Opts": {"type": "object", "properties": {"x": {"type": "number"}}}}
        }));
        let mut args = obj(json!({
            "path": "/a", "head": null, "keep": null, "extra": null,
            "opts": {"x": null},
            "edits": [{"a": null, "b": null}]
        }));
        strip_strict_nulls(&mut args, &schema);
        assert_eq!(
            Value::Object(args),
            json!({"path": "/a", "keep": null, "extra": null, "opts": {}, "edits": [{"a": null}]})
        );
    }

    #[test]
    fn chat_and_responses_shapes() {
        let tools = vec![McpTool {
            id: McpTool::id_for("s", "t"),
            name: "t".into(),
            description: "does t".into(),
            input_schema: Arc::new(obj(
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            )),
            server_id: "s".into(),
            server_name: "S".into(),
        }];
        let names = NameTable::for_tools(&tools);
        let params =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert_eq!(
            chat_tools(&tools, &names, &FormatOptions::default()),
            json!([{"type": "function", "function": {"name": "mcp__s__t", "description": "does t", "parameters": params}}])
        );
        assert_eq!(
            responses_tools(&tools, &names, &FormatOptions::default()),
            json!([{"type": "function", "name": "mcp__s__t", "description": "does t", "parameters": params, "strict": false}])
        );
        let strict = FormatOptions {
            strict: true,
            ..FormatOptions::default()
        };
        let chat = chat_tools(&tools, &names, &strict);
        assert_eq!(chat[0]["function"]["strict"], json!(true));
        assert_eq!(
            chat[0]["function"]["parameters"]["additionalProperties"],
            json!(false)
        );
    }
}
