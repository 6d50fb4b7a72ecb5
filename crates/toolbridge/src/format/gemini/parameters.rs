//! Gemini `parameters`: a subset of the OpenAPI 3.0 schema object, which
//! answers 400 to anything else: `$schema`, `additionalProperties`,
//! `$ref`/`$defs`, `const`, `oneOf`, type lists such as `["string","null"]`,
//! string formats other than `enum` and `date-time`, non-string enums,
//! `properties` on a non-object, an array without `items`, an object whose
//! `properties` is empty. Conversion rewrites each of these into what Gemini
//! accepts (inlining local `$ref`s with a cycle guard and a budget), and
//! `check` reports every rewrite.

use super::keywords::{
    ALLOWED_KEYWORDS, ANNOTATIONS, Keywords, OUTPUT_ORDER, TYPES, annotate, copy_annotations,
    copy_if, handled, infer_type, is_null_schema, relevant, stub,
};
use crate::format::changes::{Change, ChangeKind, Notes};
use crate::format::schema::{
    self, JsonObject, MAX_DEPTH, Normalized, Pointer, SeenNames, TopLevelRules, is_root_ref,
};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// What `parameters` refuses at the top: any keyword outside its subset,
/// composition, and `required` names that are not properties.
const RULES: TopLevelRules = TopLevelRules {
    refuses_keyword: |key| !ALLOWED_KEYWORDS.contains(&key),
    refuses_composition: true,
    refuses_unknown_required: true,
};

/// How many `$ref`s one tool may have inlined; stops exponential blow-up of
/// schemas whose definitions refer to each other many times.
const MAX_INLINED_REFS: usize = 200;

/// How many schema nodes one tool's conversion may produce; folding a union's
/// constraints into each branch could otherwise grow a small hostile schema
/// exponentially.
const MAX_NODES: usize = 10_000;

/// One tool's `parameters`, or `None` for a tool without arguments (Gemini
/// refuses an object whose `properties` is empty).
pub fn parameters(input: &JsonObject, notes: &mut Vec<Change>) -> Option<Value> {
    Notes::record_into(notes, |notes| convert(input, notes))
}

/// [`parameters`], recording into `notes`.
pub(crate) fn convert(input: &JsonObject, notes: &mut Notes) -> Option<Value> {
    let normalized = Normalized::new(input, RULES, notes);
    let mut cx = Gemini {
        root: &normalized,
        notes,
        refs: Vec::new(),
        inlined: 0,
        nodes: 0,
    };
    let mut out = cx.root(&normalized);
    let is_object = out.get("type").and_then(Value::as_str) == Some("object");
    let has_properties = matches!(out.get("properties"), Some(Value::Object(p)) if !p.is_empty());
    if !is_object || !has_properties {
        cx.notes.add(
            "",
            ChangeKind::ParametersOmitted,
            true,
            "the tool takes no arguments; declared without parameters",
        );
        return None;
    }
    out.entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    Some(Value::Object(out))
}

/// State of converting one tool's schema.
struct Gemini<'a> {
    /// The normalized schema, for resolving `$ref`s.
    root: &'a Normalized<'a>,
    /// Where changes are recorded.
    notes: &'a mut Notes,
    /// `$ref`s being inlined on the current path, to cut cycles.
    refs: Vec<String>,
    /// `$ref`s inlined so far, against [`MAX_INLINED_REFS`].
    inlined: usize,
    /// Nodes converted so far, against [`MAX_NODES`].
    nodes: usize,
}

impl<'a> Gemini<'a> {
    /// Converts the normalized root. processJsonSchema made it an object
    /// schema, so this takes the steps [`simple`](Self::simple) takes for an
    /// object node, reading the root's members where they are instead of a
    /// copy of the whole schema.
    fn root(&mut self, root: &Normalized<'_>) -> JsonObject {
        self.nodes += 1;
        let mut out = JsonObject::with_capacity(4);
        out.insert("type".into(), Value::from("object"));
        for key in ["description", "title"] {
            if let Some(Value::String(s)) = root.get(key) {
                out.insert(key.into(), Value::from(s.clone()));
            }
        }
        self.object(
            root.get("properties"),
            root.get("required"),
            root.get("propertyOrdering"),
            &mut out,
            &Pointer::Root,
            0,
        );
        for key in root.keys() {
            if !handled(key, "object") {
                self.dropped(&Pointer::Root, key, "object");
            }
        }
        schema::ordered(out, &OUTPUT_ORDER)
    }

    /// Converts any schema value; `None` when it accepts nothing (`false`).
    fn convert(&mut self, value: &Value, path: &Pointer<'_>, depth: usize) -> Option<JsonObject> {
        let node = match value {
            Value::Object(m) => Cow::Borrowed(m),
            Value::Bool(false) => return None,
            Value::Bool(true) => {
                self.note(
                    path,
                    ChangeKind::InvalidSchema,
                    true,
                    "`true` schema (anything) replaced",
                );
                Cow::Owned(JsonObject::new())
            }
            other => {
                self.note(
                    path,
                    ChangeKind::InvalidSchema,
                    true,
                    format_args!("`{other}` is not a schema; replaced"),
                );
                Cow::Owned(JsonObject::new())
            }
        };
        if depth > MAX_DEPTH {
            self.note(
                path,
                ChangeKind::DepthLimit,
                true,
                format_args!("nested deeper than {MAX_DEPTH} levels; cut"),
            );
            return Some(stub(&node));
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            if self.nodes == MAX_NODES + 1 {
                self.note(
                    path,
                    ChangeKind::DepthLimit,
                    true,
                    format_args!("more than {MAX_NODES} schema nodes; the rest is cut"),
                );
            }
            return Some(stub(&node));
        }
        self.node(&node, path, depth)
            .map(|out| schema::ordered(out, &OUTPUT_ORDER))
    }

    fn node(&mut self, m: &JsonObject, path: &Pointer<'_>, depth: usize) -> Option<JsonObject> {
        let [reference, all_of, any_of, one_of] =
            schema::members(m, ["$ref", "allOf", "anyOf", "oneOf"]);
        if let Some(reference) = reference {
            return self.reference(m, reference, path, depth);
        }
        if let Some(all) = all_of {
            let merged = self.merge_all_of(m, all, path);
            return self.convert(&Value::Object(merged), path, depth + 1);
        }
        if any_of.is_some() || one_of.is_some() {
            return self.union(m, path, depth);
        }
        self.simple(m, path, depth)
    }

    /// A `$ref` node: the target inlined, the node's siblings overriding it.
    fn reference(
        &mut self,
        m: &JsonObject,
        reference: &Value,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Option<JsonObject> {
        let no_target = JsonObject::new();
        let Value::String(reference) = reference else {
            self.note(
                path,
                ChangeKind::InvalidSchema,
                true,
                "`$ref` is not a string; dropped",
            );
            let rest = schema::inline(&no_target, m);
            return self.convert(&Value::Object(rest), path, depth + 1);
        };
        let root: &'a Normalized<'a> = self.root;
        let whole;
        let target = if is_root_ref(reference) {
            whole = Value::Object(root.to_object());
            Some(&whole)
        } else {
            root.resolve(reference)
        };
        let Some(target) = target else {
            self.note(
                path,
                ChangeKind::RefUnresolved,
                true,
                format_args!("$ref `{reference}` does not point into this schema; dropped"),
            );
            let rest = schema::inline(&no_target, m);
            return self.convert(&Value::Object(rest), path, depth + 1);
        };
        let target_object = match target {
            Value::Object(t) => t,
            _ => &no_target,
        };
        let recursive = is_root_ref(reference) || self.refs.iter().any(|r| r == reference);
        if recursive || self.inlined >= MAX_INLINED_REFS {
            let why = if recursive {
                "recursive; cut here"
            } else {
                "too many $refs to inline; cut here"
            };
            self.note(
                path,
                ChangeKind::RefCycle,
                true,
                format_args!("$ref `{reference}` is {why}"),
            );
            return Some(stub(&schema::inline(target_object, m)));
        }
        if target == &Value::Bool(false) {
            return None;
        }
        let merged = schema::inline(target_object, m);
        self.note(
            path,
            ChangeKind::RefInlined,
            true,
            format_args!("$ref `{reference}` inlined"),
        );
        self.inlined += 1;
        self.refs.push(reference.clone());
        let out = self.convert(&Value::Object(merged), path, depth + 1);
        self.refs.pop();
        out
    }

    /// Merges `allOf` branches into the node: properties and required are
    /// united, other keywords kept from the node first, then the branches.
    fn merge_all_of(&mut self, m: &JsonObject, all: &Value, path: &Pointer<'_>) -> JsonObject {
        let mut merged = m.clone();
        merged.remove("allOf");
        let Value::Array(branches) = all else {
            self.note(
                path,
                ChangeKind::InvalidSchema,
                true,
                "`allOf` is not a list; dropped",
            );
            return merged;
        };
        for branch in branches {
            let Value::Object(branch) = branch else {
                continue;
            };
            let resolved;
            let branch = match branch.get("$ref") {
                Some(Value::String(r)) if !self.refs.iter().any(|x| x == r) => {
                    match self.root.resolve(r) {
                        Some(Value::Object(target)) => {
                            resolved = schema::inline(target, branch);
                            &resolved
                        }
                        _ => branch,
                    }
                }
                _ => branch,
            };
            for (key, value) in branch {
                match (key.as_str(), merged.get_mut(key)) {
                    ("properties", Some(Value::Object(props))) => {
                        if let Value::Object(more) = value {
                            for (name, schema) in more {
                                props.entry(name.clone()).or_insert_with(|| schema.clone());
                            }
                        }
                    }
                    ("required", Some(Value::Array(names))) => {
                        if let Value::Array(more) = value {
                            for name in more {
                                if !names.contains(name) {
                                    names.push(name.clone());
                                }
                            }
                        }
                    }
                    (_, Some(_)) => {}
                    (_, None) => {
                        merged.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        self.note(
            path,
            ChangeKind::CompositionRewritten,
            true,
            "allOf merged into one schema",
        );
        merged
    }

    /// `anyOf`/`oneOf`: null branches become `nullable`, one remaining branch
    /// is merged into the node, several become `anyOf` with the node's own
    /// constraints folded into each branch.
    fn union(&mut self, m: &JsonObject, path: &Pointer<'_>, depth: usize) -> Option<JsonObject> {
        let mut base = m.clone();
        // Each branch with where it was: its keyword and index.
        let mut branches: Vec<(&str, usize, Value)> = Vec::new();
        for keyword in ["anyOf", "oneOf"] {
            match base.remove(keyword) {
                Some(Value::Array(list)) => {
                    for (i, b) in list.into_iter().enumerate() {
                        branches.push((keyword, i, b));
                    }
                }
                Some(_) => {
                    self.note(
                        path,
                        ChangeKind::InvalidSchema,
                        true,
                        format_args!("`{keyword}` is not a list; dropped"),
                    );
                }
                None => {}
            }
        }
        if m.contains_key("oneOf") {
            self.note(
                path,
                ChangeKind::CompositionRewritten,
                true,
                "oneOf became anyOf",
            );
        }
        let before = branches.len();
        branches.retain(|(_, _, b)| !is_null_schema(b));
        let nullable = branches.len() != before;
        if nullable {
            self.note(
                path,
                ChangeKind::NullableRewritten,
                true,
                "null branch became nullable: true",
            );
        }

        let mut out = match branches.len() {
            0 => self.simple(&base, path, depth)?,
            1 => {
                let (_, _, branch) = branches.remove(0);
                let mut merged = match branch {
                    Value::Object(b) => b,
                    Value::Bool(false) => return None,
                    _ => JsonObject::new(),
                };
                for (k, v) in base {
                    merged.entry(k).or_insert(v);
                }
                self.convert(&Value::Object(merged), path, depth + 1)?
            }
            _ => {
                let mut converted = Vec::with_capacity(branches.len());
                for (keyword, i, branch) in branches {
                    let mut merged = match branch {
                        Value::Object(b) => b,
                        Value::Bool(false) => continue,
                        _ => JsonObject::new(),
                    };
                    for (k, v) in &base {
                        if !ANNOTATIONS.contains(&k.as_str()) && k != "nullable" {
                            merged.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                    let keyword_path = path.key(keyword);
                    let branch_path = keyword_path.index(i);
                    if let Some(c) = self.convert(&Value::Object(merged), &branch_path, depth + 1) {
                        converted.push(Value::Object(c));
                    }
                }
                match converted.len() {
                    0 => return None,
                    1 => match converted.pop() {
                        Some(Value::Object(only)) => only,
                        _ => return None,
                    },
                    _ => {
                        let mut out = JsonObject::new();
                        out.insert("anyOf".into(), Value::Array(converted));
                        out
                    }
                }
            }
        };
        for key in ["description", "title"] {
            if let Some(Value::String(s)) = m.get(key) {
                out.entry(key).or_insert_with(|| Value::from(s.clone()));
            }
        }
        if nullable || m.get("nullable") == Some(&Value::Bool(true)) {
            out.insert("nullable".into(), Value::Bool(true));
        }
        Some(out)
    }

    /// A node without `$ref`, `allOf`, `anyOf` or `oneOf`.
    fn simple(&mut self, m: &JsonObject, path: &Pointer<'_>, depth: usize) -> Option<JsonObject> {
        let kw = Keywords::of(m);
        let mut nullable = kw.nullable == Some(&Value::Bool(true));
        let mut types = self.types(kw.ty, &mut nullable, path);
        if types.len() > 1 {
            return self.type_list(m, &types, nullable, path, depth);
        }
        let mut out = JsonObject::with_capacity(m.len());
        let mut ty = types.pop();
        let values = self.enum_values(kw.constant, kw.values, path);
        let mut stringified = false;
        if let Some(values) = values {
            let (strings, has_null, rewritten) = string_enum(values, ty);
            nullable |= has_null;
            if rewritten {
                self.note(
                    path,
                    ChangeKind::EnumRewritten,
                    true,
                    "enum values sent as strings with type string",
                );
                stringified = true;
            }
            if !strings.is_empty() {
                out.insert("enum".into(), Value::Array(strings));
                ty = Some("string");
            }
        }
        let ty = match ty {
            Some(t) => t,
            None => self.missing_type(m, path),
        };
        out.insert("type".into(), Value::from(ty));
        annotate(&mut out, [kw.description, kw.title]);
        if let Some(default) = kw.default {
            out.insert("default".into(), default_value(default, stringified));
        }
        self.constraints(ty, &kw, &mut out, path, depth);
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        for key in m.keys() {
            if !handled(key, ty) {
                self.dropped(path, key, ty);
            }
        }
        Some(out)
    }

    /// The names in a node's `type`, each once, without `null` (which sets
    /// `nullable`) and without names Gemini does not know (noted).
    fn types<'t>(
        &mut self,
        ty: Option<&'t Value>,
        nullable: &mut bool,
        path: &Pointer<'_>,
    ) -> Vec<&'t str> {
        let names: &[Value] = match ty {
            None => &[],
            Some(Value::String(t)) => {
                return self.known_types(std::iter::once(t.as_str()), nullable, path);
            }
            Some(Value::Array(ts)) => ts,
            Some(other) => {
                self.note(
                    path,
                    ChangeKind::TypeRewritten,
                    true,
                    format_args!("type `{other}` dropped"),
                );
                &[]
            }
        };
        let mut strings = Vec::with_capacity(names.len());
        for t in names {
            match t.as_str() {
                Some(t) => strings.push(t),
                None => self.note(
                    path,
                    ChangeKind::TypeRewritten,
                    true,
                    format_args!("type entry `{t}` dropped"),
                ),
            }
        }
        self.known_types(strings.into_iter(), nullable, path)
    }

    /// The distinct type names Gemini knows among `names`, in order; `null`
    /// sets `nullable`, the others are noted as dropped. Linear in `names`,
    /// however long a hostile list is.
    fn known_types<'t>(
        &mut self,
        names: impl Iterator<Item = &'t str>,
        nullable: &mut bool,
        path: &Pointer<'_>,
    ) -> Vec<&'t str> {
        let mut types: Vec<&str> = Vec::new();
        let mut null = false;
        let mut unknown: Vec<&str> = Vec::new();
        let mut seen_unknown: HashSet<&str> = HashSet::new();
        for t in names {
            if t == "null" {
                null = true;
            } else if !TYPES.contains(&t) {
                if seen_unknown.insert(t) {
                    unknown.push(t);
                }
            } else if !types.contains(&t) {
                types.push(t);
            }
        }
        if null {
            *nullable = true;
            self.note(
                path,
                ChangeKind::NullableRewritten,
                true,
                "null type became nullable: true",
            );
        }
        if !unknown.is_empty() {
            self.note(
                path,
                ChangeKind::TypeRewritten,
                true,
                format_args!("unknown types {unknown:?} dropped"),
            );
        }
        types
    }

    /// A node with several types: one `anyOf` branch per type, each with
    /// the node's keywords that apply to it.
    fn type_list(
        &mut self,
        m: &JsonObject,
        types: &[&str],
        nullable: bool,
        path: &Pointer<'_>,
        depth: usize,
    ) -> Option<JsonObject> {
        self.note(
            path,
            ChangeKind::CompositionRewritten,
            true,
            "type list became anyOf",
        );
        let mut branches = Vec::with_capacity(types.len());
        for t in types {
            let mut branch = JsonObject::new();
            branch.insert("type".into(), Value::from(*t));
            for (k, v) in m {
                if relevant(k, t) {
                    branch.insert(k.clone(), v.clone());
                }
            }
            if let Some(b) = self.simple(&branch, path, depth + 1) {
                branches.push(Value::Object(b));
            }
        }
        let mut out = JsonObject::new();
        out.insert("anyOf".into(), Value::Array(branches));
        copy_annotations(m, &mut out);
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        Some(out)
    }

    /// The values a node admits by `const` (a one-value enum) or `enum`.
    fn enum_values<'v>(
        &mut self,
        constant: Option<&'v Value>,
        values: Option<&'v Value>,
        path: &Pointer<'_>,
    ) -> Option<&'v [Value]> {
        match (constant, values) {
            (Some(c), _) => {
                self.note(
                    path,
                    ChangeKind::ConstToEnum,
                    true,
                    "const became a one-value enum",
                );
                Some(std::slice::from_ref(c))
            }
            (None, Some(Value::Array(values))) => Some(values.as_slice()),
            (None, Some(_)) => {
                self.note(
                    path,
                    ChangeKind::InvalidSchema,
                    true,
                    "`enum` is not a list; dropped",
                );
                None
            }
            (None, None) => None,
        }
    }

    /// The type of a node without one: inferred from its keywords, else
    /// string (any value, which Gemini cannot express).
    fn missing_type(&mut self, m: &JsonObject, path: &Pointer<'_>) -> &'static str {
        match infer_type(m) {
            Some(t) => {
                self.note(
                    path,
                    ChangeKind::TypeRewritten,
                    true,
                    format_args!("missing type inferred as {t}"),
                );
                t
            }
            None => {
                self.note(
                    path,
                    ChangeKind::TypeRewritten,
                    true,
                    "no type (any value); described as string, which Gemini can express",
                );
                "string"
            }
        }
    }

    /// The keywords of type `ty` that Gemini takes: formats it accepts,
    /// length and range limits, items, properties.
    fn constraints(
        &mut self,
        ty: &str,
        kw: &Keywords<'_>,
        out: &mut JsonObject,
        path: &Pointer<'_>,
        depth: usize,
    ) {
        match ty {
            "string" => {
                self.format(kw.format, out, path, &["enum", "date-time"]);
                copy_if(out, "minLength", kw.min_length, Value::is_u64);
                copy_if(out, "maxLength", kw.max_length, Value::is_u64);
                copy_if(out, "pattern", kw.pattern, Value::is_string);
            }
            "number" | "integer" => {
                let formats: &[&str] = if ty == "number" {
                    &["float", "double"]
                } else {
                    &["int32", "int64"]
                };
                self.format(kw.format, out, path, formats);
                copy_if(out, "minimum", kw.minimum, Value::is_number);
                copy_if(out, "maximum", kw.maximum, Value::is_number);
            }
            "array" => {
                let items = self.items(kw.items, kw.prefix_items, path, depth);
                out.insert("items".into(), Value::Object(items));
                copy_if(out, "minItems", kw.min_items, Value::is_u64);
                copy_if(out, "maxItems", kw.max_items, Value::is_u64);
            }
            "object" => {
                self.object(
                    kw.properties,
                    kw.required,
                    kw.property_ordering,
                    out,
                    path,
                    depth,
                );
            }
            _ => {}
        }
    }

    /// Notes that `key` of a node of type `ty` was left out.
    fn dropped(&mut self, path: &Pointer<'_>, key: &str, ty: &str) {
        if ALLOWED_KEYWORDS.contains(&key) {
            self.note(
                path.key(key),
                ChangeKind::KeywordDropped,
                matches!(key, "properties" | "required" | "items"),
                format_args!("`{key}` does not apply to type {ty}; dropped"),
            );
        } else {
            self.note(
                path.key(key),
                ChangeKind::KeywordDropped,
                true,
                format_args!("`{key}` is not accepted by Gemini; dropped"),
            );
        }
    }

    fn format(
        &mut self,
        format: Option<&Value>,
        out: &mut JsonObject,
        path: &Pointer<'_>,
        accepted: &[&str],
    ) {
        match format {
            None => {}
            Some(Value::String(f)) if accepted.contains(&f.as_str()) => {
                out.insert("format".into(), Value::from(f.clone()));
            }
            Some(other) => self.note(
                path.key("format"),
                ChangeKind::FormatDropped,
                true,
                format_args!("format {other} is not accepted by Gemini; dropped"),
            ),
        }
    }

    /// The `items` of an array: converted, or a string schema when missing.
    fn items(
        &mut self,
        items: Option<&Value>,
        prefix_items: Option<&Value>,
        path: &Pointer<'_>,
        depth: usize,
    ) -> JsonObject {
        let items_path = path.key("items");
        let converted = match (items, prefix_items) {
            (Some(items @ Value::Object(_)), _) => self.convert(items, &items_path, depth + 1),
            (Some(Value::Array(tuple)), _) => self.tuple(tuple, &items_path, depth),
            (_, Some(Value::Array(tuple))) => self.tuple(tuple, &path.key("prefixItems"), depth),
            _ => None,
        };
        converted.unwrap_or_else(|| {
            self.note(
                items_path,
                ChangeKind::ItemsAdded,
                true,
                "array without an items schema; items described as strings",
            );
            let mut s = JsonObject::new();
            s.insert("type".into(), Value::from("string"));
            s
        })
    }

    /// Tuple items: their union, since Gemini has no tuples.
    fn tuple(&mut self, tuple: &[Value], path: &Pointer<'_>, depth: usize) -> Option<JsonObject> {
        self.note(
            path,
            ChangeKind::CompositionRewritten,
            true,
            "tuple items became anyOf",
        );
        let mut converted: Vec<Value> = Vec::new();
        for (i, item) in tuple.iter().enumerate() {
            if let Some(c) = self.convert(item, &path.index(i), depth + 1) {
                let c = Value::Object(c);
                if !converted.contains(&c) {
                    converted.push(c);
                }
            }
        }
        match converted.len() {
            0 => None,
            1 => match converted.pop() {
                Some(Value::Object(c)) => Some(c),
                _ => None,
            },
            _ => {
                let mut out = JsonObject::new();
                out.insert("anyOf".into(), Value::Array(converted));
                Some(out)
            }
        }
    }

    /// The object part: properties converted, required filtered; an object
    /// without properties stays a plain object.
    fn object(
        &mut self,
        properties: Option<&Value>,
        required: Option<&Value>,
        ordering: Option<&Value>,
        out: &mut JsonObject,
        path: &Pointer<'_>,
        depth: usize,
    ) {
        let mut props =
            JsonObject::with_capacity(properties.and_then(Value::as_object).map_or(0, |p| p.len()));
        match properties {
            Some(Value::Object(input)) => {
                let properties_path = path.key("properties");
                for (name, schema) in input {
                    let p = properties_path.key(name);
                    // The key before its schema (why: see schema::object).
                    let key = name.clone();
                    match self.convert(schema, &p, depth + 1) {
                        Some(c) => {
                            props.insert(key, Value::Object(c));
                        }
                        None => self.note(
                            p,
                            ChangeKind::PropertyDropped,
                            true,
                            "property whose schema is `false` dropped",
                        ),
                    }
                }
            }
            Some(_) => self.note(
                path.key("properties"),
                ChangeKind::InvalidSchema,
                true,
                "`properties` is not an object; dropped",
            ),
            None => {}
        }
        let mut kept: Vec<Value> = Vec::new();
        let mut seen = SeenNames::default();
        let mut filtered = false;
        if let Some(Value::Array(names)) = required {
            for name in names {
                match name.as_str() {
                    Some(n) if props.contains_key(n) => {
                        if seen.insert(n) {
                            kept.push(name.clone());
                        }
                    }
                    _ => filtered = true,
                }
            }
        }
        if filtered {
            self.note(
                path.key("required"),
                ChangeKind::RequiredFiltered,
                true,
                "required names that are not properties dropped",
            );
        }
        if props.is_empty() {
            if depth > 0 {
                self.note(
                    path,
                    ChangeKind::FreeFormObject,
                    false,
                    "object without properties: Gemini cannot describe its keys (gemini_json_schema can)",
                );
            }
            return;
        }
        if let Some(Value::Array(order)) = ordering {
            let valid = order.len() == props.len()
                && order
                    .iter()
                    .all(|k| k.as_str().is_some_and(|k| props.contains_key(k)));
            if valid {
                out.insert("propertyOrdering".into(), Value::Array(order.clone()));
            }
        }
        out.insert("properties".into(), Value::Object(props));
        if !kept.is_empty() {
            out.insert("required".into(), Value::Array(kept));
        }
    }

    fn note(
        &mut self,
        path: impl fmt::Display,
        kind: ChangeKind,
        would_reject: bool,
        detail: impl fmt::Display,
    ) {
        self.notes.add(path, kind, would_reject, detail);
    }
}

/// Enum `values` as Gemini takes them: distinct strings (others written as
/// JSON text), with whether a `null` was among them and whether they had
/// to be rewritten (a value was not a string, or the type `ty` was not).
fn string_enum(values: &[Value], ty: Option<&str>) -> (Vec<Value>, bool, bool) {
    let mut strings: Vec<Value> = Vec::with_capacity(values.len());
    let mut seen: HashSet<Cow<'_, str>> = HashSet::with_capacity(values.len());
    let mut has_null = false;
    let mut stringified = false;
    for v in values {
        let s = match v {
            Value::Null => {
                has_null = true;
                continue;
            }
            Value::String(s) => Cow::Borrowed(s.as_str()),
            other => {
                stringified = true;
                Cow::Owned(other.to_string())
            }
        };
        if seen.insert(s.clone()) {
            strings.push(Value::from(s.into_owned()));
        }
    }
    let retyped = ty.is_some_and(|t| t != "string");
    (strings, has_null, stringified || retyped)
}

/// A node's `default`, written as a string when its enum was stringified.
fn default_value(default: &Value, stringified: bool) -> Value {
    match default {
        Value::String(_) | Value::Null => default.clone(),
        other if stringified => Value::from(other.to_string()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().expect("test schemas are objects")
    }

    fn params(v: Value) -> (Option<Value>, Vec<Change>) {
        let mut notes = Vec::new();
        let p = parameters(&obj(v), &mut notes);
        (p, notes)
    }

    fn prop(v: Value) -> Value {
        let (p, _) = params(json!({"type": "object", "properties": {"p": v}}));
        p.map(|p| p["properties"]["p"].clone()).unwrap_or_default()
    }

    #[test]
    fn keeps_what_gemini_accepts() {
        let (p, notes) = params(json!({
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "query", "minLength": 1, "pattern": "^a"},
                "n": {"type": "integer", "minimum": 0, "maximum": 10, "format": "int32"},
                "when": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}
            },
            "required": ["q"]
        }));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(
            p,
            Some(json!({
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "query", "minLength": 1, "pattern": "^a"},
                    "n": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 10},
                    "when": {"type": "string", "format": "date-time"},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}
                },
                "required": ["q"]
            }))
        );
    }

    #[test]
    fn nullable_type_lists_and_unions() {
        assert_eq!(
            prop(json!({"type": ["string", "null"]})),
            json!({"type": "string", "nullable": true})
        );
        assert_eq!(
            prop(json!({"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "d"})),
            json!({"type": "integer", "description": "d", "nullable": true})
        );
        assert_eq!(
            prop(json!({"oneOf": [{"type": "integer"}, {"type": "string"}]})),
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        );
        assert_eq!(
            prop(json!({"type": ["string", "number"]})),
            json!({"anyOf": [{"type": "string"}, {"type": "number"}]})
        );
    }

    #[test]
    fn const_and_enums_become_string_enums() {
        assert_eq!(
            prop(json!({"const": "x"})),
            json!({"enum": ["x"], "type": "string"})
        );
        assert_eq!(
            prop(json!({"type": "integer", "enum": [1, 2, null]})),
            json!({"enum": ["1", "2"], "type": "string", "nullable": true})
        );
    }

    #[test]
    fn formats_gemini_refuses_are_dropped() {
        assert_eq!(
            prop(json!({"type": "string", "format": "uri"})),
            json!({"type": "string"})
        );
        assert_eq!(
            prop(json!({"type": "string", "format": "enum", "enum": ["a"]})),
            json!({"enum": ["a"], "type": "string", "format": "enum"})
        );
    }

    #[test]
    fn refs_are_inlined_and_cycles_cut() {
        let (p, notes) = params(json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}},
            "$defs": {"Tree": {
                "type": "object",
                "description": "a tree",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
                }
            }}
        }));
        assert_eq!(
            p,
            Some(json!({
                "type": "object",
                "properties": {"tree": {
                    "type": "object",
                    "description": "a tree",
                    "properties": {
                        "label": {"type": "string"},
                        "children": {"type": "array", "items": {"type": "object", "description": "a tree"}}
                    }
                }},
                "required": []
            }))
        );
        assert!(notes.iter().any(|n| n.kind == ChangeKind::RefCycle));
        assert!(notes.iter().any(|n| n.kind == ChangeKind::RefInlined));
        assert!(
            notes
                .iter()
                .any(|n| n.kind == ChangeKind::KeywordDropped && n.path == "/$defs")
        );
    }

    #[test]
    fn all_of_is_merged() {
        assert_eq!(
            prop(json!({"allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "number"}}, "required": ["b"]}
            ]})),
            json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            })
        );
    }

    #[test]
    fn structural_problems_are_fixed() {
        // properties on a non-object, additionalProperties, array without items
        assert_eq!(
            prop(json!({"type": "string", "properties": {"x": {}}, "required": ["x"]})),
            json!({"type": "string"})
        );
        assert_eq!(
            prop(
                json!({"type": "object", "properties": {"a": {"type": "boolean"}}, "additionalProperties": false})
            ),
            json!({"type": "object", "properties": {"a": {"type": "boolean"}}})
        );
        assert_eq!(
            prop(json!({"type": "array"})),
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(prop(json!({"type": "object"})), json!({"type": "object"}));
        assert_eq!(
            prop(json!({"properties": {"x": {"type": "string"}}})),
            json!({"type": "object", "properties": {"x": {"type": "string"}}})
        );
    }

    #[test]
    fn tools_without_arguments_omit_parameters() {
        let (p, notes) = params(json!({"type": "object", "properties": {}}));
        assert_eq!(p, None);
        assert!(
            notes
                .iter()
                .any(|n| n.kind == ChangeKind::ParametersOmitted)
        );
    }
}
