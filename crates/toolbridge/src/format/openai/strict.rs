//! OpenAI strict mode (Structured Outputs): every object closed with
//! `additionalProperties: false` and listing every property in `required`
//! (optional ones become nullable), every node typed, no `allOf`/`not`/
//! conditionals/`patternProperties`, at most 10 levels, 5000 properties and
//! 1000 enum values, `$ref` only into `$defs`/`definitions`. A schema that
//! cannot be brought into that subset without changing what it accepts
//! (free-form maps, objects without properties) has no strict form.

use crate::format::changes::{ChangeKind, Notes};
use crate::format::schema::{self, JsonObject, Normalized, Pointer, SeenNames, resolve_local_ref};
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

/// The strict form of a normalized schema and the changes made, or why there
/// is none.
pub(crate) fn to_strict(
    normalized: &Normalized<'_>,
    notes: Notes,
) -> Result<(Value, Notes), String> {
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
        self.spend(path, depth)?;
        let kw = Keywords::of(m);
        if let Some(reference) = kw.reference {
            return self.reference(m, reference, path, depth);
        }
        if let Some(all) = kw.all_of {
            return self.single_all_of(m, all, path, depth);
        }
        refuse_unsupported(m, path)?;

        let mut out = JsonObject::with_capacity(m.len());
        if let Some(branches) = self.union(&kw, path, depth)? {
            out.insert("anyOf".into(), branches);
        }
        check_type(kw.ty, path)?;
        let untyped = schema::is_untyped(kw.ty);
        let is_object = schema::has_type(kw.ty, "object") || (untyped && kw.properties.is_some());
        let is_array = schema::has_type(kw.ty, "array") || (untyped && kw.items.is_some());
        if is_object {
            self.object(
                kw.additional_properties,
                kw.properties,
                kw.required,
                &mut out,
                path,
                depth,
            )?;
        }
        if is_array {
            out.insert("items".into(), self.items(kw.items, path, depth)?);
        }
        if let Some(t) = kw.ty {
            out.insert("type".into(), t.clone());
        } else if is_object {
            out.insert("type".into(), Value::from("object"));
        } else if is_array {
            out.insert("type".into(), Value::from("array"));
        }
        self.values(kw.values, kw.constant, &mut out, path)?;
        if schema::members(&out, ["type", "anyOf", "enum", "const"])
            .iter()
            .all(Option::is_none)
        {
            return Err(format!("{} has no type", at(path)));
        }
        self.keep_annotations(m, &mut out, path, depth);
        Ok(schema::ordered(out, &OUTPUT_ORDER))
    }

    /// Counts one node against the depth and node limits.
    fn spend(&mut self, path: &Pointer<'_>, depth: usize) -> Result<(), String> {
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
        Ok(())
    }

    /// An `allOf` node: strict mode refuses `allOf`, but a single branch is
    /// merged into the node (the node's own keywords win).
    fn single_all_of(
        &mut self,
        m: &JsonObject,
        all: &Value,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Result<JsonObject, String> {
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
        self.node(&Value::Object(merged), path, depth)
    }

    /// `anyOf` or `oneOf` (not both): every branch made strict, as `anyOf`.
    fn union(
        &mut self,
        kw: &Keywords<'_>,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Result<Option<Value>, String> {
        let (keyword, branches) = match (kw.any_of, kw.one_of) {
            (Some(_), Some(_)) => return Err(format!("{} has both anyOf and oneOf", at(path))),
            (Some(branches), None) => ("anyOf", branches),
            (None, Some(branches)) => ("oneOf", branches),
            (None, None) => return Ok(None),
        };
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
        Ok(Some(Value::Array(strict_branches)))
    }

    /// The strict `items` of an array node, which must have one schema.
    fn items(
        &mut self,
        items: Option<&Value>,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Result<Value, String> {
        match items {
            Some(items @ Value::Object(_)) => {
                let p = path.key("items");
                Ok(Value::Object(self.node(items, &p, depth + 1)?))
            }
            Some(Value::Array(_)) => Err(format!("{} uses tuple items", at(path))),
            _ => Err(format!("{} is an array without an items schema", at(path))),
        }
    }

    /// `enum` and `const`, kept as they are within the enum budget.
    fn values(
        &mut self,
        values: Option<&Value>,
        constant: Option<&Value>,
        out: &mut JsonObject,
        path: &Pointer<'_>,
    ) -> Result<(), String> {
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
        Ok(())
    }

    /// Copies the node's other keywords strict mode accepts (annotations,
    /// string and number constraints, accepted formats); notes each dropped.
    fn keep_annotations(
        &mut self,
        m: &JsonObject,
        out: &mut JsonObject,
        path: &Pointer<'_>,
        depth: usize,
    ) {
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
        // Each inlined reference is a level of recursion here, though not of
        // the output: a long chain of them must not exhaust the stack.
        if self.expanding.len() >= schema::MAX_DEPTH {
            return Err(format!(
                "{} follows more than {} $refs with sibling keywords",
                at(path),
                schema::MAX_DEPTH
            ));
        }
        let Some(Value::Object(target)) = resolved else {
            return Err(format!(
                "{} has a $ref strict mode cannot follow: `{reference}`",
                at(path)
            ));
        };
        let merged = schema::inline(target, m);
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
        let mut required_names = SeenNames::default();
        if let Some(Value::Array(names)) = required {
            for name in names.iter().filter_map(Value::as_str) {
                required_names.insert(name);
            }
        }
        let mut strict_props = JsonObject::with_capacity(props.len());
        let properties_path = path.key("properties");
        for (name, prop) in props {
            let p = properties_path.key(name);
            // The key before its schema (why: see schema::object).
            let key = name.clone();
            let mut child = self.node(prop, &p, depth + 1)?;
            if !required_names.contains(name) {
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

/// The keywords of a node that strict conversion reads, found in one pass.
struct Keywords<'a> {
    reference: Option<&'a Value>,
    all_of: Option<&'a Value>,
    any_of: Option<&'a Value>,
    one_of: Option<&'a Value>,
    ty: Option<&'a Value>,
    properties: Option<&'a Value>,
    items: Option<&'a Value>,
    values: Option<&'a Value>,
    constant: Option<&'a Value>,
    additional_properties: Option<&'a Value>,
    required: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    fn of(m: &'a JsonObject) -> Self {
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
        Keywords {
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
        }
    }
}

/// Refuses a node with a keyword strict mode does not take and that cannot
/// be dropped without changing what the schema accepts.
fn refuse_unsupported(m: &JsonObject, path: &Pointer<'_>) -> Result<(), String> {
    // Nearly every node has none: its few keys are compared before any lookup.
    if !m.keys().any(|k| STRICT_UNSUPPORTED.contains(&k.as_str())) {
        return Ok(());
    }
    match STRICT_UNSUPPORTED.iter().find(|k| m.contains_key(**k)) {
        Some(keyword) => Err(format!(
            "{} uses `{keyword}`, which strict mode refuses",
            at(path)
        )),
        None => Ok(()),
    }
}

/// Refuses a `type` that is neither a name nor a list of names.
fn check_type(ty: Option<&Value>, path: &Pointer<'_>) -> Result<(), String> {
    match ty {
        None | Some(Value::String(_)) => Ok(()),
        Some(Value::Array(ts)) if ts.iter().all(Value::is_string) => Ok(()),
        Some(other) => Err(format!("{} has type `{other}`", at(path))),
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

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().expect("test schemas are objects")
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
}
