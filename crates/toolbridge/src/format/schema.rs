//! The provider-neutral part of schema conversion: the spec's
//! `processJsonSchema`, local `$ref` lookup and a bounded walk over
//! subschemas. The per-provider rules live in `openai`, `anthropic` and
//! `gemini`.

use super::check::{Change, ChangeKind, Notes};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt::{self, Write};

/// A JSON object; what a schema is when it is not `true` or `false`.
pub type JsonObject = Map<String, Value>;

/// How deep a rewriting conversion goes; deeper parts are cut, so hostile
/// input cannot exhaust the stack.
pub(crate) const MAX_DEPTH: usize = 32;

/// The provider a shared step works for; decides which of its changes would
/// otherwise have been rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// OpenAI, non-strict (Chat Completions and Responses).
    OpenAi,
    /// OpenAI strict mode.
    OpenAiStrict,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini `parameters` (the OpenAPI 3.0 subset).
    Gemini,
    /// Gemini `parametersJsonSchema`.
    GeminiJsonSchema,
}

/// Keywords holding a map of name → subschema.
pub(crate) const MAP_KEYWORDS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords holding one subschema.
pub(crate) const SINGLE_KEYWORDS: [&str; 11] = [
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords holding a list of subschemas.
pub(crate) const LIST_KEYWORDS: [&str; 5] = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Top-level keywords that OpenAI and Anthropic refuse on a tool's schema.
const TOP_LEVEL_COMPOSITION: [&str; 5] = ["anyOf", "oneOf", "allOf", "not", "enum"];

/// A JSON object of `members`, in order.
///
/// Unlike `json!`, which serializes every interpolated value again (a deep
/// copy of a whole converted schema), this moves the values in.
///
/// For the large results (a tool definition per tool), the converters make
/// each map before what goes in it instead: memory then sits in the order
/// dropping the result frees it, which makes freeing thousands of converted
/// tools markedly cheaper with glibc's allocator (dropping 10,000 Chat
/// Completions tools took about a fifth less time).
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    let mut out = JsonObject::with_capacity(N);
    for (key, value) in members {
        out.insert(key.to_owned(), value);
    }
    Value::Object(out)
}

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
        Value::Object(input) => normalize_with(input, Target::Anthropic, &mut Notes::discarding()),
        _ => empty_object_schema(),
    }
}

/// [`process_json_schema`] of a tool's input schema, recording what it
/// changed for `target`.
pub(crate) fn normalize(input: &JsonObject, target: Target, notes: &mut Vec<Change>) -> JsonObject {
    Notes::record_into(notes, |notes| normalize_with(input, target, notes))
}

/// [`normalize`], recording into `notes`.
pub(crate) fn normalize_with(input: &JsonObject, target: Target, notes: &mut Notes) -> JsonObject {
    Normalized::new(input, target, notes).into_object()
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

impl<'a> Normalized<'a> {
    /// processJsonSchema of `input`, recording what it changed for `target`.
    pub(crate) fn new(input: &'a JsonObject, target: Target, notes: &mut Notes) -> Self {
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
                Some(Value::Object(target_schema)) => {
                    let mut merged = target_schema.clone();
                    for (k, v) in input {
                        if k != "$ref" {
                            merged.insert(k.clone(), v.clone());
                        }
                    }
                    notes.add(
                        "",
                        ChangeKind::RefInlined,
                        true,
                        format_args!("followed top-level $ref `{reference}`"),
                    );
                    return Normalized::from_source(input, input_defs, &merged, target, notes)
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
        Normalized::from_source(input, input_defs, input, target, notes)
    }

    /// The members taken from `source`: `input` itself, or what its
    /// top-level `$ref` points to merged with its other keywords.
    /// `input_defs` are the `$defs` and `definitions` of `input`.
    fn from_source(
        input: &'a JsonObject,
        input_defs: [Option<&'a Value>; 2],
        source: &'a JsonObject,
        target: Target,
        notes: &mut Notes,
    ) -> Self {
        let [
            ty,
            description,
            source_properties,
            source_required,
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
        let object_like = has_type(ty, "object")
            || (is_untyped(ty)
                && (source_properties.is_some()
                    || source_required.is_some()
                    || additional_properties.is_some()
                    || ty.is_none()));
        if !object_like {
            notes.add(
                "",
                ChangeKind::TypeRewritten,
                true,
                format_args!(
                    "top-level type {} is not object; wrapped as an object schema",
                    ty.map(Value::to_string).unwrap_or_default()
                ),
            );
        }

        let mut members = Vec::with_capacity(7);
        members.push(("type", Cow::Owned(Value::from("object"))));
        if let Some(description @ Value::String(_)) = description {
            members.push(("description", Cow::Borrowed(description)));
        }

        // Always an object; copied only if composition adds to it.
        let mut properties = match source_properties {
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
        };
        let mut required: Vec<&str> = Vec::new();
        if object_like {
            push_required(&mut required, source_required);
        }

        // Top-level composition: providers want a plain object here.
        for (keyword, branches) in [("allOf", all_of), ("anyOf", any_of), ("oneOf", one_of)] {
            let Some(branches) = branches else {
                continue;
            };
            let mut folded = 0usize;
            if let Value::Array(branches) = branches {
                for branch in branches {
                    let branch = match branch {
                        Value::Object(b) => match b.get("$ref") {
                            Some(Value::String(r)) => match resolve_local_ref(input, r) {
                                Some(Value::Object(t)) => t,
                                _ => b,
                            },
                            _ => b,
                        },
                        _ => continue,
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
                    // Only allOf makes its branches' requirements binding.
                    if keyword == "allOf" {
                        push_required(&mut required, branch.get("required"));
                    }
                }
            }
            notes.add(
                format_args!("/{keyword}"),
                ChangeKind::CompositionRewritten,
                !matches!(target, Target::GeminiJsonSchema),
                format_args!(
                    "top-level {keyword} folded into the object ({folded} properties added)"
                ),
            );
        }

        let before = required.len();
        required.retain(|name| properties.get(name).is_some());
        if required.len() != before {
            notes.add(
                "/required",
                ChangeKind::RequiredFiltered,
                matches!(target, Target::Gemini),
                "dropped required names that are not properties",
            );
        }

        members.push(("properties", properties));
        members.push((
            "required",
            Cow::Owned(Value::Array(
                required.into_iter().map(Value::from).collect(),
            )),
        ));
        if object_like {
            match additional_properties {
                Some(v @ (Value::Bool(_) | Value::Object(_))) => {
                    members.push(("additionalProperties", Cow::Borrowed(v)));
                }
                Some(_) => notes.add(
                    "/additionalProperties",
                    ChangeKind::KeywordDropped,
                    true,
                    "`additionalProperties` is neither a boolean nor a schema; dropped",
                ),
                None => {}
            }
        }
        // Definitions stay where `$ref`s expect them, even when the root was itself a $ref.
        let source_defs = [defs, definitions];
        for (i, keyword) in ["$defs", "definitions"].into_iter().enumerate() {
            if let Some(d @ Value::Object(_)) = input_defs[i].or(source_defs[i]) {
                members.push((keyword, Cow::Borrowed(d)));
            }
        }

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
        for key in source.keys() {
            if KEPT.contains(&key.as_str()) {
                continue;
            }
            let rejects = top_level_rejects(target, key);
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

/// Whether `target` would refuse the top-level keyword `key` on a tool schema.
fn top_level_rejects(target: Target, key: &str) -> bool {
    match target {
        Target::Gemini => !super::gemini::ALLOWED_KEYWORDS.contains(&key),
        Target::OpenAiStrict => {
            TOP_LEVEL_COMPOSITION.contains(&key) || !super::openai::STRICT_KEYWORDS.contains(&key)
        }
        Target::OpenAi | Target::Anthropic => TOP_LEVEL_COMPOSITION.contains(&key),
        Target::GeminiJsonSchema => key == "$schema",
    }
}

/// Appends the string names in `value` (a `required` array) not yet in `out`.
fn push_required<'a>(out: &mut Vec<&'a str>, value: Option<&'a Value>) {
    if let Some(Value::Array(names)) = value {
        for name in names.iter().filter_map(Value::as_str) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
}

/// The schema a local reference (`#`, `#/$defs/x`, `#/definitions/x`, any
/// JSON pointer after `#`) points to inside `root`.
pub(crate) fn resolve_local_ref<'a>(root: &'a JsonObject, reference: &str) -> Option<&'a Value> {
    resolve_pointer(reference, |first| root.get(first))
}

/// [`resolve_local_ref`] in a root whose members `member` looks up.
fn resolve_pointer<'a>(
    reference: &str,
    member: impl FnOnce(&str) -> Option<&'a Value>,
) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return None;
    }
    let mut segments = pointer.strip_prefix('/')?.split('/');
    let first = unescape_pointer(segments.next()?);
    let mut node = member(&first)?;
    for segment in segments {
        let segment = unescape_pointer(segment);
        node = match node {
            Value::Object(m) => m.get(&segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// The values of `keys` in `node`, found in one pass over its members.
///
/// A schema node has a handful of members; comparing them with a few names
/// is much cheaper than hashing every name to look it up.
pub(crate) fn members<'a, const N: usize>(
    node: &'a JsonObject,
    keys: [&str; N],
) -> [Option<&'a Value>; N] {
    let mut found = [None; N];
    for (key, value) in node {
        if let Some(i) = keys.iter().position(|k| k == key) {
            found[i] = Some(value);
        }
    }
    found
}

/// Whether `reference` is `#`, a reference to the whole schema.
pub(crate) fn is_root_ref(reference: &str) -> bool {
    reference == "#"
}

/// The type names in a schema's `type` (a string or a list of strings).
pub(crate) fn types_of(node: &JsonObject) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether `name` is one of the types a schema's `type` member `ty` names
/// (see [`types_of`]; this collects nothing).
pub(crate) fn has_type(ty: Option<&Value>, name: &str) -> bool {
    match ty {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

/// Whether a schema's `type` member `ty` names no type at all.
pub(crate) fn is_untyped(ty: Option<&Value>) -> bool {
    match ty {
        Some(Value::String(_)) => false,
        Some(Value::Array(ts)) => !ts.iter().any(Value::is_string),
        _ => true,
    }
}

/// Calls `visit` on every schema object in `root`, parents before children
/// and siblings in order; `visit` gets the JSON pointer of the node. Iterative,
/// so no nesting depth can exhaust the stack. Values that are not schemas
/// (`enum`, `const`, `default`, property-name maps) are never visited as schemas.
pub(crate) fn walk_mut(root: &mut Value, visit: &mut dyn FnMut(&mut JsonObject, &str)) {
    /// How a node's pointer extends its parent's.
    enum Step<'a> {
        Root,
        /// `/keyword`: a keyword holding one subschema.
        Single(&'a str),
        /// `/keyword/name`: a keyword holding a map of subschemas.
        Named(&'a str, &'a str),
        /// `/keyword/3`: a keyword holding a list of subschemas.
        Indexed(&'a str, usize),
    }
    // Depth first with an explicit stack; each entry carries the length of
    // its parent's pointer, which is always a prefix of `path` when the
    // entry is popped (everything visited since is the parent's descendant).
    let mut stack: Vec<(&mut Value, usize, Step<'_>)> = Vec::with_capacity(16);
    stack.push((root, 0, Step::Root));
    let mut path = String::with_capacity(64);
    while let Some((value, parent_len, step)) = stack.pop() {
        let Value::Object(node) = value else {
            continue;
        };
        path.truncate(parent_len);
        // Writing to a String cannot fail.
        let _ = match step {
            Step::Root => Ok(()),
            Step::Single(keyword) => write!(path, "/{}", Segment(keyword)),
            Step::Named(keyword, name) => {
                write!(path, "/{}/{}", Segment(keyword), Segment(name))
            }
            Step::Indexed(keyword, i) => write!(path, "/{}/{i}", Segment(keyword)),
        };
        visit(node, &path);
        let len = path.len();
        let first_child = stack.len();
        for (key, child) in node.iter_mut() {
            let key = key.as_str();
            if MAP_KEYWORDS.contains(&key) {
                if let Value::Object(map) = child {
                    for (name, schema) in map.iter_mut() {
                        stack.push((schema, len, Step::Named(key, name)));
                    }
                }
            } else if LIST_KEYWORDS.contains(&key) && child.is_array() {
                if let Value::Array(items) = child {
                    for (i, schema) in items.iter_mut().enumerate() {
                        stack.push((schema, len, Step::Indexed(key, i)));
                    }
                }
            } else if SINGLE_KEYWORDS.contains(&key) {
                stack.push((child, len, Step::Single(key)));
            }
        }
        // Popped last-in first-out: reversed, the first child is visited first.
        stack[first_child..].reverse();
    }
}

/// Whether `test` may hold for a schema object [`walk_mut`] would visit in
/// `root`: `true` when it holds for one, or when `root` nests deeper than
/// [`MAX_DEPTH`] (looking further could exhaust the stack). Lets a caller
/// skip the walk, and what it allocates, when it would change nothing.
pub(crate) fn may_match(root: &JsonObject, test: &dyn Fn(&JsonObject) -> bool) -> bool {
    fn visit(node: &JsonObject, test: &dyn Fn(&JsonObject) -> bool, depth: usize) -> bool {
        if depth > MAX_DEPTH || test(node) {
            return true;
        }
        let child = |value: &Value| match value {
            Value::Object(m) => visit(m, test, depth + 1),
            _ => false,
        };
        node.iter().any(|(key, value)| {
            let key = key.as_str();
            if MAP_KEYWORDS.contains(&key) {
                value.as_object().is_some_and(|map| map.values().any(child))
            } else if let (true, Value::Array(items)) = (LIST_KEYWORDS.contains(&key), value) {
                items.iter().any(child)
            } else {
                SINGLE_KEYWORDS.contains(&key) && child(value)
            }
        })
    }
    visit(root, test, 0)
}

/// `m` with the keys in `order` first, in that order, then the others in the
/// order that swap-removing those keys from `m` leaves them (the order this
/// has always written); keeps output readable and stable.
pub(crate) fn ordered(m: JsonObject, order: &[&str]) -> JsonObject {
    if is_ordered(&m, order) {
        return m;
    }
    let mut rest: Vec<(String, Value)> = m.into_iter().collect();
    let mut out = JsonObject::with_capacity(rest.len());
    for key in order {
        if let Some(i) = rest.iter().position(|(k, _)| k == key) {
            let (k, v) = rest.swap_remove(i);
            out.insert(k, v);
        }
    }
    out.extend(rest);
    out
}

/// Whether [`ordered`] would leave `m` as it is: its keys in `order` come
/// first, in that order, followed by at most one other key (swap-removing the
/// first key moves the last one forward, so two or more would be reordered),
/// or by any number when no key is in `order`. Most converted nodes are.
fn is_ordered(m: &JsonObject, order: &[&str]) -> bool {
    let mut next = 0; // where in `order` the next key must come from
    let mut listed = 0;
    let mut others = 0;
    for key in m.keys() {
        match order[next..].iter().position(|o| o == key) {
            Some(i) if others == 0 => {
                next += i + 1;
                listed += 1;
            }
            Some(_) => return false,
            None if order[..next].contains(&key.as_str()) => return false,
            None => others += 1,
        }
    }
    listed == 0 || others <= 1
}

/// A node's place in a schema, as a JSON pointer that is only spelled out
/// (by `Display`) when a change is recorded there; most nodes need none.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pointer<'a> {
    /// The whole schema: `""`.
    Root,
    /// A member of the parent: `/key`, escaped.
    Key(&'a Pointer<'a>, &'a str),
    /// An item of the parent: `/3`.
    Index(&'a Pointer<'a>, usize),
}

impl Pointer<'_> {
    /// The member `key` of this node.
    pub(crate) fn key<'b>(&'b self, key: &'b str) -> Pointer<'b> {
        Pointer::Key(self, key)
    }

    /// The item `index` of this node.
    pub(crate) fn index(&self, index: usize) -> Pointer<'_> {
        Pointer::Index(self, index)
    }

    /// Whether this is the whole schema.
    pub(crate) fn is_root(&self) -> bool {
        matches!(self, Pointer::Root)
    }
}

impl fmt::Display for Pointer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pointer::Root => Ok(()),
            Pointer::Key(parent, key) => write!(f, "{parent}/{}", Segment(key)),
            Pointer::Index(parent, index) => write!(f, "{parent}/{index}"),
        }
    }
}

/// A key as one JSON pointer segment (`~` → `~0`, `/` → `~1`).
struct Segment<'a>(&'a str);

impl fmt::Display for Segment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '~' => f.write_str("~0")?,
                '/' => f.write_str("~1")?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// The inverse of [`Segment`]'s escaping.
fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
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
        let out = normalize(&obj(json!({"type": "string"})), Target::OpenAi, &mut notes);
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
        let out = Value::Object(normalize(&obj(input), Target::Anthropic, &mut notes));
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

    #[test]
    fn local_refs_resolve_by_pointer() {
        let root = obj(json!({"$defs": {"a/b": {"type": "string"}}, "items": [{"x": 1}]}));
        assert_eq!(
            resolve_local_ref(&root, "#/$defs/a~1b"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(resolve_local_ref(&root, "#/items/0/x"), Some(&json!(1)));
        assert_eq!(resolve_local_ref(&root, "#/nope"), None);
        assert_eq!(resolve_local_ref(&root, "http://x/y"), None);
        assert_eq!(resolve_local_ref(&root, "#"), None);
    }

    #[test]
    fn walk_visits_schemas_in_order_and_skips_values() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "enum": {"enum": [{"type": "array"}]},
                "b": {"items": {"type": "string"}}
            },
            "default": {"type": "object"}
        });
        let mut seen = Vec::new();
        walk_mut(&mut schema, &mut |_, path| seen.push(path.to_owned()));
        assert_eq!(
            seen,
            [
                "",
                "/properties/enum",
                "/properties/b",
                "/properties/b/items"
            ]
        );
    }

    #[test]
    fn ordering_matches_swap_removing_each_listed_key() {
        // The order `ordered` has always produced: swap_remove each key of
        // `order` into a new map, then append what is left.
        fn by_swap_remove(mut m: JsonObject, order: &[&str]) -> Vec<String> {
            let mut out = JsonObject::new();
            for key in order {
                if let Some(v) = m.swap_remove(*key) {
                    out.insert((*key).to_owned(), v);
                }
            }
            out.extend(m);
            out.keys().cloned().collect()
        }
        let order = ["type", "title", "description", "items"];
        let keys = ["type", "title", "description", "items", "a", "b", "c"];
        // Every arrangement of up to five of the keys.
        let mut cases: Vec<Vec<&str>> = vec![Vec::new()];
        let mut shorter = cases.clone();
        for _ in 0..5 {
            shorter = shorter
                .iter()
                .flat_map(|case| {
                    keys.iter().filter(|k| !case.contains(k)).map(move |k| {
                        let mut longer = case.clone();
                        longer.push(*k);
                        longer
                    })
                })
                .collect();
            cases.extend(shorter.iter().cloned());
        }
        for case in cases {
            let m: JsonObject = case
                .iter()
                .map(|k| ((*k).to_owned(), Value::Null))
                .collect();
            let got: Vec<String> = ordered(m.clone(), &order).keys().cloned().collect();
            assert_eq!(got, by_swap_remove(m, &order), "{case:?}");
        }
    }

    #[test]
    fn walk_survives_deep_nesting() {
        let mut deep = json!({"type": "string"});
        for _ in 0..300 {
            deep = json!({"type": "array", "items": deep});
        }
        let mut seen = 0usize;
        walk_mut(&mut deep, &mut |_, _| seen += 1);
        assert_eq!(seen, 301);
    }
}
