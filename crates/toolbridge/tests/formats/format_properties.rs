//! Property tests: for any JSON a server might send as a tool's input schema,
//! and any JSON a provider might send back, the format converters return
//! without panicking and their output obeys each provider's published rules.
//!
//! The rules are restated here on purpose, independently of the converters.

use proptest::prelude::*;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use toolbridge::format::names::is_valid_name;
use toolbridge::format::{
    Format, FormatOptions, NameTable, ToolOutcome, check, convert_tools, parse_calls,
    render_results,
};
use toolbridge::tools::McpTool;

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
    "definitions",
    "enum",
    "const",
    "format",
    "additionalProperties",
    "patternProperties",
    "prefixItems",
    "nullable",
    "description",
    "title",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "$schema",
    "examples",
    "if",
    "then",
    "propertyOrdering",
    "a",
    "b",
];

const WORDS: &[&str] = &[
    "object",
    "string",
    "number",
    "integer",
    "boolean",
    "array",
    "null",
    "any",
    "#",
    "#/$defs/A",
    "#/$defs/B",
    "#/definitions/A",
    "#/properties/a",
    "http://example.com/s.json",
    "date-time",
    "uri",
    "enum",
    "int64",
    "a",
    "b",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        prop::sample::select(WORDS).prop_map(Value::from),
        "[a-z ]{0,4}".prop_map(Value::from),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(KEYWORDS).prop_map(str::to_owned),
        1 => "[a-z$_.-]{1,4}",
    ]
}

/// Any JSON, biased towards schema keywords and values.
fn any_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Schema-shaped JSON: typed nodes, nesting, unions and local refs.
fn schema_like() -> impl Strategy<Value = Value> {
    let simple = prop_oneof![
        prop::sample::select(&["string", "number", "integer", "boolean", "null"][..])
            .prop_map(|t| json!({ "type": t })),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": "string", "format": "uri"})),
        Just(json!({"enum": [1, "a", null, true]})),
        Just(json!({"type": "integer", "enum": [1, 2]})),
        Just(json!({"type": ["number", "null"], "enum": [1.5, null]})),
        Just(json!({"const": 3})),
        Just(json!({"type": "boolean", "const": true})),
        Just(json!({"$ref": "#/$defs/A"})),
        Just(json!({"$ref": "#/$defs/B"})),
        Just(json!({"$ref": "#"})),
        Just(json!({})),
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({"type": "array"})),
        Just(json!({"type": "object"})),
        Just(json!({"type": "object", "additionalProperties": {"type": "string"}})),
    ];
    simple.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            (
                prop::collection::btree_map("[a-c]", inner.clone(), 0..4),
                prop::collection::vec("[a-d]", 0..3),
                any::<bool>()
            )
                .prop_map(|(props, required, closed)| {
                    let mut m = Map::new();
                    m.insert("type".into(), json!("object"));
                    m.insert(
                        "properties".into(),
                        Value::Object(props.into_iter().collect()),
                    );
                    m.insert("required".into(), json!(required));
                    if closed {
                        m.insert("additionalProperties".into(), json!(false));
                    }
                    Value::Object(m)
                }),
            inner
                .clone()
                .prop_map(|items| json!({"type": ["array", "null"], "items": items})),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|b| json!({"anyOf": b})),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|b| json!({"oneOf": b})),
            prop::collection::vec(inner.clone(), 1..3)
                .prop_map(|b| json!({"allOf": b, "description": "d"})),
            prop::collection::vec(inner, 1..3).prop_map(|b| json!({"items": b})),
        ]
    })
}

/// A whole input schema with definitions the refs point to.
fn input_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        any_json(),
        (schema_like(), schema_like(), schema_like()).prop_map(|(root, a, b)| {
            let mut root = match root {
                Value::Object(m) => m,
                other => {
                    let mut m = Map::new();
                    m.insert("properties".into(), json!({ "x": other }));
                    m
                }
            };
            root.insert("$defs".into(), json!({"A": a, "B": b}));
            root.insert(
                "$schema".into(),
                json!("http://json-schema.org/draft-07/schema#"),
            );
            Value::Object(root)
        }),
    ]
}

fn tool(server: &str, name: &str, schema: Value) -> McpTool {
    let input_schema = match schema {
        Value::Object(m) => m,
        other => {
            let mut m = Map::new();
            m.insert("weird".into(), other);
            m
        }
    };
    McpTool {
        id: McpTool::id_for(server, name),
        name: name.to_owned(),
        description: "d".to_owned(),
        input_schema: Arc::new(input_schema),
        server_id: server.to_owned(),
        server_name: server.to_owned(),
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------
// Provider rules
// ---------------------------------------------------------------------------

// Restated from the providers' docs on purpose, not imported from the converters: an oracle.
const GEMINI_KEYWORDS: &[&str] = &[
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
const GEMINI_TYPES: &[&str] = &["string", "number", "integer", "boolean", "array", "object"];

const STRICT_KEYWORDS: &[&str] = &[
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

/// A Gemini `parameters` schema node obeys the OpenAPI-subset rules, all the way down.
fn assert_gemini_node(node: &Value, path: &str) -> Result<(), TestCaseError> {
    let m = node
        .as_object()
        .ok_or_else(|| TestCaseError::fail(format!("{path}: not an object: {node}")))?;
    for k in m.keys() {
        prop_assert!(
            GEMINI_KEYWORDS.contains(&k.as_str()),
            "{path}: keyword {k} in {node}"
        );
    }
    let ty = m
        .get("type")
        .map(|t| t.as_str().unwrap_or("<not a string>"));
    if let Some(t) = ty {
        prop_assert!(GEMINI_TYPES.contains(&t), "{path}: type {t}");
    }
    if let Some(any) = m.get("anyOf") {
        prop_assert!(ty.is_none(), "{path}: anyOf beside a type");
        let branches = any.as_array().map(Vec::as_slice).unwrap_or_default();
        prop_assert!(!branches.is_empty(), "{path}: empty anyOf");
        for (i, b) in branches.iter().enumerate() {
            assert_gemini_node(b, &format!("{path}/anyOf/{i}"))?;
        }
    } else {
        prop_assert!(ty.is_some(), "{path}: neither type nor anyOf: {node}");
    }
    if let Some(n) = m.get("nullable") {
        prop_assert!(n.is_boolean(), "{path}: nullable {n}");
    }
    if let Some(values) = m.get("enum") {
        prop_assert_eq!(ty, Some("string"), "{}: enum on a non-string", path);
        let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
        prop_assert!(
            values.iter().all(Value::is_string),
            "{path}: non-string enum"
        );
    }
    if let Some(f) = m.get("format").and_then(Value::as_str) {
        let ok: &[&str] = match ty {
            Some("string") => &["enum", "date-time"],
            Some("number") => &["float", "double"],
            Some("integer") => &["int32", "int64"],
            _ => &[],
        };
        prop_assert!(ok.contains(&f), "{path}: format {f} on {ty:?}");
    }
    match (ty, m.get("items")) {
        (Some("array"), Some(items)) => assert_gemini_node(items, &format!("{path}/items"))?,
        (Some("array"), None) => prop_assert!(false, "{path}: array without items"),
        (_, Some(_)) => prop_assert!(false, "{path}: items on a non-array"),
        _ => {}
    }
    let props = m.get("properties").and_then(Value::as_object);
    if m.contains_key("properties") || m.contains_key("required") {
        prop_assert_eq!(ty, Some("object"), "{}: properties on a non-object", path);
    }
    if let Some(props) = props {
        prop_assert!(!props.is_empty(), "{path}: empty properties");
        for (name, p) in props {
            assert_gemini_node(p, &format!("{path}/properties/{name}"))?;
        }
    }
    if let Some(required) = m.get("required") {
        for name in required.as_array().map(Vec::as_slice).unwrap_or_default() {
            let name = name.as_str().unwrap_or_default();
            prop_assert!(
                props.is_some_and(|p| p.contains_key(name)),
                "{path}: required {name} is not a property"
            );
        }
    }
    Ok(())
}

/// Every schema node of a strict OpenAI schema is in the strict subset.
fn assert_strict_node(node: &Value, path: &str, depth: usize) -> Result<(), TestCaseError> {
    prop_assert!(depth <= 11, "{path}: too deep");
    let m = node
        .as_object()
        .ok_or_else(|| TestCaseError::fail(format!("{path}: not an object")))?;
    for k in m.keys() {
        prop_assert!(STRICT_KEYWORDS.contains(&k.as_str()), "{path}: keyword {k}");
    }
    prop_assert!(
        ["type", "anyOf", "enum", "const", "$ref"]
            .iter()
            .any(|k| m.contains_key(*k)),
        "{path}: untyped node {node}"
    );
    let is_object = match m.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    if is_object || m.contains_key("properties") {
        prop_assert_eq!(
            m.get("additionalProperties"),
            Some(&json!(false)),
            "{}",
            path
        );
        let props = m.get("properties").and_then(Value::as_object);
        let keys: Vec<&str> = props
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        prop_assert_eq!(
            &keys,
            &required,
            "{}: required must list every property",
            path
        );
        for (name, p) in props.into_iter().flatten() {
            assert_strict_node(p, &format!("{path}/properties/{name}"), depth + 1)?;
        }
    }
    if let Some(items) = m.get("items") {
        assert_strict_node(items, &format!("{path}/items"), depth + 1)?;
    }
    for (i, b) in m
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        assert_strict_node(b, &format!("{path}/anyOf/{i}"), depth + 1)?;
    }
    for defs in ["$defs", "definitions"] {
        if let Some(d) = m.get(defs).and_then(Value::as_object) {
            prop_assert_eq!(depth, 0, "{}: nested {}", path, defs);
            for (name, def) in d {
                assert_strict_node(def, &format!("{path}/{defs}/{name}"), 1)?;
            }
        }
    }
    Ok(())
}

/// No array schema without `items`, anywhere a schema can be.
fn assert_arrays_have_items(node: &Value, path: &str) -> Result<(), TestCaseError> {
    let Value::Object(m) = node else {
        return Ok(());
    };
    let is_array = match m.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
        _ => false,
    };
    prop_assert!(
        !is_array || m.contains_key("items"),
        "{path}: array without items"
    );
    for (k, v) in m {
        match (k.as_str(), v) {
            ("properties" | "$defs" | "definitions" | "patternProperties", Value::Object(map)) => {
                for (name, s) in map {
                    assert_arrays_have_items(s, &format!("{path}/{k}/{name}"))?;
                }
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems" | "items", Value::Array(list)) => {
                for (i, s) in list.iter().enumerate() {
                    assert_arrays_have_items(s, &format!("{path}/{k}/{i}"))?;
                }
            }
            ("items" | "additionalProperties" | "not" | "if" | "then" | "else", s) => {
                assert_arrays_have_items(s, &format!("{path}/{k}"))?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The top of a tool schema as OpenAI and Anthropic want it.
fn assert_object_top(schema: &Value) -> Result<(), TestCaseError> {
    prop_assert_eq!(schema.get("type"), Some(&json!("object")));
    prop_assert!(schema.get("properties").is_some_and(Value::is_object));
    for k in ["anyOf", "oneOf", "allOf", "not", "enum"] {
        prop_assert!(schema.get(k).is_none(), "top-level {k}");
    }
    Ok(())
}

/// Checks every format's output for `tools`.
fn assert_all_formats(tools: &[McpTool]) -> Result<(), TestCaseError> {
    let names = NameTable::for_tools(tools);
    for (strict, gemini_json_schema) in [(false, false), (true, true)] {
        let options = FormatOptions {
            strict,
            gemini_json_schema,
        };

        let chat = convert_tools(Format::OpenAi, tools, &names, &options);
        for t in chat.as_array().into_iter().flatten() {
            let f = &t["function"];
            prop_assert!(is_valid_name(f["name"].as_str().unwrap_or_default()));
            assert_object_top(&f["parameters"])?;
            assert_arrays_have_items(&f["parameters"], "")?;
            if f.get("strict") == Some(&json!(true)) {
                assert_strict_node(&f["parameters"], "", 0)?;
            }
        }

        let responses = convert_tools(Format::OpenAiResponses, tools, &names, &options);
        for t in responses.as_array().into_iter().flatten() {
            prop_assert!(is_valid_name(t["name"].as_str().unwrap_or_default()));
            prop_assert!(t["strict"].is_boolean());
            assert_object_top(&t["parameters"])?;
            if t["strict"] == json!(true) {
                assert_strict_node(&t["parameters"], "", 0)?;
            }
        }

        let anthropic = convert_tools(Format::Anthropic, tools, &names, &options);
        for t in anthropic.as_array().into_iter().flatten() {
            prop_assert!(is_valid_name(t["name"].as_str().unwrap_or_default()));
            assert_object_top(&t["input_schema"])?;
        }

        let gemini = convert_tools(Format::Gemini, tools, &names, &options);
        let declarations = gemini[0]["functionDeclarations"].as_array();
        prop_assert_eq!(declarations.map(Vec::len), Some(tools.len()));
        for d in declarations.into_iter().flatten() {
            prop_assert!(is_valid_name(d["name"].as_str().unwrap_or_default()));
            if let Some(p) = d.get("parameters") {
                prop_assert!(!gemini_json_schema);
                prop_assert_eq!(p.get("type"), Some(&json!("object")));
                assert_gemini_node(p, "")?;
            }
            if let Some(p) = d.get("parametersJsonSchema") {
                prop_assert!(gemini_json_schema);
                assert_object_top(p)?;
                prop_assert!(p.get("$schema").is_none());
            }
        }

        let report = check(tools, &names, &options);
        prop_assert_eq!(report.tools.len(), tools.len());
        prop_assert!(serde_json::to_string(&report).is_ok());
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn any_input_schema_converts_to_valid_output(schema in input_schema()) {
        assert_all_formats(&[tool("srv", "tool", schema)])?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn names_are_valid_unique_and_route_back(
        pairs in prop::collection::vec(("[a-zA-Z0-9_.: /é-]{0,80}", "[a-zA-Z0-9_.: -]{0,12}"), 1..12)
    ) {
        let names = NameTable::new(toolbridge::format::NameStyle::Mcp, pairs.clone());
        let mut seen = std::collections::HashSet::new();
        for (server, tool) in &pairs {
            let name = names.name(server, tool).unwrap_or_default();
            prop_assert!(is_valid_name(name), "{name}");
            let back = names.resolve(name);
            prop_assert_eq!(back.map(|t| (&t.server_id, &t.tool)), Some((server, tool)));
            seen.insert(name.to_owned());
        }
        prop_assert_eq!(seen.len(), names.len());
        let reversed = NameTable::new(toolbridge::format::NameStyle::Mcp, pairs.iter().rev().cloned());
        for (server, tool) in &pairs {
            prop_assert_eq!(names.name(server, tool), reversed.name(server, tool));
        }
    }

    /// Regression (issue 16 item 9): a server listing one name twice sent
    /// two definitions under one name to every provider. Whatever the list,
    /// each provider gets every name once: the first of each (server, tool).
    #[test]
    fn every_provider_gets_each_name_once_even_from_repeated_tools(
        picks in prop::collection::vec((0usize..3, 0usize..4), 1..16)
    ) {
        let tools: Vec<McpTool> = picks
            .iter()
            .map(|&(s, t)| tool(["a", "b", "c"][s], ["x", "y", "z", "x.y"][t], json!({"type": "object"})))
            .collect();
        let mut unique: Vec<(&str, &str)> = Vec::new();
        for t in &tools {
            if !unique.contains(&(t.server_id.as_str(), t.name.as_str())) {
                unique.push((t.server_id.as_str(), t.name.as_str()));
            }
        }
        let names = NameTable::for_tools(&tools);
        let options = FormatOptions::default();
        for (format, list, key) in [
            (Format::OpenAi, "", "/function/name"),
            (Format::OpenAiResponses, "", "/name"),
            (Format::Anthropic, "", "/name"),
            (Format::Gemini, "/0/functionDeclarations", "/name"),
        ] {
            let converted = convert_tools(format, &tools, &names, &options);
            let entries = converted.pointer(list).and_then(Value::as_array).cloned().unwrap_or_default();
            let sent: Vec<&str> = entries.iter().filter_map(|e| e.pointer(key).and_then(Value::as_str)).collect();
            let distinct: std::collections::HashSet<&str> = sent.iter().copied().collect();
            prop_assert_eq!(sent.len(), unique.len(), "{:?}", format);
            prop_assert_eq!(distinct.len(), unique.len(), "{:?}", format);
        }
        let report = check(&tools, &names, &options);
        let reported = report
            .tools
            .iter()
            .filter(|t| t.providers.iter().all(|p| p.changes.iter().any(|c| c.kind == toolbridge::format::ChangeKind::DuplicateTool)))
            .count();
        prop_assert_eq!(reported, tools.len() - unique.len());
    }

    #[test]
    fn any_provider_response_parses_without_panic(input in any_json()) {
        let names = NameTable::new(toolbridge::format::NameStyle::Mcp, [("a", "b")]);
        for format in Format::ALL {
            if let Ok(calls) = parse_calls(format, &input, &names) {
                let results: Vec<_> = calls
                    .into_iter()
                    .map(|c| {
                        let outcome = match c.invocation() {
                            Ok(_) => ToolOutcome::Completed(CallToolResult::success(vec![])),
                            Err(e) => ToolOutcome::Failed(e),
                        };
                        (c, outcome)
                    })
                    .collect();
                prop_assert!(render_results(format, &results).is_ok());
            }
        }
        for wrapped in [
            json!({"choices": [{"message": {"tool_calls": [input.clone()]}}]}),
            json!({"content": [input.clone()]}),
            json!({"candidates": [{"content": {"parts": [{"functionCall": input.clone()}]}}]}),
        ] {
            for format in Format::ALL {
                let _ = parse_calls(format, &wrapped, &names);
            }
        }
    }

    #[test]
    fn any_result_json_flattens(result in any_json()) {
        if let Ok(result) = serde_json::from_value::<CallToolResult>(result) {
            let _ = toolbridge::format::flatten_content(&result);
            let call = toolbridge::format::ToolCall {
                id: Some("c".into()),
                name: "n".into(),
                tool: None,
                arguments: Ok(Map::new()),
            };
            let results = vec![(call, ToolOutcome::Completed(result))];
            for format in [Format::OpenAi, Format::OpenAiResponses, Format::Anthropic, Format::Gemini] {
                prop_assert!(render_results(format, &results).is_ok());
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Hostile schemas
// ---------------------------------------------------------------------------

fn run(schema: Value) {
    let result = assert_all_formats(&[tool("srv", "tool", schema)]);
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn deep_nesting() {
    let mut deep = json!({"type": "string"});
    for i in 0..120 {
        deep = if i % 2 == 0 {
            json!({"type": "object", "properties": {"x": deep}, "required": ["x"]})
        } else {
            json!({"type": "array", "items": deep})
        };
    }
    run(json!({"type": "object", "properties": {"root": deep}}));
}

#[test]
fn ref_cycles() {
    run(json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/A"},
            "self": {"$ref": "#"},
            "all": {"allOf": [{"$ref": "#/$defs/C"}]},
            "sib": {"$ref": "#/$defs/A", "description": "with a sibling"}
        },
        "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]},
            "C": {"allOf": [{"$ref": "#/$defs/C"}], "properties": {"c": {"$ref": "#/$defs/C"}}}
        }
    }));
}

#[test]
fn exponential_refs_and_unions_stay_bounded() {
    // Each definition uses the next one twice: 2^30 nodes if fully inlined.
    let mut defs = Map::new();
    for i in 0..30 {
        let next = format!("#/$defs/D{}", i + 1);
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"l": {"$ref": next}, "r": {"$ref": next}}}),
        );
    }
    defs.insert("D30".into(), json!({"type": "string"}));
    run(json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D0"}}, "$defs": defs}));

    // Unions whose constraints are folded into every branch, nested.
    let mut node = json!({"type": "string"});
    for _ in 0..25 {
        node = json!({
            "type": "object",
            "properties": {"p": node, "q": {"type": "integer"}},
            "anyOf": [{"required": ["p"]}, {"required": ["q"]}, {"description": "x"}]
        });
    }
    let schema = json!({"type": "object", "properties": {"u": node}});
    let tools = [tool("s", "t", schema)];
    let names = NameTable::for_tools(&tools);
    let out = convert_tools(Format::Gemini, &tools, &names, &FormatOptions::default());
    assert!(out.to_string().len() < 20_000_000);
    run(tools[0].input_schema.as_ref().clone().into());
}

#[test]
fn huge_enums() {
    let values: Vec<Value> = (0..20_000).map(|i| json!(i)).collect();
    let strings: Vec<Value> = (0..20_000).map(|i| json!(format!("v{i}"))).collect();
    run(json!({
        "type": "object",
        "properties": {"n": {"type": "integer", "enum": values}, "s": {"type": "string", "enum": strings}},
        "required": ["n"]
    }));
}

#[test]
fn same_tool_on_two_servers_and_a_70_character_server() {
    let long = "a-very-long-server-name-that-goes-on-and-on-and-on-for-seventy-chars-x";
    assert_eq!(long.len(), 70);
    let tools = [
        tool("alpha", "search", json!({})),
        tool("beta", "search", json!({})),
        tool(long, "search", json!({})),
        tool(long, "fetch", json!({})),
    ];
    let names = NameTable::for_tools(&tools);
    let exposed: Vec<String> = tools
        .iter()
        .map(|t| names.name_for(t).into_owned())
        .collect();
    let unique: std::collections::HashSet<&String> = exposed.iter().collect();
    assert_eq!(unique.len(), 4, "{exposed:?}");
    for (t, name) in tools.iter().zip(&exposed) {
        assert!(is_valid_name(name), "{name}");
        let back = names.resolve(name);
        assert_eq!(
            back.map(|r| (r.server_id.as_str(), r.tool.as_str())),
            Some((t.server_id.as_str(), t.name.as_str()))
        );
    }
    assert_eq!(exposed[0], "mcp__alpha__search");
    assert_eq!(exposed[1], "mcp__beta__search");

    // A model's calls route to the right server in every provider format.
    let openai = json!({"tool_calls": [
        {"id": "1", "type": "function", "function": {"name": exposed[1], "arguments": "{}"}},
        {"id": "2", "type": "function", "function": {"name": exposed[2], "arguments": "{}"}}
    ]});
    let anthropic = json!({"content": [
        {"type": "tool_use", "id": "1", "name": exposed[1], "input": {}},
        {"type": "tool_use", "id": "2", "name": exposed[2], "input": {}}
    ]});
    let gemini = json!({"parts": [
        {"functionCall": {"name": exposed[1], "args": {}}},
        {"functionCall": {"name": exposed[2], "args": {}}}
    ]});
    for (format, input) in [
        (Format::OpenAi, openai),
        (Format::Anthropic, anthropic),
        (Format::Gemini, gemini),
    ] {
        let calls = parse_calls(format, &input, &names).unwrap_or_default();
        let routed: Vec<(String, String)> = calls
            .iter()
            .filter_map(|c| c.invocation().ok())
            .map(|(t, _)| (t.server_id.clone(), t.tool.clone()))
            .collect();
        assert_eq!(
            routed,
            [
                ("beta".to_owned(), "search".to_owned()),
                (long.to_owned(), "search".to_owned())
            ],
            "{format}"
        );
    }
}

// ---------------------------------------------------------------------------
// Hostile input: huge, deep and oddly typed schemas, and results
// ---------------------------------------------------------------------------

/// One hostile shape, `n` large: what a broken or malicious server could send.
fn hostile_schema(shape: u8, n: usize) -> Value {
    let names: Vec<Value> = (0..n).map(|i| json!(format!("p{i}"))).collect();
    match shape % 8 {
        // Deeply nested objects and arrays, alternating.
        0 => {
            let mut deep = json!({"type": "string"});
            for i in 0..n.min(300) {
                deep = if i % 2 == 0 {
                    json!({"type": "object", "properties": {"x": deep}, "required": ["x"]})
                } else {
                    json!({"type": "array", "items": deep})
                };
            }
            json!({"type": "object", "properties": {"root": deep}})
        }
        // A type list of many distinct (unknown) names.
        1 => json!({"type": "object", "properties": {"t": {"type": names}}}),
        // A required list far longer than the properties.
        2 => json!({"type": "object", "properties": {"p0": {"type": "string"}}, "required": names}),
        // Many properties, every one required.
        3 => {
            let props: Map<String, Value> = (0..n)
                .map(|i| (format!("p{i}"), json!({"type": "integer"})))
                .collect();
            json!({"type": "object", "properties": props, "required": names})
        }
        // A union of many branches, with constraints folded into each.
        4 => {
            let branches: Vec<Value> = (0..n).map(|i| json!({"const": i})).collect();
            json!({"type": "object", "properties": {"u": {"anyOf": branches, "minimum": 1}}})
        }
        // Huge enums of mixed types, some nested.
        5 => {
            let values: Vec<Value> = (0..n)
                .map(|i| match i % 4 {
                    0 => json!(i),
                    1 => json!(format!("v{i}")),
                    2 => json!({"nested": [i, {"deeper": i}]}),
                    _ => Value::Null,
                })
                .collect();
            json!({"type": "object", "properties": {"e": {"enum": values}}, "required": ["e"]})
        }
        // Keywords with the wrong JSON type everywhere.
        6 => json!({
            "type": 7, "properties": names, "required": {"a": 1}, "items": "x",
            "anyOf": {"not": "a list"}, "allOf": 3, "$ref": ["#"], "$defs": [1, 2],
            "enum": "x", "const": {"deep": names}, "format": 1.5, "additionalProperties": "no"
        }),
        // Long chains of $refs through definitions.
        _ => {
            let mut defs = Map::new();
            for i in 0..n {
                defs.insert(
                    format!("D{i}"),
                    json!({"$ref": format!("#/$defs/D{}", i + 1), "description": "d"}),
                );
            }
            defs.insert(format!("D{n}"), json!({"type": "string"}));
            json!({"type": "object", "properties": {"r": {"$ref": "#/$defs/D0"}}, "$defs": defs})
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every provider's normaliser takes huge, deep and mistyped schemas in
    /// bounded time (quadratic work on 20,000 names would not finish) and
    /// still writes what the provider accepts.
    #[test]
    fn hostile_schemas_convert_to_valid_output(shape in 0u8..8, n in 1usize..20_000) {
        assert_all_formats(&[tool("srv", "tool", hostile_schema(shape, n))])?;
    }

    /// Flattening any content gives one line per non-text item (text as is),
    /// and a result with only structured content shows that JSON.
    #[test]
    fn any_content_flattens_one_item_per_line(
        texts in prop::collection::vec(".{0,12}", 0..6),
        mimes in prop::collection::vec("[a-z]{1,6}/[a-z0-9.+-]{1,8}", 1..4),
        link_name in ".{0,20}",
        link_description in ".{0,40}",
        structured in any_json(),
    ) {
        use rmcp::model::{ContentBlock, Resource, ResourceContents};
        let mut link = Resource::new("https://example.com/r", link_name);
        link.description = Some(link_description);
        let mut blocks: Vec<ContentBlock> = texts.iter().map(|t| ContentBlock::text(t.clone())).collect();
        let others = [
            ContentBlock::image("AAAA", mimes[0].clone()),
            ContentBlock::audio("AAAA", mimes[mimes.len() - 1].clone()),
            ContentBlock::resource(ResourceContents::blob("AAAA", "file:///b").with_mime_type(mimes[0].clone())),
            ContentBlock::resource_link(link),
        ];
        blocks.extend(others.iter().cloned());
        let text = toolbridge::format::flatten_content(&CallToolResult::success(blocks));
        let text_lines: usize = texts.iter().map(|t| t.split('\n').count()).sum();
        prop_assert_eq!(text.split('\n').count(), text_lines + others.len(), "{}", text);

        let mut only_structured = CallToolResult::success(vec![]);
        only_structured.structured_content = Some(structured.clone());
        let shown = toolbridge::format::flatten_content(&only_structured);
        prop_assert!(serde_json::from_str::<Value>(&shown).is_ok(), "{}", shown);
        prop_assert_eq!(shown, structured.to_string());
    }
}
