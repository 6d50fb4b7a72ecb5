//! A form-mode elicitation's fields, read from its `requestedSchema`: what
//! a client shows (title, description, kind, choices, bounds), the schema's
//! defaults (SEP-1034: string, number, integer, boolean and enum fields),
//! and the checks on what a user typed.
//!
//! The pool fills the defaults into every accepted answer that leaves a
//! field out ([`Form::with_defaults`]), whatever handler gave it; a
//! terminal or web form asks field by field with [`FormField::parse`].

use rmcp::model::{ElicitationSchema, JsonObject};
use serde_json::Value;

/// The fields of one form, in the schema's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// One per schema property.
    pub fields: Vec<FormField>,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct FormField {
    /// The property name (the key in the answer).
    pub name: String,
    /// The schema's `title`, if any.
    pub title: Option<String>,
    /// The schema's `description`, if any.
    pub description: Option<String>,
    /// What kind of value it takes.
    pub kind: FieldKind,
    /// Whether the schema lists it as required.
    pub required: bool,
    /// The schema's `default`, if any.
    pub default: Option<Value>,
}

/// The kinds of values a form field takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// Free text; `format` (`email`, `uri`, `date`, `date-time`) is a hint.
    Text {
        /// The schema's `format`, if any.
        format: Option<String>,
    },
    /// A number, checked against the bounds; whole when `integer`.
    Number {
        /// `type: integer`.
        integer: bool,
        /// The schema's `minimum`.
        minimum: Option<f64>,
        /// The schema's `maximum`.
        maximum: Option<f64>,
    },
    /// Yes or no.
    Boolean,
    /// One of the choices.
    Choice(Vec<Choice>),
    /// Some of the choices (a JSON array).
    MultiChoice(Vec<Choice>),
}

/// One choice of an enum field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The value sent.
    pub value: String,
    /// What a person reads (the `oneOf` title or `enumNames`), else the value.
    pub label: String,
}

impl Form {
    /// The form `schema` describes. A property of a kind this version does
    /// not know is read as text.
    pub fn from_schema(schema: &ElicitationSchema) -> Form {
        let required = schema.required.as_deref().unwrap_or_default();
        let order: Vec<&String> = match &schema.property_order {
            Some(order) => order.iter().collect(),
            None => schema.properties.keys().collect(),
        };
        let fields = order
            .into_iter()
            .filter_map(|name| {
                let property = serde_json::to_value(schema.properties.get(name)?).ok()?;
                Some(FormField::from_property(
                    name,
                    &property,
                    required.contains(name),
                ))
            })
            .collect();
        Form { fields }
    }

    /// The schema's defaults, by field name.
    pub fn defaults(&self) -> JsonObject {
        self.fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.default.clone()?)))
            .collect()
    }

    /// `content` (an accepted answer) with each field it leaves out that
    /// has a default set to that default (SEP-1034).
    pub fn with_defaults(&self, content: Option<Value>) -> Value {
        let mut answer = match content {
            Some(Value::Object(answer)) => answer,
            Some(other) => return other,
            None => JsonObject::new(),
        };
        for (name, default) in self.defaults() {
            answer.entry(name).or_insert(default);
        }
        Value::Object(answer)
    }

    /// The required fields `answer` leaves out.
    pub fn missing_required<'a>(&'a self, answer: &JsonObject) -> Vec<&'a str> {
        self.fields
            .iter()
            .filter(|f| f.required && !answer.contains_key(&f.name))
            .map(|f| f.name.as_str())
            .collect()
    }
}

impl FormField {
    fn from_property(name: &str, property: &Value, required: bool) -> FormField {
        let text = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
        let number = |key: &str| property.get(key).and_then(Value::as_f64);
        let kind = match property.get("type").and_then(Value::as_str) {
            Some("boolean") => FieldKind::Boolean,
            Some(t @ ("number" | "integer")) => FieldKind::Number {
                integer: t == "integer",
                minimum: number("minimum"),
                maximum: number("maximum"),
            },
            Some("array") => {
                FieldKind::MultiChoice(property.get("items").map(choices).unwrap_or_default())
            }
            _ => match choices(property) {
                found if !found.is_empty() => FieldKind::Choice(found),
                _ => FieldKind::Text {
                    format: text("format"),
                },
            },
        };
        FormField {
            name: name.to_owned(),
            title: text("title"),
            description: text("description"),
            kind,
            required,
            default: property.get("default").cloned(),
        }
    }

    /// The value `input` (what a person typed) stands for, or why it does
    /// not fit. Booleans take y/yes/true and n/no/false; choices take the
    /// value, the label or the number shown (1-based); several choices are
    /// separated by commas.
    pub fn parse(&self, input: &str) -> Result<Value, String> {
        let input = input.trim();
        match &self.kind {
            FieldKind::Text { .. } => Ok(Value::String(input.to_owned())),
            FieldKind::Boolean => match input.to_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Value::Bool(true)),
                "n" | "no" | "false" => Ok(Value::Bool(false)),
                _ => Err("answer y or n".to_owned()),
            },
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let n: f64 = input
                    .parse()
                    .map_err(|_| format!("\"{input}\" is not a number"))?;
                if *integer && n.fract() != 0.0 {
                    return Err(format!("{input} is not a whole number"));
                }
                if minimum.is_some_and(|min| n < min) || maximum.is_some_and(|max| n > max) {
                    return Err(format!(
                        "{input} is out of range{}",
                        range(*minimum, *maximum)
                    ));
                }
                Ok(if *integer {
                    Value::from(n as i64)
                } else {
                    Value::from(n)
                })
            }
            FieldKind::Choice(choices) => pick(choices, input).map(Value::String),
            FieldKind::MultiChoice(choices) => input
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|one| pick(choices, one).map(Value::String))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
        }
    }
}

/// ` (min..max)` for a message.
fn range(minimum: Option<f64>, maximum: Option<f64>) -> String {
    match (minimum, maximum) {
        (Some(min), Some(max)) => format!(" ({min} to {max})"),
        (Some(min), None) => format!(" (at least {min})"),
        (None, Some(max)) => format!(" (at most {max})"),
        (None, None) => String::new(),
    }
}

/// The choice `input` names: its number, value or label.
fn pick(choices: &[Choice], input: &str) -> Result<String, String> {
    if let Ok(n) = input.parse::<usize>()
        && let Some(choice) = n.checked_sub(1).and_then(|i| choices.get(i))
    {
        return Ok(choice.value.clone());
    }
    choices
        .iter()
        .find(|c| c.value == input || c.label.eq_ignore_ascii_case(input))
        .map(|c| c.value.clone())
        .ok_or_else(|| format!("\"{input}\" is not one of the choices"))
}

/// The choices of an enum schema: `enum` (with `enumNames`), or `oneOf` /
/// `anyOf` of `{const, title}`.
fn choices(schema: &Value) -> Vec<Choice> {
    let strings = |key: &str| -> Vec<String> {
        schema
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let values = strings("enum");
    if !values.is_empty() {
        let names = strings("enumNames");
        return values
            .into_iter()
            .enumerate()
            .map(|(i, value)| Choice {
                label: names.get(i).cloned().unwrap_or_else(|| value.clone()),
                value,
            })
            .collect();
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .filter_map(|option| {
            let value = option.get("const")?.as_str()?.to_owned();
            let label = option
                .get("title")
                .and_then(Value::as_str)
                .map_or_else(|| value.clone(), str::to_owned);
            Some(Choice { value, label })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The conformance suite's SEP-1034 schema, and server-everything's
    /// titled enums.
    fn form() -> Form {
        let schema: ElicitationSchema = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "default": 30, "minimum": 0, "maximum": 150},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "hero": {"type": "string", "oneOf": [
                    {"const": "hero-1", "title": "Superman"},
                    {"const": "hero-2", "title": "Wonder Woman"}
                ]},
                "email": {"type": "string", "format": "email"}
            },
            "required": ["email"]
        }))
        .unwrap();
        Form::from_schema(&schema)
    }

    #[test]
    fn missing_fields_get_the_schemas_defaults_and_given_ones_stay() {
        let filled = form().with_defaults(Some(json!({"name": "Ada", "email": "a@b.c"})));
        assert_eq!(
            filled,
            json!({"name": "Ada", "email": "a@b.c", "age": 30, "score": 95.5,
                   "status": "active", "verified": true})
        );
        let form = form();
        let only_defaults = form.with_defaults(None);
        assert_eq!(
            form.missing_required(only_defaults.as_object().unwrap()),
            ["email"]
        );
    }

    #[test]
    fn typed_answers_are_checked_against_the_field() {
        let form = form();
        let field = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap();
        assert_eq!(field("age").parse("41"), Ok(json!(41)));
        assert!(field("age").parse("4.5").is_err());
        assert!(field("age").parse("200").unwrap_err().contains("0 to 150"));
        assert!(field("score").parse("abc").is_err());
        assert_eq!(field("verified").parse("n"), Ok(json!(false)));
        assert_eq!(field("status").parse("2"), Ok(json!("inactive")));
        assert_eq!(field("hero").parse("wonder woman"), Ok(json!("hero-2")));
        assert!(field("hero").parse("Batman").is_err());
        assert_eq!(
            field("email").kind,
            FieldKind::Text {
                format: Some("email".to_owned())
            }
        );
    }
}
