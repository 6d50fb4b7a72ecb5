//! Which provider format to produce, and the knobs that change it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A tool format: MCP's own, or one LLM provider's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Format {
    /// toolbridge's tool model as is (`McpTool` serialized).
    #[serde(rename = "mcp")]
    Mcp,
    /// OpenAI Chat Completions: `{"type":"function","function":{...}}`.
    #[serde(rename = "openai")]
    OpenAi,
    /// OpenAI Responses API: `{"type":"function","name",...,"strict"}`.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages: `{"name","description","input_schema"}`.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Gemini `generateContent`: `[{"functionDeclarations":[...]}]`.
    #[serde(rename = "gemini")]
    Gemini,
}

impl Format {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [Format; 5] = [
        Format::Mcp,
        Format::OpenAi,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
    ];

    /// The name the CLI takes and prints: `mcp`, `openai`, `openai-responses`,
    /// `anthropic` or `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Mcp => "mcp",
            Format::OpenAi => "openai",
            Format::OpenAiResponses => "openai-responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is not one of toolbridge's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}`; use one of mcp, openai, openai-responses, anthropic, gemini")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    /// Parses a format name, ignoring case; `openai-chat`, `responses`,
    /// `claude` and `google` are accepted as aliases.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "mcp" => Ok(Format::Mcp),
            "openai" | "openai-chat" | "chat" => Ok(Format::OpenAi),
            "openai-responses" | "responses" => Ok(Format::OpenAiResponses),
            "anthropic" | "claude" => Ok(Format::Anthropic),
            "gemini" | "google" => Ok(Format::Gemini),
            _ => Err(UnknownFormat(s.to_owned())),
        }
    }
}

/// Options that change how tools are converted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormatOptions {
    /// OpenAI: ask for strict mode (`strict: true`, closed objects, every
    /// property required, optional ones nullable). A tool whose schema cannot
    /// be made strict is sent non-strict, and `check` says why.
    pub strict: bool,
    /// Gemini: send the full JSON Schema as `parametersJsonSchema` instead of
    /// the OpenAPI subset in `parameters`.
    pub gemini_json_schema: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for format in Format::ALL {
            assert_eq!(format.as_str().parse::<Format>(), Ok(format));
            assert_eq!(
                serde_json::to_value(format).ok(),
                Some(serde_json::Value::String(format.to_string()))
            );
        }
        assert_eq!("Claude".parse::<Format>(), Ok(Format::Anthropic));
        assert_eq!("google".parse::<Format>(), Ok(Format::Gemini));
        assert_eq!("responses".parse::<Format>(), Ok(Format::OpenAiResponses));
    }

    #[test]
    fn unknown_names_say_what_is_accepted() {
        let err = "mistral".parse::<Format>().err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "unknown format `mistral`; use one of mcp, openai, openai-responses, anthropic, gemini"
            )
        );
    }
}
